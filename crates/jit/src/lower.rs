//! Lowering of the optimizer's fused ops to Cranelift IR: a [`KernelSpec`] (scalar graph, operand
//! kinds, row reductions, outputs, float type) becomes one machine-code kernel with the
//! [`FusedFn`](crate::FusedFn) signature.
//!
//! Two loop shapes:
//! - **flat** (a `Composite` whose operands are full or scalar): one loop over the elements
//!   `begin..end`, `f32x4` / `f64x2` vectors then a scalar tail;
//! - **rows** (a `RowKernel`, or a `Composite` with per-row operands): a loop over the rows
//!   `begin..end`; each row loads its offsets once, then makes one pass per reduction (vector
//!   partial results, combined across lanes, then the scalar tail) and one pass computing the
//!   element outputs, while the row is in cache.
//!
//! What is lowered: graphs whose inputs, constants and nodes all have one float dtype (float32
//! or float64), with the ops of [`lowered_op`]; reductions sum, mean, max, min and prod. Anything
//! else keeps running on the chunked reference implementation. Vector reductions reassociate
//! sums and products (lanes are summed separately, then combined), so results may differ from
//! the sequential reference in the last bits; max and min are exact.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_core::DType;
use ragtime_ops::elemwise::ScalarOp;
use ragtime_ops::fused::{OperandKind, RowOutput, RowReduction, ScalarConst, ScalarGraph, ScalarRef};
use ragtime_ops::reduce::ReduceKind;

use crate::kernel::FusedParams;
use crate::tail;
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

/// The element type of a kernel: every input, constant and node has it.
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

/// Everything a fused kernel is compiled from; the kernel cache's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    /// The scalar computation. Inputs: the op's operands, then one per reduction.
    pub graph: ScalarGraph,
    /// How each op input lines up with the iteration space.
    pub operands: Vec<OperandKind>,
    /// Row reductions, in pass order (empty for a `Composite`).
    pub reductions: Vec<RowReduction>,
    /// The outputs.
    pub outputs: Vec<RowOutput>,
    /// The element type of every value.
    pub elem: Elem,
}

impl KernelSpec {
    /// True when the kernel loops over rows (reductions or per-row operands), false for a flat
    /// loop over elements.
    pub fn rows(&self) -> bool {
        !self.reductions.is_empty() || self.operands.contains(&OperandKind::PerRow)
    }

    /// The spec of a fused computation, if every part of it can be lowered.
    pub fn new(
        graph: &ScalarGraph,
        operands: &[OperandKind],
        reductions: &[RowReduction],
        outputs: &[RowOutput],
    ) -> Option<KernelSpec> {
        let dtype = *graph.inputs().first()?;
        let elem = Elem::of(dtype)?;
        let consts_ok = graph.nodes().iter().flat_map(|n| &n.args).all(|a| match a {
            ScalarRef::Const(c) => c.dtype() == dtype,
            _ => true,
        });
        let nodes_ok = graph.nodes().iter().all(|n| n.dtype == dtype && lowered_op(n.op, dtype));
        // An integer mean has a float result, which a single-dtype kernel cannot hold.
        let reductions_ok = reductions.iter().all(|r| match r.kind {
            ReduceKind::Sum | ReduceKind::Max | ReduceKind::Min | ReduceKind::Prod => true,
            ReduceKind::Mean => elem.float().is_some(),
            ReduceKind::All | ReduceKind::Any => false,
        });
        // One graph input per operand and per reduction (what `Composite::new` and
        // `RowKernel::new` guarantee): the kernel indexes its pointer table by graph input.
        let inputs_ok =
            graph.inputs().len() == operands.len() + reductions.len() && graph.inputs().iter().all(|&d| d == dtype);
        (consts_ok && nodes_ok && reductions_ok && inputs_ok).then(|| KernelSpec {
            graph: graph.clone(),
            operands: operands.to_vec(),
            reductions: reductions.to_vec(),
            outputs: outputs.to_vec(),
            elem,
        })
    }
}

/// The scalar ops the JIT lowers on `dtype`: on float32 and float64 the arithmetic, rounding and
/// math functions below; on int32 and int64 wrapping arithmetic, maximum / minimum, abs, square,
/// the bitwise ops and the rounding ops (which are the identity on integers).
pub fn lowered_op(op: ScalarOp, dtype: DType) -> bool {
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
        )
}

/// Unaligned, non-trapping accesses: buffers are element-aligned and bounds are checked by the
/// caller before the kernel runs.
fn mem() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// A value available both as a scalar and splat into a vector.
#[derive(Clone, Copy)]
struct Both {
    scalar: Value,
    vector: Value,
}

struct Emitter<'s> {
    spec: &'s KernelSpec,
    ptr: Type,
    elem: Elem,
    esize: i64,
    in_ptrs: Vec<Value>,
    out_ptrs: Vec<Value>,
    /// Scalar operands, loaded once.
    scalars: Vec<Option<Both>>,
    /// Row kernels: expensive reduction arguments that an element output also needs, kept in
    /// that output's buffer by the reduction's pass and read back by the output pass instead of
    /// being computed twice (softmax's `exp(x - max)`): `(node, output)`.
    stash: Vec<(usize, usize)>,
}

impl Emitter<'_> {
    fn ty(&self, vector: bool) -> Type {
        if vector {
            self.elem.vector_ty()
        } else {
            self.elem.scalar_ty()
        }
    }

    fn splat(&self, b: &mut FunctionBuilder, s: Value) -> Both {
        let vector = b.ins().splat(self.elem.vector_ty(), s);
        Both { scalar: s, vector }
    }

    /// A constant of the element type: `float` for floats, `int` for integers.
    fn constant(&self, b: &mut FunctionBuilder, float: f64, int: i64) -> Both {
        let s = match self.elem {
            Elem::F32 => b.ins().f32const(float as f32),
            Elem::F64 => b.ins().f64const(float),
            Elem::I32 | Elem::I64 => b.ins().iconst(self.elem.scalar_ty(), int),
        };
        self.splat(b, s)
    }

    fn scalar_const(&self, b: &mut FunctionBuilder, c: &ScalarConst) -> Both {
        self.constant(b, c.as_f64(), c.value::<i64>())
    }

    /// Address of element `idx` of buffer `base`.
    fn addr(&self, b: &mut FunctionBuilder, base: Value, idx: Value) -> Value {
        let off = b.ins().imul_imm_s(idx, self.esize);
        b.ins().iadd(base, off)
    }

    /// Evaluates `wanted` at element `idx`; `row_values[i]` gives per-row inputs (per-row
    /// operands and reduction results) for the current row.
    fn eval(
        &self,
        b: &mut FunctionBuilder,
        wanted: &[ScalarRef],
        idx: Value,
        vector: bool,
        row_values: &[Option<Both>],
        use_stash: bool,
    ) -> Vec<Value> {
        let graph = &self.spec.graph;
        let stashed =
            |j: usize| if use_stash { self.stash.iter().find(|(n, _)| *n == j).map(|&(_, o)| o) } else { None };
        let ty = self.ty(vector);
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
                    let v = match (self.spec.operands.get(i), self.scalars.get(i).copied().flatten()) {
                        (Some(OperandKind::Full), _) => {
                            let a = self.addr(b, self.in_ptrs[i], idx);
                            b.ins().load(ty, mem(), a, 0)
                        }
                        (Some(OperandKind::Scalar), Some(s)) => pick(s),
                        _ => pick(row_values[i].expect("per-row value loaded for the row")),
                    };
                    inputs[i] = Some(v);
                }
                _ => {}
            }
        }
        let value = |b: &mut FunctionBuilder, inputs: &[Option<Value>], nodes: &[Option<Value>], r: ScalarRef| match r {
            ScalarRef::Input(i) => inputs[i].expect("input loaded"),
            ScalarRef::Node(j) => nodes[j].expect("node evaluated in order"),
            ScalarRef::Const(c) => {
                let both = self.scalar_const(b, &c);
                if vector {
                    both.vector
                } else {
                    both.scalar
                }
            }
        };
        for (j, node) in graph.nodes().iter().enumerate() {
            if !needed[j] {
                continue;
            }
            if let Some(out) = stashed(j) {
                let a = self.addr(b, self.out_ptrs[out], idx);
                nodes[j] = Some(b.ins().load(ty, mem(), a, 0));
                continue;
            }
            let args: Vec<Value> = node.args.iter().map(|&a| value(b, &inputs, &nodes, a)).collect();
            nodes[j] = Some(emit_op(b, self.elem, node.op, &args));
        }
        wanted.iter().map(|&r| value(b, &inputs, &nodes, r)).collect()
    }
}

/// Which reduction arguments to keep in an output buffer (see `Emitter::stash`): those whose
/// expression has an expensive op and that an element output reads.
fn stash_plan(spec: &KernelSpec) -> Vec<(usize, usize)> {
    let graph = &spec.graph;
    // reaches[j][n]: node j depends on node n (nodes are in topological order).
    let depends = |from: ScalarRef, target: usize| {
        let mut stack = vec![from];
        let mut seen = vec![false; graph.nodes().len()];
        while let Some(r) = stack.pop() {
            if let ScalarRef::Node(j) = r {
                if j == target {
                    return true;
                }
                if !std::mem::replace(&mut seen[j], true) {
                    stack.extend(graph.nodes()[j].args.iter().copied());
                }
            }
        }
        false
    };
    let expensive = |n: usize| {
        (0..=n).any(|j| graph.nodes()[j].op.cost() == ragtime_graph::Cost::Expensive && depends(ScalarRef::Node(n), j))
    };
    let mut plan: Vec<(usize, usize)> = Vec::new();
    for red in &spec.reductions {
        let ScalarRef::Node(n) = red.arg else { continue };
        if plan.iter().any(|(m, _)| *m == n) || !expensive(n) {
            continue;
        }
        let reader = spec.outputs.iter().enumerate().find_map(|(j, o)| match o {
            RowOutput::Elements(r) if depends(*r, n) && !plan.iter().any(|(_, k)| *k == j) => Some(j),
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

/// One scalar op on values of the kernel's element type (scalar or vector).
fn emit_op(b: &mut FunctionBuilder, elem: Elem, op: ScalarOp, a: &[Value]) -> Value {
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
        // `KernelSpec::new` admits only the ops above.
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
    let big = b.ins().fcmp(cranelift_codegen::ir::condcodes::FloatCC::GreaterThan, magnitude, bound);
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

/// `start + ((end - start) & !(lanes - 1))`: where the vector loop stops.
fn vector_limit(b: &mut FunctionBuilder, start: Value, end: Value, lanes: i64) -> Value {
    let n = b.ins().isub(end, start);
    let whole = b.ins().band_imm_s(n, !(lanes - 1));
    b.ins().iadd(start, whole)
}

/// Emits the whole kernel body for `spec`.
pub(crate) fn emit_kernel(b: &mut FunctionBuilder, p: &FusedParams, spec: &KernelSpec) {
    let pw = i64::from(p.ptr.bytes());
    let in_ptrs: Vec<Value> =
        (0..spec.operands.len()).map(|k| b.ins().load(p.ptr, mem(), p.inputs, (k as i64 * pw) as i32)).collect();
    let out_ptrs: Vec<Value> =
        (0..spec.outputs.len()).map(|k| b.ins().load(p.ptr, mem(), p.outputs, (k as i64 * pw) as i32)).collect();
    let mut e = Emitter {
        spec,
        ptr: p.ptr,
        elem: spec.elem,
        esize: spec.elem.bytes() as i64,
        in_ptrs,
        out_ptrs,
        scalars: Vec::new(),
        stash: if spec.reductions.is_empty() { Vec::new() } else { stash_plan(spec) },
    };
    e.scalars = spec
        .operands
        .iter()
        .enumerate()
        .map(|(k, kind)| {
            (*kind == OperandKind::Scalar).then(|| {
                let s = b.ins().load(spec.elem.scalar_ty(), mem(), e.in_ptrs[k], 0);
                e.splat(b, s)
            })
        })
        .collect();
    if spec.rows() {
        emit_rows(b, p, &e);
    } else {
        let no_rows = vec![None; spec.graph.inputs().len()];
        emit_elements(b, &e, p.begin, p.end, &no_rows, false);
    }
    b.ins().return_(&[]);
}

/// The element outputs over elements `start..end`: vector loop, then the rest. In a row kernel
/// (`row_end_vector`), a row of at least one vector computes its last, overlapping vector first
/// (before any output of this pass is written, since outputs may be stashes the expressions
/// read) and stores it after the loop; overlapping elements get the same values twice. Elsewhere,
/// and for shorter rows, the rest is a scalar loop.
fn emit_elements(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    start: Value,
    end: Value,
    row_values: &[Option<Both>],
    row_end_vector: bool,
) {
    let outs: Vec<(usize, ScalarRef)> = e
        .spec
        .outputs
        .iter()
        .enumerate()
        .filter_map(|(j, o)| if let RowOutput::Elements(r) = o { Some((j, *r)) } else { None })
        .collect();
    if outs.is_empty() {
        return;
    }
    let wanted: Vec<ScalarRef> = outs.iter().map(|(_, r)| *r).collect();
    let lanes = e.elem.lanes();
    // Two vectors per iteration (independent chains the core can overlap), then one, then
    // scalars.
    let vend2 = vector_limit(b, start, end, UNROLL * lanes);
    let vend = vector_limit(b, start, end, lanes);
    let store = |b: &mut FunctionBuilder, i: Value, values: Vec<Value>| {
        for (&(j, _), v) in outs.iter().zip(values) {
            let a = e.addr(b, e.out_ptrs[j], i);
            b.ins().store(mem(), v, a, 0);
        }
    };
    let body = |b: &mut FunctionBuilder, i: Value, vector: bool| {
        let values = e.eval(b, &wanted, i, vector, row_values, true);
        store(b, i, values);
    };
    // The row's last vector, when the row is long enough and does not end on a whole vector.
    let last_vector = row_end_vector.then(|| {
        let n = b.ins().isub(end, start);
        let long = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, lanes);
        let ragged_end = b.ins().icmp(IntCC::NotEqual, vend, end);
        let overlap = b.ins().band(long, ragged_end);
        let compute = b.create_block();
        let join = b.create_block();
        let vty = e.ty(true);
        let zero = e.constant(b, 0.0, 0).vector;
        for _ in &outs {
            b.append_block_param(join, vty);
        }
        let zeros: Vec<_> = outs.iter().map(|_| zero.into()).collect();
        let last = b.ins().iadd_imm_s(end, -lanes);
        b.ins().brif(overlap, compute, &[], join, &zeros);
        b.switch_to_block(compute);
        let values = e.eval(b, &wanted, last, true, row_values, true);
        let args: Vec<_> = values.into_iter().map(Into::into).collect();
        b.ins().jump(join, &args);
        b.switch_to_block(join);
        (overlap, last, b.block_params(join).to_vec())
    });
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
    let scalar_rest = |b: &mut FunctionBuilder| {
        let _ = emit_loop(b, e.ptr, vend, end, 1, &[], &mut |b, i, _| {
            body(b, i, false);
            Vec::new()
        });
    };
    match last_vector {
        Some((overlap, last, values)) => {
            let store_block = b.create_block();
            let scalar_block = b.create_block();
            let done = b.create_block();
            b.ins().brif(overlap, store_block, &[], scalar_block, &[]);
            b.switch_to_block(store_block);
            store(b, last, values);
            b.ins().jump(done, &[]);
            b.switch_to_block(scalar_block);
            scalar_rest(b);
            b.ins().jump(done, &[]);
            b.switch_to_block(done);
        }
        None => scalar_rest(b),
    }
}

/// Vectors per iteration of the main loops.
const UNROLL: i64 = 2;

/// The row loop: per row, the reductions in order, then the element outputs.
fn emit_rows(b: &mut FunctionBuilder, p: &FusedParams, e: &Emitter<'_>) {
    let spec = e.spec;
    let n_ops = spec.operands.len();
    let _ = emit_loop(b, e.ptr, p.begin, p.end, 1, &[], &mut |b, r, _| {
        let off = b.ins().imul_imm_s(r, 8);
        let at = b.ins().iadd(p.splits, off);
        let start = b.ins().load(types::I64, mem(), at, 0);
        let end = b.ins().load(types::I64, mem(), at, 8);
        let mut row_values: Vec<Option<Both>> = vec![None; spec.graph.inputs().len()];
        for (k, kind) in spec.operands.iter().enumerate() {
            if *kind == OperandKind::PerRow {
                let a = e.addr(b, e.in_ptrs[k], r);
                let s = b.ins().load(e.elem.scalar_ty(), mem(), a, 0);
                row_values[k] = Some(e.splat(b, s));
            }
        }
        for (k, red) in spec.reductions.iter().enumerate() {
            let value = emit_reduction(b, e, red, start, end, &row_values);
            for (j, o) in spec.outputs.iter().enumerate() {
                if *o == RowOutput::Reduction(k) {
                    let a = e.addr(b, e.out_ptrs[j], r);
                    b.ins().store(mem(), value, a, 0);
                }
            }
            row_values[n_ops + k] = Some(e.splat(b, value));
        }
        emit_elements(b, e, start, end, &row_values, true);
        Vec::new()
    });
}

/// One reduction over elements `start..end` of the current row, finalized (mean divides).
fn emit_reduction(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    red: &RowReduction,
    start: Value,
    end: Value,
    row_values: &[Option<Both>],
) -> Value {
    // The identities of `ReduceKind` on a ragged axis (max / min start at the finite extremes;
    // for integers the type's extremes).
    let (big, int_max, int_min) = match e.elem {
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
    let float = e.elem.float().is_some();
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
    let init = e.constant(b, float_identity, int_identity);
    let lanes = e.elem.lanes();
    let vend = vector_limit(b, start, end, lanes);
    let stash_to = match red.arg {
        ScalarRef::Node(n) => e.stash.iter().find(|(m, _)| *m == n).map(|&(_, out)| e.out_ptrs[out]),
        _ => None,
    };
    let arg = |b: &mut FunctionBuilder, i: Value, vector: bool| {
        let x = e.eval(b, &[red.arg], i, vector, row_values, false)[0];
        if let Some(base) = stash_to {
            let a = e.addr(b, base, i);
            b.ins().store(mem(), x, a, 0);
        }
        x
    };
    // Two vector accumulators (independent chains), folded into one, then the scalar tail.
    let vend2 = vector_limit(b, start, end, UNROLL * lanes);
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
    // The rest of the row: a row of at least one vector takes it as the vector ending at `end`
    // (see `tail`); a shorter row folds its elements one by one.
    let n = b.ins().isub(end, start);
    let long = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, lanes);
    let long_block = b.create_block();
    let overlap_block = b.create_block();
    let fold_block = b.create_block();
    let short_block = b.create_block();
    let done = b.create_block();
    let vty = e.ty(true);
    b.append_block_param(fold_block, vty);
    b.append_block_param(done, e.ty(false));
    b.ins().brif(long, long_block, &[], short_block, &[]);

    b.switch_to_block(long_block);
    let rest = b.ins().isub(end, vend);
    b.ins().brif(rest, overlap_block, &[], fold_block, &[vacc.into()]);

    b.switch_to_block(overlap_block);
    let last = b.ins().iadd_imm_s(end, -lanes);
    let x = arg(b, last, true);
    let x = match red.kind {
        ReduceKind::Max | ReduceKind::Min => x,
        _ => {
            let mask = tail::last_lanes_mask(b, vty, rest);
            tail::select_lanes(b, mask, x, init.vector)
        }
    };
    let with_rest = combine(b, vacc, x);
    b.ins().jump(fold_block, &[with_rest.into()]);

    b.switch_to_block(fold_block);
    let v = b.block_params(fold_block)[0];
    let folded = tail::fold_lanes(b, v, &combine);
    b.ins().jump(done, &[folded.into()]);

    // Shorter than a vector: nothing was folded yet (`vend == start`).
    b.switch_to_block(short_block);
    let acc = emit_loop(b, e.ptr, start, end, 1, &[init.scalar], &mut |b, i, acc| {
        let x = arg(b, i, false);
        vec![combine(b, acc[0], x)]
    })[0];
    b.ins().jump(done, &[acc.into()]);

    b.switch_to_block(done);
    let acc = b.block_params(done)[0];
    if red.kind != ReduceKind::Mean {
        return acc;
    }
    // As `reduce::fold_rows`: the sum in the element type, divided in float64.
    let count = b.ins().isub(end, start);
    let count = b.ins().fcvt_from_sint(types::F64, count);
    match e.elem {
        Elem::F32 => {
            let wide = b.ins().fpromote(types::F64, acc);
            let q = b.ins().fdiv(wide, count);
            b.ins().fdemote(types::F32, q)
        }
        // `KernelSpec::new` admits means of floats only.
        _ => b.ins().fdiv(acc, count),
    }
}
