// Column reductions: the outputs are contiguous in the input. The host
// orders the input's dims as [outer kept..., reduced..., inner kept] where
// the inner kept dim (C columns) has stride 1 and every reduced dim a
// larger one, so neighbouring invocations own neighbouring columns and read
// neighbouring memory at every step while each walks its reduced range.
//
// Prelude slots: T (input and output element), A (accumulator: f32 for
// floats, else T). Override: OP (the operation, codes below).
//
// Entry points (grid: x = chunk, y and z = blocks of WG invocations):
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
// Numerics as reduce.wgsl: compensated sums (error-free two_sum, made
// opaque to drivers that reassociate), NaN by bit pattern, NaN propagates
// through MAX / MIN, ARGMAX / ARGMIN pick the first NaN and ties go to the
// lower index, variance from deviations around a correctly rounded mean.

const OP_SUM: u32 = 0u;
const OP_MEAN: u32 = 1u;
const OP_MAX: u32 = 2u;
const OP_MIN: u32 = 3u;
const OP_PROD: u32 = 4u;
const OP_ARGMAX: u32 = 5u;
const OP_ARGMIN: u32 = 6u;
const OP_VAR: u32 = 7u;
const OP_STD: u32 = 8u;

override OP: u32 = 0u;

const WG: u32 = 256u;
const NONE: u32 = 0xffffffffu;
// Whether A is f32 (integer conversions truncate 0.5 to 0).
const FLOAT: bool = A(0.5) != A(0);

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

// A partial result of one column: v running value, w sum of squared
// deviations, cv / cw the rounding errors of v / w, n the arg index.
struct Part {
    v: A,
    w: A,
    cv: A,
    cw: A,
    n: u32,
}

// Four partial results side by side: four columns (columns4) or four
// interleaved subsets of one column's rows (columns).
struct State {
    v: vec4<A>,
    w: vec4<A>,
    cv: vec4<A>,
    cw: vec4<A>,
    n: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(3) var<storage, read_write> parts: array<Part>;
@group(0) @binding(4) var<storage, read_write> means: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<T>;
@group(0) @binding(6) var<storage, read_write> y_index: array<i32>;

fn identity() -> State {
    var v = vec4<A>(A(0));
    var n = vec4<u32>(0u);
    if (OP == OP_PROD) {
        v = vec4<A>(A(1));
    } else if (OP == OP_MAX || OP == OP_ARGMAX) {
        v = vec4<A>(bitcast<A>(p.lowest));
        n = vec4<u32>(NONE);
    } else if (OP == OP_MIN || OP == OP_ARGMIN) {
        v = vec4<A>(bitcast<A>(p.highest));
        n = vec4<u32>(NONE);
    }
    let z = vec4<A>(A(0));
    return State(v, z, z, z, n);
}

// By bits: drivers may assume that no NaN occurs and fold comparisons.
fn is_nan(a: vec4<A>) -> vec4<bool> {
    return vec4<bool>(FLOAT) & ((bitcast<vec4<u32>>(a) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u));
}
fn is_finite1(a: A) -> bool {
    return !FLOAT || (bitcast<u32>(a) & 0x7f800000u) != 0x7f800000u;
}

// a, through an integer OR with a zero the compiler cannot see: drivers
// that treat float additions as associative (Mesa's NIR does) would
// otherwise simplify two_sum's error term to 0.
fn opaque(a: vec4<A>) -> vec4<A> {
    return bitcast<vec4<A>>(bitcast<vec4<u32>>(a) | vec4<u32>(p.zero));
}

struct Sum2 {
    s: vec4<A>,
    e: vec4<A>,
}

// a + b and its exact rounding error (Fast2Sum on the operands ordered by
// magnitude; 0 for integers).
fn two_sum(a: vec4<A>, b: vec4<A>) -> Sum2 {
    let a_big = abs(a) >= abs(b);
    let hi = select(b, a, a_big);
    let lo = select(a, b, a_big);
    let s = opaque(hi + lo);
    return Sum2(s, lo - (s - hi));
}

// max and min that return NaN when either operand is NaN.
fn max_nan(a: vec4<A>, b: vec4<A>) -> vec4<A> {
    return select(max(a, b), a + b, is_nan(a) | is_nan(b));
}
fn min_nan(a: vec4<A>, b: vec4<A>) -> vec4<A> {
    return select(min(a, b), a + b, is_nan(a) | is_nan(b));
}

// ARGMAX / ARGMIN order: NaN before everything, then the larger (ARGMAX)
// or smaller (ARGMIN) value.
fn arg_before(a: vec4<A>, b: vec4<A>) -> vec4<bool> {
    let better = select((a < b), (a > b), OP == OP_ARGMAX);
    return !is_nan(b) & (is_nan(a) | better);
}
fn arg_tied(a: vec4<A>, b: vec4<A>) -> vec4<bool> {
    return (is_nan(a) & is_nan(b)) | (!is_nan(a) & !is_nan(b) & (a == b));
}

// Fold values `a` (reduced indices `k`) into the lanes of `s` where `m`;
// `shift` is the columns' mean for OP_VAR / OP_STD.
fn accumulate(s_in: State, a: vec4<A>, k: vec4<u32>, m: vec4<bool>, shift: vec4<A>) -> State {
    var s = s_in;
    if (OP == OP_SUM || OP == OP_MEAN) {
        let t = two_sum(s.v, a);
        s.v = select(s.v, t.s, m);
        s.cv = select(s.cv, s.cv + t.e, m);
    } else if (OP == OP_MAX) {
        s.v = select(s.v, max_nan(s.v, a), m);
    } else if (OP == OP_MIN) {
        s.v = select(s.v, min_nan(s.v, a), m);
    } else if (OP == OP_PROD) {
        s.v = select(s.v, s.v * a, m);
    } else if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        // Each lane sees its indices in increasing order: only a strictly
        // better value replaces the first one seen.
        let take = m & ((s.n == vec4<u32>(NONE)) | arg_before(a, s.v));
        s.v = select(s.v, a, take);
        s.n = select(s.n, k, take);
    } else {
        let d = a - shift;
        let t = two_sum(s.v, d);
        let u = two_sum(s.w, d * d);
        s.v = select(s.v, t.s, m);
        s.cv = select(s.cv, s.cv + t.e, m);
        s.w = select(s.w, u.s, m);
        s.cw = select(s.cw, s.cw + u.e, m);
    }
    return s;
}

// Merge two states lane by lane (order-independent for the arg ops: ties
// go to the lower index).
fn combine(a: State, b: State) -> State {
    var s = a;
    if (OP == OP_SUM || OP == OP_MEAN || OP == OP_VAR || OP == OP_STD) {
        let t = two_sum(a.v, b.v);
        s.v = t.s;
        s.cv = a.cv + b.cv + t.e;
        if (OP == OP_VAR || OP == OP_STD) {
            let u = two_sum(a.w, b.w);
            s.w = u.s;
            s.cw = a.cw + b.cw + u.e;
        }
    } else if (OP == OP_MAX) {
        s.v = max_nan(a.v, b.v);
    } else if (OP == OP_MIN) {
        s.v = min_nan(a.v, b.v);
    } else if (OP == OP_PROD) {
        s.v = a.v * b.v;
    } else if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        let none_a = a.n == vec4<u32>(NONE);
        let none_b = b.n == vec4<u32>(NONE);
        let take = !none_b & (none_a | arg_before(b.v, a.v) | (arg_tied(a.v, b.v) & (b.n < a.n)));
        s.v = select(a.v, b.v, take);
        s.n = select(a.n, b.n, take);
    }
    return s;
}

// Lane i of `s` in lane 0 of a state whose other lanes are the identity.
fn lane(s: State, i: u32) -> State {
    var r = identity();
    r.v.x = s.v[i];
    r.w.x = s.w[i];
    r.cv.x = s.cv[i];
    r.cw.x = s.cw[i];
    r.n.x = s.n[i];
    return r;
}

fn part_of(s: State, i: u32) -> Part {
    return Part(s.v[i], s.w[i], s.cv[i], s.cw[i], s.n[i]);
}

fn dim_u(a: array<vec4<u32>, 2>, d: u32) -> u32 {
    return a[d / 4u][d % 4u];
}
fn dim_i(a: array<vec4<i32>, 2>, d: u32) -> i32 {
    return a[d / 4u][d % 4u];
}

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

// Fold this invocation's share of chunk `chunk` for the column at input
// offset `base`, four reduced rows a step (one per lane of the state).
// Runs of the innermost reduced dim; one decode of the others per run.
fn fold(base: i32, chunk: u32, shift: vec4<A>) -> State {
    var s = identity();
    let k0 = chunk * p.chunk_len;
    let k1 = min(k0 + p.chunk_len, p.k_total);
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
// 4), one vec4 a step.
fn fold4(base: i32, chunk: u32, shift: vec4<A>) -> State {
    var s = identity();
    let k0 = chunk * p.chunk_len;
    let k1 = min(k0 + p.chunk_len, p.k_total);
    let n_in = dim_u(p.red_shape, p.red_rank - 1u);
    let s_in = dim_i(p.red_in, p.red_rank - 1u);
    var k = k0;
    while (k < k1) {
        let j0 = k % n_in;
        let end = min(k1, k - j0 + n_in);
        var off = base + run_offset(k / n_in) + i32(j0) * s_in;
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
    var r = lane(s, 0u);
    for (var i = 1u; i < 4u; i++) {
        r = combine(r, lane(s, i));
    }
    parts[chunk * p.rows + row] = part_of(r, 0u);
}

fn store_four(row: u32, chunk: u32, s: State) {
    for (var i = 0u; i < 4u; i++) {
        parts[chunk * p.rows + row + i] = part_of(s, i);
    }
}

@compute @workgroup_size(WG)
fn columns(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = invocation(wid, lid);
    if (row >= p.rows) {
        return;
    }
    store_one(row, wid.x, fold(column_base(row), wid.x, vec4<A>(A(0))));
}

@compute @workgroup_size(WG)
fn columns4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = invocation(wid, lid) * 4u;
    if (row >= p.rows) {
        return;
    }
    store_four(row, wid.x, fold4(column_base(row), wid.x, vec4<A>(A(0))));
}

@compute @workgroup_size(WG)
fn columns_dev(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = invocation(wid, lid);
    if (row >= p.rows) {
        return;
    }
    let shift = vec4<A>(A(means[row]));
    store_one(row, wid.x, fold(column_base(row), wid.x, shift));
}

@compute @workgroup_size(WG)
fn columns_dev4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = invocation(wid, lid) * 4u;
    if (row >= p.rows) {
        return;
    }
    let shift = vec4<A>(A(means[row]), A(means[row + 1u]), A(means[row + 2u]), A(means[row + 3u]));
    store_four(row, wid.x, fold4(column_base(row), wid.x, shift));
}

fn nan_f32() -> f32 {
    return bitcast<f32>(0x7fc00000u);
}

// A compensated sum's value: the error term is meaningless once the sum is
// infinite or NaN, and must not turn inf into NaN.
fn total(sum: A, err: A) -> A {
    return select(sum, sum + err, is_finite1(sum));
}

// The column's sum over n, rounded once. Adapters may divide to within a
// few ulps (Vulkan allows 2.5), so one correction step with the exact
// remainder follows: n equal values have exactly that value as their mean.
fn mean_of(s: Part) -> f32 {
    let n = p.k_total_f;
    let hi = f32(s.v);
    let q = f32(total(s.v, s.cv)) / n;
    let r = fma(-q, n, hi) + f32(s.cv);
    let finite = (bitcast<u32>(q) & 0x7f800000u) != 0x7f800000u;
    return select(nan_f32(), select(q, q + r / n, finite), p.k_total > 0u);
}

fn finish_value(s: Part) -> A {
    if (OP == OP_SUM) {
        return total(s.v, s.cv);
    }
    if (OP == OP_MEAN) {
        return A(mean_of(s));
    }
    if (OP == OP_VAR || OP == OP_STD) {
        let n = p.k_total_f;
        let s1 = f32(total(s.v, s.cv));
        let denom = n - f32(p.unbiased);
        var r = (f32(total(s.w, s.cw)) - s1 * (s1 / n)) / denom;
        // Rounding can leave a zero variance slightly negative.
        r = select(r, 0.0, r < 0.0 && (bitcast<u32>(r) & 0x7fffffffu) <= 0x7f800000u);
        r = select(nan_f32(), r, denom > 0.0);
        if (OP == OP_STD) {
            r = sqrt(r);
        }
        return A(r);
    }
    return s.v;
}

// The chunks' partials of output `row`, combined.
fn gather_parts(row: u32) -> Part {
    var s = identity();
    for (var c = 0u; c < p.chunks; c++) {
        let q = parts[c * p.rows + row];
        var t = identity();
        t.v.x = q.v;
        t.w.x = q.w;
        t.cv.x = q.cv;
        t.cw.x = q.cw;
        t.n.x = q.n;
        s = combine(s, t);
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
