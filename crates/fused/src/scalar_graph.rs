//! `ScalarGraph`: the inner graph of a fused op — scalar ops over numbered inputs and inlined
//! constants, in topological order — with its printouts and its chunk-at-a-time evaluation.

use std::collections::HashMap;
use std::fmt::Write;

use ragtime_core::{dispatch_dtype, DType, DenseTensor, Element, Error, ExecContext, RaggedTensor, Result};

use ragtime_ops::elemwise::apply_aligned;
use ragtime_ops::elemwise::ScalarOp;

/// A scalar constant inlined into a [`ScalarGraph`]. Equal and hashed by dtype and bits, so
/// `NaN` equals `NaN` and `-0.0` differs from `0.0` (what merging constants needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScalarConst {
    dtype: DType,
    /// Floats: the bits of the value as `f64` (exact for float32); integers and bool: the value
    /// as `i64`, wrapping for `uint64`.
    bits: u64,
}

impl ScalarConst {
    /// The constant held by a rank-0 numeric or bool tensor.
    pub fn from_tensor(t: &RaggedTensor) -> Option<Self> {
        let dense = t.as_dense()?;
        if dense.rank() != 0 {
            return None;
        }
        dispatch_dtype!(dense.dtype(),
            T => {
                let v = *dense.as_slice::<T>()?.first()?;
                Some(Self::from_value(v))
            },
            string => None)
    }

    /// The constant `v`.
    pub fn from_value<T: Element>(v: T) -> Self {
        let bits = if T::DTYPE.is_float() { v.to_f64().to_bits() } else { v.to_i64() as u64 };
        ScalarConst { dtype: T::DTYPE, bits }
    }

    /// Its dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Its value as `T` (the caller dispatched on [`ScalarConst::dtype`]).
    pub fn value<T: Element>(&self) -> T {
        if self.dtype.is_float() {
            T::from_f64(f64::from_bits(self.bits))
        } else {
            T::from_i64(self.bits as i64)
        }
    }

    /// The value as `f64` (exact for every float and for integers up to 2^53).
    pub fn as_f64(&self) -> f64 {
        dispatch_dtype!(self.dtype, T => self.value::<T>().to_f64(), string => f64::NAN)
    }

    /// A 1-d tensor of `len` copies.
    pub fn fill(&self, len: usize) -> Result<DenseTensor> {
        dispatch_dtype!(self.dtype,
            T => DenseTensor::from_vec(vec![len], vec![self.value::<T>(); len]),
            string => Err(Error::dtype("composite", "string constants are not fused")))
    }

    /// The rank-0 tensor.
    pub fn to_tensor(&self) -> RaggedTensor {
        dispatch_dtype!(self.dtype,
            T => RaggedTensor::dense(DenseTensor::scalar(self.value::<T>())),
            string => RaggedTensor::dense(DenseTensor::scalar(0i32)))
    }
}

impl std::fmt::Display for ScalarConst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        dispatch_dtype!(self.dtype, T => write!(f, "{}", self.value::<T>()), string => f.write_str("?"))
    }
}

/// An operand of a scalar node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarRef {
    /// Input `i` of the graph (printed `i0`, `i1`, ...).
    Input(usize),
    /// The result of node `j`.
    Node(usize),
    /// An inlined constant.
    Const(ScalarConst),
}

/// One scalar op applied to earlier values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScalarNode {
    /// The function.
    pub op: ScalarOp,
    /// Its operands (inputs, earlier nodes, constants).
    pub args: Vec<ScalarRef>,
    /// The result dtype ([`ScalarOp::output_dtype`] of the operands').
    pub dtype: DType,
}

/// A DAG of scalar ops over typed inputs: the body of a fused kernel. Hashable, so kernel caches
/// can key on it.
///
/// Architecture invariant: nodes only read inputs of the graph, constants and earlier nodes
/// (so index order is a topological order), and outputs only name inputs, constants and nodes
/// of the graph. The fields are private and [`ScalarGraph::push`] /
/// [`ScalarGraph::set_outputs`] check every reference, so evaluators and the JIT may index
/// inputs and nodes by reference without further checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ScalarGraph {
    inputs: Vec<DType>,
    nodes: Vec<ScalarNode>,
    outputs: Vec<ScalarRef>,
}

impl ScalarGraph {
    /// An empty graph over inputs of these dtypes.
    pub fn new(inputs: Vec<DType>) -> Self {
        ScalarGraph { inputs, nodes: Vec::new(), outputs: Vec::new() }
    }

    /// The dtype of each input.
    pub fn inputs(&self) -> &[DType] {
        &self.inputs
    }

    /// The nodes, in evaluation order.
    pub fn nodes(&self) -> &[ScalarNode] {
        &self.nodes
    }

    /// What the graph computes.
    pub fn outputs(&self) -> &[ScalarRef] {
        &self.outputs
    }

    /// Checks that `r` names an input, a node or a constant of the graph.
    pub fn check_ref(&self, r: ScalarRef) -> Result<()> {
        match r {
            ScalarRef::Input(i) if i >= self.inputs.len() => {
                Err(Error::graph(format!("fused graph: input i{i} of a graph of {} inputs", self.inputs.len())))
            }
            ScalarRef::Node(j) if j >= self.nodes.len() => Err(Error::graph(format!(
                "fused graph: node %{j} read by a later value of a graph of {} nodes",
                self.nodes.len()
            ))),
            _ => Ok(()),
        }
    }

    /// Sets what the graph computes; each output must name an input, node or constant of it.
    pub fn set_outputs(&mut self, outputs: Vec<ScalarRef>) -> Result<()> {
        outputs.iter().try_for_each(|&r| self.check_ref(r))?;
        self.outputs = outputs;
        Ok(())
    }

    /// The dtype of a value.
    pub fn dtype(&self, r: ScalarRef) -> DType {
        match r {
            ScalarRef::Input(i) => self.inputs.get(i).copied().unwrap_or(DType::Bool),
            ScalarRef::Node(j) => self.nodes.get(j).map_or(DType::Bool, |n| n.dtype),
            ScalarRef::Const(c) => c.dtype,
        }
    }

    /// Appends `op(args)`, checking that each operand is an input, an earlier node or a constant,
    /// and the operand dtypes as [`ragtime_ops::elemwise::Elemwise`] does.
    pub fn push(&mut self, op: ScalarOp, args: Vec<ScalarRef>) -> Result<ScalarRef> {
        args.iter().try_for_each(|&r| self.check_ref(r))?;
        let dtypes: Vec<DType> = args.iter().map(|&a| self.dtype(a)).collect();
        let dtype = op.output_dtype(&dtypes)?;
        if op.arity() != args.len() {
            return Err(Error::argument(op.name(), format!("takes {} inputs, got {}", op.arity(), args.len())));
        }
        self.nodes.push(ScalarNode { op, args, dtype });
        Ok(ScalarRef::Node(self.nodes.len() - 1))
    }

    /// True when any node can fault at run time (integer division by zero, ...).
    pub fn can_fault(&self) -> bool {
        self.nodes.iter().any(|n| n.op.can_fault() && !n.dtype.is_float())
    }

    /// One expression per node, as infix text (`tanh((i0 * 2) + 1)`); a node whose text would be
    /// long is referred to by its number (`%3`), so printing stays linear in the graph's size.
    fn node_texts(&self, input: &dyn Fn(usize) -> String) -> Vec<String> {
        let mut texts: Vec<String> = Vec::with_capacity(self.nodes.len());
        let arg = |texts: &[String], r: &ScalarRef, nested: bool| match r {
            ScalarRef::Input(i) => input(*i),
            ScalarRef::Const(c) => c.to_string(),
            ScalarRef::Node(j) => {
                let t = &texts[*j];
                if t.len() > 60 {
                    format!("%{j}")
                } else if nested && self.nodes[*j].op.infix().is_some() {
                    format!("({t})")
                } else {
                    t.clone()
                }
            }
        };
        for node in &self.nodes {
            let text = match (node.op.infix(), node.args.as_slice()) {
                (Some(sym), [a, b]) => format!("{} {sym} {}", arg(&texts, a, true), arg(&texts, b, true)),
                _ => {
                    let args: Vec<String> = node.args.iter().map(|a| arg(&texts, a, false)).collect();
                    format!("{}({})", node.op, args.join(", "))
                }
            };
            texts.push(text);
        }
        texts
    }

    /// Values as infix expressions, inputs named by `input` (e.g. `(tanh((i0 * 2) + 1) * i1) - i0`).
    pub fn expressions(&self, refs: &[ScalarRef], input: &dyn Fn(usize) -> String) -> Vec<String> {
        let texts = self.node_texts(input);
        refs.iter()
            .map(|r| match r {
                ScalarRef::Input(i) => input(*i),
                ScalarRef::Const(c) => c.to_string(),
                ScalarRef::Node(j) if texts[*j].len() > 60 => format!("%{j}"),
                ScalarRef::Node(j) => texts[*j].clone(),
            })
            .collect()
    }

    /// The outputs as infix expressions over `i0`, `i1`, ...
    pub fn expression(&self) -> String {
        self.expressions(&self.outputs, &|i| format!("i{i}")).join(", ")
    }

    /// The graph as a listing for `debugprint`'s `Inner graphs:` section: one line per node
    /// (`%2 = tanh(%1) <float32>`), then the outputs.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        let name = |r: &ScalarRef| match r {
            ScalarRef::Input(i) => format!("i{i}"),
            ScalarRef::Node(j) => format!("%{j}"),
            ScalarRef::Const(c) => format!("{c}:{}", c.dtype),
        };
        let inputs: Vec<String> = self.inputs.iter().enumerate().map(|(i, d)| format!("i{i}: {d}")).collect();
        let _ = writeln!(out, "inputs: {}", inputs.join(", "));
        for (j, n) in self.nodes.iter().enumerate() {
            let args: Vec<String> = n.args.iter().map(name).collect();
            let _ = writeln!(out, "%{j} = {}({}) <{}>", n.op, args.join(", "), n.dtype);
        }
        if !self.outputs.is_empty() {
            let outs: Vec<String> = self.outputs.iter().map(name).collect();
            let _ = writeln!(out, "outputs: {}", outs.join(", "));
        }
        out
    }

    /// Evaluates the nodes that `wanted` needs on one chunk of `len` elements. `memo` holds
    /// node results computed earlier for this chunk (they are reused), `columns` the input
    /// columns (fetched once through `fetch` when first needed). Faults are placed by `locate`
    /// (chunk-relative element index).
    pub(crate) fn eval_chunk(
        &self,
        ctx: &ExecContext,
        wanted: &[ScalarRef],
        chunk: &mut Chunk<'_>,
        locate: &dyn Fn(usize) -> String,
    ) -> Result<()> {
        let mut needed = vec![false; self.nodes.len()];
        let mut stack: Vec<usize> =
            wanted.iter().filter_map(|r| if let ScalarRef::Node(j) = r { Some(*j) } else { None }).collect();
        while let Some(j) = stack.pop() {
            if needed[j] || chunk.nodes[j].is_some() {
                continue;
            }
            needed[j] = true;
            stack.extend(self.nodes[j].args.iter().filter_map(|r| match r {
                ScalarRef::Node(k) => Some(*k),
                _ => None,
            }));
        }
        for (j, node) in self.nodes.iter().enumerate() {
            if !needed[j] {
                continue;
            }
            let args = node.args.iter().map(|&a| chunk.value(a)).collect::<Result<Vec<_>>>()?;
            let value = apply_aligned(ctx, node.op, &args, vec![chunk.len], node.dtype, locate)?;
            chunk.nodes[j] = Some(value);
        }
        for &w in wanted {
            if let ScalarRef::Input(i) = w {
                chunk.input(i)?;
            }
        }
        Ok(())
    }
}

/// The values of one chunk being evaluated: input columns and node results, each `len` long.
pub(crate) struct Chunk<'a> {
    pub(crate) len: usize,
    pub(crate) inputs: Vec<Option<DenseTensor>>,
    pub(crate) nodes: Vec<Option<DenseTensor>>,
    pub(crate) fetch: &'a dyn Fn(usize) -> Result<DenseTensor>,
}

impl<'a> Chunk<'a> {
    pub(crate) fn new(graph: &ScalarGraph, len: usize, fetch: &'a dyn Fn(usize) -> Result<DenseTensor>) -> Self {
        Chunk { len, inputs: vec![None; graph.inputs.len()], nodes: vec![None; graph.nodes.len()], fetch }
    }

    fn input(&mut self, i: usize) -> Result<DenseTensor> {
        if let Some(v) = self.inputs.get(i).and_then(Clone::clone) {
            return Ok(v);
        }
        let v = (self.fetch)(i)?;
        if let Some(slot) = self.inputs.get_mut(i) {
            *slot = Some(v.clone());
        }
        Ok(v)
    }

    /// The column of a value (a constant is filled to the chunk's length).
    pub(crate) fn value(&mut self, r: ScalarRef) -> Result<DenseTensor> {
        match r {
            ScalarRef::Input(i) => self.input(i),
            ScalarRef::Node(j) => self
                .nodes
                .get(j)
                .and_then(Clone::clone)
                .ok_or_else(|| Error::graph(format!("fused node %{j} read before it was computed"))),
            ScalarRef::Const(c) => c.fill(self.len),
        }
    }
}

/// Interns scalar nodes while a fused graph is built, so a subexpression that occurs twice is
/// computed once (merge inside the kernel).
#[derive(Debug, Default)]
pub struct ScalarGraphBuilder {
    graph: ScalarGraph,
    seen: HashMap<(ScalarOp, Vec<ScalarRef>), ScalarRef>,
}

impl ScalarGraphBuilder {
    /// A builder over inputs of these dtypes.
    pub fn new(inputs: Vec<DType>) -> Self {
        ScalarGraphBuilder { graph: ScalarGraph::new(inputs), seen: HashMap::new() }
    }

    /// Adds an input, returning its reference.
    pub fn input(&mut self, dtype: DType) -> ScalarRef {
        self.graph.inputs.push(dtype);
        ScalarRef::Input(self.graph.inputs.len() - 1)
    }

    /// `op(args)`, reusing an identical earlier node.
    pub fn node(&mut self, op: ScalarOp, args: Vec<ScalarRef>) -> Result<ScalarRef> {
        if let Some(&r) = self.seen.get(&(op, args.clone())) {
            return Ok(r);
        }
        let r = self.graph.push(op, args.clone())?;
        self.seen.insert((op, args), r);
        Ok(r)
    }

    /// The dtype of a value built so far.
    pub fn dtype(&self, r: ScalarRef) -> DType {
        self.graph.dtype(r)
    }

    /// The finished graph with these outputs (each an input, node or constant of it).
    pub fn finish(mut self, outputs: Vec<ScalarRef>) -> Result<ScalarGraph> {
        self.graph.set_outputs(outputs)?;
        Ok(self.graph)
    }
}
