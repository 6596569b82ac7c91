//! Scalar lowering of the whole elementwise vocabulary on every non-string dtype — casts,
//! comparisons, `where`, logical ops, 8/16/32/64-bit signed and unsigned integers, bool — as the
//! reference kernels of `ragtime_ops::elemwise` define them (the one place for scalar semantics):
//! integer arithmetic wraps, integer division and modulo by zero and negative integer exponents
//! fault, casts follow `DenseTensor::cast` (through `f64` when a float or bool is involved, with
//! saturation and NaN → 0 for float → integer; wrapping between integers).
//!
//! The rare transcendental functions (`expm1`, `erf`, inverse trigonometry, ...) and the float
//! remainders are calls to extern "C" shims around the very kernels the interpreter runs
//! (`Kernels::unary` / `Kernels::binary`, in [`crate::callees`]), so they are bit-identical to it.
//!
//! Values of a scalar loop: floats in `F32` / `F64`, integers in the integer type of their width
//! (signedness lives in the ops), bool in `I8` holding 0 or 1 — every op producing a bool
//! (comparisons, predicates, logical ops, casts to bool) yields only 0 or 1, so kernels store only
//! valid `bool` bytes.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_core::DType;
use ragtime_ops::elemwise::ScalarOp;

use super::lanes::{emit_op, float_cc, int_cc};
use crate::callees;
use crate::elem::Elem;

/// The Cranelift type holding one value of `dtype` in a scalar loop (bool: `I8`, 0 or 1).
/// Strings are never lowered (`KernelSpec::new` refuses them); they map to the offset type.
pub(crate) fn ir_type(dtype: DType) -> Type {
    match dtype {
        DType::Bool | DType::I8 | DType::U8 => types::I8,
        DType::I16 | DType::U16 => types::I16,
        DType::I32 | DType::U32 => types::I32,
        DType::I64 | DType::U64 | DType::String => types::I64,
        DType::F32 => types::F32,
        DType::F64 => types::F64,
    }
}

/// The integer constant `v` (wrapped to the width of `ty`; Cranelift wants narrow immediates
/// zero-extended).
pub(crate) fn int_const(b: &mut FunctionBuilder, ty: Type, v: i64) -> Value {
    let bits = ty.bits();
    let masked = if bits >= 64 { v } else { v & ((1i64 << bits) - 1) };
    b.ins().iconst(ty, masked)
}

/// The float constant `v` of `dtype` (float32 or float64).
fn float_const(b: &mut FunctionBuilder, dtype: DType, v: f64) -> Value {
    if dtype == DType::F32 {
        b.ins().f32const(v as f32)
    } else {
        b.ins().f64const(v)
    }
}

/// The smallest value of a signed integer type of `bits` bits.
fn signed_min(bits: u32) -> i64 {
    i64::MIN >> (64 - bits)
}

/// One scalar op of a scalar loop on values of `arg_dtypes`, giving a value of `out` (the
/// node's dtype). The second result is a fault condition (nonzero when the reference refuses
/// the operands: integer division or modulo by zero, a negative integer exponent).
pub(crate) fn emit_scalar_op(
    b: &mut FunctionBuilder,
    op: ScalarOp,
    out: DType,
    arg_dtypes: &[DType],
    a: &[Value],
) -> (Value, Option<Value>) {
    let d = if op == ScalarOp::Where { arg_dtypes[1] } else { arg_dtypes[0] };
    let value = match op {
        ScalarOp::Cast(to) => emit_cast(b, a[0], d, to),
        // The condition is 0 or 1.
        ScalarOp::Where => b.ins().select(a[0], a[1], a[2]),
        op if op.is_comparison() => emit_compare(b, op, d, a[0], a[1]),
        // True division of integers: both operands converted to the float result type first.
        ScalarOp::Divide | ScalarOp::DivideNoNan if !d.is_float() => {
            let x = emit_cast(b, a[0], d, out);
            let y = emit_cast(b, a[1], d, out);
            emit_float_op(b, op, out, &[x, y])
        }
        _ if d == DType::Bool => emit_logical(b, op, a),
        _ if d.is_float() => emit_float_op(b, op, d, a),
        _ => return emit_int_op(b, op, d, a),
    };
    (value, None)
}

/// `a op b` of two values of `dtype`, as 0 or 1.
fn emit_compare(b: &mut FunctionBuilder, op: ScalarOp, dtype: DType, x: Value, y: Value) -> Value {
    if dtype.is_float() {
        b.ins().fcmp(float_cc(op), x, y)
    } else {
        b.ins().icmp(int_cc(op, dtype.is_signed_integer()), x, y)
    }
}

/// Logical ops on bools held as 0 / 1 (so bitwise ops keep them 0 / 1).
fn emit_logical(b: &mut FunctionBuilder, op: ScalarOp, a: &[Value]) -> Value {
    match op {
        ScalarOp::LogicalAnd => b.ins().band(a[0], a[1]),
        ScalarOp::LogicalOr => b.ins().bor(a[0], a[1]),
        ScalarOp::LogicalXor => b.ins().bxor(a[0], a[1]),
        ScalarOp::LogicalNot => b.ins().bxor_imm_s(a[0], 1),
        // `KernelSpec::new` admits only the ops `lowered_op` accepts on bool.
        other => unreachable!("scalar op {other} is not defined on bool"),
    }
}

/// `v as f64` for a value of `from` (`Element::to_f64`).
fn to_f64(b: &mut FunctionBuilder, v: Value, from: DType) -> Value {
    match from {
        DType::F64 => v,
        DType::F32 => b.ins().fpromote(types::F64, v),
        d if d.is_signed_integer() => {
            let wide = if d == DType::I64 { v } else { b.ins().sextend(types::I64, v) };
            b.ins().fcvt_from_sint(types::F64, wide)
        }
        d => {
            let wide = if matches!(d, DType::U64) { v } else { b.ins().uextend(types::I64, v) };
            b.ins().fcvt_from_uint(types::F64, wide)
        }
    }
}

/// `v as T` for an `f64` value and the type `T` of `to` (`Element::from_f64`: float → integer
/// truncates toward zero and saturates, NaN gives 0; to bool: `v != 0.0`, true for NaN).
fn from_f64(b: &mut FunctionBuilder, v: Value, to: DType) -> Value {
    match to {
        DType::F64 => v,
        DType::F32 => b.ins().fdemote(types::F32, v),
        DType::Bool => {
            let zero = b.ins().f64const(0.0);
            b.ins().fcmp(FloatCC::NotEqual, v, zero)
        }
        DType::I64 => b.ins().fcvt_to_sint_sat(types::I64, v),
        DType::U64 => b.ins().fcvt_to_uint_sat(types::I64, v),
        d => {
            // Saturate to int64, then to the narrow type's range (the same result, since both
            // clamps are monotone), then drop the high bits.
            let ty = ir_type(d);
            let bits = ty.bits();
            let (lo, hi) =
                if d.is_signed_integer() { (signed_min(bits), !signed_min(bits)) } else { (0, (1i64 << bits) - 1) };
            let wide = b.ins().fcvt_to_sint_sat(types::I64, v);
            let lo = b.ins().iconst(types::I64, lo);
            let hi = b.ins().iconst(types::I64, hi);
            let below = b.ins().icmp(IntCC::SignedLessThan, wide, lo);
            let wide = b.ins().select(below, lo, wide);
            let above = b.ins().icmp(IntCC::SignedGreaterThan, wide, hi);
            let wide = b.ins().select(above, hi, wide);
            b.ins().ireduce(ty, wide)
        }
    }
}

/// `cast` from `from` to `to`, as `DenseTensor::cast`: through `f64` when either side is a
/// float or the target is bool; otherwise through `i64`, wrapping.
pub(crate) fn emit_cast(b: &mut FunctionBuilder, v: Value, from: DType, to: DType) -> Value {
    if from == to {
        return v;
    }
    if to == DType::Bool && !from.is_float() {
        // `(v as f64) != 0.0` is `v != 0` for every integer.
        return b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
    }
    if to.is_float() || from.is_float() {
        let wide = to_f64(b, v, from);
        return from_f64(b, wide, to);
    }
    let (from_ty, to_ty) = (ir_type(from), ir_type(to));
    if to_ty.bits() < from_ty.bits() {
        b.ins().ireduce(to_ty, v)
    } else if to_ty.bits() == from_ty.bits() {
        v
    } else if from.is_signed_integer() {
        b.ins().sextend(to_ty, v)
    } else {
        b.ins().uextend(to_ty, v)
    }
}

/// The float ops of the scalar loop: those of [`emit_op`], the ones only scalar loops have
/// (`sign`, `truncatediv`, `xdivy`, `divide_no_nan`, the predicates) and calls to the
/// interpreter's kernels for the rest.
fn emit_float_op(b: &mut FunctionBuilder, op: ScalarOp, dtype: DType, a: &[Value]) -> Value {
    if let Some(shim) = callees::float_shim(op, dtype) {
        return callees::emit_call(b, shim, a).expect("float shims return a value");
    }
    match op {
        ScalarOp::Sign => {
            // 1, -1, +0 for ±0, NaN for NaN.
            let z = float_const(b, dtype, 0.0);
            let one = float_const(b, dtype, 1.0);
            let minus_one = float_const(b, dtype, -1.0);
            let is_zero = b.ins().fcmp(FloatCC::Equal, a[0], z);
            let r = b.ins().select(is_zero, z, a[0]);
            let negative = b.ins().fcmp(FloatCC::LessThan, a[0], z);
            let r = b.ins().select(negative, minus_one, r);
            let positive = b.ins().fcmp(FloatCC::GreaterThan, a[0], z);
            b.ins().select(positive, one, r)
        }
        ScalarOp::TruncateDiv => {
            let q = b.ins().fdiv(a[0], a[1]);
            b.ins().trunc(q)
        }
        ScalarOp::Xdivy | ScalarOp::DivideNoNan => {
            // 0 where x (xdivy) or y (divide_no_nan) is ±0.
            let z = float_const(b, dtype, 0.0);
            let q = b.ins().fdiv(a[0], a[1]);
            let tested = if op == ScalarOp::Xdivy { a[0] } else { a[1] };
            let is_zero = b.ins().fcmp(FloatCC::Equal, tested, z);
            b.ins().select(is_zero, z, q)
        }
        ScalarOp::IsNan => b.ins().fcmp(FloatCC::Unordered, a[0], a[0]),
        ScalarOp::IsInf | ScalarOp::IsFinite => {
            let inf = float_const(b, dtype, f64::INFINITY);
            let magnitude = b.ins().fabs(a[0]);
            let cc = if op == ScalarOp::IsInf { FloatCC::Equal } else { FloatCC::LessThan };
            b.ins().fcmp(cc, magnitude, inf)
        }
        _ => emit_op(b, if dtype == DType::F32 { Elem::F32 } else { Elem::F64 }, op, a),
    }
}

/// Integer ops (signed or unsigned by `dtype`), wrapping like the reference's `wrapping_*`.
fn emit_int_op(b: &mut FunctionBuilder, op: ScalarOp, dtype: DType, a: &[Value]) -> (Value, Option<Value>) {
    let ty = ir_type(dtype);
    let signed = dtype.is_signed_integer();
    let value = match op {
        ScalarOp::Add => b.ins().iadd(a[0], a[1]),
        ScalarOp::Subtract => b.ins().isub(a[0], a[1]),
        ScalarOp::Multiply => b.ins().imul(a[0], a[1]),
        ScalarOp::Maximum | ScalarOp::Minimum => {
            let cc = match (op == ScalarOp::Maximum, signed) {
                (true, true) => IntCC::SignedGreaterThan,
                (true, false) => IntCC::UnsignedGreaterThan,
                (false, true) => IntCC::SignedLessThan,
                (false, false) => IntCC::UnsignedLessThan,
            };
            let first = b.ins().icmp(cc, a[0], a[1]);
            b.ins().select(first, a[0], a[1])
        }
        ScalarOp::Negative => b.ins().ineg(a[0]),
        ScalarOp::Abs if signed => {
            // `wrapping_abs`: the minimum stays itself.
            let negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, a[0], 0);
            let negated = b.ins().ineg(a[0]);
            b.ins().select(negative, negated, a[0])
        }
        ScalarOp::Abs | ScalarOp::Floor | ScalarOp::Ceil | ScalarOp::Round | ScalarOp::Rint => a[0],
        ScalarOp::Square => b.ins().imul(a[0], a[0]),
        ScalarOp::Sign => {
            let zero = int_const(b, ty, 0);
            let one = int_const(b, ty, 1);
            let nonzero = b.ins().icmp_imm_s(IntCC::NotEqual, a[0], 0);
            let r = b.ins().select(nonzero, one, zero);
            if signed {
                let minus_one = int_const(b, ty, -1);
                let negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, a[0], 0);
                b.ins().select(negative, minus_one, r)
            } else {
                r
            }
        }
        ScalarOp::BitwiseAnd => b.ins().band(a[0], a[1]),
        ScalarOp::BitwiseOr => b.ins().bor(a[0], a[1]),
        ScalarOp::BitwiseXor => b.ins().bxor(a[0], a[1]),
        ScalarOp::BitwiseInvert => b.ins().bnot(a[0]),
        ScalarOp::SquaredDifference => {
            let d = b.ins().isub(a[0], a[1]);
            b.ins().imul(d, d)
        }
        ScalarOp::BitwiseLeftShift | ScalarOp::BitwiseRightShift => {
            // The count clamped to [0, bits - 1], as the reference's `shift_count`.
            let mut count = a[1];
            if signed {
                let zero = int_const(b, ty, 0);
                let negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, count, 0);
                count = b.ins().select(negative, zero, count);
            }
            let most = int_const(b, ty, i64::from(ty.bits()) - 1);
            let over = b.ins().icmp(IntCC::UnsignedGreaterThan, count, most);
            count = b.ins().select(over, most, count);
            match (op, signed) {
                (ScalarOp::BitwiseLeftShift, _) => b.ins().ishl(a[0], count),
                (_, true) => b.ins().sshr(a[0], count),
                (_, false) => b.ins().ushr(a[0], count),
            }
        }
        ScalarOp::FloorDiv | ScalarOp::FloorMod | ScalarOp::TruncateDiv | ScalarOp::TruncateMod => {
            return emit_int_division(b, op, dtype, a[0], a[1]);
        }
        ScalarOp::Pow => {
            let widen = |b: &mut FunctionBuilder, v: Value| match (ty == types::I64, signed) {
                (true, _) => v,
                (false, true) => b.ins().sextend(types::I64, v),
                (false, false) => b.ins().uextend(types::I64, v),
            };
            let (x, y) = (widen(b, a[0]), widen(b, a[1]));
            let r = callees::emit_call(b, callees::int_pow_shim(dtype), &[x, y]).expect("integer shims return a value");
            let r = if ty == types::I64 { r } else { b.ins().ireduce(ty, r) };
            let fault = signed.then(|| b.ins().icmp_imm_s(IntCC::SignedLessThan, a[1], 0));
            return (r, fault);
        }
        // `KernelSpec::new` admits only the ops `lowered_op` accepts on integers.
        other => unreachable!("scalar op {other} is not defined on {dtype}"),
    };
    (value, None)
}

/// Integer `floordiv`, `floormod`, `truncatediv`, `truncatemod`: never trapping (a zero divisor,
/// and `MIN / -1`, divide by 1 instead: `MIN / -1` wraps to `MIN` with remainder 0, as
/// `wrapping_div` / `wrapping_rem`), with the zero divisor reported as the fault.
fn emit_int_division(
    b: &mut FunctionBuilder,
    op: ScalarOp,
    dtype: DType,
    x: Value,
    y: Value,
) -> (Value, Option<Value>) {
    let ty = ir_type(dtype);
    let signed = dtype.is_signed_integer();
    let zero_divisor = b.ins().icmp_imm_s(IntCC::Equal, y, 0);
    let one = int_const(b, ty, 1);
    let replace = if signed {
        let min = int_const(b, ty, signed_min(ty.bits()));
        let minus_one = int_const(b, ty, -1);
        let x_min = b.ins().icmp(IntCC::Equal, x, min);
        let y_minus_one = b.ins().icmp(IntCC::Equal, y, minus_one);
        let overflow = b.ins().band(x_min, y_minus_one);
        b.ins().bor(zero_divisor, overflow)
    } else {
        zero_divisor
    };
    let divisor = b.ins().select(replace, one, y);
    let (q, r) = if signed {
        (b.ins().sdiv(x, divisor), b.ins().srem(x, divisor))
    } else {
        (b.ins().udiv(x, divisor), b.ins().urem(x, divisor))
    };
    let value = match op {
        ScalarOp::TruncateDiv => q,
        ScalarOp::TruncateMod => r,
        _ if !signed => {
            if op == ScalarOp::FloorDiv {
                q
            } else {
                r
            }
        }
        ScalarOp::FloorDiv => {
            // One less when inexact and the operands' signs differ.
            let inexact = b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
            let x_negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
            let y_negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, y, 0);
            let differ = b.ins().bxor(x_negative, y_negative);
            let adjust = b.ins().band(inexact, differ);
            let q_minus_one = b.ins().isub(q, one);
            b.ins().select(adjust, q_minus_one, q)
        }
        _ => {
            // The remainder moved to the divisor's side.
            let nonzero = b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
            let r_negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, r, 0);
            let y_negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, y, 0);
            let differ = b.ins().bxor(r_negative, y_negative);
            let fix = b.ins().band(nonzero, differ);
            let shifted = b.ins().iadd(r, y);
            b.ins().select(fix, shifted, r)
        }
    };
    (value, Some(zero_divisor))
}
