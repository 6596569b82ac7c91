//! The [`Arith`] trait the math algorithms are written against (one IEEE operation or exact bit
//! manipulation per lane and step), the precision of its lanes ([`Float`]), and [`Widen`], the
//! float32 backends that can also compute in float64 (float32 `pow` does).

/// Floating-point precision of a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Float {
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

/// The operations the math algorithms are written in, so that one algorithm serves every
/// backend: the JIT's `Emit` writes Cranelift IR for it, its `bulk` module evaluates it on
/// 256-bit AVX2 vectors, and [`crate::plain`] on one Rust `f32` / `f64`. Each operation is one
/// IEEE operation (or exact bit manipulation) per lane, so every backend gives every lane the
/// same bits.
///
/// Values are untyped as in Cranelift: a float, the integer of the same width, or a mask, of
/// the backend's lane shape. Masks are all-ones / all-zeros lanes (Cranelift's scalar masks
/// are `0` / `1`; only [`Arith::sel`] and the `mask_*` operations read them).
///
/// The default methods are `#[inline(always)]`, like the backends' methods, so that a
/// target-feature loop gets the whole algorithm inlined with its intrinsics.
pub trait Arith {
    /// A value of the backend's lane shape.
    type V: Copy;
    /// Precision of each lane.
    fn float(&self) -> Float;
    /// A float constant in every lane (rounded to the lane precision).
    fn c(&mut self, v: f64) -> Self::V;
    /// An integer constant in every lane of the integer shape (truncated to the lane width).
    fn ic(&mut self, v: i64) -> Self::V;
    /// `a + b`.
    fn add(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a - b`.
    fn sub(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a * b`.
    fn mul(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a / b`.
    fn div(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `|a|`: the sign bit cleared (NaNs included).
    fn abs(&mut self, a: Self::V) -> Self::V;
    /// `a` rounded toward zero to an integer.
    fn trunc(&mut self, a: Self::V) -> Self::V;
    /// `a * b + c` with one rounding.
    fn fma(&mut self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `c - a * b` with one rounding. One operation, not `fma(-a, b, c)`, because a NaN `a`
    /// must come out with its own sign, as x86's `vfnmadd` gives it.
    fn fnma(&mut self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `-a`: the sign bit flipped.
    fn neg(&mut self, a: Self::V) -> Self::V;
    /// `a < b` (ordered: false when either is NaN), as a mask.
    fn lt(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a == b` (ordered: false when either is NaN), as a mask.
    fn eq(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a != b` (unordered: true when either is NaN), as a mask.
    fn ne(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `!(a < b)`: `a >= b` or either is NaN, as a mask.
    fn ge_or_nan(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Neither `a` nor `b` is NaN, as a mask.
    fn ordered(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `mask ? a : b` lane by lane.
    fn sel(&mut self, mask: Self::V, a: Self::V, b: Self::V) -> Self::V;
    /// Both masks.
    fn mask_and(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Either mask.
    fn mask_or(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Reinterprets a float as the integer of the same shape.
    fn bits(&mut self, x: Self::V) -> Self::V;
    /// Reinterprets an integer as the float of the same shape.
    fn float_of(&mut self, i: Self::V) -> Self::V;
    /// Integer `a + b`, wrapping.
    fn iadd(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Integer `a - b`, wrapping.
    fn isub(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Bitwise `a & b`.
    fn iand(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Bitwise `a | b`.
    fn ior(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Bitwise `a ^ b`.
    fn ixor(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Integer `a != b`, as a mask.
    fn ine(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Signed integer `a < b`, as a mask.
    fn ilt(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a << n` (0 ≤ n < lane bits).
    fn ishl(&mut self, a: Self::V, n: i64) -> Self::V;
    /// Logical `a >> n` (0 ≤ n < lane bits).
    fn ushr(&mut self, a: Self::V, n: i64) -> Self::V;

    /// `mask ? a : +0` lane by lane (one `and` on SIMD backends).
    #[inline(always)]
    fn keep(&mut self, mask: Self::V, a: Self::V) -> Self::V {
        let zero = self.c(0.0);
        self.sel(mask, a, zero)
    }
    /// `y`, or `+0` where `y < c` (a NaN passes): `exp`'s flush of results below the smallest
    /// normal. A backend with mask registers overrides it with a compare and a zeroing move.
    #[inline(always)]
    fn keep_unless_below(&mut self, y: Self::V, c: Self::V) -> Self::V {
        let not_below = self.ge_or_nan(y, c);
        self.keep(not_below, y)
    }
    /// `p * 2^n` rounded once: `exp`'s last step, for `p` in `[0.5, 2)` and an integer `n` of
    /// at most twice the exponent range, given as a float `n` and as `t = n + magic`
    /// ([`Arith::magic`]), whose low bits hold it. The default builds `2^n` as two powers of two
    /// from `t`'s bits, `n1 = floor(n / 2)` and `n2 = n - n1`, each a normal float, so that
    /// `p * 2^n1` is exact and `* 2^n2` the one rounding. A backend with a scaling instruction
    /// (AVX-512's `vscalefps`, one rounding of `p * 2^n`) overrides it: the same bits.
    #[inline(always)]
    fn mul_pow2(&mut self, p: Self::V, n: Self::V, t: Self::V) -> Self::V {
        // The default reads `n` from `t`'s bits.
        let _ = n;
        // `b = n + 2 bias` (positive over the range), `b >> 1 = n1 + bias`, `b - (b >> 1) = n2 + bias`.
        let mb = self.magic_bits();
        let bias = self.bias();
        let shift = self.mant_bits();
        let offset = self.ic(mb - 2 * bias);
        let tb = self.bits(t);
        let biased = self.isub(tb, offset);
        let e1 = self.ushr(biased, 1);
        let e2 = self.isub(biased, e1);
        let s1 = self.ishl(e1, shift);
        let s1 = self.float_of(s1);
        let s2 = self.ishl(e2, shift);
        let s2 = self.float_of(s2);
        let y = self.mul(p, s1);
        self.mul(y, s2)
    }
    /// `a < b ? a : b` (so `b` when either is NaN): x86's `minps` operand order.
    #[inline(always)]
    fn min_pick(&mut self, a: Self::V, b: Self::V) -> Self::V {
        let m = self.lt(a, b);
        self.sel(m, a, b)
    }
    /// `b < a ? a : b` (so `b` when either is NaN): x86's `maxps` operand order.
    #[inline(always)]
    fn max_pick(&mut self, a: Self::V, b: Self::V) -> Self::V {
        let m = self.lt(b, a);
        self.sel(m, a, b)
    }
    /// A float constant given by its bit pattern (exact published constants).
    #[inline(always)]
    fn cbits(&mut self, bits: u64) -> Self::V {
        match self.float() {
            Float::F32 => self.c(f64::from(f32::from_bits(bits as u32))),
            Float::F64 => self.c(f64::from_bits(bits)),
        }
    }
    /// Horner evaluation `((c0 x + c1) x + c2) ...`, highest degree first, with fused steps.
    #[inline(always)]
    fn horner(&mut self, x: Self::V, coeffs: &[f64]) -> Self::V {
        let mut acc = self.c(coeffs[0]);
        for &k in &coeffs[1..] {
            let kc = self.c(k);
            acc = self.fma(acc, x, kc);
        }
        acc
    }
    /// Bits of a lane (32 or 64).
    #[inline(always)]
    fn lane_bits(&self) -> i64 {
        match self.float() {
            Float::F32 => 32,
            Float::F64 => 64,
        }
    }
    /// Bits of the mantissa field (23 or 52).
    #[inline(always)]
    fn mant_bits(&self) -> i64 {
        match self.float() {
            Float::F32 => 23,
            Float::F64 => 52,
        }
    }
    /// Exponent bias (127 or 1023).
    #[inline(always)]
    fn bias(&self) -> i64 {
        match self.float() {
            Float::F32 => 127,
            Float::F64 => 1023,
        }
    }
    /// `1.5 * 2^mant_bits`: adding it rounds a float of magnitude < 2^(mant_bits-1) to an integer
    /// held in the low mantissa bits, which is how these algorithms round and convert without a
    /// float-to-integer conversion (Cranelift has no i64x2 conversions on baseline x86).
    #[inline(always)]
    fn magic(&self) -> f64 {
        1.5 * 2f64.powi(self.mant_bits() as i32)
    }
    /// Bit pattern of [`Arith::magic`].
    #[inline(always)]
    fn magic_bits(&self) -> i64 {
        match self.float() {
            Float::F32 => i64::from((1.5f32 * 8_388_608.0).to_bits()),
            Float::F64 => (1.5f64 * 4_503_599_627_370_496.0).to_bits() as i64,
        }
    }
    /// The sign bit of a lane, as an integer constant.
    #[inline(always)]
    fn sign_mask(&mut self) -> Self::V {
        match self.float() {
            Float::F32 => self.ic(i64::from(i32::MIN)),
            Float::F64 => self.ic(i64::MIN),
        }
    }
    /// Converts a small integer (|i| < 2^(mant_bits-1)) to float, exactly.
    #[inline(always)]
    fn int_to_float(&mut self, i: Self::V) -> Self::V {
        let mb = self.magic_bits();
        let mb = self.ic(mb);
        let t = self.iadd(i, mb);
        let t = self.float_of(t);
        let magic = self.magic();
        let magic = self.c(magic);
        self.sub(t, magic)
    }
}

/// A function of two float lanes written against any [`Arith`] backend, which [`Widen`] runs
/// on float64 lanes.
pub trait BinaryFn {
    /// `f(x, y)` on `w`'s lanes.
    fn apply<W: Arith>(&self, w: &mut W, x: W::V, y: W::V) -> W::V;
}

/// A float32 backend that can also compute on its lanes widened to float64.
pub trait Widen: Arith {
    /// `f(x, y)` computed with every lane converted exactly to float64, and the results rounded
    /// back to float32 (round to nearest even).
    fn widened<F: BinaryFn>(&mut self, x: Self::V, y: Self::V, f: &F) -> Self::V;
}
