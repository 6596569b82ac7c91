//! ragtime's transcendental math: `exp`, `log`, `tanh`, `sigmoid`, `pow`, `sin` and `cos` on
//! float32 and float64, each written once against the [`Arith`] trait so that every backend
//! computes the same bits: the JIT writes Cranelift IR from these algorithms (scalar and
//! 128-bit lanes) and runs them on AVX2 in its bulk helpers, and [`plain`] runs them on one
//! Rust `f32` / `f64` for the interpreter.
//!
//! Every algorithm is branch-free: range reduction, a published minimax polynomial,
//! reconstruction, then selects for special values. They use `fma` unconditionally (the
//! accuracy bounds assume its single rounding). Measured accuracy: `ragtime-jit`'s crate docs
//! and `crates/jit/tests/accuracy.rs`.
//!
//! # TensorFlow's edges
//!
//! ragtime follows TensorFlow, so where TF's CPU kernels (TF 2.21 on x86-64, checked in
//! `tests/tf_edges.rs` against outputs of `tools/tf_vmath_cases.py`) give a defined, visible
//! answer at the edge of a function's range, every backend gives it, because it is decided here
//! in the algorithm:
//! - float32 `tanh` is exactly ±1 for |x| ≥ [`hyper::TANH_F32_SATURATION`] (7.9073896), where
//!   TF's is; Eigen's rational alone would stay a few ulps below 1 up to |x| = 9. An expression
//!   such as `floor(sqrt(tanh(8.74)))` is then 1, as in TF.
//! - `exp`, `sigmoid` and `pow` results below the smallest normal float (float32 and float64)
//!   are 0 of the result's sign ([`explog::flush_subnormal`]): TF runs with flush-to-zero, so
//!   float32 `exp(-88)` and `sigmoid(-91.1)` are 0 there and `log(sigmoid(-91.1))` is `-inf`.
//!
//! Left as they were (TF's answers there are artefacts of denormals-are-zero, not a rule):
//! `log`, `tanh` and `sin` of denormal inputs (TF: ln(2^-150) for every float32 denormal,
//! -inf for float64 ones, tanh 0), and float64 `tanh` near 1 (TF rounds to 1 from about
//! |x| = 17.7, where the true value is still 1 - 8e-16; ours follows the true value).
#![forbid(unsafe_code)]

mod arith;
pub mod explog;
pub mod hyper;
pub mod plain;
pub mod trig;

pub use arith::{Arith, BinaryFn, Float, Widen};
pub use plain::{
    cos_f32, cos_f64, exp_f32, exp_f64, log_f32, log_f64, pow_f32, pow_f64, sigmoid_f32, sigmoid_f64, sin_f32, sin_f64,
    tanh_f32, tanh_f64, PlainMath,
};
pub use trig::{SIN_COS_MAX_ARG_F32, SIN_COS_MAX_ARG_F64};
