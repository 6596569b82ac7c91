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
//! ```
#![forbid(unsafe_code)]

pub mod case;
mod dsl;
mod function;
pub mod ops;

pub use dsl::{compile, Graph, Var};
pub use function::{CompileOptions, Function, Mode};
pub use ragtime_core::limits;
pub use ragtime_core::{
    dispatch_dtype, ragged, DType, DenseTensor, Dim, Element, Error, ErrorKind, Literal, Nested, NestedOut,
    RaggedTensor, Result, RowPartition, Rows, Scalar, ScalarOut, StringBuilder, StringRow, StringRows, StringTensor,
    TensorType, TypedLiteral,
};

pub use ragtime_ops::index::{Key, KeyItem};
pub use ragtime_ops::s;

/// The README's examples, compiled and run as doctests so that the front door stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The graph IR underneath the DSL (for tools and custom ops).
pub mod ir {
    pub use ragtime_graph::*;
    /// The optimizer: rewrites by name and tag, reports.
    pub mod opt {
        pub use ragtime_opt::*;
    }
    /// The Cranelift backend: kernel cache, thread defaults, recycling.
    pub mod jit {
        pub use ragtime_jit::{
            cached_kernels, clear_kernel_cache, default_threads, lowered_op, recycle, JitKernel, KernelSpec,
        };
    }
    /// The fused ops the optimizer builds.
    pub mod fused {
        pub use ragtime_ops::fused::*;
    }
}

/// Everything a typical program needs: building graphs and inputs, compiling, reading results.
pub mod prelude {
    pub use crate::ops::{keepdims, ToTensorOptions};
    pub use crate::s;
    pub use crate::{
        compile, ragged, CompileOptions, DType, DenseTensor, Error, ErrorKind, Function, Graph, KeyItem, Literal, Mode,
        RaggedTensor, RowPartition, StringTensor, TensorType, Var,
    };
}
