//! ragtime-opt: the optimizer. A database of named, tagged rewrites (PyTensor's manner) run as a
//! pipeline over a `FunctionGraph`: merge, constant folding, canonicalization, dead-code
//! elimination, partition analysis and fusion into `Composite` / `RowKernel` / `GatherReduce` /
//! `RowPooling` ops.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod canon;
mod db;
mod expand;
mod fold;
mod fusion;
mod gather_reduce;
mod hashed_bag;
mod log_softmax;
mod mean;
mod merge;
mod ngrams;
mod partition;
mod pattern;
mod pipeline;
mod pooling;
mod unreduce;

pub use db::{Level, OptimizeOptions, Pass, RewriteInfo, Tracks, APPROXIMATE, OPT_IN, REWRITES};
pub use partition::PartitionClasses;
pub use pipeline::{optimize, optimize_staged, RewriteReport, RewriteStat};
