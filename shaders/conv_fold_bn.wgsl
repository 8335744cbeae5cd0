// Folding an inference batch norm into the convolution before it:
// s[o] = w_bn[o] / sqrt(var[o] + eps) (w_bn 1 when absent);
// weight'[o, ...] = weight[o, ...] * s[o];
// bias'[o] = (bias[o] - mean[o]) * inverseSqrt(var[o] + eps) * w_bn[o] + b_bn[o]
// (bias 0, w_bn 1, b_bn 0 when absent): batch norm's own operations in its
// order, applied to the convolution's bias.
// Entries: fold_weight (one invocation per weight element, its coordinates
// decoded over the rank-4 shape so any strides work), fold_bias (one per
// output channel).
// Kernel spec family "conv_fold_bn" (src/ops/conv_fold_bn.rs). Prelude: T.
// Overrides: HAS_CB (conv bias), HAS_W, HAS_B (batch norm's weight and bias);
// false: dummy binding, not read.

override HAS_CB: bool;
override HAS_W: bool;
override HAS_B: bool;

struct Params {
    count: u32,
    row: u32,
    eps: f32,
    _pad0: u32,
    shape: vec4<u32>,
    in_strides: vec4<i32>,
    out_strides: vec4<i32>,
    // element offsets of weight and weight' (z, w unused); then offsets and
    // strides of conv bias, mean, var, w_bn, b_bn and bias' (6, 7 unused)
    offsets: vec4<u32>,
    param_offsets: array<vec4<u32>, 2>,
    param_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weight: array<T>;
@group(0) @binding(2) var<storage, read_write> weight_out: array<T>;
@group(0) @binding(3) var<storage, read_write> bias_out: array<T>;
@group(0) @binding(4) var<storage, read> conv_bias: array<T>;
@group(0) @binding(5) var<storage, read> mean: array<T>;
@group(0) @binding(6) var<storage, read> variance: array<T>;
@group(0) @binding(7) var<storage, read> w: array<T>;
@group(0) @binding(8) var<storage, read> b: array<T>;

// Element o of per-channel vector k (0 conv bias, 1 mean, 2 var, 3 w_bn,
// 4 b_bn, 5 bias').
fn param_at(o: u32, k: u32) -> u32 {
    return u32(i32(p.param_offsets[k / 4u][k % 4u]) + i32(o) * p.param_strides[k / 4u][k % 4u]);
}

fn inv_std(o: u32) -> f32 {
    return inverseSqrt(f32(variance[param_at(o, 2u)]) + p.eps);
}

@compute @workgroup_size(256)
fn fold_weight(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.count) {
        return;
    }
    var rem = i;
    var off = vec2<i32>(i32(p.offsets.x), i32(p.offsets.y));
    var o = 0u;
    for (var d = 3; d >= 0; d--) {
        let n = p.shape[d];
        let k = rem % n;
        rem = rem / n;
        off += i32(k) * vec2<i32>(p.in_strides[d], p.out_strides[d]);
        o = k;
    }
    var s = inv_std(o);
    if (HAS_W) {
        s *= f32(w[param_at(o, 3u)]);
    }
    weight_out[u32(off.y)] = T(f32(weight[u32(off.x)]) * s);
}

@compute @workgroup_size(256)
fn fold_bias(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.x;
    if (o >= p.shape.x) {
        return;
    }
    var r = -f32(mean[param_at(o, 1u)]);
    if (HAS_CB) {
        r = f32(conv_bias[param_at(o, 0u)]) - f32(mean[param_at(o, 1u)]);
    }
    r *= inv_std(o);
    if (HAS_W) {
        r *= f32(w[param_at(o, 3u)]);
    }
    if (HAS_B) {
        r += f32(b[param_at(o, 4u)]);
    }
    bias_out[param_at(o, 5u)] = T(r);
}
