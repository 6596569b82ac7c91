//! ragtime-jit: the Cranelift backend — a JIT harness for elementwise kernels and a vectorized
//! math library emitting `exp`, `log`, `tanh`, `sigmoid`, `sin`, `cos` and `pow` as Cranelift IR.
//!
//! ```
//! use ragtime_jit::{Jit, UnaryMath};
//! let mut jit = Jit::new().unwrap();
//! let exp = jit.compile_unary::<f32>(UnaryMath::Exp, true).unwrap();
//! let x = [0.0f32, 1.0, -1.0, 88.0, 100.0];
//! let mut y = [0.0f32; 5];
//! exp.run(&[&x], &mut y).unwrap();
//! assert_eq!(y[0], 1.0);
//! assert_eq!(y[4], f32::INFINITY);
//! ```
//!
//! ACCURACY (filled in from the tests)
#![deny(unsafe_op_in_unsafe_fn)]

mod kernel;
pub mod vmath;

pub use kernel::{Jit, JitError, JitFloat, MapKernel};
pub use vmath::{
    emit_cos, emit_exp, emit_log, emit_pow, emit_sigmoid, emit_sin, emit_tanh, emit_unary, Float, Lanes, UnaryMath,
};

/// Largest |x| for which f32 `sin`/`cos` meet the documented error bound.
pub const SIN_COS_MAX_ARG_F32: f32 = 1.0e5;
/// Largest |x| for which f64 `sin`/`cos` meet the documented error bound.
pub const SIN_COS_MAX_ARG_F64: f64 = 1.0e9;
