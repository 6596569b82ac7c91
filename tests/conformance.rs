//! Runs every TensorFlow-computed case through the library: the shared cases of `tests/conformance/`
//! (checked to be a byte-identical copy of `../shared/conformance` where that folder exists) and the
//! project's own cases of `tests/conformance_extra/` (computed by `tools/tf_cases/generate.py`).

use std::path::{Path, PathBuf};

use ragtime::case::{run_conformance, CaseFile};
use ragtime::Mode;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

fn extra_cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance_extra")
}

fn check_dir(dir: &Path, mode: Mode) {
    let report = run_conformance(&[dir], mode).expect("the conformance files load");
    let listing: String = report.failures.iter().map(|(n, why)| format!("\nFAIL {n}\n  {why}")).collect();
    assert!(
        report.failures.is_empty(),
        "{} conformance cases of {} failed ({} passed); every case must match TensorFlow:{listing}",
        report.failures.len(),
        dir.display(),
        report.passed
    );
    assert!(report.passed >= 1, "no conformance case ran");
}

#[test]
fn every_conformance_case_matches_tensorflow() {
    check_dir(&cases_dir(), Mode::FastCompile);
}

#[test]
fn every_conformance_case_passes_in_debug_mode() {
    check_dir(&cases_dir(), Mode::Debug);
}

#[test]
fn every_extra_tensorflow_case_matches() {
    check_dir(&extra_cases_dir(), Mode::FastCompile);
}

#[test]
fn every_extra_tensorflow_case_passes_in_debug_mode() {
    check_dir(&extra_cases_dir(), Mode::Debug);
}

#[test]
fn the_case_files_load() {
    let mut total = 0;
    for entry in std::fs::read_dir(cases_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            total +=
                CaseFile::load(&path).unwrap_or_else(|e| panic!("{} does not load: {e}", path.display())).cases.len();
        }
    }
    assert_eq!(total, 159, "expected the 159 shared TensorFlow cases");
}

/// The project keeps a copy of `../shared/conformance` so that tests pass on any clone; this
/// fails when the copy has drifted (copy the shared files again, never edit them).
#[test]
fn the_copy_matches_shared_conformance() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance");
    if !shared.is_dir() {
        eprintln!("{} is absent: nothing to compare", shared.display());
        return;
    }
    let list = |dir: &Path| {
        let mut names: Vec<_> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    assert_eq!(
        list(&cases_dir()),
        list(&shared),
        "tests/conformance must hold exactly the files of ../shared/conformance"
    );
    for name in list(&shared) {
        let (a, b) = (std::fs::read(cases_dir().join(&name)).unwrap(), std::fs::read(shared.join(&name)).unwrap());
        assert!(a == b, "tests/conformance/{name} differs from ../shared/conformance/{name}: copy it again");
    }
}
