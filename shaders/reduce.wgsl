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
// Variance and standard deviation take two such reductions: OP_SHIFT
// stores each row's mean after the partials (partials[rows * chunks + row]),
// then OP_VAR / OP_STD sum (x - mean) and (x - mean)^2 and finish with
// (S2 - S1^2 / n) / (n - ddof), exact whatever the mean's rounding error.
//
// Float sums are compensated: a State carries the rounding error of each
// running sum (an error-free addition), and partial States merge their
// sums error-free too.
// NaN propagates through MAX and MIN; ARGMAX and ARGMIN pick the first NaN.
//
// Kernel spec families "reduce" (src/ops/reduce.rs), one per accumulator
// type and workgroup-reduction strategy (reduce_wg_subgroups.wgsl or
// reduce_wg_shared.wgsl appended). Prelude: T (input scalar), ACC
// (accumulator: f32, i32 or u32), OUT (output scalar). Overrides: OP (see
// below). WG (workgroup size) is fixed; FLOAT and ACC's extreme values
// follow from ACC.

const OP_SUM: u32 = 0u;
const OP_MEAN: u32 = 1u;
const OP_MAX: u32 = 2u;
const OP_MIN: u32 = 3u;
const OP_PROD: u32 = 4u;
const OP_ARGMAX: u32 = 5u;
const OP_ARGMIN: u32 = 6u;
const OP_VAR: u32 = 7u;
const OP_STD: u32 = 8u;
const OP_SHIFT: u32 = 9u; // first pass of OP_VAR / OP_STD: the row means

override OP: u32;
const WG: u32 = 256u;
const NONE: u32 = 0xffffffffu;
// Whether ACC is f32 (3 / 2 does not truncate), and whether it is i32
// (0xffffffffu converts to -1, a bit reinterpretation).
const FLOAT: bool = ACC(3u) / ACC(2u) != ACC(1u);
const SIGNED_INT: bool = ACC(0xffffffffu) < ACC(0u);

// v: running value (sum, extreme, product; var: sum of x - mean);
// w: var: sum of (x - mean)^2; cv, cw: the rounding errors of the sums v
// and w; n: arg index (NONE until one is seen).
struct State {
    v: ACC,
    w: ACC,
    cv: ACC,
    cw: ACC,
    n: u32,
}

// struct Params and its binding `p` (3) come from reduce_params.wgsl (the
// generated kernels of src/ops/expr/reduce_codegen.rs: reduce_expr_params.wgsl).

// Bindings 0 and 1 (x, xv) and their loads (x_at, xv_at) come from the
// fragment joined after this file: reduce_input.wgsl (T) or
// reduce_input_bf16.wgsl (bf16 bits; T is f32 in the :bf16 families).
@group(0) @binding(2) var<storage, read_write> partials: array<State>;
@group(0) @binding(4) var<storage, read_write> out: array<OUT>;

var<workgroup> wg_states: array<State, WG>;
var<workgroup> wg_lanes: u32;

// Infinity and NaN bits are read from variables: WGSL refuses constant
// expressions whose value is not finite (browsers' compilers enforce it).
var<private> neg_inf_bits: u32 = 0xff800000u;
var<private> pos_inf_bits: u32 = 0x7f800000u;
var<private> nan_bits: u32 = 0x7fc00000u;

// ACC's lowest and highest values (infinities for floats), by bits.
fn lowest() -> ACC {
    return bitcast<ACC>(select(select(0u, 0x80000000u, SIGNED_INT), neg_inf_bits, FLOAT));
}
fn highest() -> ACC {
    return bitcast<ACC>(select(select(0xffffffffu, 0x7fffffffu, SIGNED_INT), pos_inf_bits, FLOAT));
}

fn identity() -> State {
    var s = State(ACC(0), ACC(0), ACC(0), ACC(0), 0u);
    if (OP == OP_PROD) {
        s.v = ACC(1);
    } else if (OP == OP_MAX || OP == OP_ARGMAX) {
        s.v = lowest();
        s.n = NONE;
    } else if (OP == OP_MIN || OP == OP_ARGMIN) {
        s.v = highest();
        s.n = NONE;
    }
    return s;
}

// By bits: drivers may assume that no NaN occurs and fold comparisons.
fn is_nan(x: ACC) -> bool {
    return FLOAT && (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}
fn is_finite(x: ACC) -> bool {
    return !FLOAT || (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// x, through an integer OR with a zero the compiler cannot see: drivers
// that treat float additions as associative (Mesa's NIR does) would
// otherwise simplify two_sum's error term to 0.
fn opaque(x: ACC) -> ACC {
    return bitcast<ACC>(bitcast<u32>(x) | p.zero);
}

// a + b and its exact rounding error (Fast2Sum on the operands ordered by
// magnitude; 0 for integers).
fn two_sum(a: ACC, b: ACC) -> vec2<ACC> {
    let a_big = abs(a) >= abs(b);
    let hi = select(b, a, a_big);
    let lo = select(a, b, a_big);
    let s = opaque(hi + lo);
    return vec2<ACC>(s, lo - (s - hi));
}

// A compensated sum's value: the error terms are meaningless once the sum
// is infinite or NaN, and must not turn inf into NaN.
fn total(sum: ACC, err: ACC) -> ACC {
    return select(sum, sum + err, is_finite(sum));
}

// max and min that return NaN when either operand is NaN.
fn max_nan(a: ACC, b: ACC) -> ACC {
    return select(max(a, b), a + b, is_nan(a) || is_nan(b));
}
fn min_nan(a: ACC, b: ACC) -> ACC {
    return select(min(a, b), a + b, is_nan(a) || is_nan(b));
}

// ARGMAX / ARGMIN order: NaN before everything, then the larger (ARGMAX) or
// smaller (ARGMIN) value; equal values (NaNs alike) go to the lower index.
fn arg_before(a: ACC, b: ACC) -> bool {
    if (is_nan(b)) {
        return false;
    }
    if (is_nan(a)) {
        return true;
    }
    if (OP == OP_ARGMAX) {
        return a > b;
    }
    return a < b;
}
fn arg_tied(a: ACC, b: ACC) -> bool {
    return (is_nan(a) && is_nan(b)) || (!is_nan(a) && !is_nan(b) && a == b);
}

// Fold element `k` of the row (value `a`) into `s`; a thread sees its k in
// increasing order. `shift` is the row's mean for OP_VAR / OP_STD.
fn accumulate(s_in: State, a: ACC, k: u32, shift: ACC) -> State {
    var s = s_in;
    if (OP == OP_SUM || OP == OP_MEAN || OP == OP_SHIFT) {
        s = add_v(s, a);
    } else if (OP == OP_MAX) {
        s.v = max_nan(s.v, a);
    } else if (OP == OP_MIN) {
        s.v = min_nan(s.v, a);
    } else if (OP == OP_PROD) {
        s.v *= a;
    } else if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        if (s.n == NONE || arg_before(a, s.v)) {
            s.v = a;
            s.n = k;
        }
    } else {
        let d = a - shift;
        s = add_w(add_v(s, d), d * d);
    }
    return s;
}

// Add x to the compensated sum v (w), keeping the rounding error in cv (cw).
fn add_v(s_in: State, x: ACC) -> State {
    var s = s_in;
    let t = two_sum(s.v, x);
    s.v = t.x;
    s.cv += t.y;
    return s;
}
fn add_w(s_in: State, x: ACC) -> State {
    var s = s_in;
    let t = two_sum(s.w, x);
    s.w = t.x;
    s.cw += t.y;
    return s;
}

// Merge two partial States (order-independent for arg ops: ties go to the lower index).
fn combine(a: State, b: State) -> State {
    var s = a;
    if (OP == OP_SUM || OP == OP_MEAN || OP == OP_SHIFT || OP == OP_VAR || OP == OP_STD) {
        let t = two_sum(a.v, b.v);
        s.v = t.x;
        s.cv = a.cv + b.cv + t.y;
        if (OP == OP_VAR || OP == OP_STD) {
            let u = two_sum(a.w, b.w);
            s.w = u.x;
            s.cw = a.cw + b.cw + u.y;
        }
    } else if (OP == OP_MAX) {
        s.v = max_nan(a.v, b.v);
    } else if (OP == OP_MIN) {
        s.v = min_nan(a.v, b.v);
    } else if (OP == OP_PROD) {
        s.v = a.v * b.v;
    } else if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        if (b.n != NONE && (a.n == NONE || arg_before(b.v, a.v) || (arg_tied(a.v, b.v) && b.n < a.n))) {
            s = b;
        }
    }
    return s;
}

// A shuffle of any ACC, through its bits (the primitives move u32s).
fn sg_xor_acc(v: ACC, mask: u32) -> ACC {
    return bitcast<ACC>(sg_xor_u32(bitcast<u32>(v), mask));
}

// The State of lane `lane ^ mask`: only the fields this OP uses travel.
fn shuffled(s_in: State, mask: u32) -> State {
    var s = s_in;
    s.v = sg_xor_acc(s.v, mask);
    if (OP == OP_SUM || OP == OP_MEAN || OP == OP_SHIFT || OP == OP_VAR || OP == OP_STD) {
        s.cv = sg_xor_acc(s.cv, mask);
    }
    if (OP == OP_VAR || OP == OP_STD) {
        s.w = sg_xor_acc(s.w, mask);
        s.cw = sg_xor_acc(s.cw, mask);
    }
    if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        s.n = sg_xor_u32(s.n, mask);
    }
    return s;
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

// Where OP_SHIFT leaves a row's mean, after the rows' partials.
fn shift_slot(row: u32) -> u32 {
    return p.rows * p.chunks + row;
}

// The value OP_VAR / OP_STD subtract from the row's elements: its mean.
fn row_shift(row: u32) -> ACC {
    if (OP == OP_VAR || OP == OP_STD) {
        return partials[shift_slot(row)].v;
    }
    return ACC(0);
}

@compute @workgroup_size(WG)
fn reduce_strided(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let base = i32(p.in_offset) + kept_offsets(row).x;
    let shift = row_shift(row);
    var s = identity();
    let step = p.chunks * WG;
    for (var k = wid.x * WG + lid; k < p.k_total; k += step) {
        s = accumulate(s, ACC(x_at(u32(base + reduced_offset(k)))), k, shift);
    }
    s = wg_reduce(s, lid);
    if (lid == 0u) {
        store_partial(row, wid.x, s);
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
    let shift = row_shift(row);
    var s = identity();
    for (var k = wid.x; k < p.k_total; k += p.chunks) {
        s = accumulate(s, ACC(x_at(u32(base + reduced_offset(k)))), k, shift);
    }
    store_partial(row, wid.x, s);
}

fn accumulate4(s: State, v: vec4<T>, k: u32, shift: ACC) -> State {
    let a = vec4<ACC>(v);
    // Sums: the four values pairwise (within 2^-23 of their absolute sum),
    // then one compensated addition: the bound stays independent of the
    // length, at a quarter of the cost.
    if (OP == OP_SUM || OP == OP_MEAN || OP == OP_SHIFT) {
        return add_v(s, (a.x + a.y) + (a.z + a.w));
    }
    if (OP == OP_VAR || OP == OP_STD) {
        let d = a - vec4<ACC>(shift);
        let d2 = d * d;
        return add_w(add_v(s, (d.x + d.y) + (d.z + d.w)), (d2.x + d2.y) + (d2.z + d2.w));
    }
    return accumulate(
        accumulate(accumulate(accumulate(s, a.x, k, shift), a.y, k + 1u, shift), a.z, k + 2u, shift),
        a.w,
        k + 3u,
        shift,
    );
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
    let shift = row_shift(row);
    var s = identity();
    let step = p.chunks * WG;
    var i = wid.x * WG + lid;
    for (; i + 3u * step < k4; i += 4u * step) {
        let a = xv_at(base4 + i);
        let b = xv_at(base4 + i + step);
        let c = xv_at(base4 + i + 2u * step);
        let d = xv_at(base4 + i + 3u * step);
        s = accumulate4(s, a, 4u * i, shift);
        s = accumulate4(s, b, 4u * (i + step), shift);
        s = accumulate4(s, c, 4u * (i + 2u * step), shift);
        s = accumulate4(s, d, 4u * (i + 3u * step), shift);
    }
    for (; i < k4; i += step) {
        s = accumulate4(s, xv_at(base4 + i), 4u * i, shift);
    }
    let tail = 4u * k4 + lid;
    if (wid.x == 0u && tail < p.k_total) {
        s = accumulate(s, ACC(x_at(base + tail)), tail, shift);
    }
    s = wg_reduce(s, lid);
    if (lid == 0u) {
        store_partial(row, wid.x, s);
    }
}

fn nan_f32() -> f32 {
    return bitcast<f32>(nan_bits);
}

// The row's sum over n, rounded once. Adapters may divide to within a few
// ulps (Vulkan allows 2.5), so one correction step with the exact remainder
// follows: n equal values then have exactly that value as their mean, and
// their variance is exactly 0.
fn mean_of(s: State) -> f32 {
    let n = p.k_total_f;
    let hi = f32(s.v);
    // Opaque: drivers that treat arithmetic as exact would fold the
    // remainder fma(-(t / n), n, t) to 0.
    let q = bitcast<f32>(bitcast<u32>(f32(total(s.v, s.cv)) / n) | p.zero);
    let r = fma(-q, n, hi) + f32(s.cv);
    let finite = (bitcast<u32>(q) & 0x7f800000u) != 0x7f800000u;
    return select(nan_f32(), select(q, q + r / n, finite), p.k_total > 0u);
}

// The output value of a finished State, through the input stage's epilogue
// (the identity but in the generated kernels).
fn finish(s: State) -> OUT {
    return epilogue(finished_value(s));
}

fn finished_value(s: State) -> OUT {
    if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        return OUT(s.n);
    }
    if (OP == OP_SUM) {
        return OUT(total(s.v, s.cv));
    }
    if (OP == OP_MEAN) {
        return OUT(mean_of(s));
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
        return OUT(r);
    }
    return OUT(s.v);
}

// A row's result from its State: the row's mean for OP_SHIFT, else the output.
fn store_result(row: u32, s: State) {
    if (OP == OP_SHIFT) {
        var m = identity();
        m.v = ACC(mean_of(s));
        partials[shift_slot(row)] = m;
    } else {
        out[u32(i32(p.out_offset) + kept_offsets(row).y)] = finish(s);
    }
}

// A chunk's partial State; a row in one chunk is finished at once (the host
// then records no reduce_finish).
fn store_partial(row: u32, chunk: u32, s: State) {
    if (p.single_pass != 0u) {
        store_result(row, s);
    } else {
        partials[row * p.chunks + chunk] = s;
    }
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
        store_result(row, s);
    }
}

// The subgroup size is not known here (see reduce_wg_subgroups.wgsl).
fn sg_lanes_hint() -> u32 {
    return 0u;
}
