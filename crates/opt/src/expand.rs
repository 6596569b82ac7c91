//! Row ops expanded into the primitives row fusion turns into row kernels, so they run as
//! pass-per-row JIT kernels in `FastRun`:
//! - `local_expand_softmax`: `softmax` / `log_softmax` over the last axis of a float tensor when
//!   row kernels run along it: the innermost ragged axis of a tensor with scalar items (`[n, *]`,
//!   `[n, *, *]`, ...) or the uniform trailing axis of `[n, *, k]` / dense `[n, k]` (softmax's
//!   `exp(x - reduce_max(x)) / reduce_sum(...)`);
//! - `local_expand_row_statistics`: `reduce_variance`, `reduce_std` and `reduce_logsumexp` over
//!   the same axes (see [`statistic`] for their laws).
//!
//! Law: the `Softmax` op computes, per row, `m` = the row's maximum (NaN-propagating), `e =
//! exp(x - m)`, `s` = the sum of `e` from zero in order, then `e / s` (or `(x - m) - ln(s)`). The
//! primitives compute exactly that with the same scalar kernels. The one difference, the
//! maximum's start (`reduce_max` folds from its identity, the op from the first value), changes
//! only rows whose maximum is -inf, and those are NaN either way (`-inf - -inf` is NaN in the op;
//! `0 / 0` or `-inf - -inf` in the primitives).

use std::sync::Arc;

use ragtime_core::{Result, TensorType};
use ragtime_graph::{ApplyId, FunctionGraph, OpRef, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::reduce::{Reduce, ReduceKind, Statistic, StatisticKind};
use ragtime_ops::rows::Softmax;

use crate::fusion::trailing_length;

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

fn node(fg: &mut FunctionGraph, op: OpRef, inputs: &[VarId]) -> Result<VarId> {
    Ok(fg.add_node(op, inputs)?[0])
}

fn ew(op: ScalarOp) -> OpRef {
    Arc::new(Elemwise::new(op))
}

/// A reduction over `axis`, with `keepdims`.
fn row_reduce(kind: ReduceKind, axis: i64) -> OpRef {
    row_reduce_to(kind, axis, true)
}

fn row_reduce_to(kind: ReduceKind, axis: i64, keepdims: bool) -> OpRef {
    Arc::new(Reduce::new(kind, Some(axis), keepdims))
}

/// The last axis of a float type when row fusion runs row kernels along it: the innermost ragged
/// axis of ragged rank `k >= 1` and rank `k + 1` (`[n, *]`, `[n, *, *]`, ...), or a uniform
/// trailing axis (`[n, *, k]`, dense `[n, k]`: every dim past the ragged ones known).
fn last_rows_axis(ty: &TensorType) -> Option<i64> {
    let (k, rank) = (ty.ragged_rank(), ty.rank());
    if !ty.dtype().is_float() {
        return None;
    }
    if k >= 1 && rank == k + 1 {
        return Some(k as i64);
    }
    trailing_length(ty.dims(), k).map(|_| rank as i64 - 1)
}

/// The rewrite, on a `Softmax` node over a float tensor row fusion iterates over.
pub(crate) fn softmax(fg: &mut FunctionGraph, id: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(id) else { return Ok(None) };
    let Some(op) = apply.op.as_any().downcast_ref::<Softmax>() else { return Ok(None) };
    let (log, x, out) = (op.log, apply.inputs[0], apply.outputs[0]);
    let Some(ty): Option<TensorType> = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    let Some(axis) = last_rows_axis(&ty) else { return Ok(None) };
    let m = node(fg, row_reduce(ReduceKind::Max, axis), &[x])?;
    let d = node(fg, ew(ScalarOp::Subtract), &[x, m])?;
    let e = node(fg, ew(ScalarOp::Exp), &[d])?;
    let s = node(fg, row_reduce(ReduceKind::Sum, axis), &[e])?;
    let result = if log {
        let ls = node(fg, ew(ScalarOp::Log), &[s])?;
        node(fg, ew(ScalarOp::Subtract), &[d, ls])?
    } else {
        node(fg, ew(ScalarOp::Divide), &[e, s])?
    };
    Ok(Some(vec![(out, result)]))
}

/// The rewrite, on a `reduce_variance` / `reduce_std` / `reduce_logsumexp` node over the last
/// axis (-1 or its number) of a float tensor when row kernels run along it (the innermost ragged
/// axis of ragged rank `k` and rank `k + 1`, or a uniform trailing axis), with or without
/// `keepdims`. The primitives compute
/// in the input's dtype, as TensorFlow's own float reductions do (`tf.math.reduce_variance` is
/// `reduce_mean(square(x - reduce_mean(x)))`, `reduce_logsumexp` shifts by the finite maximum);
/// the op accumulates float32 in float64, so the two agree within the conformance tolerance, not
/// bit for bit. Laws, per row:
/// - variance: `m = reduce_mean(x)`, `reduce_mean(square(x - m))`; std is its `sqrt`. An empty
///   row is NaN (`0 / 0`) and a row holding ±inf or NaN is NaN (`inf - inf`), as in the op.
/// - logsumexp: `m = reduce_max(x)`, `log(reduce_sum(exp(x - m))) + m` where `m` is finite, and
///   `m` itself where it is not: an empty row or one of only `-inf` gives `-inf`, a row holding
///   `+inf` gives `+inf` and one holding NaN gives NaN, as the op's shift-by-0 rule does. (The
///   shift of a non-finite `m` poisons that row's sum, which the final `where` discards.)
pub(crate) fn statistic(fg: &mut FunctionGraph, id: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(id) else { return Ok(None) };
    let Some(op) = apply.op.as_any().downcast_ref::<Statistic>() else { return Ok(None) };
    let (kind, keepdims, x, out) = (op.kind, op.keepdims, apply.inputs[0], apply.outputs[0]);
    let Some(ty): Option<TensorType> = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    let Some(axis) = last_rows_axis(&ty) else { return Ok(None) };
    if !op.axis.single().is_some_and(|a| a == -1 || a == axis) {
        return Ok(None);
    }
    let result = match kind {
        StatisticKind::Variance | StatisticKind::Std => {
            let m = node(fg, row_reduce(ReduceKind::Mean, axis), &[x])?;
            let d = node(fg, ew(ScalarOp::Subtract), &[x, m])?;
            let sq = node(fg, ew(ScalarOp::Square), &[d])?;
            let variance = node(fg, row_reduce_to(ReduceKind::Mean, axis, keepdims), &[sq])?;
            if kind == StatisticKind::Std {
                node(fg, ew(ScalarOp::Sqrt), &[variance])?
            } else {
                variance
            }
        }
        StatisticKind::LogSumExp => {
            let m = node(fg, row_reduce(ReduceKind::Max, axis), &[x])?;
            let d = node(fg, ew(ScalarOp::Subtract), &[x, m])?;
            let e = node(fg, ew(ScalarOp::Exp), &[d])?;
            let s = node(fg, row_reduce_to(ReduceKind::Sum, axis, keepdims), &[e])?;
            // The maximum in the result's shape (a second reduction in the same row pass).
            let m_out = if keepdims { m } else { node(fg, row_reduce_to(ReduceKind::Max, axis, false), &[x])? };
            let ls = node(fg, ew(ScalarOp::Log), &[s])?;
            let shifted = node(fg, ew(ScalarOp::Add), &[ls, m_out])?;
            let finite = node(fg, ew(ScalarOp::IsFinite), &[m_out])?;
            node(fg, ew(ScalarOp::Where), &[finite, shifted, m_out])?
        }
        // Not expanded: a float32 sum of squares overflows long before the op's float64 one.
        StatisticKind::EuclideanNorm => return Ok(None),
    };
    Ok(Some(vec![(out, result)]))
}
