//! `local_mean_from_sum`: a row sum divided by the row's length (`reduce_sum(x, 1) /
//! cast(row_lengths(x))`, the mean written out) becomes `reduce_mean(x, 1)`, so the rewrites that
//! know means (a gather-reduce, row fusion) see one spelling.
//!
//! Law: `reduce_mean` over the ragged axis of floats is the row's sum divided by its count (the sum
//! in the values' dtype, the quotient rounded once: dividing in float64 then rounding to float32 is
//! the correctly rounded float32 quotient), and an empty row gives `0 / 0 = NaN` both ways. The
//! count cast to float is exact below 2^24 values per row (float32; 2^53 for float64): longer rows
//! round the count, so the rewrite is tagged approximate.

use std::sync::{Arc, LazyLock};

use ragtime_core::{Dim, Result};
use ragtime_graph::{ApplyId, FunctionGraph, OpRef, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_ops::structure::ExpandDims;
use ragtime_ops::structure::RowLengths;

use crate::pattern::{any_of, op, var, Pattern};

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// `x / count`, with `x` a row sum of `x` over axis 1 and `count` its row lengths as floats, as a
/// `[n]` vector or a `[n, 1]` column (`expand_dims` before or after the cast).
static SUM_OVER_COUNT: LazyLock<Pattern> = LazyLock::new(|| {
    let lengths = || op::<RowLengths>().when(|r| *r == RowLengths::new(1)).inputs([var("x")]);
    let to_float =
        |p: Pattern| op::<Elemwise>().when(|e| matches!(e.scalar, ScalarOp::Cast(d) if d.is_float())).inputs([p]);
    let column = |p: Pattern| op::<ExpandDims>().when(|e| matches!(e.axis, 1 | -1)).inputs([p]);
    op::<Elemwise>().when(|e| e.scalar == ScalarOp::Divide).inputs([
        op::<Reduce>()
            .when(|r| r.kind == ReduceKind::Sum && !r.keepdims && r.axis.single() == Some(1))
            .inputs([var("x")]),
        any_of([to_float(lengths()), column(to_float(lengths())), to_float(column(lengths()))]).named_var("count"),
    ])
});

/// The rewrite, on an elementwise node.
pub(crate) fn mean_from_sum(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(m) = SUM_OVER_COUNT.matches_node(fg, node) else { return Ok(None) };
    let (x, count) = (m.var("x"), m.var("count"));
    let Some(out) = fg.node(node).map(|a| a.outputs[0]) else { return Ok(None) };
    let (Some(xt), Some(ct), Some(ot)) = (fg.var(x), fg.var(count), fg.var(out)) else { return Ok(None) };
    let (xt, ct, ot) = (xt.ty.clone(), ct.ty.clone(), ot.ty.clone());
    // Floats of one dtype throughout, one ragged dimension, and a count that lines up with the
    // sum's rows: `[n]` against `[n]`, `[n, 1]` against `[n, k]` (a `[n]` count against `[n, k]`
    // would broadcast along the wrong axis).
    let rows_only = ct.rank() == xt.rank() - 1 && ct.dims().iter().skip(1).all(|d| *d == Dim::Known(1));
    if !xt.dtype().is_float() || ct.dtype() != xt.dtype() || xt.ragged_rank() != 1 || !rows_only {
        return Ok(None);
    }
    let op: OpRef = Arc::new(Reduce::new(ReduceKind::Mean, Some(1), false));
    let mean = fg.add_node(op, &[x])?;
    match fg.var(mean[0]) {
        Some(v) if v.ty == ot => Ok(Some(vec![(out, mean[0])])),
        _ => Ok(None),
    }
}
