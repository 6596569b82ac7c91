//! The `ragtime` command: check conformance cases and run graph files.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use ragtime::case::{run_conformance_with, CaseFile, Expectation, Outcome};
use ragtime::Mode;

const USAGE: &str = "\
usage:
  ragtime conformance PATH...        run every case of the given files or folders
  ragtime run FILE [--case NAME]     print a graph file's debugprint, run it and print its outputs

options:
  --debug                            compile in Mode::Debug (verifier + type checks of every value)";

fn main() -> ExitCode {
    // `args_os`: a path need not be UTF-8, and a non-UTF-8 argument is a usage error, not a panic.
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mode = if args.iter().any(|a| a == "--debug") { Mode::Debug } else { Mode::default() };
    let args: Vec<OsString> = args.into_iter().filter(|a| a != "--debug").collect();
    let Some((command, rest)) = args.split_first() else { return usage() };
    match command.to_str() {
        Some("conformance") if !rest.is_empty() => conformance(rest, mode),
        Some("run") => match rest {
            [file] => run(Path::new(file), None, mode),
            [file, flag, name] if flag == "--case" => match name.to_str() {
                Some(name) => run(Path::new(file), Some(name), mode),
                None => {
                    eprintln!("error: the case name {name:?} is not UTF-8");
                    ExitCode::from(2)
                }
            },
            _ => usage(),
        },
        Some("help" | "--help" | "-h") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => usage(),
    }
}

fn usage() -> ExitCode {
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

fn conformance(paths: &[OsString], mode: Mode) -> ExitCode {
    let paths: Vec<&Path> = paths.iter().map(Path::new).collect();
    // Failures are printed (and flushed) as they are found: if the process dies on a later
    // case, the report so far is not lost.
    let mut stdout = std::io::stdout();
    let report = run_conformance_with(&paths, mode, |name, outcome| {
        if let Outcome::Fail(why) = outcome {
            let _ = writeln!(stdout, "FAIL {name}\n  {why}");
            let _ = stdout.flush();
        }
    });
    match report {
        Ok(report) => {
            println!("{} passed, {} failed", report.passed, report.failures.len());
            if report.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(file: &Path, only: Option<&str>, mode: Mode) -> ExitCode {
    let cases = match CaseFile::load(file) {
        Ok(f) => f.cases,
        Err(e) => {
            eprintln!("error ({}): {e}", e.kind());
            return ExitCode::FAILURE;
        }
    };
    let selected: Vec<_> =
        cases.iter().filter(|c| only.is_none_or(|n| c.name == n || c.name.ends_with(&format!("/{n}")))).collect();
    if selected.is_empty() {
        eprintln!("error: no case named {:?} in {}", only.unwrap_or(""), file.display());
        return ExitCode::FAILURE;
    }
    let mut ok = true;
    for case in selected {
        println!("== {}", case.name);
        if let Some(note) = &case.note {
            println!("   {note}");
        }
        let built = match case.build(mode) {
            Ok(b) => b,
            Err(e) => {
                println!("error ({}): case {}: {e}", e.kind(), case.name);
                ok = false;
                continue;
            }
        };
        print!("{}", built.function.debugprint_types());
        match built.function.call(&built.inputs) {
            Ok(values) => {
                for (name, v) in built.output_names.iter().zip(values) {
                    println!("{name} = {v}");
                }
            }
            Err(e) => {
                println!("error ({}): case {}: {e}", e.kind(), case.name);
                ok = false;
            }
        }
        if let Ok(Expectation::Error(kind)) = case.expectation() {
            println!("(the case expects a {kind} error)");
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
