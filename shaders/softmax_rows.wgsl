// Softmax and log-softmax over short rows (see src/ops/softmax_rows.rs):
// several rows per workgroup, a team of TEAM neighbouring invocations per
// row, the row read once into registers. Row `row` starts at in_offset plus
// its outer offset (the row number decoded over the outer dims); element j
// lies j * in_stride further (likewise out).
//
// rows4: rows contiguous and 4-aligned; invocation t of a team holds the
//   row's vec4s t, t + TEAM, ... (at most PER of them).
// rows1: any layout, scalar loads; the team holds elements t, t + TEAM, ...
//
// Team reductions go through workgroup memory: each invocation writes its
// partial, and after one barrier every invocation folds its team's partials
// in the same order, so the whole team sees the same max and sum. No
// subgroup operations: the same kernel runs on every adapter.
//
// Numerics as softmax.wgsl: the row's max is subtracted before exp, a NaN
// anywhere makes the row's sum (and so the whole row) NaN, and log-softmax
// is (x - max) - log(sum).
//
// Prelude slot: T (f32 or f16). Overrides: TEAM (invocations per row, a
// power of two up to 32), PER (elements or vec4s per invocation, at most
// MAX_PER), LOG (1: log-softmax).

override TEAM: u32 = 8u;
override PER: u32 = 1u;
override LOG: u32 = 0u;

const WG: u32 = 256u;
const MAX_PER: u32 = 8u;

struct Params {
    rows: u32,
    len: u32,
    blocks_per_y: u32,
    outer_rank: u32,
    in_offset: u32,
    out_offset: u32,
    in_stride: i32,
    out_stride: i32,
    outer_shape: array<vec4<u32>, 2>,
    outer_in: array<vec4<i32>, 2>,
    outer_out: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(3) var<storage, read_write> y: array<T>;
@group(0) @binding(4) var<storage, read_write> y4: array<vec4<T>>;

var<workgroup> team_max_parts: array<f32, WG>;
var<workgroup> team_sum_parts: array<f32, WG>;

// Infinity and NaN bits are read from variables: WGSL refuses constant
// expressions whose value is not finite (browsers' compilers enforce it).
var<private> neg_inf_bits: u32 = 0xff800000u;

fn neg_inf() -> f32 {
    return bitcast<f32>(neg_inf_bits);
}

fn team_max(v: f32, lid: u32) -> f32 {
    team_max_parts[lid] = v;
    workgroupBarrier();
    let first = lid - lid % TEAM;
    var m = team_max_parts[first];
    for (var i = 1u; i < TEAM; i++) {
        m = max(m, team_max_parts[first + i]);
    }
    return m;
}

fn team_sum(v: f32, lid: u32) -> f32 {
    team_sum_parts[lid] = v;
    workgroupBarrier();
    let first = lid - lid % TEAM;
    var s = 0.0;
    for (var i = 0u; i < TEAM; i++) {
        s += team_sum_parts[first + i];
    }
    return s;
}

fn max4(v: vec4<f32>) -> f32 {
    return max(max(v.x, v.y), max(v.z, v.w));
}

fn result4(v: vec4<f32>, m: f32, inv: f32, lg: f32) -> vec4<f32> {
    if (LOG != 0u) {
        return (v - m) - lg;
    }
    return exp(v - m) * inv;
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
    var m = neg_inf();
    for (var c = 0u; c < PER; c++) {
        let i = c * TEAM + t;
        if (live && i < len4) {
            cache[c] = vec4<f32>(x4[in4 + i]);
            m = max(m, max4(cache[c]));
        }
    }
    m = team_max(m, lid);
    // A NaN, whatever max() made of it, turns the sum NaN here.
    var s = 0.0;
    for (var c = 0u; c < PER; c++) {
        let i = c * TEAM + t;
        if (live && i < len4) {
            let e = exp(cache[c] - m);
            s += (e.x + e.y) + (e.z + e.w);
        }
    }
    s = team_sum(s, lid);
    let inv = 1.0 / s;
    let lg = log(s);
    for (var c = 0u; c < PER; c++) {
        let i = c * TEAM + t;
        if (live && i < len4) {
            y4[out4 + i] = vec4<T>(result4(cache[c], m, inv, lg));
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
    var m = neg_inf();
    for (var c = 0u; c < PER; c++) {
        let j = c * TEAM + t;
        if (live && j < p.len) {
            cache[c] = f32(x[u32(bases.x + i32(j) * p.in_stride)]);
            m = max(m, cache[c]);
        }
    }
    m = team_max(m, lid);
    var s = 0.0;
    for (var c = 0u; c < PER; c++) {
        let j = c * TEAM + t;
        if (live && j < p.len) {
            s += exp(cache[c] - m);
        }
    }
    s = team_sum(s, lid);
    let inv = 1.0 / s;
    let lg = log(s);
    for (var c = 0u; c < PER; c++) {
        let j = c * TEAM + t;
        if (live && j < p.len) {
            y[u32(bases.y + i32(j) * p.out_stride)] = T(result4(vec4<f32>(cache[c]), m, inv, lg).x);
        }
    }
}
