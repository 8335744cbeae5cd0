// Column reductions: the outputs are contiguous in the input. The host
// orders the input's dims as [outer kept..., reduced..., inner kept] where
// the inner kept dim (C columns) has stride 1 and every reduced dim a
// larger one, so neighbouring invocations own neighbouring columns and read
// neighbouring memory at every step while each walks its reduced range.
//
// Prelude slots: T (input and output element), A (accumulator: f32 for
// floats, else T). Overrides: OP (the operation, codes below); RG (row
// groups: the workgroup's WG invocations are RG groups of WG / RG units,
// each group folding its share of the chunk's rows, merged through
// workgroup memory: RG times the loads in flight for the same partials,
// for shapes with too few columns to fill the GPU otherwise).
//
// Entry points (grid: x = chunk, y and z = blocks of WG / RG units):
//   columns      one column per invocation, four reduced rows per step
//   columns4     four columns per invocation (vec4 loads; C % 4 == 0 and
//                every offset and stride a multiple of 4)
//   columns_dev, columns_dev4: the same, folding x - mean(column) for
//                OP_VAR / OP_STD (the means from `means`)
//   finish       one invocation per output: folds the chunks' partials
//                and writes y (finish_index: y_index, for the arg ops;
//                finish_mean: the column means into `means`)
// Chunk c folds reduced indices [c * chunk_len, (c + 1) * chunk_len) into
// parts[c * rows + row]; the host keeps chunk_len and chunks small enough
// for lavapipe's cap on loop iterations per invocation.
//
// The partial states, their numerics and the OP codes are in
// reduce_state.wgsl, appended to this file.

const WG: u32 = 256u;
override RG: u32 = 1u;
// Units (columns, or groups of four) per workgroup.
override UNITS: u32 = WG / RG;
// States of groups 1.. RG-1, merged by group 0 (at least one entry).
override GROUP_STATES: u32 = max(1u, WG - WG / RG);
var<workgroup> group_states: array<State, GROUP_STATES>;

struct Params {
    rows: u32,
    cols: u32,
    k_total: u32,
    chunks: u32,
    chunk_len: u32,
    in_offset: u32,
    out_offset: u32,
    blocks_per_y: u32,
    outer_rank: u32,
    red_rank: u32,
    unbiased: u32,
    k_total_f: f32,
    zero: u32, // 0, unknown to the compiler: see opaque()
    lowest: u32, // bits of A's lowest value (-inf for floats)
    highest: u32, // bits of A's highest value
    out_stride: i32, // the output's stride along the columns
    outer_shape: array<vec4<u32>, 2>,
    outer_in: array<vec4<i32>, 2>,
    outer_out: array<vec4<i32>, 2>,
    red_shape: array<vec4<u32>, 2>,
    red_in: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(3) var<storage, read_write> parts: array<Part>;
@group(0) @binding(4) var<storage, read_write> means: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<T>;
@group(0) @binding(6) var<storage, read_write> y_index: array<i32>;

// Offsets in the input (x) and output (y) of outer kept index `o`.
fn outer_offsets(o: u32) -> vec2<i32> {
    var rem = o;
    var off = vec2<i32>(0, 0);
    for (var d = i32(p.outer_rank) - 1; d >= 0; d--) {
        let n = dim_u(p.outer_shape, u32(d));
        let i = i32(rem % n);
        rem = rem / n;
        off += vec2<i32>(i * dim_i(p.outer_in, u32(d)), i * dim_i(p.outer_out, u32(d)));
    }
    return off;
}

// Input offset of reduced index k's outer reduced dims (all but the last).
fn run_offset(k_outer: u32) -> i32 {
    var rem = k_outer;
    var off = 0;
    for (var d = i32(p.red_rank) - 2; d >= 0; d--) {
        let n = dim_u(p.red_shape, u32(d));
        off += i32(rem % n) * dim_i(p.red_in, u32(d));
        rem = rem / n;
    }
    return off;
}

fn invocation(wid: vec3<u32>, lid: u32) -> u32 {
    return (wid.z * p.blocks_per_y + wid.y) * WG + lid;
}

// The unit (column or group of four) of a split entry's invocation.
fn unit_of(wid: vec3<u32>, lid: u32) -> u32 {
    return (wid.z * p.blocks_per_y + wid.y) * UNITS + lid % UNITS;
}

// The reduced rows [k0, k1) that invocation `lid` folds of chunk `chunk`.
fn group_range(chunk: u32, lid: u32) -> vec2<u32> {
    let c0 = chunk * p.chunk_len;
    let c1 = min(c0 + p.chunk_len, p.k_total);
    let share = (c1 - c0 + RG - 1u) / RG;
    let g = lid / UNITS;
    return vec2<u32>(min(c0 + g * share, c1), min(c0 + (g + 1u) * share, c1));
}

// The group states of the workgroup merged into group 0's (uniform
// control flow: every invocation calls it).
fn merge_groups(s: State, lid: u32) -> State {
    var r = s;
    if (RG > 1u) {
        if (lid >= UNITS) {
            group_states[lid - UNITS] = s;
        }
        workgroupBarrier();
        if (lid < UNITS) {
            for (var g = 1u; g < RG; g++) {
                r = combine(r, group_states[(g - 1u) * UNITS + lid]);
            }
        }
    }
    return r;
}

// Fold reduced rows `range` for the column at input offset `base`, four reduced rows a step (one per lane of the state).
// Runs of the innermost reduced dim; one decode of the others per run.
fn fold(base: i32, range: vec2<u32>, shift: vec4<A>) -> State {
    var s = identity();
    let k0 = range.x;
    let k1 = range.y;
    let n_in = dim_u(p.red_shape, p.red_rank - 1u);
    let s_in = dim_i(p.red_in, p.red_rank - 1u);
    var k = k0;
    while (k < k1) {
        let j0 = k % n_in;
        let end = min(k1, k - j0 + n_in);
        var off = base + run_offset(k / n_in) + i32(j0) * s_in;
        for (; k < end; k += 4u) {
            let kk = vec4<u32>(k) + vec4<u32>(0u, 1u, 2u, 3u);
            let m = kk < vec4<u32>(end);
            // Rows past the run load row k again (in bounds), masked off.
            let o = vec4<i32>(off) + vec4<i32>(select(vec4<u32>(0u), vec4<u32>(0u, 1u, 2u, 3u), m)) * s_in;
            let a = vec4<A>(A(x[u32(o.x)]), A(x[u32(o.y)]), A(x[u32(o.z)]), A(x[u32(o.w)]));
            s = accumulate(s, a, kk, m, shift);
            off += 4 * s_in;
        }
        k = end;
    }
    return s;
}

// The same for the four columns from input offset `base` (a multiple of
// 4), one vec4 per row.
fn fold4(base: i32, range: vec2<u32>, shift: vec4<A>) -> State {
    var s = identity();
    let k0 = range.x;
    let k1 = range.y;
    let n_in = dim_u(p.red_shape, p.red_rank - 1u);
    let s_in = dim_i(p.red_in, p.red_rank - 1u);
    var k = k0;
    while (k < k1) {
        let j0 = k % n_in;
        let end = min(k1, k - j0 + n_in);
        var off = base + run_offset(k / n_in) + i32(j0) * s_in;
        // Four rows' loads in flight before their (dependent) folds: one
        // load at a time left an H200 at 42% of its bandwidth.
        for (; k + 4u <= end; k += 4u) {
            let a0 = vec4<A>(x4[u32(off) / 4u]);
            let a1 = vec4<A>(x4[u32(off + s_in) / 4u]);
            let a2 = vec4<A>(x4[u32(off + 2 * s_in) / 4u]);
            let a3 = vec4<A>(x4[u32(off + 3 * s_in) / 4u]);
            s = accumulate(s, a0, vec4<u32>(k), vec4<bool>(true), shift);
            s = accumulate(s, a1, vec4<u32>(k + 1u), vec4<bool>(true), shift);
            s = accumulate(s, a2, vec4<u32>(k + 2u), vec4<bool>(true), shift);
            s = accumulate(s, a3, vec4<u32>(k + 3u), vec4<bool>(true), shift);
            off += 4 * s_in;
        }
        for (; k < end; k++) {
            s = accumulate(s, vec4<A>(x4[u32(off) / 4u]), vec4<u32>(k), vec4<bool>(true), shift);
            off += s_in;
        }
    }
    return s;
}

// Column `row` (of rows = outer * cols) in the input.
fn column_base(row: u32) -> i32 {
    return i32(p.in_offset) + outer_offsets(row / p.cols).x + i32(row % p.cols);
}

fn store_one(row: u32, chunk: u32, s: State) {
    parts[chunk * p.rows + row] = part_of(collapse(s), 0u);
}

fn store_four(row: u32, chunk: u32, s: State) {
    for (var i = 0u; i < 4u; i++) {
        parts[chunk * p.rows + row + i] = part_of(s, i);
    }
}

// The split entries: every invocation reaches merge_groups' barrier; a
// unit past the columns folds nothing (an empty range) and stores nothing.
@compute @workgroup_size(WG)
fn columns(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = unit_of(wid, lid);
    let live = row < p.rows;
    let range = select(vec2<u32>(0u), group_range(wid.x, lid), live);
    let s = merge_groups(fold(column_base(min(row, p.rows - 1u)), range, vec4<A>(A(0))), lid);
    if (live && lid < UNITS) {
        store_one(row, wid.x, s);
    }
}

@compute @workgroup_size(WG)
fn columns4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = unit_of(wid, lid) * 4u;
    let live = row < p.rows;
    let range = select(vec2<u32>(0u), group_range(wid.x, lid), live);
    let s = merge_groups(fold4(column_base(min(row, p.rows - 4u)), range, vec4<A>(A(0))), lid);
    if (live && lid < UNITS) {
        store_four(row, wid.x, s);
    }
}

@compute @workgroup_size(WG)
fn columns_dev(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = unit_of(wid, lid);
    let live = row < p.rows;
    let r = min(row, p.rows - 1u);
    let range = select(vec2<u32>(0u), group_range(wid.x, lid), live);
    let shift = vec4<A>(A(means[r]));
    let s = merge_groups(fold(column_base(r), range, shift), lid);
    if (live && lid < UNITS) {
        store_one(row, wid.x, s);
    }
}

@compute @workgroup_size(WG)
fn columns_dev4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = unit_of(wid, lid) * 4u;
    let live = row < p.rows;
    let r = min(row, p.rows - 4u);
    let range = select(vec2<u32>(0u), group_range(wid.x, lid), live);
    let shift = vec4<A>(A(means[r]), A(means[r + 1u]), A(means[r + 2u]), A(means[r + 3u]));
    let s = merge_groups(fold4(column_base(r), range, shift), lid);
    if (live && lid < UNITS) {
        store_four(row, wid.x, s);
    }
}

// The chunks' partials of output `row`, combined.
fn gather_parts(row: u32) -> Part {
    var s = identity();
    for (var c = 0u; c < p.chunks; c++) {
        s = combine(s, state_of(parts[c * p.rows + row]));
    }
    return part_of(s, 0u);
}

fn out_index(row: u32) -> u32 {
    let o = outer_offsets(row / p.cols).y + i32(row % p.cols) * p.out_stride;
    return u32(i32(p.out_offset) + o);
}

@compute @workgroup_size(WG)
fn finish(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = invocation(wid, lid);
    if (row >= p.rows) {
        return;
    }
    y[out_index(row)] = T(finish_value(gather_parts(row)));
}

@compute @workgroup_size(WG)
fn finish_index(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = invocation(wid, lid);
    if (row >= p.rows) {
        return;
    }
    y_index[out_index(row)] = i32(gather_parts(row).n);
}

@compute @workgroup_size(WG)
fn finish_mean(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = invocation(wid, lid);
    if (row >= p.rows) {
        return;
    }
    means[row] = mean_of(gather_parts(row));
}
