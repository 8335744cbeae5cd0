//! IEEE binary16 and bfloat16 rounding of doubles, done once: converting
//! through f32 first rounds twice (1 + 2^-11 + 2^-30 would become 1 instead
//! of the nearest half above), and the `half` crate's f64 conversion goes
//! through f32 on x86.

/// The binary16 bits nearest to `v` (ties to even; +-inf beyond the range,
/// a quiet NaN for NaN, signed zeros kept).
pub fn f16_bits(v: f64) -> u16 {
    let sign = if v.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = v.abs();
    if a.is_nan() {
        return 0x7e00 | sign;
    }
    // 65520 is halfway between the largest half (65504) and 2^16: ties go to
    // the even neighbour, which is the overflow.
    if a >= 65520.0 {
        return 0x7c00 | sign;
    }
    // The spacing of halves near `a`: 2^(e - 10) for normal a in [2^e,
    // 2^(e+1)), 2^-24 for subnormals. Scaling by a power of 2 is exact.
    let e = if a == 0.0 { -14 } else { binade(a).max(-14) };
    let q = 2f64.powi(e - 10);
    let m = (a / q).round_ties_even(); // at most 2048: the top of the binade
    let (m, e) = if m >= 2048.0 { (1024.0, e + 1) } else { (m, e) };
    let bits = if m < 1024.0 {
        m as u16 // subnormal (e = -14) or zero
    } else {
        (((e + 15) as u16) << 10) | (m as u16 - 1024)
    };
    bits | sign
}

/// The bfloat16 bits nearest to `v` (ties to even; +-inf beyond the range,
/// the quiet NaN 0x7fc0 for NaN as PyTorch's conversion gives, signed zeros
/// kept). bf16 has f32's exponent range and 8 significant bits.
pub fn bf16_bits(v: f64) -> u16 {
    let sign = if v.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = v.abs();
    if a.is_nan() {
        return 0x7fc0;
    }
    // Halfway between the largest bf16, (2 - 2^-7) 2^127, and 2^128: ties
    // go to the even neighbour, which is the overflow.
    if a >= (2.0 - 2f64.powi(-8)) * 2f64.powi(127) {
        return 0x7f80 | sign;
    }
    // The spacing of bf16 values near `a`: 2^(e - 7), 2^-133 for subnormals.
    let e = if a == 0.0 { -126 } else { binade(a).max(-126) };
    let q = 2f64.powi(e - 7);
    let m = (a / q).round_ties_even(); // at most 256: the top of the binade
    let (m, e) = if m >= 256.0 { (128.0, e + 1) } else { (m, e) };
    let bits = if m < 128.0 {
        m as u16 // subnormal (e = -126) or zero
    } else {
        (((e + 127) as u16) << 7) | (m as u16 - 128)
    };
    bits | sign
}

/// The f32 with the value of the bf16 `bits` (exact).
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// e with 2^e <= a < 2^(e+1), for finite a > 0 (log2 alone may round across).
fn binade(a: f64) -> i32 {
    let e = a.log2().floor() as i32;
    if 2f64.powi(e) > a {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::{bf16_bits, bf16_to_f32, f16_bits};

    #[test]
    fn bf16_rounds_once_from_the_double() {
        assert_eq!(bf16_bits(1.0), 0x3f80);
        assert_eq!(bf16_bits(1.0 + 2f64.powi(-8)), 0x3f80); // tie: to even
        assert_eq!(bf16_bits(1.0 + 2f64.powi(-8) + 2f64.powi(-40)), 0x3f81);
        assert_eq!(bf16_bits(1.0 + 3.0 * 2f64.powi(-8)), 0x3f82); // tie: to even (up)
        assert_eq!(bf16_bits(-2.5), 0xc020);
        assert_eq!(bf16_bits(f32::MAX as f64), 0x7f80); // f32's max rounds up to inf
        assert_eq!(bf16_bits(3.3895313892515355e38), 0x7f7f); // the largest bf16
        assert_eq!(bf16_bits(-1e300), 0xff80);
        assert_eq!(bf16_bits(f64::NAN), 0x7fc0);
        assert_eq!(bf16_bits(-0.0), 0x8000);
        assert_eq!(bf16_bits(2f64.powi(-126)), 0x0080); // smallest normal
        assert_eq!(bf16_bits(2f64.powi(-133)), 0x0001); // smallest subnormal
        assert_eq!(bf16_bits(2f64.powi(-134)), 0x0000); // tie: to even (zero)
        assert_eq!(bf16_bits(3.0 * 2f64.powi(-134)), 0x0002); // tie: to even (up)
        assert_eq!(bf16_bits(1e-300), 0x0000);
        assert_eq!(bf16_bits(0.1), 0x3dcd);
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
        // Every bf16 converts back to itself; midpoints go to the even side.
        for h in 0u16..0x7f80 {
            let v = bf16_to_f32(h) as f64;
            assert_eq!(bf16_bits(v), h, "{v}");
            assert_eq!(bf16_bits(-v), h | 0x8000);
            if h < 0x7f7f {
                let mid = (v + bf16_to_f32(h + 1) as f64) / 2.0;
                assert_eq!(bf16_bits(mid), if h % 2 == 0 { h } else { h + 1 }, "midpoint above {v}");
            }
        }
    }

    #[test]
    fn rounds_once_from_the_double() {
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(1.0 + 2f64.powi(-11)), 0x3c00); // tie: to even
        assert_eq!(f16_bits(1.0 + 2f64.powi(-11) + 2f64.powi(-30)), 0x3c01);
        assert_eq!(f16_bits(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02); // tie: to even (up)
        assert_eq!(f16_bits(-2.5), 0xc100);
        assert_eq!(f16_bits(65504.0), 0x7bff);
        assert_eq!(f16_bits(65519.99), 0x7bff);
        assert_eq!(f16_bits(65520.0), 0x7c00);
        assert_eq!(f16_bits(-1e300), 0xfc00);
        assert_eq!(f16_bits(f64::INFINITY), 0x7c00);
        assert_eq!(f16_bits(f64::NAN) & 0x7fff, 0x7e00);
        assert_eq!(f16_bits(-0.0), 0x8000);
        assert_eq!(f16_bits(2f64.powi(-14)), 0x0400); // smallest normal
        assert_eq!(f16_bits(2f64.powi(-24)), 0x0001); // smallest subnormal
        assert_eq!(f16_bits(2f64.powi(-25)), 0x0000); // tie: to even (zero)
        assert_eq!(f16_bits(2f64.powi(-25) * 1.0001), 0x0001);
        assert_eq!(f16_bits(2f64.powi(-14) - 2f64.powi(-25)), 0x0400); // rounds up into the normals
        assert_eq!(f16_bits(1e-300), 0x0000);
        assert_eq!(f16_bits(0.1), 0x2e66);
        assert_eq!(f16_bits(2047.5), 0x6800); // tie between 2047 and 2048: to even
    }

    /// Every half converts back to itself, and midpoints go to the even side.
    #[test]
    fn every_half_round_trips() {
        for h in 0u16..0x7c00 {
            let v = half_value(h);
            assert_eq!(f16_bits(v), h, "{v}");
            assert_eq!(f16_bits(-v), h | 0x8000);
            if h < 0x7bff {
                let mid = (v + half_value(h + 1)) / 2.0;
                let even = if h % 2 == 0 { h } else { h + 1 };
                assert_eq!(f16_bits(mid), even, "midpoint above {v}");
            }
        }
    }

    fn half_value(h: u16) -> f64 {
        let e = (h >> 10) as i32;
        let m = (h & 0x3ff) as f64;
        if e == 0 {
            m * 2f64.powi(-24)
        } else {
            (1.0 + m / 1024.0) * 2f64.powi(e - 15)
        }
    }
}
