//! Runs every TensorFlow-computed case of `tests/conformance/` through the library, and checks that
//! this copy is byte-identical to `../shared/conformance` where that folder exists.

use std::path::{Path, PathBuf};

use ragtime::case::{run_conformance, CaseFile};
use ragtime::Mode;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

/// Ops whose cases may still fail, by op name, until the issue that brings them lands.
/// Empty: every case must pass.
const EXPECTED_FAILURES_BY_OP: &[&str] = &[];

fn case_ops(name: &str) -> Vec<String> {
    let mut ops = Vec::new();
    for entry in std::fs::read_dir(cases_dir()).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let doc: serde_json::Value = match serde_json::from_str(&text) {
            Ok(d) => d,
            Err(_) => continue,
        };
        for case in doc["cases"].as_array().into_iter().flatten() {
            if case["name"] == name {
                for node in case["nodes"].as_array().into_iter().flatten() {
                    ops.push(node["op"].as_str().unwrap_or("").to_string());
                }
            }
        }
    }
    ops
}

fn check_all(mode: Mode) {
    let report = run_conformance(&[&cases_dir()], mode).expect("the conformance files load");
    let unexpected: Vec<_> = report
        .failures
        .iter()
        .filter(|(name, _)| !case_ops(name).iter().any(|op| EXPECTED_FAILURES_BY_OP.contains(&op.as_str())))
        .collect();
    let listing: String = unexpected.iter().map(|(n, why)| format!("\nFAIL {n}\n  {why}")).collect();
    assert!(
        unexpected.is_empty(),
        "{} conformance cases failed ({} passed); every case must match TensorFlow:{listing}",
        unexpected.len(),
        report.passed
    );
    assert!(report.passed >= 1, "no conformance case ran");
}

#[test]
fn every_conformance_case_matches_tensorflow() {
    check_all(Mode::FastCompile);
}

#[test]
fn every_conformance_case_passes_in_debug_mode() {
    check_all(Mode::Debug);
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
