//! Replays the Parquet fuzz target's corpus (`fuzz/corpus/parquet`: valid seeds of every codec
//! and encoding, and the crashers the fuzzer found) and the corrupt regression files
//! (`tests/data/corrupt`) through the fuzz target's own check, on the stable toolchain: every
//! file gives a summary or a typed error, never a panic, and leaves no partial output.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/parquet_check.rs"]
mod parquet_check;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn the_parquet_fuzz_corpus_runs_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = files(&root.join("../../fuzz/corpus/parquet"));
    let corrupt = files(&root.join("tests/data/corrupt"));
    assert!(corpus.len() >= 9 && corrupt.len() >= 9, "{} corpus files, {} corrupt ones", corpus.len(), corrupt.len());
    let check = parquet_check::ParquetCheck::new();
    for file in corpus.iter().chain(&corrupt) {
        let data = std::fs::read(file).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check.run(&data)));
        assert!(caught.is_ok(), "{}: the check panicked (see the message above)", file.display());
    }
}
