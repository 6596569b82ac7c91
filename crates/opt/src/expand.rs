//! Row ops expanded into the primitives row fusion turns into row kernels, so they run as
//! pass-per-row JIT kernels in `FastRun`:
//! - `local_expand_softmax`: `softmax` / `log_softmax` over the ragged axis of a `[n, *]` float
//!   tensor (softmax's `exp(x - reduce_max(x)) / reduce_sum(...)`);
//! - `local_expand_row_statistics`: `reduce_variance`, `reduce_std` and `reduce_logsumexp` over
//!   the same axis (see [`statistic`] for their laws).
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

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

fn node(fg: &mut FunctionGraph, op: OpRef, inputs: &[VarId]) -> Result<VarId> {
    Ok(fg.add_node(op, inputs)?[0])
}

fn ew(op: ScalarOp) -> OpRef {
    Arc::new(Elemwise::new(op))
}

fn row_reduce(kind: ReduceKind) -> OpRef {
    row_reduce_to(kind, true)
}

fn row_reduce_to(kind: ReduceKind, keepdims: bool) -> OpRef {
    Arc::new(Reduce::new(kind, Some(1), keepdims))
}

/// True for the type row fusion iterates over: floats of ragged rank 1, rank 2 (`[n, *]`).
fn is_float_rows(ty: &TensorType) -> bool {
    ty.ragged_rank() == 1 && ty.rank() == 2 && ty.dtype().is_float()
}

/// The rewrite, on a `Softmax` node over a ragged rank 1, rank 2 float tensor.
pub(crate) fn softmax(fg: &mut FunctionGraph, id: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(id) else { return Ok(None) };
    let Some(op) = apply.op.as_any().downcast_ref::<Softmax>() else { return Ok(None) };
    let (log, x, out) = (op.log, apply.inputs[0], apply.outputs[0]);
    let Some(ty): Option<TensorType> = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    if !is_float_rows(&ty) {
        return Ok(None);
    }
    let m = node(fg, row_reduce(ReduceKind::Max), &[x])?;
    let d = node(fg, ew(ScalarOp::Subtract), &[x, m])?;
    let e = node(fg, ew(ScalarOp::Exp), &[d])?;
    let s = node(fg, row_reduce(ReduceKind::Sum), &[e])?;
    let result = if log {
        let ls = node(fg, ew(ScalarOp::Log), &[s])?;
        node(fg, ew(ScalarOp::Subtract), &[d, ls])?
    } else {
        node(fg, ew(ScalarOp::Divide), &[e, s])?
    };
    Ok(Some(vec![(out, result)]))
}

/// The rewrite, on a `reduce_variance` / `reduce_std` / `reduce_logsumexp` node over the ragged
/// axis (1 or -1) of a `[n, *]` float tensor, with or without `keepdims`. The primitives compute
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
    if !matches!(op.axis.single(), Some(1 | -1)) {
        return Ok(None);
    }
    let Some(ty): Option<TensorType> = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    if !is_float_rows(&ty) {
        return Ok(None);
    }
    let result = match kind {
        StatisticKind::Variance | StatisticKind::Std => {
            let m = node(fg, row_reduce(ReduceKind::Mean), &[x])?;
            let d = node(fg, ew(ScalarOp::Subtract), &[x, m])?;
            let sq = node(fg, ew(ScalarOp::Square), &[d])?;
            let variance = node(fg, row_reduce_to(ReduceKind::Mean, keepdims), &[sq])?;
            if kind == StatisticKind::Std {
                node(fg, ew(ScalarOp::Sqrt), &[variance])?
            } else {
                variance
            }
        }
        StatisticKind::LogSumExp => {
            let m = node(fg, row_reduce(ReduceKind::Max), &[x])?;
            let d = node(fg, ew(ScalarOp::Subtract), &[x, m])?;
            let e = node(fg, ew(ScalarOp::Exp), &[d])?;
            let s = node(fg, row_reduce_to(ReduceKind::Sum, keepdims), &[e])?;
            // The maximum in the result's shape (a second reduction in the same row pass).
            let m_out = if keepdims { m } else { node(fg, row_reduce_to(ReduceKind::Max, false), &[x])? };
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
