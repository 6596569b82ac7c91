//! `tanh` and `sigmoid`: float32 `tanh` a rational approximation, the rest built on `exp`.

use crate::arith::{Arith, Float};
use crate::explog;

/// `tanh x`: [`tanh_f32`] or [`tanh_f64`] by the lanes' precision.
#[inline(always)]
pub fn tanh<M: Arith>(m: &mut M, x: M::V) -> M::V {
    match m.float() {
        Float::F32 => tanh_f32(m, x),
        Float::F64 => tanh_f64(m, x),
    }
}

// Cephes' coefficients are kept with the digits it publishes, beyond f64 precision.
#[allow(clippy::excessive_precision)]
/// float64 `tanh x`: an odd rational (Cephes `tanh`) for |x| < 0.625, where
/// `1 - 2/(e^2|x| + 1)` would cancel, and that formula with the sign of x elsewhere. `exp`
/// saturates to +inf for large |x|, giving exactly ±1; NaN stays NaN.
#[inline(always)]
pub fn tanh_f64<M: Arith>(m: &mut M, x: M::V) -> M::V {
    // Both branches work on a = |x| and x's sign bit is OR-ed in at the end, which also makes
    // tanh(-0) = -0 (the polynomial would give +0 + -0 = +0).
    let a = m.abs(x);
    let z = m.mul(a, a);
    // float64 from here on.
    let small = {
        let p = m.horner(
            z,
            &[-9.643_991_794_250_522_386_28e-1, -9.928_772_310_019_185_865_64e1, -1.614_687_684_417_084_479_52e3],
        );
        let q = m.horner(
            z,
            &[1.0, 1.128_116_784_916_329_314_02e2, 2.235_488_390_601_004_485_83e3, 4.844_063_053_251_254_860_48e3],
        );
        let pq = m.div(p, q);
        let pz = m.mul(pq, z);
        m.fma(pz, a, a)
    };

    let a2 = m.add(a, a);
    let e = explog::exp(m, a2, None);
    let one = m.c(1.0);
    let two = m.c(2.0);
    let e1 = m.add(e, one);
    let q = m.div(two, e1);
    let big = m.sub(one, q);

    let lim = m.c(0.625);
    let is_small = m.lt(a, lim);
    let t = m.sel(is_small, small, big);
    // t ≥ 0 (or NaN), so OR-ing in x's sign bit is copysign.
    let sign = m.sign_mask();
    let xb = m.bits(x);
    let xs = m.iand(xb, sign);
    let tb = m.bits(t);
    let tb = m.ior(tb, xs);
    m.float_of(tb)
}

/// The logistic function `1 / (1 + e^-x)`, from one `exp` of `-|x|` and one division.
#[inline(always)] // see `explog::exp`
pub fn sigmoid<M: Arith>(m: &mut M, x: M::V) -> M::V {
    let a = m.abs(x);
    let na = m.neg(a);
    let e = explog::exp(m, na, None);
    let one = m.c(1.0);
    let d = m.add(one, e);
    let zero = m.c(0.0);
    let neg = m.lt(x, zero);
    let num = m.sel(neg, e, one);
    // q ≈ num/d, then one correction step with the residual num - q (1 + e): it removes the
    // rounding of 1 + e, of 1/d and of the product (d_err = e - (d - 1) is exact as e ≤ 1).
    // One division in all.
    let inv = m.div(one, d);
    let q = m.mul(num, inv);
    let dm1 = m.sub(d, one);
    let d_err = m.sub(e, dm1);
    let res = m.fnma(q, d, num);
    let res = m.fnma(q, d_err, res);
    let corr = m.mul(res, inv);
    // For NaN or infinite intermediates the correction is NaN; keep q there.
    let ok = m.ordered(corr, corr);
    let corr = m.sel(ok, corr, zero);
    m.add(q, corr)
}

/// The float32 argument from which TensorFlow's `tanh` is exactly ±1 (TF 2.21 on x86-64:
/// `tanh(7.907389) = 0.9999997`, `tanh(7.9073896) = 1`; `tools/tf_vmath_cases.py`). The
/// rational below is still 3 ulps short of 1 there, so the saturation is an explicit select.
pub const TANH_F32_SATURATION: f32 = 7.907_389_6;

/// float32 `tanh x`: the 13/6-degree rational minimax approximation Eigen uses for float
/// (`generic_fast_tanh_float`, which TensorFlow's CPU kernels run), exactly ±1 from
/// [`TANH_F32_SATURATION`] on as TensorFlow, and x itself for |x| < 0.0004, where tanh x
/// rounds to x. One division and no `exp`: about a third of the instructions of the
/// `exp`-based formula, at 4.5 ulps worst instead of 1.3 (crate docs). NaN stays NaN (it fails
/// both comparisons); the odd numerator keeps tanh(-0) = -0. Large |x| (±inf included) make
/// the rational NaN, which the saturation select replaces.
// The coefficients are kept with the digits Eigen publishes, beyond f32 precision.
#[allow(clippy::excessive_precision)]
#[inline(always)] // see `explog::exp`
pub fn tanh_f32<M: Arith>(m: &mut M, x: M::V) -> M::V {
    let x2 = m.mul(x, x);
    let p = m.horner(
        x2,
        &[
            -2.760_768_477_423_55e-16,
            2.000_187_904_824_77e-13,
            -8.604_671_522_137_35e-11,
            5.122_297_090_371_14e-8,
            1.485_722_357_179_79e-5,
            6.372_619_288_754_36e-4,
            4.893_524_558_917_86e-3,
        ],
    );
    let p = m.mul(p, x);
    let q = m
        .horner(x2, &[1.198_258_394_667_02e-6, 1.185_347_056_866_54e-4, 2.268_434_632_439e-3, 4.893_525_185_543_85e-3]);
    let t = m.div(p, q);
    let a = m.abs(x);
    let tiny = m.c(0.0004);
    let is_tiny = m.lt(a, tiny);
    let t = m.sel(is_tiny, x, t);
    // `last < |x|` with `last` the float below the saturation point: false for NaN.
    let last = m.c(f64::from(f32::from_bits(TANH_F32_SATURATION.to_bits() - 1)));
    let saturated = m.lt(last, a);
    let one = m.c(1.0);
    let xb = m.bits(x);
    let sign = m.sign_mask();
    let xs = m.iand(xb, sign);
    let ob = m.bits(one);
    let ob = m.ior(ob, xs);
    let signed_one = m.float_of(ob);
    m.sel(saturated, signed_one, t)
}
