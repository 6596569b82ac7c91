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

fn workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads")
}

const MODES: [Mode; 3] = [Mode::FastRun, Mode::FastCompile, Mode::Debug];

#[test]
fn every_conformance_case_matches_tensorflow_in_every_mode() {
    for mode in MODES {
        check_dir(&cases_dir(), mode);
    }
}

#[test]
fn every_extra_tensorflow_case_matches_in_every_mode() {
    for mode in MODES {
        check_dir(&extra_cases_dir(), mode);
    }
}

#[test]
fn every_workload_graph_matches_tensorflow_in_every_mode() {
    for mode in MODES {
        check_dir(&workloads_dir(), mode);
    }
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

/// The project keeps copies of `../shared/conformance` and `../shared/workloads` so that tests
/// pass on any clone; this fails when a copy has drifted (copy the shared files again, never
/// edit them).
#[test]
fn the_copies_match_shared_conformance_and_workloads() {
    check_copy(&cases_dir(), "conformance");
    check_copy(&workloads_dir(), "workloads");
}

fn check_copy(copy: &Path, name: &str) {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared").join(name);
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
    assert_eq!(list(copy), list(&shared), "tests/{name} must hold exactly the files of ../shared/{name}");
    for file in list(&shared) {
        let (a, b) = (std::fs::read(copy.join(&file)).unwrap(), std::fs::read(shared.join(&file)).unwrap());
        assert!(a == b, "tests/{name}/{file} differs from ../shared/{name}/{file}: copy it again");
    }
}
