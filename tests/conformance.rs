//! Runs every TensorFlow-computed case through the library: the shared cases of `tests/conformance/`
//! (checked to be a byte-identical copy of `../shared/conformance` where that folder exists) and the
//! project's own cases of `tests/conformance_extra/` (computed by `tools/tf_cases/generate.py`), and
//! the op vocabulary part 2 of `tests/vocab2/` (a copy of `../shared/vocab2`), for the ops that are
//! implemented so far: the rest are listed, by name, in [`NOT_YET_IMPLEMENTED`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ragtime::case::{run_conformance, CaseFile, Outcome};
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

fn vocab2_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vocab2")
}

/// The ops of `tests/vocab2/` whose cases are not run yet: ops not in the registry, and ops the
/// registry has whose part 2 forms (new attributes, new input forms) some case still fails. The
/// test checks that this is exactly the set of such ops, so nothing is skipped silently and an op
/// leaves the list as soon as every one of its cases passes.
const NOT_YET_IMPLEMENTED: &[&str] = &[];

/// Cases of `tests/vocab2/` whose expected value contradicts the README's definition of the op,
/// with the reason; each must still fail (so an entry goes when the case or the op changes). Empty
/// since `argsort/zero_rows` was corrected to int32 in `../shared/vocab2`.
const CASES_CONTRADICTING_THE_README: &[(&str, &str)] = &[];

/// One case of `tests/vocab2/` with the ops its graph uses.
struct Vocab2Case {
    case: ragtime::case::Case,
    ops: BTreeSet<String>,
}

/// Loads every case of `tests/vocab2/` (a repeated case name would get ` #2`
/// from the loader).
fn vocab2_cases() -> Vec<Vocab2Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vocab2_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let docs = doc["cases"].as_array().unwrap().clone();
        let file = CaseFile::parse(&text).unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
        assert_eq!(file.cases.len(), docs.len());
        for (case, d) in file.cases.into_iter().zip(&docs) {
            let ops = d["nodes"].as_array().unwrap().iter().map(|n| n["op"].as_str().unwrap().to_string()).collect();
            cases.push(Vocab2Case { case, ops });
        }
    }
    cases
}

#[test]
fn every_vocab2_case_of_an_implemented_op_matches_tensorflow_in_every_mode() {
    let cases = vocab2_cases();
    assert!(cases.len() >= 900, "expected the vocab2 cases, found {}", cases.len());
    let listed: BTreeSet<String> = NOT_YET_IMPLEMENTED.iter().map(|s| s.to_string()).collect();
    assert_eq!(listed.len(), NOT_YET_IMPLEMENTED.len(), "NOT_YET_IMPLEMENTED names an op twice");
    let used: BTreeSet<String> = cases.iter().flat_map(|c| c.ops.iter().cloned()).collect();
    let stale: Vec<&String> = listed.difference(&used).collect();
    assert!(stale.is_empty(), "NOT_YET_IMPLEMENTED names ops no vocab2 case uses: {stale:?}");
    let registered: BTreeSet<&str> = ragtime_ops::OP_NAMES.iter().copied().collect();

    // The skipped ops: unregistered ones, and registered ones (part 2 forms of existing ops) that
    // some of their cases still fail.
    let mut skipped: BTreeSet<String> = used.iter().filter(|op| !registered.contains(op.as_str())).cloned().collect();
    for op in listed.iter().filter(|op| registered.contains(op.as_str())) {
        let fails = cases
            .iter()
            .filter(|c| c.ops.contains(op))
            .any(|c| MODES.iter().any(|&mode| c.case.check(mode) != Outcome::Pass));
        if fails {
            skipped.insert(op.clone());
        }
    }
    assert_eq!(
        skipped, listed,
        "NOT_YET_IMPLEMENTED must list exactly the vocab2 ops whose cases do not all pass yet \
         (remove an op once its cases pass; an op missing from the registry must be listed)"
    );

    for (name, why) in CASES_CONTRADICTING_THE_README {
        let case = cases.iter().find(|c| c.case.name == *name).unwrap_or_else(|| panic!("no vocab2 case `{name}`"));
        assert!(
            MODES.iter().all(|&mode| case.case.check(mode) != Outcome::Pass),
            "{name} passes now: remove it from CASES_CONTRADICTING_THE_README ({why})"
        );
    }

    let mut passed = 0;
    let mut failures = Vec::new();
    let contradicting = |c: &Vocab2Case| CASES_CONTRADICTING_THE_README.iter().any(|(n, _)| c.case.name == *n);
    for c in cases.iter().filter(|c| c.ops.is_disjoint(&listed) && !contradicting(c)) {
        for mode in MODES {
            match c.case.check(mode) {
                Outcome::Pass => passed += 1,
                Outcome::Fail(why) => failures.push(format!("\nFAIL {} ({mode:?})\n  {why}", c.case.name)),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} vocab2 case runs failed ({passed} passed); every case of an implemented op must match TensorFlow:{}",
        failures.len(),
        failures.concat()
    );
    eprintln!("vocab2: {passed} case runs passed ({} modes); ops not yet implemented: {listed:?}", MODES.len());
    assert!(passed >= 1, "no vocab2 case ran");
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

/// The project keeps copies of `../shared/conformance`, `../shared/workloads`, `../shared/vocab2`
/// and `../shared/grad` so that tests pass on any clone; this fails when a copy has drifted (copy
/// the shared files again, never edit them).
#[test]
fn the_copies_match_shared_conformance_workloads_vocab2_and_grad() {
    check_copy(&cases_dir(), "conformance");
    check_copy(&workloads_dir(), "workloads");
    check_copy(&vocab2_dir(), "vocab2");
    check_copy(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grad"), "grad");
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

#[test]
fn repeated_case_names_get_distinct_names() {
    let case = r#"{"name": "g/same", "inputs": {"x": {"dtype": "int32", "ragged_rank": 0, "shape": [], "value": 1}},
                   "nodes": [], "outputs": ["x"], "expect": {"x": {"dtype": "int32", "ragged_rank": 0, "shape": [], "value": 1}}}"#;
    let text = format!(r#"{{"format": "ragged-conformance/1", "group": "g", "cases": [{case}, {case}, {case}]}}"#);
    let file = CaseFile::parse(&text).expect("repeated names load");
    let names: Vec<&str> = file.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["g/same", "g/same #2", "g/same #3"]);
}
