//! Lowering of the optimizer's fused ops to Cranelift IR: a [`KernelSpec`] (scalar graph with
//! its dtypes, operand kinds, row reductions, outputs) becomes one machine-code kernel with the
//! [`FusedFn`](crate::FusedFn) signature.
//!
//! Two loop shapes:
//! - **flat** (a `Composite` whose operands are full or scalar): one loop over the elements
//!   `begin..end`;
//! - **rows** (a `RowKernel`, or a `Composite` with per-row operands): a loop over the rows
//!   `begin..end`; each row loads its offsets once, then makes one pass per reduction and one
//!   pass computing the element outputs, while the row is in cache (kernels with several passes
//!   take the rows in small blocks, pass by pass, see `emit_rows`).
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
//!   division, the rare math functions (see [`crate::scalar`]). They compute what the reference
//!   kernels compute, element by element and reductions in order. An op that faults (integer
//!   division by zero, negative integer exponent) makes the kernel return 1 and the caller run
//!   the reference implementation, which reports the error.
//!
//! Reductions lowered: sum, prod, max and min of numbers, all / any of bools (scalar kernels), mean
//! of floats. Anything else keeps running on the chunked reference implementation.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, Block, Endianness, InstBuilder, MemFlagsData, StackSlot, StackSlotData, StackSlotKind, Type, Value,
};
use cranelift_frontend::FunctionBuilder;
use ragtime_core::{dispatch_dtype, DType};
use ragtime_ops::elemwise::ScalarOp;
use ragtime_ops::fused::{OperandKind, RowOutput, RowReduction, ScalarConst, ScalarGraph, ScalarNode, ScalarRef};
use ragtime_ops::reduce::ReduceKind;

use crate::kernel::FusedParams;
use crate::scalar::{emit_scalar_op, float_cc, int_cc, int_const, ir_type};
use crate::vmath::{self, Float, Lanes, UnaryMath};

/// `a > b ? a : b` (or `<` for the minimum) on integers, lane by lane: compare and select, which
/// Cranelift lowers for every integer vector shape.
fn int_extreme(b: &mut FunctionBuilder, max: bool, x: Value, y: Value) -> Value {
    let cc = if max { IntCC::SignedGreaterThan } else { IntCC::SignedLessThan };
    let pick = b.ins().icmp(cc, x, y);
    if b.func.dfg.value_type(x).is_vector() {
        b.ins().bitselect(pick, x, y)
    } else {
        b.ins().select(pick, x, y)
    }
}

/// The element type of a vector kernel (every input, constant and node has it), and of row
/// reductions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Elem {
    /// float32, `f32x4` vectors.
    F32,
    /// float64, `f64x2` vectors.
    F64,
    /// int32, `i32x4` vectors (wrapping arithmetic, as the reference).
    I32,
    /// int64, `i64x2` vectors (wrapping arithmetic, as the reference).
    I64,
}

impl Elem {
    /// The element type of `dtype`, if kernels exist for it.
    pub fn of(dtype: DType) -> Option<Elem> {
        Some(match dtype {
            DType::F32 => Elem::F32,
            DType::F64 => Elem::F64,
            DType::I32 => Elem::I32,
            DType::I64 => Elem::I64,
            _ => return None,
        })
    }

    /// The float precision, for floats.
    pub fn float(self) -> Option<Float> {
        match self {
            Elem::F32 => Some(Float::F32),
            Elem::F64 => Some(Float::F64),
            _ => None,
        }
    }

    fn scalar_ty(self) -> Type {
        match self {
            Elem::F32 => types::F32,
            Elem::F64 => types::F64,
            Elem::I32 => types::I32,
            Elem::I64 => types::I64,
        }
    }

    fn vector_ty(self) -> Type {
        match self {
            Elem::F32 => types::F32X4,
            Elem::F64 => types::F64X2,
            Elem::I32 => types::I32X4,
            Elem::I64 => types::I64X2,
        }
    }

    /// Lanes of a 128-bit vector.
    fn lanes(self) -> i64 {
        match self {
            Elem::F32 | Elem::I32 => 4,
            Elem::F64 | Elem::I64 => 2,
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Elem::F32 | Elem::I32 => 4,
            Elem::F64 | Elem::I64 => 8,
        }
    }
}

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
}

impl KernelSpec {
    /// The scalar computation. Inputs: the op's operands, then one per reduction.
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
        Some(KernelSpec {
            graph: graph.clone(),
            operands: operands.to_vec(),
            reductions: reductions.to_vec(),
            outputs: outputs.to_vec(),
            simd: simd_elem(graph, reductions, outputs),
        })
    }
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

/// The ops with a vector lowering on `dtype` (used when a whole kernel has that one dtype): on
/// float32 and float64 the arithmetic, rounding and math functions below; on int32 and int64
/// wrapping arithmetic, maximum / minimum, abs, square, the bitwise ops and the rounding ops
/// (which are the identity on integers). The other ops run in scalar loops.
pub fn vector_op(op: ScalarOp, dtype: DType) -> bool {
    if matches!(dtype, DType::I32 | DType::I64) {
        return matches!(
            op,
            ScalarOp::Add
                | ScalarOp::Subtract
                | ScalarOp::Multiply
                | ScalarOp::Maximum
                | ScalarOp::Minimum
                | ScalarOp::Negative
                | ScalarOp::Abs
                | ScalarOp::Square
                | ScalarOp::BitwiseAnd
                | ScalarOp::BitwiseOr
                | ScalarOp::BitwiseXor
                | ScalarOp::BitwiseInvert
                | ScalarOp::SquaredDifference
                | ScalarOp::Floor
                | ScalarOp::Ceil
                | ScalarOp::Round
        );
    }
    matches!(dtype, DType::F32 | DType::F64)
        && matches!(
            op,
            ScalarOp::Add
                | ScalarOp::Subtract
                | ScalarOp::Multiply
                | ScalarOp::Divide
                | ScalarOp::FloorDiv
                | ScalarOp::Pow
                | ScalarOp::Maximum
                | ScalarOp::Minimum
                | ScalarOp::Negative
                | ScalarOp::Abs
                | ScalarOp::Square
                | ScalarOp::Sqrt
                | ScalarOp::Exp
                | ScalarOp::Log
                | ScalarOp::Sin
                | ScalarOp::Cos
                | ScalarOp::Tanh
                | ScalarOp::Sigmoid
                | ScalarOp::Floor
                | ScalarOp::Ceil
                | ScalarOp::Round
                | ScalarOp::Rint
                | ScalarOp::Reciprocal
                | ScalarOp::Rsqrt
                | ScalarOp::Softsign
                | ScalarOp::SquaredDifference
        )
}

/// Unaligned, non-trapping accesses: buffers are element-aligned and bounds are checked by the
/// caller before the kernel runs.
fn mem() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// A value available both as a scalar and, in vector kernels, splat into a vector (scalar
/// kernels keep the scalar in both fields).
#[derive(Clone, Copy)]
struct Both {
    scalar: Value,
    vector: Value,
}

/// A per-row input (per-row operand or reduction result) as an element evaluation sees it.
#[derive(Clone, Copy)]
enum RowValue {
    /// Not read by the evaluation.
    Absent,
    /// The current row's value.
    Row(Both),
    /// A block evaluated flat (see [`emit_rows`]): the address element 0 would have in a scratch
    /// buffer holding the value at each element of the block (only the block's elements are
    /// valid), so it loads like a full operand.
    Expanded(Value),
}

struct Emitter<'s> {
    spec: &'s KernelSpec,
    ptr: Type,
    in_ptrs: Vec<Value>,
    out_ptrs: Vec<Value>,
    /// Scalar operands, loaded once.
    scalars: Vec<Option<Both>>,
    /// Row kernels: expensive reduction arguments that an element output also needs, kept in
    /// that output's buffer by the reduction's pass and read back by the output pass instead of
    /// being computed twice (softmax's `exp(x - max)`): `(node, output)`.
    stash: Vec<(usize, usize)>,
    /// The block a faulting op branches to: the kernel returns 1.
    fault: Block,
}

impl Emitter<'_> {
    /// The type of a value of `dtype`: the kernel's vector type, or the scalar type of `dtype`.
    fn ty(&self, dtype: DType, vector: bool) -> Type {
        match (self.spec.simd, vector) {
            (Some(elem), true) => elem.vector_ty(),
            _ => ir_type(dtype),
        }
    }

    fn both(&self, b: &mut FunctionBuilder, s: Value) -> Both {
        match self.spec.simd {
            Some(elem) => Both { scalar: s, vector: b.ins().splat(elem.vector_ty(), s) },
            None => Both { scalar: s, vector: s },
        }
    }

    /// The stash of the row-at-a-time passes as `eval` takes it: each node with the output
    /// buffer that keeps its values.
    fn out_stash(&self) -> Vec<(usize, Value)> {
        self.stash.iter().map(|&(n, out)| (n, self.out_ptrs[out])).collect()
    }

    /// A constant of the vector kernel's element type: `float` for floats, `int` for integers.
    fn lane_constant(&self, b: &mut FunctionBuilder, elem: Elem, float: f64, int: i64) -> Both {
        let s = match elem {
            Elem::F32 => b.ins().f32const(float as f32),
            Elem::F64 => b.ins().f64const(float),
            Elem::I32 | Elem::I64 => b.ins().iconst(elem.scalar_ty(), int),
        };
        self.both(b, s)
    }

    fn scalar_const(&self, b: &mut FunctionBuilder, c: &ScalarConst, vector: bool) -> Value {
        let s = match c.dtype() {
            DType::F32 => b.ins().f32const(c.as_f64() as f32),
            DType::F64 => b.ins().f64const(c.as_f64()),
            d => int_const(b, ir_type(d), c.value::<i64>()),
        };
        match (self.spec.simd, vector) {
            (Some(elem), true) => b.ins().splat(elem.vector_ty(), s),
            _ => s,
        }
    }

    /// Address of element `idx` of buffer `base` holding `dtype` values.
    fn addr(&self, b: &mut FunctionBuilder, base: Value, idx: Value, dtype: DType) -> Value {
        let off = b.ins().imul_imm_s(idx, dtype.size_of() as i64);
        b.ins().iadd(base, off)
    }

    /// Evaluates `wanted` at element `idx`; `row_values[i]` gives per-row inputs (per-row
    /// operands and reduction results) for the current row or block; nodes listed in `stash`
    /// are loaded from the buffer given there (indexed by element) instead of computed. A
    /// faulting op branches to `self.fault`; evaluation continues in a new block.
    fn eval(
        &self,
        b: &mut FunctionBuilder,
        wanted: &[ScalarRef],
        idx: Value,
        vector: bool,
        row_values: &[RowValue],
        stash: &[(usize, Value)],
    ) -> Vec<Value> {
        let graph = &self.spec.graph;
        let stashed = |j: usize| stash.iter().find(|(n, _)| *n == j).map(|&(_, base)| base);
        let mut inputs: Vec<Option<Value>> = vec![None; graph.inputs().len()];
        let mut nodes: Vec<Option<Value>> = vec![None; graph.nodes().len()];
        let mut needed = vec![false; graph.nodes().len()];
        let mut stack: Vec<ScalarRef> = wanted.to_vec();
        while let Some(r) = stack.pop() {
            match r {
                ScalarRef::Node(j) if !needed[j] => {
                    needed[j] = true;
                    if stashed(j).is_none() {
                        stack.extend(graph.nodes()[j].args.iter().copied());
                    }
                }
                ScalarRef::Input(i) if inputs[i].is_none() => {
                    let pick = |x: Both| if vector { x.vector } else { x.scalar };
                    let dtype = graph.inputs()[i];
                    let v = match (self.spec.operands.get(i), self.scalars.get(i).copied().flatten()) {
                        (Some(OperandKind::Full), _) => {
                            let a = self.addr(b, self.in_ptrs[i], idx, dtype);
                            b.ins().load(self.ty(dtype, vector), mem(), a, 0)
                        }
                        (Some(OperandKind::Scalar), Some(s)) => pick(s),
                        _ => match row_values[i] {
                            RowValue::Row(x) => pick(x),
                            RowValue::Expanded(base) => {
                                let a = self.addr(b, base, idx, dtype);
                                b.ins().load(self.ty(dtype, vector), mem(), a, 0)
                            }
                            RowValue::Absent => unreachable!("per-row input {i} not loaded for the row"),
                        },
                    };
                    inputs[i] = Some(v);
                }
                _ => {}
            }
        }
        let value = |b: &mut FunctionBuilder, inputs: &[Option<Value>], nodes: &[Option<Value>], r: ScalarRef| match r {
            ScalarRef::Input(i) => inputs[i].expect("input loaded"),
            ScalarRef::Node(j) => nodes[j].expect("node evaluated in order"),
            ScalarRef::Const(c) => self.scalar_const(b, &c, vector),
        };
        for (j, node) in graph.nodes().iter().enumerate() {
            if !needed[j] {
                continue;
            }
            if let Some(base) = stashed(j) {
                let a = self.addr(b, base, idx, node.dtype);
                nodes[j] = Some(b.ins().load(self.ty(node.dtype, vector), mem(), a, 0));
                continue;
            }
            let args: Vec<Value> = node.args.iter().map(|&a| value(b, &inputs, &nodes, a)).collect();
            nodes[j] = Some(match self.spec.simd {
                // Vector kernels: the same emitter for the vector loops and the scalar tail.
                Some(elem) => emit_op(b, elem, node.op, &args),
                None => {
                    let dtypes: Vec<DType> = node.args.iter().map(|&a| graph.dtype(a)).collect();
                    let (v, fault) = emit_scalar_op(b, node.op, node.dtype, &dtypes, &args);
                    if let Some(fault) = fault {
                        let go_on = b.create_block();
                        b.ins().brif(fault, self.fault, &[], go_on, &[]);
                        b.switch_to_block(go_on);
                    }
                    v
                }
            });
        }
        wanted.iter().map(|&r| value(b, &inputs, &nodes, r)).collect()
    }
}

/// What the expressions `roots` read, not looking below the nodes in `stop` (whose values are
/// read from a buffer): `(nodes, inputs)`, one flag per node and per graph input.
fn expression(graph: &ScalarGraph, roots: &[ScalarRef], stop: &[usize]) -> (Vec<bool>, Vec<bool>) {
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

/// True when computing the expressions `roots` (not below the nodes in `stop`) takes an
/// expensive op (a division, a square root, a transcendental function).
fn expensive(graph: &ScalarGraph, roots: &[ScalarRef], stop: &[usize]) -> bool {
    let (nodes, _) = expression(graph, roots, stop);
    let cost = |j: usize| graph.nodes()[j].op.cost() == ragtime_graph::Cost::Expensive;
    (0..nodes.len()).any(|j| nodes[j] && !stop.contains(&j) && cost(j))
}

/// Which reduction arguments to keep in an output buffer (see `Emitter::stash`): those whose
/// expression has an expensive op and that an element output of the same dtype reads.
fn stash_plan(spec: &KernelSpec) -> Vec<(usize, usize)> {
    let graph = &spec.graph;
    let mut plan: Vec<(usize, usize)> = Vec::new();
    for red in &spec.reductions {
        let ScalarRef::Node(n) = red.arg else { continue };
        if plan.iter().any(|(m, _)| *m == n) || !expensive(graph, &[red.arg], &[]) {
            continue;
        }
        let reader = spec.outputs.iter().enumerate().find_map(|(j, o)| match o {
            // The buffer holds the node's values, so it must have the node's dtype.
            RowOutput::Elements(r)
                if expression(graph, &[*r], &[]).0[n]
                    && graph.dtype(*r) == graph.nodes()[n].dtype
                    && !plan.iter().any(|(_, k)| *k == j) =>
            {
                Some(j)
            }
            _ => None,
        });
        if let Some(j) = reader {
            plan.push((n, j));
        }
    }
    plan
}

/// `1.0` in the float lane shape of `like`.
fn float_one(b: &mut FunctionBuilder, like: Value) -> Value {
    let ty = b.func.dfg.value_type(like);
    let one = if ty.lane_type() == types::F32 { b.ins().f32const(1.0) } else { b.ins().f64const(1.0) };
    if ty.is_vector() {
        b.ins().splat(ty, one)
    } else {
        one
    }
}

/// Comparisons, `where` and logical ops of a vector kernel, whose bools are lane masks (all ones
/// or zero per lane) in vector loops and 0 / 1 in the scalar tail.
fn emit_mask_op(b: &mut FunctionBuilder, elem: Elem, op: ScalarOp, a: &[Value]) -> Option<Value> {
    let vector = b.func.dfg.value_type(a[0]).is_vector();
    Some(match op {
        op if op.is_comparison() => match elem.float() {
            Some(_) => b.ins().fcmp(float_cc(op), a[0], a[1]),
            // Vector kernels' integers are int32 / int64.
            None => b.ins().icmp(int_cc(op, true), a[0], a[1]),
        },
        ScalarOp::Where if vector => {
            // bitselect wants the mask in the operands' type (an fcmp mask is an integer vector).
            let ty = b.func.dfg.value_type(a[1]);
            let mask = if b.func.dfg.value_type(a[0]) == ty {
                a[0]
            } else {
                b.ins().bitcast(ty, MemFlagsData::new().with_endianness(Endianness::Little), a[0])
            };
            b.ins().bitselect(mask, a[1], a[2])
        }
        ScalarOp::Where => b.ins().select(a[0], a[1], a[2]),
        ScalarOp::LogicalAnd => b.ins().band(a[0], a[1]),
        ScalarOp::LogicalOr => b.ins().bor(a[0], a[1]),
        ScalarOp::LogicalXor => b.ins().bxor(a[0], a[1]),
        ScalarOp::LogicalNot if vector => b.ins().bnot(a[0]),
        ScalarOp::LogicalNot => b.ins().bxor_imm_s(a[0], 1),
        _ => return None,
    })
}

/// One scalar op of a vector kernel ([`vector_op`], and the mask ops above) on values of its element type, scalar or
/// vector; scalar kernels use it for the float ops they share.
pub(crate) fn emit_op(b: &mut FunctionBuilder, elem: Elem, op: ScalarOp, a: &[Value]) -> Value {
    if let Some(v) = emit_mask_op(b, elem, op, a) {
        return v;
    }
    if elem.float().is_none() {
        // Integers: wrapping arithmetic, as the reference kernels (`wrapping_*`).
        return match op {
            ScalarOp::Add => b.ins().iadd(a[0], a[1]),
            ScalarOp::Subtract => b.ins().isub(a[0], a[1]),
            ScalarOp::Multiply => b.ins().imul(a[0], a[1]),
            ScalarOp::Maximum => int_extreme(b, true, a[0], a[1]),
            ScalarOp::Minimum => int_extreme(b, false, a[0], a[1]),
            ScalarOp::Negative => b.ins().ineg(a[0]),
            ScalarOp::Abs => b.ins().iabs(a[0]),
            ScalarOp::Square => b.ins().imul(a[0], a[0]),
            ScalarOp::BitwiseAnd => b.ins().band(a[0], a[1]),
            ScalarOp::BitwiseOr => b.ins().bor(a[0], a[1]),
            ScalarOp::BitwiseXor => b.ins().bxor(a[0], a[1]),
            ScalarOp::BitwiseInvert => b.ins().bnot(a[0]),
            ScalarOp::SquaredDifference => {
                let d = b.ins().isub(a[0], a[1]);
                b.ins().imul(d, d)
            }
            ScalarOp::Floor | ScalarOp::Ceil | ScalarOp::Round => a[0],
            other => unreachable!("scalar op {other} is not lowered on integers"),
        };
    }
    match op {
        ScalarOp::Add => b.ins().fadd(a[0], a[1]),
        ScalarOp::Subtract => b.ins().fsub(a[0], a[1]),
        ScalarOp::Multiply => b.ins().fmul(a[0], a[1]),
        ScalarOp::Divide => b.ins().fdiv(a[0], a[1]),
        ScalarOp::FloorDiv => {
            let q = b.ins().fdiv(a[0], a[1]);
            b.ins().floor(q)
        }
        ScalarOp::Pow => vmath::emit_pow(b, a[0], a[1]),
        // Cranelift's fmax / fmin return NaN when either operand is NaN and order -0 < +0, as
        // ragtime's reference does.
        ScalarOp::Maximum => b.ins().fmax(a[0], a[1]),
        ScalarOp::Minimum => b.ins().fmin(a[0], a[1]),
        ScalarOp::Negative => b.ins().fneg(a[0]),
        ScalarOp::Abs => b.ins().fabs(a[0]),
        ScalarOp::Square => b.ins().fmul(a[0], a[0]),
        ScalarOp::Sqrt => b.ins().sqrt(a[0]),
        ScalarOp::Exp => vmath::emit_unary(b, UnaryMath::Exp, a[0]),
        ScalarOp::Log => vmath::emit_unary(b, UnaryMath::Log, a[0]),
        ScalarOp::Sin => emit_trig(b, UnaryMath::Sin, a[0]),
        ScalarOp::Cos => emit_trig(b, UnaryMath::Cos, a[0]),
        ScalarOp::Tanh => vmath::emit_unary(b, UnaryMath::Tanh, a[0]),
        ScalarOp::Sigmoid => vmath::emit_unary(b, UnaryMath::Sigmoid, a[0]),
        ScalarOp::Floor => b.ins().floor(a[0]),
        ScalarOp::Ceil => b.ins().ceil(a[0]),
        ScalarOp::Round | ScalarOp::Rint => b.ins().nearest(a[0]),
        // As the reference: `1 / x`, `1 / sqrt(x)`, `x / (1 + |x|)`, `(x - y) * (x - y)`.
        ScalarOp::Reciprocal => {
            let one = float_one(b, a[0]);
            b.ins().fdiv(one, a[0])
        }
        ScalarOp::Rsqrt => {
            let one = float_one(b, a[0]);
            let root = b.ins().sqrt(a[0]);
            b.ins().fdiv(one, root)
        }
        ScalarOp::Softsign => {
            let one = float_one(b, a[0]);
            let magnitude = b.ins().fabs(a[0]);
            let denominator = b.ins().fadd(one, magnitude);
            b.ins().fdiv(a[0], denominator)
        }
        ScalarOp::SquaredDifference => {
            let d = b.ins().fsub(a[0], a[1]);
            b.ins().fmul(d, d)
        }
        // Vector kernels have only `vector_op`s; scalar kernels route the others elsewhere.
        other => unreachable!("scalar op {other} is not lowered"),
    }
}

/// The platform's `sin` / `cos`, called by kernels for arguments beyond the polynomial's range.
extern "C" fn libm_sinf(x: f32) -> f32 {
    x.sin()
}
extern "C" fn libm_cosf(x: f32) -> f32 {
    x.cos()
}
extern "C" fn libm_sin(x: f64) -> f64 {
    x.sin()
}
extern "C" fn libm_cos(x: f64) -> f64 {
    x.cos()
}

/// `sin` / `cos`: the vectorized polynomial, which is accurate only up to
/// `SIN_COS_MAX_ARG_F32` / `_F64`; when any lane is beyond that (rare: huge arguments), every
/// lane is recomputed by calling the platform's `sin` / `cos`, so results are never wrong.
fn emit_trig(b: &mut FunctionBuilder, op: UnaryMath, x: Value) -> Value {
    let fast = vmath::emit_unary(b, op, x);
    let ty = b.func.dfg.value_type(x);
    let lanes = Lanes::of(ty).expect("trig on a float lane shape");
    let (bound, scalar_ty) = match lanes.float {
        Float::F32 => (b.ins().f32const(crate::SIN_COS_MAX_ARG_F32), types::F32),
        Float::F64 => (b.ins().f64const(crate::SIN_COS_MAX_ARG_F64), types::F64),
    };
    let bound = if lanes.vector { b.ins().splat(ty, bound) } else { bound };
    let magnitude = b.ins().fabs(x);
    let big = b.ins().fcmp(FloatCC::GreaterThan, magnitude, bound);
    let any = if lanes.vector { b.ins().vany_true(big) } else { big };
    let slow = b.create_block();
    let join = b.create_block();
    b.append_block_param(join, ty);
    b.ins().brif(any, slow, &[], join, &[fast.into()]);

    b.switch_to_block(slow);
    let callee: usize = match (lanes.float, op) {
        (Float::F32, UnaryMath::Sin) => libm_sinf as extern "C" fn(f32) -> f32 as usize,
        (Float::F32, _) => libm_cosf as extern "C" fn(f32) -> f32 as usize,
        (Float::F64, UnaryMath::Sin) => libm_sin as extern "C" fn(f64) -> f64 as usize,
        (Float::F64, _) => libm_cos as extern "C" fn(f64) -> f64 as usize,
    };
    let ptr = b.func.signature.params[0].value_type;
    let mut sig = cranelift_codegen::ir::Signature::new(b.func.signature.call_conv);
    sig.params.push(cranelift_codegen::ir::AbiParam::new(scalar_ty));
    sig.returns.push(cranelift_codegen::ir::AbiParam::new(scalar_ty));
    let sigref = b.import_signature(sig);
    let callee = b.ins().iconst(ptr, callee as i64);
    let call = |b: &mut FunctionBuilder, v: Value| {
        let inst = b.ins().call_indirect(sigref, callee, &[v]);
        b.inst_results(inst)[0]
    };
    let slow_value = if lanes.vector {
        let mut acc = fast;
        for lane in 0..lanes.lane_count() as u8 {
            let e = b.ins().extractlane(x, lane);
            let r = call(b, e);
            acc = b.ins().insertlane(acc, r, lane);
        }
        acc
    } else {
        call(b, x)
    };
    b.ins().jump(join, &[slow_value.into()]);

    b.switch_to_block(join);
    b.block_params(join)[0]
}

/// A loop body: given the index and the carried values, emits the body and returns the next
/// carried values.
type LoopBody<'a> = dyn FnMut(&mut FunctionBuilder, Value, &[Value]) -> Vec<Value> + 'a;

/// Emits `for i in start..limit step step { carried = body(i, carried) }` and returns the final
/// carried values; `limit - start` must be a multiple of `step`.
fn emit_loop(
    b: &mut FunctionBuilder,
    ptr: Type,
    start: Value,
    limit: Value,
    step: i64,
    init: &[Value],
    body: &mut LoopBody<'_>,
) -> Vec<Value> {
    let head = b.create_block();
    let body_block = b.create_block();
    let exit = b.create_block();
    b.append_block_param(head, ptr);
    for &v in init {
        let ty = b.func.dfg.value_type(v);
        b.append_block_param(head, ty);
        b.append_block_param(exit, ty);
    }
    let args: Vec<_> = std::iter::once(start).chain(init.iter().copied()).map(Into::into).collect();
    b.ins().jump(head, &args);

    b.switch_to_block(head);
    let params = b.block_params(head).to_vec();
    let (i, carried) = (params[0], params[1..].to_vec());
    let more = b.ins().icmp(IntCC::UnsignedLessThan, i, limit);
    let carried_args: Vec<_> = carried.iter().copied().map(Into::into).collect();
    b.ins().brif(more, body_block, &[], exit, &carried_args);

    b.switch_to_block(body_block);
    let next_carried = body(b, i, &carried);
    let next = b.ins().iadd_imm_s(i, step);
    let args: Vec<_> = std::iter::once(next).chain(next_carried).map(Into::into).collect();
    b.ins().jump(head, &args);

    b.switch_to_block(exit);
    b.block_params(exit).to_vec()
}

/// Emits `i = start; while i < end { i = body(i) }`; `body` returns where the next block starts
/// (greater than `i`).
fn emit_blocks(
    b: &mut FunctionBuilder,
    ptr: Type,
    start: Value,
    end: Value,
    body: &mut dyn FnMut(&mut FunctionBuilder, Value) -> Value,
) {
    let (head, body_block, exit) = (b.create_block(), b.create_block(), b.create_block());
    b.append_block_param(head, ptr);
    b.ins().jump(head, &[start.into()]);
    b.switch_to_block(head);
    let i = b.block_params(head)[0];
    let more = b.ins().icmp(IntCC::UnsignedLessThan, i, end);
    b.ins().brif(more, body_block, &[], exit, &[]);
    b.switch_to_block(body_block);
    let next = body(b, i);
    b.ins().jump(head, &[next.into()]);
    b.switch_to_block(exit);
}

/// `start + ((end - start) & !(lanes - 1))`: where the vector loop stops.
fn vector_limit(b: &mut FunctionBuilder, start: Value, end: Value, lanes: i64) -> Value {
    let n = b.ins().isub(end, start);
    let whole = b.ins().band_imm_s(n, !(lanes - 1));
    b.ins().iadd(start, whole)
}

/// Emits the whole kernel body for `spec`: returns 0 when every element was computed, 1 when an
/// op faulted (the caller then runs the reference implementation, which reports the error).
pub(crate) fn emit_kernel(b: &mut FunctionBuilder, p: &FusedParams, spec: &KernelSpec) {
    let pw = i64::from(p.ptr.bytes());
    let in_ptrs: Vec<Value> =
        (0..spec.operands.len()).map(|k| b.ins().load(p.ptr, mem(), p.inputs, (k as i64 * pw) as i32)).collect();
    let out_ptrs: Vec<Value> =
        (0..spec.outputs.len()).map(|k| b.ins().load(p.ptr, mem(), p.outputs, (k as i64 * pw) as i32)).collect();
    let fault = b.create_block();
    let mut e = Emitter {
        spec,
        ptr: p.ptr,
        in_ptrs,
        out_ptrs,
        scalars: Vec::new(),
        stash: if spec.reductions.is_empty() { Vec::new() } else { stash_plan(spec) },
        fault,
    };
    e.scalars = spec
        .operands
        .iter()
        .enumerate()
        .map(|(k, kind)| {
            (*kind == OperandKind::Scalar).then(|| {
                let s = b.ins().load(ir_type(spec.graph.inputs()[k]), mem(), e.in_ptrs[k], 0);
                e.both(b, s)
            })
        })
        .collect();
    if spec.rows() {
        emit_rows(b, p, &e);
    } else {
        emit_flat(b, p, &e);
    }
    let done = b.ins().iconst(p.ptr, 0);
    b.ins().return_(&[done]);
    b.switch_to_block(fault);
    let faulted = b.ins().iconst(p.ptr, 1);
    b.ins().return_(&[faulted]);
}

/// A map kernel over elements `p.begin..p.end`. When the outputs need functions that
/// [`crate::bulk`] evaluates on this CPU (W1's `tanh`), the elements go in chunks of
/// [`MAP_CHUNK`]: each such node is evaluated into a scratch buffer by one bulk call (after its
/// argument, in IR), then the outputs are computed reading those buffers. Otherwise one pass.
fn emit_flat(b: &mut FunctionBuilder, p: &FusedParams, e: &Emitter<'_>) {
    let spec = e.spec;
    let no_rows = vec![RowValue::Absent; spec.graph.inputs().len()];
    let elements = RowOutput::elements(&spec.outputs);
    let (needed, _) = expression(&spec.graph, &elements, &[]);
    let bulk: Vec<usize> = (0..needed.len())
        .filter(|&n| needed[n] && bulk_unary(spec, n).is_some_and(|(op, _)| crate::bulk::unary_f32(op).is_some()))
        .collect();
    if bulk.is_empty() {
        emit_elements(b, e, p.begin, p.end, &no_rows, &[]);
        return;
    }
    let slots: Vec<StackSlot> = bulk
        .iter()
        .map(|_| {
            let bytes = (MAP_CHUNK * 4) as u32;
            b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4))
        })
        .collect();
    let _ = emit_loop(b, e.ptr, p.begin, p.end, MAP_CHUNK, &[], &mut |b, c0, _| {
        let past = b.ins().iadd_imm_s(c0, MAP_CHUNK);
        let short = b.ins().icmp(IntCC::UnsignedLessThan, past, p.end);
        let c1 = b.ins().select(short, past, p.end);
        let mut stash: Vec<(usize, Value)> = Vec::new();
        for (&n, &slot) in bulk.iter().zip(&slots) {
            let scratch = b.ins().stack_addr(e.ptr, slot, 0);
            let off = b.ins().imul_imm_s(c0, 4);
            let base = b.ins().isub(scratch, off);
            let called = emit_bulk_node(b, e, n, (c0, c1), (base, scratch), &no_rows, &stash);
            debug_assert!(called, "bulk nodes are those with a bulk function");
            stash.push((n, base));
        }
        emit_elements(b, e, c0, c1, &no_rows, &stash);
        Vec::new()
    });
}

/// The element outputs over elements `start..end`: vector loops (vector kernels), then the
/// scalar loop.
fn emit_elements(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    start: Value,
    end: Value,
    row_values: &[RowValue],
    stash: &[(usize, Value)],
) {
    let outs: Vec<(ScalarRef, Value)> = e
        .spec
        .outputs
        .iter()
        .enumerate()
        .filter_map(|(j, o)| if let RowOutput::Elements(r) = o { Some((*r, e.out_ptrs[j])) } else { None })
        .collect();
    emit_map(b, e, start, end, &outs, row_values, stash);
}

/// `outs`' expressions over elements `start..end`, each stored into its buffer (the address
/// of element 0): vector loops (vector kernels), then the scalar loop.
fn emit_map(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    start: Value,
    end: Value,
    outs: &[(ScalarRef, Value)],
    row_values: &[RowValue],
    stash: &[(usize, Value)],
) {
    if outs.is_empty() {
        return;
    }
    let wanted: Vec<ScalarRef> = outs.iter().map(|(r, _)| *r).collect();
    let graph = &e.spec.graph;
    let body = |b: &mut FunctionBuilder, i: Value, vector: bool| {
        let values = e.eval(b, &wanted, i, vector, row_values, stash);
        for (&(r, base), v) in outs.iter().zip(values) {
            let a = e.addr(b, base, i, graph.dtype(r));
            b.ins().store(mem(), v, a, 0);
        }
    };
    let mut scalar_start = start;
    if let Some(elem) = e.spec.simd {
        let lanes = elem.lanes();
        // Two vectors per iteration (independent chains the core can overlap), then one, then
        // scalars.
        let vend2 = vector_limit(b, start, end, UNROLL * lanes);
        let vend = vector_limit(b, start, end, lanes);
        let _ = emit_loop(b, e.ptr, start, vend2, UNROLL * lanes, &[], &mut |b, i, _| {
            for u in 0..UNROLL {
                let at = b.ins().iadd_imm_s(i, u * lanes);
                body(b, at, true);
            }
            Vec::new()
        });
        let _ = emit_loop(b, e.ptr, vend2, vend, lanes, &[], &mut |b, i, _| {
            body(b, i, true);
            Vec::new()
        });
        scalar_start = vend;
    }
    let _ = emit_loop(b, e.ptr, scalar_start, end, 1, &[], &mut |b, i, _| {
        body(b, i, false);
        Vec::new()
    });
}

/// Vectors per iteration of the main loops.
const UNROLL: i64 = 2;

/// Rows per block of a row kernel with reductions (see [`emit_rows`]).
const ROW_BLOCK: i64 = 8;

/// Elements per chunk of a map kernel that calls bulk functions (see [`emit_flat`]). W1, one
/// thread, medians of 5: 0.076 with 128, 0.075 with 256 and 512, 0.089 with 1,024, 0.105 with
/// 2,048 values.
const MAP_CHUNK: i64 = 256;

/// Most rows of a block evaluated flat (see [`emit_rows`]), when they hold at most
/// [`FLAT_BLOCK`] values: W4, one thread, 0.411 with 8 rows, 0.402 with 16, 0.386 with 32, 0.399
/// with 64 (and 2,048-value blocks).
const FLAT_ROWS: i64 = 32;

/// Bytes per row of a block's per-row value slot: the scalar at 0, the vector at 16.
const ROW_VALUE_BYTES: i64 = 32;

/// Most values a block may hold to be evaluated flat (see [`emit_rows`]): the size of each
/// scratch buffer, in elements.
const FLAT_BLOCK: i64 = 1024;

/// Vectors stored per iteration when a row's value is expanded over its elements: one
/// iteration covers the short rows, so its exit branch is predictable.
const EXPAND_VECTORS: i64 = 4;

/// Which passes of a multi-pass vector row kernel are evaluated flat over a block's elements
/// (see [`emit_rows`]), and what they read.
struct FlatPlan {
    /// Per reduction: its argument is computed flat into a scratch buffer (it has an expensive
    /// op), and the row's fold reads the buffer.
    args: Vec<bool>,
    /// The element outputs are computed flat (one of them has an expensive op).
    outputs: bool,
    /// Per graph input: a per-row input that a flat pass reads, so it is expanded over the
    /// block's elements.
    expanded: Vec<bool>,
}

impl FlatPlan {
    /// The plan for `spec`, or `None` when no pass is worth evaluating flat (or the kernel is
    /// scalar, whose loops stay row by row).
    fn new(spec: &KernelSpec) -> Option<FlatPlan> {
        spec.simd?;
        let graph = &spec.graph;
        let mut computed: Vec<usize> = Vec::new();
        let mut expanded = vec![false; graph.inputs().len()];
        let mut read = |roots: &[ScalarRef], stop: &[usize]| {
            for (i, r) in expression(graph, roots, stop).1.into_iter().enumerate() {
                expanded[i] |= r;
            }
        };
        let mut args = Vec::new();
        for red in &spec.reductions {
            let flat = matches!(red.arg, ScalarRef::Node(_)) && expensive(graph, &[red.arg], &computed);
            if let (true, ScalarRef::Node(n)) = (flat, red.arg) {
                read(&[red.arg], &computed);
                computed.push(n);
            }
            args.push(flat);
        }
        let elements = RowOutput::elements(&spec.outputs);
        let outputs = !elements.is_empty() && expensive(graph, &elements, &computed);
        if outputs {
            read(&elements, &computed);
        }
        // Full and scalar operands are read as they are; per-row operands and reduction
        // results are expanded.
        for (i, x) in expanded.iter_mut().enumerate() {
            *x &= spec.operands.get(i).is_none_or(|kind| *kind == OperandKind::PerRow);
        }
        (args.contains(&true) || outputs).then_some(FlatPlan { args, outputs, expanded })
    }
}

/// When node `n` of a float32 vector kernel is a function [`crate::bulk`] evaluates (`exp`,
/// `tanh`, `sigmoid`): the function and its argument.
fn bulk_unary(spec: &KernelSpec, n: usize) -> Option<(UnaryMath, ScalarRef)> {
    let node = &spec.graph.nodes()[n];
    let op = match node.op {
        ScalarOp::Exp => UnaryMath::Exp,
        ScalarOp::Tanh => UnaryMath::Tanh,
        ScalarOp::Sigmoid => UnaryMath::Sigmoid,
        _ => return None,
    };
    (node.dtype == DType::F32 && spec.simd == Some(Elem::F32)).then_some((op, node.args[0]))
}

/// Evaluates node `n` over elements `s0..s1` into a scratch buffer with one call of a
/// [`crate::bulk`] function, when there is one for the node on this CPU (else emits nothing and
/// returns `false`). `base` is the address element 0 would have in the buffer, `scratch` the
/// buffer itself (element `s0`). `exp(x - y)` with `x`, `y` read flat is one call from their
/// buffers; otherwise the argument is evaluated into the buffer, then the function runs in place.
/// Same bits as evaluating the node in IR.
fn emit_bulk_node(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    n: usize,
    (s0, s1): (Value, Value),
    (base, scratch): (Value, Value),
    row_values: &[RowValue],
    stash: &[(usize, Value)],
) -> bool {
    let Some((op, inner)) = bulk_unary(e.spec, n) else { return false };
    let count = b.ins().isub(s1, s0);
    let difference = if op == UnaryMath::Exp { flat_difference(e, inner, row_values) } else { None };
    if let (Some((x, y)), Some(bulk)) = (difference, crate::bulk::exp_sub_f32()) {
        let at = |b: &mut FunctionBuilder, base: Value| {
            let off = b.ins().imul_imm_s(s0, 4);
            b.ins().iadd(base, off)
        };
        let (x, y) = (at(b, x), at(b, y));
        call_bulk(b, e.ptr, bulk as usize, &[x, y, scratch, count]);
        return true;
    }
    let Some(bulk) = crate::bulk::unary_f32(op) else { return false };
    emit_map(b, e, s0, s1, &[(inner, base)], row_values, stash);
    call_bulk(b, e.ptr, bulk as usize, &[scratch, count]);
    true
}

/// When `r` is `x - y` with `x` and `y` each a full operand or a value expanded over the flat
/// block: the addresses of their element 0.
fn flat_difference(e: &Emitter<'_>, r: ScalarRef, expanded: &[RowValue]) -> Option<(Value, Value)> {
    let ScalarRef::Node(n) = r else { return None };
    let node = &e.spec.graph.nodes()[n];
    if node.op != ScalarOp::Subtract {
        return None;
    }
    let flat = |r: ScalarRef| match r {
        ScalarRef::Input(i) if e.spec.graph.inputs()[i] == DType::F32 => match (e.spec.operands.get(i), expanded[i]) {
            (Some(OperandKind::Full), _) => Some(e.in_ptrs[i]),
            (_, RowValue::Expanded(base)) => Some(base),
            _ => None,
        },
        _ => None,
    };
    Some((flat(node.args[0])?, flat(node.args[1])?))
}

/// Calls a bulk function (`fn(pointers and counts...)`, no result) at address `callee`.
fn call_bulk(b: &mut FunctionBuilder, ptr: Type, callee: usize, args: &[Value]) {
    let mut sig = cranelift_codegen::ir::Signature::new(b.func.signature.call_conv);
    sig.params.extend(args.iter().map(|_| cranelift_codegen::ir::AbiParam::new(ptr)));
    let sig = b.import_signature(sig);
    let callee = b.ins().iconst(ptr, callee as i64);
    b.ins().call_indirect(sig, callee, args);
}

/// Stores the splat `vector` at elements `start..end` of the buffer whose element 0 is at
/// `base`, [`EXPAND_VECTORS`] vectors at a time, so up to that many vectors' elements past `end`
/// are written too (scratch buffers have room for them; the next row overwrites them).
fn emit_expand(b: &mut FunctionBuilder, e: &Emitter<'_>, vector: Value, base: Value, start: Value, end: Value) {
    let elem = e.spec.simd.expect("flat blocks are vector kernels");
    let lanes = elem.lanes();
    let step = EXPAND_VECTORS * lanes;
    let n = b.ins().isub(end, start);
    let rounded = b.ins().iadd_imm_s(n, step - 1);
    let whole = b.ins().band_imm_s(rounded, !(step - 1));
    let limit = b.ins().iadd(start, whole);
    let _ = emit_loop(b, e.ptr, start, limit, step, &[], &mut |b, i, _| {
        let off = b.ins().imul_imm_s(i, elem.bytes() as i64);
        let at = b.ins().iadd(base, off);
        for v in 0..EXPAND_VECTORS {
            b.ins().store(mem(), vector, at, (v * lanes * elem.bytes() as i64) as i32);
        }
        Vec::new()
    });
}

/// The row loop. With one pass per row (a row map, or one reduction alone), row after row. With
/// more, rows go in blocks of [`ROW_BLOCK`]: each reduction makes one pass over the block's rows,
/// keeping each row's result (scalar and splat vector) in a stack slot, then one pass computes
/// the element outputs. A row's passes form one dependency chain (softmax: max, then
/// `exp(x - max)` and its sum, then the division), so a row at a time runs at the chain's
/// latency on short rows; within a pass the block's rows are independent and the core overlaps
/// them. The block's values stay in L1 between passes. Keeping per-row values in memory also
/// pins where they are computed: Cranelift places pure instructions at their uses and does not
/// hoist them back out of the next pass's loops, so a lane fold or splat held as an SSA value
/// would be redone at every vector.
///
/// A block of at most [`FLAT_BLOCK`] values (its rows are contiguous in the flat values) runs
/// its expensive passes ([`FlatPlan`]) *flat*: one vector loop over all the block's elements,
/// with the per-row values it reads expanded over each row's elements in scratch buffers, so
/// short rows cost no scalar tail of `exp` or division each, and no loop exit each. An
/// expensive reduction argument goes to a scratch buffer that the row's fold and the element
/// pass read. Every element gets the same operations as row by row, and the folds the same
/// order, so the results are the same bits.
fn emit_rows(b: &mut FunctionBuilder, p: &FusedParams, e: &Emitter<'_>) {
    let spec = e.spec;
    let n_ops = spec.operands.len();
    let n_inputs = spec.graph.inputs().len();
    let split = |b: &mut FunctionBuilder, r: Value| {
        let off = b.ins().imul_imm_s(r, 8);
        let at = b.ins().iadd(p.splits, off);
        b.ins().load(types::I64, mem(), at, 0)
    };
    // The row's offsets and per-row operands.
    let row_start = |b: &mut FunctionBuilder, r: Value| {
        let off = b.ins().imul_imm_s(r, 8);
        let at = b.ins().iadd(p.splits, off);
        let start = b.ins().load(types::I64, mem(), at, 0);
        let end = b.ins().load(types::I64, mem(), at, 8);
        let mut row_values: Vec<RowValue> = vec![RowValue::Absent; n_inputs];
        for (k, kind) in spec.operands.iter().enumerate() {
            if *kind == OperandKind::PerRow {
                let dtype = spec.graph.inputs()[k];
                let a = e.addr(b, e.in_ptrs[k], r, dtype);
                let s = b.ins().load(ir_type(dtype), mem(), a, 0);
                row_values[k] = RowValue::Row(e.both(b, s));
            }
        }
        (start, end, row_values)
    };
    let store_results = |b: &mut FunctionBuilder, r: Value, k: usize, value: Value| {
        let dtype = spec.graph.inputs()[n_ops + k];
        for (j, o) in spec.outputs.iter().enumerate() {
            if matches!(*o, RowOutput::Reduction { index, .. } if index == k) {
                let a = e.addr(b, e.out_ptrs[j], r, dtype);
                b.ins().store(mem(), value, a, 0);
            }
        }
    };
    let out_stash = e.out_stash();
    let passes = spec.reductions.len() + usize::from(!RowOutput::elements(&spec.outputs).is_empty());
    if passes <= 1 {
        // One pass per row (a row reduction, or a row map): nothing to overlap.
        let _ = emit_loop(b, e.ptr, p.begin, p.end, 1, &[], &mut |b, r, _| {
            let (start, end, row_values) = row_start(b, r);
            if let Some(red) = spec.reductions.first() {
                let value = emit_reduction(b, e, red, start, end, &row_values, &[], None);
                store_results(b, r, 0, value);
            } else {
                emit_elements(b, e, start, end, &row_values, &out_stash);
            }
            Vec::new()
        });
        return;
    }
    let slot = |b: &mut FunctionBuilder, bytes: i64| {
        b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes as u32, 4))
    };
    let slots: Vec<StackSlot> =
        spec.reductions.iter().map(|_| slot(b, ROW_BLOCK.max(FLAT_ROWS) * ROW_VALUE_BYTES)).collect();
    let result_types: Vec<(Type, Type)> = (0..spec.reductions.len())
        .map(|k| {
            let dtype = spec.graph.inputs()[n_ops + k];
            (e.ty(dtype, false), e.ty(dtype, true))
        })
        .collect();
    // The entry of row `r` (of the block starting at `first`) in `slot`.
    let entry = |b: &mut FunctionBuilder, slot: StackSlot, first: Value, r: Value| {
        let base = b.ins().stack_addr(e.ptr, slot, 0);
        let k = b.ins().isub(r, first);
        let off = b.ins().imul_imm_s(k, ROW_VALUE_BYTES);
        b.ins().iadd(base, off)
    };
    // The results of reductions `..upto` for row `r`, read back from their slots.
    let earlier = |b: &mut FunctionBuilder, row_values: &mut [RowValue], first: Value, r: Value, upto: usize| {
        for k in 0..upto {
            let at = entry(b, slots[k], first, r);
            let (scalar_ty, vector_ty) = result_types[k];
            let scalar = b.ins().load(scalar_ty, mem(), at, 0);
            let vector = b.ins().load(vector_ty, mem(), at, 16);
            row_values[n_ops + k] = RowValue::Row(Both { scalar, vector });
        }
    };
    // Keeps reduction `k`'s result for row `r`: in its outputs and its slot; returns the splat.
    let keep_result = |b: &mut FunctionBuilder, first: Value, r: Value, k: usize, value: Value| {
        store_results(b, r, k, value);
        let both = e.both(b, value);
        let at = entry(b, slots[k], first, r);
        b.ins().store(mem(), both.scalar, at, 0);
        b.ins().store(mem(), both.vector, at, 16);
        both.vector
    };
    // The block's rows one by one, pass by pass.
    let by_rows = |b: &mut FunctionBuilder, first: Value, last: Value| {
        for (k, red) in spec.reductions.iter().enumerate() {
            let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                let (start, end, mut row_values) = row_start(b, r);
                earlier(b, &mut row_values, first, r, k);
                let keep = match red.arg {
                    ScalarRef::Node(n) => out_stash.iter().find(|(m, _)| *m == n).map(|&(_, base)| base),
                    _ => None,
                };
                let value = emit_reduction(b, e, red, start, end, &row_values, &[], keep);
                keep_result(b, first, r, k, value);
                Vec::new()
            });
        }
        let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
            let (start, end, mut row_values) = row_start(b, r);
            earlier(b, &mut row_values, first, r, spec.reductions.len());
            emit_elements(b, e, start, end, &row_values, &out_stash);
            Vec::new()
        });
    };
    // Where the block of rows starting at `first` ends.
    let block_bounds = |b: &mut FunctionBuilder, first: Value| {
        let past = b.ins().iadd_imm_s(first, ROW_BLOCK);
        let short = b.ins().icmp(IntCC::UnsignedLessThan, past, p.end);
        b.ins().select(short, past, p.end)
    };
    let Some(plan) = FlatPlan::new(spec) else {
        let _ = emit_loop(b, e.ptr, p.begin, p.end, ROW_BLOCK, &[], &mut |b, first, _| {
            let last = block_bounds(b, first);
            by_rows(b, first, last);
            Vec::new()
        });
        return;
    };
    let elem = spec.simd.expect("flat plans are for vector kernels");
    // Scratch buffers: one per flat reduction argument and per expanded input, with room for
    // the vectors `emit_expand` writes past a row's end.
    let scratch_bytes = (FLAT_BLOCK + EXPAND_VECTORS * elem.lanes()) * elem.bytes() as i64;
    let arg_slots: Vec<Option<StackSlot>> =
        plan.args.iter().map(|&flat| flat.then(|| slot(b, scratch_bytes))).collect();
    let expanded_slots: Vec<Option<StackSlot>> =
        plan.expanded.iter().map(|&x| x.then(|| slot(b, scratch_bytes))).collect();
    let flat = |b: &mut FunctionBuilder, first: Value, last: Value, s0: Value, s1: Value| {
        // `base - s0`: the block's element `s0` is the scratch buffer's first.
        let bias = |b: &mut FunctionBuilder, slot: StackSlot| {
            let base = b.ins().stack_addr(e.ptr, slot, 0);
            let off = b.ins().imul_imm_s(s0, elem.bytes() as i64);
            b.ins().isub(base, off)
        };
        let expanded: Vec<Option<Value>> = expanded_slots.iter().map(|s| s.map(|s| bias(b, s))).collect();
        let expanded_values: Vec<RowValue> =
            expanded.iter().map(|x| x.map_or(RowValue::Absent, RowValue::Expanded)).collect();
        if expanded[..n_ops].iter().any(Option::is_some) {
            let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                let (start, end, row_values) = row_start(b, r);
                for (i, base) in expanded[..n_ops].iter().enumerate() {
                    if let (Some(base), RowValue::Row(v)) = (base, row_values[i]) {
                        emit_expand(b, e, v.vector, *base, start, end);
                    }
                }
                Vec::new()
            });
        }
        let mut stash: Vec<(usize, Value)> = Vec::new();
        for (k, red) in spec.reductions.iter().enumerate() {
            if let (Some(s), ScalarRef::Node(n)) = (arg_slots[k], red.arg) {
                let base = bias(b, s);
                let scratch = b.ins().stack_addr(e.ptr, s, 0);
                if !emit_bulk_node(b, e, n, (s0, s1), (base, scratch), &expanded_values, &stash) {
                    emit_map(b, e, s0, s1, &[(red.arg, base)], &expanded_values, &stash);
                }
                stash.push((n, base));
            }
            let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                let (start, end, mut row_values) = row_start(b, r);
                earlier(b, &mut row_values, first, r, k);
                let value = emit_reduction(b, e, red, start, end, &row_values, &stash, None);
                let vector = keep_result(b, first, r, k, value);
                if let Some(base) = expanded[n_ops + k] {
                    emit_expand(b, e, vector, base, start, end);
                }
                Vec::new()
            });
        }
        if plan.outputs {
            emit_elements(b, e, s0, s1, &expanded_values, &stash);
        } else {
            let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                let (start, end, mut row_values) = row_start(b, r);
                earlier(b, &mut row_values, first, r, spec.reductions.len());
                emit_elements(b, e, start, end, &row_values, &stash);
                Vec::new()
            });
        }
    };
    // A flat block takes up to `FLAT_ROWS` rows while they hold at most `FLAT_BLOCK` values
    // (short rows: fewer, longer calls into the bulk functions), else `ROW_BLOCK` rows.
    emit_blocks(b, e.ptr, p.begin, p.end, &mut |b, first| {
        let s0 = split(b, first);
        let wide = b.ins().iadd_imm_s(first, FLAT_ROWS);
        let wide_short = b.ins().icmp(IntCC::UnsignedLessThan, wide, p.end);
        let wide = b.ins().select(wide_short, wide, p.end);
        let s_wide = split(b, wide);
        let n_wide = b.ins().isub(s_wide, s0);
        let fits = b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, n_wide, FLAT_BLOCK);
        let narrow = block_bounds(b, first);
        let last = b.ins().select(fits, wide, narrow);
        let s1 = split(b, last);
        let n = b.ins().isub(s1, s0);
        let small = b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, n, FLAT_BLOCK);
        let (flat_block, row_block, join) = (b.create_block(), b.create_block(), b.create_block());
        b.ins().brif(small, flat_block, &[], row_block, &[]);
        b.switch_to_block(flat_block);
        flat(b, first, last, s0, s1);
        b.ins().jump(join, &[]);
        b.switch_to_block(row_block);
        by_rows(b, first, last);
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        last
    });
}

/// One reduction over elements `start..end` of the current row, finalized (mean divides).
/// `stash` as for `Emitter::eval`; `keep`: a buffer the reduction's argument is also stored
/// into, element by element (the output-buffer stash).
#[allow(clippy::too_many_arguments)]
fn emit_reduction(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    red: &RowReduction,
    start: Value,
    end: Value,
    row_values: &[RowValue],
    stash: &[(usize, Value)],
    keep: Option<Value>,
) -> Value {
    let arg_dtype = e.spec.graph.dtype(red.arg);
    let arg = |b: &mut FunctionBuilder, i: Value, vector: bool| {
        let x = e.eval(b, &[red.arg], i, vector, row_values, stash)[0];
        if let Some(base) = keep {
            let a = e.addr(b, base, i, arg_dtype);
            b.ins().store(mem(), x, a, 0);
        }
        x
    };
    let Some(elem) = e.spec.simd else {
        // Scalar kernels fold in order from the reference's identity with the reference's
        // combining op, so they give its bits.
        let identity = dispatch_dtype!(arg_dtype,
            T => ScalarConst::from_value(red.kind.identity::<T>(true)),
            // `KernelSpec::new` refuses strings.
            string => ScalarConst::from_value(0i64));
        let init = e.scalar_const(b, &identity, false);
        let combine = red.kind.combine();
        let dtypes = [arg_dtype, arg_dtype];
        let acc = emit_loop(b, e.ptr, start, end, 1, &[init], &mut |b, i, acc| {
            let x = arg(b, i, false);
            vec![emit_scalar_op(b, combine, arg_dtype, &dtypes, &[acc[0], x]).0]
        })[0];
        return if red.kind == ReduceKind::Mean { emit_mean(b, acc, start, end, arg_dtype) } else { acc };
    };
    // The identities of `ReduceKind` on a ragged axis (max / min start at the finite extremes;
    // for integers the type's extremes).
    let (big, int_max, int_min) = match elem {
        Elem::F32 => (f64::from(f32::MAX), 0, 0),
        Elem::F64 => (f64::MAX, 0, 0),
        Elem::I32 => (0.0, i64::from(i32::MAX), i64::from(i32::MIN)),
        Elem::I64 => (0.0, i64::MAX, i64::MIN),
    };
    let (float_identity, int_identity) = match red.kind {
        ReduceKind::Sum | ReduceKind::Mean => (0.0, 0),
        ReduceKind::Prod => (1.0, 1),
        ReduceKind::Max => (-big, int_min),
        ReduceKind::Min => (big, int_max),
        ReduceKind::All | ReduceKind::Any => unreachable!("bool reductions are not lowered"),
    };
    let float = elem.float().is_some();
    let combine = |b: &mut FunctionBuilder, x: Value, y: Value| match (red.kind, float) {
        (ReduceKind::Sum | ReduceKind::Mean, true) => b.ins().fadd(x, y),
        (ReduceKind::Prod, true) => b.ins().fmul(x, y),
        (ReduceKind::Max, true) => b.ins().fmax(x, y),
        (_, true) => b.ins().fmin(x, y),
        (ReduceKind::Sum | ReduceKind::Mean, false) => b.ins().iadd(x, y),
        (ReduceKind::Prod, false) => b.ins().imul(x, y),
        (ReduceKind::Max, false) => int_extreme(b, true, x, y),
        (_, false) => int_extreme(b, false, x, y),
    };
    let init = e.lane_constant(b, elem, float_identity, int_identity);
    let mut arg = arg;
    if float && matches!(red.kind, ReduceKind::Max | ReduceKind::Min) {
        // Cranelift's NaN-exact `fmax` / `fmin` are sequences of eight vector instructions (and a
        // branchy one on scalars). A row first folds with one `maxps` / `minps` per vector,
        // which drops NaNs, and a NaN flag; that equals the exact fold unless the row holds a NaN
        // or its result is a zero (±0 order): those rare rows fold again exactly, so every row
        // gets the exact fold's bits.
        let max = red.kind == ReduceKind::Max;
        let (value, rare) = fold_dropping_nans(b, e, elem, max, start, end, init, &mut arg);
        let (exact, done) = (b.create_block(), b.create_block());
        b.append_block_param(done, elem.scalar_ty());
        b.ins().brif(rare, exact, &[], done, &[value.into()]);
        b.switch_to_block(exact);
        let value = fold_row(b, e, elem, start, end, init, &mut arg, &combine);
        b.ins().jump(done, &[value.into()]);
        b.switch_to_block(done);
        return b.block_params(done)[0];
    }
    let acc = fold_row(b, e, elem, start, end, init, &mut arg, &combine);
    if red.kind == ReduceKind::Mean {
        emit_mean(b, acc, start, end, arg_dtype)
    } else {
        acc
    }
}

type RowArg<'a> = dyn FnMut(&mut FunctionBuilder, Value, bool) -> Value + 'a;

/// Folds elements `start..end` of a vector kernel's row with `combine`. A row of at least one
/// vector: two vector accumulators (independent chains) from `init`, folded into one, then one
/// vector per step, then one vector ending at the row's end whose lanes already folded hold the
/// identity instead, then the lanes folded by vector shuffles (halves, then neighbours). A
/// shorter row folds one by one from the identity. `arg(i, vector)` loads or computes the
/// element(s) at `i`.
#[allow(clippy::too_many_arguments)]
fn fold_row(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    elem: Elem,
    start: Value,
    end: Value,
    init: Both,
    arg: &mut RowArg<'_>,
    combine: &dyn Fn(&mut FunctionBuilder, Value, Value) -> Value,
) -> Value {
    let lanes = elem.lanes();
    let RowFold { short, join, vend, vend2 } = begin_row_fold(b, elem, start, end, &[elem.scalar_ty()]);
    let accs = emit_loop(b, e.ptr, start, vend2, UNROLL * lanes, &[init.vector, init.vector], &mut |b, i, acc| {
        let second = b.ins().iadd_imm_s(i, lanes);
        let (x0, x1) = (arg(b, i, true), arg(b, second, true));
        vec![combine(b, acc[0], x0), combine(b, acc[1], x1)]
    });
    let folded = combine(b, accs[0], accs[1]);
    let vacc = emit_loop(b, e.ptr, vend2, vend, lanes, &[folded], &mut |b, i, acc| {
        let x = arg(b, i, true);
        vec![combine(b, acc[0], x)]
    })[0];
    // The last vector: lane `k` holds element `end - lanes + k`, new when `k >= lanes - rest`.
    let last_start = b.ins().iadd_imm_s(end, -lanes);
    let last = arg(b, last_start, true);
    let rest = b.ins().isub(end, vend);
    let (mask_ty, lane_ty) = if lanes == 4 { (types::I32X4, types::I32) } else { (types::I64X2, types::I64) };
    let rest = if lane_ty == types::I32 { b.ins().ireduce(types::I32, rest) } else { rest };
    let lanes_const = b.ins().iconst(lane_ty, lanes);
    let old = b.ins().isub(lanes_const, rest);
    let old = b.ins().splat(mask_ty, old);
    let iota: Vec<u8> = (0..lanes)
        .flat_map(|k| if lanes == 4 { (k as u32).to_le_bytes().to_vec() } else { (k as u64).to_le_bytes().to_vec() })
        .collect();
    let iota = b.func.dfg.constants.insert(cranelift_codegen::ir::ConstantData::from(iota));
    let iota = b.ins().vconst(mask_ty, iota);
    let new = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, iota, old);
    let vty = elem.vector_ty();
    let flags = MemFlagsData::new().with_endianness(Endianness::Little);
    let new = if vty == mask_ty { new } else { b.ins().bitcast(vty, flags, new) };
    let last = b.ins().bitselect(new, last, init.vector);
    let vacc = combine(b, vacc, last);
    let vacc = fold_lanes(b, elem, vacc, combine);
    let value = b.ins().extractlane(vacc, 0);
    b.ins().jump(join, &[value.into()]);

    b.switch_to_block(short);
    let value = emit_loop(b, e.ptr, start, end, 1, &[init.scalar], &mut |b, i, acc| {
        let x = arg(b, i, false);
        vec![combine(b, acc[0], x)]
    })[0];
    b.ins().jump(join, &[value.into()]);

    b.switch_to_block(join);
    b.block_params(join)[0]
}

/// Combines `v` with itself with its halves swapped, then (4 lanes) with neighbours swapped:
/// every lane ends up holding the fold of all lanes.
fn fold_lanes(
    b: &mut FunctionBuilder,
    elem: Elem,
    mut v: Value,
    combine: &dyn Fn(&mut FunctionBuilder, Value, Value) -> Value,
) -> Value {
    const HALVES: [u8; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7];
    const NEIGHBOURS: [u8; 16] = [4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11];
    let swaps: &[[u8; 16]] = if elem.lanes() == 4 { &[HALVES, NEIGHBOURS] } else { &[HALVES] };
    let flags = MemFlagsData::new().with_endianness(Endianness::Little);
    for swap in swaps {
        let bytes = b.ins().bitcast(types::I8X16, flags, v);
        let mask = b.func.dfg.immediates.push(cranelift_codegen::ir::ConstantData::from(swap.to_vec()));
        let swapped = b.ins().shuffle(bytes, bytes, mask);
        let swapped = b.ins().bitcast(elem.vector_ty(), flags, swapped);
        v = combine(b, v, swapped);
    }
    v
}

/// The blocks of a row fold: `short` (fewer values than a vector) and `join` (with parameters
/// `results`) created, the builder in the block for rows of at least one vector, and where that
/// row's two-vector and one-vector loops end.
struct RowFold {
    short: Block,
    join: Block,
    vend: Value,
    vend2: Value,
}

fn begin_row_fold(b: &mut FunctionBuilder, elem: Elem, start: Value, end: Value, results: &[Type]) -> RowFold {
    let lanes = elem.lanes();
    let (long, short, join) = (b.create_block(), b.create_block(), b.create_block());
    for &ty in results {
        b.append_block_param(join, ty);
    }
    let len = b.ins().isub(end, start);
    let has_vector = b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, len, lanes);
    b.ins().brif(has_vector, long, &[], short, &[]);
    b.switch_to_block(long);
    let vend = vector_limit(b, start, end, lanes);
    let vend2 = vector_limit(b, start, end, UNROLL * lanes);
    RowFold { short, join, vend, vend2 }
}

/// `x` if it beats `acc` (is greater for `max`, less otherwise), else `acc`, in the operand order
/// x86 lowers to one `maxps` / `minps` (`maxss` / `minss` on scalars): a NaN `x` leaves `acc`.
fn pick_ordered(b: &mut FunctionBuilder, max: bool, acc: Value, x: Value) -> Value {
    let beats = if max { b.ins().fcmp(FloatCC::LessThan, acc, x) } else { b.ins().fcmp(FloatCC::LessThan, x, acc) };
    let ty = b.func.dfg.value_type(acc);
    if ty.is_vector() {
        let mask = b.ins().bitcast(ty, MemFlagsData::new().with_endianness(Endianness::Little), beats);
        b.ins().bitselect(mask, x, acc)
    } else {
        b.ins().select(beats, x, acc)
    }
}

/// A float max (or min) fold with `pick_ordered`, which drops NaNs. Returns the result and a
/// flag that is set when it may differ from the exact fold's: the row held a NaN, or the result
/// is a zero (whose sign depends on the order of ±0). Otherwise the result is the exact fold's
/// whatever the order and repetition of the values, which lets the row's last vector overlap.
#[allow(clippy::too_many_arguments)]
fn fold_dropping_nans(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    elem: Elem,
    max: bool,
    start: Value,
    end: Value,
    init: Both,
    arg: &mut RowArg<'_>,
) -> (Value, Value) {
    let lanes = elem.lanes();
    let is_nan = |b: &mut FunctionBuilder, x: Value| b.ins().fcmp(FloatCC::Unordered, x, x);
    let zero = e.lane_constant(b, elem, 0.0, 0);
    // At least one vector: whole vectors, then one vector ending at the row's end (it may
    // overlap elements already folded: a max or min does not change), then the lanes folded
    // by vector shuffles; the NaN and zero checks stay vectors until one `vany_true`.
    let RowFold { short, join, vend, vend2 } = begin_row_fold(b, elem, start, end, &[elem.scalar_ty(), types::I8]);
    let vector_step = |b: &mut FunctionBuilder, acc: Value, nan: Value, x: Value| {
        let x_nan = is_nan(b, x);
        (pick_ordered(b, max, acc, x), b.ins().bor(nan, x_nan))
    };
    let no_nan = is_nan(b, init.vector);
    let carried = [init.vector, init.vector, no_nan];
    let accs = emit_loop(b, e.ptr, start, vend2, UNROLL * lanes, &carried, &mut |b, i, acc| {
        let second = b.ins().iadd_imm_s(i, lanes);
        let (x0, x1) = (arg(b, i, true), arg(b, second, true));
        let (a0, nan) = vector_step(b, acc[0], acc[2], x0);
        let (a1, nan) = vector_step(b, acc[1], nan, x1);
        vec![a0, a1, nan]
    });
    let folded = pick_ordered(b, max, accs[0], accs[1]);
    let tail = emit_loop(b, e.ptr, vend2, vend, lanes, &[folded, accs[2]], &mut |b, i, acc| {
        let x = arg(b, i, true);
        let (a, nan) = vector_step(b, acc[0], acc[1], x);
        vec![a, nan]
    });
    let last_start = b.ins().iadd_imm_s(end, -lanes);
    let last = arg(b, last_start, true);
    let (acc, nan) = vector_step(b, tail[0], tail[1], last);
    let acc = fold_lanes(b, elem, acc, &|b, x, y| pick_ordered(b, max, x, y));
    let is_zero = b.ins().fcmp(FloatCC::Equal, acc, zero.vector);
    let rare = b.ins().bor(nan, is_zero);
    let rare = b.ins().vany_true(rare);
    let value = b.ins().extractlane(acc, 0);
    b.ins().jump(join, &[value.into(), rare.into()]);

    // Fewer values than a vector: one by one.
    b.switch_to_block(short);
    let no_nan = b.ins().iconst(types::I8, 0);
    let scalar = emit_loop(b, e.ptr, start, end, 1, &[init.scalar, no_nan], &mut |b, i, acc| {
        let x = arg(b, i, false);
        let x_nan = is_nan(b, x);
        vec![pick_ordered(b, max, acc[0], x), b.ins().bor(acc[1], x_nan)]
    });
    let is_zero = b.ins().fcmp(FloatCC::Equal, scalar[0], zero.scalar);
    let rare = b.ins().bor(scalar[1], is_zero);
    b.ins().jump(join, &[scalar[0].into(), rare.into()]);

    b.switch_to_block(join);
    let params = b.block_params(join);
    (params[0], params[1])
}

/// A row's mean from its sum, as `reduce::fold_rows`: the sum in the element type, divided in
/// float64.
fn emit_mean(b: &mut FunctionBuilder, sum: Value, start: Value, end: Value, dtype: DType) -> Value {
    let count = b.ins().isub(end, start);
    let count = b.ins().fcvt_from_sint(types::F64, count);
    if dtype == DType::F32 {
        let wide = b.ins().fpromote(types::F64, sum);
        let q = b.ins().fdiv(wide, count);
        b.ins().fdemote(types::F32, q)
    } else {
        // `KernelSpec::new` admits means of floats only.
        b.ins().fdiv(sum, count)
    }
}
