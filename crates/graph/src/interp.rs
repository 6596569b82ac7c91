//! The reference interpreter: runs a `FunctionGraph` node by node with each op's `perform`.

use ragtime_core::{Error, RaggedTensor, Result};
use slotmap::SecondaryMap;

use crate::{ApplyId, Client, FunctionGraph};

/// A function graph with its evaluation order computed once, ready to run many times.
#[derive(Debug, Clone)]
pub struct Interpreter {
    order: Vec<ApplyId>,
    /// For each node in `order`, the variables whose last reader it is (freed after it runs).
    frees: Vec<Vec<crate::VarId>>,
    /// Check every computed value against its inferred type.
    check_types: bool,
}

impl Interpreter {
    /// Plans the evaluation of `fg`.
    pub fn new(fg: &FunctionGraph) -> Result<Self> {
        let order = fg.toposort()?;
        let position: std::collections::HashMap<ApplyId, usize> =
            order.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let mut frees = vec![Vec::new(); order.len()];
        for (var, _) in fg.graph().variables() {
            let clients = fg.clients(var);
            if clients.iter().any(|c| matches!(c, Client::Output(_))) {
                continue;
            }
            let last = clients
                .iter()
                .filter_map(|c| match c {
                    Client::Node { node, .. } => position.get(node).copied(),
                    Client::Output(_) => None,
                })
                .max();
            if let Some(last) = last {
                frees[last].push(var);
            }
        }
        Ok(Interpreter { order, frees, check_types: cfg!(debug_assertions) })
    }

    /// Checks (or not) every computed value against its node's inferred type; on by default in
    /// debug builds, and in `Mode::Debug`.
    pub fn checking_types(mut self, on: bool) -> Self {
        self.check_types = on;
        self
    }

    /// Runs the graph on `inputs` (already checked against the input types by the caller).
    /// Errors are wrapped with the node that raised them.
    pub fn run(&self, fg: &FunctionGraph, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        if inputs.len() != fg.inputs().len() {
            return Err(Error::argument(
                "call",
                format!("expected {} inputs, got {}", fg.inputs().len(), inputs.len()),
            ));
        }
        let g = fg.graph();
        let mut values: SecondaryMap<crate::VarId, RaggedTensor> = SecondaryMap::new();
        for (&var, value) in fg.inputs().iter().zip(inputs) {
            values.insert(var, value.clone());
        }
        for (var, v) in g.variables() {
            if let Some(c) = &v.constant {
                values.insert(var, c.clone());
            }
        }
        for (step, &node) in self.order.iter().enumerate() {
            let apply = g.node(node).ok_or_else(|| Error::graph("a planned node is gone"))?;
            let args = apply
                .inputs
                .iter()
                .map(|&v| values.get(v).cloned().ok_or_else(|| Error::graph("a node's input was not computed")))
                .collect::<Result<Vec<_>>>()?;
            let outs = apply.op.perform(&args).map_err(|e| e.at_node(apply.op.name()))?;
            if outs.len() != apply.outputs.len() {
                return Err(Error::graph(format!(
                    "{} returned {} outputs, expected {}",
                    apply.op.name(),
                    outs.len(),
                    apply.outputs.len()
                )));
            }
            for (&var, value) in apply.outputs.iter().zip(outs) {
                // Every op is checked against its own type inference when asked.
                if self.check_types {
                    if let Some(v) = g.var(var) {
                        v.ty.check(&value, "output").map_err(|e| {
                            Error::graph(format!(
                                "{} computed a value that breaks its inferred type: {e}",
                                apply.op.name()
                            ))
                        })?;
                    }
                }
                values.insert(var, value);
            }
            for &dead in &self.frees[step] {
                values.remove(dead);
            }
        }
        fg.outputs()
            .iter()
            .map(|&v| values.get(v).cloned().ok_or_else(|| Error::graph("an output was not computed")))
            .collect()
    }
}
