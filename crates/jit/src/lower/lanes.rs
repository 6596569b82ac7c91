//! One scalar op of a vector kernel in IR, on scalars or vectors of the kernel's element type
//! (the same emitter runs the vector loops and the scalar tail, so both give the same bits);
//! scalar kernels use it for the float ops they share.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_ops::elemwise::ScalarOp;

use crate::callees;
use crate::elem::Elem;
use crate::vmath::{self, Float, Lanes, UnaryMath};

/// `a > b ? a : b` (or `<` for the minimum) on integers, lane by lane: compare and select, which
/// Cranelift lowers for every integer vector shape.
pub(super) fn int_extreme(b: &mut FunctionBuilder, max: bool, x: Value, y: Value) -> Value {
    let cc = if max { IntCC::SignedGreaterThan } else { IntCC::SignedLessThan };
    let pick = b.ins().icmp(cc, x, y);
    if b.func.dfg.value_type(x).is_vector() {
        b.ins().bitselect(pick, x, y)
    } else {
        b.ins().select(pick, x, y)
    }
}

/// The float condition of a comparison: ordered, except `!=`, true when either is NaN (as
/// Rust's operators).
pub(crate) fn float_cc(op: ScalarOp) -> FloatCC {
    match op {
        ScalarOp::Equal => FloatCC::Equal,
        ScalarOp::NotEqual => FloatCC::NotEqual,
        ScalarOp::Less => FloatCC::LessThan,
        ScalarOp::LessEqual => FloatCC::LessThanOrEqual,
        ScalarOp::Greater => FloatCC::GreaterThan,
        _ => FloatCC::GreaterThanOrEqual,
    }
}

/// The integer condition of a comparison, signed or unsigned.
pub(crate) fn int_cc(op: ScalarOp, signed: bool) -> IntCC {
    match (op, signed) {
        (ScalarOp::Equal, _) => IntCC::Equal,
        (ScalarOp::NotEqual, _) => IntCC::NotEqual,
        (ScalarOp::Less, true) => IntCC::SignedLessThan,
        (ScalarOp::Less, false) => IntCC::UnsignedLessThan,
        (ScalarOp::LessEqual, true) => IntCC::SignedLessThanOrEqual,
        (ScalarOp::LessEqual, false) => IntCC::UnsignedLessThanOrEqual,
        (ScalarOp::Greater, true) => IntCC::SignedGreaterThan,
        (ScalarOp::Greater, false) => IntCC::UnsignedGreaterThan,
        (_, true) => IntCC::SignedGreaterThanOrEqual,
        (_, false) => IntCC::UnsignedGreaterThanOrEqual,
    }
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

/// Comparisons, `where` and logical ops of a vector kernel, whose bools are lane masks (all ones
/// or zero per lane) in vector loops and 0 / 1 in the scalar tail.
fn emit_mask_op(b: &mut FunctionBuilder, elem: Elem, op: ScalarOp, a: &[Value]) -> Option<Value> {
    let vector = b.func.dfg.value_type(a[0]).is_vector();
    Some(match op {
        op if op.is_comparison() => match elem.float() {
            Some(_) => b.ins().fcmp(float_cc(op), a[0], a[1]),
            // Vector kernels' integers are int32 / int64.
            None => b.ins().icmp(int_cc(op, true), a[0], a[1]),
        },
        ScalarOp::Where if vector => {
            // bitselect wants the mask in the operands' type (an fcmp mask is an integer vector).
            let ty = b.func.dfg.value_type(a[1]);
            let mask = if b.func.dfg.value_type(a[0]) == ty {
                a[0]
            } else {
                b.ins().bitcast(ty, MemFlagsData::new().with_endianness(Endianness::Little), a[0])
            };
            b.ins().bitselect(mask, a[1], a[2])
        }
        ScalarOp::Where => b.ins().select(a[0], a[1], a[2]),
        ScalarOp::LogicalAnd => b.ins().band(a[0], a[1]),
        ScalarOp::LogicalOr => b.ins().bor(a[0], a[1]),
        ScalarOp::LogicalXor => b.ins().bxor(a[0], a[1]),
        ScalarOp::LogicalNot if vector => b.ins().bnot(a[0]),
        ScalarOp::LogicalNot => b.ins().bxor_imm_s(a[0], 1),
        _ => return None,
    })
}

/// Emits one op on values of a lane shape: scalars or vectors of one element type.
pub(crate) type LaneFn = fn(&mut FunctionBuilder, &[Value]) -> Value;

/// How vector kernels compute `op` on elements of `elem` (int32 / int64 wrapping arithmetic as the
/// reference kernels' `wrapping_*`, float arithmetic and math functions), or `None` when only
/// scalar loops compute it. This is the JIT's one list of vector ops: [`crate::vector_op`] asks it
/// and [`emit_op`] emits what it returns. The mask ops (comparisons, `where`, logical ops) are
/// apart, in `emit_mask_op`.
pub(crate) fn lane_op(elem: Elem, op: ScalarOp) -> Option<LaneFn> {
    if elem.float().is_none() {
        return Some(match op {
            ScalarOp::Add => |b, a| b.ins().iadd(a[0], a[1]),
            ScalarOp::Subtract => |b, a| b.ins().isub(a[0], a[1]),
            ScalarOp::Multiply => |b, a| b.ins().imul(a[0], a[1]),
            ScalarOp::Maximum => |b, a| int_extreme(b, true, a[0], a[1]),
            ScalarOp::Minimum => |b, a| int_extreme(b, false, a[0], a[1]),
            ScalarOp::Negative => |b, a| b.ins().ineg(a[0]),
            ScalarOp::Abs => |b, a| b.ins().iabs(a[0]),
            ScalarOp::Square => |b, a| b.ins().imul(a[0], a[0]),
            ScalarOp::BitwiseAnd => |b, a| b.ins().band(a[0], a[1]),
            ScalarOp::BitwiseOr => |b, a| b.ins().bor(a[0], a[1]),
            ScalarOp::BitwiseXor => |b, a| b.ins().bxor(a[0], a[1]),
            ScalarOp::BitwiseInvert => |b, a| b.ins().bnot(a[0]),
            ScalarOp::SquaredDifference => |b, a| {
                let d = b.ins().isub(a[0], a[1]);
                b.ins().imul(d, d)
            },
            // Rounding is the identity on integers.
            ScalarOp::Floor | ScalarOp::Ceil | ScalarOp::Round => |_, a| a[0],
            _ => return None,
        });
    }
    Some(match op {
        ScalarOp::Add => |b, a| b.ins().fadd(a[0], a[1]),
        ScalarOp::Subtract => |b, a| b.ins().fsub(a[0], a[1]),
        ScalarOp::Multiply => |b, a| b.ins().fmul(a[0], a[1]),
        ScalarOp::Divide => |b, a| b.ins().fdiv(a[0], a[1]),
        ScalarOp::FloorDiv => |b, a| {
            let q = b.ins().fdiv(a[0], a[1]);
            b.ins().floor(q)
        },
        ScalarOp::Pow => |b, a| vmath::emit_pow(b, a[0], a[1]),
        // Cranelift's fmax / fmin return NaN when either operand is NaN and order -0 < +0, as
        // ragtime's reference does.
        ScalarOp::Maximum => |b, a| b.ins().fmax(a[0], a[1]),
        ScalarOp::Minimum => |b, a| b.ins().fmin(a[0], a[1]),
        ScalarOp::Negative => |b, a| b.ins().fneg(a[0]),
        ScalarOp::Abs => |b, a| b.ins().fabs(a[0]),
        ScalarOp::Square => |b, a| b.ins().fmul(a[0], a[0]),
        ScalarOp::Sqrt => |b, a| b.ins().sqrt(a[0]),
        ScalarOp::Exp => |b, a| vmath::emit_unary(b, UnaryMath::Exp, a[0]),
        ScalarOp::Log => |b, a| vmath::emit_unary(b, UnaryMath::Log, a[0]),
        ScalarOp::Sin => |b, a| emit_trig(b, UnaryMath::Sin, a[0]),
        ScalarOp::Cos => |b, a| emit_trig(b, UnaryMath::Cos, a[0]),
        ScalarOp::Tanh => |b, a| vmath::emit_unary(b, UnaryMath::Tanh, a[0]),
        ScalarOp::Sigmoid => |b, a| vmath::emit_unary(b, UnaryMath::Sigmoid, a[0]),
        ScalarOp::Floor => |b, a| b.ins().floor(a[0]),
        ScalarOp::Ceil => |b, a| b.ins().ceil(a[0]),
        ScalarOp::Round | ScalarOp::Rint => |b, a| b.ins().nearest(a[0]),
        // As the reference: `1 / x`, `1 / sqrt(x)`, `x / (1 + |x|)`, `(x - y) * (x - y)`.
        ScalarOp::Reciprocal => |b, a| {
            let one = float_one(b, a[0]);
            b.ins().fdiv(one, a[0])
        },
        ScalarOp::Rsqrt => |b, a| {
            let one = float_one(b, a[0]);
            let root = b.ins().sqrt(a[0]);
            b.ins().fdiv(one, root)
        },
        ScalarOp::Softsign => |b, a| {
            let one = float_one(b, a[0]);
            let magnitude = b.ins().fabs(a[0]);
            let denominator = b.ins().fadd(one, magnitude);
            b.ins().fdiv(a[0], denominator)
        },
        ScalarOp::SquaredDifference => |b, a| {
            let d = b.ins().fsub(a[0], a[1]);
            b.ins().fmul(d, d)
        },
        _ => return None,
    })
}

/// One scalar op of a vector kernel ([`lane_op`], and the mask ops above) on values of its
/// element type, scalar or vector; scalar kernels use it for the float ops they share.
pub(crate) fn emit_op(b: &mut FunctionBuilder, elem: Elem, op: ScalarOp, a: &[Value]) -> Value {
    if let Some(v) = emit_mask_op(b, elem, op, a) {
        return v;
    }
    // `KernelSpec` admits into vector kernels only ops `lane_op` has; scalar kernels route the
    // others elsewhere.
    let emit = lane_op(elem, op).unwrap_or_else(|| unreachable!("scalar op {op} has no lowering on {elem:?} lanes"));
    emit(b, a)
}

/// `sin` / `cos`: the vectorized polynomial, which is accurate only up to
/// `SIN_COS_MAX_ARG_F32` / `_F64`; when any lane is beyond that (rare: huge arguments), those
/// lanes are recomputed by calling the platform's `sin` / `cos`, so results are never wrong.
fn emit_trig(b: &mut FunctionBuilder, op: UnaryMath, x: Value) -> Value {
    let fast = vmath::emit_unary(b, op, x);
    let ty = b.func.dfg.value_type(x);
    let lanes = Lanes::of(ty).expect("trig on a float lane shape");
    let bound = match lanes.float {
        Float::F32 => b.ins().f32const(vmath::SIN_COS_MAX_ARG_F32),
        Float::F64 => b.ins().f64const(vmath::SIN_COS_MAX_ARG_F64),
    };
    let bound = if lanes.vector { b.ins().splat(ty, bound) } else { bound };
    let magnitude = b.ins().fabs(x);
    let big = b.ins().fcmp(FloatCC::GreaterThan, magnitude, bound);
    let any = if lanes.vector { b.ins().vany_true(big) } else { big };
    let slow = b.create_block();
    let join = b.create_block();
    b.append_block_param(join, ty);
    b.ins().brif(any, slow, &[], join, &[fast.into()]);

    b.switch_to_block(slow);
    let callee = callees::libm_trig(lanes.float, op);
    let call =
        |b: &mut FunctionBuilder, v: Value| callees::emit_call(b, callee, &[v]).expect("sin and cos return a value");
    let slow_value = if lanes.vector {
        let mut acc = fast;
        for lane in 0..lanes.lane_count() as u8 {
            let e = b.ins().extractlane(x, lane);
            let r = call(b, e);
            acc = b.ins().insertlane(acc, r, lane);
        }
        // Only the big lanes take the platform's value: each lane's result depends on its own
        // argument alone, as in `ragtime_vmath::plain::sin_f32` and friends.
        let flags = MemFlagsData::new().with_endianness(Endianness::Little);
        let mask = b.ins().bitcast(ty, flags, big);
        b.ins().bitselect(mask, acc, fast)
    } else {
        call(b, x)
    };
    b.ins().jump(join, &[slow_value.into()]);

    b.switch_to_block(join);
    b.block_params(join)[0]
}
