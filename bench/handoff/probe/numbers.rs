//! Host-side numbers: f16 encoding, a seeded generator, and the f64 reference of sampled
//! GEMM entries.

/// xorshift64*: deterministic operands without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A value k / 256 with k in [-256, 256]: exact in f16, nonzero on average.
    pub fn operand_f16(&mut self) -> u16 {
        let k = (self.next_u64() >> 40) % 513;
        f32_to_f16(k as f32 / 256.0 - 1.0)
    }
}

/// Round-to-nearest-even f32 -> f16 (finite inputs in f16 range and subnormals).
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let abs = bits & 0x7fff_ffff;
    if abs >= 0x7f80_0000 {
        return sign | 0x7c00 | if abs > 0x7f80_0000 { 0x200 } else { 0 };
    }
    if abs >= 0x4780_0000 {
        return sign | 0x7c00;
    }
    if abs < 0x3880_0000 {
        // Subnormal or zero in f16: scale into the 10-bit mantissa and round.
        let value = f32::from_bits(abs) * (1u32 << 24) as f32;
        return sign | value.round_ties_even() as u16;
    }
    let exp = (abs >> 23) as i32 - 127 + 15;
    let mant = abs & 0x7f_ffff;
    let mut half = ((exp as u32) << 10) | (mant >> 13);
    let rest = mant & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && (half & 1) == 1) {
        half += 1;
    }
    sign | half as u16
}

pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let mant = (h & 0x3ff) as f64;
    match exp {
        0 => sign * mant * 2f64.powi(-24),
        31 if mant == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + mant / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// C = A B^T with A (M, K) and B (N, K) row-major, C (M, N) row-major in f16: checks
/// `samples` random entries against an f64 reference. The bound allows f16 rounding of
/// the output and f32 accumulation: 2^-10 |ref| + 2^-16 sum |a b| + 2^-14.
pub struct GemmCheck {
    pub checked: usize,
    pub failures: usize,
    pub max_abs_err: f64,
    pub max_ref: f64,
}

pub fn check_gemm_samples(
    a: &[u16],
    b: &[u16],
    c: &[u16],
    (m, n, k): (usize, usize, usize),
    samples: usize,
    rng: &mut Rng,
) -> GemmCheck {
    let mut result = GemmCheck { checked: 0, failures: 0, max_abs_err: 0.0, max_ref: 0.0 };
    for _ in 0..samples {
        let (row, col) = (rng.below(m), rng.below(n));
        let (mut reference, mut magnitude) = (0.0f64, 0.0f64);
        for kk in 0..k {
            let product = f16_to_f64(a[row * k + kk]) * f16_to_f64(b[col * k + kk]);
            reference += product;
            magnitude += product.abs();
        }
        let got = f16_to_f64(c[row * n + col]);
        let err = (got - reference).abs();
        let bound = reference.abs() * 2f64.powi(-10) + magnitude * 2f64.powi(-16) + 2f64.powi(-14);
        result.checked += 1;
        if err.is_nan() || err > bound {
            result.failures += 1;
        }
        result.max_abs_err = result.max_abs_err.max(if err.is_nan() { f64::INFINITY } else { err });
        result.max_ref = result.max_ref.max(reference.abs());
    }
    result
}

/// A word pattern that differs in every word and between `seed`s.
pub fn pattern_word(index: usize, seed: u32) -> u32 {
    let x = (index as u32).wrapping_mul(0x9e37_79b1) ^ seed.wrapping_mul(0x85eb_ca6b);
    x ^ (x >> 15)
}

pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}
