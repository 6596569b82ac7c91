//! Row walks: the loop over rows `begin..end` of a row kernel, one pass per row or in blocks
//! pass by pass, small blocks running their expensive passes flat with per-row values expanded
//! over the block's elements, as the plan's [`Rows`] says.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, StackSlot, Type, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_fused::{OperandKind, RowOutput, ScalarRef};
use ragtime_ops::reduce::ReduceKind;

use super::expr::{mem, Both, Emitter, RowValue};
use super::flat::{emit_elements, emit_flat_node, emit_flat_outputs, emit_map};
use super::fold::emit_reduction;
use super::loops::{emit_blocks, emit_loop};
use super::scalar::ir_type;
use crate::bulk_folds::RowFold;
use crate::callees;
use crate::kernel::FusedParams;
use crate::plan::{Prefetch, ReductionPlan, Rows, ScratchUse, EXPAND_VECTORS, ROW_VALUE_BYTES};
use crate::spec::expression;

/// Stores the splat `vector` at elements `start..end` of the buffer whose element 0 is at
/// `base`, [`EXPAND_VECTORS`] vectors at a time, so up to that many vectors' elements past `end`
/// are written too (scratch buffers have room for them; the next row overwrites them).
pub(super) fn emit_expand(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    vector: Value,
    base: Value,
    start: Value,
    end: Value,
) {
    let elem = e.spec.simd().expect("flat blocks are vector kernels");
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

/// Asks for the cache lines of every flat input's elements `s0..s1`, `prefetch.ahead` bytes
/// further on (see [`Prefetch`]).
fn emit_prefetch(b: &mut FunctionBuilder, e: &Emitter<'_>, prefetch: Prefetch, range: StackSlot, s0: Value, s1: Value) {
    let callee = callees::prefetch_range().expect("plans prefetch only on machines with the prefetch routine");
    // The flat inputs by element size; two of a size share a call (the second one's range is
    // the first one's moved by the distance between the buffers), one alone gets the distance 0 (one stream).
    let mut streams: Vec<(usize, Value)> = Vec::new();
    for (k, kind) in e.spec.operands().iter().enumerate() {
        if *kind == OperandKind::Full {
            streams.push((e.spec.graph().inputs()[k].size_of(), e.in_ptrs[k]));
        }
    }
    streams.sort_by_key(|&(size, _)| size);
    let mut i = 0;
    while i < streams.len() {
        let (size, base) = streams[i];
        let (from, to) = (b.ins().imul_imm_s(s0, size as i64), b.ins().imul_imm_s(s1, size as i64));
        let (from, to) = (b.ins().iadd(base, from), b.ins().iadd(base, to));
        let (from, to) = (b.ins().iadd_imm_s(from, prefetch.ahead), b.ins().iadd_imm_s(to, prefetch.ahead));
        let delta = match streams.get(i + 1) {
            Some(&(next_size, next_base)) if next_size == size => {
                i += 2;
                b.ins().isub(next_base, base)
            }
            _ => {
                i += 1;
                b.ins().iconst(e.ptr, 0)
            }
        };
        for (k, v) in [from, to, delta].into_iter().enumerate() {
            b.ins().stack_store(e.ptr, v, range, 8 * k as i32);
        }
        let at = b.ins().stack_addr(e.ptr, range, 0);
        callees::emit_call(b, callee, &[at]);
    }
}

/// The row loop. With one pass per row (a row map, or one reduction alone), row after row. With
/// more, rows go in blocks ([`Rows::Blocked`]): each reduction makes one pass over the block's rows,
/// keeping each row's result (scalar and splat vector) in a stack slot, then one pass computes
/// the element outputs. A row's passes form one dependency chain (softmax: max, then
/// `exp(x - max)` and its sum, then the division), so a row at a time runs at the chain's
/// latency on short rows; within a pass the block's rows are independent and the core overlaps
/// them. The block's values stay in L1 between passes. Keeping per-row values in memory also
/// pins where they are computed: Cranelift places pure instructions at their uses and does not
/// hoist them back out of the next pass's loops, so a lane fold or splat held as an SSA value
/// would be redone at every vector.
///
/// A block small enough (its rows are contiguous in the flat values) runs its expensive passes
/// *flat* ([`crate::plan::FlatBlocks`]): one vector loop over all the block's elements,
/// with the per-row values it reads expanded over each row's elements in scratch buffers, so
/// short rows cost no scalar tail of `exp` or division each, and no loop exit each. An
/// expensive reduction argument goes to a scratch buffer that the row's fold and the element
/// pass read. Every element gets the same operations as row by row, and the folds the same
/// order, so the results are the same bits.
pub(super) fn emit_rows(b: &mut FunctionBuilder, p: &FusedParams, e: &Emitter<'_>, rows: &Rows, slots: &[StackSlot]) {
    let (spec, plan) = (e.spec, e.plan);
    let n_ops = spec.operands().len();
    let n_inputs = spec.graph().inputs().len();
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
        for (k, kind) in spec.operands().iter().enumerate() {
            if *kind == OperandKind::PerRow {
                let dtype = spec.graph().inputs()[k];
                let a = e.addr(b, e.in_ptrs[k], r, dtype);
                let s = b.ins().load(ir_type(dtype), mem(), a, 0);
                row_values[k] = RowValue::Row(e.both(b, s));
            }
        }
        (start, end, row_values)
    };
    let store_results = |b: &mut FunctionBuilder, r: Value, k: usize, value: Value| {
        let dtype = spec.graph().inputs()[n_ops + k];
        for (j, o) in spec.outputs().iter().enumerate() {
            if matches!(*o, RowOutput::Reduction { index, .. } if index == k) {
                let a = e.addr(b, e.out_ptrs[j], r, dtype);
                b.ins().store(mem(), value, a, 0);
            }
        }
    };
    let out_stash = e.out_stash();
    let Rows::Blocked { rows: row_block, flat } = rows else {
        // One pass per row (a row reduction, or a row map): nothing to overlap. With a prefetch
        // and a large range, in groups of rows, each first asking for its inputs' lines further
        // on.
        let one_row = |b: &mut FunctionBuilder, r: Value| {
            let (start, end, mut row_values) = row_start(b, r);
            if let Some(red) = plan.reductions.first() {
                let value = emit_reduction(b, e, red, start, end, &row_values, &[], None);
                store_results(b, r, 0, value);
            } else {
                e.hoist(b, &mut row_values);
                emit_elements(b, e, start, end, &row_values, &out_stash);
            }
        };
        let plain = |b: &mut FunctionBuilder| {
            let _ = emit_loop(b, e.ptr, p.begin, p.end, 1, &[], &mut |b, r, _| {
                one_row(b, r);
                Vec::new()
            });
        };
        let Rows::OnePass { prefetch: Some(prefetch) } = rows else {
            plain(b);
            return;
        };
        // Prefetching only pays on data that comes from memory: a range of fewer bytes runs
        // the plain loop.
        let flat_bytes: usize = spec
            .operands()
            .iter()
            .zip(spec.graph().inputs())
            .filter(|(kind, _)| **kind == OperandKind::Full)
            .map(|(_, dtype)| dtype.size_of())
            .sum();
        let (v0, v1) = (split(b, p.begin), split(b, p.end));
        let values = b.ins().isub(v1, v0);
        let bytes = b.ins().imul_imm_s(values, flat_bytes as i64);
        let large = b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, bytes, prefetch.min_bytes);
        let (grouped, small, done) = (b.create_block(), b.create_block(), b.create_block());
        b.ins().brif(large, grouped, &[], small, &[]);
        b.switch_to_block(small);
        plain(b);
        b.ins().jump(done, &[]);
        b.switch_to_block(grouped);
        emit_blocks(b, e.ptr, p.begin, p.end, &mut |b, first| {
            let past = b.ins().iadd_imm_s(first, prefetch.rows);
            let short = b.ins().icmp(IntCC::UnsignedLessThan, past, p.end);
            let last = b.ins().select(short, past, p.end);
            let (s0, s1) = (split(b, first), split(b, last));
            emit_prefetch(b, e, *prefetch, slots[prefetch.range], s0, s1);
            let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                one_row(b, r);
                Vec::new()
            });
            last
        });
        b.ins().jump(done, &[]);
        b.switch_to_block(done);
        return;
    };
    let row_block = *row_block;
    // The row-value slots come first in the plan's scratch list, one per reduction.
    let slots_rows: &[StackSlot] = &slots[..plan.reductions.len()];
    let result_types: Vec<(Type, Type)> = (0..plan.reductions.len())
        .map(|k| {
            let dtype = spec.graph().inputs()[n_ops + k];
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
    // The results of reductions `..upto` for row `r` that a pass reads (`read`, by graph input),
    // read back from their slots.
    let earlier = |b: &mut FunctionBuilder,
                   row_values: &mut [RowValue],
                   (first, r): (Value, Value),
                   upto: usize,
                   read: &[bool]| {
        for k in (0..upto).filter(|&k| read[n_ops + k]) {
            let at = entry(b, slots_rows[k], first, r);
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
        let at = entry(b, slots_rows[k], first, r);
        b.ins().store(mem(), both.scalar, at, 0);
        b.ins().store(mem(), both.vector, at, 16);
        both.vector
    };
    // Vector kernels keep each block's hoisted per-row values (`KernelSpec::hoisted`) in slots,
    // computed a vector of rows at a time after the block's folds; scalar kernels compute them
    // row by row before the element pass (`Emitter::hoist`).
    let hoisted_slots: Vec<StackSlot> = (0..spec.hoisted().len())
        .filter_map(|j| plan.scratch.iter().position(|s| s.holds == ScratchUse::HoistedValues(j)).map(|s| slots[s]))
        .collect();
    let by_vectors = !hoisted_slots.is_empty();
    let hoisted_refs: Vec<ScalarRef> = spec.hoisted().iter().map(|&(n, _)| ScalarRef::Node(n)).collect();
    let hoisted_reads = crate::spec::expression(spec.graph(), &hoisted_refs, &[]).1;
    // The hoisted values of rows `first..last` into their slots, `lanes` rows per vector (the
    // lanes past `last` repeat its last row); where `expand` has a buffer for one, also expanded
    // over each row's elements (a flat block).
    let hoist_block = |b: &mut FunctionBuilder, first: Value, last: Value, expand: &[Option<Value>]| {
        let Some(elem) = spec.simd().filter(|_| by_vectors) else { return };
        let lanes = elem.lanes();
        let _ = emit_loop(b, e.ptr, first, last, lanes, &[], &mut |b, g, _| {
            let last_row = b.ins().iadd_imm_s(last, -1);
            let rows: Vec<Value> = (0..lanes)
                .map(|l| {
                    let r = b.ins().iadd_imm_s(g, l);
                    let beyond = b.ins().icmp(IntCC::UnsignedGreaterThan, r, last_row);
                    b.ins().select(beyond, last_row, r)
                })
                .collect();
            let mut row_values: Vec<RowValue> = vec![RowValue::Absent; n_inputs];
            for (i, value) in row_values.iter_mut().enumerate() {
                let per_row = i >= n_ops || spec.operands()[i] == OperandKind::PerRow;
                if !hoisted_reads[i] || !per_row {
                    continue;
                }
                let dtype = spec.graph().inputs()[i];
                let load = |b: &mut FunctionBuilder, r: Value| {
                    let at = if i < n_ops {
                        e.addr(b, e.in_ptrs[i], r, dtype)
                    } else {
                        entry(b, slots_rows[i - n_ops], first, r)
                    };
                    b.ins().load(ir_type(dtype), mem(), at, 0)
                };
                let scalar = load(b, rows[0]);
                let mut vector = b.ins().splat(elem.vector_ty(), scalar);
                for (l, &r) in rows.iter().enumerate().skip(1) {
                    let lane = load(b, r);
                    vector = b.ins().insertlane(vector, lane, l as u8);
                }
                *value = RowValue::Row(Both { scalar, vector });
            }
            for (j, (input, v)) in e.hoisted_values(b, &row_values, true).into_iter().enumerate() {
                for (l, &r) in rows.iter().enumerate() {
                    let lane = b.ins().extractlane(v, l as u8);
                    let both = e.both(b, lane);
                    let at = entry(b, hoisted_slots[j], first, r);
                    b.ins().store(mem(), both.scalar, at, 0);
                    b.ins().store(mem(), both.vector, at, 16);
                    if let Some(base) = expand[input] {
                        let (start, end) = (split(b, r), {
                            let next = b.ins().iadd_imm_s(r, 1);
                            split(b, next)
                        });
                        emit_expand(b, e, both.vector, base, start, end);
                    }
                }
            }
            Vec::new()
        });
    };
    // Row `r`'s hoisted values read back from their slots (vector kernels), or computed.
    let hoisted_values = |b: &mut FunctionBuilder, row_values: &mut [RowValue], first: Value, r: Value| {
        if !by_vectors {
            e.hoist(b, row_values);
            return;
        }
        for (j, &(_, input)) in spec.hoisted().iter().enumerate() {
            let at = entry(b, hoisted_slots[j], first, r);
            let dtype = spec.graph().inputs()[input];
            let scalar = b.ins().load(e.ty(dtype, false), mem(), at, 0);
            let vector = b.ins().load(e.ty(dtype, true), mem(), at, 16);
            row_values[input] = RowValue::Row(Both { scalar, vector });
        }
    };
    let no_expansion = vec![None; n_inputs];
    // The graph inputs an expression reads (`roots`, not below the nodes in `stop`): a pass loads
    // only the earlier results it reads.
    let reads = |roots: &[ScalarRef], stop: &[(usize, Value)]| {
        let stop: Vec<usize> = stop.iter().map(|&(n, _)| n).collect();
        expression(spec.graph(), roots, &stop).1
    };
    // The element pass's expressions: the element outputs, and the hoisted maps (which scalar
    // kernels compute from the row's values).
    let element_roots: Vec<ScalarRef> = RowOutput::elements(spec.outputs())
        .into_iter()
        .chain(spec.hoisted().iter().map(|&(n, _)| ScalarRef::Node(n)))
        .collect();
    // Reduction `k` of the block `first..last` by one bulk call (`flat.bulk_folds`) over `values`
    // (indexed by the row offsets), expanded into `expand` where given, kept in its slot when a
    // later pass reads it there (`slots`); a maximum's flagged block runs `exact`, the IR's
    // row-by-row fold.
    let bulk_fold = |b: &mut FunctionBuilder,
                     (k, red): (usize, &ReductionPlan),
                     (first, last): (Value, Value),
                     values: Value,
                     (expand, slots): (Option<Value>, bool),
                     exact: &mut dyn FnMut(&mut FunctionBuilder)| {
        let fold = if red.kind == ReduceKind::Max { RowFold::Max } else { RowFold::Sum };
        let callee = callees::bulk_row_fold(fold).expect("plans for this machine call only the bulk functions it has");
        let off = b.ins().imul_imm_s(first, 8);
        let splits_at = b.ins().iadd(p.splits, off);
        let rows = b.ins().isub(last, first);
        let expand = expand.unwrap_or_else(|| b.ins().iconst(e.ptr, 0));
        let slots_at = if slots { b.ins().stack_addr(e.ptr, slots_rows[k], 0) } else { b.ins().iconst(e.ptr, 0) };
        let flagged = callees::emit_call(b, callee, &[values, splits_at, rows, expand, slots_at])
            .expect("the row fold returns its flag");
        if fold == RowFold::Max {
            let (refold, done) = (b.create_block(), b.create_block());
            b.ins().brif(flagged, refold, &[], done, &[]);
            b.switch_to_block(refold);
            exact(b);
            b.ins().jump(done, &[]);
            b.switch_to_block(done);
        }
    };
    let bulk = |k: usize| flat.as_ref().is_some_and(|flat| flat.bulk_folds[k]);
    // The block's rows one by one, pass by pass.
    let by_rows = |b: &mut FunctionBuilder, first: Value, last: Value| {
        for (k, red) in plan.reductions.iter().enumerate() {
            let read = reads(&[red.arg], &[]);
            let mut exact = |b: &mut FunctionBuilder| {
                let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                    let (start, end, mut row_values) = row_start(b, r);
                    earlier(b, &mut row_values, (first, r), k, &read);
                    let keep = red.keep.map(|j| e.out_ptrs[j]);
                    let value = emit_reduction(b, e, red, start, end, &row_values, &[], keep);
                    keep_result(b, first, r, k, value);
                    Vec::new()
                });
            };
            if !bulk(k) {
                exact(b);
                continue;
            }
            // The bulk fold reads the argument from a full input, or from an output's buffer
            // (computed here row by row first: the buffer that keeps it, or one free until the
            // element pass).
            let buffer = flat.as_ref().and_then(|flat| flat.fold_buffers[k]);
            let values = match (red.arg, buffer) {
                (ScalarRef::Input(i), _) => e.in_ptrs[i],
                (_, Some(j)) => {
                    let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                        let (start, end, mut row_values) = row_start(b, r);
                        earlier(b, &mut row_values, (first, r), k, &read);
                        emit_map(b, e, start, end, &[(red.arg, e.out_ptrs[j])], &row_values, &[]);
                        Vec::new()
                    });
                    e.out_ptrs[j]
                }
                _ => unreachable!("the plan folds in bulk only full inputs and arguments it gives a buffer"),
            };
            bulk_fold(b, (k, red), (first, last), values, (None, true), &mut exact);
        }
        if by_vectors {
            hoist_block(b, first, last, &no_expansion);
        }
        let read = reads(&element_roots, &out_stash);
        let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
            let (start, end, mut row_values) = row_start(b, r);
            earlier(b, &mut row_values, (first, r), plan.reductions.len(), &read);
            hoisted_values(b, &mut row_values, first, r);
            emit_elements(b, e, start, end, &row_values, &out_stash);
            Vec::new()
        });
    };
    // Where the block of rows starting at `first` ends.
    let block_bounds = |b: &mut FunctionBuilder, first: Value| {
        let past = b.ins().iadd_imm_s(first, row_block);
        let short = b.ins().icmp(IntCC::UnsignedLessThan, past, p.end);
        b.ins().select(short, past, p.end)
    };
    let Some(flat) = flat else {
        let _ = emit_loop(b, e.ptr, p.begin, p.end, row_block, &[], &mut |b, first, _| {
            let last = block_bounds(b, first);
            by_rows(b, first, last);
            Vec::new()
        });
        return;
    };
    let elem = spec.simd().expect("flat blocks are for vector kernels");
    // Whether a flat block's later pass reads reduction `k`'s results from its slots: a later fold
    // row by row over an argument computed in IR, the element outputs row by row, the hoisted
    // values. (Flat passes read expansions; bulk folds and flat arguments read neither.)
    let slot_read: Vec<bool> = (0..plan.reductions.len())
        .map(|k| {
            let input = n_ops + k;
            let later_fold = plan
                .reductions
                .iter()
                .enumerate()
                .skip(k + 1)
                .any(|(j, red)| !flat.bulk_folds[j] && flat.args[j].is_none() && reads(&[red.arg], &[])[input]);
            let elements = !flat.outputs && reads(&element_roots, &[])[input];
            later_fold || elements || (by_vectors && hoisted_reads[input])
        })
        .collect();
    let mut expanded_slots: Vec<Option<StackSlot>> = vec![None; n_inputs];
    for &(i, s) in &flat.expanded {
        expanded_slots[i] = Some(slots[s]);
    }
    let flat_pass = |b: &mut FunctionBuilder, first: Value, last: Value, s0: Value, s1: Value| {
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
        for (k, red) in plan.reductions.iter().enumerate() {
            if let Some(node) = &flat.args[k] {
                let slot = slots[node.scratch];
                let base = bias(b, slot);
                let scratch = b.ins().stack_addr(e.ptr, slot, 0);
                emit_flat_node(b, e, node, (s0, s1), (base, scratch), &expanded_values, &stash);
                stash.push((node.node, base));
            }
            let read = reads(&[red.arg], &stash);
            let mut exact = |b: &mut FunctionBuilder| {
                let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                    let (start, end, mut row_values) = row_start(b, r);
                    earlier(b, &mut row_values, (first, r), k, &read);
                    let value = emit_reduction(b, e, red, start, end, &row_values, &stash, None);
                    let vector = keep_result(b, first, r, k, value);
                    if let Some(base) = expanded[n_ops + k] {
                        emit_expand(b, e, vector, base, start, end);
                    }
                    Vec::new()
                });
            };
            if !flat.bulk_folds[k] {
                exact(b);
                continue;
            }
            // The argument's values: a full input's buffer, or its flat scratch buffer.
            let values = match red.arg {
                ScalarRef::Input(i) => e.in_ptrs[i],
                ScalarRef::Node(n) => stash.iter().find(|&&(m, _)| m == n).expect("a flat argument").1,
                ScalarRef::Const(_) => unreachable!("the plan folds in bulk no constant"),
            };
            bulk_fold(b, (k, red), (first, last), values, (expanded[n_ops + k], slot_read[k]), &mut exact);
        }
        // After the folds, the hoisted per-row values, expanded where the flat outputs read them.
        hoist_block(b, first, last, &expanded);
        if flat.outputs {
            emit_flat_outputs(b, e, &flat.divides, (s0, s1), &expanded_values, &stash);
        } else {
            let read = reads(&element_roots, &stash);
            let _ = emit_loop(b, e.ptr, first, last, 1, &[], &mut |b, r, _| {
                let (start, end, mut row_values) = row_start(b, r);
                earlier(b, &mut row_values, (first, r), plan.reductions.len(), &read);
                hoisted_values(b, &mut row_values, first, r);
                emit_elements(b, e, start, end, &row_values, &stash);
                Vec::new()
            });
        }
    };
    // A flat block takes up to `max_rows` rows while they hold at most `max_values` values
    // (short rows: fewer, longer calls into the bulk functions), else `row_block` rows.
    let (max_rows, max_values) = (flat.max_rows, flat.max_values);
    emit_blocks(b, e.ptr, p.begin, p.end, &mut |b, first| {
        let s0 = split(b, first);
        let wide = b.ins().iadd_imm_s(first, max_rows);
        let wide_short = b.ins().icmp(IntCC::UnsignedLessThan, wide, p.end);
        let wide = b.ins().select(wide_short, wide, p.end);
        let s_wide = split(b, wide);
        let n_wide = b.ins().isub(s_wide, s0);
        let fits = b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, n_wide, max_values);
        let narrow = block_bounds(b, first);
        let last = b.ins().select(fits, wide, narrow);
        let s1 = split(b, last);
        let n = b.ins().isub(s1, s0);
        let small = b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, n, max_values);
        let (flat_path, rows_path, join) = (b.create_block(), b.create_block(), b.create_block());
        b.ins().brif(small, flat_path, &[], rows_path, &[]);
        b.switch_to_block(flat_path);
        flat_pass(b, first, last, s0, s1);
        b.ins().jump(join, &[]);
        b.switch_to_block(rows_path);
        by_rows(b, first, last);
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        last
    });
}
