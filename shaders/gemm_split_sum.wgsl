// The second pass of a split-K GEMM (matmul.wgsl's gemm_split): one
// invocation per element of C adds the element's raw products from every
// slab of `parts`, in slab order, then writes
// C = alpha * sum + beta * C (+ bias per row) as gemm's epilogue does,
// with the fused epilogue of gemm_epilogue.wgsl (joined after this file).
// Types: OUT (f32|f16) for C and bias.

struct Params {
    m: u32,
    n: u32,
    batch_rank: u32,
    batches: u32,
    alpha: f32,
    beta: f32,
    c_sm: i32,
    c_sn: i32,
    c_off: u32,
    bias_off: u32,
    bias_stride: i32,
    parts: u32,
    row: u32,          // invocations per grid row
    batch_shape: array<vec4<u32>, 2>,
    c_bstride: array<vec4<i32>, 2>,
    // The fused epilogue (gemm_epilogue.wgsl).
    epi_act: u32,
    epi_flags: u32,
    scale_off: u32,
    scale_stride: i32,
    res_off: u32,
    res_sm: i32,
    res_sn: i32,
    nan: u32,
    inf: u32,
    res_bstride: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read_write> c: array<OUT>;
@group(0) @binding(1) var<storage, read> bias: array<OUT>;
@group(0) @binding(2) var<uniform> p: Params;
@group(0) @binding(3) var<storage, read_write> parts: array<f32>;
// The epilogue's per-column scale and residual (gemm_epilogue.wgsl).
@group(0) @binding(4) var<storage, read> scale: array<OUT>;
@group(0) @binding(5) var<storage, read> residual: array<OUT>;

// Add bias[m] to row m.
override BIAS: bool = false;

@compute @workgroup_size(256)
fn gemm_split_sum(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    let per_batch = p.m * p.n;
    if (i >= p.batches * per_batch) {
        return;
    }
    let batch = i / per_batch;
    let gm = (i % per_batch) / p.n;
    let gn = i % p.n;
    var sum = 0.0;
    for (var q = 0u; q < p.parts; q++) {
        sum += parts[q * p.batches * per_batch + i];
    }
    var ci = i32(p.c_off) + i32(gm) * p.c_sm + i32(gn) * p.c_sn;
    var rest = batch;
    for (var d = i32(p.batch_rank) - 1; d >= 0; d--) {
        let dim = p.batch_shape[d / 4][d % 4];
        ci += i32(rest % dim) * p.c_bstride[d / 4][d % 4];
        rest = rest / dim;
    }
    var v = epi_columns(p.alpha * sum, gn);
    if (BIAS) {
        v += f32(bias[i32(p.bias_off) + i32(gm) * p.bias_stride]);
    }
    if (p.beta != 0.0) {
        v += p.beta * f32(c[ci]);
    }
    c[ci] = OUT(epi_finish(v, gm, gn, epi_res_base(batch)));
}
