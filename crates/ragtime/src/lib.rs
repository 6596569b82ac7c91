//! ragtime: a symbolic graph compiler for ragged tensors, in the style of Theano.
//!
//! Describe a computation once with the DSL, [`compile`] it, then call it on data:
//!
//! ```
//! use ragtime::prelude::*;
//!
//! let g = Graph::new();
//! let x = g.input("x", TensorType::ragged(DType::I32, 1));
//! let y = (&x * 2 + 1).reduce_sum(1);
//! let f = compile(&[&x], &[&y]).unwrap();
//! let out = f.call(&[ragged![[3, 1, 4, 1], [], [5, 9, 2]].unwrap()]).unwrap();
//! assert_eq!(out[0].to_string(), "<Tensor int32 shape=[3] [22, 0, 35]>");
//! assert_eq!(out[0].to_vec::<i32>().unwrap(), [22, 0, 35]);
//! ```
//!
//! Inputs convert from Rust data (`vec!["a", "b"].into()`, `RaggedTensor::try_from(vec![vec![1i64], vec![]])`,
//! `ndarray` arrays, `ragged![[1.5f64], []]` with the dtype of the Rust types); results read back as
//! Rust data (`to_vec`, `to_nested::<Vec<Vec<f32>>>()`, `rows::<f32>()`, `string_rows()`). The user
//! guide, `docs/guide.md`, walks through every part.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod case;
mod dsl;
pub mod estimate;
mod function;
mod grad;
pub mod ops;
mod state;
mod updates;

pub use dsl::{compile, Graph, Var};
pub use function::{CompileOptions, Function, Mode};
pub use grad::{grad, grad_with};
pub use ragtime_core::limits::{self, Limits};
pub use ragtime_core::{
    dispatch_dtype, ragged, DType, DenseTensor, Dim, Element, Error, ErrorKind, ExecContext, Literal, Nested,
    NestedOut, RaggedTensor, Result, RowPartition, Rows, Scalar, ScalarOut, StringBuilder, StringRow, StringRows,
    StringTensor, TensorType, TypedLiteral,
};
pub use state::State;

pub use ragtime_ops::index::{Key, KeyItem};
pub use ragtime_ops::s;

/// The README's examples, compiled and run as doctests so that the front door stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The user guide's examples (`docs/guide.md`), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide.md")]
pub struct GuideDoctests;

/// The graph IR underneath the DSL (for tools and custom ops).
pub mod ir {
    pub use ragtime_graph::*;
    /// The process-wide thread pool of `threads` threads that compiled functions run on: code
    /// that should share ragtime's threads (the benchmark's baseline loops) can run on it too.
    pub use ragtime_runtime::parallel::pool as thread_pool;
    pub use ragtime_runtime::{InnerGraph, InnerGraphBuilder, Interpreter};
    /// The optimizer: rewrites by name and tag, reports.
    pub mod opt {
        pub use ragtime_opt::*;
    }
    /// The Cranelift backend: kernel cache, plans, thread defaults, allocator settings.
    pub mod jit {
        pub use ragtime_jit::{
            cached_kernels, clear_kernel_cache, default_threads, lowered_op, release_freed_memory, retain_freed_memory,
            vector_op, Elem, JitKernel, KernelPlan, KernelSpec, Target,
        };
    }
    /// The fused ops the optimizer builds.
    pub mod fused {
        pub use ragtime_fused::*;
    }
}

/// Everything a typical program needs: building graphs and inputs, compiling, reading results.
pub mod prelude {
    pub use crate::ops::{keepdims, ToTensorOptions};
    pub use crate::s;
    pub use crate::{
        compile, ragged, CompileOptions, DType, DenseTensor, Error, ErrorKind, Function, Graph, KeyItem, Literal, Mode,
        RaggedTensor, RowPartition, State, StringTensor, TensorType, Var,
    };
}
