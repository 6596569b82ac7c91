//! The kernel spec: what a fused op compiles from (its scalar graph, operand kinds, row
//! reductions, outputs, and the vector lane type when it has one), checked to be lowerable; the
//! kernel cache's key and the input of the plan.
//!
//! Two kinds of kernels:
//! - **vector** kernels ([`KernelSpec::simd`]): every value has one dtype (float32, float64,
//!   int32 or int64) but for bools computed inside (comparisons, logical ops, `where`
//!   conditions: lane masks), and every op a vector lowering ([`vector_op`]); loops run `f32x4` /
//!   `f64x2` / `i32x4` / `i64x2` vectors, two per iteration, then one, then a scalar tail
//!   computed by the same emitter. Vector reductions reassociate sums and products (lanes are
//!   summed separately, then combined), so results may differ from the sequential reference in
//!   the last bits; max and min are exact.
//! - **scalar** kernels, for everything else the interpreter defines ([`lowered_op`]): mixed
//!   dtypes, casts, comparisons, `where`, bool, 8/16-bit and unsigned integers, integer
//!   division, the rare math functions. They compute what the reference kernels compute, element
//!   by element and reductions in order. An op that faults (integer division by zero, negative
//!   integer exponent) makes the kernel return 1 and the caller run the reference
//!   implementation, which reports the error.
//!
//! Reductions lowered: sum, prod, max and min of numbers, all / any of bools (scalar kernels), mean
//! of floats. Anything else keeps running on the chunked reference implementation.

use ragtime_core::DType;
use ragtime_fused::{OperandKind, RowOutput, RowReduction, ScalarGraph, ScalarNode, ScalarRef};
use ragtime_ops::elemwise::ScalarOp;
use ragtime_ops::reduce::ReduceKind;

use crate::elem::Elem;

/// Everything a fused kernel is compiled from; the kernel cache's key (the scalar graph holds
/// the dtype of every input, constant and node). Only [`KernelSpec::new`] builds one, after
/// checking that every part can be lowered, so the fields are read through accessors.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    /// The scalar computation. Inputs: the op's operands, then one per reduction.
    graph: ScalarGraph,
    /// How each op input lines up with the iteration space.
    operands: Vec<OperandKind>,
    /// Row reductions, in pass order (empty for a `Composite`).
    reductions: Vec<RowReduction>,
    /// The outputs.
    outputs: Vec<RowOutput>,
    /// The lane type of the vector loops, when every value of the kernel has this one dtype and
    /// every op has a vector lowering ([`vector_op`]); `None` when the loops are scalar (mixed
    /// dtypes, bool, 8/16-bit or unsigned integers, calls to the interpreter's kernels,
    /// operations that can fault).
    simd: Option<Elem>,
    /// Values per item of a row kernel: 1 for scalar items, `k` for the items of `[.., *, k]`
    /// values (see `RowKernel::over_items`).
    item_width: usize,
    /// Per-row values computed once per row (see [`KernelSpec::hoisted`]).
    hoisted: Vec<(usize, usize)>,
    /// `Some(k)`: the rows are the `k`-value vectors of a trailing uniform axis (see
    /// `RowKernel::over_trailing_axis`), row `r`'s values `r * k..(r + 1) * k`.
    trailing: Option<usize>,
}

impl KernelSpec {
    /// The scalar computation. Inputs: the op's operands, then one per reduction, then one per
    /// hoisted per-row value ([`KernelSpec::hoisted`]).
    pub fn graph(&self) -> &ScalarGraph {
        &self.graph
    }

    /// How each op input lines up with the iteration space.
    pub fn operands(&self) -> &[OperandKind] {
        &self.operands
    }

    /// Row reductions, in pass order (empty for a `Composite`).
    pub fn reductions(&self) -> &[RowReduction] {
        &self.reductions
    }

    /// The outputs.
    pub fn outputs(&self) -> &[RowOutput] {
        &self.outputs
    }

    /// The lane type of the vector loops, when every value of the kernel has one dtype with
    /// vector kernels and every op a vector lowering ([`vector_op`]); `None` for scalar loops.
    pub fn simd(&self) -> Option<Elem> {
        self.simd
    }

    /// Per-row values of a row kernel's element outputs computed once per row, not at every
    /// element: `(node, input)`, node `node` (an expression of per-row operands, reduction results,
    /// scalars and constants: `log(sum)` of a log-softmax, `rsqrt(variance)` of a layer norm)
    /// read by the element expressions as graph input `input`, a per-row input like a
    /// reduction's result. The node stays in the graph (reading the per-row inputs) for the row's
    /// evaluation. None when a reduction reads such a value (a pass cannot read what is computed
    /// after the passes).
    pub fn hoisted(&self) -> &[(usize, usize)] {
        &self.hoisted
    }

    /// Values per item of a row kernel (1 for scalar items and for flat kernels).
    pub fn item_width(&self) -> usize {
        self.item_width
    }

    /// The same spec over items of `width` values (a row kernel over `[.., *, k]` values, see
    /// `RowKernel::over_items`); a flat kernel reads every value alike, so it keeps width 1.
    pub fn over_items(mut self, width: usize) -> KernelSpec {
        if self.rows() && width > 0 {
            self.item_width = width;
        }
        self
    }

    /// The same spec over rows of the trailing uniform axis of `length` values (see
    /// `RowKernel::over_trailing_axis`): the same kernel as over ragged rows, whose rows all have
    /// `length` values, which the plan may use.
    pub fn over_trailing_axis(mut self, length: usize) -> KernelSpec {
        if self.rows() && length > 0 && self.item_width == 1 {
            self.trailing = Some(length);
        }
        self
    }

    /// The length of every row, when the rows are a trailing uniform axis.
    pub fn trailing_length(&self) -> Option<usize> {
        self.trailing
    }

    /// True when the kernel loops over rows (reductions or per-row operands), false for a flat
    /// loop over elements.
    pub fn rows(&self) -> bool {
        !self.reductions.is_empty() || self.operands.contains(&OperandKind::PerRow)
    }

    /// The dtype of output `j`.
    pub fn output_dtype(&self, j: usize) -> DType {
        match self.outputs.get(j) {
            Some(RowOutput::Elements(r)) => self.graph.dtype(*r),
            Some(RowOutput::Reduction { index, .. }) => self.graph.dtype(ScalarRef::Input(self.operands.len() + index)),
            None => DType::Bool,
        }
    }

    /// The spec of a fused computation, if every part of it can be lowered: every node an op
    /// [`lowered_op`] accepts on its operands' dtypes (strings never), every reduction one the
    /// reference defines without changing the dtype (sum, prod, max, min of numbers, all / any
    /// of bools, mean of floats).
    pub fn new(
        graph: &ScalarGraph,
        operands: &[OperandKind],
        reductions: &[RowReduction],
        outputs: &[RowOutput],
    ) -> Option<KernelSpec> {
        if graph.inputs().len() != operands.len() + reductions.len() || graph.inputs().contains(&DType::String) {
            return None;
        }
        for node in graph.nodes() {
            let dtypes: Vec<DType> = node.args.iter().map(|&a| graph.dtype(a)).collect();
            if !node_lowered(node.op, &dtypes) || node.op.output_dtype(&dtypes).ok() != Some(node.dtype) {
                return None;
            }
        }
        for (k, red) in reductions.iter().enumerate() {
            let dtype = graph.dtype(red.arg);
            // Folds with the op the reference folds with; the result (graph input
            // `operands.len() + k`) has the argument's dtype (so integer means, which give
            // floats, are left to the reference).
            let lowered = match red.kind {
                ReduceKind::Mean => dtype.is_float(),
                kind => lowered_op(kind.combine(), dtype),
            };
            if !lowered || graph.inputs()[operands.len() + k] != dtype {
                return None;
            }
        }
        let simd = simd_elem(graph, reductions, outputs);
        let (graph, hoisted) = hoist_row_values(graph, operands, reductions, outputs);
        Some(KernelSpec {
            graph,
            operands: operands.to_vec(),
            reductions: reductions.to_vec(),
            outputs: outputs.to_vec(),
            simd,
            item_width: 1,
            hoisted,
            trailing: None,
        })
    }
}

/// The graph with its per-row values hoisted out of the element expressions (see
/// [`KernelSpec::hoisted`]), and the hoisted `(node, input)` pairs. A node is per-row when it
/// reads per-row inputs (per-row operands, reduction results) and otherwise only scalars,
/// constants and per-row nodes; those that an element-level node reads are hoisted, bools
/// excepted (they are lane masks in vector kernels, never stored).
fn hoist_row_values(
    graph: &ScalarGraph,
    operands: &[OperandKind],
    reductions: &[RowReduction],
    outputs: &[RowOutput],
) -> (ScalarGraph, Vec<(usize, usize)>) {
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Level {
        Constant,
        Row,
        Element,
    }
    let n_ops = operands.len();
    let level_of = |levels: &[Level], r: ScalarRef| match r {
        ScalarRef::Input(i) if i >= n_ops || operands[i] == OperandKind::PerRow => Level::Row,
        ScalarRef::Input(i) if operands[i] == OperandKind::Scalar => Level::Constant,
        ScalarRef::Input(_) => Level::Element,
        ScalarRef::Node(j) => levels[j],
        ScalarRef::Const(_) => Level::Constant,
    };
    let mut levels: Vec<Level> = Vec::with_capacity(graph.nodes().len());
    for node in graph.nodes() {
        let level = node.args.iter().map(|&a| level_of(&levels, a)).max().unwrap_or(Level::Constant);
        levels.push(level);
    }
    let unchanged = (graph.clone(), Vec::new());
    let args: Vec<ScalarRef> = reductions.iter().map(|r| r.arg).collect();
    let (read_by_passes, _) = expression(graph, &args, &[]);
    let row_output = RowOutput::elements(outputs).iter().any(|&r| level_of(&levels, r) == Level::Row);
    if row_output || (0..levels.len()).any(|j| read_by_passes[j] && levels[j] == Level::Row) {
        return unchanged;
    }
    let mut hoisted: Vec<(usize, usize)> = Vec::new();
    for (j, node) in graph.nodes().iter().enumerate() {
        if levels[j] != Level::Element {
            continue;
        }
        for &a in &node.args {
            if let ScalarRef::Node(h) = a {
                let wanted = levels[h] == Level::Row && graph.nodes()[h].dtype != DType::Bool;
                if wanted && !hoisted.iter().any(|&(n, _)| n == h) {
                    hoisted.push((h, graph.inputs().len() + hoisted.len()));
                }
            }
        }
    }
    if hoisted.is_empty() {
        return unchanged;
    }
    let mut inputs = graph.inputs().to_vec();
    inputs.extend(hoisted.iter().map(|&(h, _)| graph.nodes()[h].dtype));
    let mut rebuilt = ScalarGraph::new(inputs);
    let input_of = |r: ScalarRef| match r {
        ScalarRef::Node(h) => hoisted.iter().find(|&&(n, _)| n == h).map_or(r, |&(_, i)| ScalarRef::Input(i)),
        other => other,
    };
    for (j, node) in graph.nodes().iter().enumerate() {
        let args: Vec<ScalarRef> = if levels[j] == Level::Element {
            node.args.iter().map(|&a| input_of(a)).collect()
        } else {
            node.args.clone()
        };
        if rebuilt.push(node.op, args).is_err() {
            return unchanged;
        }
    }
    if rebuilt.set_outputs(graph.outputs().to_vec()).is_err() {
        return unchanged;
    }
    (rebuilt, hoisted)
}

/// The vector lane type of a kernel whose inputs, constants, outputs and non-bool nodes all have
/// one dtype with vector kernels, whose ops all have vector lowerings, and whose bools are
/// computed inside (comparisons of that dtype, logical ops, `where` conditions; in vector loops
/// they are lane masks, so they are never loaded, stored or constant). Reductions: sums,
/// products, max, min and float means.
fn simd_elem(graph: &ScalarGraph, reductions: &[RowReduction], outputs: &[RowOutput]) -> Option<Elem> {
    let dtype = *graph.inputs().first()?;
    let elem = Elem::of(dtype)?;
    let computed_bool = |a: &ScalarRef| matches!(a, ScalarRef::Node(_)) && graph.dtype(*a) == DType::Bool;
    let of_dtype = |a: &ScalarRef| graph.dtype(*a) == dtype;
    let node_ok = |n: &ScalarNode| match n.op {
        op if op.is_comparison() => n.args.iter().all(of_dtype),
        ScalarOp::Where => computed_bool(&n.args[0]) && n.args[1..].iter().all(of_dtype),
        ScalarOp::LogicalAnd | ScalarOp::LogicalOr | ScalarOp::LogicalXor | ScalarOp::LogicalNot => {
            n.args.iter().all(computed_bool)
        }
        op => n.dtype == dtype && vector_op(op, dtype) && n.args.iter().all(of_dtype),
    };
    let uniform = graph.inputs().iter().all(|&d| d == dtype)
        && graph.nodes().iter().all(node_ok)
        && RowOutput::elements(outputs).iter().all(of_dtype)
        && reductions.iter().all(|r| !matches!(r.kind, ReduceKind::All | ReduceKind::Any) && of_dtype(&r.arg));
    uniform.then_some(elem)
}

/// True when the JIT lowers `op` on operands of `dtype` (`where`: a bool condition and two
/// operands of `dtype`): exactly when the interpreter defines it, strings aside.
pub fn lowered_op(op: ScalarOp, dtype: DType) -> bool {
    let dtypes = if op == ScalarOp::Where { vec![DType::Bool, dtype, dtype] } else { vec![dtype; op.arity()] };
    node_lowered(op, &dtypes)
}

fn node_lowered(op: ScalarOp, dtypes: &[DType]) -> bool {
    !dtypes.contains(&DType::String) && op.output_dtype(dtypes).is_ok_and(|out| out != DType::String)
}

/// True when vector kernels compute `op` on `dtype` (used when a whole kernel has that one
/// dtype): on float32 and float64 the arithmetic, rounding and math functions, on int32 and int64
/// wrapping arithmetic, maximum / minimum, abs, square, the bitwise ops and the rounding ops (the
/// identity on integers). The emitter's table (`lower::lanes::lane_op`) decides; the other ops run
/// in scalar loops.
pub fn vector_op(op: ScalarOp, dtype: DType) -> bool {
    Elem::of(dtype).is_some_and(|elem| crate::lower::lanes::lane_op(elem, op).is_some())
}

/// What the expressions `roots` read, not looking below the nodes in `stop` (whose values are
/// read from a buffer): `(nodes, inputs)`, one flag per node and per graph input.
pub(crate) fn expression(graph: &ScalarGraph, roots: &[ScalarRef], stop: &[usize]) -> (Vec<bool>, Vec<bool>) {
    let mut nodes = vec![false; graph.nodes().len()];
    let mut inputs = vec![false; graph.inputs().len()];
    let mut stack = roots.to_vec();
    while let Some(r) = stack.pop() {
        match r {
            ScalarRef::Node(j) => {
                let first_visit = !std::mem::replace(&mut nodes[j], true);
                if first_visit && !stop.contains(&j) {
                    stack.extend(graph.nodes()[j].args.iter().copied());
                }
            }
            ScalarRef::Input(i) => inputs[i] = true,
            ScalarRef::Const(_) => {}
        }
    }
    (nodes, inputs)
}
