//! The `ragtime` command as a library: the command line itself (`command::main_with_args`, which the
//! binary and the Python package's console script run), the benchmark workloads of `ragtime bench`,
//! shared with the criterion benches of the root package, the choice of cases by name (`--case`), and
//! `ragtime run`'s Parquet streaming (`--input`).
// `deny`, not `forbid`: the bench baselines let `multiversion` call their AVX2 clones (`bench/baseline.rs`).
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod args;
pub mod bench;
pub mod cases;
pub mod command;
pub mod stream;
