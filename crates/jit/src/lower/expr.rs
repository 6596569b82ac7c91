//! Expression translation: the values of a kernel's scalar graph at one element (or one vector
//! of elements), written as IR by [`Emitter::eval`] from the operands' buffers, per-row values,
//! constants and scratch buffers, one scalar op at a time (`lanes` for vector kernels, `scalar`
//! for scalar ones).

use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_core::DType;
use ragtime_fused::{OperandKind, RowOutput, ScalarConst, ScalarRef};

use super::lanes::emit_op;
use super::scalar::{emit_scalar_op, int_const, ir_type};
use crate::elem::Elem;
use crate::plan::KernelPlan;
use crate::spec::KernelSpec;

/// Unaligned, non-trapping accesses: buffers are element-aligned and bounds are checked by the
/// caller before the kernel runs.
pub(super) fn mem() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// A value available both as a scalar and, in vector kernels, splat into a vector (scalar
/// kernels keep the scalar in both fields).
#[derive(Clone, Copy)]
pub(super) struct Both {
    pub(super) scalar: Value,
    pub(super) vector: Value,
}

/// A per-row input (per-row operand or reduction result) as an element evaluation sees it.
#[derive(Clone, Copy)]
pub(super) enum RowValue {
    /// Not read by the evaluation.
    Absent,
    /// The current row's value.
    Row(Both),
    /// A block evaluated flat (see `rows::emit_rows`): the address element 0 would have in a scratch
    /// buffer holding the value at each element of the block (only the block's elements are
    /// valid), so it loads like a full operand.
    Expanded(Value),
}

/// What every part of a kernel's emission shares: the plan, the buffer pointers, the scalar
/// operands and the fault exit.
pub(super) struct Emitter<'s> {
    pub(super) plan: &'s KernelPlan,
    pub(super) spec: &'s KernelSpec,
    pub(super) ptr: Type,
    pub(super) in_ptrs: Vec<Value>,
    pub(super) out_ptrs: Vec<Value>,
    /// Scalar operands, loaded once.
    pub(super) scalars: Vec<Option<Both>>,
    /// The block a faulting op branches to: the kernel returns 1.
    pub(super) fault: Block,
}

impl Emitter<'_> {
    /// The type of a value of `dtype`: the kernel's vector type, or the scalar type of `dtype`.
    pub(super) fn ty(&self, dtype: DType, vector: bool) -> Type {
        match (self.spec.simd(), vector) {
            (Some(elem), true) => elem.vector_ty(),
            _ => ir_type(dtype),
        }
    }

    pub(super) fn both(&self, b: &mut FunctionBuilder, s: Value) -> Both {
        match self.spec.simd() {
            Some(elem) => Both { scalar: s, vector: b.ins().splat(elem.vector_ty(), s) },
            None => Both { scalar: s, vector: s },
        }
    }

    /// The stash of the row-at-a-time passes as `eval` takes it: each node with the output
    /// buffer that keeps its values.
    pub(super) fn out_stash(&self) -> Vec<(usize, Value)> {
        self.plan.stash.iter().map(|&(n, out)| (n, self.out_ptrs[out])).collect()
    }

    /// The element outputs, each with its buffer: what the element passes store.
    pub(super) fn element_outputs(&self) -> Vec<(ScalarRef, Value)> {
        self.spec
            .outputs()
            .iter()
            .zip(&self.out_ptrs)
            .filter_map(|(o, &ptr)| if let RowOutput::Elements(r) = o { Some((*r, ptr)) } else { None })
            .collect()
    }

    /// A constant of the vector kernel's element type: `float` for floats, `int` for integers.
    pub(super) fn lane_constant(&self, b: &mut FunctionBuilder, elem: Elem, float: f64, int: i64) -> Both {
        let s = match elem {
            Elem::F32 => b.ins().f32const(float as f32),
            Elem::F64 => b.ins().f64const(float),
            Elem::I32 | Elem::I64 => b.ins().iconst(elem.scalar_ty(), int),
        };
        self.both(b, s)
    }

    pub(super) fn scalar_const(&self, b: &mut FunctionBuilder, c: &ScalarConst, vector: bool) -> Value {
        let s = match c.dtype() {
            DType::F32 => b.ins().f32const(c.as_f64() as f32),
            DType::F64 => b.ins().f64const(c.as_f64()),
            d => int_const(b, ir_type(d), c.value::<i64>()),
        };
        match (self.spec.simd(), vector) {
            (Some(elem), true) => b.ins().splat(elem.vector_ty(), s),
            _ => s,
        }
    }

    /// The current row's hoisted per-row values ([`KernelSpec::hoisted`]), computed once from
    /// the per-row inputs already in `row_values` (per-row operands, reduction results) and put
    /// there as the row's values of their graph inputs.
    pub(super) fn hoist(&self, b: &mut FunctionBuilder, row_values: &mut [RowValue]) {
        for (input, v) in self.hoisted_values(b, row_values, false) {
            row_values[input] = RowValue::Row(self.both(b, v));
        }
    }

    /// The hoisted per-row values ([`KernelSpec::hoisted`]) from the per-row inputs in
    /// `row_values`, as scalars or (`vector`) vectors: `(graph input, value)`.
    pub(super) fn hoisted_values(
        &self,
        b: &mut FunctionBuilder,
        row_values: &[RowValue],
        vector: bool,
    ) -> Vec<(usize, Value)> {
        if self.spec.hoisted().is_empty() {
            return Vec::new();
        }
        let nodes: Vec<ScalarRef> = self.spec.hoisted().iter().map(|&(n, _)| ScalarRef::Node(n)).collect();
        // Per-row expressions read no element, so the index is never used.
        let idx = b.ins().iconst(self.ptr, 0);
        let values = self.eval(b, &nodes, idx, vector, row_values, &[]);
        self.spec.hoisted().iter().map(|&(_, input)| input).zip(values).collect()
    }

    /// Address of element `idx` of buffer `base` holding `dtype` values.
    pub(super) fn addr(&self, b: &mut FunctionBuilder, base: Value, idx: Value, dtype: DType) -> Value {
        let off = b.ins().imul_imm_s(idx, dtype.size_of() as i64);
        b.ins().iadd(base, off)
    }

    /// Evaluates `wanted` at element `idx`; `row_values[i]` gives per-row inputs (per-row
    /// operands and reduction results) for the current row or block; nodes listed in `stash`
    /// are loaded from the buffer given there (indexed by element) instead of computed. A
    /// faulting op branches to `self.fault`; evaluation continues in a new block.
    pub(super) fn eval(
        &self,
        b: &mut FunctionBuilder,
        wanted: &[ScalarRef],
        idx: Value,
        vector: bool,
        row_values: &[RowValue],
        stash: &[(usize, Value)],
    ) -> Vec<Value> {
        self.eval_given(b, wanted, idx, vector, row_values, stash, &[])
    }

    /// [`Emitter::eval`] with the values of some graph inputs given (`given[i]`, when `Some`),
    /// not loaded: full operands gathered by the caller (rows of a trailing axis, a row per lane).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn eval_given(
        &self,
        b: &mut FunctionBuilder,
        wanted: &[ScalarRef],
        idx: Value,
        vector: bool,
        row_values: &[RowValue],
        stash: &[(usize, Value)],
        given: &[Option<Value>],
    ) -> Vec<Value> {
        let graph = self.spec.graph();
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
                    let v = match (self.spec.operands().get(i), self.scalars.get(i).copied().flatten()) {
                        _ if given.get(i).is_some_and(Option::is_some) => given[i].expect("given"),
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
            nodes[j] = Some(match self.spec.simd() {
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
