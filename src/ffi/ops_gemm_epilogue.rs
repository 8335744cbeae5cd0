//! A GEMM with a fused epilogue, as C sees it.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::sized::{read_sized, sized_struct};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use super::text_out::write_text;
use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::gemm::epilogue::EpilogueViews;
use crate::ops::gemm::with_epilogue::{explain_gemm_epilogue, gemm_epilogue, GemmEpilogue};
use crate::ops::profile_call;
use crate::ops::tensor::Tensor;
use std::ffi::c_char;

/// Where `wgc_op_gemm_epilogue` adds the residual (`WgcResidualPosition`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResidualPosition {
    /// `act(y + residual)` (a ResNet block's `relu(conv + bn + identity)`).
    BeforeActivation = 0,
    /// `act(y) + residual` (a transformer's residual stream).
    AfterActivation = 1,
}

/// Parameters of `wgc_op_gemm_epilogue`. Set
/// `struct_size = sizeof(WgcGemmEpilogueParams)`; fields past a smaller
/// `struct_size` keep their defaults (alpha 1, the rest 0).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcGemmEpilogueParams {
    pub struct_size: u32,
    /// Multiplies the product before the epilogue.
    pub alpha: f32,
    /// Non-zero: use a's (or b's) last two dims swapped, as `wgc_op_gemm`.
    pub transpose_a: u32,
    pub transpose_b: u32,
    /// A `WgcActivation` value.
    pub activation: u32,
    /// A `WgcResidualPosition` value (read only with a residual).
    pub residual_position: u32,
}

impl Default for WgcGemmEpilogueParams {
    fn default() -> Self {
        WgcGemmEpilogueParams {
            struct_size: 0,
            alpha: 1.0,
            transpose_a: 0,
            transpose_b: 0,
            activation: 0,
            residual_position: 0,
        }
    }
}

sized_struct!(WgcGemmEpilogueParams { alpha, transpose_a, transpose_b, activation, residual_position });

unsafe fn optional<'a>(t: *const WgcTensor, what: &str) -> Result<Option<Tensor<'a>>> {
    if t.is_null() {
        Ok(None)
    } else {
        unsafe { tensor(t, what) }.map(Some)
    }
}

/// The parameters and tensors of one call, read from C.
struct Call<'a> {
    p: WgcGemmEpilogueParams,
    activation: Activation,
    a: Tensor<'a>,
    b: Tensor<'a>,
    bias: Option<Tensor<'a>>,
    scale: Option<Tensor<'a>>,
    residual: Option<Tensor<'a>>,
    c: Tensor<'a>,
}

impl<'a> Call<'a> {
    #[allow(clippy::too_many_arguments)]
    unsafe fn read(
        params: *const WgcGemmEpilogueParams,
        a: *const WgcTensor,
        b: *const WgcTensor,
        bias: *const WgcTensor,
        scale: *const WgcTensor,
        residual: *const WgcTensor,
        c: *const WgcTensor,
    ) -> Result<Call<'a>> {
        let p = unsafe { read_sized(params, "params") }?;
        let activation = Activation::from_u32(p.activation)?;
        if p.residual_position > ResidualPosition::AfterActivation as u32 {
            bail!(InvalidArgument, "gemm_epilogue: unknown residual position {}", p.residual_position);
        }
        Ok(Call {
            p,
            activation,
            a: unsafe { tensor(a, "a") }?,
            b: unsafe { tensor(b, "b") }?,
            bias: unsafe { optional(bias, "bias") }?,
            scale: unsafe { optional(scale, "scale") }?,
            residual: unsafe { optional(residual, "residual") }?,
            c: unsafe { tensor(c, "c") }?,
        })
    }

    fn gemm(&self) -> GemmEpilogue<'_, 'a> {
        GemmEpilogue {
            alpha: self.p.alpha,
            a: &self.a,
            transpose_a: self.p.transpose_a != 0,
            b: &self.b,
            transpose_b: self.p.transpose_b != 0,
            epilogue: EpilogueViews {
                bias: self.bias.as_ref(),
                scale: self.scale.as_ref(),
                residual: self.residual.as_ref(),
                activation: self.activation,
                residual_after: self.p.residual_position == ResidualPosition::AfterActivation as u32,
            },
            c: &self.c,
        }
    }
}

/// A GEMM with its epilogue fused: for every batch matrix,
///
/// ```text
/// y = alpha * op(a) @ op(b)             (as wgc_op_gemm, beta 0)
/// y = y * scale[n]                      (scale NULL: 1)
/// y = y + bias[n]                       (bias NULL: 0)
/// y = y + residual    (residual_position BEFORE_ACTIVATION; residual NULL: 0)
/// y = activation(y)                     (a WgcActivation)
/// y = y + residual    (residual_position AFTER_ACTIVATION)
/// c = y rounded once to c's dtype
/// ```
///
/// PyTorch's `act(F.linear(x, w, b))` is `a` = x (M, K), `b` = w (N, K)
/// with `transpose_b`, `bias` = b. Shapes and dtypes of `a`, `b`, `c`,
/// broadcasting of batch dims, transposes and views as for `wgc_op_gemm`
/// (f32, f16 or bf16 operands; `c` f32 or the operands' dtype, but not
/// bf16); `bias` and `scale` are (N) views and `residual` a view of `c`'s
/// shape, in any strides (zero strides included), all of `c`'s dtype.
/// `c` must not overlap any operand.
///
/// The epilogue is computed in f32 on the product's f32 accumulator, and
/// the result is rounded once to `c`'s dtype, wherever the route applies
/// it: in the kernel that stores C (the tensor-core kernels), in
/// the split-K pass, or, for the other routes (the tiled kernel included),
/// one extra pass over the product held in f32 scratch
/// (`wgc_op_gemm_epilogue_explain` says which). Accuracy: the product's
/// (`wgc_op_gemm`), then the activation's as `wgc_op_unary` computes it
/// into f32 (exact for RELU and RELU6); NaN and inf propagate as there
/// (an inf product through GELU or SILU gives what PyTorch gives).
///
/// Records work on `stream` without blocking. Statuses:
/// `WGC_ERROR_NULL_POINTER` (NULL stream, params, a, b or c),
/// `WGC_ERROR_INVALID_ARGUMENT` (`struct_size` < 4 or ending inside a
/// field; an unknown activation or residual position; `c` overlapping an
/// operand), `WGC_ERROR_DTYPE_MISMATCH` (a and b differ, c neither f32 nor
/// their dtype, bias/scale/residual not c's dtype), `WGC_ERROR_UNSUPPORTED`
/// (integer operands, a bf16 c, bf16 on an adapter without it),
/// `WGC_ERROR_SHAPE_MISMATCH` (as `wgc_op_gemm`; bias or scale not (N),
/// residual not c's shape), `WGC_ERROR_TOO_LARGE`,
/// `WGC_ERROR_DEVICE_MISMATCH`. Nothing is recorded on failure.
///
/// # Safety
/// Pointers are NULL or valid for reads; tensors describe live buffers.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wgc_op_gemm_epilogue(
    stream: *const WgcStream,
    params: *const WgcGemmEpilogueParams,
    a: *const WgcTensor,
    b: *const WgcTensor,
    bias: *const WgcTensor,
    scale: *const WgcTensor,
    residual: *const WgcTensor,
    c: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let call = unsafe { Call::read(params, a, b, bias, scale, residual, c) }?;
        let k = profile_call::inner_dim(&call.a, call.p.transpose_a != 0);
        let _call =
            profile_op!(s, "gemm_epilogue", [&call.a, &call.b], [&call.c], profile_call::product_flops(&call.c, k));
        gemm_epilogue(s, &call.gemm())
    })
}

/// Describe, without recording anything, how `wgc_op_gemm_epilogue` with
/// the same arguments would run: one line, "route <kernel> ... because
/// <why>; epilogue <where> (m=.. n=.. k=.. batch=..)", where the epilogue
/// is "fused in the route's kernel", "fused in the split-K pass" or
/// "applied by one pass over the product in f32 scratch" (the route then
/// reads "into f32 scratch, then the epilogue pass"). The wording is for
/// people and logs and may change.
///
/// Writes the line, NUL-terminated, into `buf` if it fits in `buf_len`
/// bytes, and its length without the NUL into `*out_len` either way (`buf`
/// NULL with `buf_len` 0 asks for the length); a nonzero `buf_len` too
/// small gives `WGC_ERROR_TOO_LARGE` and leaves `buf` alone. Statuses:
/// those of `wgc_op_gemm_epilogue` for the same arguments, and
/// `WGC_ERROR_NULL_POINTER` for a NULL `out_len` (or NULL `buf` with a
/// nonzero `buf_len`). Does not block; any thread.
///
/// # Safety
/// As `wgc_op_gemm_epilogue`; `buf` valid for `buf_len` bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wgc_op_gemm_epilogue_explain(
    stream: *const WgcStream,
    params: *const WgcGemmEpilogueParams,
    a: *const WgcTensor,
    b: *const WgcTensor,
    bias: *const WgcTensor,
    scale: *const WgcTensor,
    residual: *const WgcTensor,
    c: *const WgcTensor,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let call = unsafe { Call::read(params, a, b, bias, scale, residual, c) }?;
        let line = explain_gemm_epilogue(s, &call.gemm())?;
        unsafe { write_text(&line, buf, buf_len, out_len) }
    })
}
