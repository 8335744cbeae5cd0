// Fragment: the fused epilogue of the GEMM kernels (gemm_split_sum.wgsl and
// gemm_coop_f16.wgsl, each joined with elementwise_scalar.wgsl,
// epilogue_activation.wgsl and this file), so that both apply it alike
// (src/ops/gemm/epilogue.rs):
//
//   y = alpha * (A B);  y *= scale[n];  y += bias[n];  (y += residual)
//   y = act(y);  (y += residual);  c = OUT(y)
//
// It reads the including kernel's uniform `p` (epi_act, epi_flags,
// scale_off, scale_stride, res_off, res_sm, res_sn, res_bstride,
// batch_rank, batch_shape, bias_off, bias_stride, nan, inf) and its
// bindings `bias`, `scale` and `residual` (OUT). The switches are uniform
// values, not overrides: one compiled kernel serves every epilogue, and
// the branches cost nothing next to the product's K loop.

const EPI_COL_BIAS: u32 = 1u;
const EPI_SCALE: u32 = 2u;
const EPI_RES_BEFORE: u32 = 4u;
const EPI_RES_AFTER: u32 = 8u;

// The residual's element offset of batch matrix `batch`.
fn epi_res_base(batch: u32) -> i32 {
    var base = i32(p.res_off);
    var rest = batch;
    for (var d = i32(p.batch_rank) - 1; d >= 0; d--) {
        let dim = p.batch_shape[d / 4][d % 4];
        base += i32(rest % dim) * p.res_bstride[d / 4][d % 4];
        rest = rest / dim;
    }
    return base;
}

// The column part: y * scale[gn] + bias[gn].
fn epi_columns(y: f32, gn: u32) -> f32 {
    var v = y;
    if ((p.epi_flags & EPI_SCALE) != 0u) {
        v *= f32(scale[i32(p.scale_off) + i32(gn) * p.scale_stride]);
    }
    if ((p.epi_flags & EPI_COL_BIAS) != 0u) {
        v += f32(bias[i32(p.bias_off) + i32(gn) * p.bias_stride]);
    }
    return v;
}

// The rest: the residual (of the batch matrix at `res_base`) before or
// after the activation.
fn epi_finish(y: f32, gm: u32, gn: u32, res_base: i32) -> f32 {
    var v = y;
    var r = 0.0;
    if ((p.epi_flags & (EPI_RES_BEFORE | EPI_RES_AFTER)) != 0u) {
        r = f32(residual[res_base + i32(gm) * p.res_sm + i32(gn) * p.res_sn]);
    }
    if ((p.epi_flags & EPI_RES_BEFORE) != 0u) {
        v += r;
    }
    v = epi_activate(v);
    if ((p.epi_flags & EPI_RES_AFTER) != 0u) {
        v += r;
    }
    return v;
}
