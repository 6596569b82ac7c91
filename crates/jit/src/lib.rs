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
//! # Pieces
//!
//! - [`Jit`]: a `JITModule` for the host (ISA features from `cranelift-native`,
//!   `opt_level=speed`); [`Jit::compile_map`] builds an elementwise kernel over any number of
//!   inputs with an `f32x4` / `f64x2` main loop (two vectors per iteration) and a scalar tail,
//!   both emitted by the same body closure. [`MapKernel::run`] checks arity and lengths, then
//!   calls the machine code. `RAGTIME_JIT_DISASM=1` prints each kernel's machine code;
//!   `RAGTIME_PERF_MAP=1` writes `/tmp/perf-<pid>.map` so `perf report` names the kernels, and
//!   each kernel's machine code to `/tmp/perf-<pid>-<name>.bin`.
//! - Fused kernels go spec → plan → emit: a [`KernelSpec`] (what a fused op computes), its
//!   [`KernelPlan`] ([`plan`]: every loop, block, fold, scratch and bulk-call decision, printable
//!   with `RAGTIME_JIT_PLAN=1`), then Cranelift IR written from the plan (`lower/`). Every
//!   function address written into machine code comes from `callees.rs`, under one safety
//!   contract.
//! - [`bulk`]: `vmath`'s `exp`, `sigmoid` and float32 `tanh` evaluated with AVX2 + FMA (or
//!   AVX-512 where the CPU has it, `bulk_avx512.rs`) in precompiled code, which flat blocks of row kernels and chunks of map kernels call on
//!   scratch buffers (same bits as the IR functions).
//! - [`vmath`]: the math emitters: `ragtime-vmath`'s algorithms written as branch-free IR into
//!   any `FunctionBuilder`, on all four lane shapes, so scalar tails, vector loops, the bulk path
//!   and `ragtime_vmath::plain` (the interpreter's) agree bit for bit.
//!
//! # Accuracy
//!
//! Maximum error in ulps, measured by `tests/accuracy.rs` (dense sweeps — exp over [-110, 110]
//! by 1e-3, log over every 61st positive f32 bit pattern (all binades, denormals), sin/cos over
//! [-1e4, 1e4] by 1/256 — plus random samples over all magnitudes). f32 is measured against
//! the f64 libm result (fractional ulps); f64 against the platform libm (glibc), whose own
//! error (≤ 1 ulp for these functions, up to 2 for `tanh`) is included, so f64 figures are
//! whole ulps of distance. The tests assert the "bound" columns.
//!
//! | function | f32 measured | f32 bound | f64 measured | f64 bound | domain notes |
//! |---|---|---|---|---|---|
//! | `exp` | 1.22 | 1.5 | 1 | 2 | overflow → +inf, results below the smallest normal → 0 (as TF) |
//! | `log` | 0.83 | 1.0 | 1 | 2 | denormal inputs exact-range |
//! | `tanh` | 4.54 | 4.6 | 2 | 3 | f32: Eigen's rational approximation (see below) |
//! | `sigmoid` | 1.58 | 2.0 | 2 | 3 | results below the smallest normal → 0 (as TF) |
//! | `sin` | 1.53 | 2.0 | 1 | 2 | \|x\| ≤ [`SIN_COS_MAX_ARG_F32`] / [`SIN_COS_MAX_ARG_F64`] |
//! | `cos` | 1.51 | 2.0 | 1 | 2 | same |
//! | `pow` | 0.50 | 1.0 | 1 (\|y ln x\| ≤ 1), 62 (up to 709) | 2, 64 | see below |
//!
//! Special values follow C: NaN in → NaN out; `exp(+inf) = +inf`, `exp(-inf) = +0`;
//! `log(±0) = -inf`, `log(x < 0) = NaN`, `log(+inf) = +inf`; `tanh(±inf) = ±1`,
//! `tanh(±0) = ±0`; `sigmoid(+inf) = 1`, `sigmoid(-inf) = 0`; `sin(±0) = ±0`;
//! `sin/cos(±inf) = NaN`; `pow` follows every C99 Annex F rule (checked against libm on a
//! grid of special bases × exponents, signs of zero included).
//!
//! Known differences:
//! - f32 `tanh` is the 13/6-degree rational approximation Eigen uses for float
//!   (`generic_fast_tanh_float`, the one TensorFlow's CPU kernels run under Eigen's default fast
//!   math), exactly ±1 from |x| = 7.9073896 as TensorFlow: its worst error is 4.5 ulps (at that
//!   saturation point), and it needs one division and no `exp`. The `exp`-based formula it replaced was
//!   within 1.28 ulps but took twice as long on W1 (`ragtime bench --only W1_fused_elemwise`,
//!   perf samples of kernel and baseline in one process: 0.27 → 0.13 of the baseline's time).
//! - `sin`/`cos` beyond the documented argument bound are not accurate (the reduction uses a
//!   three-part π/2 and a magic-number rounding valid to about 2^22·π/2 for f32); they may
//!   return values outside [-1, 1]. No Payne–Hanek reduction.
//! - f64 `pow` evaluates `exp(y·ln x)` with a double-word `ln`; the residual error grows with
//!   |y ln x| (62 ulp measured near the overflow threshold; 1 ulp for |y ln x| ≤ 1). f32 `pow`
//!   computes in f64 and is within half an ulp in the tests.
//! - Results assume a fused `fma` (x86 FMA / AArch64); without hardware FMA Cranelift calls
//!   the libm `fma`, which is correct but slow.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod alloc;
pub mod bulk;
mod bulk_abi;
mod bulk_avx512;
pub mod bulk_folds;
mod callees;
mod elem;
mod exec;
mod kernel;
mod lower;
mod perf_map;
pub mod plan;
mod pool_fill;
mod pooled;
mod prefetch;
mod rows_add;
mod spec;
pub mod vmath;

pub use alloc::{release_freed_memory, retain_freed_memory};
pub use elem::Elem;
pub use exec::{
    cached_kernels, clear_kernel_cache, default_threads, kernel_for, lower_fused, spec_of, ExecStats, JitKernel,
};
pub use kernel::{FusedFn, FusedKernel, FusedParams, Jit, JitError, JitFloat, MapKernel};
pub use plan::{KernelPlan, Target};
pub use pooled::JitPooling;
pub use prefetch::slice as prefetch_slice;
pub use spec::{lowered_op, vector_op, KernelSpec};
pub use vmath::{
    emit_cos, emit_exp, emit_log, emit_pow, emit_sigmoid, emit_sin, emit_tanh, emit_unary, Float, Lanes, UnaryMath,
    SIN_COS_MAX_ARG_F32, SIN_COS_MAX_ARG_F64,
};
