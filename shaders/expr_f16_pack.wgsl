// Fragment: rf16 of expr_f16.wgsl through pack2x16float and
// unpack2x16float (WGC_EXPR_F16_ROUND=pack), joined in its place. Packing
// a value outside f16's finite range is indeterminate, so the value is
// clamped into it (65504 is what (65504, 65520) rounds to) and overflow to
// infinity (65520 and up) and NaN are chosen by selects.
fn rf16(x: f32) -> f32 {
    let u = bitcast<u32>(x);
    let a = u & 0x7fffffffu;
    let q = unpack2x16float(pack2x16float(vec2<f32>(clamp(x, -65504.0, 65504.0), 0.0))).x;
    let inf = bitcast<f32>((u & 0x80000000u) | 0x7f800000u);
    return select(select(q, inf, a >= 0x477ff000u), x, a > 0x7f800000u);
}
