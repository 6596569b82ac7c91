//! `local_row_pooling`: `reduce_sum(expand_dims(w, -1) * f, axis=k)` over the innermost ragged axis
//! `k` of float vectors `f` (`[.., *, width]`, ragged rank `k`) weighted by `w` (the same shape
//! without the vector dim) becomes one `RowPooling` node, which never materializes the broadcast
//! weights or the products; a following `reduce_sum` / `max` / `min` / `prod` over axis `k - 1`
//! (the next outer ragged axis) that is the pooled value's only client joins it, so the per-row
//! vectors are not stored either (W9: softmax-weighted feature sums per session, maximum over a
//! user's sessions).
//!
//! `local_pooling_weights` (after row fusion) then fuses a row kernel that computes the weights
//! (W9's softmax) into the pooling.
//!
//! Law: see `ragtime_fused::RowPooling` (the same multiplications, additions and
//! combinations in the same order: bit-identical). The product and the inner sum must have the
//! next op as their only client, so nothing is computed twice; the fused op's inner graph (the
//! replaced ops) runs when the operands do not line up at run time (different partitions).

use ragtime_core::{DType, Dim, Result, TensorType};
use ragtime_fused::{op_ref, RowKernel, RowOutput, RowPooling};
use ragtime_graph::{ApplyId, Client, FunctionGraph, OpRef, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_ops::structure::ExpandDims;
use ragtime_runtime::InnerGraphBuilder;

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

/// The rewrite, on a `Reduce` node.
pub(crate) fn row_pooling(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
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
    // The outer reduction, when it is the pooled value's only client.
    let outer = only_client(fg, pooled).and_then(|next| {
        let (op, kind, axis, _, out) = single_axis_reduce(fg, next)?;
        let foldable = matches!(kind, ReduceKind::Sum | ReduceKind::Max | ReduceKind::Min | ReduceKind::Prod);
        (foldable && k >= 2 && axis == k - 1).then_some((op, kind, out))
    });
    // The inner graph: expand_dims, the product (operands in their order), the sum and the
    // outer reduction.
    let (Some(wt), Some(ft)) = (ty(fg, w), ty(fg, f)) else { return Ok(None) };
    let mut inner = InnerGraphBuilder::new([wt, ft])?;
    let (Some(w_in), Some(f_in)) = (inner.input(0), inner.input(1)) else { return Ok(None) };
    let expanded = inner.apply(expand_op, &[w_in])?[0];
    let product = inner.apply(mul_op, &if weights_first { [expanded, f_in] } else { [f_in, expanded] })?[0];
    let mut result = inner.apply(sum_op, &[product])?;
    let replaced = match &outer {
        Some((op, _, out)) => {
            result = inner.apply(op.clone(), &result)?;
            *out
        }
        None => pooled,
    };
    let inner = inner.finish(&result)?;
    let fused = RowPooling::new(width, outer.map(|(_, kind, _)| kind), inner)?;
    let new_out = fg.add_node(op_ref(fused), &[w, f])?;
    Ok(Some(vec![(replaced, new_out[0])]))
}

/// `local_pooling_weights`: a `RowPooling` whose weights are the only output of a `RowKernel`
/// over scalar items (W9's softmax), read nowhere else → the pooling with that kernel fused in
/// (`RowPooling::with_weights`), which computes the weights block by block into scratch instead
/// of storing one per element. The same kernel and pooling on the same values: bit-identical.
pub(crate) fn pooling_weights(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    let Some(pooling) = apply.op.as_any().downcast_ref::<RowPooling>() else { return Ok(None) };
    let ([w, f], [out]) = (apply.inputs.as_slice(), apply.outputs.as_slice()) else { return Ok(None) };
    let (pooling_op, pooling, (w, f, out)) = (apply.op.clone(), pooling.clone(), (*w, *f, *out));
    if pooling.weights().is_some() || only_client(fg, w) != Some(node) {
        return Ok(None);
    }
    let Some(owner) = fg.var(w).and_then(|v| v.owner).and_then(|o| fg.node(o)) else { return Ok(None) };
    let Some(kernel) = owner.op.as_any().downcast_ref::<RowKernel>() else { return Ok(None) };
    let fits = matches!(kernel.outputs(), [RowOutput::Elements(_)])
        && kernel.item_width() == 1
        && kernel.outer_folds().is_empty()
        && owner.outputs.as_slice() == [w];
    if !fits {
        return Ok(None);
    }
    let (kernel_op, kernel, operands) = (owner.op.clone(), kernel.clone(), owner.inputs.clone());
    // The inner graph: the kernel, then the pooling on its weights.
    let mut types = Vec::with_capacity(operands.len() + 1);
    for &v in operands.iter().chain([&f]) {
        let Some(t) = ty(fg, v) else { return Ok(None) };
        types.push(t);
    }
    let mut inner = InnerGraphBuilder::new(types)?;
    let Some(inner_inputs) = (0..=operands.len()).map(|i| inner.input(i)).collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    let Some((inner_f, inner_operands)) = inner_inputs.split_last() else { return Ok(None) };
    let weights = inner.apply(kernel_op, inner_operands)?;
    let result = inner.apply(pooling_op, &[weights[0], *inner_f])?;
    let inner = inner.finish(&result)?;
    let fused = pooling.with_weights(kernel, inner)?;
    let mut inputs = operands;
    inputs.push(f);
    let new_out = fg.add_node(op_ref(fused), &inputs)?;
    Ok(Some(vec![(out, new_out[0])]))
}
