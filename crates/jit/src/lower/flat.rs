//! Flat walks: element outputs over a range of elements (two vectors per iteration, then one,
//! then scalars), the map kernel's loop (in chunks when it calls bulk functions), and one
//! planned node evaluated over a flat range into a scratch buffer (a bulk call or a vector loop).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, StackSlot, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_fused::{OperandKind, RowOutput, ScalarRef};

use super::expr::{mem, Emitter, RowValue};
use super::loops::{emit_loop, vector_limit};
use crate::callees;
use crate::kernel::FusedParams;
use crate::plan::{BulkCall, BulkDivide, Chunked, FlatNode, UNROLL};

/// A map kernel over elements `p.begin..p.end`: one pass, or, when the plan calls bulk
/// functions, chunks of [`Chunked::values`] elements in which each bulk node is evaluated into
/// its scratch buffer by one call (after its argument, in IR), then the outputs are computed
/// reading those buffers.
pub(super) fn emit_flat(
    b: &mut FunctionBuilder,
    p: &FusedParams,
    e: &Emitter<'_>,
    chunked: Option<&Chunked>,
    slots: &[StackSlot],
) {
    let no_rows = vec![RowValue::Absent; e.spec.graph().inputs().len()];
    let Some(chunked) = chunked else {
        emit_elements(b, e, p.begin, p.end, &no_rows, &[]);
        return;
    };
    let step = chunked.values;
    let _ = emit_loop(b, e.ptr, p.begin, p.end, step, &[], &mut |b, c0, _| {
        let past = b.ins().iadd_imm_s(c0, step);
        let short = b.ins().icmp(IntCC::UnsignedLessThan, past, p.end);
        let c1 = b.ins().select(short, past, p.end);
        let mut stash: Vec<(usize, Value)> = Vec::new();
        for node in &chunked.nodes {
            let scratch = b.ins().stack_addr(e.ptr, slots[node.scratch], 0);
            let off = b.ins().imul_imm_s(c0, 4);
            let base = b.ins().isub(scratch, off);
            emit_flat_node(b, e, node, (c0, c1), (base, scratch), &no_rows, &stash);
            stash.push((node.node, base));
        }
        emit_elements(b, e, c0, c1, &no_rows, &stash);
        Vec::new()
    });
}

/// The element outputs over elements `start..end`: vector loops (vector kernels), then the
/// scalar loop.
pub(super) fn emit_elements(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    start: Value,
    end: Value,
    row_values: &[RowValue],
    stash: &[(usize, Value)],
) {
    let outs = e.element_outputs();
    emit_map(b, e, start, end, &outs, row_values, stash);
}

/// The element outputs over a flat block's elements `s0..s1`: each planned division by one call
/// of the bulk division, then the other outputs in IR (`emit_map`). Operands are read where the
/// IR would read them: a full input's buffer, an expanded per-row value, a flat reduction
/// argument's scratch buffer (`stash`).
pub(super) fn emit_flat_outputs(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    divides: &[BulkDivide],
    (s0, s1): (Value, Value),
    row_values: &[RowValue],
    stash: &[(usize, Value)],
) {
    if !divides.is_empty() {
        let callee = callees::bulk_div().expect("plans for this machine call only the bulk functions it has");
        let count = b.ins().isub(s1, s0);
        let off = b.ins().imul_imm_s(s0, 4);
        let element0 = |r: ScalarRef| match r {
            ScalarRef::Input(i) => match (e.spec.operands().get(i), row_values[i]) {
                (Some(OperandKind::Full), _) => e.in_ptrs[i],
                (_, RowValue::Expanded(base)) => base,
                _ => unreachable!("the plan divides operands read flat"),
            },
            ScalarRef::Node(n) => {
                stash.iter().find(|(m, _)| *m == n).expect("the plan divides flat reduction arguments").1
            }
            ScalarRef::Const(_) => unreachable!("the plan divides operands read flat"),
        };
        for d in divides {
            let x = b.ins().iadd(element0(d.x), off);
            let y = b.ins().iadd(element0(d.y), off);
            let out = b.ins().iadd(e.out_ptrs[d.output], off);
            callees::emit_call(b, callee, &[x, y, out, count]);
        }
    }
    let rest: Vec<(ScalarRef, Value)> = (e.spec.outputs().iter().zip(&e.out_ptrs).enumerate())
        .filter_map(|(j, (o, &ptr))| match o {
            RowOutput::Elements(r) if !divides.iter().any(|d| d.output == j) => Some((*r, ptr)),
            _ => None,
        })
        .collect();
    emit_map(b, e, s0, s1, &rest, row_values, stash);
}

/// `outs`' expressions over elements `start..end`, each stored into its buffer (the address
/// of element 0): vector loops (vector kernels), then the scalar loop.
pub(super) fn emit_map(
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
    let graph = e.spec.graph();
    let body = |b: &mut FunctionBuilder, i: Value, vector: bool| {
        let values = e.eval(b, &wanted, i, vector, row_values, stash);
        for (&(r, base), v) in outs.iter().zip(values) {
            let a = e.addr(b, base, i, graph.dtype(r));
            b.ins().store(mem(), v, a, 0);
        }
    };
    let mut scalar_start = start;
    if let Some(elem) = e.spec.simd() {
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

/// Evaluates the planned `node` over elements `s0..s1` into its scratch buffer: `base` is the
/// address element 0 would have in the buffer, `scratch` the buffer itself (element `s0`). A
/// bulk call reads its flat operands itself (`exp_sub`) or runs in place on the argument
/// evaluated into the buffer; without one, a vector loop. Same bits either way.
pub(super) fn emit_flat_node(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    node: &FlatNode,
    (s0, s1): (Value, Value),
    (base, scratch): (Value, Value),
    row_values: &[RowValue],
    stash: &[(usize, Value)],
) {
    let Some(call) = node.bulk else {
        emit_map(b, e, s0, s1, &[(ScalarRef::Node(node.node), base)], row_values, stash);
        return;
    };
    let callee = match call {
        BulkCall::InPlace { op, .. } => callees::bulk_in_place(op),
        BulkCall::ExpSub { .. } => callees::bulk_exp_sub(),
    }
    .expect("plans for this machine call only the bulk functions it has");
    let count = b.ins().isub(s1, s0);
    match call {
        BulkCall::ExpSub { x, y } => {
            // Element `s0` of each operand: a full operand's buffer or an expanded value's.
            let at = |b: &mut FunctionBuilder, i: usize| {
                let element0 = match (e.spec.operands().get(i), row_values[i]) {
                    (Some(OperandKind::Full), _) => e.in_ptrs[i],
                    (_, RowValue::Expanded(base)) => base,
                    _ => unreachable!("the plan reads exp_sub's operands flat"),
                };
                let off = b.ins().imul_imm_s(s0, 4);
                b.ins().iadd(element0, off)
            };
            let (x, y) = (at(b, x), at(b, y));
            callees::emit_call(b, callee, &[x, y, scratch, count]);
        }
        BulkCall::InPlace { arg, .. } => {
            emit_map(b, e, s0, s1, &[(arg, base)], row_values, stash);
            callees::emit_call(b, callee, &[scratch, count]);
        }
    }
}
