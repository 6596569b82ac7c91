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
mod merge;
mod ngrams;
mod partition;
mod pooling;

pub use db::{
    optimize, optimize_staged, Level, OptimizeOptions, RewriteInfo, RewriteReport, RewriteStat, APPROXIMATE, REWRITES,
};
pub use partition::PartitionClasses;
