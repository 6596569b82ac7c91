//! Partition analysis: which variables are proven (or required, for the op to succeed) to share
//! their row partitions, so a fused kernel checks one structure per class at run time.

use std::collections::HashMap;

use ragtime_core::Result;
use ragtime_graph::{FunctionGraph, VarId};
use ragtime_ops::structure::{FromRowLengths, FromRowSplits};

/// Union-find classes of ragged variables with the same row partitions.
#[derive(Debug, Clone, Default)]
pub struct PartitionClasses {
    parent: HashMap<VarId, VarId>,
}

impl PartitionClasses {
    /// Analyzes `fg`. Rules: an op whose properties say output 0 keeps input `i`'s partitions
    /// shares them when both have the same ragged rank and rank; an elementwise op's ragged
    /// inputs of the output's rank and ragged rank must have its structure for the op to succeed
    /// (ragged dimensions never broadcast), so they join the output's class; `from_row_splits` /
    /// `from_row_lengths` of one splits variable give one class.
    pub fn analyze(fg: &FunctionGraph) -> Result<Self> {
        let mut classes = PartitionClasses::default();
        let mut by_splits: HashMap<(bool, VarId), VarId> = HashMap::new();
        for node in fg.toposort()? {
            let Some(apply) = fg.node(node) else { continue };
            let Some(&out) = apply.outputs.first() else { continue };
            let Some(out_ty) = fg.var(out).map(|v| v.ty.clone()) else { continue };
            if !out_ty.is_ragged() {
                continue;
            }
            let props = apply.op.properties();
            let shaped_like_out = |v: VarId| {
                fg.var(v).is_some_and(|x| x.ty.ragged_rank() == out_ty.ragged_rank() && x.ty.rank() == out_ty.rank())
            };
            if props.elementwise {
                for &v in &apply.inputs {
                    if shaped_like_out(v) {
                        classes.union(v, out);
                    }
                }
            } else if let Some(i) = props.keeps_partitions_of {
                if let Some(&v) = apply.inputs.get(i).filter(|&&v| shaped_like_out(v)) {
                    classes.union(v, out);
                }
            }
            let any = apply.op.as_any();
            let from_splits = any.is::<FromRowSplits>();
            if (from_splits || any.is::<FromRowLengths>()) && apply.inputs.len() == 2 {
                let key = (from_splits, apply.inputs[1]);
                match by_splits.get(&key) {
                    Some(&first) => classes.union(first, out),
                    None => {
                        by_splits.insert(key, out);
                    }
                }
            }
        }
        // Every ragged variable has a class, even alone.
        for (id, v) in fg.graph().variables() {
            if v.ty.is_ragged() && !fg.clients(id).is_empty() || fg.outputs().contains(&id) && v.ty.is_ragged() {
                classes.find(id);
            }
        }
        Ok(classes)
    }

    /// The representative of `v`'s class.
    pub fn find(&mut self, v: VarId) -> VarId {
        let mut root = v;
        while let Some(&p) = self.parent.get(&root) {
            if p == root {
                break;
            }
            root = p;
        }
        self.parent.entry(v).or_insert(root);
        // Path compression.
        let mut cur = v;
        while cur != root {
            let next = self.parent[&cur];
            self.parent.insert(cur, root);
            cur = next;
        }
        self.parent.entry(root).or_insert(root);
        root
    }

    fn union(&mut self, a: VarId, b: VarId) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(rb, ra);
        }
    }

    /// True when `a` and `b` are in one class.
    pub fn same(&mut self, a: VarId, b: VarId) -> bool {
        self.find(a) == self.find(b)
    }

    /// The number of classes.
    pub fn class_count(&self) -> usize {
        self.parent.iter().filter(|(k, v)| k == v).count()
    }
}
