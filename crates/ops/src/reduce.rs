//! Reductions (`reduce_sum`, `reduce_mean`, `reduce_max`, `reduce_min`, `reduce_prod`,
//! `reduce_all`, `reduce_any`) over any axes of a ragged or dense tensor, with TensorFlow's
//! semantics; the [`Axes`] a reduction folds; and the [`ReductionPlan`] that says which elements
//! fold into which result element, shared with the other reductions (string `reduce_join`).
//!
//! TensorFlow's rules (`ragged_math_ops.ragged_reduce_aggregate`), which the plan encodes:
//!
//! - `axis = None` folds every value into a scalar (with `keepdims`, a dense tensor of 1s).
//! - A uniform axis (any axis of a dense tensor, an inner axis of the flat values) folds along
//!   it; the ragged partitions are kept (shared).
//! - Ragged axis `a >= 1` folds the rows of partition `a - 1`. If ragged dims follow, the rows
//!   being folded are themselves ragged and are aligned by position: the result row has the
//!   length of the longest one and element `j` folds the rows' `j`-th elements that exist.
//! - Axis 0 of a ragged tensor folds across rows by position: result row `j` folds the `j`-th
//!   element of every row that has one (there are as many as the longest row).
//! - Empty groups give the identity: sum 0, prod 1, mean NaN, all true, any false; max / min
//!   give the dtype's lowest / highest value, which for floats is `-inf` / `inf` when a uniform
//!   axis is reduced but the finite `MIN` / `MAX` when a ragged axis is (TensorFlow's segment
//!   kernels start from `numeric_limits::lowest()`).
//! - `keepdims` leaves a dimension of size 1 where the axis was: a uniform inner dim of size 1
//!   when the result is flat there, a uniform row partition of length 1 when ragged dims follow.
//! - `reduce_mean` of integers gives float64 (TensorFlow divides the integer sum by the count
//!   with true division); sums and products of integers wrap.
//!
//! Several axes (`axis=[0, 2]`; negative entries count from the end, an axis named twice is an
//! error, an empty list folds nothing):
//!
//! - A ragged input is reduced one axis at a time, from the innermost listed axis outwards, each
//!   step following the single-axis rules above on the previous step's result. So an empty group
//!   of an inner step gives its identity, which the outer step then folds (`reduce_max` over
//!   `[1, 2]` of `[[[1.0], []]]` is `max(1.0, f32::MIN)`), and a string join keeps a separator
//!   for it. The plan keeps these steps as [`ReductionStage`]s.
//! - A dense input is reduced over all listed axes at once (TensorFlow's dense kernels), in one
//!   stage whose groups run through the listed axes with the first one varying fastest (the
//!   order of `tf.strings.reduce_join`: axis `[0, 1]` of `[["a", "b"], ["c", "d"]]` is `"acbd"`).
//! - `reduce_mean` divides the sum over all the reduced axes by the number of elements folded
//!   into each result element, never a mean of means.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;

use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, Error, RaggedTensor, Result, RowPartition, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties, OpRef};

use crate::elemwise::{Kernels, ScalarOp};
use crate::util::{normalize_axis, one};

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

    fn op_name(self) -> &'static str {
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

// ---------------------------------------------------------------------------------------------
// Axes
// ---------------------------------------------------------------------------------------------

/// The axes a reduction folds: all of them, or a list (negative entries count from the end).
///
/// A list of one axis is the single-axis reduction (`Axes::from(1) == Axes::from(vec![1])`, both
/// printed `1`); an empty list folds nothing. Entries are checked against the input's rank when
/// the op is applied ([`Axes::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Axes {
    /// Every axis (TensorFlow's `axis=None`): the result is a scalar.
    All,
    /// These axes, in the order given.
    List(Vec<i64>),
}

impl Axes {
    /// The axis when exactly one is listed.
    pub fn single(&self) -> Option<i64> {
        match self {
            Axes::List(list) => match list.as_slice() {
                [axis] => Some(*axis),
                _ => None,
            },
            Axes::All => None,
        }
    }

    /// Attribute `name` of a graph-file node: an integer, a list of integers, or null / absent
    /// for all axes.
    pub fn from_attr(attrs: &Attrs, name: &str) -> Result<Axes> {
        let axes = attrs.ints_opt(name)?.map_or(Axes::All, Axes::List);
        if let Axes::List(list) = &axes {
            // No tensor has more axes than the rank limit: a longer list is refused before it is read.
            ragtime_core::limits::checked_rank(attrs.op(), list.len()).map_err(|_| {
                Error::argument(
                    attrs.op(),
                    format!(
                        "attribute `{name}` lists {} axes, more than the rank limit {}",
                        list.len(),
                        ragtime_core::limits::MAX_RANK
                    ),
                )
            })?;
        }
        Ok(axes)
    }

    /// The listed axes resolved into `0..rank`, in the order given (`None` for [`Axes::All`]).
    /// An axis outside `-rank..rank`, or an axis named twice (`1` and `-1` of a rank-2 tensor
    /// included), is `invalid_argument`, naming `op`.
    pub fn resolve(&self, op: &str, rank: usize) -> Result<Option<Vec<usize>>> {
        let Axes::List(list) = self else {
            return Ok(None);
        };
        if list.len() > rank {
            // Some axis is out of range or named twice: find which, without quadratic work.
            let mut seen = vec![false; rank];
            for &axis in list {
                let a = normalize_axis(op, axis, rank)?;
                if std::mem::replace(&mut seen[a], true) {
                    return Err(Error::argument(
                        op,
                        format!(
                            "axis list of {} entries names axis {a} twice (for a tensor of rank {rank})",
                            list.len()
                        ),
                    ));
                }
            }
        }
        let mut resolved = Vec::with_capacity(list.len());
        for &axis in list {
            let a = normalize_axis(op, axis, rank)?;
            if resolved.contains(&a) {
                return Err(Error::argument(
                    op,
                    format!("axis list {self} names axis {a} twice (for a tensor of rank {rank})"),
                ));
            }
            resolved.push(a);
        }
        Ok(Some(resolved))
    }
}

impl fmt::Display for Axes {
    /// `None`, a single axis (`1`), or a list (`[0, 2]`): the form used in op names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Axes::All => f.write_str("None"),
            Axes::List(list) => match list.as_slice() {
                [axis] => write!(f, "{axis}"),
                _ => write!(f, "{list:?}"),
            },
        }
    }
}

impl From<i64> for Axes {
    fn from(axis: i64) -> Self {
        Axes::List(vec![axis])
    }
}

impl From<Vec<i64>> for Axes {
    fn from(axes: Vec<i64>) -> Self {
        Axes::List(axes)
    }
}

impl From<&[i64]> for Axes {
    fn from(axes: &[i64]) -> Self {
        Axes::List(axes.to_vec())
    }
}

impl<const N: usize> From<[i64; N]> for Axes {
    fn from(axes: [i64; N]) -> Self {
        Axes::List(axes.to_vec())
    }
}

impl From<Option<i64>> for Axes {
    /// `None` is every axis.
    fn from(axis: Option<i64>) -> Self {
        axis.map_or(Axes::All, Axes::from)
    }
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// One step of a [`ReductionPlan`]: output element `o` of the stage folds the stage's input
/// elements `members[offsets[o]..offsets[o + 1]]`, in order. The first stage reads the input's
/// flat values (row-major), each later stage the previous stage's outputs.
///
/// The fields are private: stages are built only by [`plan_reduction`], so `offsets` is never
/// empty, never decreases and ends at `members.len()`, and [`ReductionStage::group`] may slice.
#[derive(Debug, Clone)]
pub struct ReductionStage {
    /// `offsets[o]..offsets[o + 1]` are the members of output element `o` (one more entry than
    /// there are output elements).
    offsets: Vec<usize>,
    /// Indices into the stage's input, grouped by output element.
    members: Vec<usize>,
    /// The stage folds a ragged axis: an empty group of `reduce_max` / `reduce_min` gives the
    /// finite extreme rather than an infinity (module doc).
    ragged_axis: bool,
}

impl ReductionStage {
    /// Indices into the stage's input, grouped by output element.
    pub fn members(&self) -> &[usize] {
        &self.members
    }

    /// True when the stage folds a ragged axis (an empty group of `reduce_max` / `reduce_min`
    /// gives the finite extreme rather than an infinity).
    pub fn ragged_axis(&self) -> bool {
        self.ragged_axis
    }

    /// Number of output elements.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when the stage has no output elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The members of output element `o`.
    pub fn group(&self, o: usize) -> &[usize] {
        &self.members[self.offsets[o]..self.offsets[o + 1]]
    }

    /// Every one of `n` elements in a group of its own (an empty axis list).
    fn identity(n: usize) -> Self {
        ReductionStage { offsets: (0..=n).collect(), members: (0..n).collect(), ragged_axis: false }
    }
}

/// How a reduction folds a tensor: one or more [`ReductionStage`]s applied in order (several
/// when a ragged tensor is reduced over several axes, one axis per stage), and the structure of
/// the result. Built by [`plan_reduction`].
#[derive(Debug, Clone)]
pub struct ReductionPlan {
    /// Number of flat values of the input the plan was made for.
    input_len: usize,
    /// At least one stage.
    stages: Vec<ReductionStage>,
    /// The result's row partitions (the input's own, shared, for the dims that are kept).
    pub partitions: Vec<RowPartition>,
    /// Shape of the result's flat values (the full shape when the result is dense).
    pub flat_shape: Vec<usize>,
}

impl ReductionPlan {
    /// The stages, in the order they apply (never empty).
    pub fn stages(&self) -> &[ReductionStage] {
        &self.stages
    }

    /// Number of output elements.
    pub fn len(&self) -> usize {
        self.stages.last().map_or(self.input_len, ReductionStage::len)
    }

    /// True when the result has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fails unless `len` is the number of flat values the plan was made for (`op` is named).
    pub fn check_input(&self, op: &str, len: usize) -> Result<()> {
        if len == self.input_len {
            return Ok(());
        }
        Err(Error::shapes(op, format!("input 0 has {len} flat values, the reduction plan expects {}", self.input_len)))
    }

    /// Folds `data` (the input's flat values) through every stage: each group starts from
    /// `init(stage)` and takes its members in order with `step`. One value per output element.
    pub fn fold<T: Copy>(
        &self,
        op: &str,
        data: &[T],
        init: impl Fn(&ReductionStage) -> T,
        step: impl Fn(T, T) -> T,
    ) -> Result<Vec<T>> {
        self.check_input(op, data.len())?;
        let mut current = Cow::Borrowed(data);
        for stage in &self.stages {
            let folded = (0..stage.len())
                .map(|o| stage.group(o).iter().fold(init(stage), |acc, &m| step(acc, current[m])))
                .collect();
            current = Cow::Owned(folded);
        }
        Ok(current.into_owned())
    }

    /// How many input values fold into each output element (the divisor of `reduce_mean`).
    pub fn counts(&self) -> Vec<usize> {
        let mut counts: Option<Vec<usize>> = None;
        for stage in &self.stages {
            let group_count = |o: usize| match &counts {
                None => stage.group(o).len(),
                Some(inner) => stage.group(o).iter().map(|&m| inner[m]).sum(),
            };
            counts = Some((0..stage.len()).map(group_count).collect());
        }
        counts.unwrap_or_else(|| vec![1; self.input_len])
    }

    /// The plan as one stage over the input: output element `o` gathers every input value that
    /// folds into it through all the stages, in order. Reductions that are not folds of one
    /// binary op (variance, log-sum-exp) read their groups from it; an empty group of an inner
    /// stage contributes nothing.
    pub fn flattened(&self) -> ReductionStage {
        let Some((first, rest)) = self.stages.split_first() else {
            return ReductionStage::identity(self.input_len);
        };
        let mut flat = first.clone();
        for stage in rest {
            let mut offsets = Vec::with_capacity(stage.offsets.len());
            let mut members = Vec::with_capacity(flat.members.len());
            offsets.push(0);
            for o in 0..stage.len() {
                for &m in stage.group(o) {
                    members.extend_from_slice(flat.group(m));
                }
                offsets.push(members.len());
            }
            flat = ReductionStage { offsets, members, ragged_axis: stage.ragged_axis };
        }
        flat
    }

    /// Wraps the folded values (shape `flat_shape`) into the result tensor.
    pub fn finish(&self, flat: DenseTensor) -> Result<RaggedTensor> {
        if flat.shape() != self.flat_shape.as_slice() {
            return Err(Error::shapes(
                "reduce",
                format!("folded values of shape {:?}, expected {:?}", flat.shape(), self.flat_shape),
            ));
        }
        RaggedTensor::new(flat, self.partitions.clone())
    }
}

/// Resolved axes from the innermost outwards: the order in which a ragged tensor reduces them
/// (TensorFlow resolves negative axes before sorting, so the order is by true position).
fn innermost_first(mut axes: Vec<usize>) -> Vec<usize> {
    axes.sort_unstable_by(|a, b| b.cmp(a));
    axes
}

/// Which input elements fold into which result element when `x` is reduced along `axes` — the
/// one definition of TensorFlow's reduction grouping (module doc). An axis outside
/// `-rank..rank`, or one named twice, is `invalid_argument`, naming `op`.
pub fn plan_reduction(op: &str, x: &RaggedTensor, axes: &Axes, keepdims: bool) -> Result<ReductionPlan> {
    let input_len = x.flat_values().len();
    let flat_shape = x.flat_values().shape();
    let Some(axes) = axes.resolve(op, x.rank())? else {
        // Every value into one group, folded as TensorFlow folds the dense flat values.
        let stage =
            ReductionStage { offsets: vec![0, input_len], members: (0..input_len).collect(), ragged_axis: false };
        let flat_shape = if keepdims { vec![1; x.rank()] } else { Vec::new() };
        return Ok(ReductionPlan { input_len, stages: vec![stage], partitions: Vec::new(), flat_shape });
    };
    if x.is_dense() {
        // TensorFlow's dense kernels fold every listed axis at once.
        let (stage, flat_shape) = plan_uniform_axes(op, flat_shape, &axes, keepdims)?;
        return Ok(ReductionPlan { input_len, stages: vec![stage], partitions: Vec::new(), flat_shape });
    }
    let mut partitions = x.partitions().to_vec();
    let mut flat_shape = flat_shape.to_vec();
    let mut stages = Vec::with_capacity(axes.len().max(1));
    for axis in innermost_first(axes) {
        let (stage, next_partitions, next_shape) = plan_axis(op, &partitions, &flat_shape, axis, keepdims)?;
        stages.push(stage);
        partitions = next_partitions;
        flat_shape = next_shape;
    }
    if stages.is_empty() {
        stages.push(ReductionStage::identity(input_len));
    }
    Ok(ReductionPlan { input_len, stages, partitions, flat_shape })
}

/// One stage folding resolved `axis` of a tensor with `partitions` and flat values of shape
/// `flat_shape`, and the structure of its result (partitions, flat shape).
fn plan_axis(
    op: &str,
    partitions: &[RowPartition],
    flat_shape: &[usize],
    axis: usize,
    keepdims: bool,
) -> Result<(ReductionStage, Vec<RowPartition>, Vec<usize>)> {
    let rr = partitions.len();
    if rr == 0 || axis > rr {
        // A uniform axis: index `axis - rr` of the flat values (any axis of a dense tensor).
        let (stage, flat_shape) = plan_uniform_axes(op, flat_shape, &[axis - rr], keepdims)?;
        return Ok((stage, partitions.to_vec(), flat_shape));
    }
    plan_ragged_axis(op, partitions, flat_shape, axis, keepdims)
}

/// Folds dimensions `axes` (distinct, in `0..shape.len()`) of dense values of shape `shape` in
/// one stage, and gives the result's shape. Within a group the listed axes run with the first
/// one varying fastest (TensorFlow's `reduce_join` order); groups are the kept dims, row-major.
///
/// The number of groups (the result's size) is checked before anything is built: the values may
/// be empty while the kept dims are huge (`[0, 2^62]` summed over axis 0).
fn plan_uniform_axes(
    op: &str,
    shape: &[usize],
    axes: &[usize],
    keepdims: bool,
) -> Result<(ReductionStage, Vec<usize>)> {
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    // Offsets of every combination of indices along `dims`, row-major (the last dim fastest).
    let offsets_along = |dims: &[usize]| {
        dims.iter().fold(vec![0usize], |acc, &d| {
            let (len, stride) = (shape[d], strides[d]);
            acc.iter().flat_map(|&base| (0..len).map(move |i| base + i * stride)).collect()
        })
    };
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let kept_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    DenseTensor::checked_len(op, &kept_shape)?;
    let first_listed_fastest: Vec<usize> = axes.iter().rev().copied().collect();
    // Without values every group is empty (and the reduced dims may be huge): nothing to list.
    let empty = shape.contains(&0);
    let within_group = if empty { Vec::new() } else { offsets_along(&first_listed_fastest) };
    let group_starts = if kept_shape.contains(&0) { Vec::new() } else { offsets_along(&kept) };
    let members: Vec<usize> =
        group_starts.iter().flat_map(|&start| within_group.iter().map(move |&k| start + k)).collect();
    let offsets = (0..=group_starts.len()).map(|g| g * within_group.len()).collect();
    let out_shape = if keepdims {
        shape.iter().enumerate().map(|(d, &n)| if axes.contains(&d) { 1 } else { n }).collect()
    } else {
        kept.iter().map(|&d| shape[d]).collect()
    };
    Ok((ReductionStage { offsets, members, ragged_axis: false }, out_shape))
}

/// Folds ragged axis `axis` (`0 <= axis <= ragged rank`, ragged rank >= 1) of a tensor with
/// `parts` and flat values of shape `flat_shape`; gives the stage and the result's partitions
/// and flat shape.
fn plan_ragged_axis(
    op: &str,
    parts: &[RowPartition],
    flat_shape: &[usize],
    axis: usize,
    keepdims: bool,
) -> Result<(ReductionStage, Vec<RowPartition>, Vec<usize>)> {
    // `segment[v]`: the result element that element `v` of the current dimension folds into.
    let (mut segment, mut nsegments): (Vec<usize>, usize) = if axis == 0 {
        // Across rows, by position within the row.
        let p = &parts[0];
        let splits = p.row_splits();
        let rowids = p.value_rowids();
        ((0..p.nvals()).map(|v| v - splits[rowids[v] as usize] as usize).collect(), p.max_row_length())
    } else {
        let p = &parts[axis - 1];
        (p.value_rowids().iter().map(|&r| r as usize).collect(), p.nrows())
    };
    let folded_rows = nsegments;
    // Ragged dims below the folded one: align the folded rows by position, each result row as
    // long as the longest row folded into it.
    let mut new_partitions = Vec::new();
    for q in &parts[axis.max(1)..] {
        let splits = q.row_splits();
        let row_len = |r: usize| (splits[r + 1] - splits[r]) as usize;
        let mut lengths = vec![0usize; nsegments];
        for (r, &o) in segment.iter().enumerate() {
            lengths[o] = lengths[o].max(row_len(r));
        }
        let mut out_splits = Vec::with_capacity(nsegments + 1);
        out_splits.push(0usize);
        for len in &lengths {
            out_splits.push(out_splits[out_splits.len() - 1] + len);
        }
        let mut next = Vec::with_capacity(q.nvals());
        for (r, &o) in segment.iter().enumerate() {
            next.extend((0..row_len(r)).map(|t| out_splits[o] + t));
        }
        nsegments = out_splits[nsegments];
        new_partitions.push(RowPartition::from_row_splits(out_splits.iter().map(|&s| s as i64).collect())?);
        segment = next;
    }
    // Group the flat values' rows (each `inner` elements) by segment, in input order.
    let inner_shape = &flat_shape[1..];
    let inner: usize = inner_shape.iter().product();
    // The result's size: the values may be empty while the inner dims are huge.
    let mut out_shape = vec![nsegments];
    out_shape.extend_from_slice(inner_shape);
    DenseTensor::checked_len(op, &out_shape)?;
    let mut counts = vec![0usize; nsegments];
    for &o in &segment {
        counts[o] += 1;
    }
    let mut offsets = Vec::with_capacity(nsegments * inner + 1);
    let mut start = 0usize;
    for &count in &counts {
        for _ in 0..inner {
            offsets.push(start);
            start += count;
        }
    }
    offsets.push(start);
    let mut cursor = offsets[..offsets.len() - 1].to_vec();
    let mut members = vec![0usize; start];
    for (r, &o) in segment.iter().enumerate() {
        for s in 0..inner {
            let c = &mut cursor[o * inner + s];
            members[*c] = r * inner + s;
            *c += 1;
        }
    }

    let mut partitions = parts[..axis.saturating_sub(1)].to_vec();
    if keepdims {
        if new_partitions.is_empty() {
            // The folded dim was the innermost ragged one: a size-1 dim in the flat values.
            out_shape.insert(if axis == 0 { 0 } else { 1 }, 1);
        } else if axis == 0 {
            partitions.push(RowPartition::from_uniform_row_length(folded_rows, 1)?);
        } else {
            partitions.push(RowPartition::from_uniform_row_length(1, folded_rows)?);
        }
    }
    partitions.extend(new_partitions);
    Ok((ReductionStage { offsets, members, ragged_axis: true }, partitions, out_shape))
}

/// The type of `x` reduced along `axes`, keeping its dtype (callers set the result dtype). An
/// axis outside `-rank..rank`, or one named twice, is `invalid_argument`, naming `op`.
pub fn reduced_type(op: &str, x: &TensorType, axes: &Axes, keepdims: bool) -> Result<TensorType> {
    let Some(axes) = axes.resolve(op, x.rank())? else {
        let dims = if keepdims { vec![Dim::Known(1); x.rank()] } else { Vec::new() };
        return TensorType::new(x.dtype(), 0, dims);
    };
    // One axis at a time, as the ragged plan goes (for a dense tensor the order is immaterial).
    innermost_first(axes).into_iter().try_fold(x.clone(), |ty, axis| reduced_type_axis(&ty, axis, keepdims))
}

/// The type of `x` reduced along resolved axis `a`.
fn reduced_type_axis(x: &TensorType, a: usize, keepdims: bool) -> Result<TensorType> {
    let rr = x.ragged_rank();
    let dims = x.dims();
    let (ragged_rank, new_dims): (usize, Vec<Dim>) = if rr == 0 || a > rr {
        let mut d = dims.to_vec();
        if keepdims {
            d[a] = Dim::Known(1);
        } else {
            d.remove(a);
        }
        (rr, d)
    } else if a == 0 {
        // Rows fold by position: as many result rows as the longest row.
        let rest = &dims[2..];
        match (keepdims, rr) {
            (false, _) => (rr - 1, [Dim::Unknown].iter().chain(rest).copied().collect()),
            (true, 1) => (0, [Dim::Known(1), Dim::Unknown].iter().chain(rest).copied().collect()),
            (true, _) => (rr, [Dim::Known(1), Dim::Ragged].iter().chain(rest).copied().collect()),
        }
    } else if keepdims && a == rr {
        (rr - 1, dims[..a].iter().chain(&[Dim::Known(1)]).chain(&dims[a + 1..]).copied().collect())
    } else if keepdims {
        (rr, dims.to_vec())
    } else {
        (rr - 1, dims[..a].iter().chain(&dims[a + 1..]).copied().collect())
    };
    TensorType::new(x.dtype(), ragged_rank, new_dims)
}

// ---------------------------------------------------------------------------------------------
// The op
// ---------------------------------------------------------------------------------------------

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

    fn from_kind_and_attrs(kind: ReduceKind, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "keepdims"])?;
        Ok(Reduce::with_axes(kind, Axes::from_attr(attrs, "axis")?, attrs.bool_opt("keepdims")?.unwrap_or(false)))
    }
}

impl Op for Reduce {
    fn name(&self) -> String {
        format!("{}{{axis={}, keepdims={}}}", self.kind.op_name(), self.axis, self.keepdims)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let name = self.kind.name();
        expect_arity(name, inputs, 1..=1)?;
        let out = self.kind.output_dtype(inputs[0].dtype())?;
        Ok(vec![reduced_type(name, &inputs[0], &self.axis, self.keepdims)?.with_dtype(out)])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let name = self.kind.name();
        let [x] = inputs else {
            return Err(Error::argument(name, format!("takes 1 input, got {}", inputs.len())));
        };
        self.kind.output_dtype(x.dtype())?;
        let values = x.flat_values();
        // Fast path: the rows of a ragged rank 1 tensor without inner dims are contiguous.
        if x.ragged_rank() == 1 && values.rank() == 1 && matches!(self.axis.single(), Some(1 | -1)) {
            let flat = fold_rows(self.kind, values, x.partitions()[0].row_splits(), self.keepdims)?;
            return one(RaggedTensor::dense(flat));
        }
        // Fast path: ragged rank 1 with uniform inner dims folded along axis 1: each row is a
        // contiguous block of `inner`-wide items, folded column by column in row order (the
        // plan's grouping, without building it).
        if x.ragged_rank() == 1 && values.rank() >= 2 && self.axis.resolve(name, x.rank())?.as_deref() == Some(&[1]) {
            let inner_shape = &values.shape()[1..];
            let splits = x.partitions()[0].row_splits();
            let mut shape = vec![splits.len() - 1];
            if self.keepdims {
                shape.push(1);
            }
            shape.extend_from_slice(inner_shape);
            DenseTensor::checked_len(name, &shape)?;
            let inner = inner_shape.iter().product();
            return one(RaggedTensor::dense(fold(self.kind, &Groups::Rows { splits, inner }, values, shape)?));
        }
        let plan = plan_reduction(name, x, &self.axis, self.keepdims)?;
        let flat = fold(self.kind, &Groups::Plan(&plan), values, plan.flat_shape.clone())?;
        one(plan.finish(flat)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::reduce::reduce_vjp(self, graph, inputs, outputs, output_grads)
    }
}

/// Folds each row `splits[r]..splits[r + 1]` of the 1-d `values` with `kind` (an empty row gives
/// the ragged-axis identity): the reduction of a ragged rank 1 tensor along axis 1, shared by
/// [`Reduce`] and the fused row kernels so both compute bit-identical results. The result has
/// shape `[nrows]`, or `[nrows, 1]` with `keepdims`. `splits` must be non-decreasing and within
/// `values` (a validated partition's, or a slice of one rebased to start at 0).
pub fn fold_rows(kind: ReduceKind, values: &DenseTensor, splits: &[i64], keepdims: bool) -> Result<DenseTensor> {
    let nrows = splits.len().saturating_sub(1);
    let shape = if keepdims { vec![nrows, 1] } else { vec![nrows] };
    fold(kind, &Groups::Rows { splits, inner: 1 }, values, shape)
}

/// The groups to fold: contiguous rows (a ragged axis), or a plan's stages.
enum Groups<'a> {
    /// Items `splits[r]..splits[r + 1]` of `inner` elements each: group `r * inner + s` folds
    /// element `s` of each item of row `r`, in order.
    Rows { splits: &'a [i64], inner: usize },
    /// The groups of `plan`, stage after stage.
    Plan(&'a ReductionPlan),
}

impl Groups<'_> {
    /// Folds each group of `data`, starting from `init(ragged_axis)` and adding members with
    /// `step`.
    fn fold<T: Copy>(
        &self,
        op: &str,
        data: &[T],
        init: impl Fn(bool) -> T,
        step: impl Fn(T, T) -> T,
    ) -> Result<Vec<T>> {
        match *self {
            Groups::Rows { splits, inner: 1 } => Ok(splits
                .windows(2)
                .map(|w| data[w[0] as usize..w[1] as usize].iter().fold(init(true), |acc, &v| step(acc, v)))
                .collect()),
            // Items without elements: nothing to fold (and no chunks to walk).
            Groups::Rows { inner: 0, .. } => Ok(Vec::new()),
            Groups::Rows { splits, inner } => {
                let mut out = ragtime_core::limits::try_vec(op, (splits.len() - 1) * inner)?;
                for w in splits.windows(2) {
                    let start = out.len();
                    out.resize(start + inner, init(true));
                    let acc = &mut out[start..];
                    for item in data[w[0] as usize * inner..w[1] as usize * inner].chunks_exact(inner) {
                        for (a, &v) in acc.iter_mut().zip(item) {
                            *a = step(*a, v);
                        }
                    }
                }
                Ok(out)
            }
            Groups::Plan(plan) => plan.fold(op, data, |stage| init(stage.ragged_axis()), step),
        }
    }

    /// The number of input values in each group.
    fn counts(&self) -> Vec<usize> {
        match *self {
            Groups::Rows { splits, inner } => {
                splits.windows(2).flat_map(|w| std::iter::repeat_n((w[1] - w[0]) as usize, inner)).collect()
            }
            Groups::Plan(plan) => plan.counts(),
        }
    }
}

/// The float types of the row-sum fast paths, with the one definition of their sums and means
/// that every path shares (the generic fold, `row_sums`, `fused::GatherReduce`): sums start at
/// zero and add items in order; a mean divides the sum in f64, as `fold_typed` does.
pub trait RowSum: Copy + std::ops::AddAssign + 'static {
    /// The sum of no values.
    const ZERO: Self;
    /// `sum / n`, computed in f64 and rounded back.
    fn mean(sum: Self, n: usize) -> Self;
}

impl RowSum for f32 {
    const ZERO: Self = 0.0;
    fn mean(sum: Self, n: usize) -> Self {
        (f64::from(sum) / n as f64) as f32
    }
}

impl RowSum for f64 {
    const ZERO: Self = 0.0;
    fn mean(sum: Self, n: usize) -> Self {
        sum / n as f64
    }
}

/// `acc += item`, element by element: the step of every float row sum.
#[inline]
pub fn add_item<T: RowSum>(acc: &mut [T], item: &[T]) {
    for (a, &v) in acc.iter_mut().zip(item) {
        *a += v;
    }
}

/// Sums (or averages) rows of `inner`-wide float items: [`Groups::Rows`] for `f32` / `f64` sums
/// and means, with the addition inlined so the columns vectorize. Bit-identical to the generic
/// fold (same start, same order, same adds).
fn row_sums<T: RowSum>(op: &str, splits: &[i64], inner: usize, data: &[T], mean: bool) -> Result<Vec<T>> {
    let mut out: Vec<T> = ragtime_core::limits::try_vec(op, (splits.len() - 1) * inner)?;
    for w in splits.windows(2) {
        let start = out.len();
        out.resize(start + inner, T::ZERO);
        let acc = &mut out[start..];
        for item in data[w[0] as usize * inner..w[1] as usize * inner].chunks_exact(inner) {
            add_item(acc, item);
        }
        if mean {
            let n = (w[1] - w[0]) as usize;
            for a in acc.iter_mut() {
                *a = T::mean(*a, n);
            }
        }
    }
    Ok(out)
}

/// Folds `values` group by group into a tensor of `shape`.
fn fold(kind: ReduceKind, groups: &Groups<'_>, values: &DenseTensor, shape: Vec<usize>) -> Result<DenseTensor> {
    dispatch_dtype!(values.dtype(),
        T => fold_typed::<T>(kind, groups, values, shape),
        string => Err(Error::dtype(kind.name(), "takes a numeric or bool tensor, got string")))
}

fn fold_typed<T: Kernels>(
    kind: ReduceKind,
    groups: &Groups<'_>,
    values: &DenseTensor,
    shape: Vec<usize>,
) -> Result<DenseTensor> {
    let data = values
        .as_slice::<T>()
        .ok_or_else(|| Error::dtype(kind.name(), format!("expected {} values, got {}", T::DTYPE, values.dtype())))?;
    if let (&Groups::Rows { splits, inner }, ReduceKind::Sum | ReduceKind::Mean) = (groups, kind) {
        if inner > 1 {
            let mean = kind == ReduceKind::Mean;
            if let Some(data) = values.as_slice::<f32>() {
                return DenseTensor::from_vec(shape, row_sums(kind.name(), splits, inner, data, mean)?);
            }
            if let Some(data) = values.as_slice::<f64>() {
                return DenseTensor::from_vec(shape, row_sums(kind.name(), splits, inner, data, mean)?);
            }
        }
    }
    let combine =
        T::binary(kind.combine()).ok_or_else(|| Error::dtype(kind.name(), format!("not defined on {}", T::DTYPE)))?;
    // Addition, multiplication, maximum, minimum and logical and / or never fault.
    let folded = groups.fold(
        kind.name(),
        data,
        |ragged_axis| kind.identity::<T>(ragged_axis),
        |acc, v| combine(acc, v).unwrap_or(acc),
    )?;
    match kind {
        ReduceKind::Mean => {
            // The sum over every reduced axis divided by the number of values folded into it.
            // Integers divide in their true-division float type (float32 for 8/16-bit, as TF).
            let means: Vec<f64> =
                folded.into_iter().zip(groups.counts()).map(|(sum, n)| sum.to_f64() / n as f64).collect();
            let out = T::DTYPE.true_division_type().unwrap_or(T::DTYPE);
            DenseTensor::from_vec(shape, means)?.cast(out)
        }
        _ => DenseTensor::from_vec(shape, folded),
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics: reductions that are not folds of one binary op
// ---------------------------------------------------------------------------------------------

/// What a [`Statistic`] computes over each group of a [`ReductionPlan`].
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

    fn op_name(self) -> &'static str {
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
/// the groups of [`plan_reduction`] (so the result has the structure of `reduce_sum` over the
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

impl Op for Statistic {
    fn name(&self) -> String {
        format!("{}{{axis={}, keepdims={}}}", self.kind.op_name(), self.axis, self.keepdims)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let name = self.kind.name();
        expect_arity(name, inputs, 1..=1)?;
        let out = self.kind.output_dtype(inputs[0].dtype())?;
        Ok(vec![reduced_type(name, &inputs[0], &self.axis, self.keepdims)?.with_dtype(out)])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let name = self.kind.name();
        let [x] = crate::util::fixed_inputs::<1>(name, inputs)?;
        let out_dtype = self.kind.output_dtype(x.dtype())?;
        let plan = plan_reduction(name, x, &self.axis, self.keepdims)?;
        let groups = plan.flattened();
        let values = x.flat_values();
        let flat: Vec<f64> = dispatch_dtype!(values.dtype(),
            T => statistic_typed::<T>(self.kind, &groups, values)?,
            string => return Err(Error::dtype(name, "takes a numeric tensor, got string")));
        one(plan.finish(DenseTensor::from_vec(plan.flat_shape.clone(), flat)?.cast(out_dtype)?)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: false, cost: Cost::Expensive }
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::reduce::statistic_vjp(self, graph, inputs, outputs, output_grads)
    }
}

/// Each group's statistic, as float64 (exact for the integer Euclidean norm, which is a
/// truncated square root of a value of the input's dtype).
fn statistic_typed<T: Kernels>(kind: StatisticKind, groups: &ReductionStage, values: &DenseTensor) -> Result<Vec<f64>> {
    let name = kind.name();
    let data = values
        .as_slice::<T>()
        .ok_or_else(|| Error::dtype(name, format!("expected {} values, got {}", T::DTYPE, values.dtype())))?;
    let mut out = ragtime_core::limits::try_vec::<f64>(name, groups.len())?;
    if T::DTYPE.is_float() {
        for o in 0..groups.len() {
            let group = || groups.group(o).iter().map(|&m| data[m].to_f64());
            out.push(match kind {
                StatisticKind::Variance | StatisticKind::Std => {
                    let n = groups.group(o).len() as f64;
                    let mean = group().sum::<f64>() / n;
                    let variance = group().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
                    if kind == StatisticKind::Std {
                        variance.sqrt()
                    } else {
                        variance
                    }
                }
                StatisticKind::LogSumExp => {
                    // NaN wins over everything (`maximum` propagates it).
                    let max = group().fold(f64::NEG_INFINITY, |m, v| if v.is_nan() || v > m { v } else { m });
                    let shift = if max.is_finite() { max } else { 0.0 };
                    group().map(|v| (v - shift).exp()).sum::<f64>().ln() + shift
                }
                StatisticKind::EuclideanNorm => group().map(|v| v * v).sum::<f64>().sqrt(),
            });
        }
        return Ok(out);
    }
    // Integers: TensorFlow's arithmetic in the input's dtype, wrapping.
    let add = T::binary(ScalarOp::Add).ok_or_else(|| Error::dtype(name, format!("not defined on {}", T::DTYPE)))?;
    let mul =
        T::binary(ScalarOp::Multiply).ok_or_else(|| Error::dtype(name, format!("not defined on {}", T::DTYPE)))?;
    let zero = T::from_i64(0);
    // Wrapping integer addition and multiplication never fail.
    let sum = |members: &[usize], f: &dyn Fn(T) -> T| {
        members.iter().fold(zero, |acc, &m| add(acc, f(data[m])).unwrap_or(acc))
    };
    let square = |v: T| mul(v, v).unwrap_or(v);
    let single = T::DTYPE.true_division_type() == Some(DType::F32);
    for o in 0..groups.len() {
        let members = groups.group(o);
        out.push(match kind {
            StatisticKind::EuclideanNorm => {
                let s = sum(members, &square).to_f64();
                if s > 0.0 {
                    s.sqrt().trunc()
                } else {
                    0.0
                }
            }
            _ => {
                let (sum_sq, total, n) = (sum(members, &square).to_f64(), sum(members, &|v| v).to_f64(), members.len());
                // TensorFlow divides in the true-division type: float32 for 8/16-bit integers.
                let variance = if single {
                    let mean = total as f32 / n as f32;
                    f64::from(clip_negative(sum_sq as f32 / n as f32 - mean * mean))
                } else {
                    let mean = total / n as f64;
                    clip_negative(sum_sq / n as f64 - mean * mean)
                };
                if kind == StatisticKind::Std {
                    variance.sqrt()
                } else {
                    variance
                }
            }
        });
    }
    Ok(out)
}

/// `max(v, 0)` keeping NaN (TensorFlow's clip of a variance that cancelled below zero).
fn clip_negative<F: PartialOrd + Default>(v: F) -> F {
    if v < F::default() {
        F::default()
    } else {
        v
    }
}

/// The reduction called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    if let Some(kind) = StatisticKind::from_name(name) {
        return Some(crate::util::shared(Statistic::from_kind_and_attrs(kind, attrs)));
    }
    let kind = ReduceKind::from_name(name)?;
    Some(crate::util::shared(Reduce::from_kind_and_attrs(kind, attrs)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use ragtime_core::{ragged, ErrorKind, Literal};
    use std::collections::BTreeMap;

    fn run(kind: ReduceKind, x: &RaggedTensor, axis: Option<i64>, keepdims: bool) -> Result<RaggedTensor> {
        run_axes(kind, x, axis, keepdims)
    }

    fn lit(r: Result<RaggedTensor>) -> Literal {
        r.unwrap().to_literal()
    }

    fn floats() -> RaggedTensor {
        ragged![[1.5, 2.0, -3.0], [], [4.0], [0.5, 0.25]].unwrap()
    }

    fn ints() -> RaggedTensor {
        ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap()
    }

    fn rank3() -> RaggedTensor {
        ragged![[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]].unwrap()
    }

    fn f32s(r: &RaggedTensor) -> Vec<f32> {
        r.flat_slice::<f32>().unwrap().to_vec()
    }

    fn i32s(r: &RaggedTensor) -> Vec<i32> {
        r.flat_slice::<i32>().unwrap().to_vec()
    }

    fn f64s(r: &RaggedTensor) -> Vec<f64> {
        r.flat_slice::<f64>().unwrap().to_vec()
    }

    fn close(got: &[f64], want: &[f64]) -> bool {
        got.len() == want.len()
            && got.iter().zip(want).all(|(g, w)| (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-6 + 1e-5 * w.abs())
    }

    #[test]
    fn float_reductions_match_tensorflow() {
        // reductions.json, float32 cases: (kind, axis None, axis 0, axis 1 = axis -1).
        let cases: [(ReduceKind, f64, Vec<f64>, Vec<f64>); 5] = [
            (ReduceKind::Sum, 5.25, vec![6.0, 2.25, -3.0], vec![0.5, 0.0, 4.0, 0.75]),
            (ReduceKind::Mean, 0.875, vec![2.0, 1.125, -3.0], vec![0.1666666716337204, f64::NAN, 4.0, 0.375]),
            (ReduceKind::Max, 4.0, vec![4.0, 2.0, -3.0], vec![2.0, -3.4028234663852886e+38, 4.0, 0.5]),
            (ReduceKind::Min, -3.0, vec![0.5, 0.25, -3.0], vec![-3.0, 3.4028234663852886e+38, 4.0, 0.25]),
            (ReduceKind::Prod, -4.5, vec![3.0, 0.5, -3.0], vec![-9.0, 1.0, 4.0, 0.125]),
        ];
        let widen = |r: &RaggedTensor| f32s(r).iter().map(|&v| f64::from(v)).collect::<Vec<_>>();
        for (kind, all, axis0, axis1) in cases {
            let y = run(kind, &floats(), None, false).unwrap();
            assert!(y.flat_values().shape().is_empty() && close(&widen(&y), &[all]), "{kind:?} all: {:?}", widen(&y));
            let y = run(kind, &floats(), Some(0), false).unwrap();
            assert!(close(&widen(&y), &axis0), "{kind:?} axis 0: {:?}", widen(&y));
            for axis in [1, -1] {
                let y = run(kind, &floats(), Some(axis), false).unwrap();
                assert!(y.is_dense() && close(&widen(&y), &axis1), "{kind:?} axis {axis}: {:?}", widen(&y));
            }
        }
    }

    #[test]
    fn integer_reductions_match_tensorflow() {
        let cases: [(ReduceKind, i32, Vec<i32>, Vec<i32>); 4] = [
            (ReduceKind::Sum, 31, vec![14, 10, 6, 1], vec![9, 0, 16, 6, 0]),
            (ReduceKind::Max, 9, vec![6, 9, 4, 1], vec![4, i32::MIN, 9, 6, i32::MIN]),
            (ReduceKind::Min, 1, vec![3, 1, 2, 1], vec![1, i32::MAX, 2, 6, i32::MAX]),
            (ReduceKind::Prod, 6480, vec![90, 9, 8, 1], vec![12, 1, 90, 6, 1]),
        ];
        for (kind, all, axis0, axis1) in cases {
            assert_eq!(i32s(&run(kind, &ints(), None, false).unwrap()), vec![all], "{kind:?}");
            assert_eq!(i32s(&run(kind, &ints(), Some(0), false).unwrap()), axis0, "{kind:?}");
            assert_eq!(i32s(&run(kind, &ints(), Some(-1), false).unwrap()), axis1, "{kind:?}");
        }
    }

    #[test]
    fn integer_mean_is_float64() {
        let y = run(ReduceKind::Mean, &ints(), Some(1), false).unwrap();
        assert_eq!(y.dtype(), DType::F64);
        assert!(close(&f64s(&y), &[2.25, f64::NAN, 5.333333333333333, 6.0, f64::NAN]), "{:?}", f64s(&y));
        assert_eq!(f64s(&run(ReduceKind::Mean, &ints(), None, false).unwrap()), vec![3.875]);
        assert!(close(
            &f64s(&run(ReduceKind::Mean, &ints(), Some(0), false).unwrap()),
            &[4.666666666666667, 5.0, 3.0, 1.0]
        ));
    }

    #[test]
    fn rank3_axes() {
        assert_eq!(lit(run(ReduceKind::Sum, &rank3(), Some(0), false)), lit(ragged![[21, 11, 3], [14], [6]]));
        assert_eq!(lit(run(ReduceKind::Sum, &rank3(), Some(1), false)), lit(ragged![[5, 2, 3], [11], [7], [18, 9]]));
        assert_eq!(lit(run(ReduceKind::Sum, &rank3(), Some(2), false)), lit(ragged![[6, 4], [5, 0, 6], [7], [17, 10]]));
        assert_eq!(
            lit(run(ReduceKind::Sum, &rank3(), Some(-1), false)),
            lit(ragged![[6, 4], [5, 0, 6], [7], [17, 10]])
        );
        assert_eq!(i32s(&run(ReduceKind::Sum, &rank3(), None, false).unwrap()), vec![55]);
    }

    #[test]
    fn bool_reductions() {
        let b = ragged![[true, false], [], [true, true]].unwrap();
        assert_eq!(
            lit(run(ReduceKind::All, &b, Some(1), false)),
            Literal::List(vec![false.into(), true.into(), true.into()])
        );
        assert_eq!(
            lit(run(ReduceKind::Any, &b, Some(1), false)),
            Literal::List(vec![true.into(), false.into(), true.into()])
        );
        assert_eq!(run(ReduceKind::Sum, &b, Some(1), false).unwrap_err().kind(), ErrorKind::TypeMismatch);
        assert_eq!(run(ReduceKind::All, &ints(), Some(1), false).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }

    #[test]
    fn keepdims() {
        let y = run(ReduceKind::Sum, &floats(), Some(1), true).unwrap();
        assert_eq!(y.flat_values().shape(), &[4, 1]);
        assert_eq!(f32s(&y), vec![0.5, 0.0, 4.0, 0.75]);
        let y = run(ReduceKind::Sum, &floats(), None, true).unwrap();
        assert_eq!(y.flat_values().shape(), &[1, 1]);
        let y = run(ReduceKind::Sum, &ints(), Some(0), true).unwrap();
        assert_eq!(y.flat_values().shape(), &[1, 4]);
        // Ragged rank 2: the kept dim is a uniform partition of length 1.
        let y = run(ReduceKind::Sum, &rank3(), Some(1), true).unwrap();
        assert_eq!(y.ragged_rank(), 2);
        assert_eq!(y.partitions()[0].uniform_row_length(), Some(1));
        assert_eq!(y.to_literal(), lit(ragged![[[5, 2, 3]], [[11]], [[7]], [[18, 9]]]));
        let y = run(ReduceKind::Sum, &rank3(), Some(0), true).unwrap();
        assert_eq!(y.to_literal(), lit(ragged![[[21, 11, 3], [14], [6]]]));
        let y = run(ReduceKind::Sum, &rank3(), Some(2), true).unwrap();
        assert_eq!(y.ragged_rank(), 1);
        assert_eq!(y.flat_values().shape(), &[8, 1]);
    }

    #[test]
    fn uniform_inner_axes() {
        let x = RaggedTensor::from_literal_typed(
            &ragged![[[1, 2], [3, 4], [5, 6]], [], [[7, 8]]].unwrap().to_literal(),
            None,
            Some(1),
            Some(&[2]),
        )
        .unwrap();
        let y = run(ReduceKind::Sum, &x, Some(2), false).unwrap();
        assert!(y.partitions()[0].ptr_eq(&x.partitions()[0]), "kept partitions are shared");
        assert_eq!(y.to_literal(), lit(ragged![[3, 7, 11], [], [15]]));
        let y = run(ReduceKind::Sum, &x, Some(1), false).unwrap();
        assert_eq!(y.flat_values().shape(), &[3, 2]);
        assert_eq!(i32s(&y), vec![9, 12, 0, 0, 7, 8]);
        let y = run(ReduceKind::Max, &x, Some(0), false).unwrap();
        assert_eq!(y.to_literal(), lit(ragged![[7, 8], [3, 4], [5, 6]]));
        let y = run(ReduceKind::Max, &x, Some(-1), true).unwrap();
        assert_eq!(y.flat_values().shape(), &[4, 1]);
    }

    #[test]
    fn dense_inputs_use_uniform_rules() {
        let d = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 0], Vec::<f32>::new()).unwrap());
        let y = run(ReduceKind::Max, &d, Some(1), false).unwrap();
        assert_eq!(f32s(&y), vec![f32::NEG_INFINITY; 2], "a uniform axis starts from -inf");
        let m = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 3], vec![1i64, 2, 3, 4, 5, 6]).unwrap());
        let y = run(ReduceKind::Sum, &m, Some(0), false).unwrap();
        assert_eq!(y.flat_slice::<i64>(), Some(&[5, 7, 9][..]));
        let y = run(ReduceKind::Prod, &m, Some(-1), true).unwrap();
        assert_eq!(y.flat_values().shape(), &[2, 1]);
        assert_eq!(y.flat_slice::<i64>(), Some(&[6, 120][..]));
        let s = RaggedTensor::dense(DenseTensor::scalar(4.0f64));
        assert_eq!(f64s(&run(ReduceKind::Mean, &s, None, false).unwrap()), vec![4.0]);
        assert_eq!(run(ReduceKind::Sum, &s, Some(0), false).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn bad_axes_are_invalid_arguments() {
        for axis in [2, -3] {
            let e = run(ReduceKind::Sum, &ints(), Some(axis), false).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.to_string().contains("reduce_sum"), "{e}");
        }
    }

    #[test]
    fn empty_inputs() {
        let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0]).unwrap();
        assert_eq!(i32s(&run(ReduceKind::Sum, &none, Some(1), false).unwrap()), Vec::<i32>::new());
        assert_eq!(i32s(&run(ReduceKind::Sum, &none, Some(0), false).unwrap()), Vec::<i32>::new());
        assert_eq!(i32s(&run(ReduceKind::Max, &none, None, false).unwrap()), vec![i32::MIN]);
        let rows = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f64>::new()), vec![0, 0, 0]).unwrap();
        assert_eq!(f64s(&run(ReduceKind::Max, &rows, Some(1), false).unwrap()), vec![f64::MIN; 2]);
        assert_eq!(f64s(&run(ReduceKind::Max, &rows, None, false).unwrap()), vec![f64::NEG_INFINITY]);
        assert!(f64s(&run(ReduceKind::Mean, &rows, None, false).unwrap())[0].is_nan());
    }

    #[test]
    fn fast_path_agrees_with_the_plan() {
        for kind in [ReduceKind::Sum, ReduceKind::Max, ReduceKind::Mean, ReduceKind::Prod] {
            let x = floats();
            let plan = plan_reduction("test", &x, &Axes::from(1), false).unwrap();
            let via_plan = fold(kind, &Groups::Plan(&plan), x.flat_values(), plan.flat_shape.clone()).unwrap();
            let fast = Reduce::new(kind, Some(1), false).perform(&[x]).unwrap().remove(0);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&f32s(&fast)), bits(via_plan.as_slice::<f32>().unwrap()), "{kind:?}");
        }
    }

    #[test]
    fn inner_dims_fast_path_agrees_with_the_plan() {
        // Ragged rank 1 over [*, 3] items (rows of 2, 0, 3 and 1 items), and over [*, 0] items.
        let splits = vec![0i64, 2, 2, 5, 6];
        let data: Vec<f32> = (0..18).map(|k| (k as f32 * 0.37 - 2.0) / 3.0).collect();
        let wide = RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![6, 3], data).unwrap(), splits.clone());
        let ints: Vec<i32> = (0..12).map(|k| k * 7 - 30).collect();
        let deep = RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![6, 2, 1], ints).unwrap(), splits.clone());
        let empty =
            RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![6, 0], Vec::<f64>::new()).unwrap(), splits);
        for x in [wide.unwrap(), deep.unwrap(), empty.unwrap()] {
            for kind in [ReduceKind::Sum, ReduceKind::Max, ReduceKind::Mean, ReduceKind::Min, ReduceKind::Prod] {
                for keepdims in [false, true] {
                    let plan = plan_reduction("test", &x, &Axes::from(1), keepdims).unwrap();
                    let via_plan = fold(kind, &Groups::Plan(&plan), x.flat_values(), plan.flat_shape.clone()).unwrap();
                    let via_plan = plan.finish(via_plan).unwrap();
                    let fast =
                        Reduce::new(kind, Some(1), keepdims).perform(std::slice::from_ref(&x)).unwrap().remove(0);
                    assert_eq!(fast.flat_values().shape(), via_plan.flat_values().shape(), "{kind:?}");
                    assert_eq!(fast.ragged_rank(), via_plan.ragged_rank());
                    let bits = |r: &RaggedTensor| match r.flat_values().dtype() {
                        DType::F32 => r.flat_slice::<f32>().unwrap().iter().map(|f| u64::from(f.to_bits())).collect(),
                        DType::F64 => r.flat_slice::<f64>().unwrap().iter().map(|f| f.to_bits()).collect(),
                        _ => r.flat_slice::<i32>().unwrap().iter().map(|&v| v as u64).collect::<Vec<u64>>(),
                    };
                    assert_eq!(bits(&fast), bits(&via_plan), "{kind:?} keepdims={keepdims}");
                }
            }
        }
    }

    #[test]
    fn plan_groups_by_position_for_axis_0() {
        let plan = plan_reduction("test", &rank3(), &Axes::from(0), false).unwrap();
        // Result [[21, 11, 3], [14], [6]]: element 0 folds 1, 5, 7, 8 (flat indices 0, 4, 6, 7).
        assert_eq!(plan.stages().len(), 1);
        assert_eq!(plan.stages()[0].group(0), &[0, 4, 6, 7]);
        assert_eq!(plan.stages()[0].group(2), &[2]);
        assert_eq!(plan.partitions.len(), 1);
        assert_eq!(plan.partitions[0].row_splits(), &[0, 3, 4, 5]);
    }

    #[test]
    fn names_and_lookup() {
        assert_eq!(Reduce::new(ReduceKind::Sum, Some(1), false).name(), "ReduceSum{axis=1, keepdims=false}");
        assert_eq!(Reduce::new(ReduceKind::Any, None, true).name(), "ReduceAny{axis=None, keepdims=true}");
        let mut m = BTreeMap::new();
        m.insert("axis".to_string(), ragtime_graph::Attr::Int(-1));
        m.insert("keepdims".to_string(), ragtime_graph::Attr::Bool(true));
        let op = lookup("reduce_max", &Attrs::new("reduce_max", m)).unwrap().unwrap();
        assert_eq!(op.name(), "ReduceMax{axis=-1, keepdims=true}");
        let mut n = BTreeMap::new();
        n.insert("axis".to_string(), ragtime_graph::Attr::Null);
        let op = lookup("reduce_mean", &Attrs::new("reduce_mean", n)).unwrap().unwrap();
        assert_eq!(op.name(), "ReduceMean{axis=None, keepdims=false}");
        let mut bad = BTreeMap::new();
        bad.insert("axes".to_string(), ragtime_graph::Attr::Int(1));
        assert!(lookup("reduce_sum", &Attrs::new("reduce_sum", bad)).unwrap().is_err());
        assert!(lookup("add", &Attrs::default()).is_none());
    }

    #[test]
    fn types() {
        let x = TensorType::ragged(DType::I32, 2).with_inner(&[Some(3)]);
        let t = |axis: Option<i64>, keep| reduced_type("r", &x, &axis.into(), keep).unwrap();
        assert_eq!(t(None, false), TensorType::scalar(DType::I32));
        assert_eq!(t(Some(0), false).to_string(), "int32[?, *, 3]");
        assert_eq!(t(Some(0), true).to_string(), "int32[1, *, *, 3]");
        assert_eq!(t(Some(1), false).to_string(), "int32[?, *, 3]");
        assert_eq!(t(Some(1), true).to_string(), "int32[?, *, *, 3]");
        assert_eq!(t(Some(2), false).to_string(), "int32[?, *, 3]");
        assert_eq!(t(Some(2), true).to_string(), "int32[?, *, 1, 3]");
        assert_eq!(t(Some(3), false).to_string(), "int32[?, *, *]");
        assert_eq!(t(Some(-1), true).to_string(), "int32[?, *, *, 1]");
        assert_eq!(reduced_type("r", &x, &Axes::from(4), false).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let mean = Reduce::new(ReduceKind::Mean, Some(1), false).infer(&[x]).unwrap();
        assert_eq!(mean[0].dtype(), DType::F64);
    }

    // --- several axes ----------------------------------------------------------------------------

    fn run_axes(kind: ReduceKind, x: &RaggedTensor, axes: impl Into<Axes>, keepdims: bool) -> Result<RaggedTensor> {
        let op = Reduce::with_axes(kind, axes, keepdims);
        let inferred = op.output_types(&[TensorType::of(x)])?;
        let out = op.perform(std::slice::from_ref(x))?.remove(0);
        assert!(
            inferred[0].accepts(&TensorType::of(&out)),
            "{}: infer said {}, perform gave {}",
            op.name(),
            inferred[0],
            TensorType::of(&out)
        );
        Ok(out)
    }

    fn dense<T: Element>(shape: Vec<usize>, data: Vec<T>) -> RaggedTensor {
        RaggedTensor::dense(DenseTensor::from_vec(shape, data).unwrap())
    }

    #[test]
    fn axes_print_like_tensorflow_arguments() {
        assert_eq!(
            Reduce::with_axes(ReduceKind::Sum, vec![0, 2], false).name(),
            "ReduceSum{axis=[0, 2], keepdims=false}"
        );
        assert_eq!(Reduce::with_axes(ReduceKind::Max, [-1, 0], true).name(), "ReduceMax{axis=[-1, 0], keepdims=true}");
        assert_eq!(Reduce::with_axes(ReduceKind::Sum, vec![1], false).name(), "ReduceSum{axis=1, keepdims=false}");
        assert_eq!(Reduce::with_axes(ReduceKind::Sum, Vec::new(), false).name(), "ReduceSum{axis=[], keepdims=false}");
        assert_eq!(Reduce::with_axes(ReduceKind::Sum, Axes::All, false).name(), "ReduceSum{axis=None, keepdims=false}");
        // A list of one axis is the same op as that axis (op identity is the name).
        assert_eq!(Reduce::with_axes(ReduceKind::Sum, vec![1], false), Reduce::new(ReduceKind::Sum, Some(1), false));
        assert_eq!(Axes::from(None), Axes::All);
        assert_eq!(Axes::from(&[2, 0][..]), Axes::List(vec![2, 0]));
        assert_eq!(Axes::from(vec![0, 2]).single(), None);
        assert_eq!(Axes::from(-1).single(), Some(-1));
    }

    #[test]
    fn lookup_accepts_axis_lists() {
        use ragtime_graph::Attr;
        let mut m = BTreeMap::new();
        m.insert("axis".to_string(), Attr::List(vec![Attr::Int(0), Attr::Int(-1)]));
        let op = lookup("reduce_sum", &Attrs::new("reduce_sum", m)).unwrap().unwrap();
        assert_eq!(op.name(), "ReduceSum{axis=[0, -1], keepdims=false}");
        let y = op.perform(&[rank3()]).unwrap().remove(0);
        assert_eq!(y.to_literal(), lit(ragged![35, 14, 6]));
        let mut one_item = BTreeMap::new();
        one_item.insert("axis".to_string(), Attr::List(vec![Attr::Int(1)]));
        let op = lookup("reduce_min", &Attrs::new("reduce_min", one_item)).unwrap().unwrap();
        assert_eq!(op.name(), "ReduceMin{axis=1, keepdims=false}");
        let mut bad = BTreeMap::new();
        bad.insert("axis".to_string(), Attr::List(vec![Attr::Int(0), Attr::Str("1".into())]));
        let e = lookup("reduce_sum", &Attrs::new("reduce_sum", bad)).unwrap().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn several_ragged_axes_reduce_innermost_first() {
        // reductions.json gives axis 1 = [[5, 2, 3], [11], [7], [18, 9]] and axis 2 =
        // [[6, 4], [5, 0, 6], [7], [17, 10]]; TensorFlow then folds the next axis of those.
        assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![1, 2], false)), lit(ragged![10, 11, 7, 27]));
        assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![2, 1], false)), lit(ragged![10, 11, 7, 27]));
        assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![0, 1], false)), lit(ragged![41, 11, 3]));
        assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![0, 2], false)), lit(ragged![35, 14, 6]));
        // Negative axes are resolved before sorting: -1 is axis 2, folded before axis 0.
        assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![-1, 0], false)), lit(ragged![35, 14, 6]));
        let all = run_axes(ReduceKind::Sum, &rank3(), vec![0, 1, 2], false).unwrap();
        assert!(all.is_dense() && all.flat_values().shape().is_empty(), "a scalar, got {all}");
        assert_eq!(i32s(&all), vec![55]);
        let max = run_axes(ReduceKind::Max, &rank3(), vec![0, 2], false).unwrap();
        assert_eq!(max.to_literal(), lit(ragged![9, 10, 6]));
    }

    #[test]
    fn mean_over_several_axes_divides_by_the_total_count() {
        // Row sums 10, 11, 7, 27 over 4, 2, 1, 3 values; a mean of the per-row means would give
        // 3.0 and NaN for the first two rows.
        let y = run_axes(ReduceKind::Mean, &rank3(), vec![1, 2], false).unwrap();
        assert_eq!(y.dtype(), DType::F64);
        assert_eq!(f64s(&y), vec![2.5, 5.5, 7.0, 9.0]);
        assert_eq!(f64s(&run_axes(ReduceKind::Mean, &rank3(), vec![0, 1, 2], false).unwrap()), vec![5.5]);
        // Position-wise over rows then columns: [[5, 2, 3], [11], [7], [18, 9]] has 7 values.
        let y = run_axes(ReduceKind::Mean, &rank3(), vec![0, 1], false).unwrap();
        assert!(close(&f64s(&y), &[41.0 / 7.0, 5.5, 3.0]), "{:?}", f64s(&y));
        let f = run_axes(ReduceKind::Mean, &floats(), vec![0, 1], false).unwrap();
        assert_eq!(f32s(&f), vec![0.875], "the mean of every value (as with axis=None)");
    }

    #[test]
    fn empty_inner_groups_fold_their_identity() {
        let x = RaggedTensor::from_literal_typed(
            &Literal::List(vec![
                Literal::List(vec![Literal::List(vec![1.0f32.into()]), Literal::List(vec![])]),
                Literal::List(vec![Literal::List(vec![])]),
                Literal::List(vec![]),
            ]),
            Some(DType::F32),
            Some(2),
            None,
        )
        .unwrap();
        // Ragged folds start from the finite lowest value, which then folds outwards.
        assert_eq!(f32s(&run_axes(ReduceKind::Max, &x, vec![1, 2], false).unwrap()), vec![1.0, f32::MIN, f32::MIN]);
        assert_eq!(f32s(&run_axes(ReduceKind::Min, &x, vec![1, 2], false).unwrap()), vec![1.0, f32::MAX, f32::MAX]);
        let means = f32s(&run_axes(ReduceKind::Mean, &x, vec![1, 2], false).unwrap());
        assert!(means[0] == 1.0 && means[1].is_nan() && means[2].is_nan(), "{means:?}");
        // Two empty rows: the rows fold to f32::MIN, then the dense axis 0 keeps it.
        let rows = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0, 0, 0]).unwrap();
        assert_eq!(f32s(&run_axes(ReduceKind::Max, &rows, vec![0, 1], false).unwrap()), vec![f32::MIN]);
        // No rows at all: axis 1 gives an empty dense vector, whose dense fold is -inf.
        let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0]).unwrap();
        assert_eq!(f32s(&run_axes(ReduceKind::Max, &none, vec![0, 1], false).unwrap()), vec![f32::NEG_INFINITY]);
        assert_eq!(f32s(&run_axes(ReduceKind::Sum, &none, vec![0, 1], false).unwrap()), vec![0.0]);
    }

    #[test]
    fn keepdims_with_several_axes() {
        let y = run_axes(ReduceKind::Sum, &rank3(), vec![1, 2], true).unwrap();
        assert!(y.is_dense(), "{y}");
        assert_eq!(y.flat_values().shape(), &[4, 1, 1]);
        assert_eq!(i32s(&y), vec![10, 11, 7, 27]);
        let y = run_axes(ReduceKind::Sum, &ints(), vec![0, 1], true).unwrap();
        assert_eq!(y.flat_values().shape(), &[1, 1]);
        assert_eq!(i32s(&y), vec![31]);
        // Axis 0 kept as a uniform partition of one row, axis 2 as an inner dim of size 1.
        let y = run_axes(ReduceKind::Sum, &rank3(), vec![0, 2], true).unwrap();
        assert_eq!(y.rank(), 3);
        assert_eq!(y.to_literal(), lit(ragged![[[35], [14], [6]]]));
    }

    #[test]
    fn dense_inputs_fold_listed_axes_at_once() {
        let m = dense(vec![2, 3], vec![1i64, 2, 3, 4, 5, 6]);
        for axes in [vec![0, 1], vec![1, 0], vec![-1, -2]] {
            let y = run_axes(ReduceKind::Sum, &m, axes.clone(), false).unwrap();
            assert_eq!(y.flat_slice::<i64>(), Some(&[21][..]), "axes {axes:?}");
        }
        let y = run_axes(ReduceKind::Sum, &m, vec![-1, 0], true).unwrap();
        assert_eq!(y.flat_values().shape(), &[1, 1]);
        assert_eq!(f64s(&run_axes(ReduceKind::Mean, &m, vec![0, 1], false).unwrap()), vec![3.5]);
        let cube = dense(vec![2, 2, 2], (0..8).collect::<Vec<i32>>());
        let y = run_axes(ReduceKind::Sum, &cube, vec![2, 0], false).unwrap();
        assert_eq!(i32s(&y), vec![10, 18]);
        let y = run_axes(ReduceKind::Sum, &cube, vec![0, 2], true).unwrap();
        assert_eq!(y.flat_values().shape(), &[1, 2, 1]);
        let empty = dense(vec![2, 0, 3], Vec::<f64>::new());
        let y = run_axes(ReduceKind::Max, &empty, vec![0, 1], false).unwrap();
        assert_eq!(f64s(&y), vec![f64::NEG_INFINITY; 3], "a dense fold starts from -inf");
    }

    #[test]
    fn an_empty_axis_list_folds_nothing() {
        let y = run_axes(ReduceKind::Sum, &ints(), Vec::new(), false).unwrap();
        assert!(y.equals(&ints()), "{y}");
        let y = run_axes(ReduceKind::Max, &rank3(), Vec::new(), true).unwrap();
        assert!(y.equals(&rank3()), "{y}");
        let y = run_axes(ReduceKind::Mean, &ints(), Vec::new(), false).unwrap();
        assert!(y.equals(&ints().cast(DType::F64).unwrap()), "{y}");
        let m = dense(vec![2, 2], vec![1.5f32, 2.0, 3.0, 4.0]);
        assert!(run_axes(ReduceKind::Prod, &m, Vec::new(), false).unwrap().equals(&m));
    }

    #[test]
    fn repeated_or_out_of_range_axes_are_invalid_arguments() {
        for axes in [vec![1, 1], vec![1, -1], vec![0, 2], vec![-3, 0]] {
            let op = Reduce::with_axes(ReduceKind::Sum, axes.clone(), false);
            let e = op.infer(&[TensorType::of(&ints())]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "infer, axes {axes:?}: {e}");
            assert!(e.to_string().contains("reduce_sum"), "{e}");
            let e = op.perform(&[ints()]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "perform, axes {axes:?}: {e}");
        }
        let e = Reduce::with_axes(ReduceKind::Sum, vec![2, -1], false).perform(&[rank3()]).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
    }

    #[test]
    fn types_with_several_axes() {
        let x = TensorType::ragged(DType::I32, 2).with_inner(&[Some(3)]);
        let t = |axes: Vec<i64>, keep| reduced_type("r", &x, &Axes::from(axes), keep).unwrap().to_string();
        assert_eq!(t(vec![1, 2], false), "int32[?, 3]");
        assert_eq!(t(vec![1, 2], true), "int32[?, 1, 1, 3]");
        assert_eq!(t(vec![0, 3], false), "int32[?, *]");
        assert_eq!(t(vec![-1, -2], false), "int32[?, *]");
        assert_eq!(t(vec![0, 1, 2, 3], false), "int32[]");
        assert_eq!(t(vec![], true), "int32[?, *, *, 3]");
        let d = TensorType::dense(DType::F32, &[Some(2), None, Some(4)]);
        let t = |axes: Vec<i64>, keep| reduced_type("r", &d, &Axes::from(axes), keep).unwrap().to_string();
        assert_eq!(t(vec![2, 0], false), "float32[?]");
        assert_eq!(t(vec![0, 2], true), "float32[1, ?, 1]");
        let e = reduced_type("r", &x, &Axes::from(vec![3, -1]), false).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }

    /// SplitMix64: a small deterministic generator for the property tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// A random tensor of `dtype` with `ragged_rank` ragged dims (short and empty rows) and
    /// `inner` uniform dims.
    fn random_ragged(rng: &mut Rng, dtype: DType, ragged_rank: usize, inner: &[usize]) -> RaggedTensor {
        let mut n = rng.below(4);
        let mut nested = Vec::new();
        for _ in 0..ragged_rank {
            let mut splits = vec![0i64];
            for _ in 0..n {
                splits.push(splits[splits.len() - 1] + rng.below(4) as i64);
            }
            n = splits[splits.len() - 1] as usize;
            nested.push(splits);
        }
        let shape: Vec<usize> = std::iter::once(n).chain(inner.iter().copied()).collect();
        let len = shape.iter().product();
        let values = match dtype {
            DType::I32 => DenseTensor::from_vec(shape, (0..len).map(|_| rng.below(19) as i32 - 9).collect()),
            DType::F64 => {
                DenseTensor::from_vec(shape, (0..len).map(|_| (rng.below(33) as f64 - 16.0) * 0.37).collect::<Vec<_>>())
            }
            DType::Bool => DenseTensor::from_vec(shape, (0..len).map(|_| rng.below(3) > 0).collect()),
            DType::String => {
                let words = ["", "a", "bc", "d"];
                let strings: Vec<&str> = (0..len).map(|_| words[rng.below(words.len())]).collect();
                ragtime_core::StringTensor::from_strings(&strings, shape).map(DenseTensor::String)
            }
            other => panic!("no generator for {other}"),
        }
        .unwrap();
        RaggedTensor::from_nested_row_splits(values, &nested).unwrap()
    }

    /// Reduces `x` along each of `axes` in turn (already resolved and sorted innermost first).
    fn one_axis_at_a_time(op: impl Fn(i64) -> OpRef, x: &RaggedTensor, axes: &[usize]) -> RaggedTensor {
        axes.iter().fold(x.clone(), |y, &a| op(a as i64).perform(&[y]).unwrap().remove(0))
    }

    #[test]
    fn several_axes_equal_one_axis_at_a_time() {
        let mut rng = Rng(0x5EED);
        for case in 0..600 {
            let ragged_rank = 1 + rng.below(3);
            let inner: Vec<usize> = (0..rng.below(3)).map(|_| rng.below(3)).collect();
            let rank = 1 + ragged_rank + inner.len();
            // Two or more distinct axes, in random order, some written negative.
            let mut axes: Vec<usize> = (0..rank).collect();
            for i in (1..axes.len()).rev() {
                axes.swap(i, rng.below(i + 1));
            }
            axes.truncate(2 + rng.below(rank - 1));
            let listed: Vec<i64> =
                axes.iter().map(|&a| if rng.below(2) == 0 { a as i64 } else { a as i64 - rank as i64 }).collect();
            let keepdims = rng.below(2) == 0;
            let mut order = axes.clone();
            order.sort_unstable_by(|a, b| b.cmp(a));

            let kind =
                [ReduceKind::Sum, ReduceKind::Prod, ReduceKind::Max, ReduceKind::Min, ReduceKind::Mean][rng.below(5)];
            let dtype = if rng.below(2) == 0 { DType::I32 } else { DType::F64 };
            let (kind, dtype) = match rng.below(6) {
                0 => ([ReduceKind::All, ReduceKind::Any][rng.below(2)], DType::Bool),
                _ => (kind, dtype),
            };
            let x = random_ragged(&mut rng, dtype, ragged_rank, &inner);
            let what = format!("case {case}: {kind:?} over {listed:?} keepdims={keepdims} of {x}");
            let got = run_axes(kind, &x, listed.clone(), keepdims).unwrap_or_else(|e| panic!("{what}: {e}"));
            let want = if kind == ReduceKind::Mean {
                // TensorFlow's reduce_mean: the sum over the axes divided by the count of values.
                let sum = |t: &RaggedTensor| {
                    one_axis_at_a_time(|a| Arc::new(Reduce::new(ReduceKind::Sum, Some(a), keepdims)), t, &order)
                };
                let total = sum(&x).cast(DType::F64).unwrap();
                let ones = x
                    .with_flat_values(
                        DenseTensor::full(x.flat_values().shape().to_vec(), &DenseTensor::scalar(1.0f64)).unwrap(),
                    )
                    .unwrap();
                let count = sum(&ones);
                let quotient: Vec<f64> = f64s(&total).iter().zip(f64s(&count)).map(|(s, n)| s / n).collect();
                total
                    .with_flat_values(DenseTensor::from_vec(total.flat_values().shape().to_vec(), quotient).unwrap())
                    .unwrap()
            } else {
                one_axis_at_a_time(|a| Arc::new(Reduce::new(kind, Some(a), keepdims)), &x, &order)
            };
            assert!(got.equals(&want), "{what}: expected {want}, got {got}");

            let strings = random_ragged(&mut rng, DType::String, ragged_rank, &inner);
            let join = crate::strings::ReduceJoin::with_axes(listed.clone(), "/").with_keepdims(keepdims);
            let got = join.perform(std::slice::from_ref(&strings)).unwrap().remove(0);
            let inferred = join.infer(&[TensorType::of(&strings)]).unwrap();
            assert!(inferred[0].accepts(&TensorType::of(&got)), "{}: infer said {}", join.name(), inferred[0]);
            let want = one_axis_at_a_time(
                |a| Arc::new(crate::strings::ReduceJoin::new(Some(a), "/").with_keepdims(keepdims)),
                &strings,
                &order,
            );
            assert!(got.equals(&want), "case {case}: join over {listed:?} of {strings}: expected {want}, got {got}");
        }
    }
}
