{{ENABLES}}
// Reductions over a set of axes, in two passes.
//
// The host orders the input's dims as [kept..., reduced...] (coalesced),
// so output row `row` reduces K elements at
//   in_offset + kept_offset(row) + reduced_offset(k),  k in [0, K).
// Pass 1 (reduce_strided; reduce_vec4 when the reduced range is one
// contiguous, 4-aligned run; reduce_columns when instead the outputs are
// contiguous in the input): workgroup (chunk, row) folds a grid-strided
// share of the row into a State and stores it in partials[row * chunks + chunk].
// Pass 2 (reduce_finish): one workgroup per row folds its chunks' States and
// writes the finished value. Each pass ends with a workgroup reduction: a
// subgroup butterfly (sg_* primitives appended to this file; one-lane
// no-ops without subgroups), then a tree in workgroup memory.
//
// Substitutions: T (input scalar), ACC (accumulator: f32, i32 or u32), OUT
// (output scalar), OP (see below), WG (workgroup size, a power of two),
// LOWEST / HIGHEST (ACC's extreme values, as WGSL expressions).

const OP_SUM: u32 = 0u;
const OP_MEAN: u32 = 1u;
const OP_MAX: u32 = 2u;
const OP_MIN: u32 = 3u;
const OP_PROD: u32 = 4u;
const OP_ARGMAX: u32 = 5u;
const OP_ARGMIN: u32 = 6u;
const OP_VAR: u32 = 7u;
const OP_STD: u32 = 8u;

const OP: u32 = {{OP}};
const WG: u32 = {{WG}};
const NONE: u32 = 0xffffffffu;

// v: running value (sum, extreme, product; Welford mean); w: Welford M2;
// n: arg index (NONE until one is seen) or Welford count.
struct State {
    v: {{ACC}},
    w: {{ACC}},
    n: u32,
}

struct Params {
    k_total: u32,
    rows: u32,
    chunks: u32,
    in_offset: u32,
    out_offset: u32,
    rows_per_y: u32,
    kept_rank: u32,
    red_rank: u32,
    unbiased: u32,
    k_total_f: f32,
    _pad0: u32,
    _pad1: u32,
    kept_shape: array<vec4<u32>, 2>,
    kept_in: array<vec4<i32>, 2>,
    kept_out: array<vec4<i32>, 2>,
    red_shape: array<vec4<u32>, 2>,
    red_in: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read> xv: array<vec4<{{T}}>>;
@group(0) @binding(2) var<storage, read_write> partials: array<State>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read_write> out: array<{{OUT}}>;

var<workgroup> wg_states: array<State, WG>;
var<workgroup> wg_lanes: u32;

fn identity() -> State {
    var s = State({{ACC}}(0), {{ACC}}(0), 0u);
    if (OP == OP_PROD) {
        s.v = {{ACC}}(1);
    } else if (OP == OP_MAX || OP == OP_ARGMAX) {
        s.v = {{LOWEST}};
        s.n = NONE;
    } else if (OP == OP_MIN || OP == OP_ARGMIN) {
        s.v = {{HIGHEST}};
        s.n = NONE;
    }
    return s;
}

// Fold element `k` of the row (value `a`) into `s`; a thread sees its k in increasing order.
fn accumulate(s_in: State, a: {{ACC}}, k: u32) -> State {
    var s = s_in;
    if (OP == OP_SUM || OP == OP_MEAN) {
        s.v += a;
    } else if (OP == OP_MAX) {
        s.v = max(s.v, a);
    } else if (OP == OP_MIN) {
        s.v = min(s.v, a);
    } else if (OP == OP_PROD) {
        s.v *= a;
    } else if (OP == OP_ARGMAX) {
        if (s.n == NONE || a > s.v) {
            s.v = a;
            s.n = k;
        }
    } else if (OP == OP_ARGMIN) {
        if (s.n == NONE || a < s.v) {
            s.v = a;
            s.n = k;
        }
    } else {
        s.n += 1u;
        let d = a - s.v;
        s.v += d / {{ACC}}(s.n);
        s.w += d * (a - s.v);
    }
    return s;
}

// Merge two partial States (order-independent for arg ops: ties go to the lower index).
fn combine(a: State, b: State) -> State {
    var s = a;
    if (OP == OP_SUM || OP == OP_MEAN) {
        s.v = a.v + b.v;
    } else if (OP == OP_MAX) {
        s.v = max(a.v, b.v);
    } else if (OP == OP_MIN) {
        s.v = min(a.v, b.v);
    } else if (OP == OP_PROD) {
        s.v = a.v * b.v;
    } else if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        var better = b.v > a.v;
        if (OP == OP_ARGMIN) {
            better = b.v < a.v;
        }
        if (b.n != NONE && (a.n == NONE || better || (b.v == a.v && b.n < a.n))) {
            s = b;
        }
    } else {
        // Chan et al.'s parallel combination of Welford states.
        let n = a.n + b.n;
        if (b.n == 0u) {
            s = a;
        } else if (a.n == 0u) {
            s = b;
        } else {
            let na = {{ACC}}(a.n);
            let nb = {{ACC}}(b.n);
            let nt = {{ACC}}(n);
            let d = b.v - a.v;
            s.v = a.v + d * (nb / nt);
            s.w = a.w + b.w + d * d * (na * nb / nt);
            s.n = n;
        }
    }
    return s;
}

fn shuffled(s: State, mask: u32) -> State {
    return State(sg_xor_{{ACC}}(s.v, mask), sg_xor_{{ACC}}(s.w, mask), sg_xor_u32(s.n, mask));
}

// The workgroup's combined State, valid in invocation 0.
fn wg_reduce(s_in: State, lid: u32) -> State {
    var s = s_in;
    let lanes = sg_size();
    for (var m = 1u; m < lanes; m = m * 2u) {
        s = combine(s, shuffled(s, m));
    }
    if (lid == 0u) {
        wg_lanes = lanes;
    }
    if (lid % lanes == 0u) {
        wg_states[lid / lanes] = s;
    }
    let n = WG / workgroupUniformLoad(&wg_lanes);
    if (n <= 32u) {
        // Few subgroups: invocation 0 folds their states itself, no more barriers.
        var r = wg_states[0];
        for (var i = 1u; i < n; i++) {
            r = combine(r, wg_states[i]);
        }
        return r;
    }
    var m = n;
    while (m > 1u) {
        let half = m / 2u;
        if (lid < half) {
            wg_states[lid] = combine(wg_states[lid], wg_states[lid + half]);
        }
        workgroupBarrier();
        m = half;
    }
    return wg_states[0];
}

fn dim_u(a: array<vec4<u32>, 2>, d: u32) -> u32 {
    return a[d / 4u][d % 4u];
}
fn dim_i(a: array<vec4<i32>, 2>, d: u32) -> i32 {
    return a[d / 4u][d % 4u];
}

// Element offsets of output row `row` in the input (x) and the output (y).
fn kept_offsets(row: u32) -> vec2<i32> {
    var rem = row;
    var off = vec2<i32>(0, 0);
    for (var d = i32(p.kept_rank) - 1; d >= 0; d--) {
        let n = dim_u(p.kept_shape, u32(d));
        let i = i32(rem % n);
        rem = rem / n;
        off += vec2<i32>(i * dim_i(p.kept_in, u32(d)), i * dim_i(p.kept_out, u32(d)));
    }
    return off;
}

fn reduced_offset(k: u32) -> i32 {
    if (p.red_rank == 1u) {
        return i32(k) * p.red_in[0].x;
    }
    var rem = k;
    var off = 0;
    for (var d = i32(p.red_rank) - 1; d >= 0; d--) {
        let n = dim_u(p.red_shape, u32(d));
        off += i32(rem % n) * dim_i(p.red_in, u32(d));
        rem = rem / n;
    }
    return off;
}

fn row_of(wid: vec3<u32>) -> u32 {
    return wid.z * p.rows_per_y + wid.y;
}

@compute @workgroup_size(WG)
fn reduce_strided(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let base = i32(p.in_offset) + kept_offsets(row).x;
    var s = identity();
    let step = p.chunks * WG;
    for (var k = wid.x * WG + lid; k < p.k_total; k += step) {
        s = accumulate(s, {{ACC}}(x[u32(base + reduced_offset(k))]), k);
    }
    s = wg_reduce(s, lid);
    if (lid == 0u) {
        partials[row * p.chunks + wid.x] = s;
    }
}

// The input's innermost kept dim is contiguous and the reduced dims are
// not: invocation `lid` of workgroup (chunk, block) folds output row
// block * WG + lid on its own, so neighbouring invocations read
// neighbouring elements, and stores its partial without a workgroup step.
@compute @workgroup_size(WG)
fn reduce_columns(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid) * WG + lid;
    if (row >= p.rows) {
        return;
    }
    let base = i32(p.in_offset) + kept_offsets(row).x;
    var s = identity();
    for (var k = wid.x; k < p.k_total; k += p.chunks) {
        s = accumulate(s, {{ACC}}(x[u32(base + reduced_offset(k))]), k);
    }
    partials[row * p.chunks + wid.x] = s;
}

fn accumulate4(s_in: State, v: vec4<{{T}}>, k: u32) -> State {
    let a = vec4<{{ACC}}>(v);
    if (OP == OP_SUM || OP == OP_MEAN) {
        // Pairwise: a shorter dependency chain, and a little more accurate.
        var s = s_in;
        s.v += (a.x + a.y) + (a.z + a.w);
        return s;
    }
    let s = s_in;
    return accumulate(accumulate(accumulate(accumulate(s, a.x, k), a.y, k + 1u), a.z, k + 2u), a.w, k + 3u);
}

// The reduced range is contiguous and each row starts 4-aligned: vec4 loads,
// four in flight per iteration, scalar loads for the last K % 4.
@compute @workgroup_size(WG)
fn reduce_vec4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let base = u32(i32(p.in_offset) + kept_offsets(row).x);
    let base4 = base / 4u;
    let k4 = p.k_total / 4u;
    var s = identity();
    let step = p.chunks * WG;
    var i = wid.x * WG + lid;
    for (; i + 3u * step < k4; i += 4u * step) {
        let a = xv[base4 + i];
        let b = xv[base4 + i + step];
        let c = xv[base4 + i + 2u * step];
        let d = xv[base4 + i + 3u * step];
        s = accumulate4(s, a, 4u * i);
        s = accumulate4(s, b, 4u * (i + step));
        s = accumulate4(s, c, 4u * (i + 2u * step));
        s = accumulate4(s, d, 4u * (i + 3u * step));
    }
    for (; i < k4; i += step) {
        s = accumulate4(s, xv[base4 + i], 4u * i);
    }
    let tail = 4u * k4 + lid;
    if (wid.x == 0u && tail < p.k_total) {
        s = accumulate(s, {{ACC}}(x[base + tail]), tail);
    }
    s = wg_reduce(s, lid);
    if (lid == 0u) {
        partials[row * p.chunks + wid.x] = s;
    }
}

fn nan_f32() -> f32 {
    return bitcast<f32>(0x7fc00000u);
}

fn finish(s: State) -> {{OUT}} {
    if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        return {{OUT}}(s.n);
    }
    var r = f32(s.v);
    if (OP == OP_MEAN) {
        r = select(nan_f32(), r / p.k_total_f, p.k_total > 0u);
    } else if (OP == OP_VAR || OP == OP_STD) {
        let denom = f32(s.n) - f32(p.unbiased);
        r = select(nan_f32(), f32(s.w) / denom, denom > 0.0);
        if (OP == OP_STD) {
            r = sqrt(r);
        }
    } else {
        return {{OUT}}(s.v);
    }
    return {{OUT}}(r);
}

@compute @workgroup_size(WG)
fn reduce_finish(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    var s = identity();
    for (var c = lid; c < p.chunks; c += WG) {
        s = combine(s, partials[row * p.chunks + c]);
    }
    s = wg_reduce(s, lid);
    if (lid == 0u) {
        out[u32(i32(p.out_offset) + kept_offsets(row).y)] = finish(s);
    }
}
