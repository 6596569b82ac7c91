//! `exp`, `log` and `pow`.

use crate::arith::{Arith, BinaryFn, Float, Widen};

/// `e^(x + lo)`; `lo` is an optional low-order correction (|lo| ≤ ulp(x)) that `pow` uses to
/// carry the rounding error of `y * ln x` into the reduced argument.
///
/// Method: `n = round(x / ln2)`, `r = x - n ln2` with ln2 split in two parts (Cody–Waite; with
/// fma the first product is exact), `e^r` by a polynomial on |r| ≤ ln2/2, and the result
/// `p * 2^n1 * 2^n2` with `n1 = n >> 1`, `n2 = n - n1`: two scalings keep every factor normal,
/// so results near the overflow threshold are rounded once, correctly. Results below the
/// smallest normal float are flushed to 0, as TensorFlow does ([`flush_subnormal`]). `x` is
/// first clamped to a range whose ends overflow to +inf / underflow to 0 by themselves (NaN
/// passes through).
#[inline(always)] // so that a SIMD backend's intrinsics inline into its target-feature loop
pub fn exp<M: Arith>(m: &mut M, x: M::V, lo: Option<M::V>) -> M::V {
    let (hi_clamp, lo_clamp, ln2_hi, ln2_lo) = match m.float() {
        // e^89 > f32::MAX; e^-104 < f32 min denormal / 2.
        Float::F32 => (89.0, -104.0, 0x3f31_7218u64, 0xb102_e308u64),
        // e^710 > f64::MAX; e^-746 < f64 min denormal / 2.
        Float::F64 => (710.0, -746.0, 0x3fe6_2e42_fefa_39ef, 0x3c7a_bc9e_3b39_803f),
    };
    let hc = m.c(hi_clamp);
    let lc = m.c(lo_clamp);
    // A clamped argument is far past overflow or underflow: its low part (pow's rounding error
    // of a huge product, itself possibly huge) must not move it back into range.
    let lo = lo.map(|lo| {
        let over = m.lt(hc, x);
        let under = m.lt(x, lc);
        let clamped = m.mask_or(over, under);
        let zero = m.c(0.0);
        m.sel(clamped, zero, lo)
    });
    // `c < x ? c : x` and `x < c ? c : x` (one minps / maxps) rather than NaN-propagating
    // fmin/fmax, which lower to long sequences; a NaN compares false and passes through.
    let x = m.min_pick(hc, x);
    let x = m.max_pick(lc, x);

    let log2e = m.c(std::f64::consts::LOG2_E);
    let magic = m.magic();
    let magic = m.c(magic);
    // t holds round(x / ln2) in its low mantissa bits.
    let t = m.fma(x, log2e, magic);
    let n = m.sub(t, magic);
    let c1 = m.cbits(ln2_hi);
    let c2 = m.cbits(ln2_lo);
    let r = m.fnma(n, c1, x);
    let mut r = m.fnma(n, c2, r);
    if let Some(lo) = lo {
        r = m.add(r, lo);
    }

    let p = match m.float() {
        // Cephes expf: minimax on [-ln2/2, ln2/2], relative error ~1e-7.
        Float::F32 => {
            let q = m.horner(
                r,
                &[
                    1.987_569_150_0e-4,
                    1.398_199_950_7e-3,
                    8.333_451_907_3e-3,
                    4.166_579_589_4e-2,
                    1.666_666_545_9e-1,
                    5.000_000_120_1e-1,
                ],
            );
            let rr = m.mul(r, r);
            let one = m.c(1.0);
            let s = m.add(r, one);
            m.fma(q, rr, s)
        }
        // Taylor series to degree 13: on |r| ≤ ln2/2 the truncation error is below 2^-57,
        // so the coefficients are exact reciprocals of factorials (no fitted constants).
        Float::F64 => {
            let mut coeffs = [0.0f64; 12];
            let mut fact = 1.0f64;
            for k in 2..=13u32 {
                fact *= f64::from(k);
                coeffs[13 - k as usize] = 1.0 / fact;
            }
            let q = m.horner(r, &coeffs);
            let rr = m.mul(r, r);
            let one = m.c(1.0);
            let s = m.add(r, one);
            m.fma(q, rr, s)
        }
    };

    let y = m.mul_pow2(p, n, t);
    // Flush to zero as `flush_subnormal`, for a result known to be ≥ +0 or NaN: NaN and
    // normal results pass `!(y < min_normal)`.
    let min_normal = match m.float() {
        Float::F32 => f64::from(f32::MIN_POSITIVE),
        Float::F64 => f64::MIN_POSITIVE,
    };
    let min_normal = m.c(min_normal);
    m.keep_unless_below(y, min_normal)
}

/// `y`, or a zero of its sign where `|y|` is below the smallest normal float: TensorFlow's CPU
/// kernels run with flush-to-zero, so its `exp`, `sigmoid` and `pow` give 0 there (crate docs).
/// NaN passes through (the comparison is false).
#[inline(always)]
pub fn flush_subnormal<M: Arith>(m: &mut M, y: M::V) -> M::V {
    let min_normal = match m.float() {
        Float::F32 => f64::from(f32::MIN_POSITIVE),
        Float::F64 => f64::MIN_POSITIVE,
    };
    let min_normal = m.c(min_normal);
    let a = m.abs(y);
    let tiny = m.lt(a, min_normal);
    let yb = m.bits(y);
    let sign = m.sign_mask();
    let zero = m.iand(yb, sign);
    let zero = m.float_of(zero);
    m.sel(tiny, zero, y)
}

/// Splits `x > 0` (finite, normal or denormal) into `k` and `f` with `x = 2^k (1 + f)`,
/// `1 + f` in [sqrt(2)/2, sqrt(2)). Returns `(k as float, f)`.
#[inline(always)]
fn log_reduce<M: Arith>(m: &mut M, x: M::V) -> (M::V, M::V) {
    let (min_pos, scale, scale_k, one_bits, sqrt_half_bits, mant_mask) = match m.float() {
        Float::F32 => (f64::from(f32::MIN_POSITIVE), 2f64.powi(25), 25, 0x3f80_0000i64, 0x3f35_04f3i64, 0x007f_ffffi64),
        Float::F64 => (
            f64::MIN_POSITIVE,
            2f64.powi(54),
            54,
            0x3ff0_0000_0000_0000i64,
            0x3fe6_a09e_667f_3bcdi64,
            0x000f_ffff_ffff_ffffi64,
        ),
    };
    // Denormals: scale into the normal range first, and take the scale back out of k.
    let mp = m.c(min_pos);
    let tiny = m.lt(x, mp);
    let sc = m.c(scale);
    let xs = m.mul(x, sc);
    let x = m.sel(tiny, xs, x);
    let kadj = m.ic(-scale_k);
    let zero = m.ic(0);
    let kadj = m.sel(tiny, kadj, zero);

    // musl/fdlibm: shift the mantissa so that the split happens at sqrt(2)/2.
    let ix = m.bits(x);
    let off = m.ic(one_bits - sqrt_half_bits);
    let ix = m.iadd(ix, off);
    let mb = m.mant_bits();
    let k = m.ushr(ix, mb);
    let bias = m.bias();
    let bias = m.ic(bias);
    let k = m.isub(k, bias);
    let k = m.iadd(k, kadj);
    let mask = m.ic(mant_mask);
    let ix = m.iand(ix, mask);
    let sh = m.ic(sqrt_half_bits);
    let ix = m.iadd(ix, sh);
    let xm = m.float_of(ix);
    let one = m.c(1.0);
    let f = m.sub(xm, one);
    let dk = m.int_to_float(k);
    (dk, f)
}

/// `ln x`: musl's `logf` / fdlibm's `log` — `ln(1+f) = f - f²/2 + s(f²/2 + R(s²))` with
/// `s = f/(2+f)` and R a minimax polynomial (fdlibm: error < 2^-58.45 for f64, 2^-34.24 for
/// f32), plus `k ln2` in two parts. Special cases by `select`: ln 0 = -inf, ln(x<0) = NaN,
/// ln(+inf) = +inf, ln NaN = NaN.
#[inline(always)]
pub fn log<M: Arith>(m: &mut M, x: M::V) -> M::V {
    let (dk, f) = log_reduce(m, x);
    let (ln2_hi, ln2_lo) = match m.float() {
        Float::F32 => (0x3f31_7180u64, 0x3717_f7d1u64),
        Float::F64 => (0x3fe6_2e42_fee0_0000u64, 0x3dea_39ef_3579_3c76u64),
    };
    let half = m.c(0.5);
    let ff = m.mul(f, f);
    let hfsq = m.mul(half, ff);
    let (s, r) = log_s_r(m, f);
    // s*(hfsq+R) + dk*ln2_lo - hfsq + f + dk*ln2_hi, in musl's order.
    let hr = m.add(hfsq, r);
    let a = m.mul(s, hr);
    let lo = m.cbits(ln2_lo);
    let klo = m.mul(dk, lo);
    let a = m.add(a, klo);
    let a = m.sub(a, hfsq);
    let a = m.add(a, f);
    let hi = m.cbits(ln2_hi);
    let khi = m.mul(dk, hi);
    let y = m.add(a, khi);

    log_specials(m, x, y)
}

/// ln 0 = -inf, ln(x<0) = NaN, ln(+inf) = +inf, ln NaN = NaN; `y` elsewhere.
#[inline(always)]
fn log_specials<M: Arith>(m: &mut M, x: M::V, y: M::V) -> M::V {
    let zero = m.c(0.0);
    let ninf = m.c(f64::NEG_INFINITY);
    let is0 = m.eq(x, zero);
    let y = m.sel(is0, ninf, y);
    let nan = m.c(f64::NAN);
    let neg = m.lt(x, zero);
    let y = m.sel(neg, nan, y);
    let inf = m.c(f64::INFINITY);
    // NaN or +inf: the answer is x itself.
    let big = m.ge_or_nan(x, inf);
    m.sel(big, x, y)
}

/// `ln x` for `pow`, as an unevaluated sum `hi + lo` accurate to about 2^-60 relative: the
/// rounding of `k ln2_hi + f - f²/2` (the large terms) is kept in `lo`. With the plain `log`,
/// `pow`'s error grows like `|y ln x|` ulps (hundreds near overflow). `lo` is 0 for the
/// special inputs, where `hi` is what `log` returns.
#[inline(always)]
fn log_dw<M: Arith>(m: &mut M, x: M::V) -> (M::V, M::V) {
    let (dk, f) = log_reduce(m, x);
    let (ln2_hi, ln2_lo) = match m.float() {
        Float::F32 => (0x3f31_7180u64, 0x3717_f7d1u64),
        Float::F64 => (0x3fe6_2e42_fee0_0000u64, 0x3dea_39ef_3579_3c76u64),
    };
    // f² exactly (fma residual), halved exactly.
    let ff = m.mul(f, f);
    let nff = m.neg(ff);
    let ff_lo = m.fma(f, f, nff);
    let half = m.c(0.5);
    let hf_hi = m.mul(half, ff);
    let hf_lo = m.mul(half, ff_lo);
    let (s, r) = log_s_r(m, f);
    let hr = m.add(hf_hi, r);
    let u = m.mul(s, hr);
    // d = f - hf_hi exactly as d_hi + d_lo (Fast2Sum: |f| ≥ f²/2 for |f| < 0.42).
    let d_hi = m.sub(f, hf_hi);
    let t = m.sub(f, d_hi);
    let d_lo = m.sub(t, hf_hi);
    // a = k ln2_hi (exact: ln2_hi has 32 trailing zero bits) plus d_hi, by Fast2Sum
    // (|a| ≥ ln2/2 > |d_hi| when k ≠ 0; exact when k = 0).
    let c_hi = m.cbits(ln2_hi);
    let a = m.mul(dk, c_hi);
    let hi = m.add(a, d_hi);
    let t = m.sub(a, hi);
    let e = m.add(t, d_hi);
    let c_lo = m.cbits(ln2_lo);
    let klo = m.mul(dk, c_lo);
    let lo = m.sub(d_lo, hf_lo);
    let lo = m.add(lo, u);
    let lo = m.add(lo, klo);
    let lo = m.add(lo, e);
    let hi2 = m.add(hi, lo);
    let t = m.sub(hi, hi2);
    let lo2 = m.add(t, lo);

    let hi_s = log_specials(m, x, hi2);
    let zero = m.c(0.0);
    let inf = m.c(f64::INFINITY);
    let pos = m.lt(zero, x);
    let fin = m.lt(x, inf);
    let normal = m.mask_and(pos, fin);
    let lo_s = m.sel(normal, lo2, zero);
    (hi_s, lo_s)
}

/// fdlibm's `s = f/(2+f)` and `R(s²)` with `ln(1+f) = f - f²/2 + s(f²/2 + R)`.
#[inline(always)]
fn log_s_r<M: Arith>(m: &mut M, f: M::V) -> (M::V, M::V) {
    let two = m.c(2.0);
    let den = m.add(two, f);
    let s = m.div(f, den);
    let z = m.mul(s, s);
    let w = m.mul(z, z);
    let (t1, t2) = match m.float() {
        Float::F32 => {
            // musl logf: Lg1..Lg4 = 0xaaaaaa.0p-24, 0xccce13.0p-25, 0x91e9ee.0p-25, 0xf89e26.0p-26.
            let p1 = m.horner(w, &[0.242_790_788_412_094_12, 0.400_009_721_517_562_87]);
            let p2 = m.horner(w, &[0.284_987_866_878_509_5, 0.666_666_626_930_236_8]);
            (m.mul(w, p1), m.mul(z, p2))
        }
        Float::F64 => {
            let lg = |b: u64| f64::from_bits(b);
            let p1 = m.horner(
                w,
                &[
                    lg(0x3FC3_9A09_D078_C69F), // Lg6
                    lg(0x3FCC_71C5_1D8E_78AF), // Lg4
                    lg(0x3FD9_9999_9997_FA04), // Lg2
                ],
            );
            let p2 = m.horner(
                w,
                &[
                    lg(0x3FC2_F112_DF3E_5244), // Lg7
                    lg(0x3FC7_4664_96CB_03DE), // Lg5
                    lg(0x3FD2_4924_9422_9359), // Lg3
                    lg(0x3FE5_5555_5555_5593), // Lg1
                ],
            );
            (m.mul(w, p1), m.mul(z, p2))
        }
    };
    let r = m.add(t2, t1);
    (s, r)
}

/// float64 `x^y` with C99 Annex F special cases: `e^(y ln|x|)` with `ln` as a double-word
/// `hi + lo` and the product's rounding error fed into `exp`'s reduced argument; the remaining
/// error still grows with `|y ln x|`, see the crate docs.
///
/// # Panics
/// If `m` works on float32 lanes (use [`pow_f32`]).
#[inline(always)]
pub fn pow_f64<M: Arith>(m: &mut M, x: M::V, y: M::V) -> M::V {
    assert_eq!(m.float(), Float::F64, "pow_f64 on float32 lanes");
    pow_in_f64(m, x, y, true)
}

/// float32 `x^y` with C99 Annex F special cases: the lanes are widened to float64 and computed
/// there (the float64 `y ln|x|` error is far below float32 resolution, so float32 `pow` is
/// nearly correctly rounded), then rounded back.
#[inline(always)]
pub fn pow_f32<M: Widen>(m: &mut M, x: M::V, y: M::V) -> M::V {
    let r = m.widened(x, y, &PowInF64);
    // Normal in float64, possibly subnormal in float32: flushed as float32 `exp` flushes.
    flush_subnormal(m, r)
}

/// float32 `pow`'s work on the widened lanes.
#[derive(Debug)]
struct PowInF64;

impl BinaryFn for PowInF64 {
    #[inline(always)]
    fn apply<W: Arith>(&self, w: &mut W, x: W::V, y: W::V) -> W::V {
        pow_in_f64(w, x, y, false)
    }
}

/// `precise`: double-word `ln` (f64 results); f32 results need only the plain f64 `ln`, whose
/// error times |y ln x| ≤ 104 stays far below an f32 ulp.
#[inline(always)]
fn pow_in_f64<M: Arith>(m: &mut M, x: M::V, y: M::V, precise: bool) -> M::V {
    let ax = m.abs(x);
    let (l, l_lo) = if precise {
        let (l, lo) = log_dw(m, ax);
        (l, Some(lo))
    } else {
        (log(m, ax), None)
    };
    let t = m.mul(y, l);
    let nt = m.neg(t);
    // y (l + l_lo) = t + tlo: the product's exact rounding error plus y l_lo.
    let tlo = m.fma(y, l, nt);
    let tlo = match l_lo {
        Some(l_lo) => m.fma(y, l_lo, tlo),
        None => tlo,
    };
    // 0 * inf and inf - inf give NaN here; such lanes are replaced below or are NaN anyway.
    let zero = m.c(0.0);
    let tlo_ok = m.ordered(tlo, tlo);
    let tlo = m.sel(tlo_ok, tlo, zero);
    let r = exp(m, t, Some(tlo));

    // Integer-ness and parity of y (±inf counts as an even integer, as in C).
    let ty = m.trunc(y);
    let y_int = m.eq(y, ty);
    let half = m.c(0.5);
    let yh = m.mul(y, half);
    let tyh = m.trunc(yh);
    let half_not_int = m.ne(yh, tyh);
    let y_odd = m.mask_and(y_int, half_not_int);

    // Negative base: odd integer y flips the sign (also for -0 and -inf).
    let xb = m.bits(x);
    let izero = m.ic(0);
    let x_signed = m.ilt(xb, izero);
    let flip = m.mask_and(x_signed, y_odd);
    let sign = m.sign_mask();
    let rb = m.bits(r);
    let rb_neg = m.ixor(rb, sign);
    let rb = m.sel(flip, rb_neg, rb);
    let r = m.float_of(rb);

    // Finite negative base with a non-integer finite exponent: NaN.
    let ninf = m.c(f64::NEG_INFINITY);
    let x_neg = m.lt(x, zero);
    let x_fin = m.lt(ninf, x);
    let y_frac = m.ne(y, ty);
    let bad = m.mask_and(x_neg, x_fin);
    let bad = m.mask_and(bad, y_frac);
    let nan = m.c(f64::NAN);
    let r = m.sel(bad, nan, r);

    // pow(x, ±0) = 1, pow(1, y) = 1 (even for NaN), pow(-1, ±inf) = 1.
    let one = m.c(1.0);
    let y0 = m.eq(y, zero);
    let x1 = m.eq(x, one);
    let ax1 = m.eq(ax, one);
    let inf = m.c(f64::INFINITY);
    let ay = m.abs(y);
    let yinf = m.eq(ay, inf);
    let m1inf = m.mask_and(ax1, yinf);
    let is_one = m.mask_or(y0, x1);
    let is_one = m.mask_or(is_one, m1inf);
    m.sel(is_one, one, r)
}
