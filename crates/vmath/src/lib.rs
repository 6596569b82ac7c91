//! ragtime's transcendental math: `exp`, `log`, `tanh`, `sigmoid`, `pow`, `sin` and `cos` on
//! float32 and float64, each written once against the [`Arith`] trait so that every backend
//! computes the same bits: the JIT writes Cranelift IR from these algorithms (scalar and
//! 128-bit lanes) and runs them on AVX2 in its bulk helpers, and a plain-Rust backend can run them on one
//! Rust `f32` / `f64`.
//!
//! Every algorithm is branch-free: range reduction, a published minimax polynomial,
//! reconstruction, then selects for special values. They use `fma` unconditionally (the
//! accuracy bounds assume its single rounding).
#![forbid(unsafe_code)]

mod arith;
pub mod explog;
pub mod hyper;
pub mod trig;

pub use arith::{Arith, BinaryFn, Float, Widen};
pub use trig::{SIN_COS_MAX_ARG_F32, SIN_COS_MAX_ARG_F64};
