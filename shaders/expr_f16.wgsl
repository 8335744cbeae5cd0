// Fragment: joined after expr.wgsl in generated kernels that use f16 (which then
// enable it): a value rounded to f16 (to nearest, ties to even; past the
// largest finite f16 to infinity; NaN kept) and held in f32 again. By
// integer arithmetic: drivers may fold f32(f16(x)) into x (NVIDIA's does),
// which would skip the rounding that makes a fused f16 expression compute
// as the separate f16 operators do. Measured on an H100 against the
// builtins (raw output in git history, 2026-11-27): NVIDIA's compiler folds
// unpack2x16float(pack2x16float(x)) away too (wrong results), and
// quantizeToF16, exact there once subnormals (which it may flush, as
// Mesa's does) and overflow are guarded, was 10% slower on SwiGLU, 4% on
// mean((x-m)^2) and 1% faster on sum(x*y).
fn rf16(x: f32) -> f32 {
    let u = bitcast<u32>(x);
    let a = u & 0x7fffffffu;
    let s = u & 0x80000000u;
    if (a > 0x7f800000u) {
        return x;
    }
    if (a >= 0x477ff000u) {
        // 65520 and up: halfway past 65504 rounds to infinity.
        return bitcast<f32>(s | 0x7f800000u);
    }
    if (a >= 0x38800000u) {
        // A normal f16 (2^-14 and up): 10 of f32's 23 mantissa bits kept.
        return bitcast<f32>(s | ((a + 0xfffu + ((a >> 13u) & 1u)) & 0xffffe000u));
    }
    // Below 2^-14: a multiple of 2^-24 (f16's subnormals), rounded in integers.
    let e = a >> 23u;
    let shift = 126u - min(e, 126u);
    if (e == 0u || shift > 24u) {
        return bitcast<f32>(s);
    }
    let m = (a & 0x7fffffu) | 0x800000u;
    let q = m >> shift;
    let rem = m & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    let n = q + select(0u, 1u, rem > half || (rem == half && (q & 1u) == 1u));
    return bitcast<f32>(s | bitcast<u32>(f32(n) * bitcast<f32>(0x33800000u)));
}
