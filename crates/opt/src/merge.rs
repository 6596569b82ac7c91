//! Merge (common subexpression elimination): equal constants become one constant, and nodes
//! applying the same op to the same inputs become one node.

use std::collections::HashMap;

use ragtime_core::{dispatch_dtype, DType, Element, RaggedTensor, Result};
use ragtime_graph::{ApplyId, FunctionGraph, VarId};

/// Law: equal constants are interchangeable (equal dtype, structure and values, floats compared
/// by bits so `-0.0` and `0.0` stay apart while a NaN matches the same NaN); `op(a, b)` computed
/// twice is the same value. Returns the number of merges.
pub(crate) fn merge(fg: &mut FunctionGraph) -> Result<usize> {
    let mut merged = 0;
    // Constants, bucketed by dtype and shape, compared by value.
    let mut consts: HashMap<(DType, Vec<usize>, usize), Vec<VarId>> = HashMap::new();
    let mut pairs = Vec::new();
    let constants: Vec<(VarId, RaggedTensor)> = fg
        .graph()
        .variables()
        .filter_map(|(id, v)| v.constant.clone().map(|c| (id, c)))
        .filter(|(id, _)| !fg.clients(*id).is_empty())
        .collect();
    for (id, value) in constants {
        let key = (value.dtype(), value.flat_values().shape().to_vec(), value.ragged_rank());
        let bucket = consts.entry(key).or_default();
        let same = bucket
            .iter()
            .copied()
            .find(|&other| fg.var(other).and_then(|v| v.constant.as_ref()).is_some_and(|c| identical(c, &value)));
        match same {
            Some(other) => pairs.push((id, other)),
            None => bucket.push(id),
        }
    }
    if !pairs.is_empty() {
        merged += pairs.len();
        fg.replace_all(&pairs, "merge")?;
    }
    // Nodes, in topological order so inputs are already merged when a node is looked at.
    let mut seen: HashMap<Vec<VarId>, Vec<ApplyId>> = HashMap::new();
    for node in fg.toposort()? {
        let Some(apply) = fg.node(node) else { continue };
        if apply.outputs.iter().all(|&o| fg.clients(o).is_empty()) {
            continue;
        }
        let bucket = seen.entry(apply.inputs.clone()).or_default();
        let twin = bucket.iter().copied().find(|&other| {
            fg.node(other).is_some_and(|b| b.op.op_eq(&*apply.op) && b.outputs.len() == apply.outputs.len())
        });
        match twin {
            Some(other) => {
                let pairs: Vec<(VarId, VarId)> = apply
                    .outputs
                    .iter()
                    .copied()
                    .zip(fg.node(other).map(|b| b.outputs.clone()).unwrap_or_default())
                    .collect();
                fg.replace_all(&pairs, "merge")?;
                merged += 1;
            }
            None => bucket.push(node),
        }
    }
    Ok(merged)
}

/// Identical constants: same dtype and structure, values equal bit for bit for floats.
pub(crate) fn identical(a: &RaggedTensor, b: &RaggedTensor) -> bool {
    if a.dtype() != b.dtype() || !a.equals(b) {
        return false;
    }
    match a.dtype() {
        DType::F32 | DType::F64 => dispatch_dtype!(a.dtype(),
            T => {
                let (x, y) = (a.flat_slice::<T>().unwrap_or(&[]), b.flat_slice::<T>().unwrap_or(&[]));
                x.iter().zip(y).all(|(p, q)| p.to_f64().to_bits() == q.to_f64().to_bits())
            },
            string => true),
        _ => true,
    }
}
