//! VJPs of the structure ops. A data-movement op (slicing, gather, `embedding_lookup`,
//! `boolean_mask`, tile, reverse, concat, stack, `to_tensor`, the partition constructors and
//! accessors) puts in each output element a copy of one input element, chosen by the op's
//! index inputs and attributes only, never by the values moved. So running the same op on the
//! input's flat positions ([`FlatPositions`]) says where every output element came from, and
//! the VJP is one [`ScatterAdd`] of the output gradient back to those positions, laid out in
//! the input's own partitions: one piece of code for every such op.

use std::sync::Arc;

use ragtime_core::{Error, Result};
use ragtime_graph::{Graph, Op, OpRef, VarId};

use super::ops::{FlatPositions, ScatterAdd};
use crate::grad::nodes::{apply1, ty};

/// The VJP of a data-movement op `op` (see the module doc): every float input is data moved by
/// the op, the others (indices, masks, splits) say where. `twin` is the op to run on int64
/// positions instead of the data (`op` itself, unless an attribute holds a value of the data's
/// dtype, such as `to_tensor`'s default, which becomes -1: "from no input element").
pub fn movement_vjp(
    twin: OpRef,
    graph: &mut Graph,
    inputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    // The one output that moves data (to_sparse's `values`; output 0 of the others) carries the
    // gradient; the others are integers (indices, shapes), whose gradients are disconnected.
    let connected: Vec<(usize, VarId)> =
        output_grads.iter().enumerate().filter_map(|(k, g)| g.map(|g| (k, g))).collect();
    let [(out, g)] = connected[..] else {
        if connected.is_empty() {
            return Ok(vec![None; inputs.len()]);
        }
        return Err(Error::graph(format!("{}: a data-movement VJP needs one output that moves data", twin.name())));
    };
    let is_data = inputs.iter().map(|&v| Ok(ty(graph, v)?.dtype().is_float())).collect::<Result<Vec<bool>>>()?;
    let mut grads = Vec::with_capacity(inputs.len());
    for (i, &input) in inputs.iter().enumerate() {
        if !is_data[i] {
            grads.push(None);
            continue;
        }
        let mut args = Vec::with_capacity(inputs.len());
        for (j, &other) in inputs.iter().enumerate() {
            args.push(match (j == i, is_data[j]) {
                (true, _) => apply1(graph, FlatPositions { fill: None }, &[other])?,
                (false, true) => apply1(graph, FlatPositions { fill: Some(-1) }, &[other])?,
                (false, false) => other,
            });
        }
        let positions = graph.apply(twin.clone(), &args)?;
        let Some(&positions) = positions.get(out) else {
            return Err(Error::graph(format!("{}: no output {out} to take positions from", twin.name())));
        };
        grads.push(Some(apply1(graph, ScatterAdd, &[input, positions, g])?));
    }
    Ok(grads)
}

/// [`movement_vjp`] of an op that runs on positions as it is.
pub fn same_movement_vjp<O: Op + Clone>(
    op: &O,
    graph: &mut Graph,
    inputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    movement_vjp(Arc::new(op.clone()), graph, inputs, output_grads)
}

/// The `Op::vjp` of a data-movement op that runs on positions as it is ([`same_movement_vjp`]),
/// written once and expanded into each such op's `impl Op` block.
macro_rules! movement_vjp_method {
    () => {
        fn vjp(
            &self,
            graph: &mut ragtime_graph::Graph,
            inputs: &[ragtime_graph::VarId],
            _outputs: &[ragtime_graph::VarId],
            output_grads: &[Option<ragtime_graph::VarId>],
        ) -> ragtime_core::Result<Vec<Option<ragtime_graph::VarId>>> {
            $crate::grad::structure::same_movement_vjp(self, graph, inputs, output_grads)
        }
    };
}
pub(crate) use movement_vjp_method;

/// The VJP of an op that picks elements of each innermost line of `x` by value (`sort`,
/// `top_k`): `indices` (the op's own, or `argsort`'s) say which element of its line each output
/// element is, so a batched gather of `x`'s positions by them says where it came from, and the
/// output gradient is scatter-added back there (ties: each tied element gets the gradient of the
/// output slot it was put in, as in TensorFlow).
pub fn picked_by_value_vjp(graph: &mut Graph, x: VarId, indices: VarId, g: VarId) -> Result<VarId> {
    let rank = ty(graph, x)?.rank() as i64;
    let last = rank - 1;
    let positions = apply1(graph, FlatPositions { fill: None }, &[x])?;
    let picked = apply1(graph, crate::gather::defs::GatherAxis::new(last, last), &[positions, indices])?;
    apply1(graph, ScatterAdd, &[x, picked, g])
}
