//! Vectorizable float32 `exp` and `tanh` for the same-footing baselines of W1 and W4: branch-free
//! (every special case is a select), so the compiler turns a loop over them into AVX2 / AVX-512 code,
//! as ragtime's kernels are. Accuracy of the same order as ragtime's own vector math (a few ulp),
//! from the classic Cephes single-precision polynomials (range reduction by `ln 2`, a degree-6
//! polynomial for `exp`; an odd degree-11 polynomial for `tanh` below 0.625, `1 - 2 / (e^{2x} + 1)`
//! above).

/// `ln 2` split in two so `x - k ln 2` is exact for the `k` of a float32 `exp`.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;

/// `e^x`: exact at 0, `+inf` above 88.72, `0` below -87.34 (no subnormal results), NaN for NaN.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let clamped = x.clamp(-87.336_55, 88.722_83);
    let k = (clamped * std::f32::consts::LOG2_E + 0.5).floor();
    let r = clamped - k * LN2_HI - k * LN2_LO;
    let p = 1.987_569_1e-4_f32;
    let p = p.mul_add(r, 1.398_199_9e-3);
    let p = p.mul_add(r, 8.333_452e-3);
    let p = p.mul_add(r, 4.166_579_6e-2);
    let p = p.mul_add(r, 1.666_666_5e-1);
    let p = p.mul_add(r, 0.5);
    let y = p.mul_add(r * r, r) + 1.0;
    // 2^k as two normal powers of two from their exponent bits (k is in -126..=128 after the clamp,
    // and 2^128 is not a float32).
    let pow2 = |n: i32| f32::from_bits(((n + 127).clamp(1, 254) as u32) << 23);
    let (k1, k2) = ((k as i32) / 2, (k as i32) - (k as i32) / 2);
    let e = y * pow2(k1) * pow2(k2);
    let e = if x > 88.722_83 { f32::INFINITY } else { e };
    let e = if x < -87.336_55 { 0.0 } else { e };
    if x.is_nan() {
        x
    } else {
        e
    }
}

/// `tanh(x)`: odd, exact at 0, ±1 beyond ±9.1.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let p = -5.704_988_7e-3_f32;
    let p = p.mul_add(z, 2.063_909e-2);
    let p = p.mul_add(z, -5.373_971_6e-2);
    let p = p.mul_add(z, 1.333_144_2e-1);
    let p = p.mul_add(z, -3.333_328e-1);
    let small = (p * z).mul_add(x, x);
    let large = (1.0 - 2.0 / (exp(2.0 * a.min(10.0)) + 1.0)).copysign(x);
    if a < 0.625 {
        small
    } else {
        large
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units of the last place between two finite float32 values of one sign.
    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn exp_is_within_a_few_ulp_of_libm() {
        let mut worst = 0;
        for k in -870_000..=887_000 {
            let x = k as f32 / 10_000.0;
            let (got, want) = (exp(x), x.exp());
            if want > f32::MIN_POSITIVE {
                worst = worst.max(ulps(got, want));
            }
        }
        assert!(worst <= 2, "worst exp error {worst} ulp");
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(100.0), f32::INFINITY);
        assert_eq!(exp(-100.0), 0.0);
        assert!(exp(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_is_within_a_few_ulp_of_libm() {
        let mut worst = 0;
        for k in -100_000..=100_000 {
            let x = k as f32 / 10_000.0;
            worst = worst.max(ulps(tanh(x), x.tanh()));
        }
        assert!(worst <= 4, "worst tanh error {worst} ulp");
        assert_eq!(tanh(0.0), 0.0);
        assert_eq!(tanh(20.0), 1.0);
        assert_eq!(tanh(-20.0), -1.0);
    }
}
