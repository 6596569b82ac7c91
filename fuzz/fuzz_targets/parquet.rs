//! Any bytes as a Parquet file through `ragtime_arrow::parquet` (open, read every batch, run a
//! small compiled graph, write): a summary or a typed error, never a panic. The check itself is
//! `fuzz/parquet_check.rs`, which `crates/arrow/tests/fuzz_corpus.rs` also runs on the corpus
//! under the stable toolchain.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "../parquet_check.rs"]
mod parquet_check;

static CHECK: OnceLock<parquet_check::ParquetCheck> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    CHECK.get_or_init(parquet_check::ParquetCheck::new).run(data);
});
