//! Routing tables: convolution shapes (ResNet-50 and MobileNetV2 layers,
//! odd channels, groups, strides, views, f32 and f16) on device profiles
//! with and without cooperative matrices, and the route each takes.

use super::plan::plan;
use super::problem::{Conv2dParams, Problem};
use super::route::{Coop, Depthwise, Direct, Form, Im2col, Implicit, Khr, Route};
use super::target::{F16Start, Fill, Target};
use crate::error::Error;
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
    split_fill: 2112,
    split_scratch: u64::MAX,
};
/// Vulkan on an H100: the KHR kernels and the WGSL cooperative matrices.
const H100: Target<'static> = Target { khr: true, coop: true, max_binding: (1 << 31) - 1, ..LAVAPIPE };
/// Cooperative matrices in WGSL but not the SPIR-V kernels (not Vulkan, or
/// WGC_GEMM_SPIRV=0).
const COOP_ONLY: Target<'static> = Target { khr: false, ..H100 };

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
    let table = [
        (R_CONV1, implicit(1, 1, 1, 160, [7, 7])),
        (R_L1_REDUCE, Route::Gemm1x1),
        (R_L1_3X3, implicit(1, 1, 1, 576, [3, 3])),
        (R_L1_3X3_B32, implicit(2, 1, 1, 576, [3, 3])),
        // 26 tiles and K = 1152: 2 runs.
        (R_L2_3X3_S2, implicit(1, 1, 2, 576, [3, 3])),
        (R_L2_DOWN, implicit(1, 1, 1, 256, [1, 1])),
        (R_L2_EXPAND_B32, Route::Gemm1x1),
        (R_L3_3X3_B32, implicit(1, 1, 1, 2304, [3, 3])),
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
        (BIG_BOTH, implicit(2, 2, 1, 2304, [3, 3])),
        // Their tiles do not fit workgroup memory: the direct kernel.
        (WIDE_DW, Route::Direct(Direct::PerWorkgroup)),
        (HUGE_DW, Route::Direct(Direct::Chunked { chunks: 2 })),
        // 6 is not among the compiled sizes.
        (ODD_WINDOW, implicit(1, 1, 1, 288, [0, 0])),
        // A channels-last input is not flat pixels: no 1x1 GEMM.
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
        Route::Khr(Khr { form, splits, k_chunk, copy_input, copy_weight, whole, direct_store: false })
    };
    let coop = |splits, k_chunk, w_vec, window| Route::Coop(Coop { splits, k_chunk, w_vec, window });
    let dw_words = |cvw| Route::Depthwise(Depthwise::Words { cvw });
    let dw_rows = |cvw| Route::Depthwise(Depthwise::Rows { cvw });
    let dw3 = Route::Depthwise(Depthwise::Strips);
    // (case, on H100 (KHR and WGSL cooperative matrices), on a device with
    // WGSL cooperative matrices only)
    let table = [
        // 3 channels: not a multiple of 8 for the KHR gather.
        (R_CONV1, coop(1, 160, false, [7, 7]), coop(1, 160, false, [7, 7])),
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
        (ODD_CHANNELS, coop(1, 64, false, [3, 3]), coop(1, 64, false, [3, 3])),
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
    let nhwc = R_L1_3X3.channels_last();
    let want = Khr {
        form: Form::ImageA64,
        splits: 1,
        k_chunk: 576,
        copy_input: false,
        copy_weight: true,
        whole: false,
        direct_store: false,
    };
    assert_eq!(nhwc.route(F16, &H100), Route::Khr(want));
    let nhwc = case("1x1 64->256 channels-last", [1, 64, 56, 56], [256, 64, 1, 1], 1, 0).channels_last();
    let want = Khr { form: Form::ImageA, k_chunk: 64, copy_weight: false, ..want };
    assert_eq!(nhwc.route(F16, &H100), Route::Khr(want));
}

#[test]
fn f16_without_cooperative_matrices_takes_im2col() {
    let im2col = |pack_weight, kp, chunk| Route::Im2col(Im2col { pack_weight, kp, chunk, flat: true });
    let table = [
        // K = 147 is not whole 8s: the weight is packed to 152.
        (R_CONV1, im2col(true, 152, 1)),
        (R_L1_3X3, im2col(false, 576, 1)),
        // 37 images of 3136 x 576 columns fit 128 MiB: all 32 in one pass.
        (R_L1_3X3_B32, im2col(false, 576, 32)),
        (ODD_CHANNELS, im2col(true, 48, 2)),
        (TINY_1X1, im2col(true, 8, 1)),
        (M_DW, Route::Depthwise(Depthwise::Strips)),
        (M_PROJECT, Route::Gemm1x1),
    ];
    for (case, want) in table {
        assert_eq!(case.route(F16, &LAVAPIPE), want, "{}", case.what);
    }
    // Even with cooperative matrices, a weight that binds under 16 bytes.
    assert_eq!(TINY_1X1.route(F16, &H100), im2col(true, 8, 1));
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
    assert!(text.starts_with("route coop_implicit ("), "{text}");
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
        for target in [LAVAPIPE, H100] {
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
    let none = Target { split_fill: 0, ..H100 };
    assert_eq!(b32.route(F32, &none), implicit(1, 1, 1, 4608, [3, 3]));
    assert_eq!(R_L4_3X3.route(F32, &none), implicit(1, 1, 1, 4608, [3, 3]));
    // K past 16384 is split whatever the setting.
    assert_eq!(LONG_K.route(F32, &none), implicit(1, 1, 2, 9216, [3, 3]));
    // Half the fill: 200 tiles are more than a sixth of 1056.
    let half = Target { split_fill: 1056, ..H100 };
    assert_eq!(b32.route(F32, &half), implicit(1, 1, 1, 4608, [3, 3]));
    assert_eq!(R_L4_3X3.route(F32, &half), implicit(1, 1, 9, 512, [3, 3]));
    // Twice the fill splits batch 32's 392 tiles at 256 channels too.
    let double = Target { split_fill: 4224, ..H100 };
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
