// Softmax and log-softmax along one axis.
// Row `row` starts at in_offset + outer offset (outer dims decoded from the
// row number) and its element j lies j * in_stride further; likewise out.
//
// One workgroup per row:
// softmax_cached: rows contiguous and 4-aligned, at most WG * CACHE vec4s:
//   the row is read once into registers; max, sum of exp, then write.
// softmax_vec4: contiguous, 4-aligned, longer rows: an online max+sum pass
//   (rescaling the sum when the max grows), then a pass that writes.
// softmax_strided: any layout, the same two passes with scalar loads.
// Rows too long for one workgroup (a software driver stops each invocation's
// loops after 65,535 iterations), or long and too few to fill the GPU, are
// cut into chunks of chunk_len elements, one workgroup per (chunk, row):
// softmax_split_stats: each chunk's (max, sum of exp(x - max)) to `stats`;
// softmax_split_write: every chunk folds its row's stats, then writes.
//
// NaN anywhere in a row makes the whole row NaN: the running sum becomes NaN
// and stays so (the max never takes a NaN). Log-softmax is (x - max) -
// log(sum), so large logits lose no precision to max + log(sum).
//
// Kernel spec families "softmax" (src/ops/softmax.rs), one per
// workgroup-reduction strategy. Prelude: T (f32 or f16). Overrides: WG
// (power of two), CACHE (vec4 slots per invocation), LOG (true for
// log-softmax). wg_max / wg_sum come from reduce_wg_allreduce.wgsl,
// appended with the subgroup primitives.

override WG: u32;
override CACHE: u32;
// The register cache is declared at its largest; only CACHE slots are used
// (loops over them unroll once CACHE is a pipeline constant).
const MAX_CACHE: u32 = 16u;
override LOG: bool;

struct Params {
    len: u32,
    rows: u32,
    rows_per_y: u32,
    outer_rank: u32,
    in_offset: u32,
    out_offset: u32,
    in_stride: i32,
    out_stride: i32,
    chunk_len: u32,
    chunks: u32,
    outer_shape: array<vec4<u32>, 2>,
    outer_in: array<vec4<i32>, 2>,
    outer_out: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read> xv: array<vec4<T>>;
@group(0) @binding(2) var<storage, read_write> y: array<T>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read_write> yv: array<vec4<T>>;
// (max, sum) of chunk c of row r at r * chunks + c.
@group(0) @binding(5) var<storage, read_write> stats: array<vec2<f32>>;

// Infinity and NaN bits are read from variables: WGSL refuses constant
// expressions whose value is not finite (browsers' compilers enforce it).
var<private> neg_inf_bits: u32 = 0xff800000u;
var<private> nan_bits: u32 = 0x7fc00000u;

fn neg_inf() -> f32 {
    return bitcast<f32>(neg_inf_bits);
}

// By bits, so that no fast-math assumption folds it away.
fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn any_nan4(v: vec4<f32>) -> bool {
    return any((bitcast<vec4<u32>>(v) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u));
}

// Element offsets of the row's first element in x and y.
fn row_bases(row: u32) -> vec2<i32> {
    var rem = row;
    var off = vec2<i32>(i32(p.in_offset), i32(p.out_offset));
    for (var d = i32(p.outer_rank) - 1; d >= 0; d--) {
        let n = p.outer_shape[d / 4][d % 4];
        let i = i32(rem % n);
        rem = rem / n;
        off += i * vec2<i32>(p.outer_in[d / 4][d % 4], p.outer_out[d / 4][d % 4]);
    }
    return off;
}

fn max4(v: vec4<f32>) -> f32 {
    return max(max(v.x, v.y), max(v.z, v.w));
}

// Fold one value into a running (max, sum of exp(x - max)).
fn fold(ms: vec2<f32>, v: f32) -> vec2<f32> {
    if (is_nan(v)) {
        return vec2<f32>(ms.x, v);
    }
    var m = ms.x;
    var s = ms.y;
    if (v > m) {
        s *= exp(m - v);
        m = v;
    }
    if (m > neg_inf()) {
        s += exp(v - m);
    }
    return vec2<f32>(m, s);
}

fn fold4(ms: vec2<f32>, v: vec4<f32>) -> vec2<f32> {
    if (any_nan4(v)) {
        return vec2<f32>(ms.x, bitcast<f32>(nan_bits));
    }
    var m = ms.x;
    var s = ms.y;
    let mv = max4(v);
    if (mv > m) {
        s *= exp(m - mv);
        m = mv;
    }
    if (m > neg_inf()) {
        let e = exp(v - m);
        s += (e.x + e.y) + (e.z + e.w);
    }
    return vec2<f32>(m, s);
}

// A running pair's sum rescaled to the max `to` (NaN sums stay NaN).
fn rescaled(ms: vec2<f32>, to: f32) -> f32 {
    if (ms.x > neg_inf() || is_nan(ms.y)) {
        return ms.y * exp(ms.x - to);
    }
    return 0.0;
}

// Fold a running (max, sum of exp(x - max)) pair over the workgroup: every
// invocation gets the row's max and sum.
fn wg_max_sum(ms: vec2<f32>, lid: u32) -> vec2<f32> {
    let row_max = wg_max(ms.x, lid);
    return vec2<f32>(row_max, wg_sum(rescaled(ms, row_max), lid));
}

// Softmax (or log-softmax) of v given the row's max and sum.
fn result(v: f32, ms: vec2<f32>, inv: f32, lg: f32) -> f32 {
    if (LOG) {
        return (v - ms.x) - lg;
    }
    return exp(v - ms.x) * inv;
}

fn result4(v: vec4<f32>, ms: vec2<f32>, inv: f32, lg: f32) -> vec4<f32> {
    if (LOG) {
        return (v - ms.x) - lg;
    }
    return exp(v - ms.x) * inv;
}

fn row_of(wid: vec3<u32>) -> u32 {
    return wid.z * p.rows_per_y + wid.y;
}

@compute @workgroup_size(WG)
fn softmax_cached(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    let in4 = u32(bases.x) / 4u;
    let out4 = u32(bases.y) / 4u;
    let len4 = p.len / 4u;
    var cache: array<vec4<f32>, MAX_CACHE>;
    var m = neg_inf();
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            cache[c] = vec4<f32>(xv[in4 + i]);
            m = max(m, max4(cache[c]));
        }
    }
    m = wg_max(m, lid);
    // The exponentials are computed again when writing rather than stored
    // back into `cache`, which stays read-only once loaded. A NaN, whatever
    // max() made of it, turns the sum NaN here.
    var s = 0.0;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            let e = exp(cache[c] - m);
            s += (e.x + e.y) + (e.z + e.w);
        }
    }
    let ms = vec2<f32>(m, wg_sum(s, lid));
    let inv = 1.0 / ms.y;
    let lg = log(ms.y);
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            yv[out4 + i] = vec4<T>(result4(cache[c], ms, inv, lg));
        }
    }
}

@compute @workgroup_size(WG)
fn softmax_vec4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    let in4 = u32(bases.x) / 4u;
    let out4 = u32(bases.y) / 4u;
    let len4 = p.len / 4u;
    var part = vec2<f32>(neg_inf(), 0.0);
    for (var i = lid; i < len4; i += WG) {
        part = fold4(part, vec4<f32>(xv[in4 + i]));
    }
    let ms = wg_max_sum(part, lid);
    let inv = 1.0 / ms.y;
    let lg = log(ms.y);
    for (var i = lid; i < len4; i += WG) {
        yv[out4 + i] = vec4<T>(result4(vec4<f32>(xv[in4 + i]), ms, inv, lg));
    }
}

@compute @workgroup_size(WG)
fn softmax_strided(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    var part = vec2<f32>(neg_inf(), 0.0);
    for (var j = lid; j < p.len; j += WG) {
        part = fold(part, f32(x[u32(bases.x + i32(j) * p.in_stride)]));
    }
    let ms = wg_max_sum(part, lid);
    let inv = 1.0 / ms.y;
    let lg = log(ms.y);
    for (var j = lid; j < p.len; j += WG) {
        let v = f32(x[u32(bases.x + i32(j) * p.in_stride)]);
        y[u32(bases.y + i32(j) * p.out_stride)] = T(result(v, ms, inv, lg));
    }
}

@compute @workgroup_size(WG)
fn softmax_split_stats(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let base = row_bases(row).x;
    let begin = wid.x * p.chunk_len;
    let end = min(begin + p.chunk_len, p.len);
    var part = vec2<f32>(neg_inf(), 0.0);
    // Four loads in flight per invocation.
    var j = begin + lid;
    for (; j + 3u * WG < end; j += 4u * WG) {
        let a = f32(x[u32(base + i32(j) * p.in_stride)]);
        let b = f32(x[u32(base + i32(j + WG) * p.in_stride)]);
        let c = f32(x[u32(base + i32(j + 2u * WG) * p.in_stride)]);
        let d = f32(x[u32(base + i32(j + 3u * WG) * p.in_stride)]);
        part = fold(fold(fold(fold(part, a), b), c), d);
    }
    for (; j < end; j += WG) {
        part = fold(part, f32(x[u32(base + i32(j) * p.in_stride)]));
    }
    let ms = wg_max_sum(part, lid);
    if (lid == 0u) {
        stats[row * p.chunks + wid.x] = ms;
    }
}

@compute @workgroup_size(WG)
fn softmax_split_write(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    // Every chunk's workgroup combines the row's stats itself: no third pass.
    var part = vec2<f32>(neg_inf(), 0.0);
    for (var c = lid; c < p.chunks; c += WG) {
        let other = stats[row * p.chunks + c];
        let m = max(part.x, other.x);
        part = vec2<f32>(m, rescaled(part, m) + rescaled(other, m));
    }
    let ms = wg_max_sum(part, lid);
    let inv = 1.0 / ms.y;
    let lg = log(ms.y);
    let begin = wid.x * p.chunk_len;
    let end = min(begin + p.chunk_len, p.len);
    var j = begin + lid;
    for (; j + 3u * WG < end; j += 4u * WG) {
        let a = f32(x[u32(bases.x + i32(j) * p.in_stride)]);
        let b = f32(x[u32(bases.x + i32(j + WG) * p.in_stride)]);
        let c = f32(x[u32(bases.x + i32(j + 2u * WG) * p.in_stride)]);
        let d = f32(x[u32(bases.x + i32(j + 3u * WG) * p.in_stride)]);
        y[u32(bases.y + i32(j) * p.out_stride)] = T(result(a, ms, inv, lg));
        y[u32(bases.y + i32(j + WG) * p.out_stride)] = T(result(b, ms, inv, lg));
        y[u32(bases.y + i32(j + 2u * WG) * p.out_stride)] = T(result(c, ms, inv, lg));
        y[u32(bases.y + i32(j + 3u * WG) * p.out_stride)] = T(result(d, ms, inv, lg));
    }
    for (; j < end; j += WG) {
        let v = f32(x[u32(bases.x + i32(j) * p.in_stride)]);
        y[u32(bases.y + i32(j) * p.out_stride)] = T(result(v, ms, inv, lg));
    }
}

// The subgroup size is not known here (see reduce_wg_subgroups.wgsl).
fn sg_lanes_hint() -> u32 {
    return 0u;
}
