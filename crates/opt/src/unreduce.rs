//! Rewrites of `Unreduce` (the transpose of `reduce_sum` that every reduction's gradient spreads
//! its result with) into forms fusion takes, so backward graphs fuse like forward ones:
//! - `local_lift_unreduce`: an elementwise op whose operands are all `Unreduce`s of one `x` over
//!   the same axes (or rank-0 values) runs on the reduced values instead, then spreads once:
//!   `f(unreduce(x, a), unreduce(x, b), c) -> unreduce(x, f(a, b, c))`.
//! - `local_unreduce_per_row`: an elementwise op reading `unreduce(x, r)` over the last axis of
//!   `x` (`[n, *]`, `[n, *, *]`, ... or a dense `[n, k]`) next to an operand shaped like `x` with
//!   `x`'s row partitions reads the per-row column `r` (`[n, 1]`, `expand_dims(r, -1)` without
//!   `keepdims`) instead: broadcasting spreads it, and row fusion takes such a column as a per-row
//!   operand (the softmax, log_softmax, logsumexp and layer-norm backward become row kernels).
//!
//! Laws: `unreduce(x, r)` holds at each element of `x` the element of `r` its group folds into,
//! and an elementwise op computes each element from its operands' elements at that position, so
//! applying `f` before or after the spread gives the same values, bit for bit (lift). Over the
//! last axis, the group of an element is its innermost row, which is what broadcasting a per-row
//! column against a tensor with `x`'s partitions repeats (per row). The other operand has them:
//! ragged dimensions never broadcast, so the elementwise op succeeds only when its operands of
//! its own shape share their partitions (the assumption `PartitionClasses` and fusion make too).

use std::sync::Arc;

use ragtime_core::{Dim, Result, TensorType};
use ragtime_graph::{ApplyId, FunctionGraph, OpRef, VarId};
use ragtime_ops::elemwise::Elemwise;
use ragtime_ops::grad::Unreduce;
use ragtime_ops::reduce::Reduce;
use ragtime_ops::structure::ExpandDims;

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// The `Unreduce` op computing `v`, with its inputs `(x, r)`.
fn unreduce_of(fg: &FunctionGraph, v: VarId) -> Option<(Unreduce, VarId, VarId)> {
    let apply = fg.node(fg.var(v)?.owner?)?;
    let op = apply.op.as_any().downcast_ref::<Unreduce>()?;
    Some((op.clone(), apply.inputs[0], apply.inputs[1]))
}

fn ty(fg: &FunctionGraph, v: VarId) -> Option<TensorType> {
    fg.var(v).map(|x| x.ty.clone())
}

/// The elementwise node `node`: its op, inputs and output.
fn elemwise(fg: &FunctionGraph, node: ApplyId) -> Option<(OpRef, Vec<VarId>, VarId)> {
    let apply = fg.node(node)?;
    apply.op.as_any().downcast_ref::<Elemwise>()?;
    Some((apply.op.clone(), apply.inputs.clone(), *apply.outputs.first()?))
}

/// `local_lift_unreduce`, on an elementwise node.
pub(crate) fn lift(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some((op, inputs, out)) = elemwise(fg, node) else { return Ok(None) };
    let mut spread: Option<(Unreduce, VarId)> = None;
    let mut reduced = Vec::with_capacity(inputs.len());
    for &v in &inputs {
        if let Some((u, x, r)) = unreduce_of(fg, v) {
            match &spread {
                Some((first, first_x)) if *first != u || *first_x != x => return Ok(None),
                Some(_) => {}
                None => spread = Some((u, x)),
            }
            reduced.push(r);
        } else if ty(fg, v).is_some_and(|t| t.rank() == 0) {
            reduced.push(v);
        } else {
            return Ok(None);
        }
    }
    let Some((unreduce, x)) = spread else { return Ok(None) };
    // `Unreduce` spreads floats only (a comparison's booleans stay where they are).
    if !ty(fg, out).is_some_and(|t| t.dtype().is_float()) {
        return Ok(None);
    }
    // Operands that do not combine (dtypes an op refuses) leave the node as it is.
    let Ok(f) = fg.add_node(op, &reduced) else { return Ok(None) };
    let Ok(lifted) = fg.add_node(Arc::new(unreduce), &[x, f[0]]) else { return Ok(None) };
    let lifted = lifted[0];
    Ok((ty(fg, lifted) == ty(fg, out)).then(|| vec![(out, lifted)]))
}

/// True when `unreduce` groups `x`'s innermost rows: `x` of ragged rank `k` and rank `k + 1`, or
/// a dense matrix, reduced over its last axis.
fn over_innermost_rows(x: &TensorType, unreduce: &Unreduce) -> bool {
    let last = x.rank() as i64 - 1;
    let rows = x.rank() == x.ragged_rank() + 1 && x.rank() >= 2;
    let dense_rows = !x.is_ragged() && x.rank() == 2;
    (rows || dense_rows) && unreduce.axis.single().is_some_and(|a| a == -1 || a == last)
}

/// `r` (a reduction result of `unreduce` over the last axis) as a per-row column: `r` itself with
/// `keepdims`; the same reduction with `keepdims` when `r` is a reduction without (row fusion
/// computes both spellings once); else `expand_dims(r, -1)`.
fn column(fg: &mut FunctionGraph, unreduce: &Unreduce, r: VarId) -> Result<Option<VarId>> {
    if unreduce.keepdims {
        return Ok(Some(r));
    }
    let reduce = fg.var(r).and_then(|v| v.owner).and_then(|o| fg.node(o)).and_then(|apply| {
        let op = apply.op.as_any().downcast_ref::<Reduce>()?;
        (op.axis == unreduce.axis && !op.keepdims).then(|| (op.clone(), apply.inputs[0]))
    });
    let kept = match reduce {
        Some((op, y)) => fg.add_node(Arc::new(Reduce { keepdims: true, ..op }), &[y]),
        None => fg.add_node(Arc::new(ExpandDims::new(-1)), &[r]),
    };
    Ok(kept.ok().map(|c| c[0]).filter(|&c| ty(fg, c).is_some_and(|t| t.dims().last() == Some(&Dim::Known(1)))))
}

/// `local_unreduce_per_row`, on an elementwise node.
pub(crate) fn per_row(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some((op, inputs, out)) = elemwise(fg, node) else { return Ok(None) };
    let Some(out_ty) = ty(fg, out) else { return Ok(None) };
    let same_shape = |t: &TensorType| t.dims() == out_ty.dims() && t.ragged_rank() == out_ty.ragged_rank();
    for (i, &v) in inputs.iter().enumerate() {
        let Some((unreduce, x, r)) = unreduce_of(fg, v) else { continue };
        let (Some(x_ty), Some(r_ty)) = (ty(fg, x), ty(fg, r)) else { continue };
        // A rank-0 `r` (a reduction over every axis) broadcasts as it is.
        let scalar = r_ty.rank() == 0;
        if !(scalar || over_innermost_rows(&x_ty, &unreduce)) || !same_shape(&x_ty) {
            continue;
        }
        // Another operand that fixes the result's shape; the op succeeds only when its
        // partitions are the unreduced operand's, which are `x`'s.
        let full = inputs
            .iter()
            .enumerate()
            .any(|(j, &u)| j != i && unreduce_of(fg, u).is_none() && ty(fg, u).is_some_and(|t| same_shape(&t)));
        if !full {
            continue;
        }
        let Some(column) = (if scalar { Some(r) } else { column(fg, &unreduce, r)? }) else { continue };
        let mut rewired = inputs.clone();
        rewired[i] = column;
        let Ok(result) = fg.add_node(op, &rewired) else { return Ok(None) };
        return Ok((ty(fg, result[0]) == Some(out_ty)).then(|| vec![(out, result[0])]));
    }
    Ok(None)
}
