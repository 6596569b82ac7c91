//! ragtime's transcendental math: `exp`, `log`, `tanh`, `sigmoid`, `pow`, `sin` and `cos` on
//! float32 and float64, each written once against the [`Arith`] trait so that every backend
//! computes the same bits: the JIT writes Cranelift IR from these algorithms (scalar and
//! 128-bit lanes) and runs them on AVX2 in its bulk helpers, and [`plain`] runs them on one
//! Rust `f32` / `f64` for the interpreter.
//!
//! Every algorithm is branch-free: range reduction, a published minimax polynomial,
//! reconstruction, then selects for special values. They use `fma` unconditionally (the
//! accuracy bounds assume its single rounding).
#![forbid(unsafe_code)]

mod arith;
pub mod explog;
pub mod hyper;
pub mod plain;
pub mod trig;

pub use arith::{Arith, BinaryFn, Float, Widen};
pub use plain::{
    cos_f32, cos_f64, exp_f32, exp_f64, log_f32, log_f64, pow_f32, pow_f64, sigmoid_f32, sigmoid_f64, sin_f32, sin_f64,
    tanh_f32, tanh_f64,
};
pub use trig::{SIN_COS_MAX_ARG_F32, SIN_COS_MAX_ARG_F64};
