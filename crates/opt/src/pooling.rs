//! `local_row_pooling`: `reduce_sum(expand_dims(w, -1) * f, axis=k)` over the innermost ragged axis
//! `k` of float vectors `f` (`[.., *, width]`, ragged rank `k`) weighted by `w` (the same shape
//! without the vector dim) becomes one `RowPooling` node, which never materializes the broadcast
//! weights or the products; a following `reduce_sum` / `max` / `min` / `prod` over axis `k - 1`
//! (the next outer ragged axis) that is the pooled value's only client joins it, so the per-row
//! vectors are not stored either (W9: softmax-weighted feature sums per session, maximum over a
//! user's sessions).
//!
//! `local_softmax_pooling` (run before `local_expand_softmax`) does the same when `w` is
//! `softmax(s)` over the innermost ragged axis, read only there: the fused op computes the weights
//! from `s` in its pass (`PoolWeights::Softmax`), so they are not stored; `pooling_logits`, after
//! elementwise fusion, moves a `Composite` that computes `s` and is read only there into the
//! pooling op, so the logits are not stored either (W9 is one node).
//!
//! Law: see `ragtime_ops::fused::RowPooling` (the same multiplications, additions and
//! combinations in the same order: bit-identical). The product and the inner sum must have the
//! next op as their only client, so nothing is computed twice; the `OriginalOps` program replays
//! the replaced ops when the operands do not line up at run time (different partitions).

use ragtime_core::{DType, Dim, Result, TensorType};
use ragtime_graph::{ApplyId, Client, FunctionGraph, OpRef, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::fused::{
    op_ref, Composite, OperandKind, OriginalOps, OriginalRef, OriginalStep, PoolWeights, RowPooling,
};
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_ops::rows::Softmax;
use ragtime_ops::structure::ExpandDims;

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// `axis` as a non-negative axis of a tensor of `rank` dims.
fn normalized(axis: i64, rank: usize) -> Option<usize> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    usize::try_from(a).ok().filter(|&a| a < rank)
}

/// The single consumer of `v`, if exactly one node reads it once and it is not a graph output.
fn only_client(fg: &FunctionGraph, v: VarId) -> Option<ApplyId> {
    match fg.clients(v) {
        [Client::Node { node, .. }] => Some(*node),
        _ => None,
    }
}

fn ty(fg: &FunctionGraph, v: VarId) -> Option<TensorType> {
    fg.var(v).map(|x| x.ty.clone())
}

/// The reduction of `node` when it folds one axis without keepdims: `(op, kind, axis, input, output)`.
fn single_axis_reduce(fg: &FunctionGraph, node: ApplyId) -> Option<(OpRef, ReduceKind, usize, VarId, VarId)> {
    let apply = fg.node(node)?;
    let reduce = apply.op.as_any().downcast_ref::<Reduce>()?;
    let x = apply.inputs[0];
    let axis = normalized(reduce.axis.single()?, ty(fg, x)?.rank())?;
    (!reduce.keepdims).then(|| (apply.op.clone(), reduce.kind, axis, x, apply.outputs[0]))
}

/// The weights `w` of `a = expand_dims(w, -1)` when `w` is a float tensor of ragged rank `k` with
/// scalar items: `(expand op, w)`.
fn expanded_weights(fg: &FunctionGraph, a: VarId, k: usize, dtype: DType) -> Option<(OpRef, VarId)> {
    let apply = fg.node(fg.var(a)?.owner?)?;
    let expand = apply.op.as_any().downcast_ref::<ExpandDims>()?;
    let w = apply.inputs[0];
    let wt = ty(fg, w)?;
    let last = normalized(expand.axis, wt.rank() + 1)? == wt.rank();
    (last && wt.ragged_rank() == k && wt.rank() == k + 1 && wt.dtype() == dtype).then(|| (apply.op.clone(), w))
}

/// The logits `s` of `w = softmax(s)` (not `log_softmax`), when `w` is read only by `reader`:
/// `(softmax op, s)`. `s` has `w`'s type, so the softmax runs over the innermost ragged axis.
fn softmax_logits(fg: &FunctionGraph, w: VarId, reader: ApplyId) -> Option<(OpRef, VarId)> {
    let apply = fg.node(fg.var(w)?.owner?)?;
    let softmax = apply.op.as_any().downcast_ref::<Softmax>()?;
    let s = apply.inputs[0];
    (!softmax.log && only_client(fg, w) == Some(reader) && ty(fg, s) == ty(fg, w)).then(|| (apply.op.clone(), s))
}

/// `local_row_pooling`, on a `Reduce` node: given weights.
pub(crate) fn row_pooling(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    pooling(fg, node, false)
}

/// `local_softmax_pooling`, on a `Reduce` node: weights that are the softmax of logits.
pub(crate) fn softmax_pooling(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    pooling(fg, node, true)
}

/// The rewrite, on a `Reduce` node: with `softmax`, only when the weights are a softmax, which
/// the fused op then computes.
fn pooling(fg: &mut FunctionGraph, node: ApplyId, softmax: bool) -> Rewrite {
    let Some((sum_op, ReduceKind::Sum, axis, m, pooled)) = single_axis_reduce(fg, node) else { return Ok(None) };
    let Some(mt) = ty(fg, m) else { return Ok(None) };
    let k = mt.ragged_rank();
    let width = match mt.dims().last() {
        Some(&Dim::Known(w)) if w > 0 => w,
        _ => return Ok(None),
    };
    if k == 0 || axis != k || mt.rank() != k + 2 || !matches!(mt.dtype(), DType::F32 | DType::F64) {
        return Ok(None);
    }
    let Some(m_apply) = fg.node(match fg.var(m).and_then(|v| v.owner) {
        Some(o) => o,
        None => return Ok(None),
    }) else {
        return Ok(None);
    };
    let is_mul = m_apply.op.as_any().downcast_ref::<Elemwise>().is_some_and(|e| e.scalar == ScalarOp::Multiply);
    if !is_mul || only_client(fg, m) != Some(node) {
        return Ok(None);
    }
    let (mul_op, (lhs, rhs)) = (m_apply.op.clone(), (m_apply.inputs[0], m_apply.inputs[1]));
    // Either operand order: the vectors are the operand of `m`'s own type, the other the
    // expanded weights (with width 1 both have that type).
    let found = [(lhs, rhs, true), (rhs, lhs, false)].into_iter().find_map(|(a, f, weights_first)| {
        let vectors = ty(fg, f).is_some_and(|t| t == mt);
        let weights = expanded_weights(fg, a, k, mt.dtype()).filter(|_| vectors)?;
        Some((weights, f, weights_first))
    });
    let Some(((expand_op, w), f, weights_first)) = found else { return Ok(None) };
    // With softmax weights, the fused op reads the logits and the softmax is the first step of
    // its original program.
    let softmax_of = match softmax {
        true => match fg
            .var(if weights_first { lhs } else { rhs })
            .and_then(|v| v.owner)
            .and_then(|expand| softmax_logits(fg, w, expand))
        {
            Some(found) => Some(found),
            None => return Ok(None),
        },
        false => None,
    };
    // The outer reduction, when it is the pooled value's only client.
    let outer = only_client(fg, pooled).and_then(|next| {
        let (op, kind, axis, _, out) = single_axis_reduce(fg, next)?;
        let foldable = matches!(kind, ReduceKind::Sum | ReduceKind::Max | ReduceKind::Min | ReduceKind::Prod);
        (foldable && k >= 2 && axis == k - 1).then_some((op, kind, out))
    });
    let mul_inputs = if weights_first {
        vec![OriginalRef::Step(0, 0), OriginalRef::Input(1)]
    } else {
        vec![OriginalRef::Input(1), OriginalRef::Step(0, 0)]
    };
    // Step numbers past the optional softmax step.
    let at = usize::from(softmax_of.is_some());
    let mul_inputs = mul_inputs
        .into_iter()
        .map(|r| match r {
            OriginalRef::Step(i, o) => OriginalRef::Step(i + at, o),
            other => other,
        })
        .collect();
    let mut steps: Vec<OriginalStep> =
        softmax_of.iter().map(|(op, _)| OriginalStep { op: op.clone(), inputs: vec![OriginalRef::Input(0)] }).collect();
    let weights_ref = if at == 1 { OriginalRef::Step(0, 0) } else { OriginalRef::Input(0) };
    steps.extend([
        OriginalStep { op: expand_op, inputs: vec![weights_ref] },
        OriginalStep { op: mul_op, inputs: mul_inputs },
        OriginalStep { op: sum_op, inputs: vec![OriginalRef::Step(at + 1, 0)] },
    ]);
    let replaced = match &outer {
        Some((op, _, out)) => {
            steps.push(OriginalStep { op: op.clone(), inputs: vec![OriginalRef::Step(at + 2, 0)] });
            *out
        }
        None => pooled,
    };
    let original = OriginalOps { outputs: vec![OriginalRef::Step(steps.len() - 1, 0)], steps, consts: Vec::new() };
    let (weights, first_input) = match softmax_of {
        Some((_, s)) => (PoolWeights::Softmax { logits: None }, s),
        None => (PoolWeights::Given, w),
    };
    let fused = RowPooling::new(width, outer.map(|(_, kind, _)| kind), weights, original)?;
    let new_out = fg.add_node(op_ref(fused), &[first_input, f])?;
    Ok(Some(vec![(replaced, new_out[0])]))
}

/// `pooling_logits`: each `RowPooling` with softmax weights of an input `s` that a `Composite`
/// computes and only it reads takes the composite in (its operands replace `s` among the pooling's
/// inputs), when the composite has one output, full and scalar operands only and cannot fault.
/// Returns the number of poolings changed.
pub(crate) fn pooling_logits(fg: &mut FunctionGraph) -> Result<usize> {
    let mut changed = 0;
    for node in fg.toposort()? {
        let Some(apply) = fg.node(node) else { continue };
        let Some(pooling) = apply.op.as_any().downcast_ref::<RowPooling>() else { continue };
        let (s, f, out) = match (apply.inputs.as_slice(), apply.outputs.as_slice()) {
            ([s, f], [out]) => (*s, *f, *out),
            _ => continue,
        };
        let Some(producer) = fg.var(s).and_then(|v| v.owner).and_then(|o| fg.node(o)) else { continue };
        let Some(composite) = producer.op.as_any().downcast_ref::<Composite>() else { continue };
        let lines_up = composite.operands().iter().all(|k| matches!(k, OperandKind::Full | OperandKind::Scalar));
        if !lines_up || composite.graph().can_fault() || producer.outputs.len() != 1 || only_client(fg, s) != Some(node)
        {
            continue;
        }
        let Some(fused) = pooling.with_logits(composite.clone()) else { continue };
        let mut inputs = producer.inputs.clone();
        inputs.push(f);
        let new_out = fg.add_node(op_ref(fused), &inputs)?;
        fg.replace_all(&[(out, new_out[0])], "pooling_logits")?;
        changed += 1;
    }
    Ok(changed)
}
