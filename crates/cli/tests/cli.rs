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

/// The names of the cases of a file, as `--list` prints them.
fn listed(paths: &[PathBuf]) -> Vec<String> {
    let out = ragtime().arg("conformance").arg("--list").args(paths).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn an_unknown_case_name_lists_the_cases_and_suggests_close_ones() {
    let file = cases("seed_walkthrough.json");
    let names = listed(std::slice::from_ref(&file));
    assert!(names.contains(&"seed_walkthrough/times_two_plus_one".to_string()), "{names:?}");
    let out = ragtime().arg("run").arg(&file).args(["--case", "times_two_plus_on"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no case named \"times_two_plus_on\""), "{stderr}");
    assert!(stderr.contains("did you mean \"seed_walkthrough/times_two_plus_one\"?"), "{stderr}");
    for name in &names {
        assert!(stderr.contains(name.as_str()), "every case of the file is listed ({name}): {stderr}");
    }
    // The same for `conformance --case`, across folders.
    let folder = cases("");
    let out = ragtime().arg("conformance").arg(&folder).args(["--case", "times_two_plus_on"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did you mean \"seed_walkthrough/times_two_plus_one\"?"), "{stderr}");
    assert!(stderr.contains("ragtime conformance --list"), "too many cases to list: says how to list them: {stderr}");
}

#[test]
fn conformance_case_runs_only_that_case() {
    let out = ragtime().arg("conformance").arg(cases("")).args(["--case", "times_two_plus_one"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("1 passed, 0 failed"), "{stdout}");
}

#[test]
fn every_subcommand_and_flag_has_help() {
    let help = |args: &[&str]| {
        let out = ragtime().args(args).arg("--help").output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let top = help(&[]);
    for sub in ["conformance", "run", "bench"] {
        assert!(top.lines().any(|l| l.trim_start().starts_with(sub) && l.trim().len() > sub.len() + 5), "{sub}: {top}");
        let text = help(&[sub]);
        // Every option line (`--flag`) is followed by a description, on its line or the next.
        let lines: Vec<&str> = text.lines().collect();
        let mut flags = 0;
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            if !(trimmed.starts_with("--") || trimmed.starts_with("-h") || trimmed.starts_with("-V")) {
                continue;
            }
            flags += 1;
            let words_after = trimmed.split("  ").filter(|s| !s.trim().is_empty()).count();
            let next = lines.get(i + 1).map_or("", |l| l.trim());
            assert!(
                words_after >= 2 || (!next.is_empty() && !next.starts_with('-')),
                "{sub}: no help for {trimmed:?}:\n{text}"
            );
        }
        assert!(flags >= 2, "{sub}: {text}");
    }
}
