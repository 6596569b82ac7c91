//! Runs every TensorFlow-computed gradient case of `tests/grad/` (a checked copy of
//! `../shared/grad`, see `tests/conformance.rs`) in each mode: the `grad` node builds the
//! backward graph, which `FastRun` optimizes and compiles like any graph, `FastCompile` runs on
//! the interpreter, and `Debug` checks kernel by kernel and rewrite by rewrite.

use std::path::{Path, PathBuf};

use ragtime::case::{run_conformance, CaseFile};
use ragtime::Mode;

/// The number of cases in `tests/grad/`.
const CASES: usize = 228;

fn grad_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grad")
}

fn check(mode: Mode) {
    let report = run_conformance(&[grad_dir().as_path()], mode).expect("the gradient case files load");
    let listing: String = report.failures.iter().map(|(n, why)| format!("\nFAIL {n}\n  {why}")).collect();
    assert!(
        report.failures.is_empty(),
        "{} gradient cases failed in {mode:?} ({} passed); every case must match TensorFlow:{listing}",
        report.failures.len(),
        report.passed
    );
    assert_eq!(report.passed, CASES, "every gradient case must run in {mode:?}");
}

#[test]
fn every_gradient_case_matches_tensorflow_in_fast_run() {
    check(Mode::FastRun);
}

#[test]
fn every_gradient_case_matches_tensorflow_in_fast_compile() {
    check(Mode::FastCompile);
}

#[test]
fn every_gradient_case_matches_tensorflow_in_debug() {
    check(Mode::Debug);
}

#[test]
fn the_gradient_files_hold_every_case() {
    let mut total = 0;
    for entry in std::fs::read_dir(grad_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            total += CaseFile::load(&path).unwrap().cases.len();
        }
    }
    assert_eq!(total, CASES);
}
