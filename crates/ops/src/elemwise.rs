//! The elementwise op family: one op type, [`Elemwise`], for every scalar function of the
//! conformance vocabulary ([`ScalarOp`]), with TensorFlow's dtype rules and its scalar kernels
//! written once, generically ([`Kernels`]), so that fused kernels and the JIT's reference can
//! compose them.
//!
//! Semantics follow TensorFlow: binary ops need equal dtypes; `divide` is true division
//! (integers give floats); integer arithmetic wraps; `floordiv` / `floormod` round toward
//! negative infinity (the remainder takes the divisor's sign) and refuse an integer division by
//! zero; integer `pow` refuses negative exponents; `maximum` / `minimum` propagate NaN; `round`
//! rounds half to even. Operands broadcast with [`crate::broadcast`]; the result keeps the
//! broadcast structure, so an op on operands of one structure shares their partitions.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, Error, RaggedTensor, Result, StringBuilder, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties, OpRef};

use crate::broadcast::{broadcast_types, broadcast_values};
use crate::util::one;

/// A scalar function applied element by element: the whole elementwise vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarOp {
    /// `x + y` (integers wrap; strings concatenate, as `tf.add` does).
    Add,
    /// `x - y` (integers wrap).
    Subtract,
    /// `x * y` (integers wrap).
    Multiply,
    /// True division: integer operands are converted to a float type first.
    Divide,
    /// Division rounded toward negative infinity.
    FloorDiv,
    /// Remainder of [`ScalarOp::FloorDiv`]; takes the sign of the divisor.
    FloorMod,
    /// `x ** y`; integer exponents must not be negative.
    Pow,
    /// The larger operand (NaN if either is NaN).
    Maximum,
    /// The smaller operand (NaN if either is NaN).
    Minimum,
    /// `x == y` (any dtype, including strings).
    Equal,
    /// `x != y` (any dtype, including strings).
    NotEqual,
    /// `x < y`.
    Less,
    /// `x <= y`.
    LessEqual,
    /// `x > y`.
    Greater,
    /// `x >= y`.
    GreaterEqual,
    /// Boolean and.
    LogicalAnd,
    /// Boolean or.
    LogicalOr,
    /// Boolean exclusive or.
    LogicalXor,
    /// Boolean not.
    LogicalNot,
    /// Bitwise and of integers.
    BitwiseAnd,
    /// Bitwise or of integers.
    BitwiseOr,
    /// Bitwise exclusive or of integers.
    BitwiseXor,
    /// Bitwise complement of integers.
    BitwiseInvert,
    /// `-x` (integers wrap).
    Negative,
    /// `|x|` (integers wrap: the absolute value of the minimum is itself).
    Abs,
    /// `x * x`.
    Square,
    /// Square root.
    Sqrt,
    /// `e ** x`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Hyperbolic tangent.
    Tanh,
    /// `1 / (1 + e ** -x)`.
    Sigmoid,
    /// Largest integer not above `x`.
    Floor,
    /// Smallest integer not below `x`.
    Ceil,
    /// Nearest integer, ties to even.
    Round,
    /// -1, 0 or 1 (NaN stays NaN).
    Sign,
    /// Conversion to the given dtype (TensorFlow's `cast` rules; strings only to strings).
    Cast(DType),
    /// `cond ? x : y` (TensorFlow's `where` with three operands).
    Where,
    /// Inverse cosine.
    Acos,
    /// Inverse hyperbolic cosine.
    Acosh,
    /// Inverse sine.
    Asin,
    /// Inverse hyperbolic sine.
    Asinh,
    /// Inverse tangent.
    Atan,
    /// Inverse hyperbolic tangent.
    Atanh,
    /// Hyperbolic cosine.
    Cosh,
    /// Hyperbolic sine.
    Sinh,
    /// Tangent.
    Tan,
    /// The error function.
    Erf,
    /// The complementary error function, `1 - erf(x)`.
    Erfc,
    /// `e ** x - 1`, accurate near 0.
    Expm1,
    /// `ln(1 + x)`, accurate near 0.
    Log1p,
    /// `ln(sigmoid(x))`, computed as `-softplus(-x)` (TensorFlow's `log_sigmoid`).
    LogSigmoid,
    /// `1 / x`.
    Reciprocal,
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// `ln(1 + e ** x)` with TensorFlow's thresholds (`x` itself above `-ln(eps) - 2`, `e ** x`
    /// below `ln(eps) + 2`).
    Softplus,
    /// `x / (1 + |x|)` (±inf gives NaN, as in TensorFlow).
    Softsign,
    /// Nearest integer, ties to even (`tf.math.rint`).
    Rint,
    /// True where `x` is NaN.
    IsNan,
    /// True where `x` is ±inf.
    IsInf,
    /// True where `x` is neither NaN nor ±inf.
    IsFinite,
    /// `atan2(y, x)`: the angle of the point `(x, y)`; the first operand is `y`.
    Atan2,
    /// `(x - y) ** 2` (integers wrap).
    SquaredDifference,
    /// `x / y`, 0 where `x == 0`.
    Xdivy,
    /// `x * ln(y)`, 0 where `x == 0`.
    Xlogy,
    /// `x / y`, 0 where `y == 0`; integer operands are converted to a float type first.
    DivideNoNan,
    /// Division rounded toward zero; refuses an integer division by zero.
    TruncateDiv,
    /// Remainder of [`ScalarOp::TruncateDiv`] (C's `fmod` on floats; the dividend's sign).
    TruncateMod,
    /// `x << y` with `y` clamped to `[0, bits - 1]`.
    BitwiseLeftShift,
    /// `x >> y` with `y` clamped to `[0, bits - 1]`; arithmetic on signed types.
    BitwiseRightShift,
}

/// Every op of the family except [`ScalarOp::Cast`] (which carries a dtype), in vocabulary order.
pub const NAMED_SCALAR_OPS: [ScalarOp; 69] = [
    ScalarOp::Add,
    ScalarOp::Subtract,
    ScalarOp::Multiply,
    ScalarOp::Divide,
    ScalarOp::FloorDiv,
    ScalarOp::FloorMod,
    ScalarOp::Pow,
    ScalarOp::Maximum,
    ScalarOp::Minimum,
    ScalarOp::Equal,
    ScalarOp::NotEqual,
    ScalarOp::Less,
    ScalarOp::LessEqual,
    ScalarOp::Greater,
    ScalarOp::GreaterEqual,
    ScalarOp::LogicalAnd,
    ScalarOp::LogicalOr,
    ScalarOp::LogicalXor,
    ScalarOp::LogicalNot,
    ScalarOp::BitwiseAnd,
    ScalarOp::BitwiseOr,
    ScalarOp::BitwiseXor,
    ScalarOp::BitwiseInvert,
    ScalarOp::Negative,
    ScalarOp::Abs,
    ScalarOp::Square,
    ScalarOp::Sqrt,
    ScalarOp::Exp,
    ScalarOp::Log,
    ScalarOp::Sin,
    ScalarOp::Cos,
    ScalarOp::Tanh,
    ScalarOp::Sigmoid,
    ScalarOp::Floor,
    ScalarOp::Ceil,
    ScalarOp::Round,
    ScalarOp::Sign,
    ScalarOp::Where,
    ScalarOp::Acos,
    ScalarOp::Acosh,
    ScalarOp::Asin,
    ScalarOp::Asinh,
    ScalarOp::Atan,
    ScalarOp::Atanh,
    ScalarOp::Cosh,
    ScalarOp::Sinh,
    ScalarOp::Tan,
    ScalarOp::Erf,
    ScalarOp::Erfc,
    ScalarOp::Expm1,
    ScalarOp::Log1p,
    ScalarOp::LogSigmoid,
    ScalarOp::Reciprocal,
    ScalarOp::Rsqrt,
    ScalarOp::Softplus,
    ScalarOp::Softsign,
    ScalarOp::Rint,
    ScalarOp::IsNan,
    ScalarOp::IsInf,
    ScalarOp::IsFinite,
    ScalarOp::Atan2,
    ScalarOp::SquaredDifference,
    ScalarOp::Xdivy,
    ScalarOp::Xlogy,
    ScalarOp::DivideNoNan,
    ScalarOp::TruncateDiv,
    ScalarOp::TruncateMod,
    ScalarOp::BitwiseLeftShift,
    ScalarOp::BitwiseRightShift,
];

/// What the operands of an op must be, by dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accepts {
    /// Any dtype, strings included.
    Any,
    /// Integers and floats.
    Numeric,
    /// Integers, floats and strings (`add` concatenates strings, as `tf.add` does).
    NumericOrString,
    /// Signed integers and floats.
    Signed,
    /// Floats.
    Float,
    /// Integers.
    Integer,
    /// Booleans.
    Bool,
    /// Floats, int32 and int64 (`squared_difference`).
    FloatOrWideInt,
    /// Floats, int32 and int64 (`truncatemod`: TensorFlow's kernel has no other integer types).
    FloatOrInt32Int64,
}

impl Accepts {
    fn admits(self, dtype: DType) -> bool {
        match self {
            Accepts::Any => true,
            Accepts::Numeric => dtype.is_numeric(),
            Accepts::NumericOrString => dtype.is_numeric() || dtype == DType::String,
            Accepts::Signed => dtype.is_signed_integer() || dtype.is_float(),
            Accepts::Float => dtype.is_float(),
            Accepts::Integer => dtype.is_integer(),
            Accepts::Bool => dtype == DType::Bool,
            Accepts::FloatOrWideInt | Accepts::FloatOrInt32Int64 => {
                dtype.is_float() || matches!(dtype, DType::I32 | DType::I64)
            }
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Accepts::Any => "any tensor",
            Accepts::Numeric => "integer or float tensors",
            Accepts::NumericOrString => "integer, float or string tensors",
            Accepts::Signed => "signed integer or float tensors",
            Accepts::Float => "float tensors",
            Accepts::Integer => "integer tensors",
            Accepts::Bool => "bool tensors",
            Accepts::FloatOrWideInt | Accepts::FloatOrInt32Int64 => "float, int32 or int64 tensors",
        }
    }
}

impl ScalarOp {
    /// The op's graph-file name (TensorFlow's, e.g. `add`, `cast`, `where`).
    pub fn name(self) -> &'static str {
        match self {
            ScalarOp::Add => "add",
            ScalarOp::Subtract => "subtract",
            ScalarOp::Multiply => "multiply",
            ScalarOp::Divide => "divide",
            ScalarOp::FloorDiv => "floordiv",
            ScalarOp::FloorMod => "floormod",
            ScalarOp::Pow => "pow",
            ScalarOp::Maximum => "maximum",
            ScalarOp::Minimum => "minimum",
            ScalarOp::Equal => "equal",
            ScalarOp::NotEqual => "not_equal",
            ScalarOp::Less => "less",
            ScalarOp::LessEqual => "less_equal",
            ScalarOp::Greater => "greater",
            ScalarOp::GreaterEqual => "greater_equal",
            ScalarOp::LogicalAnd => "logical_and",
            ScalarOp::LogicalOr => "logical_or",
            ScalarOp::LogicalXor => "logical_xor",
            ScalarOp::LogicalNot => "logical_not",
            ScalarOp::BitwiseAnd => "bitwise_and",
            ScalarOp::BitwiseOr => "bitwise_or",
            ScalarOp::BitwiseXor => "bitwise_xor",
            ScalarOp::BitwiseInvert => "bitwise_invert",
            ScalarOp::Negative => "negative",
            ScalarOp::Abs => "abs",
            ScalarOp::Square => "square",
            ScalarOp::Sqrt => "sqrt",
            ScalarOp::Exp => "exp",
            ScalarOp::Log => "log",
            ScalarOp::Sin => "sin",
            ScalarOp::Cos => "cos",
            ScalarOp::Tanh => "tanh",
            ScalarOp::Sigmoid => "sigmoid",
            ScalarOp::Floor => "floor",
            ScalarOp::Ceil => "ceil",
            ScalarOp::Round => "round",
            ScalarOp::Sign => "sign",
            ScalarOp::Cast(_) => "cast",
            ScalarOp::Where => "where",
            ScalarOp::Acos => "acos",
            ScalarOp::Acosh => "acosh",
            ScalarOp::Asin => "asin",
            ScalarOp::Asinh => "asinh",
            ScalarOp::Atan => "atan",
            ScalarOp::Atanh => "atanh",
            ScalarOp::Cosh => "cosh",
            ScalarOp::Sinh => "sinh",
            ScalarOp::Tan => "tan",
            ScalarOp::Erf => "erf",
            ScalarOp::Erfc => "erfc",
            ScalarOp::Expm1 => "expm1",
            ScalarOp::Log1p => "log1p",
            ScalarOp::LogSigmoid => "log_sigmoid",
            ScalarOp::Reciprocal => "reciprocal",
            ScalarOp::Rsqrt => "rsqrt",
            ScalarOp::Softplus => "softplus",
            ScalarOp::Softsign => "softsign",
            ScalarOp::Rint => "rint",
            ScalarOp::IsNan => "is_nan",
            ScalarOp::IsInf => "is_inf",
            ScalarOp::IsFinite => "is_finite",
            ScalarOp::Atan2 => "atan2",
            ScalarOp::SquaredDifference => "squared_difference",
            ScalarOp::Xdivy => "xdivy",
            ScalarOp::Xlogy => "xlogy",
            ScalarOp::DivideNoNan => "divide_no_nan",
            ScalarOp::TruncateDiv => "truncatediv",
            ScalarOp::TruncateMod => "truncatemod",
            ScalarOp::BitwiseLeftShift => "bitwise_left_shift",
            ScalarOp::BitwiseRightShift => "bitwise_right_shift",
        }
    }

    /// The op called `name` in graph files; `cast` is not found here (it needs its dtype).
    pub fn from_name(name: &str) -> Option<ScalarOp> {
        NAMED_SCALAR_OPS.into_iter().find(|op| op.name() == name)
    }

    /// Number of operands.
    pub fn arity(self) -> usize {
        match self {
            ScalarOp::Where => 3,
            op if op.is_unary() => 1,
            _ => 2,
        }
    }

    fn is_unary(self) -> bool {
        matches!(
            self,
            ScalarOp::LogicalNot
                | ScalarOp::BitwiseInvert
                | ScalarOp::Negative
                | ScalarOp::Abs
                | ScalarOp::Square
                | ScalarOp::Sqrt
                | ScalarOp::Exp
                | ScalarOp::Log
                | ScalarOp::Sin
                | ScalarOp::Cos
                | ScalarOp::Tanh
                | ScalarOp::Sigmoid
                | ScalarOp::Floor
                | ScalarOp::Ceil
                | ScalarOp::Round
                | ScalarOp::Sign
                | ScalarOp::Cast(_)
                | ScalarOp::Acos
                | ScalarOp::Acosh
                | ScalarOp::Asin
                | ScalarOp::Asinh
                | ScalarOp::Atan
                | ScalarOp::Atanh
                | ScalarOp::Cosh
                | ScalarOp::Sinh
                | ScalarOp::Tan
                | ScalarOp::Erf
                | ScalarOp::Erfc
                | ScalarOp::Expm1
                | ScalarOp::Log1p
                | ScalarOp::LogSigmoid
                | ScalarOp::Reciprocal
                | ScalarOp::Rsqrt
                | ScalarOp::Softplus
                | ScalarOp::Softsign
                | ScalarOp::Rint
                | ScalarOp::IsNan
                | ScalarOp::IsInf
                | ScalarOp::IsFinite
        )
    }

    /// True for the comparisons, whose result is bool.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            ScalarOp::Equal
                | ScalarOp::NotEqual
                | ScalarOp::Less
                | ScalarOp::LessEqual
                | ScalarOp::Greater
                | ScalarOp::GreaterEqual
        )
    }

    /// True for the float predicates (`is_nan`, `is_inf`, `is_finite`), whose result is bool.
    pub fn is_predicate(self) -> bool {
        matches!(self, ScalarOp::IsNan | ScalarOp::IsInf | ScalarOp::IsFinite)
    }

    /// The dtypes the (non-condition) operands may have.
    fn accepts(self) -> Accepts {
        match self {
            ScalarOp::Equal | ScalarOp::NotEqual | ScalarOp::Where | ScalarOp::Cast(_) => Accepts::Any,
            ScalarOp::Add => Accepts::NumericOrString,
            ScalarOp::Subtract
            | ScalarOp::Multiply
            | ScalarOp::Divide
            | ScalarOp::FloorDiv
            | ScalarOp::FloorMod
            | ScalarOp::Pow
            | ScalarOp::Maximum
            | ScalarOp::Minimum
            | ScalarOp::Less
            | ScalarOp::LessEqual
            | ScalarOp::Greater
            | ScalarOp::GreaterEqual
            | ScalarOp::Square
            | ScalarOp::Round
            | ScalarOp::DivideNoNan
            | ScalarOp::TruncateDiv => Accepts::Numeric,
            ScalarOp::Negative | ScalarOp::Abs | ScalarOp::Sign => Accepts::Signed,
            ScalarOp::Sqrt
            | ScalarOp::Exp
            | ScalarOp::Log
            | ScalarOp::Sin
            | ScalarOp::Cos
            | ScalarOp::Tanh
            | ScalarOp::Sigmoid
            | ScalarOp::Floor
            | ScalarOp::Ceil
            | ScalarOp::Acos
            | ScalarOp::Acosh
            | ScalarOp::Asin
            | ScalarOp::Asinh
            | ScalarOp::Atan
            | ScalarOp::Atanh
            | ScalarOp::Cosh
            | ScalarOp::Sinh
            | ScalarOp::Tan
            | ScalarOp::Erf
            | ScalarOp::Erfc
            | ScalarOp::Expm1
            | ScalarOp::Log1p
            | ScalarOp::LogSigmoid
            | ScalarOp::Reciprocal
            | ScalarOp::Rsqrt
            | ScalarOp::Softplus
            | ScalarOp::Softsign
            | ScalarOp::Rint
            | ScalarOp::IsNan
            | ScalarOp::IsInf
            | ScalarOp::IsFinite
            | ScalarOp::Atan2
            | ScalarOp::Xdivy
            | ScalarOp::Xlogy => Accepts::Float,
            ScalarOp::SquaredDifference => Accepts::FloatOrWideInt,
            ScalarOp::TruncateMod => Accepts::FloatOrInt32Int64,
            ScalarOp::BitwiseAnd
            | ScalarOp::BitwiseOr
            | ScalarOp::BitwiseXor
            | ScalarOp::BitwiseInvert
            | ScalarOp::BitwiseLeftShift
            | ScalarOp::BitwiseRightShift => Accepts::Integer,
            ScalarOp::LogicalAnd | ScalarOp::LogicalOr | ScalarOp::LogicalXor | ScalarOp::LogicalNot => Accepts::Bool,
        }
    }

    /// The result dtype for operands of these dtypes, with TensorFlow's rules: operands of a
    /// binary op (and `where`'s `x`, `y`) must have one dtype, else `type_mismatch`; comparisons
    /// give bool; `divide` of int8/16 and uint8/16 gives float32, of wider integers float64;
    /// logical ops take bool, bitwise ops integers, transcendental ops floats; `where`'s
    /// condition is bool; `cast` never converts between strings and other dtypes.
    pub fn output_dtype(self, inputs: &[DType]) -> Result<DType> {
        let name = self.name();
        if inputs.len() != self.arity() {
            return Err(Error::argument(name, format!("takes {} inputs, got {}", self.arity(), inputs.len())));
        }
        let (values, first_value) = match self {
            ScalarOp::Where => {
                if inputs[0] != DType::Bool {
                    return Err(Error::dtype(name, format!("input 0 (the condition) must be bool, got {}", inputs[0])));
                }
                (&inputs[1..], 1)
            }
            _ => (inputs, 0),
        };
        let dtype = values[0];
        if let Some((i, other)) = values.iter().enumerate().skip(1).find(|(_, d)| **d != dtype) {
            return Err(Error::dtype(
                name,
                format!("input {} is {other} but input {first_value} is {dtype}", i + first_value),
            ));
        }
        let accepts = self.accepts();
        if !accepts.admits(dtype) {
            return Err(Error::dtype(name, format!("takes {}, got {dtype}", accepts.describe())));
        }
        Ok(match self {
            op if op.is_comparison() || op.is_predicate() => DType::Bool,
            ScalarOp::Divide | ScalarOp::DivideNoNan => dtype.true_division_type().unwrap_or(dtype),
            ScalarOp::Cast(to) => {
                if (dtype == DType::String) != (to == DType::String) {
                    return Err(Error::dtype(name, format!("cannot cast {dtype} to {to}")));
                }
                to
            }
            _ => dtype,
        })
    }
}

impl ScalarOp {
    /// True when some operand values make the kernel fail (integer division by zero, a negative
    /// integer exponent); such ops fault only on integers.
    pub fn can_fault(self) -> bool {
        matches!(
            self,
            ScalarOp::FloorDiv | ScalarOp::FloorMod | ScalarOp::Pow | ScalarOp::TruncateDiv | ScalarOp::TruncateMod
        )
    }

    /// The per-element cost class.
    pub fn cost(self) -> Cost {
        match self {
            ScalarOp::Divide
            | ScalarOp::FloorDiv
            | ScalarOp::FloorMod
            | ScalarOp::Pow
            | ScalarOp::Sqrt
            | ScalarOp::Exp
            | ScalarOp::Log
            | ScalarOp::Sin
            | ScalarOp::Cos
            | ScalarOp::Tanh
            | ScalarOp::Sigmoid
            | ScalarOp::Acos
            | ScalarOp::Acosh
            | ScalarOp::Asin
            | ScalarOp::Asinh
            | ScalarOp::Atan
            | ScalarOp::Atanh
            | ScalarOp::Cosh
            | ScalarOp::Sinh
            | ScalarOp::Tan
            | ScalarOp::Erf
            | ScalarOp::Erfc
            | ScalarOp::Expm1
            | ScalarOp::Log1p
            | ScalarOp::LogSigmoid
            | ScalarOp::Reciprocal
            | ScalarOp::Rsqrt
            | ScalarOp::Softplus
            | ScalarOp::Softsign
            | ScalarOp::Atan2
            | ScalarOp::Xdivy
            | ScalarOp::Xlogy
            | ScalarOp::DivideNoNan
            | ScalarOp::TruncateDiv
            | ScalarOp::TruncateMod => Cost::Expensive,
            _ => Cost::Cheap,
        }
    }

    /// The infix symbol of a binary arithmetic or comparison op, for printing scalar graphs.
    pub fn infix(self) -> Option<&'static str> {
        Some(match self {
            ScalarOp::Add => "+",
            ScalarOp::Subtract => "-",
            ScalarOp::Multiply => "*",
            ScalarOp::Divide => "/",
            ScalarOp::FloorDiv => "//",
            ScalarOp::FloorMod => "%",
            ScalarOp::Equal => "==",
            ScalarOp::NotEqual => "!=",
            ScalarOp::Less => "<",
            ScalarOp::LessEqual => "<=",
            ScalarOp::Greater => ">",
            ScalarOp::GreaterEqual => ">=",
            ScalarOp::BitwiseAnd | ScalarOp::LogicalAnd => "&",
            ScalarOp::BitwiseOr | ScalarOp::LogicalOr => "|",
            ScalarOp::BitwiseXor | ScalarOp::LogicalXor => "^",
            _ => return None,
        })
    }
}

impl fmt::Display for ScalarOp {
    /// The graph-file name, with the target dtype of a cast: `add`, `cast<float32>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarOp::Cast(to) => write!(f, "cast<{to}>"),
            op => f.write_str(op.name()),
        }
    }
}

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
/// each op computes, used by [`Elemwise::perform`], the reductions and (later) fused kernels.
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
            #[inline]
            fn ieee_maximum(self, b: Self) -> Self {
                if self.is_nan() || b.is_nan() {
                    $t::NAN
                } else if self > b || (self == b && b.is_sign_negative()) {
                    self
                } else {
                    b
                }
            }

            #[inline]
            fn ieee_minimum(self, b: Self) -> Self {
                if self.is_nan() || b.is_nan() {
                    $t::NAN
                } else if self < b || (self == b && self.is_sign_negative()) {
                    self
                } else {
                    b
                }
            }
        }

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
                    ScalarOp::Pow => |a, b| Ok(a.powf(b)),
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
                    ScalarOp::Exp => |a| a.exp(),
                    ScalarOp::Log => |a| a.ln(),
                    ScalarOp::Sin => |a| a.sin(),
                    ScalarOp::Cos => |a| a.cos(),
                    ScalarOp::Tanh => |a| a.tanh(),
                    ScalarOp::Sigmoid => |a| 1.0 / (1.0 + (-a).exp()),
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

/// An elementwise op: applies [`ScalarOp`] to broadcast operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Elemwise {
    /// The scalar function.
    pub scalar: ScalarOp,
}

impl Elemwise {
    /// The elementwise op of `scalar`.
    pub fn new(scalar: ScalarOp) -> Self {
        Elemwise { scalar }
    }

    /// From a graph file's node: the op named by `attrs.op()`, `cast` reading its `dtype`
    /// attribute (a TensorFlow dtype name).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        Self::from_name_and_attrs(attrs.op(), attrs)
    }

    fn from_name_and_attrs(name: &str, attrs: &Attrs) -> Result<Self> {
        if name == "cast" {
            attrs.only(&["dtype"])?;
            let dtype = attrs.str("dtype")?;
            let to =
                DType::from_name(dtype).ok_or_else(|| Error::argument("cast", format!("unknown dtype `{dtype}`")))?;
            return Ok(Elemwise::new(ScalarOp::Cast(to)));
        }
        let scalar = ScalarOp::from_name(name)
            .ok_or_else(|| Error::argument(name, format!("`{name}` is not an elementwise op")))?;
        attrs.only(&[])?;
        Ok(Elemwise::new(scalar))
    }
}

impl Op for Elemwise {
    fn name(&self) -> String {
        format!("Elemwise{{{}}}", self.scalar)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.scalar;
        let arity = op.arity();
        expect_arity(op.name(), inputs, arity..=arity)?;
        let dtypes: Vec<DType> = inputs.iter().map(|t| t.dtype()).collect();
        let out = op.output_dtype(&dtypes)?;
        let shape = if arity == 1 { inputs[0].clone() } else { broadcast_types(op.name(), inputs)? };
        Ok(vec![shape.with_dtype(out)])
    }

    fn keeps_uniform_rows(&self) -> bool {
        // A unary op keeps its input's partitions; `broadcast_types` types uniform partitions
        // exactly where `broadcast_values` builds or reuses them.
        true
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.scalar;
        let dtypes: Vec<DType> = inputs.iter().map(RaggedTensor::dtype).collect();
        let out = op.output_dtype(&dtypes)?;
        if let [x] = inputs {
            let flat = unary_values(op, x.flat_values())?;
            return one(x.with_flat_values(flat)?);
        }
        let b = broadcast_values(op.name(), inputs)?;
        let locate = |element: usize| ragtime_core::describe_element(&b.partitions, &b.flat_shape, element);
        let flat = apply_aligned(op, &b.operands, b.flat_shape.clone(), out, &locate)?;
        one(b.finish(flat)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties {
            elementwise: true,
            keeps_partitions_of: (self.scalar.arity() == 1).then_some(0),
            can_fail: self.scalar.can_fault(),
            cost: self.scalar.cost(),
        }
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::elemwise::elemwise_vjp(self, graph, inputs, outputs, output_grads)
    }
}

/// `tf.math.add_n`: the sum of one or more tensors of one dtype and one shape (no broadcasting:
/// ragged operands need the same row partitions), added with the `add` kernel left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AddN;

impl AddN {
    /// The op.
    pub fn new() -> Self {
        AddN
    }

    /// From a graph file's node (no attributes).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(AddN)
    }
}

impl Op for AddN {
    fn name(&self) -> String {
        "AddN".to_string()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("add_n", inputs, 1..=usize::MAX)?;
        let first = &inputs[0];
        if !first.dtype().is_numeric() {
            return Err(Error::dtype("add_n", format!("takes integer or float tensors, got {}", first.dtype())));
        }
        let mut dims = first.dims().to_vec();
        for (i, t) in inputs.iter().enumerate().skip(1) {
            if t.dtype() != first.dtype() {
                return Err(Error::dtype(
                    "add_n",
                    format!("input {i} is {} but input 0 is {}", t.dtype(), first.dtype()),
                ));
            }
            let mismatch = || Error::shapes("add_n", format!("input {i} has type {t} but input 0 has type {first}"));
            if t.ragged_rank() != first.ragged_rank() || t.rank() != first.rank() {
                return Err(mismatch());
            }
            for (d, b) in dims.iter_mut().zip(t.dims()) {
                match (*d, *b) {
                    (Dim::Known(x), Dim::Known(y)) if x != y => return Err(mismatch()),
                    (Dim::Unknown, Dim::Known(y)) => *d = Dim::Known(y),
                    _ => {}
                }
            }
        }
        Ok(vec![TensorType::new(first.dtype(), first.ragged_rank(), dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let first = &inputs[0];
        let mut sum = first.flat_values().clone();
        for (i, x) in inputs.iter().enumerate().skip(1) {
            if !x.same_structure(first) || x.flat_values().shape() != first.flat_values().shape() {
                return Err(Error::shapes(
                    "add_n",
                    format!(
                        "input {i} does not have the row partitions and shape of input 0 (add_n does not broadcast)"
                    ),
                ));
            }
            let shape = sum.shape().to_vec();
            sum = apply_aligned(ScalarOp::Add, &[sum, x.flat_values().clone()], shape, first.dtype(), &|e| {
                format!("element {e}")
            })?;
        }
        one(first.with_flat_values(sum)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Cheap }
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        _outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::elemwise::add_n_vjp(graph, inputs, output_grads)
    }
}

/// The row-major elements of `t`, which holds `T` (the caller dispatched on its dtype).
fn elements<T: Element>(op: ScalarOp, t: &DenseTensor) -> Result<&[T]> {
    t.as_slice::<T>().ok_or_else(|| Error::dtype(op.name(), format!("expected {} values, got {}", T::DTYPE, t.dtype())))
}

fn no_kernel(op: ScalarOp, dtype: DType) -> Error {
    Error::dtype(op.name(), format!("not defined on {dtype}"))
}

/// A unary op on flat values (the structure is unchanged).
fn unary_values(op: ScalarOp, x: &DenseTensor) -> Result<DenseTensor> {
    if let ScalarOp::Cast(to) = op {
        return x.cast(to).map_err(|e| Error::dtype("cast", e.to_string()));
    }
    if op.is_predicate() {
        return dispatch_dtype!(x.dtype(),
            T => {
                let k = T::predicate(op).ok_or_else(|| no_kernel(op, x.dtype()))?;
                let data: Vec<bool> = elements::<T>(op, x)?.iter().map(|&v| k(v)).collect();
                DenseTensor::from_vec(x.shape().to_vec(), data)
            },
            string => Err(no_kernel(op, DType::String)));
    }
    dispatch_dtype!(x.dtype(),
        T => {
            let k = T::unary(op).ok_or_else(|| no_kernel(op, x.dtype()))?;
            let data: Vec<T> = elements::<T>(op, x)?.iter().map(|&v| k(v)).collect();
            DenseTensor::from_vec(x.shape().to_vec(), data)
        },
        string => Err(no_kernel(op, DType::String)))
}

/// Applies `op` to operands already aligned element by element (each of `shape`), giving values of
/// dtype `out` (the op's [`ScalarOp::output_dtype`]): the one evaluation of the scalar layer, shared
/// by [`Elemwise`] and the fused ops. A kernel fault (integer division by zero, a negative integer
/// exponent) is `invalid_argument`, placed by `locate(flat element index)`.
pub fn apply_aligned(
    op: ScalarOp,
    operands: &[DenseTensor],
    shape: Vec<usize>,
    out: DType,
    locate: &dyn Fn(usize) -> String,
) -> Result<DenseTensor> {
    match (op, operands) {
        (_, [x]) => unary_values(op, x),
        (ScalarOp::Where, _) => select(op, operands, shape),
        (op, [x, y]) if op.is_comparison() => compare(op, x, y, shape),
        (ScalarOp::Divide | ScalarOp::DivideNoNan, [x, y]) if x.dtype() != out => {
            // True division of integers: convert both operands to the float result type.
            combine(op, &x.cast(out)?, &y.cast(out)?, shape, locate)
        }
        (_, [x, y]) => combine(op, x, y, shape, locate),
        _ => Err(Error::argument(op.name(), format!("takes {} inputs, got {}", op.arity(), operands.len()))),
    }
}

/// A same-type binary kernel over aligned operands; a kernel fault names the offending row.
fn combine(
    op: ScalarOp,
    x: &DenseTensor,
    y: &DenseTensor,
    shape: Vec<usize>,
    locate: &dyn Fn(usize) -> String,
) -> Result<DenseTensor> {
    dispatch_dtype!(x.dtype(),
    T => {
        let k = T::binary(op).ok_or_else(|| no_kernel(op, x.dtype()))?;
        let (xs, ys) = (elements::<T>(op, x)?, elements::<T>(op, y)?);
        let mut data = Vec::with_capacity(xs.len());
        for (e, (&a, &c)) in xs.iter().zip(ys).enumerate() {
            data.push(k(a, c).map_err(|fault| fault_error(op, fault, c, &locate(e)))?);
        }
        DenseTensor::from_vec(shape, data)
    },
    string => match (op, x.as_strings(), y.as_strings()) {
        (ScalarOp::Add, Some(xs), Some(ys)) => {
            let mut out = StringBuilder::with_capacity(xs.len(), xs.byte_len() + ys.byte_len());
            for (a, c) in xs.iter().zip(ys.iter()) {
                out.extend(a);
                out.extend(c);
                out.end_string();
            }
            Ok(DenseTensor::String(out.finish(shape)?))
        }
        _ => Err(no_kernel(op, DType::String)),
    })
}

fn fault_error<T: Element>(op: ScalarOp, fault: Fault, rhs: T, at: &str) -> Error {
    let what = match fault {
        Fault::DivisionByZero => "integer division by zero".to_string(),
        Fault::NegativeExponent => format!("integer to the negative power {rhs}"),
    };
    Error::argument(op.name(), format!("{what} at {at}"))
}

fn compare(op: ScalarOp, x: &DenseTensor, y: &DenseTensor, shape: Vec<usize>) -> Result<DenseTensor> {
    let data: Vec<bool> = dispatch_dtype!(x.dtype(),
    T => {
        let k = comparison::<T>(op).ok_or_else(|| no_kernel(op, x.dtype()))?;
        elements::<T>(op, x)?.iter().zip(elements::<T>(op, y)?).map(|(a, c)| k(a, c)).collect()
    },
    string => {
        let k = comparison::<[u8]>(op).ok_or_else(|| no_kernel(op, DType::String))?;
        match (x.as_strings(), y.as_strings()) {
            (Some(xs), Some(ys)) => xs.iter().zip(ys.iter()).map(|(a, c)| k(a, c)).collect(),
            _ => return Err(Error::dtype(op.name(), "expected two string operands")),
        }
    });
    DenseTensor::from_vec(shape, data)
}

fn select(op: ScalarOp, operands: &[DenseTensor], shape: Vec<usize>) -> Result<DenseTensor> {
    let [cond, x, y] = operands else {
        return Err(Error::argument(op.name(), format!("takes 3 inputs, got {}", operands.len())));
    };
    let cond = elements::<bool>(op, cond)?;
    dispatch_dtype!(x.dtype(),
    T => {
        let (xs, ys) = (elements::<T>(op, x)?, elements::<T>(op, y)?);
        let data: Vec<T> = cond.iter().zip(xs.iter().zip(ys)).map(|(&c, (&a, &b))| if c { a } else { b }).collect();
        DenseTensor::from_vec(shape, data)
    },
    string => {
        let (Some(xs), Some(ys)) = (x.as_strings(), y.as_strings()) else {
            return Err(Error::dtype(op.name(), "expected two string operands"));
        };
        let mut out = StringBuilder::with_capacity(cond.len(), xs.byte_len().max(ys.byte_len()));
        for (i, &c) in cond.iter().enumerate() {
            out.push(if c { xs.get(i) } else { ys.get(i) });
        }
        Ok(DenseTensor::String(out.finish(shape)?))
    })
}

/// The elementwise op called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    if name == "add_n" {
        return Some(AddN::from_attrs(attrs).map(|op| Arc::new(op) as OpRef));
    }
    if name != "cast" && ScalarOp::from_name(name).is_none() {
        return None;
    }
    Some(Elemwise::from_name_and_attrs(name, attrs).map(|op| Arc::new(op) as OpRef))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtime_core::{ragged, ErrorKind, Literal, RowPartition};
    use std::collections::BTreeMap;

    fn run(op: ScalarOp, inputs: &[RaggedTensor]) -> Result<RaggedTensor> {
        let e = Elemwise::new(op);
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let inferred = e.infer(&types)?;
        let out = e.perform(inputs)?.remove(0);
        assert!(
            inferred[0].accepts(&TensorType::of(&out)),
            "infer said {}, perform gave {}",
            inferred[0],
            TensorType::of(&out)
        );
        Ok(out)
    }

    fn lit(r: Result<RaggedTensor>) -> Literal {
        r.unwrap().to_literal()
    }

    fn dense(r: Result<RaggedTensor>) -> RaggedTensor {
        RaggedTensor::from_literal_typed(&r.unwrap().to_literal(), None, Some(0), None).unwrap()
    }

    fn scalar<T: Element>(v: T) -> RaggedTensor {
        RaggedTensor::dense(DenseTensor::scalar(v))
    }

    fn as_dtype(r: Result<RaggedTensor>, dtype: DType) -> RaggedTensor {
        let rt = r.unwrap();
        RaggedTensor::from_literal_typed(&rt.to_literal(), Some(dtype), Some(rt.ragged_rank()), None).unwrap()
    }

    fn x() -> RaggedTensor {
        ragged![[1, 2], [3], [4, 5, 6]].unwrap()
    }

    fn z() -> RaggedTensor {
        ragged![[1, 1], [2], [3, 3, 3]].unwrap()
    }

    #[test]
    fn binary_ops_match_tensorflow() {
        // broadcasting.json binary_* cases.
        let cases: [(ScalarOp, Result<RaggedTensor>); 10] = [
            (ScalarOp::Add, ragged![[2, 3], [5], [7, 8, 9]]),
            (ScalarOp::Subtract, ragged![[0, 1], [1], [1, 2, 3]]),
            (ScalarOp::Multiply, ragged![[1, 2], [6], [12, 15, 18]]),
            (ScalarOp::FloorDiv, ragged![[1, 2], [1], [1, 1, 2]]),
            (ScalarOp::FloorMod, ragged![[0, 0], [1], [1, 2, 0]]),
            (ScalarOp::Pow, ragged![[1, 2], [9], [64, 125, 216]]),
            (ScalarOp::Maximum, ragged![[1, 2], [3], [4, 5, 6]]),
            (ScalarOp::BitwiseAnd, ragged![[1, 0], [2], [0, 1, 2]]),
            (ScalarOp::BitwiseOr, ragged![[1, 3], [3], [7, 7, 7]]),
            (ScalarOp::BitwiseXor, ragged![[0, 3], [1], [7, 6, 5]]),
        ];
        for (op, want) in cases {
            assert_eq!(lit(run(op, &[x(), z()])), lit(want), "{op}");
        }
        assert_eq!(lit(run(ScalarOp::Minimum, &[x(), z()])), lit(Ok(z())));
    }

    #[test]
    fn comparisons_give_bool() {
        let cases: [(ScalarOp, Result<RaggedTensor>); 6] = [
            (ScalarOp::Equal, ragged![[true, false], [false], [false, false, false]]),
            (ScalarOp::NotEqual, ragged![[false, true], [true], [true, true, true]]),
            (ScalarOp::Less, ragged![[false, false], [false], [false, false, false]]),
            (ScalarOp::LessEqual, ragged![[true, false], [false], [false, false, false]]),
            (ScalarOp::Greater, ragged![[false, true], [true], [true, true, true]]),
            (ScalarOp::GreaterEqual, ragged![[true, true], [true], [true, true, true]]),
        ];
        for (op, want) in cases {
            assert_eq!(lit(run(op, &[x(), z()])), lit(want), "{op}");
        }
    }

    #[test]
    fn string_equality() {
        let a = ragged![["a", "b"], [""]].unwrap();
        let b = ragged![["a", "c"], [""]].unwrap();
        assert_eq!(lit(run(ScalarOp::Equal, &[a.clone(), b.clone()])), lit(ragged![[true, false], [true]]));
        assert_eq!(lit(run(ScalarOp::NotEqual, &[a.clone(), b.clone()])), lit(ragged![[false, true], [false]]));
        // `tf.add` concatenates strings.
        assert_eq!(lit(run(ScalarOp::Add, &[a.clone(), b.clone()])), lit(ragged![["aa", "bc"], [""]]));
        assert_eq!(run(ScalarOp::Subtract, &[a.clone(), a.clone()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
        assert_eq!(run(ScalarOp::Less, &[a.clone(), a]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }

    #[test]
    fn divide_is_true_division() {
        let y = run(ScalarOp::Divide, &[x(), z()]).unwrap();
        assert_eq!(y.dtype(), DType::F64);
        let want = ragged![[1.0, 2.0], [1.5], [1.3333333333333333, 1.6666666666666667, 2.0]].unwrap();
        let got = y.flat_slice::<f64>().unwrap();
        let want32 = want.flat_slice::<f32>().unwrap();
        for (g, w) in got.iter().zip(want32) {
            assert!((g - f64::from(*w)).abs() < 1e-6, "{g} vs {w}");
        }
        assert_eq!(got[2], 1.5);
        assert_eq!(got[3], 4.0 / 3.0);
        let small = as_dtype(ragged![[1, 2]], DType::I16);
        assert_eq!(run(ScalarOp::Divide, &[small.clone(), small]).unwrap().dtype(), DType::F32);
        let by_zero = run(ScalarOp::Divide, &[x(), scalar(0i32)]).unwrap();
        assert!(by_zero.flat_slice::<f64>().unwrap().iter().all(|v| v.is_infinite()));
    }

    #[test]
    fn logical_ops() {
        let a = ragged![[true, false], [true], [false, false, true]].unwrap();
        let b = ragged![[true, true], [false], [false, true, true]].unwrap();
        assert_eq!(
            lit(run(ScalarOp::LogicalAnd, &[a.clone(), b.clone()])),
            lit(ragged![[true, false], [false], [false, false, true]])
        );
        assert_eq!(
            lit(run(ScalarOp::LogicalOr, &[a.clone(), b.clone()])),
            lit(ragged![[true, true], [true], [false, true, true]])
        );
        assert_eq!(
            lit(run(ScalarOp::LogicalXor, &[a.clone(), b])),
            lit(ragged![[false, true], [true], [false, true, false]])
        );
        assert_eq!(lit(run(ScalarOp::LogicalNot, &[a])), lit(ragged![[false, true], [false], [true, true, false]]));
        assert_eq!(run(ScalarOp::LogicalAnd, &[x(), z()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }

    #[test]
    fn unary_float_ops() {
        // broadcasting.json unary_* cases (float32 inputs).
        let v = || ragged![[0.5, -1.25], [3.0], [-4.5, 2.0, 0.0]];
        let cases: [(ScalarOp, Result<RaggedTensor>); 8] = [
            (ScalarOp::Negative, ragged![[-0.5, 1.25], [-3.0], [4.5, -2.0, -0.0]]),
            (ScalarOp::Abs, ragged![[0.5, 1.25], [3.0], [4.5, 2.0, 0.0]]),
            (ScalarOp::Square, ragged![[0.25, 1.5625], [9.0], [20.25, 4.0, 0.0]]),
            (ScalarOp::Floor, ragged![[0.0, -2.0], [3.0], [-5.0, 2.0, 0.0]]),
            (ScalarOp::Ceil, ragged![[1.0, -1.0], [3.0], [-4.0, 2.0, 0.0]]),
            (ScalarOp::Round, ragged![[0.0, -1.0], [3.0], [-4.0, 2.0, 0.0]]),
            (ScalarOp::Sign, ragged![[1.0, -1.0], [1.0], [-1.0, 1.0, 0.0]]),
            (
                ScalarOp::Exp,
                ragged![
                    [1.6487212181091309, 0.2865048050880432],
                    [20.08553695678711],
                    [0.011108996346592903, 7.389056205749512, 1.0]
                ],
            ),
        ];
        for (op, want) in cases {
            let got = run(op, &[v().unwrap()]).unwrap();
            let (g, w) = (got.flat_slice::<f32>().unwrap(), want.as_ref().unwrap().flat_slice::<f32>().unwrap());
            assert!(
                g.iter().zip(w).all(|(a, b)| (a - b).abs() <= 1e-6 + 1e-5 * b.abs()),
                "{op}: got {g:?}, want {w:?}"
            );
        }
        let sig = run(ScalarOp::Sigmoid, &[v().unwrap()]).unwrap();
        let want = [
            0.622459352016449f64,
            0.22270014882087708,
            0.9525741338729858,
            0.010986942797899246,
            0.8807970881462097,
            0.5,
        ];
        assert!(sig
            .flat_slice::<f32>()
            .unwrap()
            .iter()
            .zip(want)
            .all(|(&a, b)| (f64::from(a) - b).abs() <= 1e-6 + 1e-5 * b.abs()));
        let sq = run(ScalarOp::Sqrt, &[as_dtype(ragged![[9.0, 0.25], []], DType::F64)]).unwrap();
        assert_eq!(sq.flat_slice::<f64>(), Some(&[3.0, 0.5][..]));
        assert_eq!(run(ScalarOp::Sqrt, &[x()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }

    #[test]
    fn round_is_half_to_even_and_sign_keeps_nan() {
        let v = RaggedTensor::dense(DenseTensor::vector(vec![0.5f64, 1.5, 2.5, -0.5, -1.5, f64::NAN]));
        let r = run(ScalarOp::Round, std::slice::from_ref(&v)).unwrap();
        let r = r.flat_slice::<f64>().unwrap();
        assert_eq!(&r[..5], &[0.0, 2.0, 2.0, -0.0, -2.0]);
        assert!(r[5].is_nan());
        assert!(run(ScalarOp::Sign, &[v]).unwrap().flat_slice::<f64>().unwrap()[5].is_nan());
    }

    #[test]
    fn integer_unary_ops() {
        assert_eq!(lit(run(ScalarOp::BitwiseInvert, &[x()])), lit(ragged![[-2, -3], [-4], [-5, -6, -7]]));
        assert_eq!(lit(run(ScalarOp::Square, &[x()])), lit(ragged![[1, 4], [9], [16, 25, 36]]));
        let m = RaggedTensor::dense(DenseTensor::vector(vec![i32::MIN, -3, 0]));
        let got = run(ScalarOp::Abs, std::slice::from_ref(&m)).unwrap();
        assert_eq!(got.flat_slice::<i32>(), Some(&[i32::MIN, 3, 0][..]), "abs wraps like TensorFlow");
        assert_eq!(
            run(ScalarOp::Negative, std::slice::from_ref(&m)).unwrap().flat_slice::<i32>(),
            Some(&[i32::MIN, 3, 0][..])
        );
        assert_eq!(run(ScalarOp::Sign, &[m]).unwrap().flat_slice::<i32>(), Some(&[-1, -1, 0][..]));
        let u = as_dtype(ragged![[1, 2]], DType::U8);
        assert_eq!(run(ScalarOp::Negative, &[u]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }

    #[test]
    fn integer_arithmetic_wraps() {
        let big = RaggedTensor::dense(DenseTensor::vector(vec![i32::MAX, i32::MIN]));
        assert_eq!(
            run(ScalarOp::Add, &[big.clone(), scalar(1i32)]).unwrap().flat_slice::<i32>(),
            Some(&[i32::MIN, i32::MIN + 1][..])
        );
        assert_eq!(run(ScalarOp::Multiply, &[big, scalar(2i32)]).unwrap().flat_slice::<i32>(), Some(&[-2, 0][..]));
        let u = RaggedTensor::dense(DenseTensor::vector(vec![0u8, 200]));
        assert_eq!(run(ScalarOp::Subtract, &[u, scalar(1u8)]).unwrap().flat_slice::<u8>(), Some(&[255, 199][..]));
    }

    #[test]
    fn floor_division_follows_the_divisor_sign() {
        let a = RaggedTensor::dense(DenseTensor::vector(vec![7i64, -7, 7, -7]));
        let b = RaggedTensor::dense(DenseTensor::vector(vec![2i64, 2, -2, -2]));
        assert_eq!(
            run(ScalarOp::FloorDiv, &[a.clone(), b.clone()]).unwrap().flat_slice::<i64>(),
            Some(&[3, -4, -4, 3][..])
        );
        assert_eq!(run(ScalarOp::FloorMod, &[a, b]).unwrap().flat_slice::<i64>(), Some(&[1, 1, -1, -1][..]));
        let fa = RaggedTensor::dense(DenseTensor::vector(vec![7.5f64, -7.5]));
        let fb = RaggedTensor::dense(DenseTensor::vector(vec![-2.0f64, 2.0]));
        assert_eq!(
            run(ScalarOp::FloorMod, &[fa.clone(), fb.clone()]).unwrap().flat_slice::<f64>(),
            Some(&[-0.5, 0.5][..])
        );
        assert_eq!(run(ScalarOp::FloorDiv, &[fa, fb]).unwrap().flat_slice::<f64>(), Some(&[-4.0, -4.0][..]));
    }

    #[test]
    fn integer_division_by_zero_names_the_row() {
        let d = ragged![[1, 1], [1], [1, 1, 0]].unwrap();
        for op in [ScalarOp::FloorDiv, ScalarOp::FloorMod] {
            let e = run(op, &[x(), d.clone()]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.to_string().contains(op.name()) && e.to_string().contains("row 2"), "{e}");
        }
        let v = ragged![[4, 5], [6]].unwrap();
        let zero = dense(ragged![[1], [0]]);
        let e = run(ScalarOp::FloorDiv, &[v, zero]).unwrap_err();
        assert!(e.to_string().contains("row 1"), "{e}");
    }

    #[test]
    fn integer_pow() {
        let e = run(ScalarOp::Pow, &[x(), scalar(-1i32)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("pow"), "{e}");
        assert_eq!(lit(run(ScalarOp::Pow, &[x(), scalar(0i32)])), lit(ragged![[1, 1], [1], [1, 1, 1]]));
        let two = RaggedTensor::dense(DenseTensor::vector(vec![2i64]));
        assert_eq!(run(ScalarOp::Pow, &[two, scalar(62i64)]).unwrap().flat_slice::<i64>(), Some(&[1i64 << 62][..]));
    }

    #[test]
    fn maximum_propagates_nan() {
        let a = RaggedTensor::dense(DenseTensor::vector(vec![f32::NAN, 1.0]));
        let b = RaggedTensor::dense(DenseTensor::vector(vec![1.0f32, f32::NAN]));
        for op in [ScalarOp::Maximum, ScalarOp::Minimum] {
            let got = run(op, &[a.clone(), b.clone()]).unwrap();
            assert!(got.flat_slice::<f32>().unwrap().iter().all(|v| v.is_nan()), "{op}");
        }
    }

    #[test]
    fn dtype_mismatch_is_refused_at_build_time() {
        let f = ragged![[1.0, 2.0], [3.0]].unwrap();
        let i = ragged![[1, 2], [3]].unwrap();
        let e = Elemwise::new(ScalarOp::Add).infer(&[TensorType::of(&i), TensorType::of(&f)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TypeMismatch);
        assert!(e.to_string().contains("input 1 is float32"), "{e}");
        assert_eq!(Elemwise::new(ScalarOp::Add).perform(&[i, f]).unwrap_err().kind(), ErrorKind::TypeMismatch);
        let arity = Elemwise::new(ScalarOp::Add).infer(&[TensorType::scalar(DType::I32)]).unwrap_err();
        assert_eq!(arity.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn broadcasting_cases() {
        // broadcasting.json: ragged + scalar, + column, rank-3 + [[10]], rank-4 + vector.
        assert_eq!(lit(run(ScalarOp::Add, &[ragged![[1, 2], [3]].unwrap(), scalar(3i32)])), lit(ragged![[4, 5], [6]]));
        let x = ragged![[10, 87, 12], [19, 53], [12, 32]].unwrap();
        let c = dense(ragged![[1000], [2000], [3000]]);
        assert_eq!(lit(run(ScalarOp::Add, &[x, c])), lit(ragged![[1010, 1087, 1012], [2019, 2053], [3012, 3032]]));
        let r4 = RaggedTensor::from_literal_typed(
            &ragged![[[[1], [2]], [], [[3]], [[4]]], [[[5], [6]], [[7]]]].unwrap().to_literal(),
            None,
            Some(2),
            Some(&[1]),
        )
        .unwrap();
        let v = RaggedTensor::dense(DenseTensor::vector(vec![10i32, 20, 30]));
        let got = run(ScalarOp::Add, &[r4, v]).unwrap();
        assert_eq!(got.ragged_rank(), 2);
        assert_eq!(got.flat_values().shape(), &[7, 3]);
        assert_eq!(&got.flat_slice::<i32>().unwrap()[..6], &[11, 21, 31, 12, 22, 32]);
        let bad = ragged![[10, 20], [30, 40], [50]].unwrap();
        let e = run(ScalarOp::Add, &[ragged![[1, 2, 3], [4], [5, 6]].unwrap(), bad]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn same_structure_keeps_the_partition() {
        let a = x();
        let b = a.with_flat_values(DenseTensor::vector(vec![1, 1, 1, 1, 1, 1])).unwrap();
        let y = run(ScalarOp::Add, &[a.clone(), b]).unwrap();
        assert!(y.partitions()[0].ptr_eq(&a.partitions()[0]));
        let n = run(ScalarOp::Negative, std::slice::from_ref(&a)).unwrap();
        assert!(n.partitions()[0].ptr_eq(&a.partitions()[0]));
    }

    #[test]
    fn where_selects() {
        let c = ragged![[true, false], [true], [false, false, true]].unwrap();
        assert_eq!(lit(run(ScalarOp::Where, &[c.clone(), x(), z()])), lit(ragged![[1, 1], [3], [3, 3, 6]]));
        let s = ragged![["a", "b"], ["c"], ["d", "e", "f"]].unwrap();
        let t =
            RaggedTensor::dense(DenseTensor::String(ragtime_core::StringTensor::from_strings(&["-"], vec![]).unwrap()));
        assert_eq!(lit(run(ScalarOp::Where, &[c.clone(), s, t])), lit(ragged![["a", "-"], ["c"], ["-", "-", "f"]]));
        assert_eq!(run(ScalarOp::Where, &[x(), x(), z()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
        let f = ragged![[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]].unwrap();
        assert_eq!(run(ScalarOp::Where, &[c, x(), f]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }

    #[test]
    fn cast() {
        let y = run(ScalarOp::Cast(DType::F32), &[x()]).unwrap();
        assert_eq!(lit(Ok(y)), lit(ragged![[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]]));
        let s = ragged![["a"], []].unwrap();
        assert_eq!(lit(run(ScalarOp::Cast(DType::String), std::slice::from_ref(&s))), lit(Ok(s.clone())));
        assert_eq!(run(ScalarOp::Cast(DType::I32), &[s]).unwrap_err().kind(), ErrorKind::TypeMismatch);
        assert_eq!(Elemwise::new(ScalarOp::Cast(DType::F32)).name(), "Elemwise{cast<float32>}");
    }

    #[test]
    fn empty_and_zero_row_inputs() {
        let empty = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0]).unwrap();
        let y = run(ScalarOp::Exp, std::slice::from_ref(&empty)).unwrap();
        assert_eq!(y.nrows(), 0);
        let y = run(ScalarOp::Add, &[empty, scalar(1.0f32)]).unwrap();
        assert_eq!(y.flat_values().len(), 0);
        let rows = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0, 0, 0]).unwrap();
        assert_eq!(lit(run(ScalarOp::FloorDiv, &[rows, scalar(0i32)])), lit(ragged![[], []]));
    }

    #[test]
    fn lookup_builds_ops_by_graph_name() {
        let attrs = |op: &str, map: BTreeMap<String, ragtime_graph::Attr>| Attrs::new(op, map);
        let add = lookup("add", &attrs("add", BTreeMap::new())).unwrap().unwrap();
        assert_eq!(add.name(), "Elemwise{add}");
        let mut m = BTreeMap::new();
        m.insert("dtype".to_string(), ragtime_graph::Attr::Str("float64".into()));
        assert_eq!(lookup("cast", &attrs("cast", m)).unwrap().unwrap().name(), "Elemwise{cast<float64>}");
        let mut bad = BTreeMap::new();
        bad.insert("axis".to_string(), ragtime_graph::Attr::Int(1));
        assert_eq!(lookup("add", &attrs("add", bad)).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert!(lookup("concat", &attrs("concat", BTreeMap::new())).is_none());
        for op in NAMED_SCALAR_OPS {
            assert_eq!(ScalarOp::from_name(op.name()), Some(op));
        }
    }

    #[test]
    fn uniform_partitions_survive() {
        let p = RowPartition::from_uniform_row_length(2, 2).unwrap();
        let x = RaggedTensor::new(DenseTensor::vector(vec![1i32, 2, 3, 4]), vec![p.clone()]).unwrap();
        let y = run(ScalarOp::Multiply, &[x, scalar(2i32)]).unwrap();
        assert!(y.partitions()[0].ptr_eq(&p));
        assert_eq!(y.flat_slice::<i32>(), Some(&[2, 4, 6, 8][..]));
    }

    #[test]
    fn truncating_division_rounds_toward_zero_and_names_the_row_of_a_zero_divisor() {
        let a = RaggedTensor::dense(DenseTensor::vector(vec![7i64, -7, 7, -7]));
        let b = RaggedTensor::dense(DenseTensor::vector(vec![2i64, 2, -2, -2]));
        let q = run(ScalarOp::TruncateDiv, &[a.clone(), b.clone()]).unwrap();
        assert_eq!(q.flat_slice::<i64>(), Some(&[3, -3, -3, 3][..]));
        let r = run(ScalarOp::TruncateMod, &[a, b]).unwrap();
        assert_eq!(r.flat_slice::<i64>(), Some(&[1, -1, 1, -1][..]));
        let d = ragged![[1, 1], [1], [1, 0, 1]].unwrap();
        for op in [ScalarOp::TruncateDiv, ScalarOp::TruncateMod] {
            let e = run(op, &[x(), d.clone()]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.to_string().contains(op.name()) && e.to_string().contains("row 2"), "{e}");
            assert!(Elemwise::new(op).properties().can_fail);
        }
        // truncatemod has no 8/16-bit or unsigned kernel in TensorFlow; truncatediv has.
        let small = as_dtype(ragged![[7, -7]], DType::I8);
        assert_eq!(
            run(ScalarOp::TruncateMod, &[small.clone(), small.clone()]).unwrap_err().kind(),
            ErrorKind::TypeMismatch
        );
        assert_eq!(run(ScalarOp::TruncateDiv, &[small.clone(), small]).unwrap().flat_slice::<i8>(), Some(&[1, 1][..]));
    }

    #[test]
    fn shift_counts_are_clamped() {
        let v = RaggedTensor::dense(DenseTensor::vector(vec![1u8, 255, 3]));
        let s = RaggedTensor::dense(DenseTensor::vector(vec![9u8, 1, 0]));
        let l = run(ScalarOp::BitwiseLeftShift, &[v.clone(), s.clone()]).unwrap();
        assert_eq!(l.flat_slice::<u8>(), Some(&[128, 254, 3][..]));
        let r = run(ScalarOp::BitwiseRightShift, &[v, s]).unwrap();
        assert_eq!(r.flat_slice::<u8>(), Some(&[0, 127, 3][..]), "unsigned right shifts are logical");
        let n = RaggedTensor::dense(DenseTensor::vector(vec![-8i64, -8, 5]));
        let c = RaggedTensor::dense(DenseTensor::vector(vec![1i64, 1000, -3]));
        let r = run(ScalarOp::BitwiseRightShift, &[n, c]).unwrap();
        assert_eq!(r.flat_slice::<i64>(), Some(&[-4, -1, 5][..]), "signed right shifts are arithmetic");
        let f = ragged![[1.0], []].unwrap();
        assert_eq!(run(ScalarOp::BitwiseLeftShift, &[f.clone(), f]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }

    #[test]
    fn predicates_give_bool_and_refuse_integers() {
        let v = RaggedTensor::dense(DenseTensor::vector(vec![f32::NAN, f32::INFINITY, -1.0, f32::NEG_INFINITY]));
        let want: [(ScalarOp, [bool; 4]); 3] = [
            (ScalarOp::IsNan, [true, false, false, false]),
            (ScalarOp::IsInf, [false, true, false, true]),
            (ScalarOp::IsFinite, [false, false, true, false]),
        ];
        for (op, w) in want {
            let got = run(op, std::slice::from_ref(&v)).unwrap();
            assert_eq!(got.dtype(), DType::Bool);
            assert_eq!(got.flat_slice::<bool>(), Some(&w[..]), "{op}");
            assert_eq!(run(op, &[x()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
        }
    }

    #[test]
    fn float_only_math_refuses_integers_and_keeps_empty_rows() {
        let empty = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f64>::new()), vec![0, 0, 0]).unwrap();
        let no_rows = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0]).unwrap();
        for op in NAMED_SCALAR_OPS.into_iter().filter(|op| op.arity() == 1 && op.accepts() == Accepts::Float) {
            assert_eq!(run(op, &[x()]).unwrap_err().kind(), ErrorKind::TypeMismatch, "{op}");
            assert_eq!(run(op, std::slice::from_ref(&empty)).unwrap().nrows(), 2, "{op}");
            assert_eq!(run(op, std::slice::from_ref(&no_rows)).unwrap().nrows(), 0, "{op}");
        }
    }

    #[test]
    fn divide_no_nan_of_integers_is_a_float_division_with_zero_for_zero_divisors() {
        let a = as_dtype(ragged![[3, 4], [5]], DType::I16);
        let b = as_dtype(ragged![[2, 0], [0]], DType::I16);
        let q = run(ScalarOp::DivideNoNan, &[a, b]).unwrap();
        assert_eq!(q.dtype(), DType::F32);
        assert_eq!(q.flat_slice::<f32>(), Some(&[1.5, 0.0, 0.0][..]));
        let q = run(ScalarOp::DivideNoNan, &[x(), scalar(0i32)]).unwrap();
        assert_eq!(q.dtype(), DType::F64);
        assert!(q.flat_slice::<f64>().unwrap().iter().all(|v| *v == 0.0));
    }

    #[test]
    fn softplus_follows_tensorflow_thresholds() {
        let v = RaggedTensor::dense(DenseTensor::vector(vec![100.0f64, -100.0, 0.0, f64::NAN]));
        let got = run(ScalarOp::Softplus, std::slice::from_ref(&v)).unwrap();
        let g = got.flat_slice::<f64>().unwrap();
        assert_eq!(g[0], 100.0);
        assert_eq!(g[1], (-100.0f64).exp());
        assert_eq!(g[2], 2.0f64.ln());
        assert!(g[3].is_nan());
        let ls = run(ScalarOp::LogSigmoid, &[v]).unwrap();
        assert_eq!(ls.flat_slice::<f64>().unwrap()[1], -100.0);
    }

    #[test]
    fn add_n_adds_without_broadcasting() {
        let add_n = AddN::new();
        let types = |v: &[RaggedTensor]| v.iter().map(TensorType::of).collect::<Vec<_>>();
        let three = [x(), z(), x()];
        assert_eq!(add_n.infer(&types(&three)).unwrap()[0], TensorType::of(&x()));
        let got = add_n.perform(&three).unwrap().remove(0);
        assert_eq!(got.to_literal(), ragged![[3, 5], [8], [11, 13, 15]].unwrap().to_literal());
        assert!(got.partitions()[0].ptr_eq(&x().partitions()[0]) || got.same_structure(&x()));
        assert_eq!(add_n.perform(&[x()]).unwrap()[0].to_literal(), x().to_literal());
        let other = ragged![[1, 2, 3], [4], [5, 6]].unwrap();
        let e = add_n.perform(&[x(), other]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
        assert!(e.to_string().contains("add_n") && e.to_string().contains("input 1"), "{e}");
        let e = add_n.infer(&types(&[x(), scalar(1i32)])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
        let f = ragged![[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]].unwrap();
        assert_eq!(add_n.infer(&types(&[x(), f])).unwrap_err().kind(), ErrorKind::TypeMismatch);
        assert_eq!(add_n.infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let s = ragged![["a"]].unwrap();
        assert_eq!(add_n.infer(&types(&[s.clone(), s])).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }
}
