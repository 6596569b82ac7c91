//! ragtime-runtime: where things run. The executor ([`Interpreter`]: a `FunctionGraph` compiled
//! into a schedule, then run many times), fused ops' inner graphs evaluated through it
//! ([`InnerGraph`]), and the thread pools with the one way a kernel splits its work across the
//! threads of its call ([`parallel`]), and the cache of compiled kernels ([`KernelCache`], which
//! the JIT instantiates with its kernel specs and machine code).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod cache;
mod inner;
mod interp;
pub mod parallel;

pub use cache::{CacheStats, KernelCache};
pub use inner::{InnerGraph, InnerGraphBuilder};
pub use interp::Interpreter;
