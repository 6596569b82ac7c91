//! `local_gather_reduce`: a sum or mean over the ragged axis of gathered table rows (optionally
//! concatenated along that axis first) becomes one `GatherReduce` node, which adds the picked
//! rows straight from the tables instead of materializing them twice.
//!
//! Law: `reduce(concat([gather(p_0, i_0), ...], axis=1), axis=1)` sums, per row, the picked rows
//! of `p_0`, then those of `p_1`, ... in that order, starting from zero; `GatherReduce` performs
//! exactly those additions (and the same f64 division for means), so the result is bit-identical.
//! Each replaced gather (and the concat) must have the reduction as its only client, so nothing
//! is computed twice.
//!
//! A gather whose indices are themselves a concat along the ragged axis (only read by it) reads
//! each part as a table of its own: `gather(p, concat([i_0, i_1], axis=1))` holds, per row, the
//! rows of `p` picked by `i_0`'s row then those picked by `i_1`'s, which is `concat([gather(p,
//! i_0), gather(p, i_1)], axis=1)`; so the concatenated ids are never built either.

use std::sync::LazyLock;

use ragtime_core::{DType, Result};
use ragtime_fused::{op_ref, GatherReduce};
use ragtime_graph::{ApplyId, FunctionGraph, VarId};
use ragtime_ops::gather::Gather;
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_ops::structure::Concat;
use ragtime_runtime::InnerGraphBuilder;

use crate::pattern::{op, var, Pattern};

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// `axis` as a non-negative axis of a tensor of `rank` dims.
fn normalized(axis: i64, rank: usize) -> Option<usize> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    usize::try_from(a).ok().filter(|&a| a < rank)
}

/// A gather of table rows that only its consumer reads.
static GATHER: LazyLock<Pattern> =
    LazyLock::new(|| op::<Gather>().only_read_by_its_consumer().inputs([var("table"), var("indices")]));

/// A concat that only its consumer reads.
static CONCAT: LazyLock<Pattern> =
    LazyLock::new(|| op::<Concat>().only_read_by_its_consumer().named("concat").any_inputs());

/// True when `v` is ragged `[nrows, *]` (ids of bags).
fn bag_ids(fg: &FunctionGraph, v: VarId) -> bool {
    fg.var(v).is_some_and(|x| x.ty.ragged_rank() == 1 && x.ty.rank() == 2)
}

/// The `(table, indices)` pairs of a gather producing `v` that only `consumer` reads, when the
/// table is a dense `dtype` tensor and the indices are ragged `[nrows, *]`: one pair, or one per
/// part when the indices are a concat along the ragged axis that only the gather reads.
fn gather_sources(fg: &FunctionGraph, v: VarId, consumer: ApplyId, dtype: DType) -> Option<Vec<(VarId, VarId)>> {
    let m = GATHER.matches(fg, v, Some(consumer))?;
    let (table, indices) = (m.var("table"), m.var("indices"));
    let tt = &fg.var(table)?.ty;
    if !(tt.ragged_rank() == 0 && tt.rank() >= 1 && tt.dtype() == dtype && bag_ids(fg, indices)) {
        return None;
    }
    let gather = fg.var(v)?.owner?;
    let parts = CONCAT.matches(fg, indices, Some(gather)).and_then(|c| {
        let along_rows = normalized(c.op::<Concat>(fg, "concat")?.axis(), 2) == Some(1);
        let parts = fg.node(c.node("concat"))?.inputs.clone();
        (along_rows && parts.iter().all(|&p| bag_ids(fg, p))).then_some(parts)
    });
    Some(parts.unwrap_or_else(|| vec![indices]).into_iter().map(|i| (table, i)).collect())
}

/// The rewrite, on a `Reduce` node.
pub(crate) fn gather_reduce(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    let Some(reduce) = apply.op.as_any().downcast_ref::<Reduce>() else { return Ok(None) };
    let (reduce_op, x, out) = (apply.op.clone(), apply.inputs[0], apply.outputs[0]);
    let (kind, keepdims) = (reduce.kind, reduce.keepdims);
    let Some(xt) = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    let on_ragged_axis = reduce.axis.single().and_then(|a| normalized(a, xt.rank())) == Some(1);
    if !matches!(kind, ReduceKind::Sum | ReduceKind::Mean)
        || !on_ragged_axis
        || xt.ragged_rank() != 1
        || !matches!(xt.dtype(), DType::F32 | DType::F64)
    {
        return Ok(None);
    }
    // The gathered operands: the concat's inputs, or `x` itself.
    let (parts, concat) = match CONCAT.matches(fg, x, Some(node)) {
        Some(m) => {
            let id = m.node("concat");
            let Some(c) = m.op::<Concat>(fg, "concat") else { return Ok(None) };
            if normalized(c.axis(), xt.rank()) != Some(1) {
                return Ok(None);
            }
            let Some(apply) = fg.node(id) else { return Ok(None) };
            (apply.inputs.clone(), Some((apply.op.clone(), id)))
        }
        None if fg
            .var(x)
            .and_then(|v| v.owner)
            .and_then(|id| fg.node(id))
            .is_some_and(|a| a.op.as_any().is::<Concat>()) =>
        {
            return Ok(None)
        }
        None => (vec![x], None),
    };
    let consumer = concat.as_ref().map_or(node, |&(_, id)| id);
    let mut inputs = Vec::with_capacity(parts.len() * 2);
    for &part in &parts {
        let Some(sources) = gather_sources(fg, part, consumer, xt.dtype()) else { return Ok(None) };
        inputs.extend(sources.into_iter().flat_map(|(table, indices)| [table, indices]));
    }
    let tables = inputs.len() / 2;
    // The inner graph: a gather of each (table, indices) pair, their concat along the ragged
    // axis, the reduction.
    let types = inputs.iter().filter_map(|&v| fg.var(v).map(|x| x.ty.clone())).collect::<Vec<_>>();
    let mut inner = InnerGraphBuilder::new(types)?;
    let mut gathered = Vec::with_capacity(tables);
    for at in (0..inputs.len()).step_by(2) {
        let pair = [inner.input(at), inner.input(at + 1)];
        let [Some(table), Some(indices)] = pair else { return Ok(None) };
        gathered.push(inner.apply(op_ref(Gather::new()), &[table, indices])?[0]);
    }
    let reduced = match (concat, tables) {
        (Some((op, _)), _) if tables == parts.len() => inner.apply(op, &gathered)?[0],
        (_, 1) => gathered[0],
        _ => inner.apply(op_ref(Concat::new(1)), &gathered)?[0],
    };
    let result = inner.apply(reduce_op, &[reduced])?;
    let inner = inner.finish(&result)?;
    let Some(fused) = GatherReduce::new(kind, keepdims, tables, inner) else { return Ok(None) };
    let new_out = fg.add_node(op_ref(fused), &inputs)?;
    Ok(Some(vec![(out, new_out[0])]))
}
