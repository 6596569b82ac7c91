//! [`OriginalOps`]: the ops a fused op replaced, kept as a small program that the fused op replays
//! for type inference and for the operands fusion did not plan for.

use ragtime_core::{Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::OpRef;

/// Where a step of an [`OriginalOps`] program reads a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OriginalRef {
    /// Input `i` of the fused op.
    Input(usize),
    /// Output `k` of step `j`.
    Step(usize, usize),
    /// Constant `c` of the program.
    Const(usize),
}

/// One op of an [`OriginalOps`] program.
#[derive(Debug, Clone)]
pub struct OriginalStep {
    /// The op, as it was in the graph.
    pub op: OpRef,
    /// Where its inputs come from.
    pub inputs: Vec<OriginalRef>,
}

impl PartialEq for OriginalStep {
    fn eq(&self, other: &Self) -> bool {
        self.op.op_eq(&*other.op) && self.inputs == other.inputs
    }
}

/// The ops a fused op replaced, in evaluation order: the definition of its semantics.
#[derive(Debug, Clone, Default)]
pub struct OriginalOps {
    /// The steps, each after the steps it reads.
    pub steps: Vec<OriginalStep>,
    /// Constants read by the steps (inlined scalars and others).
    pub consts: Vec<RaggedTensor>,
    /// The fused op's outputs.
    pub outputs: Vec<OriginalRef>,
}

impl PartialEq for OriginalOps {
    fn eq(&self, other: &Self) -> bool {
        self.steps == other.steps
            && self.outputs == other.outputs
            && self.consts.len() == other.consts.len()
            && self.consts.iter().zip(&other.consts).all(|(a, b)| a.dtype() == b.dtype() && a.equals(b))
    }
}

impl OriginalOps {
    fn resolve<'a, T>(
        &'a self,
        r: OriginalRef,
        inputs: &'a [T],
        steps: &'a [Vec<T>],
        consts: &'a [T],
    ) -> Result<&'a T> {
        let missing = || Error::graph(format!("a fused op reads a missing value {r:?}"));
        match r {
            OriginalRef::Input(i) => inputs.get(i).ok_or_else(missing),
            OriginalRef::Step(j, k) => steps.get(j).and_then(|s| s.get(k)).ok_or_else(missing),
            OriginalRef::Const(c) => consts.get(c).ok_or_else(missing),
        }
    }

    /// The output types, by replaying each op's type inference.
    pub fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let consts: Vec<TensorType> = self.consts.iter().map(TensorType::of).collect();
        let mut steps: Vec<Vec<TensorType>> = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let types = step
                .inputs
                .iter()
                .map(|&r| self.resolve(r, inputs, &steps, &consts).cloned())
                .collect::<Result<Vec<_>>>()?;
            steps.push(step.op.output_types(&types).map_err(|e| e.at_node(step.op.name()))?);
        }
        self.outputs.iter().map(|&r| self.resolve(r, inputs, &steps, &consts).cloned()).collect()
    }

    /// Runs the original ops one by one (the semantics the fast paths must reproduce).
    pub fn run(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let mut steps: Vec<Vec<RaggedTensor>> = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let args = step
                .inputs
                .iter()
                .map(|&r| self.resolve(r, inputs, &steps, &self.consts).cloned())
                .collect::<Result<Vec<_>>>()?;
            steps.push(step.op.perform(ctx, &args).map_err(|e| e.at_node(step.op.name()))?);
        }
        self.outputs.iter().map(|&r| self.resolve(r, inputs, &steps, &self.consts).cloned()).collect()
    }
}
