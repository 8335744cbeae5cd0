// Batch norm, inference form: y = (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c]
// for c the index along dim 1. One invocation per element; the element's
// coordinates are decoded over the coalesced shape, with a pseudo-operand
// whose strides are 1 on the channel dim and 0 elsewhere giving c.
// Kernel spec family "norm_batch" (src/ops/norm_batch.rs). Prelude: T.
// Overrides: HAS_W, HAS_B (false: dummy binding, not read).

override HAS_W: bool;
override HAS_B: bool;

struct Params {
    count: u32,
    row: u32,
    rank: u32,
    eps: f32,
    in_offset: u32,
    out_offset: u32,
    _pad0: u32,
    _pad1: u32,
    // offset and stride (elements) of mean, var, w, b
    chan_offset: vec4<u32>,
    chan_stride: vec4<i32>,
    shape: array<vec4<u32>, 2>,
    in_strides: array<vec4<i32>, 2>,
    out_strides: array<vec4<i32>, 2>,
    chan_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> y: array<T>;
@group(0) @binding(2) var<uniform> p: Params;
@group(0) @binding(3) var<storage, read> mean: array<T>;
@group(0) @binding(4) var<storage, read> variance: array<T>;
@group(0) @binding(5) var<storage, read> w: array<T>;
@group(0) @binding(6) var<storage, read> b: array<T>;

fn at(c: i32, k: u32) -> u32 {
    return u32(i32(p.chan_offset[k]) + c * p.chan_stride[k]);
}

@compute @workgroup_size(256)
fn batch_norm(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.count) {
        return;
    }
    var rem = i;
    var off = vec3<i32>(i32(p.in_offset), i32(p.out_offset), 0);
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d / 4][d % 4];
        let k = i32(rem % n);
        rem = rem / n;
        off += k * vec3<i32>(p.in_strides[d / 4][d % 4], p.out_strides[d / 4][d % 4], p.chan_strides[d / 4][d % 4]);
    }
    let c = off.z;
    var r = (f32(x[u32(off.x)]) - f32(mean[at(c, 0u)])) * inverseSqrt(f32(variance[at(c, 1u)]) + p.eps);
    if (HAS_W) {
        r *= f32(w[at(c, 2u)]);
    }
    if (HAS_B) {
        r += f32(b[at(c, 3u)]);
    }
    y[u32(off.y)] = T(r);
}
