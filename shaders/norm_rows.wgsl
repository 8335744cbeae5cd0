// Layer norm and RMS norm over short rows (see src/ops/norm_rows.rs):
// several rows per workgroup, a team of TEAM neighbouring invocations per
// row, the row read once into registers. Row `row` starts at in_offset plus
// its outer offset (the row number decoded over the outer dims); its
// element j lies j * in_stride further (likewise out, and the weight and
// bias from their own offsets).
//
// rows4: x and y rows, weight and bias contiguous and 4-aligned;
//   invocation t of a team holds the row's vec4s t, t + TEAM, ...
// rows1: any strides, scalar loads; the team holds elements t, t + TEAM, ...
//
// Team sums go through workgroup memory: each invocation writes its
// partial, and after one barrier every invocation adds its team's partials
// in the same order, so the whole team sees the same sums. No subgroup
// operations: the same kernel runs on every adapter.
//
// Numerics as norm.wgsl: f32 throughout, the mean first (with one
// correction step), then the sum of squared deviations from it (from the
// registers), so a constant row normalises to exactly 0 (times the
// weight, plus the bias).
//
// Prelude slot: T (f32 or f16). Overrides: TEAM (invocations per row, a
// power of two up to 32), PER (elements or vec4s per invocation, at most
// MAX_PER), RMS (1: RMS norm, no centring), HAS_W, HAS_B (0: the binding
// is a stand-in and is not read).

override TEAM: u32 = 8u;
override PER: u32 = 1u;
override RMS: u32 = 0u;
override HAS_W: u32 = 0u;
override HAS_B: u32 = 0u;

const WG: u32 = 256u;
const MAX_PER: u32 = 8u;

struct Params {
    rows: u32,
    len: u32,
    blocks_per_y: u32,
    outer_rank: u32,
    in_offset: u32,
    out_offset: u32,
    w_offset: u32,
    b_offset: u32,
    in_stride: i32,
    out_stride: i32,
    w_stride: i32,
    b_stride: i32,
    eps: f32,
    inv_len: f32,
    zero: u32, // 0, unknown to the compiler: see opaque()
    _pad0: u32,
    outer_shape: array<vec4<u32>, 2>,
    outer_in: array<vec4<i32>, 2>,
    outer_out: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(3) var<storage, read_write> y: array<T>;
@group(0) @binding(4) var<storage, read_write> y4: array<vec4<T>>;
@group(0) @binding(5) var<storage, read> w: array<T>;
@group(0) @binding(6) var<storage, read> w4: array<vec4<T>>;
@group(0) @binding(7) var<storage, read> b: array<T>;
@group(0) @binding(8) var<storage, read> b4: array<vec4<T>>;

// One slice of WG partials per team sum of a launch (SUM, CORRECTION, SQ),
// so that no barrier is needed before a slice is written again.
const SUM: u32 = 0u;
const CORRECTION: u32 = 1u;
const SQ: u32 = 2u;
var<workgroup> parts: array<f32, 3u * WG>;

// The sum of v over the invocation's team, the same in every member.
fn team_sum(slice: u32, v: f32, lid: u32) -> f32 {
    parts[slice * WG + lid] = v;
    workgroupBarrier();
    let first = slice * WG + lid - lid % TEAM;
    var s = 0.0;
    for (var i = 0u; i < TEAM; i++) {
        s += parts[first + i];
    }
    return s;
}

// a, through an integer OR with a zero the compiler cannot see: drivers
// that treat float arithmetic as exact (Mesa's NIR does) would otherwise
// fold the correction of the mean away.
fn opaque(a: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(a) | p.zero);
}

fn sum4(v: vec4<f32>) -> f32 {
    return (v.x + v.y) + (v.z + v.w);
}

@compute @workgroup_size(WG)
fn rows4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(lid, wid);
    let t = lid % TEAM;
    let live = row < p.rows;
    var in4 = 0u;
    var out4 = 0u;
    if (live) {
        let bases = row_bases(row);
        in4 = u32(bases.x) / 4u;
        out4 = u32(bases.y) / 4u;
    }
    let len4 = p.len / 4u;
    var cache: array<vec4<f32>, MAX_PER>;
    var s = 0.0;
    for (var c = 0u; c < PER; c++) {
        let i = c * TEAM + t;
        if (live && i < len4) {
            cache[c] = vec4<f32>(x4[in4 + i]);
            s += sum4(cache[c]);
        }
    }
    var mean = 0.0;
    if (RMS == 0u) {
        mean = opaque(team_sum(SUM, s, lid) * p.inv_len);
        // One correction step: sum and division rounded, the mean of n
        // equal values may miss their value by an ulp; the mean deviation
        // from it brings it back, so constant rows normalise to exactly 0.
        var r = 0.0;
        for (var c = 0u; c < PER; c++) {
            if (live && c * TEAM + t < len4) {
                r += sum4(cache[c] - mean);
            }
        }
        mean = opaque(mean + team_sum(CORRECTION, r, lid) * p.inv_len);
    }
    var sq = 0.0;
    for (var c = 0u; c < PER; c++) {
        let i = c * TEAM + t;
        if (live && i < len4) {
            let d = cache[c] - mean;
            sq += dot(d, d);
        }
    }
    let rstd = inverseSqrt(team_sum(SQ, sq, lid) * p.inv_len + p.eps);
    for (var c = 0u; c < PER; c++) {
        let i = c * TEAM + t;
        if (live && i < len4) {
            var r = (cache[c] - mean) * rstd;
            if (HAS_W != 0u) {
                r *= vec4<f32>(w4[p.w_offset / 4u + i]);
            }
            if (HAS_B != 0u) {
                r += vec4<f32>(b4[p.b_offset / 4u + i]);
            }
            y4[out4 + i] = vec4<T>(r);
        }
    }
}

@compute @workgroup_size(WG)
fn rows1(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(lid, wid);
    let t = lid % TEAM;
    let live = row < p.rows;
    var bases = vec2<i32>(0);
    if (live) {
        bases = row_bases(row);
    }
    var cache: array<f32, MAX_PER>;
    var s = 0.0;
    for (var c = 0u; c < PER; c++) {
        let j = c * TEAM + t;
        if (live && j < p.len) {
            cache[c] = f32(x[u32(bases.x + i32(j) * p.in_stride)]);
            s += cache[c];
        }
    }
    var mean = 0.0;
    if (RMS == 0u) {
        mean = opaque(team_sum(SUM, s, lid) * p.inv_len);
        // One correction step: sum and division rounded, the mean of n
        // equal values may miss their value by an ulp; the mean deviation
        // from it brings it back, so constant rows normalise to exactly 0.
        var r = 0.0;
        for (var c = 0u; c < PER; c++) {
            if (live && c * TEAM + t < p.len) {
                r += cache[c] - mean;
            }
        }
        mean = opaque(mean + team_sum(CORRECTION, r, lid) * p.inv_len);
    }
    var sq = 0.0;
    for (var c = 0u; c < PER; c++) {
        let j = c * TEAM + t;
        if (live && j < p.len) {
            let d = cache[c] - mean;
            sq += d * d;
        }
    }
    let rstd = inverseSqrt(team_sum(SQ, sq, lid) * p.inv_len + p.eps);
    for (var c = 0u; c < PER; c++) {
        let j = c * TEAM + t;
        if (live && j < p.len) {
            var r = (cache[c] - mean) * rstd;
            if (HAS_W != 0u) {
                r *= f32(w[u32(i32(p.w_offset) + i32(j) * p.w_stride)]);
            }
            if (HAS_B != 0u) {
                r += f32(b[u32(i32(p.b_offset) + i32(j) * p.b_stride)]);
            }
            y[u32(bases.y + i32(j) * p.out_stride)] = T(r);
        }
    }
}
