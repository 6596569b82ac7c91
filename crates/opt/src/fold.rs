//! Constant folding: a node whose inputs are all constants is replaced by its value, computed by
//! the op's reference implementation.

use ragtime_core::limits::Limits;
use ragtime_core::Result;
use ragtime_graph::{ApplyId, FunctionGraph, VarId};

/// Folded results larger than this stay computed at run time: folding must not bloat the graph
/// (or the compile time) with a big tensor that `fill` or `tile` could produce.
pub(crate) const FOLD_LIMIT: usize = 1 << 16;

/// The memory budget of one fold (64 MiB): a fold that would allocate more is left to run time,
/// where the call's own limits apply, so compiling a graph file never allocates gigabytes.
const FOLD_BUDGET: usize = 64 << 20;

/// Law: `op(c1, ..., cn)` with constant inputs equals the constant `op.perform(c1, ..., cn)`.
/// A node whose `perform` fails is left alone, so the error still happens at run time.
pub(crate) fn constant_folding(fg: &mut FunctionGraph, node: ApplyId) -> Result<Option<Vec<(VarId, VarId)>>> {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    if apply.op.inner_graph().is_some() {
        return Ok(None);
    }
    let Some(values) =
        apply.inputs.iter().map(|&v| fg.var(v).and_then(|x| x.constant.clone())).collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let op = apply.op.clone();
    let outputs = apply.outputs.clone();
    let ctx = ragtime_runtime::call_context(Limits::untrusted().with_call_budget(FOLD_BUDGET));
    let Ok(results) = op.perform(&ctx, &values) else { return Ok(None) };
    if results.len() != outputs.len() || results.iter().any(|r| r.flat_values().len() > FOLD_LIMIT) {
        return Ok(None);
    }
    // Keep the exact types the graph inferred: a folded value whose type the old variable does
    // not accept (it cannot happen for a correct op) is not folded.
    for (&o, r) in outputs.iter().zip(&results) {
        match fg.var(o) {
            Some(var) if var.ty.accepts(&ragtime_core::TensorType::of(r)) => {}
            _ => return Ok(None),
        }
    }
    let pairs = outputs.into_iter().zip(results).map(|(o, r)| (o, fg.add_constant(r))).collect();
    Ok(Some(pairs))
}
