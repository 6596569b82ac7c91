//! Item rows: the row loop of a kernel over `[.., *, k]` values (uniform inner dims, `k` values
//! per item), as the plan's [`ItemRows`] says. A row's items go one after another, each in the
//! plan's parts (vectors of consecutive columns, then single columns); per-row operands and
//! reduction results are items too, read part by part, never expanded over the row. Reductions
//! fold each column in item order from the reference's identity with the reference's combining
//! op, so they give the reference's bits; several passes run over blocks of rows, each row's
//! results kept in a stack slot.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, StackSlot, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_core::{dispatch_dtype, DType};
use ragtime_fused::{OperandKind, RowOutput, ScalarConst, ScalarRef};
use ragtime_ops::reduce::ReduceKind;

use super::expr::{mem, Both, Emitter, RowValue};
use super::fold::{emit_mean, pick_ordered};
use super::lanes::emit_op;
use super::loops::emit_loop;
use super::scalar::emit_scalar_op;
use crate::callees;
use crate::kernel::FusedParams;
use crate::plan::{BulkCall, Fold, ItemBulk, ItemRows, Part, ReductionPlan};

/// Per-row inputs of one row as each part sees them: `[part][graph input]`.
type PartValues = Vec<Vec<RowValue>>;

/// Byte offset of `part` within an item of `dtype` values.
fn offset(part: &Part, dtype: DType) -> i32 {
    (part.column * dtype.size_of() as i64) as i32
}

/// Loads `part` of the item whose first value is at `base`.
fn load_part(b: &mut FunctionBuilder, e: &Emitter<'_>, base: Value, part: &Part, dtype: DType) -> Value {
    b.ins().load(e.ty(dtype, part.vector), mem(), base, offset(part, dtype))
}

/// A value read by every part alike (`Both`'s two fields are the part's value: a part is either
/// a vector or a scalar, and `eval` picks the field of its shape).
fn row_value(v: Value) -> RowValue {
    RowValue::Row(Both { scalar: v, vector: v })
}

/// The row loop over rows `p.begin..p.end` of item rows.
pub(super) fn emit_items(
    b: &mut FunctionBuilder,
    p: &FusedParams,
    e: &Emitter<'_>,
    items: &ItemRows,
    slots: &[StackSlot],
) {
    let (spec, plan) = (e.spec, e.plan);
    let n_ops = spec.operands().len();
    let n_inputs = spec.graph().inputs().len();
    let width = items.width;
    // The row's item range and its per-row operands, part by part.
    let row_start = |b: &mut FunctionBuilder, r: Value| -> (Value, Value, PartValues) {
        let off = b.ins().imul_imm_s(r, 8);
        let at = b.ins().iadd(p.splits, off);
        let start = b.ins().load(types::I64, mem(), at, 0);
        let end = b.ins().load(types::I64, mem(), at, 8);
        let mut values = vec![vec![RowValue::Absent; n_inputs]; items.parts.len()];
        let item = b.ins().imul_imm_s(r, width);
        for (k, kind) in spec.operands().iter().enumerate() {
            if *kind == OperandKind::PerRow {
                let dtype = spec.graph().inputs()[k];
                let base = e.addr(b, e.in_ptrs[k], item, dtype);
                for (q, part) in items.parts.iter().enumerate() {
                    values[q][k] = row_value(load_part(b, e, base, part, dtype));
                }
            }
        }
        (start, end, values)
    };
    // Reduction `k`'s result of row `r`, part by part, into the outputs returning it.
    let store_results = |b: &mut FunctionBuilder, r: Value, k: usize, parts: &[Value]| {
        let dtype = spec.graph().inputs()[n_ops + k];
        let item = b.ins().imul_imm_s(r, width);
        for (j, o) in spec.outputs().iter().enumerate() {
            if matches!(*o, RowOutput::Reduction { index, .. } if index == k) {
                let base = e.addr(b, e.out_ptrs[j], item, dtype);
                for (part, &v) in items.parts.iter().zip(parts) {
                    b.ins().store(mem(), v, base, offset(part, dtype));
                }
            }
        }
    };
    let out_stash = e.out_stash();
    let Some(block) = items.block else {
        // One pass per row: a reduction alone, or a row map.
        let _ = emit_loop(b, e.ptr, p.begin, p.end, 1, &[], &mut |b, r, _| {
            let (start, end, values) = row_start(b, r);
            match plan.reductions.first() {
                Some(red) => {
                    let result = emit_item_reduction(b, e, items, red, (start, end), &values, None, &[]);
                    store_results(b, r, 0, &result);
                }
                None => {
                    let mut values = values;
                    hoist_parts(b, e, items, &mut values);
                    emit_item_outputs(b, e, items, (start, end), &values, &out_stash)
                }
            }
            Vec::new()
        });
        return;
    };
    // Several passes: blocks of rows, each pass over the block's rows; reduction `k`'s results
    // for the block in slot `k` (the first slots of the plan's scratch list), `row_bytes` a row.
    let slot_entry = |b: &mut FunctionBuilder, k: usize, first: Value, r: Value| {
        let base = b.ins().stack_addr(e.ptr, slots[k], 0);
        let i = b.ins().isub(r, first);
        let off = b.ins().imul_imm_s(i, items.row_bytes);
        b.ins().iadd(base, off)
    };
    let earlier = |b: &mut FunctionBuilder, values: &mut PartValues, first: Value, r: Value, upto: usize| {
        for k in 0..upto {
            let dtype = spec.graph().inputs()[n_ops + k];
            let at = slot_entry(b, k, first, r);
            for (q, part) in items.parts.iter().enumerate() {
                values[q][n_ops + k] = row_value(load_part(b, e, at, part, dtype));
            }
        }
    };
    let _ = emit_loop(b, e.ptr, p.begin, p.end, block, &[], &mut |b, first, _| {
        let past = b.ins().iadd_imm_s(first, block);
        let short = b.ins().icmp(IntCC::UnsignedLessThan, past, p.end);
        let last = b.ins().select(short, past, p.end);
        for (k, red) in plan.reductions.iter().enumerate() {
            // A bulk argument: written item by item into an output buffer (the one keeping it,
            // or one the element pass writes later), replaced in place by one call over the
            // block's values, then folded from there.
            let mut keep = red.keep.map(|j| e.out_ptrs[j]);
            let mut stash = Vec::new();
            if let (Some(ItemBulk { call: BulkCall::InPlace { op, arg }, output, .. }), ScalarRef::Node(n)) =
                (items.bulk[k], red.arg)
            {
                let buf = e.out_ptrs[output];
                let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                    let (start, end, mut values) = row_start(b, r);
                    earlier(b, &mut values, first, r, k);
                    emit_item_map(b, e, items, (start, end), &values, &[(arg, buf)], &[]);
                    Vec::new()
                });
                let dtype = spec.graph().dtype(red.arg);
                let value_at = |b: &mut FunctionBuilder, r: Value| {
                    let off = b.ins().imul_imm_s(r, 8);
                    let at = b.ins().iadd(p.splits, off);
                    let item = b.ins().load(types::I64, mem(), at, 0);
                    b.ins().imul_imm_s(item, width)
                };
                let (s0, s1) = (value_at(b, first), value_at(b, last));
                let data = e.addr(b, buf, s0, dtype);
                let count = b.ins().isub(s1, s0);
                let callee =
                    callees::bulk_in_place(op).expect("plans for this machine call only the bulk functions it has");
                callees::emit_call(b, callee, &[data, count]);
                keep = None;
                stash.push((n, buf));
            }
            let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                let (start, end, mut values) = row_start(b, r);
                earlier(b, &mut values, first, r, k);
                let result = emit_item_reduction(b, e, items, red, (start, end), &values, keep, &stash);
                store_results(b, r, k, &result);
                let dtype = spec.graph().inputs()[n_ops + k];
                let at = slot_entry(b, k, first, r);
                for (part, &v) in items.parts.iter().zip(&result) {
                    b.ins().store(mem(), v, at, offset(part, dtype));
                }
                Vec::new()
            });
        }
        let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
            let (start, end, mut values) = row_start(b, r);
            earlier(b, &mut values, first, r, plan.reductions.len());
            hoist_parts(b, e, items, &mut values);
            emit_item_outputs(b, e, items, (start, end), &values, &out_stash);
            Vec::new()
        });
        Vec::new()
    });
}

/// The row's hoisted per-row values (`KernelSpec::hoisted`), part by part: each computed once
/// from the part's per-row inputs in `values`, then read by the element expressions as a per-row
/// input.
fn hoist_parts(b: &mut FunctionBuilder, e: &Emitter<'_>, items: &ItemRows, values: &mut PartValues) {
    for (q, part) in items.parts.iter().enumerate() {
        for (input, v) in e.hoisted_values(b, &values[q], part.vector) {
            values[q][input] = row_value(v);
        }
    }
}

/// The element outputs of items `start..end`, part by part.
fn emit_item_outputs(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    items: &ItemRows,
    range: (Value, Value),
    values: &PartValues,
    stash: &[(usize, Value)],
) {
    emit_item_map(b, e, items, range, values, &e.element_outputs(), stash);
}

/// `outs`' expressions over items `start..end`, part by part, each stored into its buffer (the
/// address of element 0).
fn emit_item_map(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    items: &ItemRows,
    (start, end): (Value, Value),
    values: &PartValues,
    outs: &[(ScalarRef, Value)],
    stash: &[(usize, Value)],
) {
    if outs.is_empty() {
        return;
    }
    let wanted: Vec<ScalarRef> = outs.iter().map(|(r, _)| *r).collect();
    let graph = e.spec.graph();
    let _ = emit_loop(b, e.ptr, start, end, 1, &[], &mut |b, item, _| {
        let first = b.ins().imul_imm_s(item, items.width);
        for (q, part) in items.parts.iter().enumerate() {
            let idx = b.ins().iadd_imm_s(first, part.column);
            let results = e.eval(b, &wanted, idx, part.vector, &values[q], stash);
            for (&(r, base), v) in outs.iter().zip(results) {
                let a = e.addr(b, base, idx, graph.dtype(r));
                b.ins().store(mem(), v, a, 0);
            }
        }
        Vec::new()
    });
}

/// One reduction over items `start..end` of the current row: one accumulator per part, folded
/// in item order from the reference's identity with the reference's combining op (the lane
/// lowering of the same scalar op in vector kernels); means divide each column's sum by the
/// count as the reference does. `keep`: a buffer the argument is also stored into (the
/// output-buffer stash); `stash`: nodes read from a buffer instead of computed (an argument
/// computed in bulk). Returns the result part by part.
#[allow(clippy::too_many_arguments)]
fn emit_item_reduction(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    items: &ItemRows,
    red: &ReductionPlan,
    (start, end): (Value, Value),
    values: &PartValues,
    keep: Option<Value>,
    stash: &[(usize, Value)],
) -> Vec<Value> {
    let dtype = e.spec.graph().dtype(red.arg);
    let identity = dispatch_dtype!(dtype,
        T => ScalarConst::from_value(red.kind.identity::<T>(true)),
        // `KernelSpec::new` refuses strings.
        string => ScalarConst::from_value(0i64));
    let init: Vec<Value> = items.parts.iter().map(|part| e.scalar_const(b, &identity, part.vector)).collect();
    let combine = red.kind.combine();
    let arg = |b: &mut FunctionBuilder, idx: Value, q: usize, vector: bool| {
        let x = e.eval(b, &[red.arg], idx, vector, &values[q], stash)[0];
        if let Some(base) = keep {
            let a = e.addr(b, base, idx, dtype);
            b.ins().store(mem(), x, a, 0);
        }
        x
    };
    let done = (red.fold == Fold::ColumnsDroppingNans).then(|| {
        // One `maxps` / `minps` a part and a NaN flag (Cranelift's NaN-exact `fmax` is eight
        // instructions); a row that held a NaN or has a zero in its result (whose sign depends on
        // the order of ±0) folds again exactly below.
        let max = red.kind == ReduceKind::Max;
        let is_nan = |b: &mut FunctionBuilder, x: Value| b.ins().fcmp(FloatCC::Unordered, x, x);
        let flags: Vec<Value> = init.iter().map(|&v| is_nan(b, v)).collect();
        let carried: Vec<Value> = init.iter().chain(&flags).copied().collect();
        let n = items.parts.len();
        let folded = emit_loop(b, e.ptr, start, end, 1, &carried, &mut |b, item, acc| {
            let first = b.ins().imul_imm_s(item, items.width);
            let mut next = acc.to_vec();
            for (q, part) in items.parts.iter().enumerate() {
                let idx = b.ins().iadd_imm_s(first, part.column);
                let x = arg(b, idx, q, part.vector);
                next[q] = pick_ordered(b, max, acc[q], x);
                let x_nan = is_nan(b, x);
                next[n + q] = b.ins().bor(acc[n + q], x_nan);
            }
            next
        });
        let mut rare = b.ins().iconst(types::I8, 0);
        for (q, part) in items.parts.iter().enumerate() {
            // Float vector kernels are float32 or float64.
            let zero = if dtype == DType::F32 { ScalarConst::from_value(0f32) } else { ScalarConst::from_value(0f64) };
            let zero = e.scalar_const(b, &zero, part.vector);
            let is_zero = b.ins().fcmp(FloatCC::Equal, folded[q], zero);
            let flag = b.ins().bor(folded[n + q], is_zero);
            let flag = if part.vector { b.ins().vany_true(flag) } else { flag };
            rare = b.ins().bor(rare, flag);
        }
        let (exact, done) = (b.create_block(), b.create_block());
        for &v in &folded[..n] {
            let ty = b.func.dfg.value_type(v);
            b.append_block_param(done, ty);
        }
        let args: Vec<_> = folded[..n].iter().map(|&v| v.into()).collect();
        b.ins().brif(rare, exact, &[], done, &args);
        b.switch_to_block(exact);
        done
    });
    let accs = emit_loop(b, e.ptr, start, end, 1, &init, &mut |b, item, acc| {
        let first = b.ins().imul_imm_s(item, items.width);
        let mut next = Vec::with_capacity(acc.len());
        for (q, part) in items.parts.iter().enumerate() {
            let idx = b.ins().iadd_imm_s(first, part.column);
            let x = arg(b, idx, q, part.vector);
            next.push(match e.spec.simd() {
                Some(elem) => emit_op(b, elem, combine, &[acc[q], x]),
                None => emit_scalar_op(b, combine, dtype, &[dtype, dtype], &[acc[q], x]).0,
            });
        }
        next
    });
    if let Some(done) = done {
        let args: Vec<_> = accs.iter().map(|&v| v.into()).collect();
        b.ins().jump(done, &args);
        b.switch_to_block(done);
        return b.block_params(done).to_vec();
    }
    if red.kind != ReduceKind::Mean {
        return accs;
    }
    items
        .parts
        .iter()
        .zip(accs)
        .map(
            |(part, sum)| {
                if part.vector {
                    vector_mean(b, sum, start, end, dtype)
                } else {
                    emit_mean(b, sum, start, end, dtype)
                }
            },
        )
        .collect()
}

/// Each lane of a vector of float sums divided by the count as the reference divides (in
/// float64, rounded once). A float32 quotient by a count below 2^24 (exact in float32) is that
/// rounding already (float64 has more than twice float32's precision, so rounding twice is
/// rounding once), so the common case is one vector division; longer rows divide lane by lane.
fn vector_mean(b: &mut FunctionBuilder, sum: Value, start: Value, end: Value, dtype: DType) -> Value {
    let ty = b.func.dfg.value_type(sum);
    let count = b.ins().isub(end, start);
    if dtype == DType::F64 {
        let n = b.ins().fcvt_from_sint(types::F64, count);
        let n = b.ins().splat(ty, n);
        return b.ins().fdiv(sum, n);
    }
    let (common, rare, join) = (b.create_block(), b.create_block(), b.create_block());
    b.append_block_param(join, ty);
    let exact = b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, count, 1 << 24);
    b.ins().brif(exact, common, &[], rare, &[]);
    b.switch_to_block(common);
    let n = b.ins().fcvt_from_sint(types::F32, count);
    let n = b.ins().splat(ty, n);
    let q = b.ins().fdiv(sum, n);
    b.ins().jump(join, &[q.into()]);
    b.switch_to_block(rare);
    let mut q = sum;
    for lane in 0..ty.lane_count() as u8 {
        let s = b.ins().extractlane(sum, lane);
        let m = emit_mean(b, s, start, end, dtype);
        q = b.ins().insertlane(q, m, lane);
    }
    b.ins().jump(join, &[q.into()]);
    b.switch_to_block(join);
    b.block_params(join)[0]
}
