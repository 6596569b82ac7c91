//! Structural equality and hashing of function graphs: two graphs are the same when they
//! compute the same thing the same way, whatever their arena keys and names (how fused ops
//! holding inner graphs compare and merge).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use ragtime_core::{RaggedTensor, TensorType};

use crate::{FunctionGraph, OpRef, VarId};

/// Where a node of the canonical form reads a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Source {
    /// Function input `i`.
    Input(usize),
    /// The `c`-th distinct constant, in order of first use.
    Constant(usize),
    /// Output `k` of the node at position `j` of the topological order.
    Node(usize, usize),
}

/// A graph with its keys replaced by positions: inputs by call order, nodes by topological order
/// (ties in creation order), constants by first use.
struct Canonical<'g> {
    inputs: Vec<&'g TensorType>,
    nodes: Vec<(&'g OpRef, Vec<Source>)>,
    constants: Vec<&'g RaggedTensor>,
    outputs: Vec<Source>,
}

impl<'g> Canonical<'g> {
    /// `None` when the graph is not sound (a cycle, a dangling or free variable): such a graph
    /// equals no other.
    fn of(fg: &'g FunctionGraph) -> Option<Self> {
        let g = fg.graph();
        let order = fg.toposort().ok()?;
        let position: HashMap<_, usize> = order.iter().enumerate().map(|(j, &n)| (n, j)).collect();
        let input_of: HashMap<VarId, usize> = fg.inputs().iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let mut constants: Vec<&'g RaggedTensor> = Vec::new();
        let mut constant_of: HashMap<VarId, usize> = HashMap::new();
        let mut source = |v: VarId| -> Option<Source> {
            if let Some(&i) = input_of.get(&v) {
                return Some(Source::Input(i));
            }
            let var = g.var(v)?;
            if let Some(owner) = var.owner {
                return Some(Source::Node(*position.get(&owner)?, var.index));
            }
            let value = var.constant.as_ref()?;
            let next = constants.len();
            let c = *constant_of.entry(v).or_insert(next);
            if c == next {
                constants.push(value);
            }
            Some(Source::Constant(c))
        };
        let mut nodes = Vec::with_capacity(order.len());
        for &n in &order {
            let apply = g.node(n)?;
            let reads = apply.inputs.iter().map(|&v| source(v)).collect::<Option<Vec<_>>>()?;
            nodes.push((&apply.op, reads));
        }
        let outputs = fg.outputs().iter().map(|&v| source(v)).collect::<Option<Vec<_>>>()?;
        let inputs = fg.inputs().iter().map(|&v| g.var(v).map(|x| &x.ty)).collect::<Option<Vec<_>>>()?;
        Some(Canonical { inputs, nodes, constants, outputs })
    }
}

impl FunctionGraph {
    /// True when `self` and `other` are the same computation: inputs of equal types, nodes of
    /// equal ops ([`crate::OpEq`]) reading the same positions, equal constants (exact values, NaN
    /// equal to NaN) and the same outputs. Arena keys and variable names do not matter.
    pub fn same_structure(&self, other: &FunctionGraph) -> bool {
        let (Some(a), Some(b)) = (Canonical::of(self), Canonical::of(other)) else { return false };
        a.inputs == b.inputs
            && a.outputs == b.outputs
            && a.nodes.len() == b.nodes.len()
            && a.nodes
                .iter()
                .zip(&b.nodes)
                .all(|((op_a, reads_a), (op_b, reads_b))| reads_a == reads_b && op_a.op_eq(&***op_b))
            && a.constants.len() == b.constants.len()
            && a.constants.iter().zip(&b.constants).all(|(x, y)| x.equals(y))
    }

    /// Feeds a hash of the structure to `state`, agreeing with [`FunctionGraph::same_structure`]
    /// (equal ops have equal names; constants contribute their types).
    pub fn hash_structure<H: Hasher>(&self, state: &mut H) {
        let Some(c) = Canonical::of(self) else { return };
        c.inputs.hash(state);
        for (op, reads) in &c.nodes {
            op.name().hash(state);
            reads.hash(state);
        }
        for value in &c.constants {
            TensorType::of(value).hash(state);
        }
        c.outputs.hash(state);
    }
}
