//! The corpus of malformed and extreme graph files (`tests/malformed/*.json`, written by
//! `tools/malformed_corpus.py`) through the library path `ragtime run` takes: load, build,
//! debugprint, call, print. Every file must end in a typed error, without a panic, quickly. Also
//! a chain of 50,000 nodes, which must run (no stack overflow in building, printing or running).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ragtime::case::CaseFile;
use ragtime::{Error, Mode};

/// What `ragtime run` does with a file (prints the user graph and the optimized graph, runs,
/// prints the outputs), as one result: the first error, or the printed text.
fn run_like_the_cli(path: &Path, mode: Mode) -> Result<String, Error> {
    let file = CaseFile::load(path)?;
    let mut text = String::new();
    let mut first_error = None;
    for case in &file.cases {
        let built = match case.build(mode) {
            Ok(b) => b,
            Err(e) => {
                first_error.get_or_insert(e);
                continue;
            }
        };
        text.push_str(&built.user_debugprint());
        text.push_str(&built.function.debugprint_types());
        match built.function.call(&built.inputs) {
            Ok(values) => {
                for (name, v) in built.output_names.iter().zip(values) {
                    text.push_str(&format!("{name} = {v}\n"));
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(text),
    }
}

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_malformed_file_gets_a_typed_error_quickly() {
    let files = corpus();
    assert!(files.len() >= 80, "the corpus is in tests/malformed ({} files)", files.len());
    let mut problems = Vec::new();
    for path in &files {
        for mode in [Mode::FastRun, Mode::FastCompile, Mode::Debug] {
            let start = Instant::now();
            let outcome = std::panic::catch_unwind(|| run_like_the_cli(path, mode));
            let took = start.elapsed();
            let name = path.file_name().unwrap().to_string_lossy();
            match outcome {
                Err(_) => problems.push(format!("{name} ({mode:?}): panicked")),
                Ok(Ok(text)) => problems.push(format!("{name} ({mode:?}): accepted, printed {} bytes", text.len())),
                Ok(Err(e)) if e.to_string().is_empty() => problems.push(format!("{name}: an error without a message")),
                Ok(Err(_)) => {}
            }
            if took > Duration::from_secs(10) {
                problems.push(format!("{name} ({mode:?}): took {took:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn load_errors_name_the_case_node_and_field() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let message = |f: &str| CaseFile::load(&dir.join(f)).unwrap_err().to_string();
    let m = message("unknown_node_field.json");
    assert!(m.contains("case 0 (`g/a`), node 0 (identity)") && m.contains("`atrs`"), "{m}");
    let m = message("rank_claim_string.json");
    assert!(m.contains("case 0 (`g/a`)") && m.contains("`x`") && m.contains("invalid type"), "{m}");
    let m = message("duplicate_input_key.json");
    assert!(m.contains("duplicate key `x`"), "{m}");
    let m = message("format_number.json");
    assert!(m.contains("invalid type: integer `7`"), "{m}");
    let m = message("unknown_top_field.json");
    assert!(m.contains("unknown field `extra`"), "{m}");
}

#[test]
fn build_errors_name_the_node() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let file = CaseFile::load(&dir.join("node_shadows_input.json")).unwrap();
    let e = file.cases[0].build(Mode::default()).unwrap_err();
    assert_eq!(e.kind(), ragtime::ErrorKind::InvalidGraph);
    assert!(e.to_string().contains("node 0 (identity): output `x` is already defined"), "{e}");
    let file = CaseFile::load(&dir.join("tile_int8_2p31.json")).unwrap();
    let e = file.cases[0].run(Mode::default()).unwrap_err();
    assert_eq!(e.kind(), ragtime::ErrorKind::ResourceExhausted);
    assert!(e.to_string().contains("tile"), "{e}");
}

#[test]
fn a_chain_of_50000_nodes_builds_prints_and_runs() {
    let n = 50_000;
    let mut nodes = Vec::with_capacity(n);
    for k in 0..n {
        let op = if k % 2 == 0 { "negative" } else { "identity" };
        nodes.push(format!(r#"{{"op": "{op}", "in": ["v{k}"], "out": "v{}"}}"#, k + 1));
    }
    let text = format!(
        r#"{{"format": "ragged-conformance/1", "group": "chain", "cases": [{{"name": "chain/long",
            "inputs": {{"v0": {{"dtype": "int32", "ragged_rank": 1, "value": [[1, 2], [3]]}}}},
            "nodes": [{}], "outputs": ["v{n}"]}}]}}"#,
        nodes.join(",")
    );
    let path = std::env::temp_dir().join(format!("ragtime-chain-{}.json", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let start = Instant::now();
    for mode in [Mode::FastRun, Mode::FastCompile] {
        let text = run_like_the_cli(&path, mode).unwrap();
        assert!(text.ends_with(&format!("v{n} = <Ragged int32 [[1, 2], [3]]>\n")), "{}", &text[text.len() - 100..]);
        assert!(text.lines().count() > n, "every node of the user graph is printed");
    }
    let _ = std::fs::remove_file(&path);
    assert!(start.elapsed() < Duration::from_secs(60), "{:?}", start.elapsed());
}
