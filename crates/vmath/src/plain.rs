//! The plain-Rust [`Arith`] backend: one `f32` ([`Plain32`]) or `f64` ([`Plain64`]) lane held as
//! its bits, each operation the Rust operation with the IEEE semantics the JIT's instruction
//! has (`fma` by `mul_add`, single rounding). The interpreter calls the `*_f32` / `*_f64`
//! functions here and gets the JIT's bits.

use crate::arith::{Arith, BinaryFn, Float, Widen};
use crate::{explog, hyper, trig};

/// All-ones / all-zeros mask of a comparison.
#[inline(always)]
fn mask32(b: bool) -> u32 {
    if b {
        u32::MAX
    } else {
        0
    }
}

#[inline(always)]
fn mask64(b: bool) -> u64 {
    if b {
        u64::MAX
    } else {
        0
    }
}

/// One float32 lane, carried as its bits (`u32`); integers are the same bits, two's complement.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain32;

/// One float64 lane, carried as its bits (`u64`); integers are the same bits, two's complement.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain64;

macro_rules! plain_arith {
    ($ty:ident, $bits:ty, $float:ty, $signed:ty, $prec:expr, $mask:ident) => {
        impl Arith for $ty {
            type V = $bits;
            #[inline(always)]
            fn float(&self) -> Float {
                $prec
            }
            #[inline(always)]
            fn c(&mut self, v: f64) -> $bits {
                (v as $float).to_bits()
            }
            #[inline(always)]
            fn ic(&mut self, v: i64) -> $bits {
                v as $bits
            }
            #[inline(always)]
            fn add(&mut self, a: $bits, b: $bits) -> $bits {
                (<$float>::from_bits(a) + <$float>::from_bits(b)).to_bits()
            }
            #[inline(always)]
            fn sub(&mut self, a: $bits, b: $bits) -> $bits {
                (<$float>::from_bits(a) - <$float>::from_bits(b)).to_bits()
            }
            #[inline(always)]
            fn mul(&mut self, a: $bits, b: $bits) -> $bits {
                (<$float>::from_bits(a) * <$float>::from_bits(b)).to_bits()
            }
            #[inline(always)]
            fn div(&mut self, a: $bits, b: $bits) -> $bits {
                (<$float>::from_bits(a) / <$float>::from_bits(b)).to_bits()
            }
            #[inline(always)]
            fn abs(&mut self, a: $bits) -> $bits {
                a & !(1 << (<$bits>::BITS - 1))
            }
            #[inline(always)]
            fn trunc(&mut self, a: $bits) -> $bits {
                <$float>::from_bits(a).trunc().to_bits()
            }
            #[inline(always)]
            fn fma(&mut self, a: $bits, b: $bits, c: $bits) -> $bits {
                <$float>::from_bits(a).mul_add(<$float>::from_bits(b), <$float>::from_bits(c)).to_bits()
            }
            #[inline(always)]
            fn fnma(&mut self, a: $bits, b: $bits, c: $bits) -> $bits {
                let na = self.neg(a);
                self.fma(na, b, c)
            }
            #[inline(always)]
            fn neg(&mut self, a: $bits) -> $bits {
                a ^ (1 << (<$bits>::BITS - 1))
            }
            #[inline(always)]
            fn lt(&mut self, a: $bits, b: $bits) -> $bits {
                $mask(<$float>::from_bits(a) < <$float>::from_bits(b))
            }
            #[inline(always)]
            fn eq(&mut self, a: $bits, b: $bits) -> $bits {
                $mask(<$float>::from_bits(a) == <$float>::from_bits(b))
            }
            #[inline(always)]
            fn ne(&mut self, a: $bits, b: $bits) -> $bits {
                $mask(<$float>::from_bits(a) != <$float>::from_bits(b))
            }
            #[inline(always)]
            fn ge_or_nan(&mut self, a: $bits, b: $bits) -> $bits {
                // `a >= b` or unordered.
                let (a, b) = (<$float>::from_bits(a), <$float>::from_bits(b));
                $mask(a >= b || a.is_nan() || b.is_nan())
            }
            #[inline(always)]
            fn ordered(&mut self, a: $bits, b: $bits) -> $bits {
                $mask(!<$float>::from_bits(a).is_nan() && !<$float>::from_bits(b).is_nan())
            }
            #[inline(always)]
            fn sel(&mut self, mask: $bits, a: $bits, b: $bits) -> $bits {
                if mask != 0 {
                    a
                } else {
                    b
                }
            }
            #[inline(always)]
            fn mask_and(&mut self, a: $bits, b: $bits) -> $bits {
                a & b
            }
            #[inline(always)]
            fn mask_or(&mut self, a: $bits, b: $bits) -> $bits {
                a | b
            }
            #[inline(always)]
            fn bits(&mut self, x: $bits) -> $bits {
                x
            }
            #[inline(always)]
            fn float_of(&mut self, i: $bits) -> $bits {
                i
            }
            #[inline(always)]
            fn iadd(&mut self, a: $bits, b: $bits) -> $bits {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn isub(&mut self, a: $bits, b: $bits) -> $bits {
                a.wrapping_sub(b)
            }
            #[inline(always)]
            fn iand(&mut self, a: $bits, b: $bits) -> $bits {
                a & b
            }
            #[inline(always)]
            fn ior(&mut self, a: $bits, b: $bits) -> $bits {
                a | b
            }
            #[inline(always)]
            fn ixor(&mut self, a: $bits, b: $bits) -> $bits {
                a ^ b
            }
            #[inline(always)]
            fn ine(&mut self, a: $bits, b: $bits) -> $bits {
                $mask(a != b)
            }
            #[inline(always)]
            fn ilt(&mut self, a: $bits, b: $bits) -> $bits {
                $mask((a as $signed) < (b as $signed))
            }
            #[inline(always)]
            fn ishl(&mut self, a: $bits, n: i64) -> $bits {
                a << n
            }
            #[inline(always)]
            fn ushr(&mut self, a: $bits, n: i64) -> $bits {
                a >> n
            }
        }
    };
}

plain_arith!(Plain32, u32, f32, i32, Float::F32, mask32);
plain_arith!(Plain64, u64, f64, i64, Float::F64, mask64);

impl Widen for Plain32 {
    #[inline(always)]
    fn widened<F: BinaryFn>(&mut self, x: u32, y: u32, f: &F) -> u32 {
        let xd = f64::from(f32::from_bits(x)).to_bits();
        let yd = f64::from(f32::from_bits(y)).to_bits();
        let r = f.apply(&mut Plain64, xd, yd);
        (f64::from_bits(r) as f32).to_bits()
    }
}

/// `e^x`, bit for bit what the JIT computes.
pub fn exp_f32(x: f32) -> f32 {
    f32::from_bits(explog::exp(&mut Plain32, x.to_bits(), None))
}

/// `ln x`, bit for bit what the JIT computes.
pub fn log_f32(x: f32) -> f32 {
    f32::from_bits(explog::log(&mut Plain32, x.to_bits()))
}

/// `tanh x`, bit for bit what the JIT computes.
pub fn tanh_f32(x: f32) -> f32 {
    f32::from_bits(hyper::tanh_f32(&mut Plain32, x.to_bits()))
}

/// `1 / (1 + e^-x)`, bit for bit what the JIT computes.
pub fn sigmoid_f32(x: f32) -> f32 {
    f32::from_bits(hyper::sigmoid(&mut Plain32, x.to_bits()))
}

/// `x^y` (C99 special cases), bit for bit what the JIT computes.
pub fn pow_f32(x: f32, y: f32) -> f32 {
    f32::from_bits(explog::pow_f32(&mut Plain32, x.to_bits(), y.to_bits()))
}

/// `sin x` (radians), bit for bit what the JIT computes: its polynomial, and the platform's
/// `sin` beyond [`trig::SIN_COS_MAX_ARG_F32`], where the polynomial's reduction is not accurate.
pub fn sin_f32(x: f32) -> f32 {
    if x.abs() > trig::SIN_COS_MAX_ARG_F32 {
        return x.sin();
    }
    f32::from_bits(trig::sin_cos(&mut Plain32, x.to_bits(), false))
}

/// `cos x` (radians), bit for bit what the JIT computes; see [`sin_f32`] for large arguments.
pub fn cos_f32(x: f32) -> f32 {
    if x.abs() > trig::SIN_COS_MAX_ARG_F32 {
        return x.cos();
    }
    f32::from_bits(trig::sin_cos(&mut Plain32, x.to_bits(), true))
}

/// `e^x`, bit for bit what the JIT computes.
pub fn exp_f64(x: f64) -> f64 {
    f64::from_bits(explog::exp(&mut Plain64, x.to_bits(), None))
}

/// `ln x`, bit for bit what the JIT computes.
pub fn log_f64(x: f64) -> f64 {
    f64::from_bits(explog::log(&mut Plain64, x.to_bits()))
}

/// `tanh x`, bit for bit what the JIT computes.
pub fn tanh_f64(x: f64) -> f64 {
    f64::from_bits(hyper::tanh_f64(&mut Plain64, x.to_bits()))
}

/// `1 / (1 + e^-x)`, bit for bit what the JIT computes.
pub fn sigmoid_f64(x: f64) -> f64 {
    f64::from_bits(hyper::sigmoid(&mut Plain64, x.to_bits()))
}

/// `x^y` (C99 special cases), bit for bit what the JIT computes.
pub fn pow_f64(x: f64, y: f64) -> f64 {
    f64::from_bits(explog::pow_f64(&mut Plain64, x.to_bits(), y.to_bits()))
}

/// `sin x` (radians), bit for bit what the JIT computes (the platform's `sin` beyond
/// [`trig::SIN_COS_MAX_ARG_F64`]).
pub fn sin_f64(x: f64) -> f64 {
    if x.abs() > trig::SIN_COS_MAX_ARG_F64 {
        return x.sin();
    }
    f64::from_bits(trig::sin_cos(&mut Plain64, x.to_bits(), false))
}

/// `cos x` (radians), bit for bit what the JIT computes; see [`sin_f64`] for large arguments.
pub fn cos_f64(x: f64) -> f64 {
    if x.abs() > trig::SIN_COS_MAX_ARG_F64 {
        return x.cos();
    }
    f64::from_bits(trig::sin_cos(&mut Plain64, x.to_bits(), true))
}

/// The plain functions by element type, for code written once over `f32` and `f64` (the
/// interpreter's kernels are generated by a macro over both): `PlainMath::exp(a)` is
/// [`exp_f32`] or [`exp_f64`], and so on.
pub trait PlainMath: Copy {
    /// `e^x`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Logistic function `1 / (1 + e^-x)`.
    fn sigmoid(self) -> Self;
    /// `self^y` with C99's special cases.
    fn pow(self, y: Self) -> Self;
    /// Sine (radians).
    fn sin(self) -> Self;
    /// Cosine (radians).
    fn cos(self) -> Self;
}

macro_rules! plain_math {
    ($t:ty, $exp:ident, $log:ident, $tanh:ident, $sigmoid:ident, $pow:ident, $sin:ident, $cos:ident) => {
        impl PlainMath for $t {
            fn exp(self) -> Self {
                $exp(self)
            }
            fn ln(self) -> Self {
                $log(self)
            }
            fn tanh(self) -> Self {
                $tanh(self)
            }
            fn sigmoid(self) -> Self {
                $sigmoid(self)
            }
            fn pow(self, y: Self) -> Self {
                $pow(self, y)
            }
            fn sin(self) -> Self {
                $sin(self)
            }
            fn cos(self) -> Self {
                $cos(self)
            }
        }
    };
}

plain_math!(f32, exp_f32, log_f32, tanh_f32, sigmoid_f32, pow_f32, sin_f32, cos_f32);
plain_math!(f64, exp_f64, log_f64, tanh_f64, sigmoid_f64, pow_f64, sin_f64, cos_f64);
