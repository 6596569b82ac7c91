//! Loop skeletons in IR: a counted loop carrying values ([`emit_loop`]), a walk over blocks of
//! varying size ([`emit_blocks`]), and where a vector loop stops ([`vector_limit`]). The flat,
//! row and fold emitters build every loop from these.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// A loop body: given the index and the carried values, emits the body and returns the next
/// carried values.
pub(super) type LoopBody<'a> = dyn FnMut(&mut FunctionBuilder, Value, &[Value]) -> Vec<Value> + 'a;

/// Emits `for i in start..limit step step { carried = body(i, carried) }` and returns the final
/// carried values; `limit - start` must be a multiple of `step`.
pub(super) fn emit_loop(
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
pub(super) fn emit_blocks(
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
pub(super) fn vector_limit(b: &mut FunctionBuilder, start: Value, end: Value, lanes: i64) -> Value {
    let n = b.ins().isub(end, start);
    let whole = b.ins().band_imm_s(n, !(lanes - 1));
    b.ins().iadd(start, whole)
}
