//! The routes a convolution can take, as values: which kernels run and
//! with what parameters, decided by `plan` before anything is recorded.

use std::fmt;

use crate::ops::conv::bn_act::Activation;

/// A route's answer for one problem: its parameters, or why it declines
/// (the planner then asks the next route).
pub type Fit<T> = std::result::Result<T, String>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// The output is empty: nothing is recorded.
    Empty,
    /// A 1x1 stride-1 unpadded convolution over flat pixels: one GEMM per
    /// image (`wgc_op_gemm`'s routes then apply).
    Gemm1x1,
    /// A 1x1 stride-1 unpadded convolution over channels-last packed
    /// pixels: one GEMM over all images (gemm1x1_nhwc.rs).
    Gemm1x1Nhwc(Nhwc1x1),
    /// One input channel per group (depthwise): conv_direct.wgsl.
    Direct(Direct),
    /// One input and one output channel per group, at the memory
    /// bandwidth, with the bias and activation in its store:
    /// conv_depthwise.wgsl.
    Depthwise(Depthwise),
    /// The WGSL implicit GEMM (conv.wgsl), f32.
    Implicit(Implicit),
    /// f16 on the VK_KHR_cooperative_matrix GEMM kernel gathering 8
    /// channels of a tap per load from a channels-last image (khr.rs).
    Khr(Khr),
    /// f16 implicit GEMM on WGSL cooperative matrices (coop.rs).
    Coop(Coop),
    /// f16 columns written to scratch and multiplied by the f16 GEMM.
    Im2col(Im2col),
    /// f32 3x3 stride 1 by Winograd F(2x2, 3x3): transforms in
    /// conv_winograd.wgsl around 16 products by the f32 GEMM (winograd.rs).
    Winograd(Winograd),
    /// f16 with few input channels (a vision net's first layer): padded to
    /// 8 channels for the KHR gather, or im2col columns and the GEMM, the
    /// bias and activation in its epilogue (im2col_stem.rs).
    Stem(Stem),
}

impl Route {
    /// Whether the route applies `act` where it stores the output (the
    /// tensor-core kernels and their split-K pass, the f32 implicit GEMM's
    /// split-K pass, the depthwise store for the ReLU family); else
    /// `wgc_op_conv2d_bn_act` runs one pass over it.
    pub fn applies(&self, act: Activation) -> bool {
        match self {
            // The depthwise store and the Winograd output transform know
            // the ReLU family (conv_depthwise.wgsl, conv_winograd.wgsl).
            Route::Depthwise(_) | Route::Winograd(_) => {
                matches!(act, Activation::None | Activation::Relu | Activation::Relu6 | Activation::Hardswish)
            }
            _ => act == Activation::None || self.applies_activation(),
        }
    }

    /// Whether the route adds the problem's residual before its activation
    /// where it stores the output (else the caller runs one pass of
    /// `act(out + residual)` after a convolution without activation).
    pub fn fuses_residual(&self) -> bool {
        match self {
            Route::Gemm1x1Nhwc(g) => g.fused && g.residual,
            Route::Khr(k) => k.residual,
            _ => false,
        }
    }

    /// Whether the route applies every activation in its store.
    pub fn applies_activation(&self) -> bool {
        match self {
            Route::Empty | Route::Khr(_) | Route::Coop(_) | Route::Stem(_) => true,
            // Where the GEMM's plan fuses an epilogue (its tensor-core
            // kernels, its split-K pass); not through the tiled kernel's
            // f32 scratch.
            Route::Gemm1x1Nhwc(g) => g.fused,
            // K split: the pass that sums the slabs applies it.
            Route::Implicit(i) => i.splits > 1,
            // 1x1 and im2col convolutions are GEMMs whose tiled route leaves
            // an epilogue to one pass over f32 scratch (with it compiled
            // into the tiled kernel, MobileNetV2 f32 ran 1.8x slower on an
            // H100; through scratch its wall time 4.9x at batch 256), so
            // they keep the convolution's own in-place pass.
            // The implicit GEMM's own store is unrolled 64 times: the
            // activations' code there spilled (H100: 3.8 ms against 0.30
            // for ReLU over a ResNet 3x3 layer), and so did the ReLU family
            // alone and a residual behind runtime flags (ResNet-50 f32 at
            // batch 32: 42.5 against 12.2 ms), so unsplit it keeps its
            // passes.
            _ => false,
        }
    }
}

/// How a channels-last 1x1 convolution is one GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nhwc1x1 {
    /// The GEMM's plan for out (pixels x O) = x W^T applies an epilogue in
    /// its kernel or split-K pass: the bias, activation and residual go
    /// there. Else the product runs as out^T = W x^T with the bias as a
    /// row bias, and the activation (and residual) are left to one pass.
    pub fused: bool,
    /// The residual is the GEMM epilogue's (its pixels fold into the
    /// GEMM's rows, over all images or per image).
    pub residual: bool,
    /// One GEMM per image (the residual's pixels do not fold across
    /// images); else one over all images.
    pub per_image: bool,
    /// The GEMM runs on the VK_KHR_cooperative_matrix kernel for every K
    /// (f16 and bf16 where it may run), not only K >= 512.
    pub khr_every_k: bool,
}

/// How the depthwise kernel covers a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direct {
    /// One invocation per output; `window` compiled in where not (0, 0).
    PerOutput { window: [usize; 2] },
    /// A workgroup per output (windows over DIRECT_MAX_TAPS taps).
    PerWorkgroup,
    /// A workgroup per output and chunk of taps, a second pass adding them.
    Chunked { chunks: usize },
}

/// How the bandwidth depthwise kernel covers the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depthwise {
    /// Channels-last in 16-byte words of channels: an invocation per word
    /// of one output pixel, `cvw` words per workgroup.
    Words { cvw: usize },
    /// Words of 4 channels (16 bytes of f32, 8 of f16), each invocation
    /// computing 4 outputs along a row (square 3x3 or 5x5 windows of
    /// stride 1 or 2, dilation 1), each input word loaded once for all of
    /// them.
    Rows { cvw: usize },
    /// Any strides, square 3x3 or 5x5 windows of stride 1 or 2: an
    /// invocation per 4 outputs along a row of one (image, channel) plane.
    Strips,
    /// A tw x th tile of output pixels in each of `planes` (image, channel)
    /// planes per workgroup, its input staged in workgroup memory.
    Tiles { tw: usize, th: usize, planes: usize },
}

/// The f32 implicit GEMM's blocking and K split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Implicit {
    /// Register blocks (1 or 2) of the 64x64 tile along M and N.
    pub rm: usize,
    pub rn: usize,
    /// K runs over workgroups (more than 1: each stores an f32 slab of
    /// partial sums, which the GEMM's split-K pass adds into the output
    /// with the bias and the activation).
    pub splits: usize,
    pub k_chunk: usize,
    /// The kernel size compiled in, or (0, 0).
    pub window: [usize; 2],
    /// Slabs one binding of scratch holds at once: `splits` where they all
    /// fit (one sum pass), fewer where they do not (a pass per that many
    /// runs, each adding into the output); 0 where K is not split.
    pub slabs: usize,
}

/// Which GEMM operand the image is for the KHR kernel (the GLSL's CONV),
/// and the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// CONV = 1: out[n] (O x pixels) = W * X[n]^T, the output channels
    /// along M (a channels-first output, stored along its rows).
    ImageB,
    /// CONV = 2: out[n] (pixels x O) = X[n] * W^T, the output channels
    /// along N (a channels-last output, stored along its rows).
    ImageA,
    /// ImageB with a 64-row block (64 invocations): at most 64 output
    /// channels, which would leave half of the 128-row block idle.
    ImageB64,
    /// ImageA with a 64-column block (64 invocations), likewise.
    ImageA64,
    /// ImageA with a 64 x 64 block of 4 subgroups of 32 x 32 (128
    /// invocations, a quarter of the accumulators each): more workgroups
    /// resident, for products too short in K to hide their loads otherwise.
    ImageASmall,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Khr {
    pub form: Form,
    /// K runs (more than 1: f32 slabs summed by the GEMM's second pass).
    pub splits: usize,
    pub k_chunk: usize,
    /// The image is not channels-last in 16-byte words: copied so first.
    pub copy_input: bool,
    /// The weight is not rows of (KH, KW, C): copied so first.
    pub copy_weight: bool,
    /// Every block whole: stores unguarded.
    pub whole: bool,
    /// One run stored straight into an aligned, bias-free output (no
    /// epilogue).
    pub direct_store: bool,
    /// The images folded into the GEMM's rows (image-as-A forms over a
    /// channels-last batch): one product instead of one per image.
    pub fold_images: bool,
    /// The problem's residual added in the epilogue, before the activation
    /// (one K run, the residual's pixels laid out as the output's).
    pub residual: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coop {
    /// K runs (more than 1: f32 slabs added by a second pass).
    pub splits: usize,
    pub k_chunk: usize,
    /// The weight read as 16-byte words.
    pub w_vec: bool,
    /// The kernel size compiled in, or (0, 0).
    pub window: [usize; 2],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Im2col {
    /// The weight packed into (O, kp) scratch first (its rows are not
    /// usable as they lie).
    pub pack_weight: bool,
    /// K padded to whole 8s.
    pub kp: usize,
    /// Images whose columns one pass writes.
    pub chunk: usize,
    /// One N = OH*OW product per image (else one per output row).
    pub flat: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Winograd {
    /// Images whose transformed tiles one pass holds in scratch.
    pub chunk: usize,
    /// The transformed matrices are (channels x tiles), tiles fastest (a
    /// channels-first input), else (tiles x channels).
    pub channels_first: bool,
}

/// The few-channel f16 route: the im2col chunking, and how the product
/// lies (im2col_stem.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stem {
    pub cols: Im2col,
    /// The pixels along M: one (pixels x O) product per chunk storing a
    /// channels-last output's rows (else (O x pixels) per image).
    pub rows: bool,
    /// Instead of columns: the image's and weight's channels padded to 8
    /// with zeros, then the KHR gather's plan for that problem.
    pub padded: Option<Khr>,
    /// The padded form in pixel pairs (stem_pad.rs).
    pub pairs: bool,
}

impl Route {
    /// The route's name, as `explain` gives it.
    pub fn name(&self) -> &'static str {
        match self {
            Route::Empty => "empty",
            Route::Gemm1x1 => "gemm_1x1",
            Route::Gemm1x1Nhwc(_) => "gemm_1x1_nhwc",
            Route::Direct(_) => "direct",
            Route::Depthwise(_) => "depthwise",
            Route::Implicit(_) => "implicit_gemm",
            Route::Khr(_) => "khr_gather",
            Route::Coop(_) => "coop_implicit",
            Route::Im2col(_) => "im2col_gemm",
            Route::Winograd(_) => "winograd",
            Route::Stem(_) => "im2col_stem",
        }
    }
}

fn window(w: [usize; 2]) -> String {
    if w == [0, 0] {
        "any window".into()
    } else {
        format!("{}x{} compiled in", w[0], w[1])
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())?;
        match self {
            Route::Empty | Route::Gemm1x1 => Ok(()),
            Route::Gemm1x1Nhwc(g) => write!(
                f,
                " ({}, {}{})",
                if g.per_image { "one GEMM per image" } else { "one GEMM over all images" },
                if g.fused {
                    "out = x W^T, its epilogue in the GEMM"
                } else {
                    "out^T = W x^T with a row bias, no GEMM epilogue"
                },
                if g.residual { ", the residual in it" } else { "" }
            ),
            Route::Direct(Direct::PerOutput { window: w }) => write!(f, " (an invocation per output, {})", window(*w)),
            Route::Direct(Direct::PerWorkgroup) => write!(f, " (a workgroup per output)"),
            Route::Direct(Direct::Chunked { chunks }) => {
                write!(f, " (a workgroup per output and chunk of taps, {chunks} chunks)")
            }
            Route::Depthwise(Depthwise::Words { cvw }) => write!(
                f,
                " (channels-last, an invocation per 16 bytes of channels of a pixel, {cvw} such words per workgroup)"
            ),
            Route::Depthwise(Depthwise::Rows { cvw }) => write!(
                f,
                " (channels-last, an invocation per 4 channels of 4 pixels along a row, {cvw} such words per workgroup)"
            ),
            Route::Depthwise(Depthwise::Strips) => {
                write!(f, " (an invocation per 4 outputs along a row of a plane, the window compiled in)")
            }
            Route::Depthwise(Depthwise::Tiles { tw, th, planes }) => write!(
                f,
                " ({th}x{tw} output tiles of {planes} plane(s) per workgroup, input staged in workgroup memory)"
            ),
            Route::Implicit(i) => {
                write!(f, " (RM {}, RN {}, K in {} run(s) of {}", i.rm, i.rn, i.splits, i.k_chunk)?;
                if i.splits > 1 {
                    f.write_str(" into f32 slabs")?;
                    if i.slabs < i.splits {
                        write!(f, ", {} at a time", i.slabs)?;
                    }
                    f.write_str(" summed with the bias and activation by a second pass")?;
                }
                write!(f, ", {})", window(i.window))
            }
            Route::Khr(k) => write!(
                f,
                " ({:?}, K in {} run(s) of {}, input {}, weight {}{}{}{})",
                k.form,
                k.splits,
                k.k_chunk,
                if k.copy_input { "copied channels-last" } else { "read in place" },
                if k.copy_weight { "copied as (O, KH, KW, C)" } else { "read in place" },
                if k.direct_store { ", stored directly" } else { "" },
                if k.fold_images { ", images folded into rows" } else { "" },
                if k.residual { ", residual in the epilogue" } else { "" }
            ),
            Route::Coop(c) => write!(
                f,
                " (K in {} run(s) of {}, weight {}, {})",
                c.splits,
                c.k_chunk,
                if c.w_vec { "in 16-byte words" } else { "by element" },
                window(c.window)
            ),
            Route::Im2col(i) => write!(
                f,
                " (K padded to {}, {} image(s) per pass, weight {}, {})",
                i.kp,
                i.chunk,
                if i.pack_weight { "packed" } else { "read in place" },
                if i.flat { "a GEMM per image" } else { "a GEMM per output row" }
            ),
            Route::Winograd(w) => {
                let order = if w.channels_first { "tiles" } else { "channels" };
                write!(f, " (F(2x2, 3x3), 16 GEMMs over the tiles of {} image(s) per pass, {order} fastest)", w.chunk)
            }
            Route::Stem(Stem { padded: Some(k), pairs, .. }) => write!(
                f,
                " ({} for the KHR gather: {:?}, K in {} run(s) of {})",
                if *pairs { "pixel pairs of 4 channels as 8" } else { "channels padded to 8" },
                k.form,
                k.splits,
                k.k_chunk
            ),
            Route::Stem(Stem { cols, rows, .. }) => write!(
                f,
                " (K padded to {}, {} image(s) per pass, {}, bias and activation in the GEMM's epilogue)",
                cols.kp,
                cols.chunk,
                if *rows { "pixels x channels rows into a channels-last output" } else { "a GEMM per image" }
            ),
        }
    }
}
