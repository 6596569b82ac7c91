//! The `ragtime` command: check conformance cases and run graph files.
#![forbid(unsafe_code)]

use std::path::Path;
use std::process::ExitCode;

use ragtime::case::{run_conformance, CaseFile, Expectation};
use ragtime::Mode;

const USAGE: &str = "\
usage:
  ragtime conformance PATH...        run every case of the given files or folders
  ragtime run FILE [--case NAME]     print a graph file's debugprint, run it and print its outputs

options:
  --debug                            compile in Mode::Debug (verifier + type checks of every value)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = if args.iter().any(|a| a == "--debug") { Mode::Debug } else { Mode::default() };
    let args: Vec<&str> = args.iter().map(String::as_str).filter(|a| *a != "--debug").collect();
    match args.split_first() {
        Some((&"conformance", paths)) if !paths.is_empty() => conformance(paths, mode),
        Some((&"run", rest)) => match rest {
            [file] => run(file, None, mode),
            [file, "--case", name] => run(file, Some(name), mode),
            _ => usage(),
        },
        Some((&("help" | "--help" | "-h"), _)) => {
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

fn conformance(paths: &[&str], mode: Mode) -> ExitCode {
    let paths: Vec<&Path> = paths.iter().map(Path::new).collect();
    match run_conformance(&paths, mode) {
        Ok(report) => {
            for (name, why) in &report.failures {
                println!("FAIL {name}\n  {why}");
            }
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

fn run(file: &str, only: Option<&str>, mode: Mode) -> ExitCode {
    let cases = match CaseFile::load(Path::new(file)) {
        Ok(f) => f.cases,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let selected: Vec<_> =
        cases.iter().filter(|c| only.is_none_or(|n| c.name == n || c.name.ends_with(&format!("/{n}")))).collect();
    if selected.is_empty() {
        eprintln!("error: no case named {:?} in {file}", only.unwrap_or(""));
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
                println!("error ({}): {e}", e.kind());
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
                println!("error ({}): {e}", e.kind());
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
