//! The `ragtime` command line: check conformance cases, run graph files in any compile mode, run the
//! benchmarks. `main_with_args` is the whole command, so the binary and the Python package's `ragtime`
//! console script run the same code.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cases::no_such_case;
use clap::{Parser, Subcommand, ValueEnum};
use ragtime::case::{
    case_files, case_name_matches, run_conformance_where, value_to_json, CaseFile, Expectation, Outcome,
};
use ragtime::{CompileOptions, Mode};
use serde_json::json;

/// A symbolic graph compiler for ragged tensors: check conformance cases, run graph files,
/// time the benchmark workloads.
///
/// Exit status: 0 on success, 1 when a case fails or a file cannot be run, 2 on bad usage.
#[derive(Parser, Debug)]
#[command(name = "ragtime", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check every case of the given files or folders against its expected outputs or error; ends
    /// with `N passed, N failed` (exit status 1 if any failed).
    Conformance {
        /// Case files (`*.json` in the ragged-conformance format) or folders of them.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Only the case with this name (the full `group/name`, or the part after a `/`); a name
        /// that matches nothing is an error listing the closest names.
        #[arg(long, value_name = "NAME")]
        case: Option<String>,
        /// Print the name of every case, one a line, and run nothing.
        #[arg(long)]
        list: bool,
        #[command(flatten)]
        compile: CompileArgs,
    },
    /// Print a graph file's user graph and optimized graph, run it on its inputs and print its
    /// outputs (or its error). With `--input` and `--output`, stream Parquet columns through it
    /// instead, in batches, and write its outputs to a Parquet file. The format of graph files, and
    /// every op with its attributes: docs/graph-files.md.
    Run {
        /// The graph (case) file. With `--input`, the file's input values only give each input's
        /// dtype, ragged rank and inner dims (any number of rows is accepted).
        file: PathBuf,
        /// Only the case with this name (the full `group/name`, or the part after a `/`); a name
        /// that matches nothing is an error listing the cases of the file.
        #[arg(long, value_name = "NAME")]
        case: Option<String>,
        /// Print exactly one JSON object (outputs, node counts, rewrites applied, error) instead of
        /// the graphs and values (with `--input`: the summary).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        stream: crate::stream::StreamArgs,
        #[command(flatten)]
        compile: CompileArgs,
    },
    /// Time the workloads of docs/benchmarks.md (W1-W7) against same-run baselines, outputs checked first.
    Bench(crate::bench::BenchArgs),
}

#[derive(clap::Args, Debug)]
struct CompileArgs {
    /// The compile mode: all rewrites and the JIT, minimal rewrites and the interpreter, or every
    /// rewrite and kernel checked against the interpreter.
    #[arg(long, value_enum, default_value = "fast_run")]
    mode: CliMode,
    /// Same as `--mode debug`.
    #[arg(long)]
    debug: bool,
    /// Leave out a rewrite, by name or tag (repeatable), e.g. `fusion`, `local_mul_one`.
    #[arg(long = "exclude", value_name = "NAME_OR_TAG")]
    exclude: Vec<String>,
    /// Threads for JIT kernels and the reference kernels that split their work (default:
    /// `RAGTIME_THREADS`, else every core).
    #[arg(long, value_name = "N", value_parser = crate::stream::positive)]
    threads: Option<usize>,
    #[command(flatten)]
    limits: crate::args::LimitsArgs,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
#[value(rename_all = "snake_case")]
enum CliMode {
    /// Every rewrite (merging, folding, fusion) and the JIT (the default).
    FastRun,
    /// Merging and dead-code elimination only; the reference interpreter runs every op.
    FastCompile,
    /// As fast_run, and every rewrite stage and JIT kernel is checked against the interpreter.
    Debug,
}

impl CompileArgs {
    fn options(&self) -> CompileOptions {
        let mode = match (self.debug, self.mode) {
            (true, _) | (_, CliMode::Debug) => Mode::Debug,
            (_, CliMode::FastRun) => Mode::FastRun,
            (_, CliMode::FastCompile) => Mode::FastCompile,
        };
        CompileOptions {
            mode,
            excluding: self.exclude.clone(),
            threads: self.threads,
            // Graph files are untrusted input unless the user says otherwise.
            limits: Some(self.limits.limits(crate::args::Preset::Untrusted)),
            ..Default::default()
        }
    }
}

/// Runs the `ragtime` command on `args` (the program name first, as `std::env::args_os()` gives it):
/// 0 on success, 1 when a case fails or a file cannot be run, 2 on bad usage.
pub fn main_with_args(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    match cli.command {
        Command::Conformance { paths, case, list, compile } => {
            conformance(&paths, case.as_deref(), list, &compile.options())
        }
        Command::Run { file, case, json, stream, compile } if !stream.inputs.is_empty() => {
            crate::stream::run(&file, case.as_deref(), json, &stream, compile.options())
        }
        Command::Run { file, case, json, compile, .. } => run(&file, case.as_deref(), json, &compile.options()),
        Command::Bench(args) => crate::bench::main(&args),
    }
}

/// The name of every case in `paths` (files that cannot be loaded are left out: running them
/// reports them).
fn case_names(paths: &[&Path]) -> ragtime::Result<Vec<String>> {
    let files = case_files(paths)?;
    Ok(files.iter().filter_map(|f| CaseFile::load(f).ok()).flat_map(|f| f.cases.into_iter().map(|c| c.name)).collect())
}

fn conformance(paths: &[PathBuf], only: Option<&str>, list: bool, options: &CompileOptions) -> ExitCode {
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    if list || only.is_some() {
        let names = match case_names(&paths) {
            Ok(names) => names,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        if list {
            for name in &names {
                println!("{name}");
            }
            return ExitCode::SUCCESS;
        }
        if let Some(wanted) = only.filter(|w| !names.iter().any(|n| case_name_matches(n, w))) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let place: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            let hint = format!("`ragtime conformance --list {}` prints them all", place.join(" "));
            eprintln!("error: {}", no_such_case(wanted, &names, &place.join(", "), &hint));
            return ExitCode::FAILURE;
        }
    }
    // Failures are printed (and flushed) as they are found: if the process dies on a later case,
    // the report so far is not lost.
    let mut stdout = std::io::stdout();
    let keep = |name: &str| only.is_none_or(|w| case_name_matches(name, w));
    let report = run_conformance_where(&paths, options.clone(), keep, |name, outcome| {
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

fn run(file: &Path, only: Option<&str>, as_json: bool, options: &CompileOptions) -> ExitCode {
    let fail = |message: String| {
        if as_json {
            println!("{}", json!({ "error": message }));
        } else {
            eprintln!("error: {message}");
        }
        ExitCode::FAILURE
    };
    let cases = match CaseFile::load(file) {
        Ok(f) => f.cases,
        Err(e) if as_json => return fail(e.to_string()),
        Err(e) => {
            eprintln!("error ({}): {e}", e.kind());
            return ExitCode::FAILURE;
        }
    };
    let selected: Vec<_> = cases.iter().filter(|c| only.is_none_or(|n| case_name_matches(&c.name, n))).collect();
    if selected.is_empty() {
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        let hint = format!("`ragtime conformance --list {}` prints them all", file.display());
        return fail(no_such_case(only.unwrap_or(""), &names, &file.display().to_string(), &hint));
    }
    let mut ok = true;
    let mut reports = Vec::new();
    for case in selected {
        if !as_json {
            println!("== {}", case.name);
            if let Some(note) = &case.note {
                println!("   {note}");
            }
        }
        let built = match case.build(options.clone()) {
            Ok(b) => b,
            Err(e) => {
                ok = false;
                if as_json {
                    reports.push(json!({ "case": case.name, "error": e.to_string(), "kind": e.kind().to_string() }));
                } else {
                    println!("error ({}): {e}", e.kind());
                }
                continue;
            }
        };
        let report = built.function.rewrite_report();
        if !as_json {
            println!("-- user graph");
            print!("{}", built.user_debugprint());
            println!("-- optimized graph ({} nodes -> {})", report.nodes_before, report.nodes_after);
            print!("{}", built.function.debugprint_types());
        }
        let result = built.function.call(&built.inputs);
        let mut entry = json!({
            "case": case.name,
            "mode": options.mode.name(),
            "nodes_before": report.nodes_before,
            "nodes_after": report.nodes_after,
            "rewrites": report.stats.iter().filter(|s| s.applied > 0).map(|s| json!({"name": s.name, "applied": s.applied, "seconds": s.time.as_secs_f64()})).collect::<Vec<_>>(),
        });
        match result {
            Ok(values) => {
                let mut outputs = serde_json::Map::new();
                for (name, v) in built.output_names.iter().zip(values) {
                    if !as_json {
                        println!("{name} = {v}");
                    }
                    outputs.insert(name.clone(), value_to_json(&v));
                }
                entry["outputs"] = serde_json::Value::Object(outputs);
            }
            Err(e) => {
                ok = false;
                if !as_json {
                    println!("error ({}): {e}", e.kind());
                }
                entry["error"] = json!(e.to_string());
                entry["kind"] = json!(e.kind().to_string());
            }
        }
        if let Ok(Expectation::Error(kind)) = case.expectation() {
            if !as_json {
                println!("(the case expects a {kind} error)");
            }
            entry["expect_error"] = json!(kind);
        }
        reports.push(entry);
    }
    if as_json {
        // Exactly one JSON object: the case itself when there is one, else all of them.
        let object = match reports.len() {
            1 => reports.remove(0),
            _ => json!({ "cases": reports }),
        };
        println!("{object}");
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
