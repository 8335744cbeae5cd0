//! Which convolution routes apply conv2d_bn_act's activation as they store
//! (the rest leave it to one elementwise pass), by table without a GPU.

use super::bn_act::Activation;
use super::plan::plan;
use super::problem::{Conv2dParams, Problem};
use super::route::Route;
use super::target::{F16Start, Fill, GemmOn, StemForm, Target};
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::tensor::DType::{self, F16, F32};

fn target(khr: bool, coop: bool) -> Target<'static> {
    Target {
        max_workgroups: 65535,
        max_binding: (1 << 31) - 1,
        khr,
        coop,
        fill: Fill::Rule(|_, _| 1),
        f16_start: F16Start::Gather,
        cols_budget: 128 << 20,
        winograd: None,
        winograd_tiles_fastest: None,
        stem: StemForm::Auto,
        gemm: GemmOn::Profile(if coop { DeviceProfile::h100_like } else { DeviceProfile::lavapipe_like }),
        gemm_1x1_nhwc: Some(true),
        khr_small: None,
        split_fill: 2112,
        split_scratch: u64::MAX,
    }
}

fn route(input: [usize; 4], weight: [usize; 4], pad: u32, groups: u32, dtype: DType, t: &Target) -> Route {
    let params = Conv2dParams { pad: [pad, pad], groups, ..Conv2dParams::default() };
    // Channels-last images (what the KHR gather reads), but for 1x1
    // kernels, which are a GEMM over NCHW's flat pixels.
    let p = Problem::of_shapes(&params, input, weight, dtype, true, weight[2] != 1).unwrap();
    plan(&p, t).unwrap().route
}

#[test]
fn the_tensor_core_routes_apply_the_activation_and_the_others_leave_it_to_a_pass() {
    let (lavapipe, h100, coop_only) = (target(false, false), target(true, true), target(false, true));
    let resnet = ([32, 64, 56, 56], [64, 64, 3, 3]);
    let cases = [
        (route(resnet.0, resnet.1, 1, 1, F32, &lavapipe), false, "winograd"),
        (route(resnet.0, resnet.1, 1, 1, F16, &lavapipe), false, "im2col_gemm"),
        (route(resnet.0, resnet.1, 1, 1, F16, &h100), true, "khr_gather"),
        (route([8, 16, 9, 9], [16, 16, 3, 3], 1, 1, F16, &coop_only), true, "coop_implicit"),
        (route([2, 64, 28, 28], [128, 64, 1, 1], 0, 1, F32, &lavapipe), false, "gemm_1x1"),
        (route([2, 32, 28, 28], [32, 1, 3, 3], 1, 32, F32, &lavapipe), false, "depthwise"),
        (route([2, 32, 28, 28], [64, 1, 3, 3], 1, 32, F32, &lavapipe), false, "direct"),
        // K split: the pass that sums the slabs applies it.
        (route([1, 256, 3, 3], [8, 256, 3, 3], 1, 1, F32, &lavapipe), true, "implicit_gemm"),
    ];
    for (route, applies, name) in cases {
        assert!(route.to_string().starts_with(name), "expected {name}: {route}");
        assert_eq!(route.applies_activation(), applies, "{route}");
    }
    // The depthwise store applies the ReLU family only; the multiplier-2
    // direct kernel none.
    let dw = route([2, 32, 28, 28], [32, 1, 3, 3], 1, 32, F32, &lavapipe);
    for (act, applies) in [(Activation::Relu6, true), (Activation::Hardswish, true), (Activation::Silu, false)] {
        assert_eq!(dw.applies(act), applies, "{act:?}");
    }
    // So does the Winograd output transform.
    let wino = route(resnet.0, resnet.1, 1, 1, F32, &lavapipe);
    for (act, applies) in [(Activation::Relu, true), (Activation::Hardswish, true), (Activation::Gelu, false)] {
        assert_eq!(wino.applies(act), applies, "{act:?}");
    }
    let direct = route([2, 32, 28, 28], [64, 1, 3, 3], 1, 32, F32, &lavapipe);
    assert!(!direct.applies(Activation::Relu) && direct.applies(Activation::None));
    // The last case is the implicit GEMM with K split into slabs, every
    // activation applied as they are summed.
    let split = route([1, 256, 3, 3], [8, 256, 3, 3], 1, 1, F32, &lavapipe);
    let Route::Implicit(i) = split else { panic!() };
    assert!(i.splits > 1 && i.slabs == i.splits);
    assert!(split.applies(Activation::Silu) && split.applies(Activation::Relu6));
    assert!(
        split.to_string().contains("into f32 slabs summed with the bias and activation by a second pass"),
        "{split}"
    );
}
