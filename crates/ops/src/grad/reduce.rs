//! VJPs of reductions (`Reduce`, `Statistic`), of the row ops (`softmax`, `log_softmax`,
//! `cumsum`, `cumprod`) and of the segment reductions. A reduction's result gradient is spread
//! back over the elements of each group with [`Unreduce`] (the transpose of `reduce_sum`), which
//! keeps the input's row partitions; TensorFlow's tie rule for `max` / `min` (the gradient
//! shared equally among tied extremes) is a mask divided by its count per group.

use std::sync::Arc;

use ragtime_core::Result;

use ragtime_graph::{Graph, OpRef, VarId};

use super::ops::{ProdOthers, Unreduce};
use crate::elemwise::ScalarOp::{self, *};
use crate::gather::defs::Gather;
use crate::gather::defs::SegmentReduce;
use crate::gather::defs::SegmentReduction;
use crate::gather::defs::UnsortedSegmentReduce;
use crate::grad::nodes::{apply1, binary, scale, single, ty, unary};
use crate::reduce::axes::Axes;
use crate::reduce::defs::Reduce;
use crate::reduce::defs::ReduceKind;
use crate::reduce::defs::Statistic;
use crate::reduce::defs::StatisticKind;
use crate::rows::defs::Cumulative;
use crate::rows::defs::Softmax;
use crate::structure::defs::FilledLike;
use crate::structure::ExpandDims;
use crate::structure::RowLengths;

/// A reduction's grouping: which axes, and whether the result kept them.
struct Grouping {
    axis: Axes,
    keepdims: bool,
}

impl Grouping {
    /// `r` (of the reduction's result type) spread over `x`'s elements.
    fn spread(&self, graph: &mut Graph, x: VarId, r: VarId) -> Result<VarId> {
        apply1(graph, Unreduce { axis: self.axis.clone(), keepdims: self.keepdims }, &[x, r])
    }

    /// `kind` of `x` over the same groups.
    fn reduce(&self, graph: &mut Graph, kind: ReduceKind, x: VarId) -> Result<VarId> {
        apply1(graph, Reduce::with_axes(kind, self.axis.clone(), self.keepdims), &[x])
    }

    /// The number of elements of each group, as a float of `x`'s dtype, spread over `x`.
    fn counts(&self, graph: &mut Graph, x: VarId) -> Result<VarId> {
        let n = self.sum_of_ones(graph, x)?;
        self.spread(graph, x, n)
    }

    /// The number of elements of each group, as a float of `x`'s dtype, of the reduction's result type.
    fn sum_of_ones(&self, graph: &mut Graph, x: VarId) -> Result<VarId> {
        let ones = apply1(graph, FilledLike::new(true, None), &[x])?;
        self.reduce(graph, ReduceKind::Sum, ones)
    }

    /// The number of elements of each group, as a float of `x`'s dtype, shaped to divide the
    /// reduction's result. Over the ragged axis of a ragged rank 1 `x` these are the row lengths
    /// (as a `[rows, 1, ..]` column broadcasting over the result's inner dims), so no `x`-sized
    /// tensor of ones is built; otherwise the sum of ones over the groups.
    fn sizes(&self, graph: &mut Graph, x: VarId) -> Result<VarId> {
        let xt = ty(graph, x)?;
        let rank = xt.rank() as i64;
        let over_rows = self.axis.single().is_some_and(|a| a == 1 || a == 1 - rank);
        if xt.ragged_rank() == 1 && over_rows {
            let lengths = apply1(graph, RowLengths::new(1), &[x])?;
            let mut n = unary(graph, ScalarOp::Cast(xt.dtype()), lengths)?;
            let result_rank = if self.keepdims { rank } else { rank - 1 };
            for _ in 1..result_rank {
                n = apply1(graph, ExpandDims { axis: -1 }, &[n])?;
            }
            return Ok(n);
        }
        self.sum_of_ones(graph, x)
    }

    /// `x - mean(x)` per group.
    fn centered(&self, graph: &mut Graph, x: VarId) -> Result<VarId> {
        let mean = self.reduce(graph, ReduceKind::Mean, x)?;
        let mean = self.spread(graph, x, mean)?;
        binary(graph, Subtract, x, mean)
    }
}

/// The input `x`, output gradient `g` and output `y` of a one-input reduction whose gradient
/// flows into a float input; `None` when no gradient flows (no output gradient, or `x` is not
/// float), the prologue shared by [`reduce_vjp`] and [`statistic_vjp`].
fn float_reduction(
    graph: &Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Option<(VarId, VarId, VarId)>> {
    let (Some(g), [x]) = (single(output_grads), inputs) else { return Ok(None) };
    if !ty(graph, *x)?.dtype().is_float() {
        return Ok(None);
    }
    Ok(Some((*x, g, outputs[0])))
}

/// The VJP of `reduce_*`.
pub fn reduce_vjp(
    op: &Reduce,
    graph: &mut Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    let Some((x, g, y)) = float_reduction(graph, inputs, outputs, output_grads)? else {
        return Ok(vec![None; inputs.len()]);
    };
    let groups = Grouping { axis: op.axis.clone(), keepdims: op.keepdims };
    let dx = match op.kind {
        ReduceKind::Sum => groups.spread(graph, x, g)?,
        ReduceKind::Mean => {
            // Divided per group, then spread: the same quotient at every element, computed once.
            let n = groups.sizes(graph, x)?;
            let share = binary(graph, Divide, g, n)?;
            groups.spread(graph, x, share)?
        }
        ReduceKind::Max | ReduceKind::Min => {
            // TensorFlow: the gradient is shared equally among the elements equal to the extreme.
            let extreme = groups.spread(graph, x, y)?;
            let is_extreme = binary(graph, Equal, x, extreme)?;
            let mask = unary(graph, ScalarOp::Cast(ty(graph, x)?.dtype()), is_extreme)?;
            let ties = groups.reduce(graph, ReduceKind::Sum, mask)?;
            let share = binary(graph, Divide, g, ties)?;
            let share = groups.spread(graph, x, share)?;
            binary(graph, Multiply, mask, share)?
        }
        ReduceKind::Prod => {
            // d prod / dx_i = the product of the group's other elements (exact at zeros).
            let spread = groups.spread(graph, x, g)?;
            let others = apply1(graph, ProdOthers { axis: op.axis.clone(), keepdims: op.keepdims }, &[x])?;
            binary(graph, Multiply, spread, others)?
        }
        ReduceKind::All | ReduceKind::Any => return Ok(vec![None]),
    };
    Ok(vec![Some(dx)])
}

/// The VJP of `reduce_variance`, `reduce_std`, `reduce_logsumexp`, `reduce_euclidean_norm`.
pub fn statistic_vjp(
    op: &Statistic,
    graph: &mut Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    let Some((x, g, y)) = float_reduction(graph, inputs, outputs, output_grads)? else {
        return Ok(vec![None; inputs.len()]);
    };
    let groups = Grouping { axis: op.axis.clone(), keepdims: op.keepdims };
    let dx = match op.kind {
        StatisticKind::Variance => {
            // 2 (x - mean) / n
            let g = groups.spread(graph, x, g)?;
            let centered = groups.centered(graph, x)?;
            let n = groups.counts(graph, x)?;
            let d = binary(graph, Divide, centered, n)?;
            let d = scale(graph, d, 2.0)?;
            binary(graph, Multiply, g, d)?
        }
        StatisticKind::Std => {
            // (x - mean) / (n std)
            let g_over_std = binary(graph, Divide, g, y)?;
            let g = groups.spread(graph, x, g_over_std)?;
            let centered = groups.centered(graph, x)?;
            let n = groups.counts(graph, x)?;
            let d = binary(graph, Divide, centered, n)?;
            binary(graph, Multiply, g, d)?
        }
        StatisticKind::LogSumExp => {
            // softmax of each group: exp(x - logsumexp)
            let g = groups.spread(graph, x, g)?;
            let lse = groups.spread(graph, x, y)?;
            let shifted = binary(graph, Subtract, x, lse)?;
            let p = unary(graph, Exp, shifted)?;
            binary(graph, Multiply, g, p)?
        }
        StatisticKind::EuclideanNorm => {
            // x / norm
            let g_over_norm = binary(graph, Divide, g, y)?;
            let g = groups.spread(graph, x, g_over_norm)?;
            binary(graph, Multiply, g, x)?
        }
    };
    Ok(vec![Some(dx)])
}

/// The VJP of `softmax` / `log_softmax` along the last axis.
pub fn softmax_vjp(
    op: &Softmax,
    graph: &mut Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    let (Some(g), [x]) = (single(output_grads), inputs) else { return Ok(vec![None; inputs.len()]) };
    let (x, y) = (*x, outputs[0]);
    let rows = Grouping { axis: Axes::from(-1), keepdims: false };
    let dx = if op.log {
        // g - softmax(x) * sum(g)
        let sum = rows.reduce(graph, ReduceKind::Sum, g)?;
        let sum = rows.spread(graph, x, sum)?;
        let p = unary(graph, Exp, y)?;
        let ps = binary(graph, Multiply, p, sum)?;
        binary(graph, Subtract, g, ps)?
    } else {
        // y * (g - sum(g * y))
        let gy = binary(graph, Multiply, g, y)?;
        let sum = rows.reduce(graph, ReduceKind::Sum, gy)?;
        let sum = rows.spread(graph, x, sum)?;
        let d = binary(graph, Subtract, g, sum)?;
        binary(graph, Multiply, y, d)?
    };
    Ok(vec![Some(dx)])
}

/// The VJP of `cumsum` (a cumulative sum in the other direction) and `cumprod` (the same, of
/// `g * y`, divided by `x`: inputs away from zero).
pub fn cumulative_vjp(
    op: &Cumulative,
    graph: &mut Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    let (Some(g), [x]) = (single(output_grads), inputs) else { return Ok(vec![None; inputs.len()]) };
    let x = *x;
    if !ty(graph, x)?.dtype().is_float() {
        return Ok(vec![None]);
    }
    let back = Cumulative::new(false, op.axis, op.exclusive, !op.reverse);
    let dx = if op.product {
        let gy = binary(graph, Multiply, g, outputs[0])?;
        let summed = apply1(graph, back, &[gy])?;
        binary(graph, Divide, summed, x)?
    } else {
        apply1(graph, back, &[g])?
    };
    Ok(vec![Some(dx)])
}

/// The VJP of `unsorted_segment_*` over its data (segment ids get none).
pub fn unsorted_segment_vjp(
    op: &UnsortedSegmentReduce,
    graph: &mut Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    let sum = Arc::new(UnsortedSegmentReduce::new(SegmentReduction::Sum, op.num_segments));
    segment_vjp(op.reduction, sum, graph, inputs, outputs, output_grads)
}

/// The VJP of the sorted `segment_*` over its data (segment ids get none).
pub fn sorted_segment_vjp(
    op: &SegmentReduce,
    graph: &mut Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    segment_vjp(op.reduction, Arc::new(SegmentReduce::new(SegmentReduction::Sum)), graph, inputs, outputs, output_grads)
}

/// A segment reduction's VJP: a gather of the segments' gradients back to their members
/// (`sum`, `mean`, `sqrt_n`), with TensorFlow's tie rule for `max` / `min` (shared equally
/// among a segment's extremes). `segment_sum` is the same op summing (sorted or not).
fn segment_vjp(
    reduction: SegmentReduction,
    segment_sum: OpRef,
    graph: &mut Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    let (Some(g), [x, ids, ..]) = (single(output_grads), inputs) else { return Ok(vec![None; inputs.len()]) };
    let (x, ids) = (*x, *ids);
    let dtype = ty(graph, x)?.dtype();
    if !dtype.is_float() {
        return Ok(vec![None; inputs.len()]);
    }
    let gather = |graph: &mut Graph, t: VarId| apply1(graph, Gather::new(), &[t, ids]);
    let segment_sum =
        |graph: &mut Graph, t: VarId| -> Result<VarId> { Ok(graph.apply(segment_sum.clone(), &[t, ids])?[0]) };
    let dx = match reduction {
        SegmentReduction::Sum => gather(graph, g)?,
        SegmentReduction::Mean | SegmentReduction::SqrtN => {
            let ones = apply1(graph, FilledLike::new(true, None), &[x])?;
            let n = segment_sum(graph, ones)?;
            let d = if reduction == SegmentReduction::Mean { n } else { unary(graph, Sqrt, n)? };
            let share = binary(graph, Divide, g, d)?;
            gather(graph, share)?
        }
        SegmentReduction::Max | SegmentReduction::Min => {
            let extreme = gather(graph, outputs[0])?;
            let is_extreme = binary(graph, Equal, x, extreme)?;
            let mask = unary(graph, ScalarOp::Cast(dtype), is_extreme)?;
            let ties = segment_sum(graph, mask)?;
            let share = binary(graph, Divide, g, ties)?;
            let share = gather(graph, share)?;
            binary(graph, Multiply, mask, share)?
        }
        SegmentReduction::Prod => {
            // prod / x_i (data away from zero)
            let gy = binary(graph, Multiply, g, outputs[0])?;
            let spread = gather(graph, gy)?;
            binary(graph, Divide, spread, x)?
        }
    };
    let mut grads = vec![None; inputs.len()];
    grads[0] = Some(dx);
    Ok(grads)
}
