// Fragment: helpers of the kernels generated for elementwise expressions
// (src/ops/expr/codegen.rs), joined after elementwise_scalar.wgsl. Each op
// is written as elementwise.wgsl's `binary`, `unary` and `convert` compute
// it, so a fused expression gives the separate operators' results: floats
// of every dtype are held in f32 and rounded to their node's dtype after
// each op (f16: `rf16`, in expr_f16.wgsl; bf16: `rbf16`), which is the
// separate operators' one rounding per op (f32 has more than twice the
// bits of f16 and bf16 plus two, so rounding through it is exact for
// +, -, *, / and sqrt). Comparisons give u32 0 or 1. The generated kernel
// declares the uniform `p` with `nan` and `inf` (for nan_c and inf_c).

// bfloat16: the bits of the value nearest x (c10::BFloat16's
// round_to_nearest_even, NaN to 0x7fc0), and x rounded to it.
fn bf16_bits_x(x: f32) -> u32 {
    let u = bitcast<u32>(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return 0x7fc0u;
    }
    return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
}
fn rbf16(x: f32) -> f32 {
    return bitcast<f32>(bf16_bits_x(x) << 16u);
}
fn bf16_lo(w: u32) -> f32 { return bitcast<f32>(w << 16u); }
fn bf16_hi(w: u32) -> f32 { return bitcast<f32>(w & 0xffff0000u); }
// Element `e` of bf16 words.
fn bf16_at(w: u32, e: u32) -> f32 {
    return bitcast<f32>(select(w << 16u, w & 0xffff0000u, (e & 1u) == 1u));
}

fn flag_x(c: bool) -> u32 { return select(0u, 1u, c); }

// Floats (held in f32).
fn add_f(a: f32, b: f32) -> f32 { return a + b; }
fn sub_f(a: f32, b: f32) -> f32 { return a - b; }
fn mul_f(a: f32, b: f32) -> f32 { return a * b; }
fn div_f(a: f32, b: f32) -> f32 { return div_c(a, b); }
fn pow_f(a: f32, b: f32) -> f32 { return pow_c(a, b); }
fn maximum_f(a: f32, b: f32) -> f32 { return select(max(a, b), a + b, !ordered_c(a, b)); }
fn minimum_f(a: f32, b: f32) -> f32 { return select(min(a, b), a + b, !ordered_c(a, b)); }
fn eq_f(a: f32, b: f32) -> u32 { return flag_x((a == b) & ordered_c(a, b)); }
fn ne_f(a: f32, b: f32) -> u32 { return flag_x(!((a == b) & ordered_c(a, b))); }
fn lt_f(a: f32, b: f32) -> u32 { return flag_x((a < b) & ordered_c(a, b)); }
fn le_f(a: f32, b: f32) -> u32 { return flag_x((a <= b) & ordered_c(a, b)); }
fn gt_f(a: f32, b: f32) -> u32 { return flag_x((a > b) & ordered_c(a, b)); }
fn ge_f(a: f32, b: f32) -> u32 { return flag_x((a >= b) & ordered_c(a, b)); }

fn neg_f(x: f32) -> f32 { return -x; }
fn abs_f(x: f32) -> f32 { return abs(x); }
fn exp_f(x: f32) -> f32 { return exp_c(x); }
fn log_f(x: f32) -> f32 { return log_c(x); }
fn sqrt_f(x: f32) -> f32 { return sqrt(x); }
fn rsqrt_f(x: f32) -> f32 { return inverseSqrt(x); }
fn sin_f(x: f32) -> f32 { return sin_c(x); }
fn cos_f(x: f32) -> f32 { return cos_c(x); }
fn tanh_f(x: f32) -> f32 { return tanh_c(x); }
fn sigmoid_f(x: f32) -> f32 { return sigmoid_c(x); }
fn relu_f(x: f32) -> f32 { return select(max(x, 0.0), x, isnan_c(x)); }
fn gelu_erf_f(x: f32) -> f32 { return 0.5 * x * (1.0 + erf_c(x * 0.7071067811865476)); }
fn gelu_tanh_f(x: f32) -> f32 { return 0.5 * x * (1.0 + tanh_c(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
fn silu_f(x: f32) -> f32 { return silu_c(x); }
fn relu6_f(x: f32) -> f32 { return select(min(max(x, 0.0), 6.0), x, isnan_c(x)); }
// As the hardswish operator: x from 3 on, -inf * 0 = NaN below.
fn hardswish_f(x: f32) -> f32 { return select(x * max(x + 3.0, 0.0) / 6.0, x, x >= 3.0 || isnan_c(x)); }
// Sigmoid and SiLU into f16 use the adapter's exp, as the f16 operators do.
fn sigmoid_h(x: f32) -> f32 { return select(1.0 / (1.0 + exp(-x)), x, isnan_c(x)); }
fn silu_h(x: f32) -> f32 { return select(x / (1.0 + exp(-x)), x, isnan_c(x)); }
fn fma_f(a: f32, b: f32, c: f32) -> f32 { return fma(a, b, c); }
fn where_f(m: u32, a: f32, b: f32) -> f32 { return select(b, a, m != 0u); }

// i32 (wrapping).
fn add_i(a: i32, b: i32) -> i32 { return a + b; }
fn sub_i(a: i32, b: i32) -> i32 { return a - b; }
fn mul_i(a: i32, b: i32) -> i32 { return a * b; }
fn div_i(a: i32, b: i32) -> i32 { return div_i32(a, b); }
fn maximum_i(a: i32, b: i32) -> i32 { return max(a, b); }
fn minimum_i(a: i32, b: i32) -> i32 { return min(a, b); }
fn eq_i(a: i32, b: i32) -> u32 { return flag_x(a == b); }
fn ne_i(a: i32, b: i32) -> u32 { return flag_x(a != b); }
fn lt_i(a: i32, b: i32) -> u32 { return flag_x(a < b); }
fn le_i(a: i32, b: i32) -> u32 { return flag_x(a <= b); }
fn gt_i(a: i32, b: i32) -> u32 { return flag_x(a > b); }
fn ge_i(a: i32, b: i32) -> u32 { return flag_x(a >= b); }
fn neg_i(x: i32) -> i32 { return 0 - x; }
fn abs_i(x: i32) -> i32 { return abs(x); }
fn relu_i(x: i32) -> i32 { return max(x, 0); }
fn fma_i(a: i32, b: i32, c: i32) -> i32 { return a * b + c; }
fn where_i(m: u32, a: i32, b: i32) -> i32 { return select(b, a, m != 0u); }

// u32 (wrapping).
fn add_u(a: u32, b: u32) -> u32 { return a + b; }
fn sub_u(a: u32, b: u32) -> u32 { return a - b; }
fn mul_u(a: u32, b: u32) -> u32 { return a * b; }
fn div_u(a: u32, b: u32) -> u32 { return div_u32(a, b); }
fn maximum_u(a: u32, b: u32) -> u32 { return max(a, b); }
fn minimum_u(a: u32, b: u32) -> u32 { return min(a, b); }
fn eq_u(a: u32, b: u32) -> u32 { return flag_x(a == b); }
fn ne_u(a: u32, b: u32) -> u32 { return flag_x(a != b); }
fn lt_u(a: u32, b: u32) -> u32 { return flag_x(a < b); }
fn le_u(a: u32, b: u32) -> u32 { return flag_x(a <= b); }
fn gt_u(a: u32, b: u32) -> u32 { return flag_x(a > b); }
fn ge_u(a: u32, b: u32) -> u32 { return flag_x(a >= b); }
fn fma_u(a: u32, b: u32, c: u32) -> u32 { return a * b + c; }
fn where_u(m: u32, a: u32, b: u32) -> u32 { return select(b, a, m != 0u); }

// Casts (elementwise.wgsl's `convert`): floats to integers truncate toward
// zero and saturate, NaN -> 0; integers to floats through f32.
fn f_to_i(x: f32) -> i32 { return select(i32(clamp(x, -2147483648.0, 2147483520.0)), 0, isnan_c(x)); }
fn f_to_u(x: f32) -> u32 { return select(u32(clamp(x, 0.0, 4294967040.0)), 0u, isnan_c(x)); }
fn i_to_f(x: i32) -> f32 { return f32(x); }
fn u_to_f(x: u32) -> f32 { return f32(x); }
fn i_to_u(x: i32) -> u32 { return u32(x); }
fn u_to_i(x: u32) -> i32 { return i32(x); }

// Scalar slot k of the uniform (constants, then parameters), as bits.
fn slot(k: u32) -> u32 { return p.s[k >> 2u][k & 3u]; }
