//! `local_expand_softmax`: `softmax` / `log_softmax` over the ragged axis of a `[n, *]` float
//! tensor becomes the primitives row fusion turns into one row kernel (softmax's
//! `exp(x - reduce_max(x)) / reduce_sum(...)`), so it runs as a pass-per-row JIT kernel.
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
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_ops::rows::Softmax;

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

fn node(fg: &mut FunctionGraph, op: OpRef, inputs: &[VarId]) -> Result<VarId> {
    Ok(fg.add_node(op, inputs)?[0])
}

fn ew(op: ScalarOp) -> OpRef {
    Arc::new(Elemwise::new(op))
}

fn row_reduce(kind: ReduceKind) -> OpRef {
    Arc::new(Reduce::new(kind, Some(1), true))
}

/// The rewrite, on a `Softmax` node over a ragged rank 1, rank 2 float tensor.
pub(crate) fn softmax(fg: &mut FunctionGraph, id: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(id) else { return Ok(None) };
    let Some(op) = apply.op.as_any().downcast_ref::<Softmax>() else { return Ok(None) };
    let (log, x, out) = (op.log, apply.inputs[0], apply.outputs[0]);
    let Some(ty): Option<TensorType> = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    if ty.ragged_rank() != 1 || ty.rank() != 2 || !ty.dtype().is_float() {
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
