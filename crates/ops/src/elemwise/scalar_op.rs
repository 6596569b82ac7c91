//! The scalar op table: every [`ScalarOp`] with its name, arity, accepted dtypes, result dtype,
//! properties and cost.

use std::fmt;

use ragtime_core::{DType, Error, Result};
use ragtime_graph::Cost;

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
pub(crate) enum Accepts {
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
    pub(crate) fn accepts(self) -> Accepts {
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
