//! The scalar kernels, written once generically per dtype family ([`Kernels`]): wrapping integer
//! arithmetic, faults for integer division by zero and negative exponents, IEEE float functions.

use ragtime_core::Element;

use crate::elemwise::scalar_op::ScalarOp;

/// Why a scalar kernel refused its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// An integer division or modulo by zero.
    DivisionByZero,
    /// An integer raised to a negative power.
    NegativeExponent,
}

/// A binary kernel on one element type; see [`Kernels::binary`].
pub type BinaryKernel<T> = fn(T, T) -> std::result::Result<T, Fault>;
/// A unary kernel on one element type; see [`Kernels::unary`].
pub type UnaryKernel<T> = fn(T) -> T;

/// The scalar kernels of the elementwise ops on one element type: the single definition of what
/// each op computes, used by `Elemwise`'s `perform`, the reductions and (later) fused kernels.
pub trait Kernels: Element {
    /// The kernel of a binary op whose result has the operands' type (arithmetic, bitwise,
    /// logical), if the op is defined on this type. `divide` is only defined on floats (integer
    /// operands are converted first) and comparisons are [`comparison`].
    fn binary(op: ScalarOp) -> Option<BinaryKernel<Self>>;
    /// The kernel of a unary op whose result has the operand's type (everything but `cast`),
    /// if the op is defined on this type.
    fn unary(op: ScalarOp) -> Option<UnaryKernel<Self>>;
    /// The kernel of a predicate ([`ScalarOp::is_predicate`]), if defined on this type.
    fn predicate(op: ScalarOp) -> Option<fn(Self) -> bool> {
        let _ = op;
        None
    }
}

/// The kernel of a comparison op, for any ordered element (strings compare as bytes).
pub fn comparison<T: PartialOrd + ?Sized>(op: ScalarOp) -> Option<fn(&T, &T) -> bool> {
    let k: fn(&T, &T) -> bool = match op {
        ScalarOp::Equal => |a, b| a == b,
        ScalarOp::NotEqual => |a, b| a != b,
        ScalarOp::Less => |a, b| a < b,
        ScalarOp::LessEqual => |a, b| a <= b,
        ScalarOp::Greater => |a, b| a > b,
        ScalarOp::GreaterEqual => |a, b| a >= b,
        _ => return None,
    };
    Some(k)
}

/// Sign-dependent integer helpers, so one macro serves signed and unsigned types.
trait IntSign: Copy {
    /// The number of bits of the type.
    const BITS: u32;
    fn is_negative(self) -> bool;
    /// `self` as a non-negative count below 2^64 (0 when negative); only read when not negative.
    fn as_count(self) -> u64;
    fn wrapping_abs_value(self) -> Self;
    fn signum_value(self) -> Self;
}

macro_rules! int_sign {
    (signed: $($t:ty),*) => {$(
        impl IntSign for $t {
            const BITS: u32 = <$t>::BITS;
            fn is_negative(self) -> bool { self < 0 }
            fn as_count(self) -> u64 { self.max(0) as u64 }
            fn wrapping_abs_value(self) -> Self { self.wrapping_abs() }
            fn signum_value(self) -> Self { self.signum() }
        }
    )*};
    (unsigned: $($t:ty),*) => {$(
        impl IntSign for $t {
            const BITS: u32 = <$t>::BITS;
            fn is_negative(self) -> bool { false }
            fn as_count(self) -> u64 { u64::from(self) }
            fn wrapping_abs_value(self) -> Self { self }
            fn signum_value(self) -> Self { Self::from(self != 0) }
        }
    )*};
}
int_sign!(signed: i8, i16, i32, i64);

/// A shift count clamped to `[0, bits - 1]`, as TensorFlow's shift kernels clamp it.
fn shift_count<T: IntSign>(y: T) -> u32 {
    y.as_count().min(u64::from(T::BITS - 1)) as u32
}
int_sign!(unsigned: u8, u16, u32, u64);

macro_rules! int_kernels {
    ($($t:ty),*) => {$(
        impl Kernels for $t {
            fn binary(op: ScalarOp) -> Option<BinaryKernel<Self>> {
                let k: BinaryKernel<Self> = match op {
                    ScalarOp::Add => |a, b| Ok(a.wrapping_add(b)),
                    ScalarOp::Subtract => |a, b| Ok(a.wrapping_sub(b)),
                    ScalarOp::Multiply => |a, b| Ok(a.wrapping_mul(b)),
                    ScalarOp::FloorDiv => |a, b| {
                        if b == 0 {
                            return Err(Fault::DivisionByZero);
                        }
                        let q = a.wrapping_div(b);
                        let inexact = a.wrapping_rem(b) != 0;
                        Ok(if inexact && a.is_negative() != b.is_negative() { q.wrapping_sub(1) } else { q })
                    },
                    ScalarOp::FloorMod => |a, b| {
                        if b == 0 {
                            return Err(Fault::DivisionByZero);
                        }
                        let r = a.wrapping_rem(b);
                        Ok(if r != 0 && r.is_negative() != b.is_negative() { r.wrapping_add(b) } else { r })
                    },
                    ScalarOp::Pow => |a, b| {
                        if b.is_negative() {
                            return Err(Fault::NegativeExponent);
                        }
                        // Square and multiply, wrapping like the other integer arithmetic.
                        let (mut base, mut exp, mut acc): (Self, u64, Self) = (a, b as u64, 1);
                        while exp > 0 {
                            if exp & 1 == 1 {
                                acc = acc.wrapping_mul(base);
                            }
                            base = base.wrapping_mul(base);
                            exp >>= 1;
                        }
                        Ok(acc)
                    },
                    ScalarOp::Maximum => |a, b| Ok(a.max(b)),
                    ScalarOp::Minimum => |a, b| Ok(a.min(b)),
                    ScalarOp::BitwiseAnd => |a, b| Ok(a & b),
                    ScalarOp::BitwiseOr => |a, b| Ok(a | b),
                    ScalarOp::BitwiseXor => |a, b| Ok(a ^ b),
                    ScalarOp::SquaredDifference => |a, b| {
                        let d = a.wrapping_sub(b);
                        Ok(d.wrapping_mul(d))
                    },
                    ScalarOp::TruncateDiv => |a, b| {
                        if b == 0 {
                            return Err(Fault::DivisionByZero);
                        }
                        Ok(a.wrapping_div(b))
                    },
                    ScalarOp::TruncateMod => |a, b| {
                        if b == 0 {
                            return Err(Fault::DivisionByZero);
                        }
                        Ok(a.wrapping_rem(b))
                    },
                    // TensorFlow clamps the shift count to [0, bits - 1]; `wrapping_shl` shifts
                    // the bits as the unsigned type would, `>>` is arithmetic on signed types.
                    ScalarOp::BitwiseLeftShift => |a, b| Ok(a.wrapping_shl(shift_count(b))),
                    ScalarOp::BitwiseRightShift => |a, b| Ok(a >> shift_count(b)),
                    _ => return None,
                };
                Some(k)
            }

            fn unary(op: ScalarOp) -> Option<UnaryKernel<Self>> {
                let k: UnaryKernel<Self> = match op {
                    ScalarOp::BitwiseInvert => |a| !a,
                    ScalarOp::Negative => |a| a.wrapping_neg(),
                    ScalarOp::Abs => |a| a.wrapping_abs_value(),
                    ScalarOp::Square => |a| a.wrapping_mul(a),
                    ScalarOp::Sign => |a| a.signum_value(),
                    // Integers are already integral.
                    ScalarOp::Round | ScalarOp::Floor | ScalarOp::Ceil => |a| a,
                    _ => return None,
                };
                Some(k)
            }
        }
    )*};
}
int_kernels!(i8, i16, i32, i64, u8, u16, u32, u64);

/// IEEE 754-2019 `maximum` / `minimum` of floats: NaN propagates and -0.0 < +0.0, so the result
/// never depends on the operand order (or on how a JIT reduction groups its operands). The one
/// definition: the `Maximum` / `Minimum` kernels call it, and fused Rust loops that must inline it
/// (`fused::RowPooling`) too.
pub trait IeeeExtremes: Copy {
    /// The larger of `self` and `b`.
    fn ieee_maximum(self, b: Self) -> Self;
    /// The smaller of `self` and `b`.
    fn ieee_minimum(self, b: Self) -> Self;
}

macro_rules! float_kernels {
    ($($t:ident),*) => {$(
        impl IeeeExtremes for $t {
            // Written as selects, not branches, so loops over lanes (a pooled vector's columns)
            // vectorize: equal operands have equal bits except for zeros, where the maximum
            // keeps a sign bit only both have (AND) and the minimum one either has (OR).
            #[inline]
            fn ieee_maximum(self, b: Self) -> Self {
                let equal = self.to_bits() & b.to_bits();
                let bits = if self > b { self.to_bits() } else if self < b { b.to_bits() } else { equal };
                let nan = self.is_nan() | b.is_nan();
                $t::from_bits(if nan { $t::NAN.to_bits() } else { bits })
            }

            #[inline]
            fn ieee_minimum(self, b: Self) -> Self {
                let equal = self.to_bits() | b.to_bits();
                let bits = if self < b { self.to_bits() } else if self > b { b.to_bits() } else { equal };
                let nan = self.is_nan() | b.is_nan();
                $t::from_bits(if nan { $t::NAN.to_bits() } else { bits })
            }
        }

        // `exp`, `log`, `tanh`, `sigmoid`, `sin`, `cos` and `pow` are `ragtime_vmath`'s algorithms, the
        // ones the JIT emits, so the interpreter and compiled kernels agree bit for bit (issue 19).
        impl Kernels for $t {
            fn binary(op: ScalarOp) -> Option<BinaryKernel<Self>> {
                let k: BinaryKernel<Self> = match op {
                    ScalarOp::Add => |a, b| Ok(a + b),
                    ScalarOp::Subtract => |a, b| Ok(a - b),
                    ScalarOp::Multiply => |a, b| Ok(a * b),
                    ScalarOp::Divide => |a, b| Ok(a / b),
                    ScalarOp::FloorDiv => |a, b| Ok((a / b).floor()),
                    ScalarOp::FloorMod => |a, b| {
                        // `%` is C's fmod (sign of the dividend); move it to the divisor's side.
                        let r = a % b;
                        Ok(if r != 0.0 && (r < 0.0) != (b < 0.0) { r + b } else { r })
                    },
                    ScalarOp::Pow => |a, b| Ok(ragtime_vmath::PlainMath::pow(a, b)),
                    ScalarOp::Atan2 => |a, b| Ok(a.atan2(b)),
                    ScalarOp::SquaredDifference => |a, b| Ok((a - b) * (a - b)),
                    ScalarOp::Xdivy => |a, b| Ok(if a == 0.0 { 0.0 } else { a / b }),
                    ScalarOp::Xlogy => |a, b| Ok(if a == 0.0 { 0.0 } else { a * b.ln() }),
                    ScalarOp::DivideNoNan => |a, b| Ok(if b == 0.0 { 0.0 } else { a / b }),
                    ScalarOp::TruncateDiv => |a, b| Ok((a / b).trunc()),
                    // `%` is C's fmod: the remainder of the division rounded toward zero.
                    ScalarOp::TruncateMod => |a, b| Ok(a % b),
                    // IEEE 754-2019 maximum / minimum: NaN propagates and -0.0 < +0.0, so the
                    // result never depends on the operand order (or on how a JIT reduction
                    // groups its operands).
                    ScalarOp::Maximum => |a, b| Ok(a.ieee_maximum(b)),
                    ScalarOp::Minimum => |a, b| Ok(a.ieee_minimum(b)),
                    _ => return None,
                };
                Some(k)
            }

            fn unary(op: ScalarOp) -> Option<UnaryKernel<Self>> {
                let k: UnaryKernel<Self> = match op {
                    ScalarOp::Negative => |a| -a,
                    ScalarOp::Abs => |a| a.abs(),
                    ScalarOp::Square => |a| a * a,
                    ScalarOp::Sqrt => |a| a.sqrt(),
                    ScalarOp::Exp => |a| ragtime_vmath::PlainMath::exp(a),
                    ScalarOp::Log => |a| ragtime_vmath::PlainMath::ln(a),
                    ScalarOp::Sin => |a| ragtime_vmath::PlainMath::sin(a),
                    ScalarOp::Cos => |a| ragtime_vmath::PlainMath::cos(a),
                    ScalarOp::Tanh => |a| ragtime_vmath::PlainMath::tanh(a),
                    ScalarOp::Sigmoid => |a| ragtime_vmath::PlainMath::sigmoid(a),
                    ScalarOp::Floor => |a| a.floor(),
                    ScalarOp::Ceil => |a| a.ceil(),
                    ScalarOp::Round | ScalarOp::Rint => |a| a.round_ties_even(),
                    ScalarOp::Acos => |a| a.acos(),
                    ScalarOp::Acosh => |a| a.acosh(),
                    ScalarOp::Asin => |a| a.asin(),
                    ScalarOp::Asinh => |a| a.asinh(),
                    ScalarOp::Atan => |a| a.atan(),
                    ScalarOp::Atanh => |a| a.atanh(),
                    ScalarOp::Cosh => |a| a.cosh(),
                    ScalarOp::Sinh => |a| a.sinh(),
                    ScalarOp::Tan => |a| a.tan(),
                    ScalarOp::Erf => |a| a.erf_value(),
                    ScalarOp::Erfc => |a| a.erfc_value(),
                    ScalarOp::Expm1 => |a| a.exp_m1(),
                    ScalarOp::Log1p => |a| a.ln_1p(),
                    ScalarOp::LogSigmoid => |a| -(-a).softplus(),
                    ScalarOp::Reciprocal => |a| 1.0 / a,
                    ScalarOp::Rsqrt => |a| 1.0 / a.sqrt(),
                    ScalarOp::Softplus => |a| a.softplus(),
                    ScalarOp::Softsign => |a| a / (1.0 + a.abs()),
                    ScalarOp::Sign => |a| {
                        if a > 0.0 {
                            1.0
                        } else if a < 0.0 {
                            -1.0
                        } else if a == 0.0 {
                            0.0
                        } else {
                            a // NaN
                        }
                    },
                    _ => return None,
                };
                Some(k)
            }

            fn predicate(op: ScalarOp) -> Option<fn(Self) -> bool> {
                let k: fn(Self) -> bool = match op {
                    ScalarOp::IsNan => |a| a.is_nan(),
                    ScalarOp::IsInf => |a| a.is_infinite(),
                    ScalarOp::IsFinite => |a| a.is_finite(),
                    _ => return None,
                };
                Some(k)
            }
        }
    )*};
}
float_kernels!(f32, f64);

/// The float helpers the kernels above need beyond `std`: erf / erfc (from `libm`) and
/// TensorFlow's softplus.
trait FloatExt: Copy {
    fn erf_value(self) -> Self;
    fn erfc_value(self) -> Self;
    /// TensorFlow's softplus: `x` when `x > -t`, `e ** x` when `x < t`, else `ln(1 + e ** x)`,
    /// with `t = ln(machine epsilon) + 2` (NaN falls through to the last form and stays NaN).
    fn softplus(self) -> Self;
}

macro_rules! float_ext {
    ($($t:ident: $erf:path, $erfc:path;)*) => {$(
        impl FloatExt for $t {
            fn erf_value(self) -> $t {
                $erf(self)
            }
            fn erfc_value(self) -> $t {
                $erfc(self)
            }
            fn softplus(self) -> $t {
                let threshold = $t::EPSILON.ln() + 2.0;
                if self > -threshold {
                    self
                } else if self < threshold {
                    self.exp()
                } else {
                    self.exp().ln_1p()
                }
            }
        }
    )*};
}
float_ext! {
    f32: libm::erff, libm::erfcf;
    f64: libm::erf, libm::erfc;
}

impl Kernels for bool {
    fn binary(op: ScalarOp) -> Option<BinaryKernel<Self>> {
        let k: BinaryKernel<Self> = match op {
            ScalarOp::LogicalAnd => |a, b| Ok(a && b),
            ScalarOp::LogicalOr => |a, b| Ok(a || b),
            ScalarOp::LogicalXor => |a, b| Ok(a != b),
            _ => return None,
        };
        Some(k)
    }

    fn unary(op: ScalarOp) -> Option<UnaryKernel<Self>> {
        match op {
            ScalarOp::LogicalNot => Some(|a| !a),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IeeeExtremes;

    /// IEEE 754-2019 `maximum` / `minimum` by their definition, case by case.
    fn by_definition(a: f32, b: f32, max: bool) -> f32 {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a == b && a == 0.0 {
            // Zeros: -0 < +0.
            let positive = if max {
                a.is_sign_positive() || b.is_sign_positive()
            } else {
                a.is_sign_positive() && b.is_sign_positive()
            };
            if positive {
                0.0
            } else {
                -0.0
            }
        } else if (a > b) == max {
            a
        } else {
            b
        }
    }

    #[test]
    fn extremes_propagate_nan_and_order_signed_zeros_whatever_the_operand_order() {
        let values = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            1e-45,
            -1e-45,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            2.5,
        ];
        for &a in &values {
            for &b in &values {
                for (max, got) in [(true, a.ieee_maximum(b)), (false, a.ieee_minimum(b))] {
                    let want = by_definition(a, b, max);
                    assert_eq!(got.to_bits(), want.to_bits(), "{a:?} {b:?} max={max}: {got:?}, want {want:?}");
                }
            }
        }
    }
}
