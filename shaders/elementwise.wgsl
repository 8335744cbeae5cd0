// Elementwise map: out = OP(x0, x1, x2) over up to three inputs, with NumPy
// broadcasting. The op is an expression substituted at {{OP}} so each op
// compiles to straight-line code. Two entry points:
//  - `strided`: any views, rank <= 8 after coalescing (the rank is fixed
//    per variant); offsets are computed per operand from the logical index.
//    Element types are vec4 when every operand is dense along the innermost
//    dim with 4-aligned sizes and offsets (dense tensors are rank 1).
//  - `tiled`: one input read dense along another dim than the output
//    (transposes), through workgroup memory.
// Unused inputs are declared but never read, so they are not bindings of
// the entry point.
{{ENABLE}}

alias V0 = {{V0}};
alias V1 = {{V1}};
alias V2 = {{V2}};
alias VO = {{VO}};
alias VI = {{VI}}; // the logical element index: u32, or vec4<u32> in the vec4 path
alias C = {{C}};   // float compute type of the helpers: f32 or vec4<f32>
alias CU = {{CU}}; // u32 of C's width
alias CB = {{CB}}; // bool of C's width

struct Params {
    n: u32,      // work items of this launch
    row: u32,    // work items per row of the 2-D grid
    rank: u32,   // dims after coalescing (informational: variants fix it)
    base: u32,   // logical index of this launch's first element (a dense tail)
    s0: u32,     // scalar operands, as bits
    s1: u32,
    nan: u32,    // 0x7fc00000: NaN made at run time (constants cannot be NaN)
    inf: u32,    // 0x7f800000
    off: vec4<u32>,                // offsets of in0, in1, in2, out (in binding elements)
    shape: array<vec4<u32>, 2>,    // dim d at [d / 4][d % 4]
    strides: array<vec4<i32>, 8>,  // dim d -> (in0, in1, in2, out)
}

@group(0) @binding({{B0}}) var<storage, {{ACC0}}> in0: array<V0>;
@group(0) @binding({{B1}}) var<storage, {{ACC1}}> in1: array<V1>;
@group(0) @binding({{B2}}) var<storage, {{ACC2}}> in2: array<V2>;
@group(0) @binding({{BO}}) var<storage, read_write> out: array<VO>;
@group(0) @binding({{BP}}) var<uniform> p: Params;

fn load0(o: u32) -> V0 { return {{LOAD0}}; }
fn load1(o: u32) -> V1 { return {{LOAD1}}; }
fn load2(o: u32) -> V2 { return {{LOAD2}}; }

// By bits: comparisons with NaN are not reliable on every driver (they may
// assume that no NaN occurs and fold or reorder them).
fn isnan_c(x: C) -> CB {
    return (bitcast<CU>(x) & CU(0x7fffffffu)) > CU(0x7f800000u);
}
fn isinf_c(x: C) -> CB {
    return (bitcast<CU>(x) & CU(0x7fffffffu)) == CU(0x7f800000u);
}
fn signbit_c(x: C) -> CB {
    return (bitcast<CU>(x) & CU(0x80000000u)) != CU(0u);
}
// a / b, also where 1 / b is subnormal (|b| > 2^126): drivers may divide
// as a * (1 / b) and flush that reciprocal to zero (NVIDIA does), so such a
// b is scaled down by 4 first, exactly.
fn div_c(a: C, b: C) -> C {
    let s = select(C(1.0), C(0.25), abs(b) > C(8.507059e37));
    return (a * s) / (b * s);
}
// Neither operand is NaN: what every comparison but NE requires.
fn ordered_c(a: C, b: C) -> CB {
    return !(isnan_c(a) | isnan_c(b));
}

fn nan_c() -> C { return C(bitcast<f32>(p.nan)); }
fn inf_c() -> C { return C(bitcast<f32>(p.inf)); }

// 2^e for integral e in [-126, 127], by bits.
fn exp2i_c(e: C) -> C {
    return bitcast<C>(CU(e + 127.0) << CU(23u));
}

// e^x as 2^k e^r with k = round(x / ln 2) and r = x - k ln 2 computed
// exactly (ln 2 in two parts, the first short enough that k times it is
// exact), so the error stays a few ulp at any |x|: the adapter's exp of the
// whole argument loses about |x| ulp where it computes exp2(x * log2(e)).
// 2^k is applied in two halves so that k = 128 stays finite.
fn exp_c(x: C) -> C {
    let xc = clamp(x, C(-104.0), C(89.0)); // beyond: 0 and inf anyway
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
fn log_near1_c(x: C) -> C {
    let s = (x - 1.0) / (x + 1.0);
    let s2 = s * s;
    let series = 2.0 + s2 * (0.6666666666666666 + s2 * (0.4 + s2 * (0.2857142857142857 + s2 * (0.2222222222222222 + s2 * (0.18181818181818182 + s2 * 0.15384615384615385)))));
    return s * series;
}
fn near1_c(x: C) -> CB {
    return abs(x - 1.0) <= C(0.4);
}
fn log_c(x: C) -> C {
    return select(log(x), log_near1_c(x), near1_c(x));
}
fn log2_c(x: C) -> C {
    return select(log2(x), log_near1_c(x) * 1.4426950408889634, near1_c(x));
}

// x minus the nearest multiple of 2 pi, exactly up to rounding of the
// result: 2 pi in four parts, the first three short enough that their
// products with k (|k| < 2^16, so |x| < 4e5) are exact. Larger |x| are left
// to the adapter (WGSL promises sin and cos only on [-pi, pi]), and so are
// |x| <= pi, which keeps -0 and tiny arguments exact.
fn reduce_2pi_c(x: C) -> C {
    let k = round(x * 0.15915494309189535);
    let r = (((x - k * 6.28125) - k * 0.0019378662109375) - k * -2.562999725341797e-6) - k * 3.968374517882012e-9;
    return select(x, r, (abs(x) > C(3.14159)) & (abs(x) <= C(4e5)));
}
fn sin_c(x: C) -> C {
    return select(sin(reduce_2pi_c(x)), nan_c(), isnan_c(x) | isinf_c(x));
}
fn cos_c(x: C) -> C {
    return select(cos(reduce_2pi_c(x)), nan_c(), isnan_c(x) | isinf_c(x));
}

// erf by Abramowitz-Stegun 7.1.26: |error| <= 1.5e-7.
fn erf_c(x: C) -> C {
    let a = abs(x);
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t;
    return sign(x) * (1.0 - poly * exp(-a * a));
}

// tanh saturates to +-1 in f32 beyond |x| = 15; clamping keeps drivers that
// compute it through exp from returning inf/inf = NaN (and would swallow NaN).
fn tanh_c(x: C) -> C {
    return select(tanh(clamp(x, C(-15.0), C(15.0))), x, isnan_c(x));
}

fn sigmoid_c(x: C) -> C {
    return 1.0 / (1.0 + exp_c(-x));
}

// x sigmoid(x). Below -80, sigmoid(x) is e^x to f32 precision and lies near
// or below 2^-126, where adapters that flush subnormals would give 0 for a
// product that is itself normal (down to x = -91): the product is formed
// with e^x scaled by 2^64 and scaled back at the end.
fn silu_c(x: C) -> C {
    let xc = clamp(x, C(-104.0), C(0.0));
    let k = round(xc * 1.4426950408889634);
    let r = (xc - k * 0.693145751953125) - k * 1.4286068203094173e-6;
    let scaled = (x * exp(r) * exp2i_c(k + 64.0)) * exp2i_c(C(-64.0));
    // Below -104: x * sigmoid(x) is -0, and -inf * 0 is NaN.
    let tiny = select(scaled, select(C(-0.0), nan_c(), isinf_c(x)), x < C(-104.0));
    return select(x * sigmoid_c(x), tiny, x < C(-80.0));
}

// x^y as C99 and NumPy define it (the header's Numerics section lists the
// cases): exp2(y log2|x|) with the sign of odd integral powers of negative
// x (-0 included, found by its sign bit), and each special case chosen
// explicitly rather than left to the adapter's log2(0) and exp2(NaN).
fn pow_c(x: C, y: C) -> C {
    let ax = abs(x);
    let y_int = floor(y) == y; // +-inf count as even integers
    let y_odd = y_int & (floor(y * 0.5) != y * 0.5);
    let edge = (ax == C(0.0)) | isinf_c(ax);
    var r = exp2(y * log2_c(ax));
    // |x| = 0 or inf: 0 or inf by whether the exponent's sign makes it large.
    r = select(r, select(C(0.0), inf_c(), (ax == C(0.0)) == (y < C(0.0))), edge);
    r = select(r, -r, signbit_c(x) & y_odd);
    r = select(r, nan_c(), signbit_c(x) & !y_int & !edge);
    r = select(r, C(1.0), (ax == C(1.0)) & isinf_c(y));
    r = select(r, nan_c(), isnan_c(x) | isnan_c(y));
    return select(r, C(1.0), (x == C(1.0)) | (y == C(0.0)));
}

fn compute(x0: V0, x1: V1, x2: V2, ix: VI) -> VO {
    let s0 = {{S0}};
    let s1 = {{S1}};
    return {{OP}};
}

// Operand offsets of logical element i. The rank is a constant of the
// variant, so the loop unrolls and the uniform reads become static.
fn offsets(i: u32) -> vec4<i32> {
    var o = vec4<i32>(p.off);
    if ({{RANK}} == 1) {
        return o + i32(i) * p.strides[0]; // i < n: no division needed
    }
    var rem = i;
    for (var d = {{RANK}} - 1; d >= 0; d--) {
        let n = p.shape[d >> 2u][d & 3];
        o += i32(rem % n) * p.strides[d];
        rem = rem / n;
    }
    return o;
}

fn strided_value(o: vec4<i32>, i: u32) -> VO {
    return compute(load0(u32(o.x)), load1(u32(o.y)), load2(u32(o.z)), {{IX_S}});
}

// ITEMS items per invocation, one grid apart (coalesced), all loads before
// any store so they are in flight together. Items past the end compute on
// the last element and store nothing.
const ITEMS: u32 = {{ITEMS}}u;

@compute @workgroup_size(256)
fn strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = gid.y * p.row + gid.x;
    let grid = p.row * groups.y;
    let last = p.n - 1u;
    var o: array<vec4<i32>, ITEMS>;
    var v: array<VO, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        let i = t + k * grid;
        o[k] = offsets(min(i, last));
        v[k] = strided_value(o[k], i);
    }
    for (var k = 0u; k < ITEMS; k++) {
        if (t + k * grid < p.n) {
            out[u32(o[k].w)] = v[k];
        }
    }
}

// One input whose dim R (the second-to-last of three: batch, R, C) is the
// dense one while the output is dense along C, e.g. a transpose: a 32 x 32
// tile is read along R, staged in workgroup memory and written along C, so
// both sides stay coalesced. shape[0] = (batch, R, C); strides[0], [1],
// [2] are the (in0, -, -, out) strides of batch, R and C.
var<workgroup> tile: array<array<VO, 33>, 32>;

@compute @workgroup_size(32, 8)
fn tiled(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    let rows = p.shape[0].y;
    let cols = p.shape[0].z;
    let r0 = wg.y * 32u;
    let c0 = wg.x * 32u;
    let base = vec4<i32>(p.off) + i32(wg.z) * p.strides[0];
    for (var k = 0u; k < 32u; k += 8u) {
        let r = r0 + l.x;
        let c = c0 + l.y + k;
        if (r < rows && c < cols) {
            let o = base + i32(r) * p.strides[1] + i32(c) * p.strides[2];
            tile[l.y + k][l.x] = compute(load0(u32(o.x)), load1(0u), load2(0u), VI((wg.z * rows + r) * cols + c));
        }
    }
    workgroupBarrier();
    for (var k = 0u; k < 32u; k += 8u) {
        let r = r0 + l.y + k;
        let c = c0 + l.x;
        if (r < rows && c < cols) {
            let o = base + i32(r) * p.strides[1] + i32(c) * p.strides[2];
            out[u32(o.w)] = tile[l.x][l.y + k];
        }
    }
}
