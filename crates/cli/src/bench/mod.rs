//! `ragtime bench`: the workloads of `docs/benchmarks.md` (W1-W9, W7 in other spellings, and the ragged
//! rank 2 and inner-dimension forms of W3 and W4), each timed in ragtime's default mode next to a plain Rust baseline
//! measured in the same run, every output checked before its time is reported.
//!
//! - [`data`]: the deterministic inputs; [`workloads`]: the graphs, built with the public DSL;
//!   [`variants`]: W7's other spellings; [`w8`]: the training step and its hand-written step;
//! - [`baseline`]: the plain Rust loops on the same footing as the kernels (instruction set,
//!   threads), and [`approx`]: the vectorizable `tanh` / `exp` of W1's and W4's second baselines;
//! - [`check`]: the output comparison (conformance tolerance, first differing index);
//! - [`memory`]: the counting allocator and the bytes a call allocates;
//! - [`run`]: timing and checking one workload ([`inner`]: the inner-dim forms of W3 and W4); [`report`]: the JSON object and the table.

pub mod approx;
pub mod baseline;
pub mod check;
pub mod data;
pub mod inner;
pub mod memory;
pub mod report;
pub mod rounds;
pub mod run;
pub mod variants;
pub mod w8;
pub mod workloads;

use std::io::Write;
use std::process::ExitCode;

pub use run::{Outcome, Settings};
pub use workloads::WorkloadId;

/// The options of `ragtime bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Print exactly one JSON object, keyed by workload id, instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Threads: the baselines run on a pool of this many; ragtime is told through the one function
    /// `CompileOptions::threads` (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Run only these workloads (comma-separated ids, e.g. `W3_row_mean,W4_row_softmax`).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<WorkloadId>,
    /// Rows of the W1-W4 data (docs/benchmarks.md: 2^20; 10 float32 values per row on average);
    /// W9's users scale with it (2^17 at 2^20 rows). Any count whose tensors fit the trusted
    /// limits (the machine's memory) is accepted.
    #[arg(long, default_value_t = data::DEFAULT_ROWS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub rows: u64,
    /// W7 queries (default: 100,000 at 2^20 rows, scaled with `--rows`).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub queries: Option<u64>,
    /// Timed runs after one warm-up; the best is reported (both sides get the same count; on a
    /// shared two-core VM, best-of-5 two-thread times still varied by 1.5x between invocations).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,
    /// Keep glibc's default of returning large freed blocks to the kernel, so every call pays
    /// page faults for fresh memory (by default the benchmark opts in to
    /// `ragtime::ir::jit::retain_freed_memory`, as an application calling in a loop would).
    #[arg(long)]
    pub fresh_memory: bool,
}

/// What stops a benchmark run (a wrong answer does not: it is reported as `checked: false`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// The library refused to build, compile or run a workload.
    #[error("{workload}: {source}")]
    Library {
        /// The workload (or `data` while building inputs).
        workload: &'static str,
        /// The library's error.
        #[source]
        source: ragtime::Error,
    },
    /// A compiled workload returned a number of outputs other than one.
    #[error("{workload}: the function returned {count} outputs, expected 1")]
    Outputs {
        /// The workload.
        workload: &'static str,
        /// How many it returned.
        count: usize,
    },
    /// The baselines' thread pool (ragtime's own) could not start.
    #[error("could not start {threads} baseline threads: {source}")]
    ThreadPool {
        /// The requested thread count.
        threads: usize,
        /// The library's error.
        #[source]
        source: ragtime::Error,
    },
}

/// Runs `ragtime bench`: prints the JSON object or the table; exit status 1 when an output was wrong or a
/// workload could not run.
pub fn main(args: &BenchArgs) -> ExitCode {
    let mut settings = Settings::from_args(args);
    settings.memory_retained = !args.fresh_memory && ragtime::ir::jit::retain_freed_memory();
    let result = rows_fit(args.rows).and_then(|()| if args.json { run_json(&settings) } else { run_table(&settings) });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            if args.json {
                println!("{}", serde_json::json!({ "error": e.to_string() }));
            } else {
                eprintln!("error: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Refuses a `--rows` whose W1-W4 tensors (10 float32 values per row on average, 20 at most)
/// could not be held under the trusted limits, before any data is built.
fn rows_fit(rows: u64) -> Result<(), BenchError> {
    let rows = usize::try_from(rows).unwrap_or(usize::MAX);
    ragtime::Limits::trusted()
        .checked_size("bench --rows", &[rows, 10], 4)
        .map(drop)
        .map_err(|source| BenchError::Library { workload: "data", source })
}

/// All workloads, then one JSON object; `Ok(false)` when a check failed.
fn run_json(settings: &Settings) -> Result<bool, BenchError> {
    let mut bench = run::Bench::new(settings)?;
    let mut outcomes = Vec::new();
    for (k, &id) in settings.only.iter().enumerate() {
        outcomes.push(bench.run(id)?);
        bench.release_unneeded(&settings.only[k + 1..]);
    }
    println!("{}", report::json(settings, &outcomes));
    Ok(outcomes.iter().all(|o| o.check.is_ok()))
}

/// The table, one line per workload as it finishes; `Ok(false)` when a check failed.
fn run_table(settings: &Settings) -> Result<bool, BenchError> {
    let mut bench = run::Bench::new(settings)?;
    let mut stdout = std::io::stdout();
    print!("{}", report::table_header(settings));
    let mut ok = true;
    let mut outcomes = Vec::with_capacity(settings.only.len());
    let mut sizes = bench.sizes();
    for (k, &id) in settings.only.iter().enumerate() {
        bench.build_inputs(id)?;
        print!("{}", report::inputs_line(sizes, bench.sizes()));
        sizes = bench.sizes();
        let outcome = bench.run(id)?;
        bench.release_unneeded(&settings.only[k + 1..]);
        ok &= outcome.check.is_ok();
        print!("{}", report::table_line(&outcome));
        let _ = stdout.flush();
        outcomes.push(outcome);
    }
    print!("{}", report::table_footer(settings, &outcomes));
    Ok(ok)
}
