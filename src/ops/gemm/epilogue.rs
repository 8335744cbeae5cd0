//! A GEMM's fused epilogue: after `alpha * A B`, a per-column scale, a
//! per-column bias, a residual (C's shape, any strides) added before or
//! after an activation, and the cast to C's dtype, in that order:
//!
//! ```text
//! y = alpha * (A B);  y *= scale[n];  y += bias[n];  (y += residual)
//! y = act(y);  (y += residual);  c = OUT(y)
//! ```
//!
//! The value travels in the `Problem`, so every route decides from it: the
//! tensor-core kernels (the epilogue entries of gemm_coop_f16.wgsl, the
//! VK_KHR_cooperative_matrix kernels' epilogue variants through
//! gemm_khr_common.glsl) apply it where they store C, and the split-K pass
//! (gemm_split_sum.wgsl) where it sums the slabs; all read it from their
//! uniform (`EpilogueUniform`), the WGSL ones through
//! shaders/gemm_epilogue.wgsl. Routes whose kernels do not take it (the
//! tiled kernel's unsplit entries among them) store the product into f32
//! scratch and the split-K pass applies it over one slab: one extra pass
//! (`Fusion`).

use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::gemm::problem::Matrix;
use crate::ops::gemm::route::{CoopEngine, Route, TiledEntry};
use crate::ops::spec::{pack_i32, view_arg, Arg};
use crate::ops::tensor::{expect_shape, Tensor};

/// The residual: its matrix (C's rows and columns, its own strides) and
/// whether it is added after the activation (else before).
#[derive(Clone, Debug, PartialEq)]
pub struct Residual {
    pub matrix: Matrix,
    pub after: bool,
}

/// What is applied to `alpha * A B` before it is stored.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Epilogue {
    pub activation: Activation,
    /// The per-column bias's stride, where there is one.
    pub col_bias: Option<isize>,
    /// The per-column scale's stride, where there is one.
    pub scale: Option<isize>,
    pub residual: Option<Residual>,
}

/// The bits of `EpilogueUniform::flags` (and gemm_epilogue.wgsl's EPI_*).
const COL_BIAS: u32 = 1;
const SCALE: u32 = 2;
pub(crate) const RESIDUAL_BEFORE: u32 = 4;
const RESIDUAL_AFTER: u32 = 8;

impl Epilogue {
    /// Nothing to apply (the plain product).
    pub fn is_none(&self) -> bool {
        *self == Epilogue::default()
    }

    /// The flags the kernels read (COL_BIAS | SCALE | RESIDUAL_*).
    pub fn flags(&self) -> u32 {
        let residual = match &self.residual {
            Some(r) if r.after => RESIDUAL_AFTER,
            Some(_) => RESIDUAL_BEFORE,
            None => 0,
        };
        (if self.col_bias.is_some() { COL_BIAS } else { 0 }) | (if self.scale.is_some() { SCALE } else { 0 }) | residual
    }
}

/// The epilogue's tensors as the caller gave them: bias and scale (N),
/// residual (C's shape); each None where absent.
#[derive(Clone, Copy, Default)]
pub struct EpilogueViews<'x, 'a> {
    pub bias: Option<&'x Tensor<'a>>,
    pub scale: Option<&'x Tensor<'a>>,
    pub residual: Option<&'x Tensor<'a>>,
    pub activation: Activation,
    pub residual_after: bool,
}

impl<'x, 'a> EpilogueViews<'x, 'a> {
    /// The tensors present, named, for the output checks.
    pub fn inputs(&self) -> Vec<(&'static str, &'x Tensor<'a>)> {
        let named = [("the bias", self.bias), ("the scale", self.scale), ("the residual", self.residual)];
        named.into_iter().filter_map(|(n, t)| t.map(|t| (n, t))).collect()
    }

    /// The epilogue of a product whose C is `c` (..., M, N): shapes checked
    /// (bias and scale (N), the residual C's shape), dtypes are the caller's.
    pub fn decode(&self, c: &Tensor) -> Result<Epilogue> {
        let r = c.rank();
        let n = c.shape[r - 1];
        let vector = |t: Option<&Tensor>, what: &str| -> Result<Option<isize>> {
            let Some(t) = t else { return Ok(None) };
            expect_shape(t, &[n], what)?;
            Ok(Some(t.strides[0]))
        };
        let col_bias = vector(self.bias, "gemm_epilogue: bias")?;
        let scale = vector(self.scale, "gemm_epilogue: scale")?;
        let residual = match self.residual {
            Some(t) => {
                expect_shape(t, &c.shape, "gemm_epilogue: residual")?;
                let matrix = Matrix {
                    rows: c.shape[r - 2],
                    cols: n,
                    strides: [t.strides[r - 2], t.strides[r - 1]],
                    offset: t.bound_offset(),
                    batch_strides: t.strides[..r - 2].to_vec(),
                };
                Some(Residual { matrix, after: self.residual_after })
            }
            None => None,
        };
        Ok(Epilogue { activation: self.activation, col_bias, scale, residual })
    }
}

/// Where a route applies a problem's epilogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fusion {
    /// In the kernel that stores C.
    Kernel,
    /// In the split-K pass the route runs anyway.
    SumPass,
    /// The product goes to f32 scratch; one pass (gemm_split_sum over one
    /// slab) applies the epilogue into C.
    ExtraPass,
}

/// Where `route` applies an epilogue.
pub fn fusion(route: &Route) -> Fusion {
    match route {
        Route::Tiled(t) if t.entry == TiledEntry::Split => Fusion::SumPass,
        // The tiled kernel's stores are unrolled RM x RN x 4 times: with the
        // epilogue compiled in, a MobileNetV2 1x1 convolution + ReLU6 (f32)
        // ran 4-6x slower on an H100 than the bare kernel and its pass.
        Route::Tiled(_) => Fusion::ExtraPass,
        Route::Coop(c) if c.via_slab => Fusion::SumPass,
        // The stores of gemm_coop_f16.wgsl's epilogue entries and of the
        // VK_KHR_cooperative_matrix kernels' epilogue variants.
        Route::Coop(c) => match c.engine {
            CoopEngine::Wgsl { direct: false, .. } | CoopEngine::SkinnyKhr(_) => Fusion::Kernel,
            CoopEngine::Khr(v) if !v.direct => Fusion::Kernel,
            CoopEngine::Wide(v) if !v.direct => Fusion::Kernel,
            _ => Fusion::ExtraPass,
        },
        _ => Fusion::ExtraPass,
    }
}

/// The explain text of `fusion`.
pub fn describe(f: Fusion) -> &'static str {
    match f {
        Fusion::Kernel => "epilogue fused in the route's kernel",
        Fusion::SumPass => "epilogue fused in the split-K pass",
        Fusion::ExtraPass => "epilogue applied by one pass over the product in f32 scratch",
    }
}

/// The epilogue's part of a kernel's uniform (the fields gemm_epilogue.wgsl
/// reads from `p`).
#[derive(Clone, Copy, Default)]
pub struct EpilogueUniform {
    pub act: u32,
    pub flags: u32,
    pub scale_off: u32,
    pub scale_stride: i32,
    pub res_off: u32,
    pub res_sm: i32,
    pub res_sn: i32,
    pub res_bstride: [[i32; 4]; 2],
}

/// The bindings `scale` and `residual` (each `unread` where absent: any
/// buffer the kernel does not write) and the uniform values of `e` over
/// the views `v`.
pub fn bind<'a>(
    e: &Epilogue,
    v: Option<&EpilogueViews<'_, 'a>>,
    unread: Arg<'a>,
) -> (Arg<'a>, Arg<'a>, EpilogueUniform) {
    let mut u = EpilogueUniform { act: e.activation as u32, flags: e.flags(), ..Default::default() };
    let mut scale = Arg { name: "scale", ..unread };
    let mut residual = Arg { name: "residual", ..unread };
    if let (Some(stride), Some(t)) = (e.scale, v.and_then(|v| v.scale)) {
        let (arg, off) = view_arg("scale", t);
        (scale, u.scale_off, u.scale_stride) = (arg, off, stride as i32);
    }
    if let (Some(r), Some(t)) = (&e.residual, v.and_then(|v| v.residual)) {
        let (arg, off) = view_arg("residual", t);
        residual = arg;
        u.res_off = off;
        u.res_sm = r.matrix.strides[0] as i32;
        u.res_sn = r.matrix.strides[1] as i32;
        u.res_bstride = pack_i32(&r.matrix.batch_strides);
    }
    (scale, residual, u)
}
