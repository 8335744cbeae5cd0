// Fragment: rf16 of expr_f16.wgsl by WGSL's quantizeToF16
// (WGC_EXPR_F16_ROUND=quantize), joined in its place. quantizeToF16 may
// flush f16's subnormals to zero (Mesa's does, the sign lost too) and is
// indeterminate outside f16's finite range, so: below 2^-14 the value is
// rounded to a multiple of 2^-24 by scaling by 2^24 (exact), rounding to
// an integer (ties to even) and scaling back, with x's sign kept (adding
// and taking away 0.5 would round alike, but compilers fold that away,
// Mesa's among them); past 65504 the value is
// clamped to it (what (65504, 65520) rounds to) and 65520 and up become
// infinity; NaN is kept. Selects choose among them.
fn rf16(x: f32) -> f32 {
    let u = bitcast<u32>(x);
    let a = u & 0x7fffffffu;
    let s = u & 0x80000000u;
    let q = quantizeToF16(clamp(x, -65504.0, 65504.0));
    let small = bitcast<f32>(s | bitcast<u32>(round(bitcast<f32>(a) * 16777216.0) * 5.9604644775390625e-8));
    let inf = bitcast<f32>(s | 0x7f800000u);
    let r = select(select(q, small, a < 0x38800000u), inf, a >= 0x477ff000u);
    return select(r, x, a > 0x7f800000u);
}
