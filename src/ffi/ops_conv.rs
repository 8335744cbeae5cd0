//! Convolution and pooling.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::sized::{read_sized, sized_struct};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::ops::conv::{conv2d, Conv2dParams};
use crate::ops::pool::{global_avg_pool2d, pool2d, Pool2dParams, PoolKind};
use crate::ops::profile_call;

/// Parameters of `wgc_op_conv2d`. Set `struct_size = sizeof(WgcConv2dParams)`.
/// Zero strides, dilations and groups mean 1, so a zeroed struct (with its
/// size set) is a plain stride-1 unpadded convolution.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WgcConv2dParams {
    pub struct_size: u32,
    pub stride_h: u32,
    pub stride_w: u32,
    /// Zero padding added on both sides.
    pub pad_h: u32,
    pub pad_w: u32,
    pub dilation_h: u32,
    pub dilation_w: u32,
    /// Input and output channels are split into this many groups; `groups`
    /// equal to the input channels is a depthwise convolution.
    pub groups: u32,
}

sized_struct!(WgcConv2dParams { stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups });

/// Parameters of `wgc_op_max_pool2d` and `wgc_op_avg_pool2d`. Set
/// `struct_size = sizeof(WgcPool2dParams)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WgcPool2dParams {
    pub struct_size: u32,
    /// Window size; both must be positive.
    pub kernel_h: u32,
    pub kernel_w: u32,
    /// 0 means the window size (PyTorch's default).
    pub stride_h: u32,
    pub stride_w: u32,
    /// Padding on both sides, at most half the window. It acts as -inf for
    /// max pooling and as zeros for average pooling.
    pub pad_h: u32,
    pub pad_w: u32,
    /// Non-zero: averages divide by the full window, padding included;
    /// zero: by the number of input elements in the window.
    pub count_include_pad: u32,
}

sized_struct!(WgcPool2dParams { kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, count_include_pad });

/// 2-D cross-correlation (PyTorch's `conv2d`): `input` (N, C, H, W),
/// `weight` (O, C/groups, KH, KW), `bias` (O) or NULL, `out` (N, O, OH, OW)
/// with `OH = (H + 2*pad_h - dilation_h*(KH-1) - 1) / stride_h + 1` (OW
/// alike). All four f32, or all four f16 (adapters with f16 shaders); any
/// strides. Accuracy: f32 within about 1e-5 * (1 + sqrt(C/groups*KH*KW)) of
/// the exact result for unit-scale data; f16 products are exact and summed
/// in f32 to the same bound, and the f16 output is rounded once from that
/// sum (tested: within 1e-5 * (1 + sqrt(K)) + 2^-10 * |exact|). NaN and
/// infinities propagate as in PyTorch: IEEE products and f32 sums, a NaN
/// in an output's window makes it NaN (whether the padding's zeros times an
/// infinite weight give NaN is unspecified).
///
/// Depthwise convolutions of multiplier 1 (groups == C == O), f32 and
/// f16, run a kernel bound by memory bandwidth: where input and output are
/// channels-last with the channels in whole 16-byte words (C a multiple of
/// 4 in f32, 8 in f16; the other strides and the offsets multiples of that
/// too) each invocation computes 16 bytes of channels of one output pixel
/// (3x3 and 5x5 windows of stride 1 or 2: 4 channels, 16 bytes of f32 or 8
/// of f16, of 4 pixels along a row; C a multiple of 4 suffices there);
/// otherwise such windows take an invocation per 4 outputs along a row of
/// one channel, and other windows a workgroup per tile of output pixels,
/// its input staged in workgroup memory (windows whose tile does not fit,
/// and other depthwise convolutions, take the direct kernel below). `wgc_op_conv2d_bn_act`
/// applies its activation in that kernel's store.
///
/// f32: 1x1 stride-1 unpadded convolutions run as a GEMM (see
/// `wgc_op_gemm`), other depthwise ones (one input channel per group) a
/// direct kernel, others an implicit GEMM. Depthwise kernels of over 4096 taps take a
/// workgroup per output (beyond 262,144 taps, several, added by a second
/// pass), their products summed in blocks of 32. The implicit GEMM
/// accumulates at most 16,384 terms of C/groups*KH*KW per workgroup; longer
/// sums, and long ones on a small output (`WGC_CONV_SPLIT_FILL`), are split
/// into runs whose f32 sums (scratch of the output's size per run, as many
/// runs at once as the adapter's binding size holds) a second pass adds in
/// order with the bias, so results are deterministic. Any size works, on
/// software drivers that cap shader loops too.
///
/// Winograd F(2x2, 3x3): f32 3x3 stride-1 undilated ungrouped
/// convolutions (any padding, sizes and strides, bias or none) with at
/// least 32 input and 32 output channels and 1024 output pixels over all
/// images run it by default (`WGC_CONV_WINOGRAD=1` takes every such
/// convolution, `0` none). On an H100 whole ResNet-50 f32 forwards ran
/// 1.15-1.19x faster with it than on the implicit GEMM. The weight
/// transformed into 16 (C, O) matrices
/// (scratch of 16/9 of the weight, per call), each chunk of images' 4x4
/// input patches (stride 2) into 16 (tiles, C) matrices, 16 products by
/// the f32 GEMM (`wgc_op_gemm`'s routes), and the 2x2 output tiles
/// transformed back with the bias (at most 128 MiB of scratch for the
/// transformed input and the products, one image at least). Accuracy: the
/// transforms only add, subtract and halve, so F(2x2, 3x3) keeps the
/// implicit GEMM's bound above (tested on unit-scale data against double
/// references, its largest errors within 4 times the implicit GEMM's plus
/// 1e-6). Intermediate sums run up to about 81 times the direct sum's
/// terms (4 from the input transform, 9/4 from the weight's, 9 from the
/// output's), so where 9C * max|input| * max|weight| comes within that
/// factor of the f32 maximum an output may overflow to an infinity or NaN
/// that the direct sum would not give. NaN: exactly the outputs whose window covers a NaN input are
/// NaN, as above; an infinite input makes the same outputs, and no others,
/// infinite or NaN (the transforms may subtract it from itself where the
/// direct sum gives +-Inf).
///
/// f16: 1x1 convolutions as for f32 through the f16 GEMM, depthwise ones
/// as above (f32 sums). Where the adapter runs the SPIR-V tensor-core
/// kernels (below), 1x1 stride-1 unpadded ungrouped convolutions with at
/// least 128 input and 128 output channels whose input and output are channels-last
/// with packed pixels run as one GEMM over all images on the
/// VK_KHR_cooperative_matrix kernel, the bias and activation in its
/// epilogue (`WGC_CONV_1X1_NHWC`). Ungrouped ones with fewer than 8 input
/// channels and C*KH*KW up to 512 (a vision net's first layer), where the
/// adapter runs the SPIR-V tensor-core kernels, have the image and weight
/// copied with their channels padded to 8 (zeros; scratch of at most
/// 128 MiB of images at a time (`WGC_CONV_COLS_BYTES`), one image at
/// least, and O*KH*KW*8 elements) for the channel gather; with at most 4
/// channels and a stride of 2 along rows, two adjacent pixels of 4
/// channels make one padded pixel and the window moves one pair at a time
/// (K = 8*KH*ceil(KW/2), half the scratch; `WGC_CONV_STEM=pad8` keeps 8
/// channels per pixel). Windows of under 16 taps into a channels-first
/// output are not padded; those, and on adapters without
/// cooperative matrices all of them, write the columns of a chunk of
/// images (pixels x C*KH*KW padded to whole 8s; at most 128 MiB of f16
/// scratch, one image at least) and multiply them by the f16 GEMM
/// (`wgc_op_gemm`'s routes), a channels-last output as (pixels x O) rows,
/// the bias in the GEMM's epilogue; elsewhere the implicit GEMM below
/// takes them. The others, on adapters with
/// cooperative matrices (`WgcAdapterInfo.has_cooperative_matrix`), run on
/// the tensor cores. Ungrouped ones with a multiple of 8 input channels,
/// where the adapter runs the SPIR-V tensor-core kernels (Vulkan with
/// SPIR-V passthrough and VK_KHR_cooperative_matrix), gather 8 channels of
/// one tap per 16-byte load from a channels-last image: the input is read
/// in place where it is channels-last (channels at unit stride, the other
/// strides and the offset multiples of 8 elements), else copied so into
/// scratch of its size; likewise the weight as (O, KH, KW, C/groups); a
/// channels-last output is computed in blocks of 64 pixels x 64 output
/// channels (`WGC_CONV_KHR_SMALL`), one product over all images where its
/// images are one run of rows. The
/// others run an implicit GEMM that gathers the input's columns into
/// workgroup memory (no scratch). Either way a K past 16,384, or a long K
/// on few output tiles, is split into runs whose f32 sums (scratch of the
/// output's size per run) a second pass adds in order. Elsewhere, and
/// where those kernels' grid or scratch would exceed the adapter's limits,
/// the columns of a chunk of images (at most 128 MiB of f16 scratch, one
/// image at least) are written out (im2col) and multiplied by the f16 GEMM
/// (see `wgc_op_gemm`: tensor cores or its tiled kernel). Results are
/// deterministic. docs/TUNING.md lists the environment variables that fix
/// one of these paths or lower the 128 MiB, for comparisons and tests.
/// `wgc_op_conv2d_explain` names the route a call would take, and why.
///
/// Records work on `stream` without blocking. Statuses:
/// `WGC_ERROR_NULL_POINTER` (NULL stream, params, input, weight or out),
/// `WGC_ERROR_INVALID_ARGUMENT` (`struct_size` < 4 or ending inside a field; `out` overlaps or shares
/// a buffer with an operand), `WGC_ERROR_DTYPE_MISMATCH` (operands of
/// different dtypes), `WGC_ERROR_UNSUPPORTED` (not f32 or f16, or f16 on an
/// adapter without f16 shaders),
/// `WGC_ERROR_SHAPE_MISMATCH` (ranks, channels not divisible by groups,
/// weight/bias/out of the wrong shape, input smaller than the dilated
/// kernel), `WGC_ERROR_OUT_OF_RANGE` (a view outside its buffer),
/// `WGC_ERROR_TOO_LARGE` (too many workgroups, or channels, a padded input,
/// stride, dilated kernel or C/groups*KH*KW past 2^31-1 through zero
/// strides; partial sums of a depthwise kernel over 262,144 taps, or one
/// image's f16 columns or the packed f16 weight, beyond the adapter's
/// storage binding size), `WGC_ERROR_DEVICE_MISMATCH`. Nothing is
/// recorded on failure.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_conv2d(
    stream: *const WgcStream,
    params: *const WgcConv2dParams,
    input: *const WgcTensor,
    weight: *const WgcTensor,
    bias: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let p = unsafe { read_sized(params, "params") }?;
        let input = unsafe { tensor(input, "input") }?;
        let weight = unsafe { tensor(weight, "weight") }?;
        let bias = if bias.is_null() { None } else { Some(unsafe { tensor(bias, "bias") }?) };
        let out = unsafe { tensor(out, "out") }?;
        let cp = Conv2dParams {
            stride: [p.stride_h, p.stride_w],
            pad: [p.pad_h, p.pad_w],
            dilation: [p.dilation_h, p.dilation_w],
            groups: p.groups,
        };
        let _call = profile_op!(
            s,
            "conv2d",
            [&input, &weight],
            [&out],
            profile_call::product_flops(&out, weight.shape.iter().skip(1).product())
        );
        conv2d(s, &cp, &input, &weight, bias.as_ref(), &out)
    })
}

unsafe fn pool(
    stream: *const WgcStream,
    params: *const WgcPool2dParams,
    input: *const WgcTensor,
    out: *const WgcTensor,
    kind: PoolKind,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let p = unsafe { read_sized(params, "params") }?;
        let input = unsafe { tensor(input, "input") }?;
        let out = unsafe { tensor(out, "out") }?;
        let pp = Pool2dParams {
            kernel: [p.kernel_h, p.kernel_w],
            stride: [p.stride_h, p.stride_w],
            pad: [p.pad_h, p.pad_w],
            count_include_pad: p.count_include_pad != 0,
        };
        let _call = profile_op!(
            s,
            if matches!(kind, PoolKind::Max) { "max_pool2d" } else { "avg_pool2d" },
            [&input],
            [&out],
            0
        );
        pool2d(s, kind, &pp, &input, &out)
    })
}

/// 2-D max pooling: `input` (N, C, H, W) to `out` (N, C, OH, OW), both f32
/// or both f16, with `OH = (H + 2*pad_h - kernel_h) / stride_h + 1` (floor;
/// OW alike). NaN in a window gives NaN. Exact. Where `input` and `out`
/// are both channels-last (the C stride 1), neighbouring invocations take
/// neighbouring channels, four at a time (16- or 8-byte loads) where C, the
/// other strides and both views' offsets are multiples of 4 (windows up to
/// 4096 elements; the same for average pooling). Windows of over 4096
/// elements take a workgroup per output (beyond 262,144 elements, several,
/// folded by a second pass), so any window works, on software drivers that
/// cap shader loops too. Records work on `stream` without blocking.
/// Statuses: `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_INVALID_ARGUMENT` (zero
/// window, padding over half the window, `struct_size` < 4 or ending inside a field, `out` sharing a
/// buffer with `input`, or elements of `out` sharing memory: a zero stride or strides that
/// interleave), `WGC_ERROR_DTYPE_MISMATCH`, `WGC_ERROR_UNSUPPORTED`
/// (not f32 or f16, or f16 without adapter support), `WGC_ERROR_SHAPE_MISMATCH` (rank not 4, `out` of the wrong
/// shape, input smaller than the window), `WGC_ERROR_OUT_OF_RANGE`,
/// `WGC_ERROR_TOO_LARGE` (a padded input, stride or window past 2^31-1
/// through zero strides; windows over 262,144 elements whose partial results
/// exceed the adapter's storage binding size), `WGC_ERROR_DEVICE_MISMATCH`.
/// Nothing is recorded on failure.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_max_pool2d(
    stream: *const WgcStream,
    params: *const WgcPool2dParams,
    input: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    unsafe { pool(stream, params, input, out, PoolKind::Max) }
}

/// 2-D average pooling; shapes, blocking and statuses as for
/// `wgc_op_max_pool2d`, divisor as `count_include_pad` says. Sums run in
/// f32, a window row at a time (windows over 4096 elements: blocks of 32,
/// then a tree), so a sum beyond the f32 range gives +-inf. Accuracy (f32):
/// within 1e-6 * mean(|x|) over the window of the exact mean; f16: the f16
/// rounding of the output.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_avg_pool2d(
    stream: *const WgcStream,
    params: *const WgcPool2dParams,
    input: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    unsafe { pool(stream, params, input, out, PoolKind::Avg) }
}

/// Mean over H and W: `input` (N, C, H, W) to `out` (N, C, 1, 1), f32 or
/// f16 (summed in f32). Contiguous planes (the W stride 1 and the H stride
/// W) take the run kernel of `wgc_op_reduce` (a team of invocations per
/// plane, compensated sums); channels-last planes (the C stride 1) of at
/// most 1024 elements an invocation per (n, c), in blocks of 8; other
/// layouts one workgroup per plane, in blocks of 32 then a tree. Planes of over 65,536 elements in those
/// layouts are averaged as `wgc_op_avg_pool2d` with the whole plane as
/// the window, so any size works, on software drivers that cap shader
/// loops too. Accuracy (f32): within 1e-6 * mean(|x|) of the exact mean; f16: the
/// f16 rounding of the output.
/// Records work on `stream` without blocking. Statuses:
/// `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_DTYPE_MISMATCH`,
/// `WGC_ERROR_UNSUPPORTED` (not f32 or f16, or f16 without adapter support), `WGC_ERROR_SHAPE_MISMATCH` (rank not
/// 4, `out` not (N, C, 1, 1), H or W zero with N*C > 0),
/// `WGC_ERROR_INVALID_ARGUMENT` (`out` sharing a buffer with `input`, or
/// elements of `out` sharing memory),
/// `WGC_ERROR_OUT_OF_RANGE`, `WGC_ERROR_TOO_LARGE` (H*W past 2^31-1 through
/// zero strides), `WGC_ERROR_DEVICE_MISMATCH`.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_global_avg_pool2d(
    stream: *const WgcStream,
    input: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let input = unsafe { tensor(input, "input") }?;
        let out = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, "global_avg_pool2d", [&input], [&out], 0);
        global_avg_pool2d(s, &input, &out)
    })
}
