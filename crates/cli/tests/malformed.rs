//! `ragtime run` on every file of the malformed corpus (`tests/malformed`), under a 4 GB
//! address-space limit: each must exit with status 1 (a typed error), never with a panic (101),
//! an abort or a signal, and within a few seconds. Also non-UTF-8 arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/malformed");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Runs `ragtime run FILE` under `ulimit -v` (4 GiB), killing it after `limit`; gives the exit
/// code (`None`: killed by a signal or by the timeout) and stderr + stdout.
fn run_limited(file: &Path, limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" run \"$1\"")
        .arg(env!("CARGO_BIN_EXE_ragtime"))
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let text = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
            return (out.status.code(), text);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return (None, format!("killed after {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn every_malformed_file_exits_1_under_a_4gb_limit() {
    let files = corpus();
    assert!(files.len() >= 80, "{} files", files.len());
    let mut problems = Vec::new();
    for f in &files {
        let (code, text) = run_limited(f, Duration::from_secs(20));
        let name = f.file_name().unwrap().to_string_lossy();
        if code != Some(1) {
            problems.push(format!("{name}: exit {code:?}\n{}", text.chars().take(600).collect::<String>()));
        } else if !text.contains("error (") {
            problems.push(format!("{name}: no typed error printed\n{text}"));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[cfg(unix)]
#[test]
fn non_utf8_arguments_are_errors_not_panics() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let bad = OsStr::from_bytes(b"\xff\xfe.json");
    let out = Command::new(env!("CARGO_BIN_EXE_ragtime")).arg("run").arg(bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a non-UTF-8 path is a file that cannot be read");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
    let out = Command::new(env!("CARGO_BIN_EXE_ragtime")).arg(bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a non-UTF-8 command is a usage error");
    let out = Command::new(env!("CARGO_BIN_EXE_ragtime")).args(["run", "x.json", "--case"]).arg(bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
