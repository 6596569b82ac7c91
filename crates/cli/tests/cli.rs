//! The `ragtime` binary: conformance summary line and exit status, `run` printing debugprint and values.

use std::path::PathBuf;
use std::process::Command;

fn ragtime() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ragtime"))
}

fn cases(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance").join(file)
}

fn workloads(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/workloads").join(file)
}

fn write_temp(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ragtime-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn conformance_ends_with_the_summary_line() {
    let out = ragtime().arg("conformance").arg(cases("partitions.json")).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("2 passed, 0 failed"), "{stdout}");
}

#[test]
fn conformance_lists_failures_and_exits_1() {
    let path = write_temp(
        "wrong.json",
        r#"{"format": "ragged-conformance/1", "group": "t", "cases": [
            {"name": "t/wrong", "inputs": {"x": {"dtype": "int32", "ragged_rank": 1, "value": [[1, 2], [3]]}},
             "nodes": [{"out": "y", "op": "add", "in": ["x", "x"]}], "outputs": ["y"],
             "expect": {"y": {"dtype": "int32", "ragged_rank": 1, "value": [[2, 4], [7]]}}}]}"#,
    );
    let out = ragtime().arg("conformance").arg(&path).output().unwrap();
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL t/wrong"), "the failing case is named: {stdout}");
    assert!(stdout.contains("flat value 2 is 6 (expected 7)"), "what differed is said: {stdout}");
    assert_eq!(stdout.lines().last(), Some("0 passed, 1 failed"));
}

#[test]
fn run_prints_the_graph_and_the_outputs() {
    let out = ragtime()
        .args(["run"])
        .arg(cases("seed_walkthrough.json"))
        .args(["--case", "times_two_plus_one"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("-- user graph\nElemwise{add} [id A] <int32[5, *]> 'y'"), "the user graph first: {stdout}");
    assert!(stdout.contains("-- optimized graph (2 nodes -> 1)"), "{stdout}");
    assert!(stdout.contains("Composite{(i0 * 2) + 1} [id A] 0 <int32[5, *]>"), "the fused graph: {stdout}");
    assert!(stdout.contains("y = <Ragged int32 [[7, 3, 9, 3], [], [11, 19, 5], [13], []]>"), "{stdout}");
}

#[test]
fn run_json_prints_one_object_with_node_counts_and_outputs() {
    let run = |extra: &[&str]| {
        let out = ragtime().args(["run"]).arg(workloads("merge_fold.json")).arg("--json").args(extra).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON object");
        v
    };
    let fused = run(&[]);
    assert_eq!(fused["nodes_before"], 7);
    assert_eq!(fused["nodes_after"], 1, "merge, folding and fusion leave one node: {fused}");
    assert_eq!(fused["outputs"]["y"]["dtype"], "float32");
    let unfused = run(&["--exclude", "fusion"]);
    assert!(unfused["nodes_after"].as_u64().unwrap() <= 4, "merge and folding alone: {unfused}");
    assert_eq!(fused["outputs"], unfused["outputs"], "fusion changes no value");
    let compiled_fast = run(&["--mode", "fast_compile"]);
    assert_eq!(compiled_fast["outputs"], fused["outputs"]);
}

#[test]
fn run_reports_errors_with_exit_status_1() {
    let out = ragtime()
        .args(["run"])
        .arg(cases("seed_walkthrough.json"))
        .args(["--case", "seed_walkthrough/bad_splits_decreasing"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("error (invalid_row_partition)"), "{stdout}");
}

#[test]
fn bad_usage_and_missing_files() {
    assert_eq!(ragtime().output().unwrap().status.code(), Some(2));
    assert_eq!(ragtime().args(["run", "x.json", "--mode", "fastest"]).output().unwrap().status.code(), Some(2));
    let out = ragtime().args(["run", "/nonexistent/file.json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
    let out = ragtime().arg("run").arg(cases("partitions.json")).args(["--case", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}
