//! `sin` and `cos`.

use crate::arith::{Arith, Float};

/// Largest |x| for which f32 `sin`/`cos` meet the documented error bound.
pub const SIN_COS_MAX_ARG_F32: f32 = 1.0e5;
/// Largest |x| for which f64 `sin`/`cos` meet the documented error bound.
pub const SIN_COS_MAX_ARG_F64: f64 = 1.0e9;

/// `sin x` (`cos == false`) or `cos x` (`cos == true`).
///
/// Reduction: `j = round(x · 2/π)` (by the magic-number trick, which also leaves `j mod 4` in
/// the low bits), `r = x - j·π/2` with π/2 split in three parts applied by `fma` (the first
/// product is exact, each later step rounds once), so |r| ≤ π/4 (+ rounding) with an absolute
/// error near ulp(r)/2 for |x| up to [`SIN_COS_MAX_ARG_F32`] / [`SIN_COS_MAX_ARG_F64`].
/// Then `sin r` / `cos r` by minimax polynomials (Cephes `sinf`/`cosf` for f32, fdlibm
/// `__kernel_sin`/`__kernel_cos` for f64) and the quadrant picks one and its sign.
/// ±inf and NaN give NaN (`inf - inf` in the reduction).
#[inline(always)]
pub fn sin_cos<M: Arith>(m: &mut M, x: M::V, cos: bool) -> M::V {
    let (p1, p2, p3) = match m.float() {
        Float::F32 => (0x3fc9_0fdbu64, 0xb33b_bd2eu64, 0xa6f7_2cedu64),
        Float::F64 => (0x3ff9_21fb_5444_2d18u64, 0x3c91_a626_3314_5c07u64, 0xb91f_1976_b7ed_8fbcu64),
    };
    let two_over_pi = m.c(std::f64::consts::FRAC_2_PI);
    let magic = m.magic();
    let magic = m.c(magic);
    let t = m.fma(x, two_over_pi, magic);
    let j = m.sub(t, magic);
    let nj = m.neg(j);
    let c1 = m.cbits(p1);
    let c2 = m.cbits(p2);
    let c3 = m.cbits(p3);
    let r = m.fma(nj, c1, x);
    let r = m.fma(nj, c2, r);
    let r = m.fma(nj, c3, r);
    let z = m.mul(r, r);

    // sin r = r + r z S(z)
    let s_poly: &[f64] = match m.float() {
        Float::F32 => &[-1.951_529_589_1e-4, 8.332_160_873_6e-3, -1.666_665_461_1e-1],
        Float::F64 => &[
            f64::from_bits(0x3DE5_D93A_5ACF_D57C), // S6
            f64::from_bits(0xBE5A_E5E6_8A2B_9CEB), // S5
            f64::from_bits(0x3EC7_1DE3_57B1_FE7D), // S4
            f64::from_bits(0xBF2A_01A0_19C1_61D5), // S3
            f64::from_bits(0x3F81_1111_1110_F8A6), // S2
            f64::from_bits(0xBFC5_5555_5555_5549), // S1
        ],
    };
    let sp = m.horner(z, s_poly);
    let rz = m.mul(r, z);
    let s = m.fma(rz, sp, r);

    // cos r = 1 - z/2 + z² C(z), summed as fdlibm does so that 1 - z/2 loses nothing.
    let c_poly: &[f64] = match m.float() {
        Float::F32 => &[2.443_315_711_809_948e-5, -1.388_731_625_493_765e-3, 4.166_664_568_298_827e-2],
        Float::F64 => &[
            f64::from_bits(0xBDA8_FAE9_BE88_38D4), // C6
            f64::from_bits(0x3E21_EE9E_BDB4_B1C4), // C5
            f64::from_bits(0xBE92_7E4F_809C_52AD), // C4
            f64::from_bits(0x3EFA_01A0_19CB_1590), // C3
            f64::from_bits(0xBF56_C16C_16C1_5177), // C2
            f64::from_bits(0x3FA5_5555_5555_554C), // C1
        ],
    };
    let cp = m.horner(z, c_poly);
    let zz = m.mul(z, z);
    let tail = m.mul(zz, cp);
    let half = m.c(0.5);
    let hz = m.mul(half, z);
    let one = m.c(1.0);
    let w = m.sub(one, hz);
    let lost = m.sub(one, w);
    let lost = m.sub(lost, hz);
    let tail = m.add(lost, tail);
    let c = m.add(w, tail);

    // Quadrant q = j mod 4 (cos x = sin(x + π/2): one more quadrant). Odd q uses the cosine
    // polynomial; q ≥ 2 negates.
    let tb = m.bits(t);
    let q = if cos {
        let one_i = m.ic(1);
        m.iadd(tb, one_i)
    } else {
        tb
    };
    let one_i = m.ic(1);
    let odd = m.iand(q, one_i);
    let izero = m.ic(0);
    let use_cos = m.ine(odd, izero);
    let res = m.sel(use_cos, c, s);
    let two_i = m.ic(2);
    let neg = m.iand(q, two_i);
    let shift = m.lane_bits() - 2;
    let flip = m.ishl(neg, shift);
    let rb = m.bits(res);
    let rb = m.ixor(rb, flip);
    let res = m.float_of(rb);
    if cos {
        res
    } else {
        // sin(±0) = ±0: the reduction's -0 + +0 sums lose the sign of zero.
        let zero = m.c(0.0);
        let x0 = m.eq(x, zero);
        m.sel(x0, x, res)
    }
}
