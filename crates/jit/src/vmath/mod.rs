//! Vectorized math emitters: Cranelift IR computing `exp`, `log`, `tanh`, `sigmoid`, `sin`, `cos`
//! and `pow` on `f32` / `f64` scalars and `f32x4` / `f64x2` vectors.
//!
//! Cranelift has no transcendental instructions, so every function here is the branch-free
//! algorithm of `ragtime-vmath` (range reduction, a published minimax polynomial,
//! reconstruction, then `select`s for special values) run through `Emit`, the `Arith` backend
//! that writes one IR instruction per operation. One emitter serves all four lane shapes
//! ([`Lanes`]): a kernel's scalar tail computes exactly what its vector main loop computes, and
//! what `ragtime_vmath::plain` computes in Rust, bit for bit.
//!
//! All emitters work inside the builder's current block and create no blocks, so they can be
//! dropped into any loop body. They use `fma` unconditionally: it is one instruction with the
//! x86 FMA or AArch64 feature, and Cranelift lowers it to a (correct, slow) `fma` libcall
//! elsewhere. The accuracy bounds in the crate docs assume the fused (single-rounding) `fma`.

mod arith;

use cranelift_codegen::ir::Value;
use cranelift_frontend::FunctionBuilder;
use ragtime_vmath::{explog, hyper, trig};

pub(crate) use self::arith::Emit;
pub use self::arith::Lanes;
pub use ragtime_vmath::{Float, SIN_COS_MAX_ARG_F32, SIN_COS_MAX_ARG_F64};

/// A unary function of the math library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryMath {
    /// `e^x`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Hyperbolic tangent.
    Tanh,
    /// Logistic function `1 / (1 + e^-x)`.
    Sigmoid,
    /// Sine (radians).
    Sin,
    /// Cosine (radians).
    Cos,
}

impl UnaryMath {
    /// Every unary function, for tests and registries.
    pub const ALL: [UnaryMath; 6] =
        [UnaryMath::Exp, UnaryMath::Log, UnaryMath::Tanh, UnaryMath::Sigmoid, UnaryMath::Sin, UnaryMath::Cos];

    /// Lower-case name, as in `f32::exp`.
    pub fn name(self) -> &'static str {
        match self {
            UnaryMath::Exp => "exp",
            UnaryMath::Log => "log",
            UnaryMath::Tanh => "tanh",
            UnaryMath::Sigmoid => "sigmoid",
            UnaryMath::Sin => "sin",
            UnaryMath::Cos => "cos",
        }
    }
}

/// Emits `op(x)` at the builder's current position and returns the result (same type as `x`).
///
/// # Panics
/// If `x` is not of type `F32`, `F64`, `F32X4` or `F64X2`.
pub fn emit_unary(b: &mut FunctionBuilder, op: UnaryMath, x: Value) -> Value {
    let mut m = Emit::for_value(b, x);
    match op {
        UnaryMath::Exp => explog::exp(&mut m, x, None),
        UnaryMath::Log => explog::log(&mut m, x),
        UnaryMath::Tanh => hyper::tanh(&mut m, x),
        UnaryMath::Sigmoid => hyper::sigmoid(&mut m, x),
        UnaryMath::Sin => trig::sin_cos(&mut m, x, false),
        UnaryMath::Cos => trig::sin_cos(&mut m, x, true),
    }
}

/// Emits `e^x`. See [`emit_unary`].
pub fn emit_exp(b: &mut FunctionBuilder, x: Value) -> Value {
    emit_unary(b, UnaryMath::Exp, x)
}

/// Emits `ln x`. See [`emit_unary`].
pub fn emit_log(b: &mut FunctionBuilder, x: Value) -> Value {
    emit_unary(b, UnaryMath::Log, x)
}

/// Emits `tanh x`. See [`emit_unary`].
pub fn emit_tanh(b: &mut FunctionBuilder, x: Value) -> Value {
    emit_unary(b, UnaryMath::Tanh, x)
}

/// Emits `1 / (1 + e^-x)`. See [`emit_unary`].
pub fn emit_sigmoid(b: &mut FunctionBuilder, x: Value) -> Value {
    emit_unary(b, UnaryMath::Sigmoid, x)
}

/// Emits `sin x`. See [`emit_unary`].
pub fn emit_sin(b: &mut FunctionBuilder, x: Value) -> Value {
    emit_unary(b, UnaryMath::Sin, x)
}

/// Emits `cos x`. See [`emit_unary`].
pub fn emit_cos(b: &mut FunctionBuilder, x: Value) -> Value {
    emit_unary(b, UnaryMath::Cos, x)
}

/// Emits `x^y` with the special cases of C99 `pow` (Annex F). `x` and `y` have the same type.
///
/// # Panics
/// If `x` is not of type `F32`, `F64`, `F32X4` or `F64X2`, or `y` differs in type.
pub fn emit_pow(b: &mut FunctionBuilder, x: Value, y: Value) -> Value {
    let mut m = Emit::for_value(b, x);
    assert_eq!(m.b.func.dfg.value_type(y), m.l.ty(), "pow operands differ in type");
    match m.l.float {
        Float::F32 => explog::pow_f32(&mut m, x, y),
        Float::F64 => explog::pow_f64(&mut m, x, y),
    }
}
