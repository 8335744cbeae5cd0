// Batch norm, inference form, for the two layouts networks use, at the copy
// bandwidth: y = (x - mean[c]) * inverseSqrt(var[c] + eps) * w[c] + b[c],
// the same operations in the same order as norm_batch.wgsl (same rounding,
// same NaN/Inf results), but with no index decoding per element and the
// per-channel factors loaded once per invocation.
//
// planes4 / planes1: NCHW-like, x as (outer, C, inner) with inner contiguous.
//   Grid: x over the plane in workgroups of 64 (a vec4 or one element per
//   invocation), y and z over the outer * C planes, so the channel is one
//   per workgroup and no division happens per element.
// rows4 / rows1: NHWC-like, x as (rows, C) with C contiguous. An invocation
//   owns one channel quad (or channel) and ROWS rows, so it reads the factors
//   once for ROWS vec4s; neighbouring invocations hold neighbouring channels
//   of a row, so loads stay coalesced.
// flat4: planes4's layout where input and output are each one dense run
//   (outer stride C * inner, channel stride inner): a 1-D walk over vec4s
//   with whole workgroups (a plane of 56x56 leaves the planes grid's last
//   workgroup a quarter full) and FLAT loads in flight per invocation, the
//   channel decoded per vec4 (its factors come from cache).
// The 4 entries need every stride and offset they use a multiple of 4.
// Kernel spec family "norm_batch_fast" (src/ops/norm_batch_fast.rs).
// Prelude: T. Overrides: HAS_W, HAS_B (false: dummy binding, not read).

override HAS_W: bool;
override HAS_B: bool;

const ROWS: u32 = 4u;

struct Params {
    // planes: inner length (elements, or vec4s for planes4); rows: C (or C/4)
    inner: u32,
    // planes: number of planes (outer * C); rows: number of rows
    count: u32,
    // channel count
    chans: u32,
    eps: f32,
    in_offset: u32,
    out_offset: u32,
    // planes: the y extent of the grid (plane = gid.z * grid_y + gid.y)
    grid_y: u32,
    _pad0: u32,
    // planes: (outer stride, channel stride) of in and out, elements;
    // rows: (row stride, 0) of in and out
    in_strides: vec2<i32>,
    out_strides: vec2<i32>,
    // offset and stride (elements) of mean, var, w, b
    chan_offset: vec4<u32>,
    chan_stride: vec4<i32>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(3) var<storage, read_write> y: array<T>;
@group(0) @binding(4) var<storage, read_write> y4: array<vec4<T>>;
@group(0) @binding(5) var<storage, read> mean: array<T>;
@group(0) @binding(6) var<storage, read> variance: array<T>;
@group(0) @binding(7) var<storage, read> w: array<T>;
@group(0) @binding(8) var<storage, read> b: array<T>;

fn at(c: u32, k: u32) -> u32 {
    return u32(i32(p.chan_offset[k]) + i32(c) * p.chan_stride[k]);
}

// Channel c's factors: (mean, 1 / sqrt(var + eps), w, b), w and b 1 and 0
// when absent (applied only where present, as in norm_batch.wgsl).
fn factors(c: u32) -> vec4<f32> {
    var f = vec4<f32>(f32(mean[at(c, 0u)]), inverseSqrt(f32(variance[at(c, 1u)]) + p.eps), 1.0, 0.0);
    if (HAS_W) {
        f.z = f32(w[at(c, 2u)]);
    }
    if (HAS_B) {
        f.w = f32(b[at(c, 3u)]);
    }
    return f;
}

fn apply(v: f32, f: vec4<f32>) -> f32 {
    var r = (v - f.x) * f.y;
    if (HAS_W) {
        r *= f.z;
    }
    if (HAS_B) {
        r += f.w;
    }
    return r;
}

fn apply4(v: vec4<f32>, f0: vec4<f32>, f1: vec4<f32>, f2: vec4<f32>, f3: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(apply(v.x, f0), apply(v.y, f1), apply(v.z, f2), apply(v.w, f3));
}

// The plane an invocation of planes4/planes1 works in, and its base offsets
// (elements) in x and y; plane >= count: none.
fn plane_base(gid: vec3<u32>) -> vec3<u32> {
    let plane = gid.z * p.grid_y + gid.y;
    let c = plane % p.chans;
    let o = i32(plane / p.chans);
    let xi = i32(p.in_offset) + o * p.in_strides.x + i32(c) * p.in_strides.y;
    let yi = i32(p.out_offset) + o * p.out_strides.x + i32(c) * p.out_strides.y;
    return vec3<u32>(plane, u32(xi), u32(yi));
}

@compute @workgroup_size(64)
fn planes4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let base = plane_base(gid);
    if (base.x >= p.count || gid.x >= p.inner) {
        return;
    }
    let f = factors(base.x % p.chans);
    let v = vec4<f32>(x4[base.y / 4u + gid.x]);
    y4[base.z / 4u + gid.x] = vec4<T>(apply4(v, f, f, f, f));
}

@compute @workgroup_size(64)
fn planes1(@builtin(global_invocation_id) gid: vec3<u32>) {
    let base = plane_base(gid);
    if (base.x >= p.count || gid.x >= p.inner) {
        return;
    }
    let f = factors(base.x % p.chans);
    y[base.z + gid.x] = T(apply(f32(x[base.y + gid.x]), f));
}

// flat4: count vec4s in all (inner of them per plane), FLAT per invocation
// strided by the workgroup so neighbours read neighbouring vec4s; grid_y
// invocations to a grid row (src/ops/grid.rs).
const FLAT: u32 = 4u;

@compute @workgroup_size(256)
fn flat4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let first = (wg.y * (p.grid_y / 256u) + wg.x) * 256u * FLAT + lid;
    var v: array<vec4<f32>, FLAT>;
    for (var k = 0u; k < FLAT; k++) {
        let i = first + k * 256u;
        if (i < p.count) {
            v[k] = vec4<f32>(x4[p.in_offset / 4u + i]);
        }
    }
    for (var k = 0u; k < FLAT; k++) {
        let i = first + k * 256u;
        if (i < p.count) {
            let f = factors((i / p.inner) % p.chans);
            y4[p.out_offset / 4u + i] = vec4<T>(apply4(v[k], f, f, f, f));
        }
    }
}

// rows4 / rows1: inner (C / 4 or C) * ceil(count / ROWS) invocations over a
// 2-D grid, grid_y invocations to a grid row (src/ops/grid.rs).
@compute @workgroup_size(256)
fn rows4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.y * p.grid_y + gid.x;
    let q = t % p.inner;
    let first = (t / p.inner) * ROWS;
    if (first >= p.count) {
        return;
    }
    let c = q * 4u;
    let f0 = factors(c);
    let f1 = factors(c + 1u);
    let f2 = factors(c + 2u);
    let f3 = factors(c + 3u);
    let last = min(first + ROWS, p.count);
    for (var r = first; r < last; r++) {
        let xi = (p.in_offset + r * u32(p.in_strides.x)) / 4u + q;
        let yi = (p.out_offset + r * u32(p.out_strides.x)) / 4u + q;
        y4[yi] = vec4<T>(apply4(vec4<f32>(x4[xi]), f0, f1, f2, f3));
    }
}

@compute @workgroup_size(256)
fn rows1(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.y * p.grid_y + gid.x;
    let c = t % p.inner;
    let first = (t / p.inner) * ROWS;
    if (first >= p.count) {
        return;
    }
    let f = factors(c);
    let last = min(first + ROWS, p.count);
    for (var r = first; r < last; r++) {
        let xi = p.in_offset + r * u32(p.in_strides.x) + c;
        let yi = p.out_offset + r * u32(p.out_strides.x) + c;
        y[yi] = T(apply(f32(x[xi]), f));
    }
}
