//! The `ragtime` command: check conformance cases, run graph files in any compile mode, run the benchmarks.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use ragtime::case::{run_conformance_with, value_to_json, CaseFile, Expectation, Outcome};
use ragtime::{CompileOptions, Mode};
use serde_json::json;

/// A symbolic graph compiler for ragged tensors.
#[derive(Parser, Debug)]
#[command(name = "ragtime", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every case of the given files or folders; ends with `N passed, N failed`.
    Conformance {
        /// Case files or folders of them.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        compile: CompileArgs,
    },
    /// Print a graph file's graph and optimized graph, run it and print its outputs.
    Run {
        /// The graph (case) file.
        file: PathBuf,
        /// Only the case with this name (or name suffix after `/`).
        #[arg(long)]
        case: Option<String>,
        /// Print exactly one JSON object: outputs and node counts.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        compile: CompileArgs,
    },
    /// Time the workloads of docs/benchmarks.md (W1-W7) against same-run baselines, outputs checked first.
    Bench(ragtime_cli::bench::BenchArgs),
}

#[derive(clap::Args, Debug)]
struct CompileArgs {
    /// The compile mode.
    #[arg(long, value_enum, default_value = "fast_run")]
    mode: CliMode,
    /// Same as `--mode debug`.
    #[arg(long)]
    debug: bool,
    /// Leave out a rewrite, by name or tag (repeatable), e.g. `fusion`, `local_mul_one`.
    #[arg(long = "exclude", value_name = "NAME_OR_TAG")]
    exclude: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
#[value(rename_all = "snake_case")]
enum CliMode {
    FastRun,
    FastCompile,
    Debug,
}

impl CompileArgs {
    fn options(&self) -> CompileOptions {
        let mode = match (self.debug, self.mode) {
            (true, _) | (_, CliMode::Debug) => Mode::Debug,
            (_, CliMode::FastRun) => Mode::FastRun,
            (_, CliMode::FastCompile) => Mode::FastCompile,
        };
        CompileOptions { mode, excluding: self.exclude.clone(), ..Default::default() }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    match cli.command {
        Command::Conformance { paths, compile } => conformance(&paths, &compile.options()),
        Command::Run { file, case, json, compile } => run(&file, case.as_deref(), json, &compile.options()),
        Command::Bench(args) => ragtime_cli::bench::main(&args),
    }
}

fn conformance(paths: &[PathBuf], options: &CompileOptions) -> ExitCode {
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    // Failures are printed (and flushed) as they are found: if the process dies on a later case,
    // the report so far is not lost.
    let mut stdout = std::io::stdout();
    let report = run_conformance_with(&paths, options.clone(), |name, outcome| {
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
    let selected: Vec<_> =
        cases.iter().filter(|c| only.is_none_or(|n| c.name == n || c.name.ends_with(&format!("/{n}")))).collect();
    if selected.is_empty() {
        return fail(format!("no case named {:?} in {}", only.unwrap_or(""), file.display()));
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
