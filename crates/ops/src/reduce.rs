//! Reductions (`reduce_sum`, `reduce_mean`, `reduce_max`, `reduce_min`, `reduce_prod`,
//! `reduce_all`, `reduce_any`) over any axis of a ragged or dense tensor, with TensorFlow's
//! semantics, and the [`ReductionPlan`] that says which elements fold into which result element,
//! shared with the other reductions (string `reduce_join`).
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

use std::any::Any;
use std::sync::Arc;

use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, Error, RaggedTensor, Result, RowPartition, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Op, OpRef};

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
            ReduceKind::Mean if dtype.is_integer() => DType::F64,
            _ => dtype,
        })
    }

    /// The elementwise op that folds two values.
    fn combine(self) -> ScalarOp {
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
    fn identity<T: Element>(self, ragged_axis: bool) -> T {
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
fn finite_extreme<T: Element>(highest: bool) -> T {
    let sign = if highest { 1.0 } else { -1.0 };
    match T::DTYPE {
        DType::F32 => T::from_f64(sign * f64::from(f32::MAX)),
        DType::F64 => T::from_f64(sign * f64::MAX),
        _ if highest => T::highest(),
        _ => T::lowest(),
    }
}

/// Output flat element `o` (row-major in the result's flat values) folds the input flat elements
/// `members[offsets[o]..offsets[o + 1]]`, in order.
#[derive(Debug, Clone)]
pub struct ReductionPlan {
    /// `offsets[o]..offsets[o + 1]` are the members of output element `o` (one more entry than
    /// there are output elements).
    pub offsets: Vec<usize>,
    /// Row-major indices into the input's flat values, grouped by output element.
    pub members: Vec<usize>,
    /// The result's row partitions (the input's own, shared, for the dims that are kept).
    pub partitions: Vec<RowPartition>,
    /// Shape of the result's flat values (the full shape when the result is dense).
    pub flat_shape: Vec<usize>,
}

impl ReductionPlan {
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

    /// Number of output elements.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when the result has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The members of output element `o`.
    pub fn group(&self, o: usize) -> &[usize] {
        &self.members[self.offsets[o]..self.offsets[o + 1]]
    }
}

/// Which input elements fold into which result element when `x` is reduced along `axis`
/// (`None`: every axis) — the one definition of TensorFlow's reduction grouping (module doc).
/// An axis outside `-rank..rank` is `invalid_argument`, naming `op`.
pub fn plan_reduction(op: &str, x: &RaggedTensor, axis: Option<i64>, keepdims: bool) -> Result<ReductionPlan> {
    let flat_shape = x.flat_values().shape();
    let Some(axis) = axis else {
        let n = x.flat_values().len();
        return Ok(ReductionPlan {
            offsets: vec![0, n],
            members: (0..n).collect(),
            partitions: Vec::new(),
            flat_shape: if keepdims { vec![1; x.rank()] } else { Vec::new() },
        });
    };
    let axis = normalize_axis(op, axis, x.rank())?;
    let rr = x.ragged_rank();
    if rr == 0 || axis > rr {
        // A uniform axis: index `axis - rr` of the flat values (any axis of a dense tensor).
        return Ok(plan_uniform_axis(flat_shape, axis - rr, keepdims, x.partitions().to_vec()));
    }
    plan_ragged_axis(x, axis, keepdims)
}

/// Folds dimension `j` of flat values of shape `shape`, keeping `partitions`.
fn plan_uniform_axis(shape: &[usize], j: usize, keepdims: bool, partitions: Vec<RowPartition>) -> ReductionPlan {
    let outer: usize = shape[..j].iter().product();
    let len = shape[j];
    let inner: usize = shape[j + 1..].iter().product();
    let mut members = Vec::with_capacity(outer * len * inner);
    let mut offsets = Vec::with_capacity(outer * inner + 1);
    offsets.push(0);
    for p in 0..outer {
        for s in 0..inner {
            members.extend((0..len).map(|k| (p * len + k) * inner + s));
            offsets.push(members.len());
        }
    }
    let mut flat_shape = shape.to_vec();
    if keepdims {
        flat_shape[j] = 1;
    } else {
        flat_shape.remove(j);
    }
    ReductionPlan { offsets, members, partitions, flat_shape }
}

/// Folds ragged axis `axis` (`0 <= axis <= ragged_rank`, ragged rank >= 1).
fn plan_ragged_axis(x: &RaggedTensor, axis: usize, keepdims: bool) -> Result<ReductionPlan> {
    let parts = x.partitions();
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
    let flat_shape = x.flat_values().shape();
    let inner_shape = &flat_shape[1..];
    let inner: usize = inner_shape.iter().product();
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
    let mut out_shape = vec![nsegments];
    out_shape.extend_from_slice(inner_shape);
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
    Ok(ReductionPlan { offsets, members, partitions, flat_shape: out_shape })
}

/// The type of `x` reduced along `axis` (`None`: every axis), keeping its dtype (callers set
/// the result dtype). An axis outside `-rank..rank` is `invalid_argument`, naming `op`.
pub fn reduced_type(op: &str, x: &TensorType, axis: Option<i64>, keepdims: bool) -> Result<TensorType> {
    let rank = x.rank();
    let Some(axis) = axis else {
        let dims = if keepdims { vec![Dim::Known(1); rank] } else { Vec::new() };
        return TensorType::new(x.dtype, 0, dims);
    };
    let a = normalize_axis(op, axis, rank)?;
    let rr = x.ragged_rank;
    let dims = &x.dims;
    let (ragged_rank, new_dims): (usize, Vec<Dim>) = if rr == 0 || a > rr {
        let mut d = dims.clone();
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
        (rr, dims.clone())
    } else {
        (rr - 1, dims[..a].iter().chain(&dims[a + 1..]).copied().collect())
    };
    TensorType::new(x.dtype, ragged_rank, new_dims)
}

/// A reduction op: `kind` along `axis` (`None`: all axes), optionally keeping the reduced dims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reduce {
    /// What is computed.
    pub kind: ReduceKind,
    /// The reduced axis (negative counts from the end), or `None` for all of them.
    pub axis: Option<i64>,
    /// Keep a size-1 dimension where the axis was.
    pub keepdims: bool,
}

impl Reduce {
    /// `kind` along `axis` (`None`: all axes).
    pub fn new(kind: ReduceKind, axis: Option<i64>, keepdims: bool) -> Self {
        Reduce { kind, axis, keepdims }
    }

    /// From a graph file's node: the kind named by `attrs.op()`, attributes `axis` (int or
    /// null) and `keepdims` (default false).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        let kind = ReduceKind::from_name(attrs.op())
            .ok_or_else(|| Error::argument(attrs.op(), format!("`{}` is not a reduction", attrs.op())))?;
        Self::from_kind_and_attrs(kind, attrs)
    }

    fn from_kind_and_attrs(kind: ReduceKind, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "keepdims"])?;
        Ok(Reduce::new(kind, attrs.int_opt("axis")?, attrs.bool_opt("keepdims")?.unwrap_or(false)))
    }

    /// True when the reduced axis of `x` is ragged (axis 0 of a ragged tensor included).
    fn reduces_ragged_axis(&self, x: &RaggedTensor) -> bool {
        let rank = x.rank() as i64;
        match self.axis {
            Some(a) => {
                let a = if a < 0 { a + rank } else { a };
                x.ragged_rank() > 0 && a >= 0 && a as usize <= x.ragged_rank()
            }
            None => false,
        }
    }
}

impl Op for Reduce {
    fn name(&self) -> String {
        let axis = self.axis.map_or_else(|| "None".to_string(), |a| a.to_string());
        format!("{}{{axis={axis}, keepdims={}}}", self.kind.op_name(), self.keepdims)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let name = self.kind.name();
        expect_arity(name, inputs, 1..=1)?;
        let out = self.kind.output_dtype(inputs[0].dtype)?;
        Ok(vec![reduced_type(name, &inputs[0], self.axis, self.keepdims)?.with_dtype(out)])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let name = self.kind.name();
        let [x] = inputs else {
            return Err(Error::argument(name, format!("takes 1 input, got {}", inputs.len())));
        };
        self.kind.output_dtype(x.dtype())?;
        let ragged_axis = self.reduces_ragged_axis(x);
        let values = x.flat_values();
        // Fast path: the rows of a ragged rank 1 tensor without inner dims are contiguous.
        if x.ragged_rank() == 1 && values.rank() == 1 && self.axis.is_some_and(|a| a == 1 || a == -1) {
            let splits = x.partitions()[0].row_splits();
            let nrows = splits.len() - 1;
            let shape = if self.keepdims { vec![nrows, 1] } else { vec![nrows] };
            let flat = fold(self.kind, &Groups::Rows(splits), values, ragged_axis, shape)?;
            return one(RaggedTensor::dense(flat));
        }
        let plan = plan_reduction(name, x, self.axis, self.keepdims)?;
        let flat = fold(self.kind, &Groups::Plan(&plan), values, ragged_axis, plan.flat_shape.clone())?;
        one(plan.finish(flat)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The groups to fold: contiguous row ranges, or a plan's member lists.
enum Groups<'a> {
    /// Group `g` is elements `splits[g]..splits[g + 1]`.
    Rows(&'a [i64]),
    /// Group `g` is `plan.group(g)`.
    Plan(&'a ReductionPlan),
}

impl Groups<'_> {
    /// Folds each group of `data` from `init` with `step`, and returns each result with the
    /// group's size.
    fn fold<T: Copy, A: Copy>(&self, data: &[T], init: A, step: impl Fn(A, T) -> A) -> Vec<(A, usize)> {
        match self {
            Groups::Rows(splits) => splits
                .windows(2)
                .map(|w| {
                    let rows = &data[w[0] as usize..w[1] as usize];
                    (rows.iter().fold(init, |acc, &v| step(acc, v)), rows.len())
                })
                .collect(),
            Groups::Plan(plan) => (0..plan.len())
                .map(|o| {
                    let group = plan.group(o);
                    (group.iter().fold(init, |acc, &m| step(acc, data[m])), group.len())
                })
                .collect(),
        }
    }
}

/// Folds `values` group by group into a tensor of `shape`.
fn fold(
    kind: ReduceKind,
    groups: &Groups<'_>,
    values: &DenseTensor,
    ragged_axis: bool,
    shape: Vec<usize>,
) -> Result<DenseTensor> {
    dispatch_dtype!(values.dtype(),
        T => fold_typed::<T>(kind, groups, values, ragged_axis, shape),
        string => Err(Error::dtype(kind.name(), "takes a numeric or bool tensor, got string")))
}

fn fold_typed<T: Kernels>(
    kind: ReduceKind,
    groups: &Groups<'_>,
    values: &DenseTensor,
    ragged_axis: bool,
    shape: Vec<usize>,
) -> Result<DenseTensor> {
    let data = values
        .as_slice::<T>()
        .ok_or_else(|| Error::dtype(kind.name(), format!("expected {} values, got {}", T::DTYPE, values.dtype())))?;
    let combine =
        T::binary(kind.combine()).ok_or_else(|| Error::dtype(kind.name(), format!("not defined on {}", T::DTYPE)))?;
    // Addition, multiplication, maximum, minimum and logical and / or never fault.
    let folded = groups.fold(data, kind.identity::<T>(ragged_axis), |acc, v| combine(acc, v).unwrap_or(acc));
    match kind {
        ReduceKind::Mean => {
            let means = folded.into_iter().map(|(sum, n)| sum.to_f64() / n as f64);
            if T::DTYPE.is_float() {
                DenseTensor::from_vec(shape, means.map(T::from_f64).collect::<Vec<T>>())
            } else {
                DenseTensor::from_vec(shape, means.collect::<Vec<f64>>())
            }
        }
        _ => DenseTensor::from_vec(shape, folded.into_iter().map(|(v, _)| v).collect::<Vec<T>>()),
    }
}

/// The reduction called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    let kind = ReduceKind::from_name(name)?;
    Some(Reduce::from_kind_and_attrs(kind, attrs).map(|op| Arc::new(op) as OpRef))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtime_core::{ragged, ErrorKind, Literal};
    use std::collections::BTreeMap;

    fn run(kind: ReduceKind, x: &RaggedTensor, axis: Option<i64>, keepdims: bool) -> Result<RaggedTensor> {
        let op = Reduce::new(kind, axis, keepdims);
        let inferred = op.infer(&[TensorType::of(x)])?;
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
            let plan = plan_reduction("test", &x, Some(1), false).unwrap();
            let via_plan = fold(kind, &Groups::Plan(&plan), x.flat_values(), true, plan.flat_shape.clone()).unwrap();
            let fast = Reduce::new(kind, Some(1), false).perform(&[x]).unwrap().remove(0);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&f32s(&fast)), bits(via_plan.as_slice::<f32>().unwrap()), "{kind:?}");
        }
    }

    #[test]
    fn plan_groups_by_position_for_axis_0() {
        let plan = plan_reduction("test", &rank3(), Some(0), false).unwrap();
        // Result [[21, 11, 3], [14], [6]]: element 0 folds 1, 5, 7, 8 (flat indices 0, 4, 6, 7).
        assert_eq!(plan.group(0), &[0, 4, 6, 7]);
        assert_eq!(plan.group(2), &[2]);
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
        let t = |axis, keep| reduced_type("r", &x, axis, keep).unwrap();
        assert_eq!(t(None, false), TensorType::scalar(DType::I32));
        assert_eq!(t(Some(0), false).to_string(), "int32[?, *, 3]");
        assert_eq!(t(Some(0), true).to_string(), "int32[1, *, *, 3]");
        assert_eq!(t(Some(1), false).to_string(), "int32[?, *, 3]");
        assert_eq!(t(Some(1), true).to_string(), "int32[?, *, *, 3]");
        assert_eq!(t(Some(2), false).to_string(), "int32[?, *, 3]");
        assert_eq!(t(Some(2), true).to_string(), "int32[?, *, 1, 3]");
        assert_eq!(t(Some(3), false).to_string(), "int32[?, *, *]");
        assert_eq!(t(Some(-1), true).to_string(), "int32[?, *, *, 1]");
        assert_eq!(reduced_type("r", &x, Some(4), false).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let mean = Reduce::new(ReduceKind::Mean, Some(1), false).infer(&[x]).unwrap();
        assert_eq!(mean[0].dtype, DType::F64);
    }
}
