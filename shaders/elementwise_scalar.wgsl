// Fragment: the scalar functions of the elementwise operators, shared by elementwise.wgsl
// (joined before it) and the kernels generated for elementwise expressions
// (src/ops/expr), so that a fused expression computes each op exactly as
// the separate operator does. Pure functions of f32, i32 and u32, except
// nan_c and inf_c, which read `p.nan` and `p.inf` from the including
// kernel's uniform (constants cannot be NaN or inf).

// By bits: comparisons with NaN are not reliable on every driver (they may
// assume that no NaN occurs and fold or reorder them).
fn isnan_c(x: f32) -> bool {
    return (bitcast<u32>(x) & u32(0x7fffffffu)) > u32(0x7f800000u);
}
fn isinf_c(x: f32) -> bool {
    return (bitcast<u32>(x) & u32(0x7fffffffu)) == u32(0x7f800000u);
}
fn signbit_c(x: f32) -> bool {
    return (bitcast<u32>(x) & u32(0x80000000u)) != u32(0u);
}
// a / b, also where 1 / b is subnormal (|b| > 2^126): drivers may divide
// as a * (1 / b) and flush that reciprocal to zero (NVIDIA does), so such a
// b is scaled down by 4 first, exactly.
fn div_c(a: f32, b: f32) -> f32 {
    let s = select(f32(1.0), f32(0.25), abs(b) > f32(8.507059e37));
    return (a * s) / (b * s);
}
// Neither operand is NaN: what every comparison but NE requires.
fn ordered_c(a: f32, b: f32) -> bool {
    return !(isnan_c(a) | isnan_c(b));
}

fn nan_c() -> f32 { return bitcast<f32>(p.nan); }
fn inf_c() -> f32 { return bitcast<f32>(p.inf); }

// 2^e for integral e in [-126, 127], by bits.
fn exp2i_c(e: f32) -> f32 {
    return bitcast<f32>(u32(e + 127.0) << u32(23u));
}

// e^x as 2^k e^r with k = round(x / ln 2) and r = x - k ln 2 computed
// exactly (ln 2 in two parts, the first short enough that k times it is
// exact), so the error stays a few ulp at any |x|: the adapter's exp of the
// whole argument loses about |x| ulp where it computes exp2(x * log2(e)).
// 2^k is applied in two halves so that k = 128 stays finite.
fn exp_c(x: f32) -> f32 {
    let xc = clamp(x, -104.0, f32(89.0)); // beyond: 0 and inf anyway
    let k = round(xc * 1.4426950408889634);
    let r = (xc - k * 0.693145751953125) - k * 1.4286068203094173e-6;
    let k1 = floor(k * 0.5);
    let y = exp(r) * exp2i_c(k1) * exp2i_c(k - k1);
    return select(y, x, isnan_c(x));
}

// ln x for x near 1 as 2 atanh(s), s = (x - 1) / (x + 1) with x - 1 exact,
// by its series (through s^13: below 1e-10 relative for |x - 1| <= 0.4).
// The adapter's log there has an absolute error (WGSL allows 2^-21), which
// is a large relative error for results near 0 and, through pow's
// y * log2(x), a large one for big y.
fn log_near1_c(x: f32) -> f32 {
    let s = (x - 1.0) / (x + 1.0);
    let s2 = s * s;
    let series = 2.0 + s2 * (0.6666666666666666 + s2 * (0.4 + s2 * (0.2857142857142857 + s2 * (0.2222222222222222 + s2 * (0.18181818181818182 + s2 * 0.15384615384615385)))));
    return s * series;
}
fn near1_c(x: f32) -> bool {
    return abs(x - 1.0) <= f32(0.4);
}
fn log_c(x: f32) -> f32 {
    return select(log(x), log_near1_c(x), near1_c(x));
}
fn log2_c(x: f32) -> f32 {
    return select(log2(x), log_near1_c(x) * 1.4426950408889634, near1_c(x));
}

// x minus the nearest multiple of 2 pi, exactly up to rounding of the
// result: 2 pi in four parts, the first three short enough that their
// products with k (|k| < 2^16, so |x| < 4e5) are exact. Larger |x| are left
// to the adapter (WGSL promises sin and cos only on [-pi, pi]), and so are
// |x| <= pi, which keeps -0 and tiny arguments exact.
fn reduce_2pi_c(x: f32) -> f32 {
    let k = round(x * 0.15915494309189535);
    let r = (((x - k * 6.28125) - k * 0.0019378662109375) - k * -2.562999725341797e-6) - k * 3.968374517882012e-9;
    return select(x, r, (abs(x) > f32(3.14159)) & (abs(x) <= f32(4e5)));
}
fn sin_c(x: f32) -> f32 {
    return select(sin(reduce_2pi_c(x)), nan_c(), isnan_c(x) | isinf_c(x));
}
fn cos_c(x: f32) -> f32 {
    return select(cos(reduce_2pi_c(x)), nan_c(), isnan_c(x) | isinf_c(x));
}

// erf by Abramowitz-Stegun 7.1.26: |error| <= 1.5e-7.
fn erf_c(x: f32) -> f32 {
    let a = abs(x);
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t;
    return sign(x) * (1.0 - poly * exp(-a * a));
}

// tanh saturates to +-1 in f32 beyond |x| = 15; clamping keeps drivers that
// compute it through exp from returning inf/inf = NaN (and would swallow NaN).
fn tanh_c(x: f32) -> f32 {
    return select(tanh(clamp(x, f32(-15.0), f32(15.0))), x, isnan_c(x));
}

fn sigmoid_c(x: f32) -> f32 {
    return 1.0 / (1.0 + exp_c(-x));
}

// x sigmoid(x). Below -80, sigmoid(x) is e^x to f32 precision and lies near
// or below 2^-126, where adapters that flush subnormals would give 0 for a
// product that is itself normal (down to x = -91): the product is formed
// with e^x scaled by 2^64 and scaled back at the end.
fn silu_c(x: f32) -> f32 {
    // A branch, not a select: the tail's arithmetic would double the cost
    // of every element.
    if (!(x < -80.0)) {
        return x * sigmoid_c(x);
    }
    let xc = max(x, -104.0);
    let k = round(xc * 1.4426950408889634);
    let r = (xc - k * 0.693145751953125) - k * 1.4286068203094173e-6;
    let scaled = (x * exp(r) * exp2i_c(k + 64.0)) * exp2i_c(-64.0);
    // Below -104: x * sigmoid(x) is -0, and -inf * 0 is NaN.
    return select(scaled, select(-0.0, nan_c(), isinf_c(x)), x < -104.0);
}

// x^y as C99 and NumPy define it (the header's Numerics section lists the
// cases): exp2(y log2|x|) with the sign of odd integral powers of negative
// x (-0 included, found by its sign bit), and each special case chosen
// explicitly rather than left to the adapter's log2(0) and exp2(NaN).
fn pow_c(x: f32, y: f32) -> f32 {
    let ax = abs(x);
    let y_int = floor(y) == y; // +-inf count as even integers
    let y_odd = y_int & (floor(y * 0.5) != y * 0.5);
    let edge = (ax == f32(0.0)) | isinf_c(ax);
    var r = exp2(y * log2_c(ax));
    // |x| = 0 or inf: 0 or inf by whether the exponent's sign makes it large.
    r = select(r, select(0.0, inf_c(), (ax == f32(0.0)) == (y < f32(0.0))), edge);
    r = select(r, -r, signbit_c(x) & y_odd);
    r = select(r, nan_c(), signbit_c(x) & !y_int & !edge);
    r = select(r, f32(1.0), (ax == f32(1.0)) & isinf_c(y));
    r = select(r, nan_c(), isnan_c(x) | isnan_c(y));
    return select(r, f32(1.0), (x == f32(1.0)) | (y == f32(0.0)));
}

fn div_i32(a: i32, b: i32) -> i32 {
    // Truncates toward zero; x / 0 is 0 and INT32_MIN / -1 is INT32_MIN (no trap).
    let bad = (b == 0) | ((a == -2147483647 - 1) & (b == -1));
    return select(a / select(b, 1, bad), 0, b == 0);
}
fn div_u32(a: u32, b: u32) -> u32 {
    return select(a / select(b, 1u, b == 0u), 0u, b == 0u);
}
