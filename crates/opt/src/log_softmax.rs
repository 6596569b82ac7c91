//! `local_log_softmax` (PyTensor's rewrite of the same name): `log(softmax(x))` becomes
//! `log_softmax(x)`, so a cross-entropy written against the probabilities is computed stably. A
//! gradient taken before optimizing still holds `log`'s VJP, `g / softmax(x)`, which this rewrite
//! leaves alone: write `log_softmax` (or `reduce_logsumexp`, as W8 does) for a stable backward.
//!
//! Law: per row, `log(exp(x - m) / s) = (x - m) - log(s)` with `m` the row's maximum and `s` the
//! sum of `exp(x - m)`; the left side rounds twice more (the quotient, then its logarithm) and is
//! `-inf` where the probability underflows, where the right side stays finite. The rewrite is
//! tagged approximate: equal within the conformance tolerance wherever the left side is finite.

use std::sync::{Arc, LazyLock};

use ragtime_core::Result;
use ragtime_graph::{ApplyId, FunctionGraph, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::rows::Softmax;

use crate::pattern::{op, var, Pattern};

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// `log(softmax(x))`.
static LOG_OF_SOFTMAX: LazyLock<Pattern> = LazyLock::new(|| {
    op::<Elemwise>().when(|e| e.scalar == ScalarOp::Log).inputs([op::<Softmax>().when(|s| !s.log).inputs([var("x")])])
});

/// The rewrite, on an elementwise node.
pub(crate) fn log_softmax(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(m) = LOG_OF_SOFTMAX.matches_node(fg, node) else { return Ok(None) };
    let Some(out) = fg.node(node).map(|a| a.outputs[0]) else { return Ok(None) };
    let stable = fg.add_node(Arc::new(Softmax::new(true)), &[m.var("x")])?[0];
    let same_type = fg.var(stable).map(|v| &v.ty) == fg.var(out).map(|v| &v.ty);
    Ok(same_type.then(|| vec![(out, stable)]))
}
