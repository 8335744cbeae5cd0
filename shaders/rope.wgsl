// Kernel spec family "rope" (src/ops/rope.rs): rotary position embedding
// over the last dim. Prelude: T (element type, f32 or f16).
// Overrides: WG (workgroup size), INTERLEAVED (pair layout).
//
// Each row (all dims but the last) has a position: pos_offset plus its
// coordinate along the sequence dim. Pair i of the first 2 * pairs
// elements, (x[2i], x[2i+1]) when INTERLEAVED, else (x[i], x[i + pairs]),
// is rotated by the angle pos * theta_i; the `tail` elements after them are
// copied. One invocation per pair or copied element:
// lin = gid.y * row + gid.x, its row = lin / units, unit = lin % units.
//
// Angles are reduced exactly: turns[i] holds theta_i / (2 pi) as a 64-bit
// binary fraction (lo, hi words), so pos * turns[i] mod 1 is computed in
// integers, and sin and cos only ever see an angle in [-pi, pi).
// Arithmetic is f32; f16 values are converted on load and store.

override WG: u32 = 256u;
override INTERLEAVED: bool = false;

struct Params {
    n: u32,
    row: u32,
    units: u32,
    pairs: u32,
    rank: u32,
    pos_offset: u32,
    x_offset: u32,
    y_offset: u32,
    x_inner: i32,
    y_inner: i32,
    _pad0: u32,
    _pad1: u32,
    shape: array<vec4<u32>, 2>,
    x_strides: array<vec4<i32>, 2>,
    y_strides: array<vec4<i32>, 2>,
    pos_strides: array<vec4<u32>, 2>,
    turns: array<vec4<u32>, 128>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read_write> y: array<T>;
// The same buffers in quads of elements (the rope_quads entries).
@group(0) @binding(3) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(4) var<storage, read_write> y4: array<vec4<T>>;

struct Row {
    x: i32,
    y: i32,
    pos: u32,
}

// Where row `r` starts in x and y, and its position.
fn row_of(r: u32) -> Row {
    var rem = r;
    var out = Row(i32(p.x_offset), i32(p.y_offset), p.pos_offset);
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d / 4][d % 4];
        let c = rem % n;
        rem = rem / n;
        out.x += i32(c) * p.x_strides[d / 4][d % 4];
        out.y += i32(c) * p.y_strides[d / 4][d % 4];
        out.pos += c * p.pos_strides[d / 4][d % 4];
    }
    return out;
}

// The high 32 bits of the 64-bit product a * b.
fn mul_hi(a: u32, b: u32) -> u32 {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
}

// The turn table, copied from the uniform once per workgroup: neighbouring
// invocations read different entries, which a uniform serves one address
// at a time (on an H100 that bound the kernel at a tenth of the bandwidth).
var<workgroup> turns: array<vec4<u32>, 128>;

fn load_turns(lid: u32) {
    for (var k = lid; k < (p.pairs + 1u) / 2u; k += WG) {
        turns[k] = p.turns[k];
    }
    workgroupBarrier();
}

// cos and sin of pos * theta_i.
fn cos_sin(i: u32, pos: u32) -> vec2<f32> {
    let w = turns[i / 2u];
    let lo = select(w.x, w.z, (i & 1u) == 1u);
    let hi = select(w.y, w.w, (i & 1u) == 1u);
    // The top 32 bits of the fraction of a turn, read as signed: [-1/2, 1/2).
    let frac = mul_hi(pos, lo) + pos * hi;
    let angle = f32(bitcast<i32>(frac)) * (6.283185307179586 / 4294967296.0);
    return vec2<f32>(cos(angle), sin(angle));
}

// The elements (along the last dim) of pair i.
fn pair(i: u32) -> vec2<i32> {
    if (INTERLEAVED) {
        return vec2<i32>(i32(2u * i), i32(2u * i + 1u));
    }
    return vec2<i32>(i32(i), i32(i + p.pairs));
}

fn rotate(a: f32, b: f32, cs: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a * cs.x - b * cs.y, a * cs.y + b * cs.x);
}

@compute @workgroup_size(WG)
fn rope(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    load_turns(lid);
    let lin = gid.y * p.row + gid.x;
    if (lin >= p.n) {
        return;
    }
    let u = lin % p.units;
    let r = row_of(lin / p.units);
    if (u < p.pairs) {
        let e = pair(u);
        let v = rotate(f32(x[r.x + e.x * p.x_inner]), f32(x[r.x + e.y * p.x_inner]), cos_sin(u, r.pos));
        y[r.y + e.x * p.y_inner] = T(v.x);
        y[r.y + e.y * p.y_inner] = T(v.y);
    } else {
        let j = i32(u + p.pairs);
        y[r.y + j * p.y_inner] = x[r.x + j * p.x_inner];
    }
}

// In place: out is the input's very view; the tail stays as it is.
@compute @workgroup_size(WG)
fn rope_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    load_turns(lid);
    let lin = gid.y * p.row + gid.x;
    if (lin >= p.n) {
        return;
    }
    let u = lin % p.units;
    let r = row_of(lin / p.units);
    if (u < p.pairs) {
        let e = pair(u);
        let v = rotate(f32(y[r.y + e.x * p.y_inner]), f32(y[r.y + e.y * p.y_inner]), cos_sin(u, r.pos));
        y[r.y + e.x * p.y_inner] = T(v.x);
        y[r.y + e.y * p.y_inner] = T(v.y);
    }
}

// rope_quads / rope_quads_inplace: half-split pairs with unit-stride rows
// (offsets, row strides and pairs multiples of 4, no tail to copy): an
// invocation rotates 4 neighbouring pairs with quad loads and stores, so a
// row's position is decoded once for 4 pairs. units counts quads.
fn rotate_quad(a: vec4<f32>, b: vec4<f32>, i: u32, pos: u32) -> array<vec4<f32>, 2> {
    let c0 = cos_sin(i, pos);
    let c1 = cos_sin(i + 1u, pos);
    let c2 = cos_sin(i + 2u, pos);
    let c3 = cos_sin(i + 3u, pos);
    let r0 = rotate(a.x, b.x, c0);
    let r1 = rotate(a.y, b.y, c1);
    let r2 = rotate(a.z, b.z, c2);
    let r3 = rotate(a.w, b.w, c3);
    return array<vec4<f32>, 2>(vec4<f32>(r0.x, r1.x, r2.x, r3.x), vec4<f32>(r0.y, r1.y, r2.y, r3.y));
}

@compute @workgroup_size(WG)
fn rope_quads(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    load_turns(lid);
    let lin = gid.y * p.row + gid.x;
    if (lin >= p.n) {
        return;
    }
    let i = (lin % p.units) * 4u;
    let r = row_of(lin / p.units);
    let xa = (u32(r.x) + i) / 4u;
    let ya = (u32(r.y) + i) / 4u;
    let h = p.pairs / 4u;
    let v = rotate_quad(vec4<f32>(x4[xa]), vec4<f32>(x4[xa + h]), i, r.pos);
    y4[ya] = vec4<T>(v[0]);
    y4[ya + h] = vec4<T>(v[1]);
}

@compute @workgroup_size(WG)
fn rope_quads_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    load_turns(lid);
    let lin = gid.y * p.row + gid.x;
    if (lin >= p.n) {
        return;
    }
    let i = (lin % p.units) * 4u;
    let r = row_of(lin / p.units);
    let ya = (u32(r.y) + i) / 4u;
    let h = p.pairs / 4u;
    let v = rotate_quad(vec4<f32>(y4[ya]), vec4<f32>(y4[ya + h]), i, r.pos);
    y4[ya] = vec4<T>(v[0]);
    y4[ya + h] = vec4<T>(v[1]);
}
