//! The scalar op table: every [`ScalarOp`] described once, in one macro invocation, with its
//! name, arity, accepted dtypes, result dtype, cost and properties. Everything else about an op
//! (its name, arity, dtype rule, cost, printing, whether it can fault) is read from that table; the
//! algorithms live in `kernels.rs` (the interpreter), `ragtime-vmath` (the math shared with the
//! JIT) and the JIT's lowering, which asks [`ScalarOp`] rather than keeping op lists of its own.

use std::fmt;

use ragtime_core::{DType, Error, Result};
use ragtime_graph::Cost;

/// How an op's result dtype follows from its operands' dtype (after the operands are checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResultDType {
    /// The operands' dtype.
    Same,
    /// bool (comparisons and float predicates).
    Bool,
    /// A float type wide enough for the operands ([`DType::true_division_type`]): `divide` of
    /// int8/16 and uint8/16 gives float32, of wider integers float64; floats stay.
    TrueDivision,
    /// The dtype a `cast` carries.
    CastTarget,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
struct ScalarOpInfo {
    name: &'static str,
    arity: usize,
    accepts: Accepts,
    result: ResultDType,
    cost: Cost,
    /// Some operand values make the kernel fail (integer division by zero, a negative integer
    /// exponent); such ops fault only on integers.
    faults: bool,
    infix: Option<&'static str>,
}

/// True when a row's options (`[faults, infix "//"]`) say `faults`.
macro_rules! faults {
    () => {
        false
    };
    (faults $($rest:tt)*) => {
        true
    };
    ($other:tt $($rest:tt)*) => {
        faults!($($rest)*)
    };
}

/// The symbol a row's options (`[infix "+"]`) give, if any.
macro_rules! infix {
    () => {
        None
    };
    (infix $symbol:literal $($rest:tt)*) => {
        Some($symbol)
    };
    ($other:tt $($rest:tt)*) => {
        infix!($($rest)*)
    };
}

/// Defines [`ScalarOp`], [`NAMED_SCALAR_OPS`] and the table behind [`ScalarOp::info`] from one
/// list. A row: `Variant = "graph-file name", arity, accepted operands -> result dtype, cost`,
/// then options in brackets: `faults` when some integer operands make it fail, `infix "sym"` when
/// scalar graphs print it infix. Ops that carry a dtype (`cast`) come after `---`.
macro_rules! scalar_ops {
    (
        $( $(#[$doc:meta])* $op:ident = $name:literal, $arity:literal, $accepts:ident -> $result:ident, $cost:ident
            $([$($options:tt)*])?; )*
        ---
        $( $(#[$pdoc:meta])* $pop:ident($payload:ty) = $pname:literal, $parity:literal, $paccepts:ident -> $presult:ident,
            $pcost:ident; )*
    ) => {
        /// A scalar function applied element by element: the whole elementwise vocabulary.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ScalarOp {
            $( $(#[$doc])* $op, )*
            $( $(#[$pdoc])* $pop($payload), )*
        }

        /// Every op of the family except those carrying a dtype ([`ScalarOp::Cast`]), in
        /// vocabulary order.
        pub const NAMED_SCALAR_OPS: [ScalarOp; [$(stringify!($op)),*].len()] = [$(ScalarOp::$op),*];

        impl ScalarOp {
            /// The op's row of the table.
            fn info(self) -> ScalarOpInfo {
                match self {
                    $( ScalarOp::$op => ScalarOpInfo {
                        name: $name,
                        arity: $arity,
                        accepts: Accepts::$accepts,
                        result: ResultDType::$result,
                        cost: Cost::$cost,
                        faults: faults!($($($options)*)?),
                        infix: infix!($($($options)*)?),
                    }, )*
                    $( ScalarOp::$pop(_) => ScalarOpInfo {
                        name: $pname,
                        arity: $parity,
                        accepts: Accepts::$paccepts,
                        result: ResultDType::$presult,
                        cost: Cost::$pcost,
                        faults: false,
                        infix: None,
                    }, )*
                }
            }
        }
    };
}

scalar_ops! {
    /// `x + y` (integers wrap; strings concatenate, as `tf.add` does).
    Add = "add", 2, NumericOrString -> Same, Cheap [infix "+"];
    /// `x - y` (integers wrap).
    Subtract = "subtract", 2, Numeric -> Same, Cheap [infix "-"];
    /// `x * y` (integers wrap).
    Multiply = "multiply", 2, Numeric -> Same, Cheap [infix "*"];
    /// True division: integer operands are converted to a float type first.
    Divide = "divide", 2, Numeric -> TrueDivision, Expensive [infix "/"];
    /// Division rounded toward negative infinity.
    FloorDiv = "floordiv", 2, Numeric -> Same, Expensive [faults, infix "//"];
    /// Remainder of [`ScalarOp::FloorDiv`]; takes the sign of the divisor.
    FloorMod = "floormod", 2, Numeric -> Same, Expensive [faults, infix "%"];
    /// `x ** y`; integer exponents must not be negative.
    Pow = "pow", 2, Numeric -> Same, Expensive [faults];
    /// The larger operand (NaN if either is NaN).
    Maximum = "maximum", 2, Numeric -> Same, Cheap;
    /// The smaller operand (NaN if either is NaN).
    Minimum = "minimum", 2, Numeric -> Same, Cheap;
    /// `x == y` (any dtype, including strings).
    Equal = "equal", 2, Any -> Bool, Cheap [infix "=="];
    /// `x != y` (any dtype, including strings).
    NotEqual = "not_equal", 2, Any -> Bool, Cheap [infix "!="];
    /// `x < y`.
    Less = "less", 2, Numeric -> Bool, Cheap [infix "<"];
    /// `x <= y`.
    LessEqual = "less_equal", 2, Numeric -> Bool, Cheap [infix "<="];
    /// `x > y`.
    Greater = "greater", 2, Numeric -> Bool, Cheap [infix ">"];
    /// `x >= y`.
    GreaterEqual = "greater_equal", 2, Numeric -> Bool, Cheap [infix ">="];
    /// Boolean and.
    LogicalAnd = "logical_and", 2, Bool -> Same, Cheap [infix "&"];
    /// Boolean or.
    LogicalOr = "logical_or", 2, Bool -> Same, Cheap [infix "|"];
    /// Boolean exclusive or.
    LogicalXor = "logical_xor", 2, Bool -> Same, Cheap [infix "^"];
    /// Boolean not.
    LogicalNot = "logical_not", 1, Bool -> Same, Cheap;
    /// Bitwise and of integers.
    BitwiseAnd = "bitwise_and", 2, Integer -> Same, Cheap [infix "&"];
    /// Bitwise or of integers.
    BitwiseOr = "bitwise_or", 2, Integer -> Same, Cheap [infix "|"];
    /// Bitwise exclusive or of integers.
    BitwiseXor = "bitwise_xor", 2, Integer -> Same, Cheap [infix "^"];
    /// Bitwise complement of integers.
    BitwiseInvert = "bitwise_invert", 1, Integer -> Same, Cheap;
    /// `-x` (integers wrap).
    Negative = "negative", 1, Signed -> Same, Cheap;
    /// `|x|` (integers wrap: the absolute value of the minimum is itself).
    Abs = "abs", 1, Signed -> Same, Cheap;
    /// `x * x`.
    Square = "square", 1, Numeric -> Same, Cheap;
    /// Square root.
    Sqrt = "sqrt", 1, Float -> Same, Expensive;
    /// `e ** x`.
    Exp = "exp", 1, Float -> Same, Expensive;
    /// Natural logarithm.
    Log = "log", 1, Float -> Same, Expensive;
    /// Sine.
    Sin = "sin", 1, Float -> Same, Expensive;
    /// Cosine.
    Cos = "cos", 1, Float -> Same, Expensive;
    /// Hyperbolic tangent.
    Tanh = "tanh", 1, Float -> Same, Expensive;
    /// `1 / (1 + e ** -x)`.
    Sigmoid = "sigmoid", 1, Float -> Same, Expensive;
    /// Largest integer not above `x`.
    Floor = "floor", 1, Float -> Same, Cheap;
    /// Smallest integer not below `x`.
    Ceil = "ceil", 1, Float -> Same, Cheap;
    /// Nearest integer, ties to even.
    Round = "round", 1, Numeric -> Same, Cheap;
    /// -1, 0 or 1 (NaN stays NaN).
    Sign = "sign", 1, Signed -> Same, Cheap;
    /// `cond ? x : y` (TensorFlow's `where` with three operands).
    Where = "where", 3, Any -> Same, Cheap;
    /// Inverse cosine.
    Acos = "acos", 1, Float -> Same, Expensive;
    /// Inverse hyperbolic cosine.
    Acosh = "acosh", 1, Float -> Same, Expensive;
    /// Inverse sine.
    Asin = "asin", 1, Float -> Same, Expensive;
    /// Inverse hyperbolic sine.
    Asinh = "asinh", 1, Float -> Same, Expensive;
    /// Inverse tangent.
    Atan = "atan", 1, Float -> Same, Expensive;
    /// Inverse hyperbolic tangent.
    Atanh = "atanh", 1, Float -> Same, Expensive;
    /// Hyperbolic cosine.
    Cosh = "cosh", 1, Float -> Same, Expensive;
    /// Hyperbolic sine.
    Sinh = "sinh", 1, Float -> Same, Expensive;
    /// Tangent.
    Tan = "tan", 1, Float -> Same, Expensive;
    /// The error function.
    Erf = "erf", 1, Float -> Same, Expensive;
    /// The complementary error function, `1 - erf(x)`.
    Erfc = "erfc", 1, Float -> Same, Expensive;
    /// `e ** x - 1`, accurate near 0.
    Expm1 = "expm1", 1, Float -> Same, Expensive;
    /// `ln(1 + x)`, accurate near 0.
    Log1p = "log1p", 1, Float -> Same, Expensive;
    /// `ln(sigmoid(x))`, computed as `-softplus(-x)` (TensorFlow's `log_sigmoid`).
    LogSigmoid = "log_sigmoid", 1, Float -> Same, Expensive;
    /// `1 / x`.
    Reciprocal = "reciprocal", 1, Float -> Same, Expensive;
    /// `1 / sqrt(x)`.
    Rsqrt = "rsqrt", 1, Float -> Same, Expensive;
    /// `ln(1 + e ** x)` with TensorFlow's thresholds (`x` itself above `-ln(eps) - 2`, `e ** x`
    /// below `ln(eps) + 2`).
    Softplus = "softplus", 1, Float -> Same, Expensive;
    /// `x / (1 + |x|)` (±inf gives NaN, as in TensorFlow).
    Softsign = "softsign", 1, Float -> Same, Expensive;
    /// Nearest integer, ties to even (`tf.math.rint`).
    Rint = "rint", 1, Float -> Same, Cheap;
    /// True where `x` is NaN.
    IsNan = "is_nan", 1, Float -> Bool, Cheap;
    /// True where `x` is ±inf.
    IsInf = "is_inf", 1, Float -> Bool, Cheap;
    /// True where `x` is neither NaN nor ±inf.
    IsFinite = "is_finite", 1, Float -> Bool, Cheap;
    /// `atan2(y, x)`: the angle of the point `(x, y)`; the first operand is `y`.
    Atan2 = "atan2", 2, Float -> Same, Expensive;
    /// `(x - y) ** 2` (integers wrap).
    SquaredDifference = "squared_difference", 2, FloatOrWideInt -> Same, Cheap;
    /// `x / y`, 0 where `x == 0`.
    Xdivy = "xdivy", 2, Float -> Same, Expensive;
    /// `x * ln(y)`, 0 where `x == 0`.
    Xlogy = "xlogy", 2, Float -> Same, Expensive;
    /// `x / y`, 0 where `y == 0`; integer operands are converted to a float type first.
    DivideNoNan = "divide_no_nan", 2, Numeric -> TrueDivision, Expensive;
    /// Division rounded toward zero; refuses an integer division by zero.
    TruncateDiv = "truncatediv", 2, Numeric -> Same, Expensive [faults];
    /// Remainder of [`ScalarOp::TruncateDiv`] (C's `fmod` on floats; the dividend's sign).
    TruncateMod = "truncatemod", 2, FloatOrInt32Int64 -> Same, Expensive [faults];
    /// `x << y` with `y` clamped to `[0, bits - 1]`.
    BitwiseLeftShift = "bitwise_left_shift", 2, Integer -> Same, Cheap;
    /// `x >> y` with `y` clamped to `[0, bits - 1]`; arithmetic on signed types.
    BitwiseRightShift = "bitwise_right_shift", 2, Integer -> Same, Cheap;
    ---
    /// Conversion to the given dtype (TensorFlow's `cast` rules; strings only to strings).
    Cast(DType) = "cast", 1, Any -> CastTarget, Cheap;
}

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
        self.info().name
    }

    /// The op called `name` in graph files; `cast` is not found here (it needs its dtype).
    pub fn from_name(name: &str) -> Option<ScalarOp> {
        NAMED_SCALAR_OPS.into_iter().find(|op| op.name() == name)
    }

    /// Number of operands.
    pub fn arity(self) -> usize {
        self.info().arity
    }

    /// True for the comparisons, whose result is bool.
    pub fn is_comparison(self) -> bool {
        self.info().result == ResultDType::Bool && self.arity() == 2
    }

    /// True for the float predicates (`is_nan`, `is_inf`, `is_finite`), whose result is bool.
    pub fn is_predicate(self) -> bool {
        self.info().result == ResultDType::Bool && self.arity() == 1
    }

    /// The dtypes the (non-condition) operands may have.
    pub(crate) fn accepts(self) -> Accepts {
        self.info().accepts
    }

    /// True when some operand values make the kernel fail (integer division by zero, a negative
    /// integer exponent); such ops fault only on integers.
    pub fn can_fault(self) -> bool {
        self.info().faults
    }

    /// The per-element cost class.
    pub fn cost(self) -> Cost {
        self.info().cost
    }

    /// The infix symbol of a binary arithmetic or comparison op, for printing scalar graphs.
    pub fn infix(self) -> Option<&'static str> {
        self.info().infix
    }

    /// The result dtype for operands of these dtypes, with TensorFlow's rules: operands of a
    /// binary op (and `where`'s `x`, `y`) must have one dtype, else `type_mismatch`; comparisons
    /// give bool; `divide` of int8/16 and uint8/16 gives float32, of wider integers float64;
    /// logical ops take bool, bitwise ops integers, transcendental ops floats; `where`'s
    /// condition is bool; `cast` never converts between strings and other dtypes.
    pub fn output_dtype(self, inputs: &[DType]) -> Result<DType> {
        let info = self.info();
        let name = info.name;
        if inputs.len() != info.arity {
            return Err(Error::argument(name, format!("takes {} inputs, got {}", info.arity, inputs.len())));
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
        Ok(match (info.result, self) {
            (ResultDType::Bool, _) => DType::Bool,
            (ResultDType::TrueDivision, _) => dtype.true_division_type().unwrap_or(dtype),
            (ResultDType::CastTarget, ScalarOp::Cast(to)) => {
                if (dtype == DType::String) != (to == DType::String) {
                    return Err(Error::dtype(name, format!("cannot cast {dtype} to {to}")));
                }
                to
            }
            _ => dtype,
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
