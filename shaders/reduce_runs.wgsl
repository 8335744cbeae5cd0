// Run reductions: the innermost reduced dim is contiguous in the input (a
// run of `run` elements, stride 1), as in a reduction over axes 0, 2, 3 of
// NCHW (runs of H * W, one per image and channel) or over the planes of a
// global average pool. A team of G neighbouring invocations owns one output
// and reads its runs side by side, so every load of a warp is coalesced
// however the outputs lie; a workgroup holds WG / G teams, so short runs
// still fill it. Outputs with few teams split their runs into chunks whose
// partials `finish` merges.
//
// Prelude slots: T (input and output element), A (accumulator: f32 for
// floats, else T). Overrides: OP (reduce_state.wgsl's codes; not the arg
// ops), G (lanes per team, a power of two, 4 to WG).
//
// Entry points (grid: x = chunk, y and z = workgroups of teams):
//   runs          scalar loads, four in flight per step
//   runs4         vec4 loads, two in flight per step (run % 4 == 0 and every
//                 offset and stride a multiple of 4)
//   runs_mean, runs_mean4: OP_MEAN's pass of OP_VAR / OP_STD, into `means`
//   runs_dev, runs_dev4: OP_VAR / OP_STD folding x - means[output]
//   finish        one invocation per output: merges the chunks' partials
//                 into y (finish_mean: into `means`)
// With p.direct the split entries write the finished value themselves
// (one chunk, and y not in the input's buffer).
//
// The partial states, their numerics and the OP codes are in
// reduce_state.wgsl, appended to this file.

const WG: u32 = 256u;
override G: u32 = 64u;

struct Params {
    rows: u32, // outputs
    run: u32, // elements of a run
    k_total: u32,
    chunks: u32,
    chunk_runs: u32, // runs per chunk
    runs: u32, // runs per output
    in_offset: u32,
    out_offset: u32,
    groups_per_y: u32,
    kept_rank: u32,
    red_rank: u32, // reduced dims other than the run's
    unbiased: u32,
    k_total_f: f32,
    zero: u32, // 0, unknown to the compiler: see opaque()
    lowest: u32, // bits of A's lowest value (-inf for floats)
    highest: u32, // bits of A's highest value
    direct: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    kept_shape: array<vec4<u32>, 2>,
    kept_in: array<vec4<i32>, 2>,
    kept_out: array<vec4<i32>, 2>,
    red_shape: array<vec4<u32>, 2>,
    red_in: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(3) var<storage, read_write> parts: array<Part>;
@group(0) @binding(4) var<storage, read_write> means: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<T>;

// The teams' lane states, for the tree that merges them.
var<workgroup> sh_v: array<A, WG>;
var<workgroup> sh_w: array<A, WG>;
var<workgroup> sh_cv: array<A, WG>;
var<workgroup> sh_cw: array<A, WG>;

// Offsets in the input (x) and output (y) of output `o`.
fn kept_offsets(o: u32) -> vec2<i32> {
    var rem = o;
    var off = vec2<i32>(0, 0);
    for (var d = i32(p.kept_rank) - 1; d >= 0; d--) {
        let n = dim_u(p.kept_shape, u32(d));
        let i = i32(rem % n);
        rem = rem / n;
        off += vec2<i32>(i * dim_i(p.kept_in, u32(d)), i * dim_i(p.kept_out, u32(d)));
    }
    return off;
}

// Input offset of run `m` of an output.
fn run_offset(m: u32) -> i32 {
    var rem = m;
    var off = 0;
    for (var d = i32(p.red_rank) - 1; d >= 0; d--) {
        let n = dim_u(p.red_shape, u32(d));
        off += i32(rem % n) * dim_i(p.red_in, u32(d));
        rem = rem / n;
    }
    return off;
}

// Lane t's share of chunk `chunk` of the output at input offset `base`:
// elements t, t + G, ... of each run, four a step.
fn fold(base: i32, t: u32, chunk: u32, shift: vec4<A>) -> State {
    var s = identity();
    let m1 = min((chunk + 1u) * p.chunk_runs, p.runs);
    for (var m = chunk * p.chunk_runs; m < m1; m++) {
        let off = base + run_offset(m);
        for (var j = t; j < p.run; j += 4u * G) {
            let jj = vec4<u32>(j) + vec4<u32>(0u, G, 2u * G, 3u * G);
            let ok = jj < vec4<u32>(p.run);
            // Elements past the run load the run's first (in bounds), masked off.
            let o = vec4<u32>(vec4<i32>(off) + vec4<i32>(select(vec4<u32>(0u), jj, ok)));
            let a = vec4<A>(A(x[o.x]), A(x[o.y]), A(x[o.z]), A(x[o.w]));
            s = accumulate(s, a, jj, ok, shift);
        }
    }
    return s;
}

// The same with vec4 loads (vec4s t, t + G, ... of each run), two a step.
fn fold4(base: i32, t: u32, chunk: u32, shift: vec4<A>) -> State {
    var s = identity();
    let m1 = min((chunk + 1u) * p.chunk_runs, p.runs);
    let n4 = p.run / 4u;
    for (var m = chunk * p.chunk_runs; m < m1; m++) {
        let off4 = u32(base + run_offset(m)) / 4u;
        for (var j = t; j < n4; j += 2u * G) {
            let ok = j + G < n4;
            let a0 = vec4<A>(x4[off4 + j]);
            let a1 = vec4<A>(x4[off4 + select(j, j + G, ok)]);
            s = accumulate(s, a0, vec4<u32>(j), vec4<bool>(true), shift);
            s = accumulate(s, a1, vec4<u32>(j + G), vec4<bool>(ok), shift);
        }
    }
    return s;
}

// The output of invocation `lid` of workgroup `wid` (possibly >= p.rows).
fn output_of(wid: vec3<u32>, lid: u32) -> u32 {
    return (wid.z * p.groups_per_y + wid.y) * (WG / G) + lid / G;
}

// Input offset of output `row`'s elements (the first output's for lanes
// of outputs past the end: they fold nothing).
fn output_base(row: u32) -> i32 {
    return i32(p.in_offset) + kept_offsets(min(row, p.rows - 1u)).x;
}

// The chunk of this lane's output, scalar loads.
fn lane_state(wid: vec3<u32>, lid: u32, shift: A) -> State {
    let row = output_of(wid, lid);
    if (row >= p.rows) {
        return identity();
    }
    return fold(output_base(row), lid % G, wid.x, vec4<A>(shift));
}

// The same with vec4 loads.
fn lane_state4(wid: vec3<u32>, lid: u32, shift: A) -> State {
    let row = output_of(wid, lid);
    if (row >= p.rows) {
        return identity();
    }
    return fold4(output_base(row), lid % G, wid.x, vec4<A>(shift));
}

// The lane states of each team merged by a tree in workgroup memory; lane 0
// of a team returns its output's part. Every lane of the workgroup must
// call it (barriers).
fn team_part(lane: State, lid: u32) -> Part {
    let t = lid % G;
    var s = collapse(lane);
    for (var stride = G / 2u; stride > 0u; stride /= 2u) {
        sh_v[lid] = s.v.x;
        sh_w[lid] = s.w.x;
        sh_cv[lid] = s.cv.x;
        sh_cw[lid] = s.cw.x;
        workgroupBarrier();
        if (t < stride) {
            let o = lid + stride;
            s = combine(s, state_of(Part(sh_v[o], sh_w[o], sh_cv[o], sh_cw[o], NONE)));
        }
        workgroupBarrier();
    }
    return part_of(s, 0u);
}

fn out_index(row: u32) -> u32 {
    return u32(i32(p.out_offset) + kept_offsets(row).y);
}

// Where lane 0 of a team leaves its part: finished in y, or in the partials.
fn store_value(wid: vec3<u32>, lid: u32, q: Part) {
    let row = output_of(wid, lid);
    if (lid % G != 0u || row >= p.rows) {
        return;
    }
    if (p.direct != 0u) {
        y[out_index(row)] = T(finish_value(q));
    } else {
        parts[wid.x * p.rows + row] = q;
    }
}

fn store_mean(wid: vec3<u32>, lid: u32, q: Part) {
    let row = output_of(wid, lid);
    if (lid % G != 0u || row >= p.rows) {
        return;
    }
    if (p.direct != 0u) {
        means[row] = mean_of(q);
    } else {
        parts[wid.x * p.rows + row] = q;
    }
}

fn mean_shift(wid: vec3<u32>, lid: u32) -> A {
    return A(means[min(output_of(wid, lid), p.rows - 1u)]);
}

@compute @workgroup_size(WG)
fn runs(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    store_value(wid, lid, team_part(lane_state(wid, lid, A(0)), lid));
}

@compute @workgroup_size(WG)
fn runs4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    store_value(wid, lid, team_part(lane_state4(wid, lid, A(0)), lid));
}

@compute @workgroup_size(WG)
fn runs_mean(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    store_mean(wid, lid, team_part(lane_state(wid, lid, A(0)), lid));
}

@compute @workgroup_size(WG)
fn runs_mean4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    store_mean(wid, lid, team_part(lane_state4(wid, lid, A(0)), lid));
}

@compute @workgroup_size(WG)
fn runs_dev(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    store_value(wid, lid, team_part(lane_state(wid, lid, mean_shift(wid, lid)), lid));
}

@compute @workgroup_size(WG)
fn runs_dev4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    store_value(wid, lid, team_part(lane_state4(wid, lid, mean_shift(wid, lid)), lid));
}

// The chunks' partials of output `row`, merged.
fn gather_parts(row: u32) -> Part {
    var s = identity();
    for (var c = 0u; c < p.chunks; c++) {
        s = combine(s, state_of(parts[c * p.rows + row]));
    }
    return part_of(s, 0u);
}

@compute @workgroup_size(WG)
fn finish(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = (wid.z * p.groups_per_y + wid.y) * WG + lid;
    if (row < p.rows) {
        y[out_index(row)] = T(finish_value(gather_parts(row)));
    }
}

@compute @workgroup_size(WG)
fn finish_mean(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = (wid.z * p.groups_per_y + wid.y) * WG + lid;
    if (row < p.rows) {
        means[row] = mean_of(gather_parts(row));
    }
}
