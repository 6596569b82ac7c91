//! The library half of the `ragtime` command: the benchmark workloads of `ragtime bench`, shared with the
//! criterion benches of the root package.
#![forbid(unsafe_code)]

pub mod bench;
