// Layer norm and RMS norm over the trailing `len` elements of each row, one
// workgroup per row. Row offsets come from decoding the row number over the
// outer dims; element j of a row from decoding j over the inner
// (normalised) dims, per operand: x, y, weight w, bias b.
//
// norm_cached: x and y rows contiguous and 4-aligned, w and b contiguous and
//   4-aligned, at most WG * CACHE vec4s: the row is read once into registers.
// norm_vec4: the same layout, longer rows: three streaming passes.
// norm_strided: any layout, scalar loads, three passes.
// Mean and variance are two-pass (sum, then sum of squared deviations), in f32.
// Rows too long for one workgroup (a software driver stops each invocation's
// loops after 65,535 iterations) are cut into chunks of chunk_len elements,
// one workgroup per (chunk, row):
// norm_split_stats: each chunk's mean and sum of squared deviations from it;
// norm_split_write: every chunk combines its row's (Chan et al.), then writes.
// norm_cached_residual: norm_cached of s = x + r (added in T, as separate
//   operators add), also writing s: r laid out as x, s as y (offsets
//   r_offset and s_offset), in one pass over memory.
//
// Kernel spec families "norm" (src/ops/norm.rs), one per workgroup-reduction
// strategy (reduce_wg_allreduce.wgsl and reduce_wg_subgroups.wgsl or
// reduce_wg_shared.wgsl appended). Prelude: T. Overrides: WG, CACHE, RMS
// (true: RMS norm, no centring, no bias), HAS_W, HAS_B (false: the binding
// is a dummy and is not read), LANES.

override WG: u32;
override CACHE: u32;
// The register cache is declared at its largest; only CACHE slots are used
// (loops over them unroll once CACHE is a pipeline constant).
const MAX_CACHE: u32 = 16u;
override RMS: bool;
override HAS_W: bool;
override HAS_B: bool;
// The adapter's subgroup size where it has only one, else 0 (for the
// appended reduce_wg_subgroups.wgsl; the host passes 0 with the other).
override LANES: u32;
fn sg_lanes_hint() -> u32 {
    return LANES;
}

struct Params {
    len: u32,
    rows: u32,
    rows_per_y: u32,
    outer_rank: u32,
    in_offset: u32,
    out_offset: u32,
    w_offset: u32,
    b_offset: u32,
    inner_rank: u32,
    eps: f32,
    inv_len: f32,
    chunk_len: u32,
    chunks: u32,
    zero: u32, // 0, unknown to the compiler: see opaque()
    r_offset: u32, // norm_cached_residual: r's and s's offsets
    s_offset: u32,
    outer_shape: array<vec4<u32>, 2>,
    outer_in: array<vec4<i32>, 2>,
    outer_out: array<vec4<i32>, 2>,
    inner_shape: array<vec4<u32>, 2>,
    inner_in: array<vec4<i32>, 2>,
    inner_out: array<vec4<i32>, 2>,
    inner_w: array<vec4<i32>, 2>,
    inner_b: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read> xv: array<vec4<T>>;
@group(0) @binding(2) var<storage, read_write> y: array<T>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read_write> yv: array<vec4<T>>;
@group(0) @binding(5) var<storage, read> w: array<T>;
@group(0) @binding(6) var<storage, read> b: array<T>;
@group(0) @binding(7) var<storage, read> wv: array<vec4<T>>;
@group(0) @binding(8) var<storage, read> bv: array<vec4<T>>;
// (mean, sum of squared deviations from it) of chunk c of row r at r * chunks + c.
@group(0) @binding(9) var<storage, read_write> stats: array<vec2<f32>>;
@group(0) @binding(10) var<storage, read> rv: array<vec4<T>>;
@group(0) @binding(11) var<storage, read_write> sv: array<vec4<T>>;

fn row_of(wid: vec3<u32>) -> u32 {
    return wid.z * p.rows_per_y + wid.y;
}

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

// Offsets of inner element j in x, y, w and b (relative to their bases).
fn inner_offsets(j: u32) -> vec4<i32> {
    var rem = j;
    var off = vec4<i32>(0);
    for (var d = i32(p.inner_rank) - 1; d >= 0; d--) {
        let n = p.inner_shape[d / 4][d % 4];
        let i = i32(rem % n);
        rem = rem / n;
        off += i * vec4<i32>(p.inner_in[d / 4][d % 4], p.inner_out[d / 4][d % 4], p.inner_w[d / 4][d % 4], p.inner_b[d / 4][d % 4]);
    }
    return off;
}

fn sum4(v: vec4<f32>) -> f32 {
    return (v.x + v.y) + (v.z + v.w);
}

// (mean, 1 / sqrt(var + eps)) from the row's sum and sum of squared deviations.
fn mean_of(total: f32) -> f32 {
    return select(total * p.inv_len, 0.0, RMS);
}
// The mean made exact to rounding and the squared deviations corrected,
// from the sums of the deviations d = x - mean (sd) and of d^2 (sq): the
// first mean's rounding error (an ulp or more, from the sum and the
// division) comes back as sd / len, so a row of equal values has exactly
// that value as its mean and a variance of 0. Returns (mean, sq).
// x, through an integer OR with a zero the compiler cannot see: Mesa's NIR
// treats float arithmetic as associative and would rewrite the refinement
// below (total / n + sd / n as (total + sd) / n).
fn opaque(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) | p.zero);
}

fn refined(mean: f32, sd: f32, sq: f32) -> vec2<f32> {
    if (RMS) {
        return vec2<f32>(0.0, sq);
    }
    // Opaque: NIR would factor total / len + sd / len into
    // (total + sd) / len, rounding the sum again.
    let shift = sd * p.inv_len;
    return vec2<f32>(opaque(mean) + shift, max(sq - sd * shift, 0.0));
}

// The row's (mean, 1 / sqrt(var + eps)) from the invocation's sums of
// deviations (sd) and squares (sq), reduced over the workgroup: both in one
// step for layer norm, sq alone for RMS norm (an override: the branch is
// uniform), then refined.
fn row_stats(mean: f32, sd: f32, sq: f32, lid: u32) -> vec2<f32> {
    var totals = vec2<f32>(0.0);
    if (RMS) {
        totals.y = wg_sum(sq, lid);
    } else {
        totals = wg_sum2(vec2<f32>(sd, sq), lid);
    }
    let r = refined(mean, totals.x, totals.y);
    return vec2<f32>(r.x, rstd_of(r.y));
}
fn rstd_of(sq: f32) -> f32 {
    return inverseSqrt(sq * p.inv_len + p.eps);
}

fn affine4(v: vec4<f32>, i: u32) -> vec4<f32> {
    var r = v;
    if (HAS_W) {
        r *= vec4<f32>(wv[p.w_offset / 4u + i]);
    }
    if (HAS_B) {
        r += vec4<f32>(bv[p.b_offset / 4u + i]);
    }
    return r;
}

@compute @workgroup_size(WG)
fn norm_cached(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    let in4 = u32(bases.x) / 4u;
    let out4 = u32(bases.y) / 4u;
    let len4 = p.len / 4u;
    var cache: array<vec4<f32>, MAX_CACHE>;
    var s = 0.0;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            cache[c] = vec4<f32>(xv[in4 + i]);
            s += sum4(cache[c]);
        }
    }
    var mean = 0.0;
    if (!RMS) {
        mean = mean_of(wg_sum(s, lid));
    }
    var sq = 0.0;
    var sd = 0.0;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            let d = cache[c] - mean;
            sq += dot(d, d);
            sd += sum4(d);
        }
    }
    let stats = row_stats(mean, sd, sq, lid);
    mean = stats.x;
    let rstd = stats.y;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            yv[out4 + i] = vec4<T>(affine4((cache[c] - mean) * rstd, i));
        }
    }
}

@compute @workgroup_size(WG)
fn norm_cached_residual(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    let in4 = u32(bases.x) / 4u;
    let out4 = u32(bases.y) / 4u;
    let r4 = (u32(bases.x) - p.in_offset + p.r_offset) / 4u;
    let s4 = (u32(bases.y) - p.out_offset + p.s_offset) / 4u;
    let len4 = p.len / 4u;
    var cache: array<vec4<f32>, MAX_CACHE>;
    var s = 0.0;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            let v = xv[in4 + i] + rv[r4 + i];
            sv[s4 + i] = v;
            cache[c] = vec4<f32>(v);
            s += sum4(cache[c]);
        }
    }
    var mean = 0.0;
    if (!RMS) {
        mean = mean_of(wg_sum(s, lid));
    }
    var sq = 0.0;
    var sd = 0.0;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            let d = cache[c] - mean;
            sq += dot(d, d);
            sd += sum4(d);
        }
    }
    let stats = row_stats(mean, sd, sq, lid);
    mean = stats.x;
    let rstd = stats.y;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            yv[out4 + i] = vec4<T>(affine4((cache[c] - mean) * rstd, i));
        }
    }
}

@compute @workgroup_size(WG)
fn norm_vec4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    let in4 = u32(bases.x) / 4u;
    let out4 = u32(bases.y) / 4u;
    let len4 = p.len / 4u;
    var mean = 0.0;
    if (!RMS) {
        var s = 0.0;
        for (var i = lid; i < len4; i += WG) {
            s += sum4(vec4<f32>(xv[in4 + i]));
        }
        mean = mean_of(wg_sum(s, lid));
    }
    var sq = 0.0;
    var sd = 0.0;
    for (var i = lid; i < len4; i += WG) {
        let d = vec4<f32>(xv[in4 + i]) - mean;
        sq += dot(d, d);
        sd += sum4(d);
    }
    let stats = row_stats(mean, sd, sq, lid);
    mean = stats.x;
    let rstd = stats.y;
    for (var i = lid; i < len4; i += WG) {
        yv[out4 + i] = vec4<T>(affine4((vec4<f32>(xv[in4 + i]) - mean) * rstd, i));
    }
}

// (x - mean) * rstd with the weight and bias of inner element j, stored.
fn write_scalar(bases: vec2<i32>, j: u32, mean: f32, rstd: f32) {
    let o = inner_offsets(j);
    var r = (f32(x[u32(bases.x + o.x)]) - mean) * rstd;
    if (HAS_W) {
        r *= f32(w[u32(i32(p.w_offset) + o.z)]);
    }
    if (HAS_B) {
        r += f32(b[u32(i32(p.b_offset) + o.w)]);
    }
    y[u32(bases.y + o.y)] = T(r);
}

@compute @workgroup_size(WG)
fn norm_strided(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    var mean = 0.0;
    if (!RMS) {
        var s = 0.0;
        for (var j = lid; j < p.len; j += WG) {
            s += f32(x[u32(bases.x + inner_offsets(j).x)]);
        }
        mean = mean_of(wg_sum(s, lid));
    }
    var sq = 0.0;
    var sd = 0.0;
    for (var j = lid; j < p.len; j += WG) {
        let d = f32(x[u32(bases.x + inner_offsets(j).x)]) - mean;
        sq += d * d;
        sd += d;
    }
    let stats = row_stats(mean, sd, sq, lid);
    mean = stats.x;
    let rstd = stats.y;
    for (var j = lid; j < p.len; j += WG) {
        write_scalar(bases, j, mean, rstd);
    }
}

fn chunk_count(c: u32) -> f32 {
    return f32(min(p.chunk_len, p.len - c * p.chunk_len));
}

@compute @workgroup_size(WG)
fn norm_split_stats(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let base = row_bases(row).x;
    let begin = wid.x * p.chunk_len;
    let end = min(begin + p.chunk_len, p.len);
    var mean = 0.0;
    if (!RMS) {
        var s = 0.0;
        for (var j = begin + lid; j < end; j += WG) {
            s += f32(x[u32(base + inner_offsets(j).x)]);
        }
        mean = wg_sum(s, lid) / chunk_count(wid.x);
    }
    var sq = 0.0;
    var sd = 0.0;
    for (var j = begin + lid; j < end; j += WG) {
        let d = f32(x[u32(base + inner_offsets(j).x)]) - mean;
        sq += d * d;
        sd += d;
    }
    // The chunk's mean and squared deviations refined as in `refined`.
    let m2 = wg_sum(sq, lid);
    var dev = 0.0;
    if (!RMS) {
        dev = wg_sum(sd, lid);
    }
    if (lid == 0u) {
        let shift = dev / chunk_count(wid.x);
        stats[row * p.chunks + wid.x] = vec2<f32>(opaque(mean) + shift, max(m2 - dev * shift, 0.0));
    }
}

@compute @workgroup_size(WG)
fn norm_split_write(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    // Every chunk's workgroup combines the row's stats itself: the row's mean
    // from the chunks' means, then the squared deviations of each chunk from
    // it, each chunk's own plus count * (its mean - the row's mean)^2.
    // The means are combined as offsets from the first chunk's, so chunks
    // with equal means give exactly that mean.
    var mean = 0.0;
    if (!RMS) {
        let m0 = stats[row * p.chunks].x;
        var s = 0.0;
        for (var c = lid; c < p.chunks; c += WG) {
            s += chunk_count(c) * (stats[row * p.chunks + c].x - m0);
        }
        mean = m0 + wg_sum(s, lid) * p.inv_len;
    }
    var sq = 0.0;
    for (var c = lid; c < p.chunks; c += WG) {
        let st = stats[row * p.chunks + c];
        let d = st.x - mean;
        sq += st.y + chunk_count(c) * d * d;
    }
    let rstd = rstd_of(wg_sum(sq, lid));
    let begin = wid.x * p.chunk_len;
    let end = min(begin + p.chunk_len, p.len);
    for (var j = begin + lid; j < end; j += WG) {
        write_scalar(bases, j, mean, rstd);
    }
}
