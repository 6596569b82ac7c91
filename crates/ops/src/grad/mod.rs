//! Symbolic gradients (Theano's `T.grad`, DESIGN.md decision 12): the backward walk that builds
//! the gradient of a cost as new nodes of the same graph, and each op family's vector-Jacobian
//! product (`Op::vjp`), which the ops' `impl Op` blocks delegate to.
//!
//! The walk visits the nodes the cost depends on once, in reverse topological order, sums the
//! contributions of a variable with several clients, and asks each node on a path from a `wrt`
//! variable to the cost for its inputs' gradients. Gradients never flow through integer, bool
//! or string values; an input the cost does not depend on gets zeros of its type and partitions.

pub mod elemwise;
pub(crate) mod nodes;
pub mod ops;
pub mod reduce;
pub mod structure;

use std::collections::{HashMap, HashSet};

use ragtime_core::{Error, Result};
use ragtime_graph::{ApplyId, Graph, VarId};

use crate::elemwise::scalar_op::ScalarOp;
use crate::grad::nodes::{apply1, binary, scalar, ty, GRAD};
use crate::structure::defs::FilledLike;

pub use ops::{ContractRows, FlatPositions, ProdOthers, ScatterAdd, Transpose, Unreduce};

/// The gradient of the float scalar `cost` with respect to each of `wrt` (float variables of
/// `graph`), built as new nodes of `graph`: one variable per `wrt`, with its dtype, shape and
/// row partitions.
pub fn grad(graph: &mut Graph, cost: VarId, wrt: &[VarId]) -> Result<Vec<VarId>> {
    grad_with(graph, cost, wrt, &[])
}

/// [`grad`], with the gradients of some intermediate variables given (Theano's `known_grads`,
/// TensorFlow's `output_gradients`): each `(var, g)` adds `g` (of `var`'s type) to what flows
/// back into `var` from the cost.
pub fn grad_with(graph: &mut Graph, cost: VarId, wrt: &[VarId], known_grads: &[(VarId, VarId)]) -> Result<Vec<VarId>> {
    let cost_ty = ty(graph, cost)?;
    if cost_ty.rank() != 0 || !cost_ty.dtype().is_float() {
        return Err(Error::dtype(GRAD, format!("the cost must be a float scalar, got {cost_ty}")));
    }
    for (i, &w) in wrt.iter().enumerate() {
        let t = ty(graph, w)?;
        if !t.dtype().is_float() {
            return Err(Error::dtype(
                GRAD,
                format!("wrt {i} ({}) must be a float tensor, got {t}", graph.var_label(w)),
            ));
        }
    }
    for &(var, g) in known_grads {
        let (vt, gt) = (ty(graph, var)?, ty(graph, g)?);
        if !vt.dtype().is_float() || gt.dtype() != vt.dtype() {
            return Err(Error::dtype(
                GRAD,
                format!(
                    "a known gradient of {} must be a float tensor of its dtype: variable {vt}, gradient {gt}",
                    graph.var_label(var)
                ),
            ));
        }
    }
    let mut roots = vec![cost];
    roots.extend(known_grads.iter().map(|&(v, _)| v));
    let order = topological_order(graph, &roots);

    // The variables that depend on a `wrt` variable: only nodes with such an input are asked
    // for gradients (Theano's "connected" inputs).
    let mut depends: HashSet<VarId> = wrt.iter().copied().collect();
    for &node in &order {
        let apply = graph.node(node).ok_or_else(|| Error::graph("grad: a node of the graph is missing"))?;
        if apply.inputs.iter().any(|v| depends.contains(v)) {
            depends.extend(apply.outputs.iter().copied());
        }
    }

    let mut contributions: HashMap<VarId, Vec<VarId>> = HashMap::new();
    let one = scalar(graph, cost_ty.dtype(), 1.0)?;
    contributions.entry(cost).or_default().push(one);
    for &(var, g) in known_grads {
        contributions.entry(var).or_default().push(g);
    }

    for &node in order.iter().rev() {
        let apply = graph.node(node).ok_or_else(|| Error::graph("grad: a node of the graph is missing"))?.clone();
        if !apply.inputs.iter().any(|v| depends.contains(v)) {
            continue;
        }
        let mut output_grads = Vec::with_capacity(apply.outputs.len());
        for &out in &apply.outputs {
            output_grads.push(total(graph, &contributions, out)?);
        }
        if output_grads.iter().all(Option::is_none) {
            continue;
        }
        let at = |e: Error| e.at_node(format!("the gradient of {}", apply.op.name()));
        let input_grads = apply.op.vjp(graph, &apply.inputs, &apply.outputs, &output_grads).map_err(at)?;
        if input_grads.len() != apply.inputs.len() {
            return Err(at(Error::graph(format!(
                "the VJP gave {} gradients for {} inputs",
                input_grads.len(),
                apply.inputs.len()
            ))));
        }
        for (&input, g) in apply.inputs.iter().zip(input_grads) {
            let Some(g) = g else { continue };
            let input_ty = ty(graph, input)?;
            if !depends.contains(&input) || !input_ty.dtype().is_float() {
                continue;
            }
            let g_ty = ty(graph, g)?;
            if g_ty.dtype() != input_ty.dtype() || g_ty.rank() != input_ty.rank() {
                return Err(at(Error::graph(format!(
                    "the VJP gave a gradient of type {g_ty} for an input of type {input_ty}"
                ))));
            }
            contributions.entry(input).or_default().push(g);
        }
    }

    wrt.iter()
        .map(|&w| match total(graph, &contributions, w)? {
            Some(g) => Ok(g),
            None => apply1(graph, FilledLike::new(false, None), &[w]),
        })
        .collect()
}

/// The nodes `roots` depend on, each after the nodes computing its inputs (iterative DFS).
fn topological_order(graph: &Graph, roots: &[VarId]) -> Vec<ApplyId> {
    let mut order = Vec::new();
    let mut seen: HashSet<ApplyId> = HashSet::new();
    // (node, whether its inputs have been pushed already)
    let mut stack: Vec<(ApplyId, bool)> =
        roots.iter().filter_map(|&v| graph.var(v).and_then(|var| var.owner)).map(|n| (n, false)).collect();
    while let Some((node, expanded)) = stack.pop() {
        if expanded {
            order.push(node);
            continue;
        }
        if !seen.insert(node) {
            continue;
        }
        stack.push((node, true));
        if let Some(apply) = graph.node(node) {
            for &input in apply.inputs.iter().rev() {
                if let Some(owner) = graph.var(input).and_then(|v| v.owner) {
                    if !seen.contains(&owner) {
                        stack.push((owner, false));
                    }
                }
            }
        }
    }
    order
}

/// The sum of the gradient contributions of `var` (`None` when it has none, or is not a float).
fn total(graph: &mut Graph, contributions: &HashMap<VarId, Vec<VarId>>, var: VarId) -> Result<Option<VarId>> {
    if !ty(graph, var)?.dtype().is_float() {
        return Ok(None);
    }
    let Some(parts) = contributions.get(&var) else { return Ok(None) };
    let mut parts = parts.iter().copied();
    let Some(mut sum) = parts.next() else { return Ok(None) };
    for p in parts {
        sum = binary(graph, ScalarOp::Add, sum, p)?;
    }
    Ok(Some(sum))
}
