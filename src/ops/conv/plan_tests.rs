//! Routing tables: convolution shapes (ResNet-50 and MobileNetV2 layers,
//! odd channels, groups, strides, views, f32 and f16) on device profiles
//! with and without cooperative matrices, and the route each takes.

use super::plan::plan;
use super::problem::{Conv2dParams, Problem};
use super::route::{Coop, Depthwise, Direct, Form, Im2col, Implicit, Khr, Nhwc1x1, Route, Stem, Winograd};
use super::target::{F16Start, Fill, GemmOn, StemForm, Target};
use crate::error::Error;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::split::runs_for_one_wave;

/// The H100 and H200 SM count the tables assume.
const SMS: usize = 132;
use crate::ops::tensor::DType::{self, F16, F32};

/// The tensor-core GEMM's fill rule under the default settings
/// (`gemm::coop::fill_splits`): 128x128 tiles, one wave of 2 per SM, K runs
/// of at least 512.
fn gemm_fill((m, n, k): (usize, usize, usize), batch: usize) -> usize {
    runs_for_one_wave(m.div_ceil(128) * n.div_ceil(128) * batch, k, 2 * SMS, 512)
}

/// A software driver: no cooperative matrices.
const LAVAPIPE: Target<'static> = Target {
    max_workgroups: 65535,
    max_binding: 1 << 27,
    khr: false,
    coop: false,
    fill: Fill::Rule(gemm_fill),
    f16_start: F16Start::Gather,
    cols_budget: 128 << 20,
    winograd: None,
    winograd_tiles_fastest: None,
    stem: StemForm::Auto,
    gemm: GemmOn::Profile(DeviceProfile::lavapipe_like),
    gemm_1x1_nhwc: None,
    khr_small: None,
    split_fill: 2112,
    split_scratch: u64::MAX,
};
/// Vulkan on an H100: the KHR kernels and the WGSL cooperative matrices.
const H100: Target<'static> = Target {
    khr: true,
    coop: true,
    max_binding: (1 << 31) - 1,
    gemm: GemmOn::Profile(DeviceProfile::h100_like),
    ..LAVAPIPE
};
/// Cooperative matrices in WGSL but not the SPIR-V kernels (not Vulkan, or
/// WGC_GEMM_SPIRV=0).
const COOP_ONLY: Target<'static> = Target { khr: false, gemm: GemmOn::Profile(coop_only_profile), ..H100 };

/// An H100 whose GEMMs cannot pass SPIR-V through.
fn coop_only_profile() -> DeviceProfile {
    DeviceProfile { spirv: false, coopmat2_blocks: 0, ..DeviceProfile::h100_like() }
}

#[derive(Clone, Copy)]
struct Case {
    what: &'static str,
    input: [usize; 4],
    weight: [usize; 4],
    stride: u32,
    pad: u32,
    dilation: u32,
    groups: u32,
    bias: bool,
    channels_last: bool,
}

const fn case(what: &'static str, input: [usize; 4], weight: [usize; 4], stride: u32, pad: u32) -> Case {
    Case { what, input, weight, stride, pad, dilation: 1, groups: 1, bias: true, channels_last: false }
}

impl Case {
    const fn groups(self, groups: u32) -> Case {
        Case { groups, ..self }
    }
    const fn channels_last(self) -> Case {
        Case { channels_last: true, ..self }
    }
    const fn dilation(self, dilation: u32) -> Case {
        Case { dilation, ..self }
    }
    const fn no_bias(self) -> Case {
        Case { bias: false, ..self }
    }
    fn problem(&self, dtype: DType) -> Problem {
        let params = Conv2dParams {
            stride: [self.stride; 2],
            pad: [self.pad; 2],
            dilation: [self.dilation; 2],
            groups: self.groups,
        };
        Problem::of_shapes(&params, self.input, self.weight, dtype, self.bias, self.channels_last)
            .unwrap_or_else(|e| panic!("{}: {e}", self.what))
    }
    fn route(&self, dtype: DType, target: &Target) -> Route {
        let p = self.problem(dtype);
        plan(&p, target).unwrap_or_else(|e| panic!("{}: {e}", self.what)).route
    }
}

// ResNet-50 (v1.5) at batch 1 and 32.
const R_CONV1: Case = case("resnet conv1 7x7/2", [1, 3, 224, 224], [64, 3, 7, 7], 2, 3);
const R_L1_REDUCE: Case = case("resnet layer1 1x1 64->64", [1, 64, 56, 56], [64, 64, 1, 1], 1, 0);
const R_L1_3X3: Case = case("resnet layer1 3x3", [1, 64, 56, 56], [64, 64, 3, 3], 1, 1);
const R_L1_3X3_B32: Case = case("resnet layer1 3x3 batch 32", [32, 64, 56, 56], [64, 64, 3, 3], 1, 1);
const R_L2_3X3_S2: Case = case("resnet layer2 3x3/2", [1, 128, 56, 56], [128, 128, 3, 3], 2, 1);
const R_L2_DOWN: Case = case("resnet layer2 downsample 1x1/2", [1, 256, 56, 56], [512, 256, 1, 1], 2, 0);
const R_L2_EXPAND_B32: Case = case("resnet layer2 1x1 expand b32", [32, 128, 28, 28], [512, 128, 1, 1], 1, 0);
const R_L3_3X3_B32: Case = case("resnet layer3 3x3 batch 32", [32, 256, 14, 14], [256, 256, 3, 3], 1, 1);
const R_L4_3X3: Case = case("resnet layer4 3x3", [1, 512, 7, 7], [512, 512, 3, 3], 1, 1);
const R_L4_EXPAND: Case = case("resnet layer4 1x1 expand", [1, 512, 7, 7], [2048, 512, 1, 1], 1, 0);

// MobileNetV2 at batch 1.
const M_STEM: Case = case("mobilenet stem 3x3/2", [1, 3, 224, 224], [32, 3, 3, 3], 2, 1);
const M_DW: Case = case("mobilenet depthwise 3x3", [1, 32, 112, 112], [32, 1, 3, 3], 1, 1).groups(32);
const M_DW_S2: Case = case("mobilenet depthwise 3x3/2", [1, 96, 112, 112], [96, 1, 3, 3], 2, 1).groups(96);
const M_DW_7: Case = case("mobilenet depthwise 3x3 at 7x7", [32, 960, 7, 7], [960, 1, 3, 3], 1, 1).groups(960);
const M_PROJECT: Case = case("mobilenet 1x1 project", [1, 32, 112, 112], [16, 32, 1, 1], 1, 0);
const M_EXPAND_7: Case = case("mobilenet 1x1 expand at 7x7", [1, 160, 7, 7], [960, 160, 1, 1], 1, 0);
const M_LAST: Case = case("mobilenet last 1x1", [1, 320, 7, 7], [1280, 320, 1, 1], 1, 0);

// Odd shapes.
const ODD_CHANNELS: Case = case("5 -> 7 channels 3x3", [2, 5, 9, 9], [7, 5, 3, 3], 1, 0);
const GROUPED: Case = case("4 groups of 2 channels", [1, 8, 10, 10], [8, 2, 3, 3], 1, 0).groups(4);
const TINY_1X1: Case = case("one channel 1x1 on 4x4", [1, 1, 4, 4], [1, 1, 1, 1], 1, 0);
const DILATED: Case = case("3x3 dilation 2", [1, 16, 20, 20], [16, 16, 3, 3], 1, 2).dilation(2);
const LONG_K: Case = case("K past 16384", [1, 2048, 3, 3], [8, 2048, 3, 3], 1, 1);
const BIG_BOTH: Case = case("many tiles, 256 channels", [8, 256, 56, 56], [256, 256, 3, 3], 1, 1);
const WIDE_DW: Case = case("depthwise 65x65", [1, 4, 70, 70], [4, 1, 65, 65], 1, 0).groups(4);
const HUGE_DW: Case = case("depthwise 513x513", [1, 2, 513, 513], [2, 1, 513, 513], 1, 0).groups(2);
const DW_MULTIPLIER_2: Case = case("depthwise, 2 outputs per channel", [1, 8, 10, 10], [16, 1, 3, 3], 1, 1).groups(8);
const ODD_WINDOW: Case = case("6x6 kernel", [1, 8, 12, 12], [8, 8, 6, 6], 1, 0);

/// The implicit GEMM's route, its slabs all summed in one pass.
fn implicit(rm: usize, rn: usize, splits: usize, k_chunk: usize, window: [usize; 2]) -> Route {
    let slabs = if splits > 1 { splits } else { 0 };
    Route::Implicit(Implicit { rm, rn, splits, k_chunk, window, slabs })
}

#[test]
fn f32_routes_are_the_same_on_every_device() {
    let tiles = |tw, th, planes| Route::Depthwise(Depthwise::Tiles { tw, th, planes });
    let wino = |chunk| Route::Winograd(Winograd { chunk, channels_first: true });
    let table = [
        (R_CONV1, implicit(1, 1, 1, 160, [7, 7])),
        (R_L1_REDUCE, Route::Gemm1x1),
        // 3136 output pixels and 64 channels: Winograd (winograd_tests.rs
        // for its rule); 32 images' tiles take 2 passes of 128 MiB.
        (R_L1_3X3, wino(1)),
        (R_L1_3X3_B32, wino(20)),
        // 26 tiles and K = 1152: 2 runs.
        (R_L2_3X3_S2, implicit(1, 1, 2, 576, [3, 3])),
        (R_L2_DOWN, implicit(1, 1, 1, 256, [1, 1])),
        (R_L2_EXPAND_B32, Route::Gemm1x1),
        (R_L3_3X3_B32, wino(32)),
        // 8 tiles of 64x64 and K = 4608: split into 9 runs to fill the GPU.
        (R_L4_3X3, implicit(1, 1, 9, 512, [3, 3])),
        // 49 pixels per image: under the 256 the 1x1 GEMM needs.
        (R_L4_EXPAND, implicit(1, 1, 1, 512, [1, 1])),
        (M_STEM, implicit(1, 1, 1, 32, [3, 3])),
        // Depthwise channels-first: strips of 4 outputs along rows; a
        // dilated window in tiles (56x56 outputs in 32x8 tiles, 7x7 planes
        // four to a workgroup).
        (M_DW, Route::Depthwise(Depthwise::Strips)),
        (M_DW_S2, Route::Depthwise(Depthwise::Strips)),
        (M_DW_7, Route::Depthwise(Depthwise::Strips)),
        (M_DW.dilation(2), tiles(32, 8, 1)),
        (M_DW_7.dilation(2), tiles(8, 8, 4)),
        // Channels-last: 8 words of 4 channels per workgroup (32 or 96
        // channels), 4 outputs along a row per invocation.
        (M_DW.channels_last(), Route::Depthwise(Depthwise::Rows { cvw: 8 })),
        (M_DW_S2.channels_last(), Route::Depthwise(Depthwise::Rows { cvw: 8 })),
        (M_DW_7.channels_last(), Route::Depthwise(Depthwise::Rows { cvw: 16 })),
        // Dilated: one output per invocation.
        (M_DW.channels_last().dilation(2), Route::Depthwise(Depthwise::Words { cvw: 8 })),
        (DW_MULTIPLIER_2, Route::Direct(Direct::PerOutput { window: [3, 3] })),
        (M_PROJECT, Route::Gemm1x1),
        (M_EXPAND_7, implicit(1, 1, 1, 160, [1, 1])),
        (M_LAST, implicit(1, 1, 1, 320, [1, 1])),
        (ODD_CHANNELS, implicit(1, 1, 1, 48, [3, 3])),
        (GROUPED, implicit(1, 1, 1, 32, [3, 3])),
        (TINY_1X1, implicit(1, 1, 1, 16, [1, 1])),
        (DILATED, implicit(1, 1, 1, 144, [3, 3])),
        // K = 18432 needs 2 runs; 1 tile asks for many more.
        (LONG_K, implicit(1, 1, 36, 512, [3, 3])),
        (BIG_BOTH, wino(5)),
        // Their tiles do not fit workgroup memory: the direct kernel.
        (WIDE_DW, Route::Direct(Direct::PerWorkgroup)),
        (HUGE_DW, Route::Direct(Direct::Chunked { chunks: 2 })),
        // 6 is not among the compiled sizes.
        (ODD_WINDOW, implicit(1, 1, 1, 288, [0, 0])),
        // Channels-last: the GEMM over all images is off by default.
        (R_L1_REDUCE.channels_last(), implicit(1, 1, 1, 64, [1, 1])),
    ];
    for (case, want) in table {
        for target in [LAVAPIPE, H100, COOP_ONLY] {
            assert_eq!(case.route(F32, &target), want, "{}", case.what);
        }
    }
}

#[test]
fn f16_routes_take_the_tensor_cores_where_the_device_has_them() {
    let khr = |form, splits, k_chunk, copy_input, copy_weight, whole| {
        Route::Khr(Khr {
            form,
            splits,
            k_chunk,
            copy_input,
            copy_weight,
            whole,
            direct_store: false,
            fold_images: false,
            residual: false,
        })
    };
    let coop = |splits, k_chunk, w_vec, window| Route::Coop(Coop { splits, k_chunk, w_vec, window });
    let dw_words = |cvw| Route::Depthwise(Depthwise::Words { cvw });
    let dw_rows = |cvw| Route::Depthwise(Depthwise::Rows { cvw });
    let dw3 = Route::Depthwise(Depthwise::Strips);
    let stem = |kp, chunk, rows| {
        Route::Stem(Stem {
            cols: Im2col { pack_weight: true, kp, chunk, flat: true },
            rows,
            padded: None,
            pairs: false,
        })
    };
    let padded = |form, k_chunk, rows| {
        let khr = Khr {
            form,
            splits: 1,
            k_chunk,
            copy_input: false,
            copy_weight: false,
            whole: true,
            direct_store: false,
            fold_images: false,
            residual: false,
        };
        Route::Stem(Stem {
            cols: Im2col { pack_weight: true, kp: 152, chunk: 1, flat: true },
            rows,
            padded: Some(khr),
            pairs: true,
        })
    };
    // (case, on H100 (KHR and WGSL cooperative matrices), on a device with
    // WGSL cooperative matrices only)
    let table = [
        // 3 channels: in pixel pairs for the KHR gather (K = 8 * 7 * 4);
        // without it the WGSL implicit GEMM (faster than the columns for 7x7).
        (R_CONV1, padded(Form::ImageB64, 224, false), coop(1, 160, false, [7, 7])),
        (R_L1_REDUCE, Route::Gemm1x1, Route::Gemm1x1),
        // At most 64 output channels: the 64-row block.
        (R_L1_3X3, khr(Form::ImageB64, 1, 576, true, true, false), coop(1, 576, true, [3, 3])),
        (R_L2_DOWN, khr(Form::ImageB, 1, 256, true, false, false), coop(1, 256, true, [1, 1])),
        // 4 tiles and K = 4608: 9 runs of 512 into f32 slabs.
        (R_L4_3X3, khr(Form::ImageB, 9, 512, true, true, false), coop(9, 512, true, [3, 3])),
        (R_L4_EXPAND, khr(Form::ImageB, 1, 512, true, false, false), coop(1, 512, true, [1, 1])),
        (M_DW, dw3, dw3),
        // 4 outputs along a row per invocation in 8-byte words of 4 f16
        // channels: 8 words of 32 channels per workgroup.
        (M_DW.channels_last(), dw_rows(8), dw_rows(8)),
        // Dilated: 16-byte words of 8 channels, one output each.
        (M_DW.channels_last().dilation(2), dw_words(4), dw_words(4)),
        (
            DW_MULTIPLIER_2,
            Route::Direct(Direct::PerOutput { window: [3, 3] }),
            Route::Direct(Direct::PerOutput { window: [3, 3] }),
        ),
        (M_EXPAND_7, khr(Form::ImageB, 1, 160, true, false, false), coop(1, 160, true, [1, 1])),
        (ODD_CHANNELS, stem(48, 2, false), stem(48, 2, false)),
        // Grouped: only the WGSL kernel takes groups.
        (GROUPED, coop(1, 32, false, [3, 3]), coop(1, 32, false, [3, 3])),
        // 6x6 is not compiled into the WGSL kernel; the KHR one reads any.
        (ODD_WINDOW, khr(Form::ImageB64, 1, 288, true, true, false), coop(1, 288, true, [0, 0])),
    ];
    for (case, on_h100, on_coop) in table {
        assert_eq!(case.route(F16, &H100), on_h100, "{} on H100", case.what);
        assert_eq!(case.route(F16, &COOP_ONLY), on_coop, "{} with WGSL cooperative matrices only", case.what);
    }
}

#[test]
fn f16_channels_last_convolutions_store_along_output_rows() {
    // Channels-last input and output: the image is read in place and the
    // output's channels lie along N (ImageA forms).
    // By default on the 64 x 64 block of 4 subgroups; the 64-column block
    // of 2 where the small block is turned off.
    let nhwc = R_L1_3X3.channels_last();
    let want = Khr {
        form: Form::ImageASmall,
        splits: 1,
        k_chunk: 576,
        copy_input: false,
        copy_weight: true,
        whole: true,
        direct_store: false,
        fold_images: false,
        residual: false,
    };
    assert_eq!(nhwc.route(F16, &H100), Route::Khr(want));
    let large = Target { khr_small: Some(false), ..H100 };
    let want = Khr { form: Form::ImageA64, whole: false, ..want };
    assert_eq!(nhwc.route(F16, &large), Route::Khr(want));
    // A batch of channels-last images: folded into the GEMM's rows, where
    // 256 images of 7 x 7 fill 98 blocks of 128 rows (not 256 blocks of 49).
    let batch = Case { input: [256, 512, 7, 7], weight: [512, 512, 3, 3], ..R_L1_3X3 }.channels_last();
    let Route::Khr(k) = batch.route(F16, &large) else { panic!("not khr_gather") };
    assert!(k.form == Form::ImageA && k.fold_images, "{k:?}");
    // The small block (channels-last outputs only).
    let small = H100;
    let Route::Khr(k) = batch.route(F16, &small) else { panic!("not khr_gather") };
    assert!(k.form == Form::ImageASmall && k.fold_images, "{k:?}");
    let Route::Khr(k) = R_L1_3X3.route(F16, &small) else { panic!("not khr_gather") };
    assert_eq!(k.form, Form::ImageB64);
    // Not where the folded rows' blocks would exceed the grid: one product
    // per image instead.
    let wide = case("1x1 64->64 channels-last", [4, 64, 56, 56], [64, 64, 1, 1], 1, 0).channels_last();
    let Route::Khr(k) = wide.route(F16, &H100) else { panic!("not khr_gather") };
    assert!(k.form == Form::ImageASmall && k.fold_images, "{k:?}");
    // 196 blocks of 64 rows folded, 49 per image.
    let tight = Target { max_workgroups: 100, ..H100 };
    let Route::Khr(k) = wide.route(F16, &tight) else { panic!("not khr_gather") };
    assert!(k.form == Form::ImageASmall && !k.fold_images, "{k:?}");
    // Not where the output's images are not one run of rows.
    let mut p = batch.problem(F16);
    p.out.strides[0] += 8;
    let Route::Khr(k) = plan(&p, &H100).unwrap().route else { panic!("not khr_gather") };
    assert!(!k.fold_images, "{k:?}");
    // A strided 1x1 (a downsample) stays on the gather, read in place.
    let Route::Khr(k) = R_L2_DOWN.channels_last().route(F16, &H100) else { panic!("not khr_gather") };
    assert!(k.form == Form::ImageASmall && !k.copy_input && !k.copy_weight, "{k:?}");
    // Stride 1 with 128 or more input and output channels: one GEMM over
    // all images by default; the gather where turned off.
    let nhwc = case("1x1 128->256 channels-last", [1, 128, 56, 56], [256, 128, 1, 1], 1, 0).channels_last();
    let Route::Khr(k) = nhwc.route(F16, &Target { gemm_1x1_nhwc: Some(false), ..H100 }) else { panic!("not khr") };
    assert!(k.form == Form::ImageASmall && k.k_chunk == 128 && !k.copy_input && !k.copy_weight, "{k:?}");
    // Under 128 input channels, the gather.
    let narrow = case("1x1 64->256 channels-last", [1, 64, 56, 56], [256, 64, 1, 1], 1, 0).channels_last();
    assert_eq!(narrow.route(F16, &H100).name(), "khr_gather");
    let want = Nhwc1x1 { fused: true, residual: false, per_image: false, khr_every_k: true };
    assert_eq!(nhwc.route(F16, &H100), Route::Gemm1x1Nhwc(want));
    assert_eq!(nhwc.route(F16, &on(H100)), Route::Gemm1x1Nhwc(want));
}

#[test]
fn f16_without_cooperative_matrices_takes_im2col() {
    let im2col = |pack_weight, kp, chunk| Route::Im2col(Im2col { pack_weight, kp, chunk, flat: true });
    let stem = |kp, chunk, rows| {
        Route::Stem(Stem {
            cols: Im2col { pack_weight: true, kp, chunk, flat: true },
            rows,
            padded: None,
            pairs: false,
        })
    };
    let table = [
        // K = 147 is not whole 8s: the weight is packed to 152.
        (R_CONV1, stem(152, 1, false)),
        (R_L1_3X3, im2col(false, 576, 1)),
        // 37 images of 3136 x 576 columns fit 128 MiB: all 32 in one pass.
        (R_L1_3X3_B32, im2col(false, 576, 32)),
        (ODD_CHANNELS, stem(48, 2, false)),
        // One output channel: its pixels are rows of one channel.
        (TINY_1X1, stem(8, 1, true)),
        (M_DW, Route::Depthwise(Depthwise::Strips)),
        (M_PROJECT, Route::Gemm1x1),
    ];
    for (case, want) in table {
        assert_eq!(case.route(F16, &LAVAPIPE), want, "{}", case.what);
    }
    // Where the KHR gather runs, padded to 8 channels for it.
    assert_eq!(TINY_1X1.route(F16, &H100).name(), "im2col_stem");
    assert_eq!(TINY_1X1.route(F16, &Target { f16_start: F16Start::Im2col, ..H100 }), im2col(true, 8, 1));
}

#[test]
fn f16_first_layers_take_the_stem_route() {
    let stem = |kp, chunk, rows| {
        Route::Stem(Stem {
            cols: Im2col { pack_weight: true, kp, chunk, flat: true },
            rows,
            padded: None,
            pairs: false,
        })
    };
    let b32 = |c: Case| Case { input: [32, c.input[1], c.input[2], c.input[3]], ..c };
    let b256 = |c: Case| Case { input: [256, c.input[1], c.input[2], c.input[3]], ..c };
    let table = [
        // 112x112 pixels x 152 columns: 3.8 MB an image, 35 in 128 MiB.
        (b32(R_CONV1), stem(152, 32, false)),
        (b32(R_CONV1).channels_last(), stem(152, 32, true)),
        (b256(R_CONV1).channels_last(), stem(152, 35, true)),
        // K = 27 padded to 32: 0.8 MB an image.
        (b256(M_STEM), stem(32, 167, false)),
        (b256(M_STEM).channels_last(), stem(32, 167, true)),
        (M_STEM.no_bias().channels_last(), stem(32, 1, true)),
    ];
    for (case, want) in table {
        assert_eq!(case.route(F16, &LAVAPIPE), want, "{}", case.what);
        let columns = Target { stem: StemForm::Columns, ..H100 };
        assert_eq!(case.route(F16, &columns), want, "{}", case.what);
    }
    // By shape where tensor cores run: 7x7 windows and channels-last
    // outputs padded for the KHR gather (else the WGSL implicit GEMM), a
    // 3x3 window into a channels-first output through columns.
    let form = |c: Case, t: &Target| match c.route(F16, t) {
        Route::Stem(Stem { padded: Some(_), .. }) => "padded",
        Route::Stem(_) => "columns",
        r => r.name(),
    };
    for (case, h100, coop_only) in [
        (b32(R_CONV1), "padded", "coop_implicit"),
        (b32(R_CONV1).channels_last(), "padded", "coop_implicit"),
        (b256(M_STEM), "columns", "columns"),
        // 205 MB of padded image at batch 256: in chunks of the columns'
        // budget (167 images of 0.8 MB in 128 MiB).
        (b256(M_STEM).channels_last(), "padded", "coop_implicit"),
        (b256(R_CONV1).channels_last(), "padded", "coop_implicit"),
        (b32(M_STEM).channels_last(), "padded", "coop_implicit"),
    ] {
        assert_eq!((form(case, &H100), form(case, &COOP_ONLY)), (h100, coop_only), "{}", case.what);
    }
    let pad = |c: Case| c.problem(F16).geo;
    assert_eq!(super::stem_pad::images_per_chunk(&pad(b256(R_CONV1)), &H100, false), 167);
    // In pixel pairs, 115 words a row: all 256 images in the budget.
    assert_eq!(super::stem_pad::images_per_chunk(&pad(b256(R_CONV1)), &H100, true), 256);
    assert_eq!(super::stem_pad::images_per_chunk(&pad(b32(R_CONV1)), &H100, false), 32);
    let one = Target { cols_budget: 1, ..H100 };
    assert_eq!(super::stem_pad::images_per_chunk(&pad(b32(R_CONV1)), &one, true), 1);
    // Eight channels are the KHR gather's; f32 keeps the implicit GEMM;
    // groups and K past 512 the other f16 routes.
    let eight = case("8 channels 7x7/2", [1, 8, 64, 64], [64, 8, 7, 7], 2, 3);
    assert_eq!(eight.route(F16, &H100).name(), "khr_gather");
    assert_eq!(R_CONV1.route(F32, &H100).name(), "implicit_gemm");
    let grouped = case("2 groups of 3", [1, 6, 20, 20], [8, 3, 3, 3], 1, 1).groups(2);
    assert_eq!(grouped.route(F16, &H100).name(), "coop_implicit");
    let wide = case("3 channels 15x15", [1, 3, 40, 40], [8, 3, 15, 15], 1, 0);
    assert_eq!(wide.route(F16, &H100).name(), "coop_implicit");
    // WGC_CONV_F16=implicit starts after it.
    let implicit = Target { f16_start: F16Start::Implicit, ..H100 };
    assert_eq!(R_CONV1.route(F16, &implicit).name(), "coop_implicit");
    // The stem applies every activation in the GEMM's epilogue.
    assert!(stem(152, 1, true).applies_activation());
}

#[test]
fn f16_first_layers_pad_to_8_channels_for_the_khr_gather_where_asked() {
    let pad8 = Target { stem: StemForm::Pad8, ..H100 };
    let nhwc = Case { input: [32, 3, 224, 224], ..R_CONV1 }.channels_last();
    let Route::Stem(s) = nhwc.route(F16, &pad8) else { panic!("not the stem route") };
    // 64 output channels along N of a channels-last output; K = 8 * 49.
    let want = Khr {
        form: Form::ImageASmall,
        splits: 1,
        k_chunk: 416,
        copy_input: false,
        copy_weight: false,
        whole: true,
        direct_store: false,
        fold_images: true,
        residual: false,
    };
    assert_eq!(s.padded, Some(want));
    let text = plan(&nhwc.problem(F16), &pad8).unwrap().to_string();
    assert!(text.starts_with("route im2col_stem (channels padded to 8 for the KHR gather: ImageASmall"), "{text}");
    // Without the KHR kernels: the columns.
    let Route::Stem(s) = nhwc.route(F16, &Target { stem: StemForm::Pad8, ..LAVAPIPE }) else { panic!("not the stem") };
    assert_eq!(s.padded, None);
    // Asked for, a small window into a channels-first output is padded too.
    let Route::Stem(s) = M_STEM.route(F16, &pad8) else { panic!("not the stem route") };
    assert!(s.padded.is_some());
    assert!(!s.pairs, "pad8 keeps 8 channels per pixel");
}

#[test]
fn f16_first_layers_of_stride_2_go_in_pixel_pairs_by_default() {
    let nhwc = Case { input: [32, 3, 224, 224], ..R_CONV1 }.channels_last();
    for t in [H100, Target { stem: StemForm::Pairs, ..H100 }] {
        let Route::Stem(s) = nhwc.route(F16, &t) else { panic!("not the stem route") };
        assert!(s.pairs);
        // K = 8 channels * 7 rows * 4 pairs.
        assert_eq!(s.padded.map(|k| (k.form, k.k_chunk)), Some((Form::ImageASmall, 224)));
        let text = plan(&nhwc.problem(F16), &t).unwrap().to_string();
        assert!(text.starts_with("route im2col_stem (pixel pairs of 4 channels as 8 for the KHR gather"), "{text}");
    }
    let m_stem = Case { input: [32, 3, 224, 224], ..M_STEM }.channels_last();
    let Route::Stem(s) = m_stem.route(F16, &H100) else { panic!("not the stem route") };
    assert!(s.pairs && s.padded.is_some());
    // Pairs need a horizontal stride of 2, at most 4 channels, no dilation.
    let geo = |c: Case| c.problem(F16).geo;
    assert!(super::stem_pad::pairs_apply(&geo(R_CONV1)));
    let stride1 = case("3 channels 7x7/1", [1, 3, 64, 64], [64, 3, 7, 7], 1, 3);
    let five = case("5 channels 7x7/2", [1, 5, 64, 64], [64, 5, 7, 7], 2, 3);
    let dilated = case("3 channels 3x3/2 dilated", [1, 3, 64, 64], [64, 3, 3, 3], 2, 2).dilation(2);
    for c in [stride1, five, dilated] {
        assert!(!super::stem_pad::pairs_apply(&geo(c)), "{}", c.what);
    }
}

#[test]
fn the_f16_setting_starts_later_in_the_list() {
    let implicit = Target { f16_start: F16Start::Implicit, ..H100 };
    assert_eq!(R_L1_3X3.route(F16, &implicit).name(), "coop_implicit");
    let im2col = Target { f16_start: F16Start::Im2col, ..H100 };
    assert_eq!(R_L1_3X3.route(F16, &im2col).name(), "im2col_gemm");
    // A smaller columns budget cuts a batch into more passes.
    let small = Target { cols_budget: 4 << 20, ..LAVAPIPE };
    let Route::Im2col(i) = R_L1_3X3_B32.route(F16, &small) else { panic!("not im2col") };
    assert_eq!(i.chunk, 1);
}

#[test]
fn limits_decline_a_route_or_fail_as_the_call_does() {
    // Grids past the limit: the tensor-core routes decline, f32 fails.
    let small = Target { max_workgroups: 8, ..H100 };
    assert_eq!(R_L1_3X3.route(F16, &small).name(), "im2col_gemm");
    let why = super::winograd::supports(&R_L3_3X3_B32.problem(F32), &small).unwrap_err();
    assert_eq!(why, "1568 workgroups exceed the grid");
    let err = plan(&R_L1_3X3.problem(F32), &small).unwrap_err();
    assert!(matches!(err, Error::TooLarge(_)), "{err}");
    // Partial sums of a depthwise kernel past the binding size.
    let tight = Target { max_binding: 8, ..LAVAPIPE };
    let err = plan(&HUGE_DW.problem(F32), &tight).unwrap_err();
    assert!(matches!(err, Error::TooLarge(_)), "{err}");
    // One image's f16 columns past the binding size.
    let err = plan(&R_L1_3X3.problem(F16), &Target { max_binding: 1 << 20, ..LAVAPIPE }).unwrap_err();
    assert!(matches!(err, Error::TooLarge(_)), "{err}");
}

#[test]
fn bad_shapes_fail_before_planning_with_the_calls_status() {
    let params = Conv2dParams { groups: 3, ..Default::default() };
    let err = Problem::of_shapes(&params, [1, 8, 5, 5], [6, 2, 3, 3], F32, false, false).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch(_)), "{err}");
    let err = Problem::of_shapes(&Conv2dParams::default(), [1, 4, 2, 2], [4, 4, 3, 3], F32, false, false).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch(_)), "{err}");
}

#[test]
fn an_empty_output_plans_nothing() {
    let empty = case("empty batch", [0, 8, 5, 5], [8, 8, 3, 3], 1, 0);
    assert_eq!(empty.route(F32, &H100), Route::Empty);
}

#[test]
fn the_explanation_names_the_route_and_why_the_others_declined() {
    let text = plan(&R_CONV1.problem(F16), &H100).unwrap().to_string();
    assert!(
        text.starts_with("route im2col_stem (pixel pairs of 4 channels as 8 for the KHR gather: ImageB64"),
        "{text}"
    );
    assert!(text.contains("because f16"), "{text}");
    assert!(text.contains("khr_gather: 3 input channels, not a multiple of 8"), "{text}");
    assert!(text.contains("gemm_1x1: not a 1x1"), "{text}");
    let text = plan(&M_DW.no_bias().problem(F32), &LAVAPIPE).unwrap().to_string();
    assert!(text.starts_with("route depthwise (an invocation per 4 outputs along a row of a plane"), "{text}");
    assert!(text.contains("because one input and one output channel per group (32 groups) is depthwise"), "{text}");
    let text = plan(&M_DW.dilation(2).problem(F16), &LAVAPIPE).unwrap().to_string();
    assert!(text.starts_with("route depthwise (8x32 output tiles of 1 plane(s) per workgroup"), "{text}");
    let text = plan(&M_DW.channels_last().problem(F32), &LAVAPIPE).unwrap().to_string();
    assert!(text.starts_with("route depthwise (channels-last, an invocation per 4 channels of 4 pixels"), "{text}");
    let text = plan(&DW_MULTIPLIER_2.problem(F32), &LAVAPIPE).unwrap().to_string();
    assert!(text.starts_with("route direct (an invocation per output, 3x3 compiled in) because one input channel"));
    assert!(text.contains("depthwise: 1 input and 2 output channels per group in 8 group(s)"), "{text}");
}

#[test]
fn f32_3x3_stride_1_takes_winograd_where_its_rule_says() {
    let wino = |chunk| Route::Winograd(Winograd { chunk, channels_first: true });
    // ResNet-50's 3x3 stride-1 layers (64, 128, 256, 512 channels at 56,
    // 28, 14, 7) at batch 32 and 256: the scratch budget (128 MiB of V and
    // M) sets the images per pass.
    let resnet = |c: usize, hw: usize, n: usize| case("resnet 3x3", [n, c, hw, hw], [c, c, 3, 3], 1, 1);
    let table = [
        (resnet(64, 56, 32), wino(20)),
        (resnet(128, 28, 32), wino(32)),
        (resnet(256, 14, 32), wino(32)),
        (resnet(512, 7, 32), wino(32)),
        (resnet(64, 56, 256), wino(20)),
        (resnet(128, 28, 256), wino(41)),
        (resnet(256, 14, 256), wino(83)),
        (resnet(512, 7, 256), wino(128)),
        // Channels-last in and out, any padding, no bias: the same.
        (resnet(256, 14, 32).channels_last(), Route::Winograd(Winograd { chunk: 32, channels_first: false })),
        (case("pad 0", [4, 64, 33, 33], [96, 64, 3, 3], 1, 0).no_bias(), wino(4)),
        (case("pad 2", [4, 64, 33, 33], [96, 64, 3, 3], 1, 2), wino(4)),
    ];
    for (case, want) in table {
        for target in [LAVAPIPE, H100, COOP_ONLY] {
            assert_eq!(case.route(F32, &target), want, "{} {:?}", case.what, case.input);
        }
    }
    // Kept on the implicit GEMM: fewer than 32 channels in or out, fewer
    // than 1024 output pixels in all (ResNet's 7x7 and 14x14 layers at
    // batch 1, whose weight transform is not paid back), strides,
    // dilations, groups, other windows, f16; MobileNetV2 has no ungrouped
    // 3x3 stride-1 layer (its stem is strided, its 3x3s depthwise).
    let keep = [
        case("16 in", [8, 16, 56, 56], [64, 16, 3, 3], 1, 1),
        case("16 out", [8, 64, 56, 56], [16, 64, 3, 3], 1, 1),
        ODD_CHANNELS,
        R_L4_3X3,
        resnet(256, 14, 1),
        R_L2_3X3_S2,
        DILATED,
        M_STEM,
        case("5x5", [8, 64, 56, 56], [64, 64, 5, 5], 1, 2),
        case("grouped", [8, 64, 56, 56], [64, 32, 3, 3], 1, 1).groups(2),
    ];
    for case in keep {
        assert_ne!(case.route(F32, &LAVAPIPE).name(), "winograd", "{}", case.what);
    }
    assert_eq!(R_L1_3X3.route(F16, &LAVAPIPE).name(), "im2col_gemm");
    assert_eq!(M_DW.route(F32, &LAVAPIPE).name(), "depthwise");
}

#[test]
fn the_winograd_setting_forces_it_on_or_off() {
    let on = Target { winograd: Some(true), ..LAVAPIPE };
    let off = Target { winograd: Some(false), ..LAVAPIPE };
    // On: any shape it can take, even 5 -> 7 channels over 49 pixels.
    assert_eq!(ODD_CHANNELS.route(F32, &on), Route::Winograd(Winograd { chunk: 2, channels_first: true }));
    assert_eq!(R_L4_3X3.route(F32, &on), Route::Winograd(Winograd { chunk: 1, channels_first: true }));
    // Never where it cannot: strides, dilations, groups, f16.
    assert_eq!(R_L2_3X3_S2.route(F32, &on).name(), "implicit_gemm");
    assert_eq!(DILATED.route(F32, &on).name(), "implicit_gemm");
    assert_eq!(R_L1_3X3.route(F16, &on).name(), "im2col_gemm");
    // Off: the implicit GEMM, and the explanation says why.
    assert_eq!(R_L1_3X3.route(F32, &off).name(), "implicit_gemm");
    let text = plan(&R_L1_3X3.problem(F32), &off).unwrap().to_string();
    assert!(text.contains("winograd: WGC_CONV_WINOGRAD=0"), "{text}");
    let text = plan(&R_L1_3X3.problem(F32), &LAVAPIPE).unwrap().to_string();
    assert!(
        text.starts_with("route winograd (F(2x2, 3x3), 16 GEMMs over the tiles of 1 image(s) per pass, tiles fastest) because f32 3x3"),
        "{text}"
    );
    let text = plan(&R_L4_3X3.problem(F32), &LAVAPIPE).unwrap().to_string();
    assert!(text.contains("winograd: 49 output pixels in all: under 1024"), "{text}");
    // A smaller budget: one image per pass; scratch of one image past the
    // binding size: declined.
    let small = Target { cols_budget: 1, ..LAVAPIPE };
    assert_eq!(R_L1_3X3_B32.route(F32, &small), Route::Winograd(Winograd { chunk: 1, channels_first: true }));
    let tight = Target { max_binding: 1 << 20, ..LAVAPIPE };
    let text = plan(&R_L1_3X3.problem(F32), &tight).unwrap().to_string();
    assert!(text.contains("winograd: its scratch"), "{text}");
}

#[test]
fn the_winograd_layout_setting_fixes_the_order_for_every_image() {
    let by = |tiles| Target { winograd_tiles_fastest: Some(tiles), ..LAVAPIPE };
    let route = |case: Case, t: &Target| case.route(F32, t);
    let want = |channels_first| Route::Winograd(Winograd { chunk: 1, channels_first });
    assert_eq!(route(R_L1_3X3, &by(false)), want(false));
    assert_eq!(route(R_L1_3X3.channels_last(), &by(true)), want(true));
    assert_eq!(route(R_L1_3X3.channels_last(), &LAVAPIPE), want(false));
}

#[test]
fn winograd_plans_a_convolution_without_input_channels() {
    let on = Target { winograd: Some(true), ..LAVAPIPE };
    let c = case("zero channels", [2, 0, 5, 6], [3, 0, 3, 3], 1, 1);
    assert_eq!(c.route(F32, &on), Route::Winograd(Winograd { chunk: 2, channels_first: true }));
}

/// The 1x1 layers of ResNet-50 and MobileNetV2 (batch 1 shapes).
const NETS_1X1: [Case; 11] = [
    case("resnet layer1 1x1 64->64", [1, 64, 56, 56], [64, 64, 1, 1], 1, 0),
    case("resnet layer1 1x1 256->64", [1, 256, 56, 56], [64, 256, 1, 1], 1, 0),
    case("resnet layer1 1x1 64->256", [1, 64, 56, 56], [256, 64, 1, 1], 1, 0),
    case("resnet layer2 1x1 128->512", [1, 128, 28, 28], [512, 128, 1, 1], 1, 0),
    case("resnet layer3 1x1 1024->256", [1, 1024, 14, 14], [256, 1024, 1, 1], 1, 0),
    case("resnet layer4 1x1 512->2048", [1, 512, 7, 7], [2048, 512, 1, 1], 1, 0),
    case("mobilenet 1x1 project 32->16", [1, 32, 112, 112], [16, 32, 1, 1], 1, 0),
    case("mobilenet 1x1 expand 24->144", [1, 24, 56, 56], [144, 24, 1, 1], 1, 0),
    case("mobilenet 1x1 project 144->24", [1, 144, 56, 56], [24, 144, 1, 1], 1, 0),
    case("mobilenet 1x1 project 960->160", [1, 960, 7, 7], [160, 960, 1, 1], 1, 0),
    case("mobilenet last 1x1 320->1280", [1, 320, 7, 7], [1280, 320, 1, 1], 1, 0),
];

/// The f32 (and lavapipe f16) products of those that the tiled kernel
/// splits over K (long K, few tiles), its split-K pass then taking the
/// epilogue.
const SPLIT_K: [(&str, usize); 4] = [
    ("resnet layer3 1x1 1024->256", 1),
    ("resnet layer4 1x1 512->2048", 1),
    ("mobilenet 1x1 project 960->160", 1),
    ("mobilenet 1x1 project 960->160", 32),
];

/// `t` with the channels-last 1x1 GEMM route on (WGC_CONV_1X1_NHWC=1).
fn on(t: Target<'static>) -> Target<'static> {
    Target { gemm_1x1_nhwc: Some(true), ..t }
}

fn batched(c: Case, n: usize) -> Case {
    Case { input: [n, c.input[1], c.input[2], c.input[3]], ..c }
}

#[test]
fn channels_last_1x1_convolutions_are_one_gemm_fused_where_its_plan_fuses() {
    let gemm =
        |fused, khr_every_k| Route::Gemm1x1Nhwc(Nhwc1x1 { fused, residual: false, per_image: false, khr_every_k });
    for c in NETS_1X1 {
        for n in [1, 32, 256] {
            let c = batched(c, n).channels_last();
            // f16 on the tensor cores: their kernels (or split-K pass) take
            // the epilogue. f32 and lavapipe: the tiled kernel, whose
            // epilogue would go through f32 scratch.
            // f16 with tensor cores: the GEMM where its plan takes the
            // epilogue in a tensor-core kernel; with 32 or fewer output
            // channels it may be a matrix-vector kernel without one, and
            // then the tensor-core convolution (which stores with it) runs.
            let few = c.weight[0] <= 32;
            for (target, name) in [(on(H100), "H100"), (on(COOP_ONLY), "WGSL only")] {
                let r = c.route(F16, &target);
                if few {
                    let tensor_conv = matches!(r, Route::Khr(_) | Route::Coop(_));
                    assert!(r == gemm(true, target.khr) || tensor_conv, "{} batch {n} f16 on {name}: {r}", c.what);
                } else {
                    assert_eq!(r, gemm(true, target.khr), "{} batch {n} f16 on {name}", c.what);
                }
                assert!(r.applies(super::bn_act::Activation::Relu6));
            }
            for (dtype, target, name) in
                [(F32, on(H100), "H100"), (F16, on(LAVAPIPE), "lavapipe"), (F32, on(LAVAPIPE), "lavapipe")]
            {
                // The tiled kernel, whose epilogue would go through f32
                // scratch, but where it splits K.
                let split = SPLIT_K.contains(&(c.what, n));
                assert_eq!(c.route(dtype, &target), gemm(split, false), "{} batch {n} {dtype:?} on {name}", c.what);
            }
            // NCHW: flat pixels, a GEMM per image from 256 pixels on.
            let nchw = batched(NETS_1X1.iter().find(|x| x.what == c.what).copied().unwrap(), n);
            let want = if c.input[2] * c.input[3] >= 256 { "gemm_1x1" } else { "implicit_gemm" };
            assert_eq!(nchw.route(F32, &LAVAPIPE).name(), want, "{} batch {n} NCHW", c.what);
        }
    }
    // Strided 1x1 (the downsample) and a channels-last input with an
    // NCHW output are not this route.
    assert_ne!(R_L2_DOWN.channels_last().route(F16, &on(H100)).name(), "gemm_1x1_nhwc");
    // By default: f16 with at least 128 output channels where the KHR GEMM
    // runs; never f32, fewer output channels or without the KHR kernels.
    for c in NETS_1X1 {
        let c = batched(c, 32).channels_last();
        let by_rule = c.weight[0] >= super::gemm1x1_nhwc::GEMM_MIN_OUT_CHANNELS
            && c.weight[1] >= super::gemm1x1_nhwc::GEMM_MIN_IN_CHANNELS;
        let name = c.route(F16, &H100).name();
        assert_eq!(name == "gemm_1x1_nhwc", by_rule, "{} f16 on H100: {name}", c.what);
        assert_ne!(c.route(F32, &H100).name(), "gemm_1x1_nhwc", "{} f32", c.what);
        assert_ne!(c.route(F16, &COOP_ONLY).name(), "gemm_1x1_nhwc", "{} f16, WGSL only", c.what);
        let off = Target { gemm_1x1_nhwc: Some(false), ..H100 };
        assert_ne!(c.route(F16, &off).name(), "gemm_1x1_nhwc", "{} f16, off", c.what);
    }
    let mut p = NETS_1X1[0].channels_last().problem(F16);
    p.out = super::problem::View::contiguous(p.geo.out_shape(), F16);
    let text = plan(&p, &on(H100)).unwrap().to_string();
    assert!(text.contains("gemm_1x1_nhwc: the input or output is not channels-last with packed pixels"), "{text}");
}

#[test]
fn a_residual_joins_the_gemm_epilogue_where_its_pixels_fold_into_rows() {
    use super::problem::View;
    let c = batched(NETS_1X1[2], 4).channels_last();
    let with = |residual: View, dtype, target: &Target<'static>| {
        let p = Problem { residual: Some(residual), ..c.problem(dtype) };
        plan(&p, &on(*target)).unwrap().route
    };
    let out = c.problem(F16).geo.out_shape();
    let nhwc = View::channels_last(out, F16);
    let r = |fused, residual, per_image| Route::Gemm1x1Nhwc(Nhwc1x1 { fused, residual, per_image, khr_every_k: true });
    assert_eq!(with(nhwc, F16, &H100), r(true, true, false));
    assert!(with(nhwc, F16, &H100).fuses_residual());
    // NCHW: pixels fold per image, one GEMM per image.
    assert_eq!(with(View::contiguous(out, F16), F16, &H100), r(true, true, true));
    // Rows padded: no fold, a pass of its own.
    let mut padded = nhwc;
    padded.strides[2] += 8;
    padded.strides[0] = padded.strides[2] * out[2] as isize;
    assert_eq!(with(padded, F16, &H100), r(true, false, false));
    assert!(!with(padded, F16, &H100).fuses_residual());
    // Not fused at all where the GEMM is the tiled kernel.
    assert!(!with(nhwc, F32, &H100).fuses_residual());
    assert!(!with(nhwc, F16, &LAVAPIPE).fuses_residual());
}

#[test]
fn the_khr_gather_adds_a_residual_laid_out_as_its_output_in_its_epilogue() {
    use super::problem::View;
    let c = batched(R_L1_3X3, 4).channels_last();
    let with = |residual: View, target: &Target<'static>| {
        let p = Problem { residual: Some(residual), ..c.problem(F16) };
        plan(&p, &on(*target)).unwrap().route
    };
    let out = c.problem(F16).geo.out_shape();
    let nhwc = View::channels_last(out, F16);
    let Route::Khr(k) = with(nhwc, &H100) else { panic!("not khr_gather") };
    assert!(k.residual && k.fold_images && k.splits == 1 && !k.direct_store, "{k:?}");
    // NCHW residual under a folded channels-last output: its images are
    // not rows of one stride there, so a pass of its own.
    assert!(!with(View::contiguous(out, F16), &H100).fuses_residual());
    // Padded residual rows: its pixels are not one strided dim.
    let mut padded = nhwc;
    padded.strides[2] += 8;
    padded.strides[0] = padded.strides[2] * out[2] as isize;
    assert!(!with(padded, &H100).fuses_residual());
    // K split into slabs (one image of 512 channels at 7 x 7): summed by a
    // pass without one.
    let deep = batched(R_L4_3X3, 1).channels_last();
    let p =
        Problem { residual: Some(View::channels_last(deep.problem(F16).geo.out_shape(), F16)), ..deep.problem(F16) };
    match plan(&p, &on(H100)).unwrap().route {
        Route::Khr(k) => assert_eq!(k.residual, k.splits == 1, "{k:?}"),
        other => assert!(!other.fuses_residual(), "{other}"),
    }
}

#[test]
fn f32_k_splits_fill_the_gpu_where_the_tiles_are_few() {
    let b32 = |c: Case| Case { input: [32, c.input[1], c.input[2], c.input[3]], ..c };
    // ResNet-50's reductions 2048 -> 512 (49 pixels an image: not the 1x1 GEMM).
    let r_l4_reduce = case("resnet layer4 1x1 2048->512", [1, 2048, 7, 7], [512, 2048, 1, 1], 1, 0);
    let r_l3_reduce = case("resnet layer3 1x1 1024->256", [1, 1024, 14, 14], [256, 1024, 1, 1], 1, 0);
    let r_l3_3x3 = case("resnet layer3 3x3", [1, 256, 14, 14], [256, 256, 3, 3], 1, 1);
    let r_l2_3x3 = case("resnet layer2 3x3", [1, 128, 28, 28], [128, 128, 3, 3], 1, 1);
    let r_l4_first = case("resnet layer4.0 1x1 1024->512", [1, 1024, 14, 14], [512, 1024, 1, 1], 1, 0);
    let m_project = case("mobilenet 1x1 960->160 at 7x7", [1, 960, 7, 7], [160, 960, 1, 1], 1, 0);
    let table = [
        // Batch 32: 200 tiles of 64x64 and K 4608 (2048): 9 (4) runs of
        // 512 towards 2112 workgroups.
        (b32(R_L4_3X3), implicit(1, 1, 9, 512, [3, 3])),
        (b32(r_l4_reduce), implicit(1, 1, 4, 512, [1, 1])),
        // 784, 392 and 375 tiles: a sixth of the fill or more, unsplit.
        (b32(r_l4_first), implicit(1, 1, 1, 1024, [1, 1])),
        (R_L3_3X3_B32, implicit(1, 1, 1, 2304, [3, 3])),
        (b32(M_EXPAND_7), implicit(1, 1, 1, 160, [1, 1])),
        (b32(m_project), implicit(1, 1, 1, 960, [1, 1])),
        // Batch 1: 8 to 26 tiles, split as far as runs of 512 allow.
        (R_L4_3X3, implicit(1, 1, 9, 512, [3, 3])),
        (r_l4_reduce, implicit(1, 1, 4, 512, [1, 1])),
        (r_l3_3x3, implicit(1, 1, 4, 576, [3, 3])),
        (r_l3_reduce, implicit(1, 1, 2, 512, [1, 1])),
        (r_l2_3x3, implicit(1, 1, 2, 576, [3, 3])),
        (r_l4_first, implicit(1, 1, 2, 512, [1, 1])),
        // K 320 and 960: under two runs of 512 (MobileNetV2 never splits).
        (M_LAST, implicit(1, 1, 1, 320, [1, 1])),
        (m_project, implicit(1, 1, 1, 960, [1, 1])),
        (R_L4_EXPAND, implicit(1, 1, 1, 512, [1, 1])),
    ];
    for (case, want) in table {
        // Winograd off: these are the implicit GEMM's splits.
        for target in [LAVAPIPE, H100].map(|t| Target { winograd: Some(false), ..t }) {
            assert_eq!(case.route(F32, &target), want, "{}", case.what);
            let p = case.problem(F32);
            let again = super::implicit::supports(&p, &target).unwrap();
            assert_eq!(Route::Implicit(again), want, "{}: supports is a pure function", case.what);
        }
    }
}

#[test]
fn the_split_fill_setting_changes_only_the_optional_splits() {
    let b32 = Case { input: [32, 512, 7, 7], ..R_L4_3X3 };
    let none = Target { split_fill: 0, winograd: Some(false), ..H100 };
    assert_eq!(b32.route(F32, &none), implicit(1, 1, 1, 4608, [3, 3]));
    assert_eq!(R_L4_3X3.route(F32, &none), implicit(1, 1, 1, 4608, [3, 3]));
    // K past 16384 is split whatever the setting.
    assert_eq!(LONG_K.route(F32, &none), implicit(1, 1, 2, 9216, [3, 3]));
    // Half the fill: 200 tiles are more than a sixth of 1056.
    let half = Target { split_fill: 1056, winograd: Some(false), ..H100 };
    assert_eq!(b32.route(F32, &half), implicit(1, 1, 1, 4608, [3, 3]));
    assert_eq!(R_L4_3X3.route(F32, &half), implicit(1, 1, 9, 512, [3, 3]));
    // Twice the fill splits batch 32's 392 tiles at 256 channels too.
    let double = Target { split_fill: 4224, winograd: Some(false), ..H100 };
    assert_eq!(R_L3_3X3_B32.route(F32, &double), implicit(1, 1, 4, 576, [3, 3]));
}

#[test]
fn f32_slabs_respect_the_binding_size() {
    // Batch 32's last 3x3: a slab is 32 * 512 * 49 floats (3.2 MB).
    let b32 = Case { input: [32, 512, 7, 7], ..R_L4_3X3 };
    let slab = 32 * 512 * 49 * 4;
    let two = Target { max_binding: 2 * slab + 100, ..H100 };
    assert_eq!(b32.route(F32, &two), implicit(1, 1, 2, 2304, [3, 3]));
    // Not one slab fits: no split.
    let none = Target { max_binding: slab - 4, ..H100 };
    assert_eq!(b32.route(F32, &none), implicit(1, 1, 1, 4608, [3, 3]));
    // K past 16384 must split: three slabs of 72 floats fit, then one at a
    // time (two passes), then none (the call's TooLarge).
    let slab = 8 * 9 * 4;
    let three = Target { max_binding: 3 * slab, ..H100 };
    assert_eq!(LONG_K.route(F32, &three), implicit(1, 1, 3, 6144, [3, 3]));
    let one = Target { max_binding: slab + 4, ..H100 };
    let want = Implicit { rm: 1, rn: 1, splits: 2, k_chunk: 9216, window: [3, 3], slabs: 1 };
    assert_eq!(LONG_K.route(F32, &one), Route::Implicit(want));
    let text = plan(&LONG_K.problem(F32), &one).unwrap().to_string();
    assert!(text.contains("K in 2 run(s) of 9216 into f32 slabs, 1 at a time summed"), "{text}");
    // The scratch budget likewise, but never under one slab.
    let budget = Target { split_scratch: slab + 4, ..H100 };
    assert_eq!(LONG_K.route(F32, &budget), Route::Implicit(want));
    assert_eq!(LONG_K.route(F32, &Target { split_scratch: 1, ..H100 }), Route::Implicit(want));
    let err = plan(&LONG_K.problem(F32), &Target { max_binding: slab - 4, ..H100 }).unwrap_err();
    assert!(matches!(err, Error::TooLarge(_)), "{err}");
}

#[test]
fn the_implicit_gemm_plans_a_convolution_without_input_channels() {
    let c = case("zero channels", [2, 0, 5, 6], [3, 0, 3, 3], 1, 1);
    for target in [LAVAPIPE, H100] {
        assert_eq!(c.route(F32, &target), implicit(1, 1, 1, 16, [3, 3]), "{}", c.what);
    }
}
