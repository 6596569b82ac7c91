//! ragtime-runtime: where things run.
//!
//! - the executor ([`Interpreter`]: a `FunctionGraph` compiled into a schedule, then run many
//!   times) and fused ops' inner graphs evaluated through it ([`InnerGraph`]);
//! - the thread pools and the one way a kernel splits its work across the threads of its call
//!   ([`parallel`]);
//! - the call budget's accounting ([`Budget`]; [`call_context`] is a call's context with a fresh one);
//! - the cache of compiled kernels ([`KernelCache`], which the JIT instantiates with its kernel
//!   specs and machine code).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod budget;
mod cache;
mod inner;
mod interp;
pub mod parallel;

pub use budget::{call_context, with_fresh_budget, Budget};
pub use cache::{CacheStats, KernelCache};
pub use inner::{InnerGraph, InnerGraphBuilder};
pub use interp::{node_times_wanted, Interpreter};
