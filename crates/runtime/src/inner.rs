//! [`InnerGraph`]: the subgraph a fused op stands for — a [`FunctionGraph`] whose inputs are the
//! fused op's inputs — with its schedule, so the fused op's type inference and general
//! evaluation run through the one executor ([`Interpreter`]).

use std::hash::{Hash, Hasher};

use ragtime_core::{ExecContext, RaggedTensor, Result, TensorType};

use ragtime_graph::{FunctionGraph, Graph, OpRef, VarId};

use crate::interp::Interpreter;

/// The ops a fused op replaced, as a function graph of their own: the fused op's definition.
/// Its inputs are the fused op's inputs (named `i0`, `i1`, ... in printouts), its outputs the
/// fused op's outputs; constants the fused op inlined are `Constant` variables.
///
/// Two inner graphs are equal when they are structurally equal
/// ([`FunctionGraph::same_structure`]: input types, ops, how nodes read each other, constants by
/// value, outputs), so merging treats two fused ops built from the same ops as one; the hash
/// agrees with that equality.
#[derive(Debug, Clone)]
pub struct InnerGraph {
    graph: FunctionGraph,
    schedule: Interpreter,
}

impl InnerGraph {
    /// The inner graph `graph` (its schedule is compiled once, here).
    pub fn new(graph: FunctionGraph) -> Result<Self> {
        let schedule = Interpreter::new(&graph)?;
        Ok(InnerGraph { graph, schedule })
    }

    /// The function graph (for printing and for passes that look inside).
    pub fn graph(&self) -> &FunctionGraph {
        &self.graph
    }

    /// The output types for inputs of `inputs`' types: each inner node's type inference, in
    /// order (errors name the inner node).
    pub fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        self.schedule.infer(inputs)
    }

    /// Runs the inner graph on `inputs` under the caller's context: the general semantics
    /// (broadcasting, errors) that a fused op's fast paths reproduce. Errors name the inner node.
    pub fn run(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        self.schedule.run(&self.graph, ctx, inputs)
    }

    /// A single-output fused op's result: its fast path's (`Some`, when the operands were shaped
    /// as the fusion assumed), else the inner graph's on `inputs`.
    pub fn fast_or_run(
        &self,
        ctx: &ExecContext,
        inputs: &[RaggedTensor],
        fast: Option<Result<RaggedTensor>>,
    ) -> Result<Vec<RaggedTensor>> {
        match fast {
            Some(result) => Ok(vec![result?]),
            None => self.run(ctx, inputs),
        }
    }
}

impl PartialEq for InnerGraph {
    fn eq(&self, other: &Self) -> bool {
        self.graph.same_structure(&other.graph)
    }
}

impl Hash for InnerGraph {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.graph.hash_structure(state);
    }
}

/// Builds an [`InnerGraph`] node by node: inputs first (one per fused-op input), then constants
/// and op applications (each op's type inference runs as it is applied), then the outputs.
#[derive(Debug)]
pub struct InnerGraphBuilder {
    graph: Graph,
    inputs: Vec<VarId>,
}

impl InnerGraphBuilder {
    /// A builder whose inputs have the types `inputs` (named `i0`, `i1`, ...).
    pub fn new(inputs: impl IntoIterator<Item = TensorType>) -> Result<Self> {
        let mut graph = Graph::new();
        let inputs = inputs
            .into_iter()
            .enumerate()
            .map(|(i, ty)| graph.input(format!("i{i}"), ty))
            .collect::<Result<Vec<_>>>()?;
        Ok(InnerGraphBuilder { graph, inputs })
    }

    /// The inner variable of input `i`.
    pub fn input(&self, i: usize) -> Option<VarId> {
        self.inputs.get(i).copied()
    }

    /// A Constant holding `value`.
    pub fn constant(&mut self, value: RaggedTensor) -> VarId {
        self.graph.constant(value)
    }

    /// Applies `op` to inner variables; returns its outputs.
    pub fn apply(&mut self, op: OpRef, inputs: &[VarId]) -> Result<Vec<VarId>> {
        self.graph.apply(op, inputs)
    }

    /// The inner graph computing `outputs`.
    pub fn finish(self, outputs: &[VarId]) -> Result<InnerGraph> {
        InnerGraph::new(FunctionGraph::new(&self.graph, &self.inputs, outputs)?)
    }
}
