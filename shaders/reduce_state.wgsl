// Fragment: partial states of the column and run reductions (reduce_columns.wgsl,
// reduce_runs.wgsl; each family's source is its file followed by this
// one): the OP codes, the state four lanes wide, folding values into it,
// merging states, and the finished value.
//
// Needs from the including file: `p` with fields lowest, highest (bits of
// A's lowest and highest values), zero (0, see opaque()), k_total and
// k_total_f (elements reduced per output), unbiased (var / std divisor
// n - 1); the type aliases T and A (A = f32 for floats).
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

const NONE: u32 = 0xffffffffu;
// Whether A is f32 (integer conversions truncate 0.5 to 0).
const FLOAT: bool = A(0.5) != A(0);

// A partial result of one output: v running value, w sum of squared
// deviations, cv / cw the rounding errors of v / w, n the arg index.
struct Part {
    v: A,
    w: A,
    cv: A,
    cw: A,
    n: u32,
}

// Four partial results side by side: four outputs, or four interleaved
// subsets of one output's elements.
struct State {
    v: vec4<A>,
    w: vec4<A>,
    cv: vec4<A>,
    cw: vec4<A>,
    n: vec4<u32>,
}

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

// Read from a variable: WGSL refuses constant expressions whose value is
// not finite (browsers' compilers enforce it).
var<private> nan_bits: u32 = 0x7fc00000u;

fn nan_f32() -> f32 {
    return bitcast<f32>(nan_bits);
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

// Part `q` in lane 0 of a state whose other lanes are the identity.
fn state_of(q: Part) -> State {
    var t = identity();
    t.v.x = q.v;
    t.w.x = q.w;
    t.cv.x = q.cv;
    t.cw.x = q.cw;
    t.n.x = q.n;
    return t;
}

// The four lanes of `s` merged into lane 0.
fn collapse(s: State) -> State {
    var r = lane(s, 0u);
    for (var i = 1u; i < 4u; i++) {
        r = combine(r, lane(s, i));
    }
    return r;
}

// Dim d of a packed shape or stride array (pack_u32 / pack_i32).
fn dim_u(a: array<vec4<u32>, 2>, d: u32) -> u32 {
    return a[d / 4u][d % 4u];
}
fn dim_i(a: array<vec4<i32>, 2>, d: u32) -> i32 {
    return a[d / 4u][d % 4u];
}
