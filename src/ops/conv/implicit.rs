//! The WGSL implicit GEMM (shaders/conv.wgsl with the micro-kernel of
//! shaders/gemm_tile.wgsl, which matmul.wgsl shares): output pixels x
//! output channels in 64x64 tiles (register blocks of 2 where there are
//! many), K split into runs over workgroups where the tiles are too few or
//! K too long: each run stores its partial sums into an f32 slab of
//! scratch with plain stores, and the GEMM's split-K pass
//! (gemm_split_sum.wgsl) adds the slabs with the bias and the activation
//! into the output, in the output's own strides.

use super::direct::{BIAS, SPECIALIZED_SIZES};
use super::problem::{compiled_window, ivec4, Operands, Problem};
use super::route::Implicit;
use super::target::Target;
use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::gemm::epilogue::Epilogue;
use crate::ops::gemm::sum_slabs_epilogue;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot};
use crate::ops::split::{runs_to_fill, K_CHUNK};
use crate::runtime::stream::StreamShared;

/// The implicit GEMM.
pub static FAMILY: Family = Family {
    file: "conv.wgsl",
    source: concat!(include_str!("../../../shaders/conv.wgsl"), include_str!("../../../shaders/gemm_tile.wgsl")),
    entries: &["conv_gemm"],
    types: &[],
    overrides: &[
        OverrideSlot { name: "RM", values: &[1.0, 2.0] },
        OverrideSlot { name: "RN", values: &[1.0, 2.0] },
        OverrideSlot { name: "KH", values: SPECIALIZED_SIZES },
        OverrideSlot { name: "KW", values: SPECIALIZED_SIZES },
        BIAS,
        OverrideSlot { name: "SPLIT", values: &[0.0, 1.0] },
    ],
    uniform: <ConvParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv.wgsl.
    pub struct ConvParams = "Params" {
        pub m: u32,
        pub o_per_group: u32,
        pub k: u32,
        pub c_per_group: u32,
        pub h: i32,
        pub w: i32,
        pub oh: u32,
        pub ow: u32,
        pub stride_h: i32,
        pub stride_w: i32,
        pub pad_h: i32,
        pub pad_w: i32,
        pub dil_h: i32,
        pub dil_w: i32,
        pub in_off: u32,
        pub w_off: u32,
        pub out_off: u32,
        pub bias_off: u32,
        pub bias_stride: i32,
        pub splits: u32,
        pub in_s: [i32; 4],
        pub w_s: [i32; 4],
        pub out_s: [i32; 4],
        pub k_chunk: u32,
        pub kw: u32,
        pub taps: u32,
        pub split_base: u32,
        pub slab_len: u32,
        pub channels: u32,
        pub _pad0: [u32; 2],
    }
}

/// The shortest K run a split for filling makes: each run stores and the
/// sum pass reads an f32 slab the size of the output.
const MIN_RUN: usize = 512;

/// K runs that make about `fill` workgroups of `tiles` 64x64 output tiles:
/// 1 where the tiles are a sixth of that or more, or K is under two runs
/// of MIN_RUN. Measured on an H100 (fill 16 per SM, `Target::split_fill`),
/// ResNet-50 f32 at batch 32: its last stage's 200 tiles (K 4608) took
/// 466 us a 3x3 layer unsplit, 357 in 6 runs, 340 in 9 (this rule), its
/// 1x1 2048 -> 512 (K 2048) 202 us unsplit, 170 in 4; the 392 tiles of
/// the stage before ran slower split (3x3 333 -> 340 us, 1x1 146 -> 170),
/// so they stay whole. At batch 1 (8 to 26 tiles) K splits into as many
/// runs of 512 as it has.
fn fill_runs(tiles: usize, k: usize, fill: usize) -> usize {
    if tiles * 6 >= fill {
        return 1;
    }
    runs_to_fill(tiles, k, fill, MIN_RUN)
}

/// Every problem the other routes leave (the f32 ones): its blocking and K
/// split; an error where the grid exceeds the adapter's limits, or K must
/// be split and not one f32 slab of the output fits a binding.
pub fn supports(p: &Problem, t: &Target) -> Result<Implicit> {
    let g = &p.geo;
    let m = g.n * g.oh * g.ow;
    let k = g.k();
    let tiles64 = m.div_ceil(64) * g.og.div_ceil(64) * g.groups;
    // K is always split into runs of at most K_CHUNK (see split.rs).
    let min_splits = k.div_ceil(K_CHUNK);
    let big = tiles64 >= 1024 && min_splits == 1;
    let rm = if big && m > 64 { 2 } else { 1 };
    let rn = if big && g.og > 64 { 2 } else { 1 };
    // gemm_tile.wgsl's BK for these blocks.
    let bk = if rm * rn == 4 { 8 } else { 16 };
    // Slabs of the output's size that one binding (and the scratch budget,
    // one slab at least) holds: a split for filling takes at most that many
    // runs; runs K must have beyond them go in several passes of that many.
    let slab = g.outputs() as u64 * 4;
    let fit = (t.max_binding / slab).min((t.split_scratch / slab).max(1)).min(u32::MAX as u64) as usize;
    let splits = fill_runs(tiles64, k, t.split_fill).min(fit).max(min_splits).max(1);
    if splits > 1 && fit == 0 {
        bail!(TooLarge, "conv2d: K must be split and one f32 slab of the output exceeds the adapter's binding size");
    }
    // At least one step: K is 0 where the input has no channels (the bias alone).
    let k_chunk = (k.div_ceil(splits).div_ceil(bk) * bk).max(bk);
    let splits = k.div_ceil(k_chunk).max(1);
    let slabs = if splits > 1 { splits.min(fit) } else { 0 };
    let groups_xy = [g.og.div_ceil(64 * rn), m.div_ceil(64 * rm)];
    if groups_xy.iter().any(|&d| d > t.max_workgroups) || g.groups * slabs.max(1) > t.max_workgroups {
        bail!(TooLarge, "conv2d: the output needs more workgroups than this adapter allows per dimension");
    }
    let window = compiled_window(g.kh, g.kw, SPECIALIZED_SIZES);
    Ok(Implicit { rm, rn, splits, k_chunk, window, slabs })
}

/// Record the plan `supports` made: one launch into the output, or passes
/// of K runs into slabs, each summed into the output (the bias with the
/// first, the activation with the last, the output added in between).
pub fn record(stream: &StreamShared, p: &Problem, plan: Implicit, ops: &Operands) -> Result<()> {
    let g = &p.geo;
    let (x_arg, in_off) = view_arg("x", ops.input);
    let (w_arg, w_off) = view_arg("wt", ops.weight);
    // Without a bias the kernel's bias binding still needs a buffer: the weight's.
    let (bias_arg, bias_off) = match ops.bias {
        Some(b) => view_arg("bias", b),
        None => (Arg { name: "bias", ..w_arg }, 0),
    };
    let bias_stride = p.bias.unwrap_or(0) as i32;
    let has_bias = if p.bias.is_some() { 1.0 } else { 0.0 };
    let Implicit { rm, rn, splits, k_chunk, window, slabs } = plan;
    let m = g.n * g.oh * g.ow;
    let outputs = g.outputs();
    let params = |out_off: u32, out_s: [isize; 4], split_base: usize, runs: usize| ConvParams {
        m: m as u32,
        o_per_group: g.og as u32,
        k: g.k() as u32,
        c_per_group: g.cg as u32,
        h: g.h as i32,
        w: g.w as i32,
        oh: g.oh as u32,
        ow: g.ow as u32,
        stride_h: g.sh as i32,
        stride_w: g.sw as i32,
        pad_h: g.ph as i32,
        pad_w: g.pw as i32,
        dil_h: g.dh as i32,
        dil_w: g.dw as i32,
        in_off,
        w_off,
        out_off,
        bias_off,
        bias_stride,
        splits: runs as u32,
        in_s: ivec4(&p.input.strides),
        w_s: ivec4(&p.weight.strides),
        out_s: ivec4(&out_s),
        k_chunk: k_chunk as u32,
        kw: g.kw as u32,
        taps: (g.kh * g.kw) as u32,
        split_base: split_base as u32,
        slab_len: if splits > 1 { outputs as u32 } else { 0 },
        channels: g.o as u32,
        _pad0: [0; 2],
    };
    // Runs store raw sums into slabs (the bias comes with the sum pass).
    let launch = |y: Arg, params: ConvParams, runs: usize| {
        let split = splits > 1;
        let overrides = [
            rm as f64,
            rn as f64,
            window[0] as f64,
            window[1] as f64,
            if split { 0.0 } else { has_bias },
            split as u32 as f64,
        ];
        let variant = FAMILY.variant("conv_gemm", &[], &overrides);
        let grid = [g.og.div_ceil(64 * rn) as u32, m.div_ceil(64 * rm) as u32, (g.groups * runs) as u32];
        spec::record(stream, &Launch { variant, params, args: [x_arg, w_arg, bias_arg, y], groups: grid })
    };
    if splits == 1 {
        let (y_arg, out_off) = view_arg("y", ops.out);
        return launch(y_arg, params(out_off, p.out.strides, 0, 1), 1);
    }
    // Each K run writes its whole slab: reusable in stream order.
    let parts = stream.ordered_scratch((slabs * outputs * 4) as u64)?;
    // A slab is (N, OH, OW, O) row-major: the output seen in that order is
    // the sum pass's C (batch dims N and OH, M = OW, N = O), in its own
    // strides, the bias per column.
    let out_as_c = ops.out.permuted(&[0, 2, 3, 1]);
    let unread = (Arg { name: "bias", ..w_arg }, None);
    for base in (0..splits).step_by(slabs) {
        let runs = slabs.min(splits - base);
        launch(Arg::whole("y", &parts), params(0, [0; 4], base, runs), runs)?;
        let (first, last) = (base == 0, base + runs == splits);
        let epilogue = Epilogue {
            activation: if last { p.activation } else { Activation::None },
            col_bias: p.bias.filter(|_| first),
            ..Epilogue::default()
        };
        let bias = ops.bias.filter(|_| first).map(|_| (bias_arg, bias_off, bias_stride));
        let beta = if first { 0.0 } else { 1.0 };
        sum_slabs_epilogue(stream, &parts, runs, (1.0, beta), &out_as_c, unread, bias, &epilogue)?;
    }
    Ok(())
}
