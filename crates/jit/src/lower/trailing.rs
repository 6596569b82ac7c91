//! Trailing rows: the row loop of a kernel whose rows are the `k`-value vectors of a trailing
//! uniform axis (a layer norm over features, a softmax over classes), as the plan's
//! [`TrailingRows`] says. A vector of rows at a time, a row per lane: value `j` of each row is
//! gathered into one vector, so each reduction folds lane by lane in value order from the
//! reference's identity with the reference's combining op (the reference's bits, no horizontal
//! folds, no masks for rows shorter than a vector); per-row operands, reduction results and
//! hoisted per-row values are plain vectors of rows (read and written whole, rows being
//! contiguous); element outputs are stored value by value. The rows past the last whole vector
//! run one at a time, the same code on scalars.

use cranelift_codegen::ir::{types, ConstantData, Endianness, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_core::{dispatch_dtype, DType};
use ragtime_fused::{OperandKind, RowOutput, ScalarConst};
use ragtime_ops::reduce::ReduceKind;

use super::expr::{mem, Both, Emitter, RowValue};
use super::fold::emit_mean;
use super::lanes::emit_op;
use super::loops::{emit_loop, vector_limit};
use crate::kernel::FusedParams;
use crate::plan::TrailingRows;

/// The row loop over rows `p.begin..p.end`: whole vectors of rows, then row by row.
pub(super) fn emit_trailing(b: &mut FunctionBuilder, p: &FusedParams, e: &Emitter<'_>, rows: &TrailingRows) {
    let lanes = e.spec.simd().expect("trailing rows are planned for vector kernels").lanes();
    let limit = vector_limit(b, p.begin, p.end, lanes);
    let _ = emit_loop(b, e.ptr, p.begin, limit, lanes, &[], &mut |b, r, _| {
        emit_rows(b, e, rows, r, true);
        Vec::new()
    });
    let _ = emit_loop(b, e.ptr, limit, p.end, 1, &[], &mut |b, r, _| {
        emit_rows(b, e, rows, r, false);
        Vec::new()
    });
}

/// A value read alike as a scalar and as a vector: the group's value (a vector of rows, or the
/// row's scalar).
fn row_value(v: Value) -> RowValue {
    RowValue::Row(Both { scalar: v, vector: v })
}

/// The byte masks of the interleaves that transpose a square of vectors (x86 `punpck{l,h}dq` and
/// `punpck{l,h}qdq`): the low or high 32-bit (or 64-bit) halves of two vectors, alternating.
fn interleave(low: bool, bytes: usize) -> [u8; 16] {
    let mut mask = [0u8; 16];
    let base = if low { 0 } else { 8 };
    for (m, slot) in mask.iter_mut().enumerate() {
        let (unit, within) = (m / bytes, m % bytes);
        // Even units from the first vector, odd ones from the second (bytes 16..32).
        let from = if unit % 2 == 0 { 0 } else { 16 };
        *slot = (from + base + (unit / 2) * bytes + within) as u8;
    }
    mask
}

/// Transposes `rows` (a square of `lanes` vectors of 4 or 2 lanes): vector `i` of the result
/// holds lane `i` of each input, in order. Its own inverse.
fn transpose(b: &mut FunctionBuilder, ty: Type, rows: &[Value]) -> Vec<Value> {
    let flags = MemFlagsData::new().with_endianness(Endianness::Little);
    let shuffle = |b: &mut FunctionBuilder, x: Value, y: Value, low: bool, bytes: usize| {
        let (x, y) = (b.ins().bitcast(types::I8X16, flags, x), b.ins().bitcast(types::I8X16, flags, y));
        let mask = b.func.dfg.immediates.push(ConstantData::from(interleave(low, bytes).to_vec()));
        let z = b.ins().shuffle(x, y, mask);
        b.ins().bitcast(ty, flags, z)
    };
    match rows {
        [r0, r1] => vec![shuffle(b, *r0, *r1, true, 8), shuffle(b, *r0, *r1, false, 8)],
        [r0, r1, r2, r3] => {
            let t0 = shuffle(b, *r0, *r1, true, 4);
            let t1 = shuffle(b, *r0, *r1, false, 4);
            let t2 = shuffle(b, *r2, *r3, true, 4);
            let t3 = shuffle(b, *r2, *r3, false, 4);
            vec![
                shuffle(b, t0, t2, true, 8),
                shuffle(b, t0, t2, false, 8),
                shuffle(b, t1, t3, true, 8),
                shuffle(b, t1, t3, false, 8),
            ]
        }
        _ => unreachable!("vector kernels have 2 or 4 lanes"),
    }
}

/// Rows `r..r + lanes` (`vector`) or row `r` alone: every pass of the kernel.
fn emit_rows(b: &mut FunctionBuilder, e: &Emitter<'_>, rows: &TrailingRows, r: Value, vector: bool) {
    let (spec, plan) = (e.spec, e.plan);
    let graph = spec.graph();
    let n_ops = spec.operands().len();
    let n_inputs = graph.inputs().len();
    let elem = spec.simd().expect("trailing rows are planned for vector kernels");
    let lanes = if vector { elem.lanes() } else { 1 };
    let k = rows.length;
    // A vector of rows whose length is a multiple of the lanes loads `lanes` vectors of each
    // row and transposes them; otherwise each value is gathered lane by lane.
    let square = vector && k % lanes == 0;
    // Where the group's first row starts in the buffer at `base` holding `dtype` values.
    let group_start = |b: &mut FunctionBuilder, base: Value, dtype: DType| {
        let first = b.ins().imul_imm_s(r, k * dtype.size_of() as i64);
        b.ins().iadd(base, first)
    };
    // `given[j][i]`: value `j` of the group's rows of full operand `i`, loaded when first read (so
    // loads sit next to their use) and kept for the later passes.
    let mut given: Vec<Vec<Option<Value>>> = vec![vec![None; n_inputs]; k as usize];
    let load_value = |b: &mut FunctionBuilder, given: &mut Vec<Vec<Option<Value>>>, j: i64| {
        for (i, kind) in spec.operands().iter().enumerate() {
            if *kind != OperandKind::Full || given[j as usize][i].is_some() {
                continue;
            }
            let dtype = graph.inputs()[i];
            let size = dtype.size_of() as i64;
            let at = group_start(b, e.in_ptrs[i], dtype);
            if square {
                // The square of vectors holding value `j`: values `first..first + lanes` of each row.
                let first = j - j % lanes;
                let loaded: Vec<Value> = (0..lanes)
                    .map(|row| b.ins().load(e.ty(dtype, true), mem(), at, ((row * k + first) * size) as i32))
                    .collect();
                for (c, v) in transpose(b, e.ty(dtype, true), &loaded).into_iter().enumerate() {
                    given[(first + c as i64) as usize][i] = Some(v);
                }
                continue;
            }
            let scalar_ty = e.ty(dtype, false);
            let v0 = b.ins().load(scalar_ty, mem(), at, (j * size) as i32);
            let v = if vector {
                let mut v = b.ins().scalar_to_vector(e.ty(dtype, true), v0);
                for lane in 1..lanes {
                    let x = b.ins().load(scalar_ty, mem(), at, ((lane * k + j) * size) as i32);
                    v = b.ins().insertlane(v, x, lane as u8);
                }
                v
            } else {
                v0
            };
            given[j as usize][i] = Some(v);
        }
    };
    // Per-row operands: the group's rows are contiguous.
    let row_address = |b: &mut FunctionBuilder, base: Value, dtype: DType| e.addr(b, base, r, dtype);
    let mut values = vec![RowValue::Absent; n_inputs];
    for (i, kind) in spec.operands().iter().enumerate() {
        if *kind == OperandKind::PerRow {
            let dtype = graph.inputs()[i];
            let at = row_address(b, e.in_ptrs[i], dtype);
            values[i] = row_value(b.ins().load(e.ty(dtype, vector), mem(), at, 0));
        }
    }
    let idx = b.ins().iconst(e.ptr, 0);
    for (red_index, red) in plan.reductions.iter().enumerate() {
        let dtype = graph.dtype(red.arg);
        let identity = dispatch_dtype!(dtype,
            // The identity of a uniform axis (`-inf` for a float maximum).
            T => ScalarConst::from_value(red.kind.identity::<T>(false)),
            // `KernelSpec::new` refuses strings.
            string => ScalarConst::from_value(0i64));
        let mut acc = e.scalar_const(b, &identity, vector);
        let combine = red.kind.combine();
        for j in 0..k {
            load_value(b, &mut given, j);
            let x = e.eval_given(b, &[red.arg], idx, vector, &values, &[], &given[j as usize])[0];
            acc = emit_op(b, elem, combine, &[acc, x]);
        }
        if red.kind == ReduceKind::Mean {
            acc = mean(b, e, acc, k, dtype, vector);
        }
        values[n_ops + red_index] = row_value(acc);
        for (j, out) in spec.outputs().iter().enumerate() {
            if matches!(*out, RowOutput::Reduction { index, .. } if index == red_index) {
                let at = row_address(b, e.out_ptrs[j], dtype);
                b.ins().store(mem(), acc, at, 0);
            }
        }
    }
    for (input, v) in e.hoisted_values(b, &values, vector) {
        values[input] = row_value(v);
    }
    let outs = e.element_outputs();
    if outs.is_empty() {
        return;
    }
    let wanted: Vec<_> = outs.iter().map(|(r, _)| *r).collect();
    // Each output's results of the current square (`square`), stored transposed when complete.
    let mut pending: Vec<Vec<Value>> = vec![Vec::new(); outs.len()];
    for j in 0..k {
        load_value(b, &mut given, j);
        let results = e.eval_given(b, &wanted, idx, vector, &values, &[], &given[j as usize]);
        for (o, (&(out, base), v)) in outs.iter().zip(results).enumerate() {
            let dtype = graph.dtype(out);
            let size = dtype.size_of() as i64;
            let at = group_start(b, base, dtype);
            if square {
                pending[o].push(v);
                if pending[o].len() == lanes as usize {
                    let first = j + 1 - lanes;
                    for (row, v) in transpose(b, e.ty(dtype, true), &pending[o]).into_iter().enumerate() {
                        b.ins().store(mem(), v, at, ((row as i64 * k + first) * size) as i32);
                    }
                    pending[o].clear();
                }
            } else if vector {
                for lane in 0..lanes {
                    let x = b.ins().extractlane(v, lane as u8);
                    b.ins().store(mem(), x, at, ((lane * k + j) * size) as i32);
                }
            } else {
                b.ins().store(mem(), v, at, (j * size) as i32);
            }
        }
    }
}

/// The mean of rows of `k` values from their sums, as the reference divides (in float64, rounded
/// once): a float32 quotient by a count exact in float32 (`k` is small) is that rounding already,
/// float64 having more than twice float32's precision.
fn mean(b: &mut FunctionBuilder, e: &Emitter<'_>, sum: Value, k: i64, dtype: DType, vector: bool) -> Value {
    if !vector {
        let (start, end) = (b.ins().iconst(e.ptr, 0), b.ins().iconst(e.ptr, k));
        return emit_mean(b, sum, start, end, dtype);
    }
    let ty = b.func.dfg.value_type(sum);
    let count = if dtype == DType::F32 { b.ins().f32const(k as f32) } else { b.ins().f64const(k as f64) };
    let count = b.ins().splat(ty, count);
    b.ins().fdiv(sum, count)
}
