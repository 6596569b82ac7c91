//! The reduction ops as values: [`ReduceKind`], [`Reduce`], [`StatisticKind`] and [`Statistic`]
//! with their constructors, apart from their semantics (`impl Op` in `fold` and `statistics`), so
//! that gradient code can build them without importing the code that calls it.

use ragtime_core::{DType, Element, Error, Result};
use ragtime_graph::Attrs;

use crate::elemwise::scalar_op::ScalarOp;
use crate::reduce::axes::Axes;

/// What a reduction computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    /// Sum (0 for an empty group).
    Sum,
    /// Arithmetic mean (NaN for an empty group; float64 for integers).
    Mean,
    /// Maximum (the dtype's lowest value for an empty group).
    Max,
    /// Minimum (the dtype's highest value for an empty group).
    Min,
    /// Product (1 for an empty group).
    Prod,
    /// Logical and of booleans (true for an empty group).
    All,
    /// Logical or of booleans (false for an empty group).
    Any,
}

impl ReduceKind {
    /// Every kind.
    pub const ALL: [ReduceKind; 7] = [
        ReduceKind::Sum,
        ReduceKind::Mean,
        ReduceKind::Max,
        ReduceKind::Min,
        ReduceKind::Prod,
        ReduceKind::All,
        ReduceKind::Any,
    ];

    /// The graph-file (TensorFlow) name: `reduce_sum`, ...
    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "reduce_sum",
            ReduceKind::Mean => "reduce_mean",
            ReduceKind::Max => "reduce_max",
            ReduceKind::Min => "reduce_min",
            ReduceKind::Prod => "reduce_prod",
            ReduceKind::All => "reduce_all",
            ReduceKind::Any => "reduce_any",
        }
    }

    /// The kind whose graph-file name is `name`.
    pub fn from_name(name: &str) -> Option<ReduceKind> {
        ReduceKind::ALL.into_iter().find(|k| k.name() == name)
    }

    pub(crate) fn op_name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "ReduceSum",
            ReduceKind::Mean => "ReduceMean",
            ReduceKind::Max => "ReduceMax",
            ReduceKind::Min => "ReduceMin",
            ReduceKind::Prod => "ReduceProd",
            ReduceKind::All => "ReduceAll",
            ReduceKind::Any => "ReduceAny",
        }
    }

    /// The result dtype for an input of `dtype`: numeric kinds take integers and floats
    /// (`Mean` of integers gives float64), `All` / `Any` take bool; others are `type_mismatch`.
    pub fn output_dtype(self, dtype: DType) -> Result<DType> {
        let ok = match self {
            ReduceKind::All | ReduceKind::Any => dtype == DType::Bool,
            _ => dtype.is_numeric(),
        };
        if !ok {
            let want = if matches!(self, ReduceKind::All | ReduceKind::Any) { "bool" } else { "integer or float" };
            return Err(Error::dtype(self.name(), format!("takes a {want} tensor, got {dtype}")));
        }
        Ok(match self {
            ReduceKind::Mean => dtype.true_division_type().unwrap_or(dtype),
            _ => dtype,
        })
    }

    /// The elementwise op that folds two values.
    pub fn combine(self) -> ScalarOp {
        match self {
            ReduceKind::Sum | ReduceKind::Mean => ScalarOp::Add,
            ReduceKind::Max => ScalarOp::Maximum,
            ReduceKind::Min => ScalarOp::Minimum,
            ReduceKind::Prod => ScalarOp::Multiply,
            ReduceKind::All => ScalarOp::LogicalAnd,
            ReduceKind::Any => ScalarOp::LogicalOr,
        }
    }

    /// The value of an empty group (`ragged_axis`: the reduced axis is ragged, see the module doc).
    pub fn identity<T: Element>(self, ragged_axis: bool) -> T {
        match self {
            ReduceKind::Sum | ReduceKind::Mean | ReduceKind::Any => T::from_i64(0),
            ReduceKind::Prod | ReduceKind::All => T::from_i64(1),
            ReduceKind::Max if ragged_axis => finite_extreme::<T>(false),
            ReduceKind::Min if ragged_axis => finite_extreme::<T>(true),
            ReduceKind::Max => T::lowest(),
            ReduceKind::Min => T::highest(),
        }
    }
}

/// The largest (`highest`) or smallest finite value of `T` (equal to `Element::highest` /
/// `lowest` except for floats).
pub(crate) fn finite_extreme<T: Element>(highest: bool) -> T {
    let sign = if highest { 1.0 } else { -1.0 };
    match T::DTYPE {
        DType::F32 => T::from_f64(sign * f64::from(f32::MAX)),
        DType::F64 => T::from_f64(sign * f64::MAX),
        _ if highest => T::highest(),
        _ => T::lowest(),
    }
}

/// A reduction op: `kind` along `axis` (every axis, one, or several), optionally keeping the
/// reduced dims with size 1.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reduce {
    /// What is computed.
    pub kind: ReduceKind,
    /// The reduced axes.
    pub axis: Axes,
    /// Keep a size-1 dimension where each reduced axis was.
    pub keepdims: bool,
}

impl Reduce {
    /// `kind` along one `axis` (`None`: all axes).
    pub fn new(kind: ReduceKind, axis: Option<i64>, keepdims: bool) -> Self {
        Self::with_axes(kind, axis, keepdims)
    }

    /// `kind` along `axes`: `Axes::All`, an axis (`1`), or a list (`vec![0, 2]`, `[0, -1]`).
    pub fn with_axes(kind: ReduceKind, axes: impl Into<Axes>, keepdims: bool) -> Self {
        Reduce { kind, axis: axes.into(), keepdims }
    }

    /// From a graph file's node: the kind named by `attrs.op()`, attributes `axis` (int, list
    /// of ints, or null) and `keepdims` (default false).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        let kind = ReduceKind::from_name(attrs.op())
            .ok_or_else(|| Error::argument(attrs.op(), format!("`{}` is not a reduction", attrs.op())))?;
        Self::from_kind_and_attrs(kind, attrs)
    }

    pub(crate) fn from_kind_and_attrs(kind: ReduceKind, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "keepdims"])?;
        Ok(Reduce::with_axes(kind, Axes::from_attr(attrs, "axis")?, attrs.bool_opt("keepdims")?.unwrap_or(false)))
    }
}

/// What a [`Statistic`] computes over each group of a [`ReductionPlan`](crate::reduce::ReductionPlan).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatisticKind {
    /// Population variance (`tf.math.reduce_variance`).
    Variance,
    /// Population standard deviation (`tf.math.reduce_std`).
    Std,
    /// `log Σ exp(x)` with the maximum subtracted first (`tf.math.reduce_logsumexp`).
    LogSumExp,
    /// `sqrt(Σ x²)` (`tf.math.reduce_euclidean_norm`).
    EuclideanNorm,
}

impl StatisticKind {
    /// Every kind.
    pub const ALL: [StatisticKind; 4] =
        [StatisticKind::Variance, StatisticKind::Std, StatisticKind::LogSumExp, StatisticKind::EuclideanNorm];

    /// The graph-file (TensorFlow) name: `reduce_variance`, ...
    pub fn name(self) -> &'static str {
        match self {
            StatisticKind::Variance => "reduce_variance",
            StatisticKind::Std => "reduce_std",
            StatisticKind::LogSumExp => "reduce_logsumexp",
            StatisticKind::EuclideanNorm => "reduce_euclidean_norm",
        }
    }

    /// The kind whose graph-file name is `name`.
    pub fn from_name(name: &str) -> Option<StatisticKind> {
        StatisticKind::ALL.into_iter().find(|k| k.name() == name)
    }

    pub(crate) fn op_name(self) -> &'static str {
        match self {
            StatisticKind::Variance => "ReduceVariance",
            StatisticKind::Std => "ReduceStd",
            StatisticKind::LogSumExp => "ReduceLogSumExp",
            StatisticKind::EuclideanNorm => "ReduceEuclideanNorm",
        }
    }

    /// The result dtype for an input of `dtype`: variance and std take integers (giving their
    /// true-division float type) and floats; log-sum-exp takes floats; the Euclidean norm takes
    /// integers and floats and keeps the dtype. Anything else is `type_mismatch`.
    pub fn output_dtype(self, dtype: DType) -> Result<DType> {
        let (ok, want) = match self {
            StatisticKind::LogSumExp => (dtype.is_float(), "float"),
            _ => (dtype.is_numeric(), "integer or float"),
        };
        if !ok {
            return Err(Error::dtype(self.name(), format!("takes a {want} tensor, got {dtype}")));
        }
        Ok(match self {
            StatisticKind::Variance | StatisticKind::Std => dtype.true_division_type().unwrap_or(dtype),
            _ => dtype,
        })
    }
}

/// `reduce_variance`, `reduce_std`, `reduce_logsumexp` and `reduce_euclidean_norm` along `axis`:
/// the groups of [`plan_reduction`](crate::reduce::plan_reduction) (so the result has the structure of `reduce_sum` over the
/// same axes), each computed in two passes over its members.
///
/// - Floats are accumulated in float64. Variance is two-pass (mean, then the mean of squared
///   deviations), never TensorFlow's `E[x²] − E[x]²`, which cancels catastrophically; the two
///   agree within the conformance tolerance where TensorFlow's is accurate. An empty group is
///   NaN; ±inf in a group gives NaN.
/// - Integers follow TensorFlow's ragged kernel exactly, wrapping like `reduce_sum`: variance is
///   `max(E[x²] − E[x]², 0)` with `x²` and the sums in the integer dtype, divided in the
///   true-division float type; the Euclidean norm is the square root of the wrapped sum of
///   squares, truncated (a sum of squares that wrapped below zero gives 0).
/// - Log-sum-exp subtracts the group's maximum first when it is finite; an empty group (or one
///   of only `-inf`) gives `-inf`, as padding with `-inf` would.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Statistic {
    /// What is computed.
    pub kind: StatisticKind,
    /// The reduced axes.
    pub axis: Axes,
    /// Keep a size-1 dimension where each reduced axis was.
    pub keepdims: bool,
}

impl Statistic {
    /// `kind` along `axes`: `Axes::All`, an axis (`1`), or a list.
    pub fn new(kind: StatisticKind, axes: impl Into<Axes>, keepdims: bool) -> Self {
        Statistic { kind, axis: axes.into(), keepdims }
    }

    /// From a graph file's node: attributes `axis` (int, list of ints, or null) and `keepdims`.
    pub fn from_kind_and_attrs(kind: StatisticKind, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "keepdims"])?;
        Ok(Statistic::new(kind, Axes::from_attr(attrs, "axis")?, attrs.bool_opt("keepdims")?.unwrap_or(false)))
    }
}
