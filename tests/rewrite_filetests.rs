//! Rewrite filetests: every graph file under `tests/rewrites/` is compiled in `Mode::FastRun` without
//! the JIT stage, and for each case the rewrites that applied and the optimized `debugprint` are
//! compared with the `.expected` file beside it (`RAGTIME_BLESS=1` writes it). Each case's optimized
//! graph must also compute what its unoptimized graph computes (`Mode::FastCompile`), and the same
//! with the JIT on.

use std::fmt::Write as _;
use std::path::Path;

use ragtime::case::{compare, CaseFile};
use ragtime::{CompileOptions, Mode};

/// The text a case contributes to its file's `.expected`.
fn optimized(case: &ragtime::case::Case) -> String {
    let built = case
        .build(CompileOptions::from(Mode::FastRun).excluding("jit"))
        .unwrap_or_else(|e| panic!("{}: does not compile: {e}", case.name));
    let report = built.function.rewrite_report();
    let applied: Vec<String> =
        report.stats.iter().filter(|s| s.applied > 0).map(|s| format!("{} x{}", s.name, s.applied)).collect();
    let mut text = format!("## {}\n", case.name);
    if let Some(note) = &case.note {
        writeln!(text, "# {note}").unwrap();
    }
    writeln!(text, "# applied: {}", if applied.is_empty() { "nothing".to_owned() } else { applied.join(", ") })
        .unwrap();
    text + &built.function.debugprint() + "\n"
}

/// The optimized graph (with and without the JIT) computes the unoptimized graph's values.
fn same_values(case: &ragtime::case::Case) {
    let want =
        case.run(Mode::FastCompile).unwrap_or_else(|e| panic!("{}: the unoptimized graph fails: {e}", case.name));
    for options in [CompileOptions::from(Mode::FastRun).excluding("jit"), CompileOptions::from(Mode::FastRun)] {
        let got = case.run(options.clone()).unwrap_or_else(|e| panic!("{} ({options:?}): fails: {e}", case.name));
        for ((name, w), (_, g)) in want.iter().zip(&got) {
            if let Err(d) = compare(w, g) {
                panic!("{} ({options:?}): output `{name}` differs from the unoptimized graph's: {d}\n  want {w}\n  got  {g}", case.name);
            }
        }
    }
}

#[test]
fn every_rewrite_filetest_matches_its_expected_output() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rewrites");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/rewrites exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no graph files in {}", dir.display());
    let mut mismatches = Vec::new();
    for file in &files {
        let cases = CaseFile::load(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut text = String::new();
        for case in &cases.cases {
            same_values(case);
            text += &optimized(case);
        }
        let expected = file.with_extension("expected");
        if std::env::var_os("RAGTIME_BLESS").is_some() {
            std::fs::write(&expected, &text).unwrap();
            continue;
        }
        match std::fs::read_to_string(&expected) {
            Ok(want) if want == text => {}
            Ok(want) => mismatches.push(format!(
                "{}: the optimized graphs differ (RAGTIME_BLESS=1 rewrites it after review)\n--- expected\n{want}\n--- got\n{text}",
                expected.display()
            )),
            Err(_) => mismatches.push(format!("{} is missing; run with RAGTIME_BLESS=1", expected.display())),
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
