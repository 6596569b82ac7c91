//! Emission: a [`KernelPlan`] translated into Cranelift IR with the
//! [`FusedFn`](crate::FusedFn) signature. Every decision is the plan's; these modules only write
//! what it says, each one job:
//! - `expr`: the scalar graph's values at one element or vector (expression translation), with
//!   `lanes` (one op of a vector kernel) and `scalar` (one op of a scalar kernel, every dtype);
//! - `loops`: loop skeletons; `flat`: element walks and flat evaluation into scratch buffers;
//!   `rows`: row walks (one pass, blocks pass by pass, flat blocks); `fold`: row reductions;
//!   `items`: row walks over items of several values (uniform inner dims), column folds;
//!   `trailing`: rows of a trailing uniform axis, a row per lane.

mod expr;
mod flat;
mod fold;
mod items;
pub(crate) mod lanes;
mod loops;
mod rows;
mod scalar;
mod trailing;

use cranelift_codegen::ir::{InstBuilder, StackSlot, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_fused::OperandKind;

use self::expr::{mem, Emitter};
use self::scalar::ir_type;
use crate::kernel::FusedParams;
use crate::plan::{KernelPlan, Shape};

/// Emits the whole kernel body for `plan`: returns 0 when every element was computed, 1 when an
/// op faulted (the caller then runs the reference implementation, which reports the error).
pub(crate) fn emit_kernel(b: &mut FunctionBuilder, p: &FusedParams, plan: &KernelPlan) {
    let spec = plan.spec();
    let pw = i64::from(p.ptr.bytes());
    let in_ptrs: Vec<Value> =
        (0..spec.operands().len()).map(|k| b.ins().load(p.ptr, mem(), p.inputs, (k as i64 * pw) as i32)).collect();
    let out_ptrs: Vec<Value> =
        (0..spec.outputs().len()).map(|k| b.ins().load(p.ptr, mem(), p.outputs, (k as i64 * pw) as i32)).collect();
    // The plan's scratch buffers, 16-byte aligned, in its order.
    let slots: Vec<StackSlot> = plan
        .scratch
        .iter()
        .map(|s| b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, s.bytes as u32, 4)))
        .collect();
    let fault = b.create_block();
    let mut e = Emitter { plan, spec, ptr: p.ptr, in_ptrs, out_ptrs, scalars: Vec::new(), fault };
    e.scalars = spec
        .operands()
        .iter()
        .enumerate()
        .map(|(k, kind)| {
            (*kind == OperandKind::Scalar).then(|| {
                let s = b.ins().load(ir_type(spec.graph().inputs()[k]), mem(), e.in_ptrs[k], 0);
                e.both(b, s)
            })
        })
        .collect();
    match &plan.shape {
        Shape::Rows(rows) => rows::emit_rows(b, p, &e, rows, &slots),
        Shape::Flat(chunked) => flat::emit_flat(b, p, &e, chunked.as_ref(), &slots),
        Shape::Items(items) => items::emit_items(b, p, &e, items, &slots),
        Shape::Trailing(rows) => trailing::emit_trailing(b, p, &e, rows),
    }
    let done = b.ins().iconst(p.ptr, 0);
    b.ins().return_(&[done]);
    b.switch_to_block(fault);
    let faulted = b.ins().iconst(p.ptr, 1);
    b.ins().return_(&[faulted]);
}
