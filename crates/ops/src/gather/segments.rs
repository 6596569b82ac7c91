//! The segment reductions: [`SegmentReduce`] (sorted segment ids) and
//! [`UnsortedSegmentReduce`], with their per-dtype combining kernels.

use std::any::Any;

use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, Error, ExecContext, RaggedTensor, Result, RowPartition,
    TensorType,
};
use ragtime_graph::{expect_arity, Cost, Graph, Op, OpProperties, VarId};

use crate::gather::defs::{SegmentReduce, SegmentReduction, UnsortedSegmentReduce};
use crate::gather::take::{align_prefix, check_prefix_dims, position_of, Aligned, INDEX_DTYPES};
use crate::util::{expect_dense_rank, expect_dtype, one};

/// Checks the data input of a segment reduction: numeric, rank >= 1.
fn check_segment_data(op: &str, data: &TensorType) -> Result<()> {
    if !data.dtype().is_numeric() {
        return Err(Error::dtype(op, format!("input 0 (data) must be numeric, got {}", data.dtype())));
    }
    if data.rank() == 0 {
        return Err(Error::shapes(op, "input 0 (data) must have rank >= 1, got a scalar"));
    }
    Ok(())
}

impl Op for SegmentReduce {
    fn name(&self) -> String {
        self.reduction.op_name().into()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.reduction.tf_name();
        if self.reduction == SegmentReduction::SqrtN {
            return Err(Error::argument(op, "TensorFlow has no sorted segment_sqrt_n: use unsorted_segment_sqrt_n"));
        }
        expect_arity(op, inputs, 2..=2)?;
        let (data, ids) = (&inputs[0], &inputs[1]);
        check_segment_data(op, data)?;
        expect_dtype(op, 1, ids, &INDEX_DTYPES, "int32 or int64 (segment_ids)")?;
        expect_dense_rank(op, 1, ids, 1)?;
        check_prefix_dims(op, data, ids, 1, "input 1 (segment_ids)")?;
        Ok(vec![data.clone().with_dim(0, Dim::Unknown)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.reduction.tf_name();
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let (data, ids) = (&inputs[0], &inputs[1]);
        let ids = ids.flat_values().to_i64_vec(op, "input 1 (segment_ids)")?;
        if ids.len() != data.nrows() {
            return Err(Error::shapes(
                op,
                format!("input 1 (segment_ids) has {} ids for the {} rows of input 0 (data)", ids.len(), data.nrows()),
            ));
        }
        let mut segments = Vec::with_capacity(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            if id < 0 {
                return Err(Error::argument(op, format!("segment_ids[{i}] = {id} is negative")));
            }
            if i > 0 && id < ids[i - 1] {
                return Err(Error::argument(
                    op,
                    format!(
                        "segment_ids must be sorted, but segment_ids[{i}] = {id} follows segment_ids[{}] = {}",
                        i - 1,
                        ids[i - 1]
                    ),
                ));
            }
            segments.push(Some(id as usize));
        }
        let nsegments = ids.last().map_or(0, |&id| id as usize + 1);
        let (partitions, values, _) =
            aggregate(ctx, op, data.partitions(), data.flat_values(), &segments, nsegments, self.reduction, false)?;
        one(RaggedTensor::new(values, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        crate::grad::reduce::sorted_segment_vjp(self, graph, inputs, outputs, output_grads)
    }
}

impl Op for UnsortedSegmentReduce {
    fn name(&self) -> String {
        format!("Unsorted{}{{num_segments={}}}", self.reduction.op_name(), self.num_segments)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.reduction.unsorted_name();
        expect_arity(op, inputs, 2..=2)?;
        let (data, ids) = (&inputs[0], &inputs[1]);
        check_segment_data(op, data)?;
        let dtype = self.output_dtype(data.dtype())?;
        expect_dtype(op, 1, ids, &INDEX_DTYPES, "int32 or int64 (segment_ids)")?;
        let k = ids.rank();
        if k == 0 || k > data.rank() {
            return Err(Error::shapes(
                op,
                format!(
                    "the shape of input 1 (segment_ids, {ids}) must be a prefix of the shape of input 0 (data, {data})"
                ),
            ));
        }
        check_prefix_dims(op, data, ids, k, "input 1 (segment_ids)")?;
        let mut dims = vec![Dim::Known(self.num_segments)];
        dims.extend_from_slice(&data.dims()[k..]);
        let ragged_rank = data.ragged_rank().saturating_sub(k - 1);
        Ok(vec![TensorType::new(dtype, ragged_rank, dims)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.reduction.unsorted_name();
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let ids = &inputs[1];
        let Aligned { items, prefix, .. } = align_prefix(ctx, op, &inputs[0], ids, "input 1 (segment_ids)")?;
        let n = self.num_segments;
        let segments = prefix
            .to_i64_vec(op, "input 1 (segment_ids)")?
            .into_iter()
            .enumerate()
            .map(|(pos, id)| match usize::try_from(id) {
                Err(_) => Ok(None),
                Ok(s) if s < n => Ok(Some(s)),
                Ok(_) => Err(Error::out_of_range_at(
                    op,
                    id,
                    0,
                    n,
                    format!("segment_ids{} of input 1, with num_segments = {n}", position_of(ids, pos)),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let (partitions, values, counts) =
            aggregate(ctx, op, items.partitions(), items.flat_values(), &segments, n, self.reduction, true)?;
        let values = match self.reduction {
            SegmentReduction::Mean | SegmentReduction::SqrtN => {
                divide_by_counts(ctx, op, values, &counts, self.reduction, ids.ragged_rank() > 0)?
            }
            _ => values,
        };
        one(RaggedTensor::new(values, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: true, cost: Cost::Cheap }
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        crate::grad::reduce::unsorted_segment_vjp(self, graph, inputs, outputs, output_grads)
    }
}

/// Divides each item of the segment sums `values` (shape `[n, inner...]`) by its count
/// (`Mean`) or the count's square root (`SqrtN`), in the true-division float type. A zero
/// count gives NaN when the segment ids were ragged (TensorFlow's ragged path divides 0 by 0),
/// else 0 (its dense kernels divide by `max(count, 1)`).
fn divide_by_counts(
    ctx: &ExecContext,
    op: &str,
    values: DenseTensor,
    counts: &[usize],
    reduction: SegmentReduction,
    ragged_ids: bool,
) -> Result<DenseTensor> {
    let dtype = values.dtype().true_division_type().ok_or_else(|| Error::dtype(op, "takes numeric data"))?;
    let shape = values.shape().to_vec();
    let row = values.row_size();
    let sums = values.cast(DType::F64)?;
    let sums = sums.as_slice::<f64>().ok_or_else(|| Error::dtype(op, "the sums are not float64"))?;
    let mut out = ctx.try_vec::<f64>(op, sums.len())?;
    for (i, &sum) in sums.iter().enumerate() {
        let count = counts[i / row.max(1)] as f64;
        out.push(match (count == 0.0, ragged_ids) {
            (true, true) => f64::NAN,
            (true, false) => 0.0,
            _ if reduction == SegmentReduction::SqrtN => sum / count.sqrt(),
            _ => sum / count,
        });
    }
    DenseTensor::from_vec(shape, out)?.cast(dtype)
}

/// A vector of `n` copies of `value`, or a `resource_exhausted` error (instead of an abort or a
/// machine-filling allocation) when `n` exceeds the call's limits or cannot be
/// allocated: segment ids choose the output size, so a huge id must not take the process down.
fn filled<T: Clone>(ctx: &ExecContext, op: &str, n: usize, value: T) -> Result<Vec<T>> {
    ctx.checked_len(op, &[n])?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::exhausted(op, format!("the output needs {n} elements, more than fit in memory")))?;
    v.resize(n, value);
    Ok(v)
}

/// Combines the rows at one level (rows of `partitions[0]`, or of `values` when there is no
/// partition left) into `nsegments` segments; `segments[i]` is row i's segment (`None`: dropped).
/// A ragged level's output row is as long as the longest row of its segment, and its items are the
/// segments of the next level, so the recursion combines items position by position.
/// Also gives how many rows of the innermost level each output row combined. `unsorted`: an
/// empty segment holds the reduction's identity (see [`UnsortedSegmentReduce`]), not 0.
// The call's context plus the recursion's own state; bundling them would only rename them.
#[allow(clippy::too_many_arguments)]
fn aggregate(
    ctx: &ExecContext,
    op: &str,
    partitions: &[RowPartition],
    values: &DenseTensor,
    segments: &[Option<usize>],
    nsegments: usize,
    reduction: SegmentReduction,
    unsorted: bool,
) -> Result<(Vec<RowPartition>, DenseTensor, Vec<usize>)> {
    let Some((rows, inner)) = partitions.split_first() else {
        let (combined, counts) = dispatch_dtype!(values.dtype(),
            T => combine_rows::<T>(ctx, op, values, segments, nsegments, reduction, unsorted)?,
            string => return Err(Error::dtype(op, "input 0 (data) must be numeric, got string")));
        return Ok((Vec::new(), combined, counts));
    };
    let lengths = rows.row_lengths();
    let mut out_lengths = filled(ctx, op, nsegments, 0i64)?;
    for (row, segment) in segments.iter().enumerate() {
        if let Some(s) = *segment {
            out_lengths[s] = out_lengths[s].max(lengths[row]);
        }
    }
    let out_rows = RowPartition::from_row_lengths(&out_lengths)?;
    let out_splits = out_rows.row_splits();
    let mut item_segments = vec![None; rows.nvals()];
    for (row, segment) in segments.iter().enumerate() {
        if let Some(s) = *segment {
            for (position, item) in rows.row_range(row).enumerate() {
                item_segments[item] = Some(out_splits[s] as usize + position);
            }
        }
    }
    let (mut out_partitions, out_values, counts) =
        aggregate(ctx, op, inner, values, &item_segments, out_rows.nvals(), reduction, unsorted)?;
    out_partitions.insert(0, out_rows);
    Ok((out_partitions, out_values, counts))
}

/// Element arithmetic of the segment reductions. Implemented for every non-string element type so
/// that `dispatch_dtype!` can instantiate the kernel; `bool` data is refused before it gets here.
trait SegmentElement: Element {
    /// `self + other`, wrapping for integers (as TensorFlow's kernels do).
    fn plus(self, other: Self) -> Self;
    /// `self * other`, wrapping for integers.
    fn times(self, other: Self) -> Self;
    /// `self / count` (integers truncate toward zero).
    fn divided_by(self, count: usize) -> Self;
}

macro_rules! segment_element_int {
    ($($t:ty),*) => {$(
        impl SegmentElement for $t {
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn times(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            fn divided_by(self, count: usize) -> Self {
                (self as i128 / count as i128) as $t
            }
        }
    )*};
}
segment_element_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! segment_element_float {
    ($($t:ty),*) => {$(
        impl SegmentElement for $t {
            fn plus(self, other: Self) -> Self {
                self + other
            }
            fn times(self, other: Self) -> Self {
                self * other
            }
            fn divided_by(self, count: usize) -> Self {
                self / count as $t
            }
        }
    )*};
}
segment_element_float!(f32, f64);

impl SegmentElement for bool {
    fn plus(self, other: Self) -> Self {
        self | other
    }
    fn times(self, other: Self) -> Self {
        self & other
    }
    fn divided_by(self, _count: usize) -> Self {
        self
    }
}

/// True for NaN (the one value not equal to itself).
fn is_nan<T: PartialOrd>(v: T) -> bool {
    v.partial_cmp(&v).is_none()
}

/// The dense kernel: combines the rows of `values` (shape `[n, inner...]`) by segment into
/// `[nsegments, inner...]`, and counts the rows of each segment. Empty segments stay 0, or with
/// `unsorted` hold the identity of max (lowest finite), min (highest finite) and prod (1).
fn combine_rows<T: SegmentElement>(
    ctx: &ExecContext,
    op: &str,
    values: &DenseTensor,
    segments: &[Option<usize>],
    nsegments: usize,
    reduction: SegmentReduction,
    unsorted: bool,
) -> Result<(DenseTensor, Vec<usize>)> {
    let src = values.as_slice::<T>().ok_or_else(|| Error::dtype(op, "input 0 (data) has an unexpected dtype"))?;
    let row = values.row_size();
    let size = nsegments
        .checked_mul(row)
        .ok_or_else(|| Error::argument(op, format!("{nsegments} segments of {row} elements overflow")))?;
    let mut out = filled(ctx, op, size, T::default())?;
    let mut counts = filled(ctx, op, nsegments, 0usize)?;
    for (i, segment) in segments.iter().enumerate() {
        let Some(s) = *segment else { continue };
        let source = &src[i * row..(i + 1) * row];
        let target = &mut out[s * row..(s + 1) * row];
        if counts[s] == 0 {
            target.copy_from_slice(source);
        } else {
            for (acc, &v) in target.iter_mut().zip(source) {
                *acc = match reduction.fold() {
                    SegmentReduction::Sum | SegmentReduction::Mean | SegmentReduction::SqrtN => acc.plus(v),
                    SegmentReduction::Prod => acc.times(v),
                    // NaN wins: once the accumulator is NaN it stays NaN.
                    SegmentReduction::Max | SegmentReduction::Min if is_nan(*acc) => *acc,
                    SegmentReduction::Max if v > *acc || is_nan(v) => v,
                    SegmentReduction::Min if v < *acc || is_nan(v) => v,
                    SegmentReduction::Max | SegmentReduction::Min => *acc,
                };
            }
        }
        counts[s] += 1;
    }
    if reduction == SegmentReduction::Mean && !unsorted {
        for (s, &count) in counts.iter().enumerate().filter(|(_, &c)| c > 1) {
            for v in &mut out[s * row..(s + 1) * row] {
                *v = v.divided_by(count);
            }
        }
    }
    if unsorted {
        let identity = match reduction {
            SegmentReduction::Max => Some(crate::reduce::defs::finite_extreme::<T>(false)),
            SegmentReduction::Min => Some(crate::reduce::defs::finite_extreme::<T>(true)),
            SegmentReduction::Prod => Some(T::from_i64(1)),
            _ => None,
        };
        if let Some(identity) = identity {
            for (s, _) in counts.iter().enumerate().filter(|(_, &c)| c == 0) {
                out[s * row..(s + 1) * row].fill(identity);
            }
        }
    }
    let mut shape = vec![nsegments];
    shape.extend_from_slice(&values.shape()[1..]);
    Ok((DenseTensor::from_vec(shape, out)?, counts))
}
