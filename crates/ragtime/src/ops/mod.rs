//! TensorFlow-named free functions over [`Var`]s (`ragtime::ops::tanh(&x)`), the `Var` methods that
//! forward to them (`x.reduce_mean(1)`), and operator overloading (`&x + 3`, `-&x`).

use ragtime_core::{DType, Literal};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::reduce::{Axes, Reduce, ReduceKind, Statistic, StatisticKind};

use crate::Var;

/// The right-hand side of a binary op: another variable, or a Rust scalar that takes the
/// variable's dtype (as TensorFlow converts Python scalars).
#[derive(Debug, Clone)]
pub enum Operand<'a> {
    /// A graph variable.
    Var(&'a Var),
    /// A scalar, converted to the other operand's dtype.
    Scalar(Literal),
}

impl<'a> From<&'a Var> for Operand<'a> {
    fn from(v: &'a Var) -> Self {
        Operand::Var(v)
    }
}

macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand<'_> {
            fn from(v: $t) -> Self {
                Operand::Scalar(Literal::from(v))
            }
        }
    )*};
}
scalar_operand!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool, &str);

impl Operand<'_> {
    /// The operand as a variable of `like`'s graph.
    #[track_caller]
    fn to_var(&self, like: &Var) -> Var {
        match self {
            Operand::Var(v) => (*v).clone(),
            Operand::Scalar(lit) => like.scalar_like(lit.clone()),
        }
    }
}

#[track_caller]
fn elemwise(scalar: ScalarOp, inputs: &[&Var]) -> Var {
    let (first, rest) = inputs.split_first().expect("elementwise ops have at least one input");
    first.apply1(Elemwise::new(scalar), rest)
}

macro_rules! binary_ops {
    ($($(#[$doc:meta])* $name:ident => $scalar:ident;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name<'a>(x: &Var, y: impl Into<Operand<'a>>) -> Var {
                let y = y.into().to_var(x);
                elemwise(ScalarOp::$scalar, &[x, &y])
            }
        )*
        impl Var {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $name<'a>(&self, y: impl Into<Operand<'a>>) -> Var {
                    $name(self, y)
                }
            )*
        }
    };
}

binary_ops! {
    /// `x + y` (`tf.add`).
    add => Add;
    /// `x - y` (`tf.subtract`).
    subtract => Subtract;
    /// `x * y` (`tf.multiply`).
    multiply => Multiply;
    /// True division (`tf.divide`): integers give floats.
    divide => Divide;
    /// Floor division (`tf.math.floordiv`).
    floordiv => FloorDiv;
    /// Floor modulo, with the divisor's sign (`tf.math.floormod`).
    floormod => FloorMod;
    /// `x ** y` (`tf.pow`).
    pow => Pow;
    /// Elementwise maximum (`tf.maximum`).
    maximum => Maximum;
    /// Elementwise minimum (`tf.minimum`).
    minimum => Minimum;
    /// `x == y` (`tf.equal`).
    equal => Equal;
    /// `x != y` (`tf.not_equal`).
    not_equal => NotEqual;
    /// `x < y` (`tf.less`).
    less => Less;
    /// `x <= y` (`tf.less_equal`).
    less_equal => LessEqual;
    /// `x > y` (`tf.greater`).
    greater => Greater;
    /// `x >= y` (`tf.greater_equal`).
    greater_equal => GreaterEqual;
    /// Boolean and (`tf.logical_and`).
    logical_and => LogicalAnd;
    /// Boolean or (`tf.logical_or`).
    logical_or => LogicalOr;
    /// Boolean exclusive or (`tf.math.logical_xor`).
    logical_xor => LogicalXor;
    /// Bitwise and (`tf.bitwise.bitwise_and`).
    bitwise_and => BitwiseAnd;
    /// Bitwise or (`tf.bitwise.bitwise_or`).
    bitwise_or => BitwiseOr;
    /// Bitwise exclusive or (`tf.bitwise.bitwise_xor`).
    bitwise_xor => BitwiseXor;
    /// The angle of the point `(x, y)` for `self` = y (`tf.math.atan2(y, x)`).
    atan2 => Atan2;
    /// `(x - y) ** 2` (`tf.math.squared_difference`).
    squared_difference => SquaredDifference;
    /// `x / y`, 0 where `x == 0` (`tf.math.xdivy`).
    xdivy => Xdivy;
    /// `x * ln(y)`, 0 where `x == 0` (`tf.math.xlogy`).
    xlogy => Xlogy;
    /// `x / y`, 0 where `y == 0`; integers give floats (`tf.math.divide_no_nan`).
    divide_no_nan => DivideNoNan;
    /// Division rounded toward zero (`tf.truncatediv`).
    truncatediv => TruncateDiv;
    /// Remainder of the division rounded toward zero (`tf.truncatemod`).
    truncatemod => TruncateMod;
    /// `x << y`, `y` clamped to `[0, bits - 1]` (`tf.bitwise.left_shift`).
    bitwise_left_shift => BitwiseLeftShift;
    /// `x >> y`, `y` clamped to `[0, bits - 1]` (`tf.bitwise.right_shift`).
    bitwise_right_shift => BitwiseRightShift;
}

macro_rules! unary_ops {
    ($($(#[$doc:meta])* $name:ident => $scalar:ident;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(x: &Var) -> Var {
                elemwise(ScalarOp::$scalar, &[x])
            }
        )*
        impl Var {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $name(&self) -> Var {
                    $name(self)
                }
            )*
        }
    };
}

unary_ops! {
    /// Boolean not (`tf.logical_not`).
    logical_not => LogicalNot;
    /// Bitwise complement (`tf.bitwise.invert`).
    bitwise_invert => BitwiseInvert;
    /// `-x` (`tf.negative`).
    negative => Negative;
    /// `|x|` (`tf.abs`).
    abs => Abs;
    /// `x * x` (`tf.square`).
    square => Square;
    /// Square root (`tf.sqrt`).
    sqrt => Sqrt;
    /// `e ** x` (`tf.exp`).
    exp => Exp;
    /// Natural logarithm (`tf.math.log`).
    log => Log;
    /// Sine (`tf.sin`).
    sin => Sin;
    /// Cosine (`tf.cos`).
    cos => Cos;
    /// Hyperbolic tangent (`tf.tanh`).
    tanh => Tanh;
    /// Logistic sigmoid (`tf.sigmoid`).
    sigmoid => Sigmoid;
    /// Round down (`tf.floor`).
    floor => Floor;
    /// Round up (`tf.math.ceil`).
    ceil => Ceil;
    /// Round half to even (`tf.round`).
    round => Round;
    /// -1, 0 or 1 (`tf.sign`).
    sign => Sign;
    /// Inverse cosine (`tf.math.acos`).
    acos => Acos;
    /// Inverse hyperbolic cosine (`tf.math.acosh`).
    acosh => Acosh;
    /// Inverse sine (`tf.math.asin`).
    asin => Asin;
    /// Inverse hyperbolic sine (`tf.math.asinh`).
    asinh => Asinh;
    /// Inverse tangent (`tf.math.atan`).
    atan => Atan;
    /// Inverse hyperbolic tangent (`tf.math.atanh`).
    atanh => Atanh;
    /// Hyperbolic cosine (`tf.math.cosh`).
    cosh => Cosh;
    /// Hyperbolic sine (`tf.math.sinh`).
    sinh => Sinh;
    /// Tangent (`tf.math.tan`).
    tan => Tan;
    /// The error function (`tf.math.erf`).
    erf => Erf;
    /// The complementary error function (`tf.math.erfc`).
    erfc => Erfc;
    /// `e ** x - 1` (`tf.math.expm1`).
    expm1 => Expm1;
    /// `ln(1 + x)` (`tf.math.log1p`).
    log1p => Log1p;
    /// `ln(sigmoid(x))` (`tf.math.log_sigmoid`).
    log_sigmoid => LogSigmoid;
    /// `1 / x` (`tf.math.reciprocal`).
    reciprocal => Reciprocal;
    /// `1 / sqrt(x)` (`tf.math.rsqrt`).
    rsqrt => Rsqrt;
    /// `ln(1 + e ** x)` (`tf.math.softplus`).
    softplus => Softplus;
    /// `x / (1 + |x|)` (`tf.math.softsign`).
    softsign => Softsign;
    /// Round half to even (`tf.math.rint`).
    rint => Rint;
    /// True where NaN (`tf.math.is_nan`).
    is_nan => IsNan;
    /// True where ±inf (`tf.math.is_inf`).
    is_inf => IsInf;
    /// True where finite (`tf.math.is_finite`).
    is_finite => IsFinite;
}

/// The sum of tensors of one dtype and shape, without broadcasting (`tf.math.add_n`); no
/// input at all is an error of the returned variable.
#[track_caller]
pub fn add_n(inputs: &[&Var]) -> Var {
    match inputs.split_first() {
        Some((first, rest)) => first.apply1(ragtime_ops::elemwise::AddN::new(), rest),
        None => Var::error(ragtime_core::Error::argument("add_n", "needs at least one input")),
    }
}

/// Converts to another dtype (`tf.cast`).
#[track_caller]
pub fn cast(x: &Var, dtype: DType) -> Var {
    elemwise(ScalarOp::Cast(dtype), &[x])
}

/// `cond ? x : y` elementwise, with broadcasting (`tf.where` with three operands).
#[track_caller]
pub fn where_<'a>(cond: &Var, x: &Var, y: impl Into<Operand<'a>>) -> Var {
    let y = y.into().to_var(x);
    elemwise(ScalarOp::Where, &[cond, x, &y])
}

impl Var {
    /// Converts to another dtype (`tf.cast`).
    #[track_caller]
    pub fn cast(&self, dtype: DType) -> Var {
        cast(self, dtype)
    }
}

/// Which axes a reduction reduces, and whether it keeps them as dimensions of size 1.
/// `1`, `-1`, `[0, 2]`, `vec![1, 2]` and `None` (every axis) convert into it; [`keepdims`] keeps the axes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReduceAxis {
    /// The axes (negative counts from the end), or all of them.
    pub axes: Axes,
    /// Keep each reduced axis with size 1.
    pub keepdims: bool,
}

impl<T: Into<Axes>> From<T> for ReduceAxis {
    fn from(axes: T) -> Self {
        ReduceAxis { axes: axes.into(), keepdims: false }
    }
}

/// `axis` with `keepdims=True`: `x.reduce_max(keepdims(1))`.
pub fn keepdims(axis: impl Into<ReduceAxis>) -> ReduceAxis {
    ReduceAxis { keepdims: true, ..axis.into() }
}

macro_rules! reductions {
    ($($(#[$doc:meta])* $name:ident => $kind:ident;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(x: &Var, axis: impl Into<ReduceAxis>) -> Var {
                let a = axis.into();
                x.apply1(Reduce::with_axes(ReduceKind::$kind, a.axes, a.keepdims), &[])
            }
        )*
        impl Var {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $name(&self, axis: impl Into<ReduceAxis>) -> Var {
                    $name(self, axis)
                }
            )*
        }
    };
}

reductions! {
    /// Sum along an axis (`tf.reduce_sum`); empty rows give 0.
    reduce_sum => Sum;
    /// Mean along an axis (`tf.reduce_mean`); empty rows give NaN; integers give float64.
    reduce_mean => Mean;
    /// Maximum along an axis (`tf.reduce_max`); empty rows give the dtype's lowest value.
    reduce_max => Max;
    /// Minimum along an axis (`tf.reduce_min`); empty rows give the dtype's highest value.
    reduce_min => Min;
    /// Product along an axis (`tf.reduce_prod`); empty rows give 1.
    reduce_prod => Prod;
    /// Logical and along an axis (`tf.reduce_all`); empty rows give true.
    reduce_all => All;
    /// Logical or along an axis (`tf.reduce_any`); empty rows give false.
    reduce_any => Any;
}

macro_rules! statistics {
    ($($(#[$doc:meta])* $name:ident => $kind:ident;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(x: &Var, axis: impl Into<ReduceAxis>) -> Var {
                let a = axis.into();
                x.apply1(Statistic::new(StatisticKind::$kind, a.axes, a.keepdims), &[])
            }
        )*
        impl Var {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $name(&self, axis: impl Into<ReduceAxis>) -> Var {
                    $name(self, axis)
                }
            )*
        }
    };
}

statistics! {
    /// Population variance along an axis (`tf.math.reduce_variance`); empty rows give NaN;
    /// integers give float32 (8/16-bit) or float64.
    ///
    /// ```
    /// use ragtime::prelude::*;
    /// let g = Graph::new();
    /// let x = g.input("x", TensorType::ragged(DType::F32, 1));
    /// let f = compile(&[&x], &[&x.reduce_variance(1)]).unwrap();
    /// let y = f.call(&[ragged![[1.0, 3.0], [2.0]].unwrap()]).unwrap();
    /// assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![1.0, 0.0]);
    /// ```
    reduce_variance => Variance;
    /// Population standard deviation along an axis (`tf.math.reduce_std`); the square root of
    /// [`reduce_variance`].
    reduce_std => Std;
    /// `log Σ exp(x)` along an axis, the maximum subtracted first (`tf.math.reduce_logsumexp`);
    /// empty rows give `-inf`; floats only.
    ///
    /// ```
    /// use ragtime::prelude::*;
    /// let g = Graph::new();
    /// let x = g.input("x", TensorType::ragged(DType::F32, 1));
    /// let f = compile(&[&x], &[&x.reduce_logsumexp(1)]).unwrap();
    /// let y = f.call(&[ragged![[1000.0, 1000.0], []].unwrap()]).unwrap();
    /// let v = y[0].to_vec::<f32>().unwrap();
    /// // No overflow: the row's maximum is subtracted before exp.
    /// assert!((v[0] - (1000.0 + 2f32.ln())).abs() < 1e-3 && v[1] == f32::NEG_INFINITY);
    /// ```
    reduce_logsumexp => LogSumExp;
    /// `sqrt(Σ x²)` along an axis (`tf.math.reduce_euclidean_norm`); empty rows give 0;
    /// integers keep their dtype (the square root truncated).
    reduce_euclidean_norm => EuclideanNorm;
}

// Operator overloading: every combination of `Var` / `&Var` with another or with a scalar.
macro_rules! operator {
    ($trait:ident, $method:ident, $func:ident) => {
        impl<'a, R: Into<Operand<'a>>> std::ops::$trait<R> for &Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: R) -> Var {
                $func(self, rhs)
            }
        }
        impl<'a, R: Into<Operand<'a>>> std::ops::$trait<R> for Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: R) -> Var {
                $func(&self, rhs)
            }
        }
        impl std::ops::$trait<Var> for &Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: Var) -> Var {
                $func(self, &rhs)
            }
        }
        impl std::ops::$trait<Var> for Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: Var) -> Var {
                $func(&self, &rhs)
            }
        }
    };
}
operator!(Add, add, add);
operator!(Sub, sub, subtract);
operator!(Mul, mul, multiply);
operator!(Div, div, divide);
operator!(Rem, rem, floormod);

/// `&` is logical and for booleans, bitwise and for integers (as in TensorFlow).
#[track_caller]
fn and_op<'a>(x: &Var, y: impl Into<Operand<'a>>) -> Var {
    if x.dtype() == Some(DType::Bool) {
        logical_and(x, y)
    } else {
        bitwise_and(x, y)
    }
}
/// `|` is logical or for booleans, bitwise or for integers.
#[track_caller]
fn or_op<'a>(x: &Var, y: impl Into<Operand<'a>>) -> Var {
    if x.dtype() == Some(DType::Bool) {
        logical_or(x, y)
    } else {
        bitwise_or(x, y)
    }
}
/// `^` is logical xor for booleans, bitwise xor for integers.
#[track_caller]
fn xor_op<'a>(x: &Var, y: impl Into<Operand<'a>>) -> Var {
    if x.dtype() == Some(DType::Bool) {
        logical_xor(x, y)
    } else {
        bitwise_xor(x, y)
    }
}
operator!(BitAnd, bitand, and_op);
operator!(BitOr, bitor, or_op);
operator!(BitXor, bitxor, xor_op);

impl std::ops::Neg for &Var {
    type Output = Var;
    #[track_caller]
    fn neg(self) -> Var {
        negative(self)
    }
}
impl std::ops::Neg for Var {
    type Output = Var;
    #[track_caller]
    fn neg(self) -> Var {
        negative(&self)
    }
}
/// `!x` is logical not for booleans, bitwise invert for integers (TensorFlow's `~`).
impl std::ops::Not for &Var {
    type Output = Var;
    #[track_caller]
    fn not(self) -> Var {
        if self.dtype() == Some(DType::Bool) {
            logical_not(self)
        } else {
            bitwise_invert(self)
        }
    }
}
impl std::ops::Not for Var {
    type Output = Var;
    #[track_caller]
    fn not(self) -> Var {
        !&self
    }
}

// Scalars on the left: `3 - &x`, `2.0 * x`.
macro_rules! scalar_lhs {
    ($($t:ty),*) => {$(
        impl std::ops::Add<&Var> for $t { type Output = Var; #[track_caller] fn add(self, rhs: &Var) -> Var { add(&rhs.scalar_like(self), rhs) } }
        impl std::ops::Add<Var> for $t { type Output = Var; #[track_caller] fn add(self, rhs: Var) -> Var { add(&rhs.scalar_like(self), &rhs) } }
        impl std::ops::Sub<&Var> for $t { type Output = Var; #[track_caller] fn sub(self, rhs: &Var) -> Var { subtract(&rhs.scalar_like(self), rhs) } }
        impl std::ops::Sub<Var> for $t { type Output = Var; #[track_caller] fn sub(self, rhs: Var) -> Var { subtract(&rhs.scalar_like(self), &rhs) } }
        impl std::ops::Mul<&Var> for $t { type Output = Var; #[track_caller] fn mul(self, rhs: &Var) -> Var { multiply(&rhs.scalar_like(self), rhs) } }
        impl std::ops::Mul<Var> for $t { type Output = Var; #[track_caller] fn mul(self, rhs: Var) -> Var { multiply(&rhs.scalar_like(self), &rhs) } }
        impl std::ops::Div<&Var> for $t { type Output = Var; #[track_caller] fn div(self, rhs: &Var) -> Var { divide(&rhs.scalar_like(self), rhs) } }
        impl std::ops::Div<Var> for $t { type Output = Var; #[track_caller] fn div(self, rhs: Var) -> Var { divide(&rhs.scalar_like(self), &rhs) } }
    )*};
}
scalar_lhs!(i32, i64, f32, f64);

mod bincount;
mod flat_values;
mod rows;
pub mod strings;
mod structure;

pub use bincount::*;
pub use flat_values::*;
pub use rows::*;
pub use structure::*;
