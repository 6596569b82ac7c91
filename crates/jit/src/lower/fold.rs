//! Folds: one row reduction over a row's elements in IR, as its plan says ([`Fold`]): in order
//! for scalar kernels; two vector accumulators and a lane fold by shuffles for vector kernels;
//! NaN-dropping max / min with an exact refold of the rare rows; means divided in float64.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, Block, Endianness, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_core::{dispatch_dtype, DType};
use ragtime_fused::ScalarConst;
use ragtime_ops::reduce::ReduceKind;

use super::expr::{mem, Both, Emitter, RowValue};
use super::lanes::int_extreme;
use super::loops::{emit_loop, vector_limit};
use super::scalar::emit_scalar_op;
use crate::elem::Elem;
use crate::plan::{Fold, ReductionPlan, UNROLL};

/// One reduction over elements `start..end` of the current row, finalized (mean divides).
/// `stash` as for `Emitter::eval`; `keep`: a buffer the reduction's argument is also stored
/// into, element by element (the output-buffer stash).
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_reduction(
    b: &mut FunctionBuilder,
    e: &Emitter<'_>,
    red: &ReductionPlan,
    start: Value,
    end: Value,
    row_values: &[RowValue],
    stash: &[(usize, Value)],
    keep: Option<Value>,
) -> Value {
    let arg_dtype = e.spec.graph().dtype(red.arg);
    // Rows of a trailing uniform axis fold from that axis's identity (`-inf` for a float
    // maximum), rows of a ragged axis from the finite extremes.
    let ragged = e.spec.trailing_length().is_none();
    let arg = |b: &mut FunctionBuilder, i: Value, vector: bool| {
        let x = e.eval(b, &[red.arg], i, vector, row_values, stash)[0];
        if let Some(base) = keep {
            let a = e.addr(b, base, i, arg_dtype);
            b.ins().store(mem(), x, a, 0);
        }
        x
    };
    let Some(elem) = e.spec.simd().filter(|_| red.fold != Fold::Ordered) else {
        // Scalar kernels fold in order from the reference's identity with the reference's
        // combining op, so they give its bits.
        let identity = dispatch_dtype!(arg_dtype,
            T => ScalarConst::from_value(red.kind.identity::<T>(ragged)),
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
    // The identities of `ReduceKind` (on a ragged axis max / min start at the finite extremes, on
    // a uniform one at the infinities; for integers the type's extremes).
    let (big, int_max, int_min) = match elem {
        Elem::F32 | Elem::F64 if !ragged => (f64::INFINITY, 0, 0),
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
    // `+0.0` and integer 0 are all-zero bits (`float_identity` is never `-0.0`).
    let zero_identity = float_identity == 0.0 && int_identity == 0;
    let mut arg = arg;
    if red.fold == Fold::DroppingNans {
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
        let value = fold_row(b, e, elem, start, end, init, &mut arg, &combine, zero_identity);
        b.ins().jump(done, &[value.into()]);
        b.switch_to_block(done);
        return b.block_params(done)[0];
    }
    let acc = fold_row(b, e, elem, start, end, init, &mut arg, &combine, zero_identity);
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
    zero_identity: bool,
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
    // Lane `k` is new when `k > lanes - rest - 1` (one compare: `>=` takes two instructions).
    let last_old = b.ins().iconst(lane_ty, lanes - 1);
    let last_old = b.ins().isub(last_old, rest);
    let last_old = b.ins().splat(mask_ty, last_old);
    let iota: Vec<u8> = (0..lanes)
        .flat_map(|k| if lanes == 4 { (k as u32).to_le_bytes().to_vec() } else { (k as u64).to_le_bytes().to_vec() })
        .collect();
    let iota = b.func.dfg.constants.insert(cranelift_codegen::ir::ConstantData::from(iota));
    let iota = b.ins().vconst(mask_ty, iota);
    let new = b.ins().icmp(IntCC::SignedGreaterThan, iota, last_old);
    let vty = elem.vector_ty();
    let flags = MemFlagsData::new().with_endianness(Endianness::Little);
    let new = if vty == mask_ty { new } else { b.ins().bitcast(vty, flags, new) };
    // With an identity of all-zero bits (sums: +0), keeping the new lanes is one `and`.
    let last = if zero_identity { b.ins().band(last, new) } else { b.ins().bitselect(new, last, init.vector) };
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
pub(super) fn pick_ordered(b: &mut FunctionBuilder, max: bool, acc: Value, x: Value) -> Value {
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
pub(super) fn emit_mean(b: &mut FunctionBuilder, sum: Value, start: Value, end: Value, dtype: DType) -> Value {
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
