//! Which route a convolution would take, and why.

use super::boundary::{borrow, run};
use super::ops_conv::WgcConv2dParams;
use super::sized::read_sized;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use super::text_out::write_text;
use crate::ops::conv::bn_act::Activation;
use crate::ops::conv::{conv2d_plan, Conv2dParams};
use std::ffi::c_char;

impl From<&WgcConv2dParams> for Conv2dParams {
    fn from(p: &WgcConv2dParams) -> Conv2dParams {
        Conv2dParams {
            stride: [p.stride_h, p.stride_w],
            pad: [p.pad_h, p.pad_w],
            dilation: [p.dilation_h, p.dilation_w],
            groups: p.groups,
        }
    }
}

/// Explain, without recording anything, how `wgc_op_conv2d` with the same
/// operands would run: one line, `route NAME (PARAMETERS) because REASON`,
/// then `; declined: ROUTE: WHY; ...` for each route asked before it, in
/// order, and last `; activation: in the route's epilogue`,
/// `; activation: in the route's store for relu, relu6 and hardswish, a
/// pass of its own for the others` or `; activation: a pass of its own`:
/// where `wgc_op_conv2d_bn_act` with these operands applies its
/// activation, then `; residual: in the route's epilogue, before the
/// activation` or `; residual: added in place by a pass of its own, then
/// the activation by another`: where `wgc_op_conv2d_bn_act_residual` adds a
/// residual laid out as `out` (the activation then comes with it). The
/// routes are `empty`, `gemm_1x1` (a GEMM per image over NCHW's flat
/// pixels, whose own route `wgc_op_gemm` then chooses), `gemm_1x1_nhwc`
/// (f16 with 128 or more input and output channels on the VK_KHR_cooperative_matrix
/// GEMM, or any with `WGC_CONV_1X1_NHWC=1`: one GEMM over all images' channels-last
/// packed pixels; in the parentheses, whether the GEMM's plan applies the
/// bias, activation and residual in its kernel or split-K pass, else the
/// product transposed with a row bias and the activation a pass of its
/// own), `depthwise` (multiplier 1, at the memory bandwidth), `direct`
/// (other depthwise ones), `winograd` (f32 3x3 stride 1, F(2x2, 3x3)),
/// `implicit_gemm` (other f32), `khr_gather`, `im2col_stem` (f16 under 8
/// input channels, a vision net's first layer: padded to 8 channels, or
/// in pixel pairs of 4 channels, for the KHR gather, or im2col columns and
/// the GEMM with the bias and activation in its epilogue), `coop_implicit`
/// (f16 on tensor cores) and `im2col_gemm` (f16 elsewhere). The text is
/// for people and logs: its wording may change between versions; do not
/// parse it.
///
/// Writes the text, NUL-terminated, into `buf` if it fits in `buf_len`
/// bytes, and its length without the NUL into `*out_len` either way
/// (`buf` NULL with `buf_len` 0 asks for the length: `WGC_OK`); with a
/// nonzero `buf_len` that is too small it returns `WGC_ERROR_TOO_LARGE`
/// and writes nothing into `buf` (as `wgc_profile_table`).
///
/// The operands are checked as `wgc_op_conv2d` checks them and a bad one
/// gives the same status (and nothing is written); a convolution that
/// `wgc_op_conv2d` would refuse for the adapter's limits
/// (`WGC_ERROR_TOO_LARGE`) is refused here too. Also
/// `WGC_ERROR_NULL_POINTER` (NULL `out_len`, or NULL `buf` with a nonzero
/// `buf_len`). Does not block; reads the same settings as the call.
///
/// # Safety
/// As `wgc_op_conv2d`; `buf` must be valid for `buf_len` bytes and
/// `out_len` for one write.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wgc_op_conv2d_explain(
    stream: *const WgcStream,
    params: *const WgcConv2dParams,
    input: *const WgcTensor,
    weight: *const WgcTensor,
    bias: *const WgcTensor,
    out: *const WgcTensor,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let p = unsafe { read_sized(params, "params") }?;
        let input = unsafe { tensor(input, "input") }?;
        let weight = unsafe { tensor(weight, "weight") }?;
        let bias = if bias.is_null() { None } else { Some(unsafe { tensor(bias, "bias") }?) };
        let out = unsafe { tensor(out, "out") }?;
        let (plan, fuses_residual) = conv2d_plan(s, &Conv2dParams::from(&p), &input, &weight, bias.as_ref(), &out)?;
        let activation = if plan.route.applies_activation() {
            "in the route's epilogue"
        } else if plan.route.applies(Activation::Relu) {
            "in the route's store for relu, relu6 and hardswish, a pass of its own for the others"
        } else {
            "a pass of its own"
        };
        let residual = match fuses_residual {
            true => "in the route's epilogue, before the activation",
            false => "added in place by a pass of its own, then the activation by another",
        };
        let text = format!("{plan}; activation: {activation}; residual: {residual}");
        unsafe { write_text(&text, buf, buf_len, out_len) }
    })
}
