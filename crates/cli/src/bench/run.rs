//! Timing and checking one workload: ragtime's calls and the baseline loops timed in turn, round after
//! round (`rounds`), each side's best kept, then ragtime's output compared with the baseline's and with
//! the interpreter's.

use std::num::NonZeroUsize;
use std::ops::Range;

use ragtime::{CompileOptions, Function, Mode, RaggedTensor};

use super::baseline::{self, Parallel};
use super::check::{self, Against, Mismatch};
use super::data::{
    self, Data, Inner, Queries, Rank2, Sessions, DEFAULT_QUERIES, DEFAULT_ROWS, DEFAULT_USERS, DIM, FEATURES,
};
use super::memory;
use super::rounds::{best_call, best_of_rounds, best_of_rounds_then_one_thread, whole, Clock, Recycling, Side};
use super::variants;
use super::workloads::{self, WorkloadId};
use super::{BenchArgs, BenchError};

/// Calls per timed run of W6.
pub const SMALL_CALLS: usize = 20_000;

/// What a run measures, from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The workloads, in order.
    pub only: Vec<WorkloadId>,
    /// W1-W4 rows.
    pub rows: usize,
    /// W7 queries.
    pub queries: usize,
    /// W9 users.
    pub users: usize,
    /// Timed runs after the warm-up.
    pub runs: usize,
    /// Requested threads.
    pub threads: usize,
    /// Whether freed memory is kept for reuse (`retain_freed_memory` applied).
    pub memory_retained: bool,
}

impl Settings {
    /// The settings `args` ask for: every workload unless `--only`, all cores unless `--threads`, W7's
    /// query count scaled with `--rows` unless `--queries`.
    pub fn from_args(args: &BenchArgs) -> Settings {
        let mut only = if args.only.is_empty() { WorkloadId::ALL.to_vec() } else { args.only.clone() };
        only.sort();
        only.dedup();
        let rows = args.rows as usize;
        let queries =
            args.queries.map_or_else(|| (DEFAULT_QUERIES * rows).div_ceil(DEFAULT_ROWS).max(1), |q| q as usize);
        let threads =
            args.threads.map_or_else(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get), usize::from);
        let users = (DEFAULT_USERS * rows).div_ceil(DEFAULT_ROWS).max(1);
        Settings { only, rows, queries, users, runs: args.runs as usize, threads, memory_retained: false }
    }
}

/// The sizes of the inputs a run built (for the table's heading).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// `(rows, values)` of the W1-W4 data, if built.
    pub data: Option<(usize, usize)>,
    /// `(queries, words)` of the W7 data, if built.
    pub queries: Option<(usize, usize)>,
    /// `(users, events)` of the W9 data, if built.
    pub sessions: Option<(usize, usize)>,
}

/// One workload's measurements.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The workload.
    pub id: WorkloadId,
    /// ragtime's best time in seconds (W6: per call).
    pub ragtime_s: f64,
    /// The baseline's best time in seconds, where a baseline applies.
    pub baseline_s: Option<f64>,
    /// Threads ragtime used.
    pub threads: usize,
    /// Threads the baseline used.
    pub baseline_threads: Option<usize>,
    /// The same baseline's best time on one thread, when `baseline_s` used more than one: the plain
    /// single-threaded loop the multi-core targets are stated against.
    pub single_thread_baseline_s: Option<f64>,
    /// W1, W4: the best time of the baseline with a vectorized `tanh` / `exp` of ragtime's accuracy
    /// instead of libm's (same threads as `baseline_s`).
    pub approx_baseline_s: Option<f64>,
    /// What the output was checked against, or the first difference.
    pub check: Result<Vec<Against>, Mismatch>,
    /// The input's size, as named counts (`rows`, `values`, `queries`, `words`, `calls_per_run`).
    pub size: Vec<(&'static str, usize)>,
    /// Whether each timed call got the previous call's outputs back first (`Function::recycle`).
    pub recycled_outputs: bool,
    /// W1-W4 and their other forms: the best time of the bandwidth probe (W2's baseline loop over
    /// this workload's `values` values of `x` and `z`) timed in the same rounds; W2's is its baseline.
    pub bandwidth_probe_s: Option<f64>,
}

impl Outcome {
    /// The count named `name` in [`Outcome::size`].
    pub fn size_of(&self, name: &str) -> Option<usize> {
        self.size.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }
}

/// The workloads reading the W1-W4 data (`Bench::data`); the rank 2 forms read it through
/// their view of it.
const DATA_USERS: [WorkloadId; 8] = [
    WorkloadId::FusedElemwise,
    WorkloadId::Axpy,
    WorkloadId::RowMean,
    WorkloadId::RowSoftmax,
    WorkloadId::RowMeanRank2,
    WorkloadId::RowSoftmaxRank2,
    WorkloadId::RowLogSoftmax,
    WorkloadId::RowLayerNorm,
];

/// The workloads reading the rank 2 view (`Bench::rank2`).
const RANK2_USERS: [WorkloadId; 2] = [WorkloadId::RowMeanRank2, WorkloadId::RowSoftmaxRank2];

/// The workloads reading the `[rows, *, 8]` data (`Bench::inner`).
const INNER_USERS: [WorkloadId; 3] =
    [WorkloadId::RowMeanInner8, WorkloadId::RowSoftmaxInner8, WorkloadId::FeatureLayerNorm];

/// The inputs and the baseline pool of one `ragtime bench` run.
#[derive(Debug)]
pub struct Bench {
    settings: Settings,
    parallel: Parallel,
    /// The baselines' one-thread runner, when `parallel` has more threads.
    single: Option<Parallel>,
    data: Option<Data>,
    /// The ragged rank 2 view of `data`, for the rank 2 forms of W3 and W4.
    rank2: Option<Rank2>,
    /// The `[rows, *, 8]` data of the inner-dim forms of W3 and W4.
    inner: Option<Inner>,
    queries: Option<Queries>,
    sessions: Option<Sessions>,
}

pub(super) fn library(id: WorkloadId) -> impl Fn(ragtime::Error) -> BenchError {
    move |source| BenchError::Library { workload: id.name(), source }
}

pub(super) fn single(id: WorkloadId, outputs: Vec<RaggedTensor>) -> Result<RaggedTensor, BenchError> {
    let count = outputs.len();
    match <[RaggedTensor; 1]>::try_from(outputs) {
        Ok([out]) => Ok(out),
        Err(_) => Err(BenchError::Outputs { workload: id.name(), count }),
    }
}

/// Compiles `built` in the default mode (`FastRun`: optimizer and JIT) on the settings' threads;
/// with `RAGTIME_BENCH_GRAPHS=1` in the environment, prints its optimized graph on stderr.
pub(super) fn compiled(
    id: WorkloadId,
    built: &workloads::Built,
    settings: &Settings,
) -> Result<(Function, usize), BenchError> {
    let threads = settings.threads.max(1);
    let f = built.compile_options(CompileOptions::from(Mode::FastRun).threads(threads)).map_err(library(id))?;
    if std::env::var_os("RAGTIME_BENCH_GRAPHS").is_some_and(|v| v == "1") {
        eprintln!("{}: optimized graph\n{}", id.name(), f.debugprint());
    }
    Ok((f, threads))
}

/// Runs `built` once on the reference interpreter (`Mode::FastCompile`).
pub(super) fn reference(
    id: WorkloadId,
    built: &workloads::Built,
    inputs: &[RaggedTensor],
) -> Result<RaggedTensor, BenchError> {
    // The unoptimized graph frees each intermediate after its last use, but a call's budget
    // counts every buffer it allocated: the checker's reference may charge the machine's memory
    // (W9 at 2^25 rows charges some 14 GB over a call whose live data stays far below that).
    let limits = ragtime::Limits::trusted().with_call_budget(ragtime::limits::physical_memory());
    let f = built.compile_options(CompileOptions::from(Mode::FastCompile).limits(limits)).map_err(library(id))?;
    single(id, f.call(inputs).map_err(library(id))?)
}

/// What [`against_baseline`] measured.
pub(super) struct Timed {
    /// ragtime's best time.
    pub ragtime_s: f64,
    /// The baseline loop's best time on all threads.
    pub baseline_s: f64,
    /// The same loop's best time on one thread, when all threads are several.
    pub single_thread_baseline_s: Option<f64>,
    /// The best times of the extra sides, in their order.
    pub extra_s: Vec<f64>,
    /// ragtime's last outputs.
    pub outputs: Vec<RaggedTensor>,
    /// The multi-threaded baseline loop's output (`out_len` values), for the check.
    pub baseline_out: Vec<f32>,
}

/// Times ragtime's calls of `f` on `inputs` (recycling, `rounds::Recycling`) beside `baseline_loop`
/// on `parallel`'s threads, on one thread when `single` is given, and beside the `extra` sides (an
/// approximation's loop, the bandwidth probe), all in the same rounds (`rounds::best_of_rounds`).
/// The loops split the rows of `work_splits` (cumulative work per row) as `Parallel::row_chunks`
/// does and write `out_len` values.
pub(super) fn against_baseline(
    id: WorkloadId,
    runs: usize,
    (f, inputs): (&Function, &[RaggedTensor]),
    (parallel, single): (&Parallel, Option<&Parallel>),
    (work_splits, out_len): (&[i64], usize),
    baseline_loop: impl Fn(&Parallel, &[Range<usize>], &mut [f32]),
    extra: &mut [Side<'_, BenchError>],
) -> Result<Timed, BenchError> {
    let chunks = parallel.row_chunks(work_splits);
    let single = single.map(|one| (one, one.row_chunks(work_splits)));
    let (mut buf, mut single_buf) = (vec![0f32; out_len], vec![0f32; if single.is_some() { out_len } else { 0 }]);
    let mut ragtime = Recycling::new(f, inputs);
    let best = {
        let mut ragtime_side = |c: &mut Clock| ragtime.round(c).map_err(library(id));
        let mut baseline_side = whole(|| baseline_loop(parallel, &chunks, &mut buf));
        let mut single_side = whole(|| {
            if let Some((one, chunks)) = &single {
                baseline_loop(one, chunks, &mut single_buf)
            }
        });
        let mut sides: Vec<Side<'_, BenchError>> = vec![&mut ragtime_side, &mut baseline_side];
        sides.extend(extra.iter_mut().map(|side| &mut **side as Side<'_, BenchError>));
        let one_thread: Option<Side<'_, BenchError>> = match single {
            Some(_) => Some(&mut single_side),
            None => None,
        };
        best_of_rounds_then_one_thread(runs, &mut sides, one_thread)?
    };
    let ((ragtime_s, baseline_s), extra_s) = ((best.0[0], best.0[1]), best.0[2..].to_vec());
    let single_thread_baseline_s = best.1;
    Ok(Timed {
        ragtime_s,
        baseline_s,
        single_thread_baseline_s,
        extra_s,
        outputs: ragtime.into_outputs(),
        baseline_out: buf,
    })
}

impl Bench {
    /// The baselines' pools; no inputs yet: each family's are built when the first workload that
    /// reads them runs ([`Bench::run`]) and dropped after the last ([`Bench::release_unneeded`]), so
    /// a run holds only the families of the workloads at hand.
    pub fn new(settings: &Settings) -> Result<Bench, BenchError> {
        let pool = |threads: usize| Parallel::new(threads).map_err(|source| BenchError::ThreadPool { threads, source });
        let parallel = pool(settings.threads)?;
        let single = if parallel.threads() > 1 { Some(pool(1)?) } else { None };
        Ok(Bench {
            settings: settings.clone(),
            parallel,
            single,
            data: None,
            rank2: None,
            inner: None,
            queries: None,
            sessions: None,
        })
    }

    /// Builds the inputs `id` reads that are not built yet.
    pub fn build_inputs(&mut self, id: WorkloadId) -> Result<(), BenchError> {
        use WorkloadId::*;
        let data_error = |source| BenchError::Library { workload: "data", source };
        if DATA_USERS.contains(&id) && self.data.is_none() {
            self.data = Some(Data::new(self.settings.rows).map_err(data_error)?);
        }
        if let (true, None, Some(data)) = (RANK2_USERS.contains(&id), &self.rank2, &self.data) {
            self.rank2 = Some(Rank2::new(data).map_err(data_error)?);
        }
        if INNER_USERS.contains(&id) && self.inner.is_none() {
            self.inner = Some(Inner::new(self.settings.rows).map_err(data_error)?);
        }
        if id == NestedAttention && self.sessions.is_none() {
            self.sessions = Some(Sessions::new(self.settings.users).map_err(data_error)?);
        }
        if matches!(id, Bigram | BigramVariants) && self.queries.is_none() {
            self.queries = Some(Queries::new(self.settings.queries).map_err(data_error)?);
        }
        Ok(())
    }

    /// Drops the inputs that none of the workloads still to run (`remaining`) reads, so a run at
    /// a large `--rows` holds one family's data at a time, not every workload's at once; then gives
    /// back the memory the finished workload's buffers kept (`release_freed_memory`: the recycled
    /// outputs and glibc's retained free memory), so each workload starts from an empty pool, as
    /// with `--only`, and the run's footprint is the largest workload's, not the sum of high-water
    /// marks (at 2^25 rows about 13 GB from W1 were otherwise held through W9).
    pub fn release_unneeded(&mut self, remaining: &[WorkloadId]) {
        let needs = |ids: &[WorkloadId]| remaining.iter().any(|id| ids.contains(id));
        if !needs(&DATA_USERS) {
            self.data = None;
        }
        if !needs(&RANK2_USERS) {
            self.rank2 = None;
        }
        if !needs(&INNER_USERS) {
            self.inner = None;
        }
        if !needs(&[WorkloadId::NestedAttention]) {
            self.sessions = None;
        }
        if !needs(&[WorkloadId::Bigram, WorkloadId::BigramVariants]) {
            self.queries = None;
        }
        ragtime::ir::jit::release_freed_memory();
    }

    /// The sizes of the inputs built now.
    pub fn sizes(&self) -> Sizes {
        Sizes {
            data: self.data.as_ref().map(|d| (d.nrows(), d.nvals())),
            queries: self.queries.as_ref().map(|q| (q.count(), q.words())),
            sessions: self.sessions.as_ref().map(|s| (s.users(), s.events())),
        }
    }

    /// Times and checks one workload, building its inputs first if they are not built yet
    /// ([`Bench::build_inputs`]). The allocation figures of its calls join its sizes
    /// (`memory::CallMemory::annotate`).
    pub fn run(&mut self, id: WorkloadId) -> Result<Outcome, BenchError> {
        self.build_inputs(id)?;
        let _ = memory::take();
        let mut outcome = self.run_workload(id)?;
        memory::take().annotate(&mut outcome.size);
        Ok(outcome)
    }

    fn run_workload(&self, id: WorkloadId) -> Result<Outcome, BenchError> {
        use WorkloadId::*;
        // `run` built the inputs `id` reads, so a missing family is a bug of this module.
        let missing = || BenchError::Library { workload: id.name(), source: ragtime::Error::graph("inputs not built") };
        match id {
            Compile => self.compile(),
            SmallCall => self.small_call(),
            TrainStep => super::w8::run(&self.settings),
            Bigram => self.bigram(self.queries.as_ref().ok_or_else(missing)?),
            BigramVariants => self.bigram_variants(self.queries.as_ref().ok_or_else(missing)?),
            NestedAttention => self.nested_attention(),
            RowMeanInner8 | RowSoftmaxInner8 | FeatureLayerNorm => {
                let inner = self.inner.as_ref().ok_or_else(missing)?;
                super::inner::run(&self.settings, (&self.parallel, self.single.as_ref()), id, inner)
            }
            FusedElemwise | Axpy | RowMean | RowSoftmax | RowMeanRank2 | RowSoftmaxRank2 | RowLogSoftmax
            | RowLayerNorm => self.array(id, self.data.as_ref().ok_or_else(missing)?),
        }
    }

    /// W1-W4 and the rank 2 forms of W3 and W4: one call on the 2^20-row data; the row-chunked
    /// baseline loop (for the rank 2 forms, W3's and W4's loop over the same inner rows and values:
    /// the rank 1 figure they are measured against).
    fn array(&self, id: WorkloadId, data: &Data) -> Result<Outcome, BenchError> {
        use WorkloadId::*;
        let runs = self.settings.runs;
        let built = workloads::build(id);
        let (f, threads) = compiled(id, &built, &self.settings)?;
        let rank2 = match (id, &self.rank2) {
            (RowMeanRank2 | RowSoftmaxRank2, Some(r)) => Some(r),
            (RowMeanRank2 | RowSoftmaxRank2, None) => {
                return Err(BenchError::Library {
                    workload: id.name(),
                    source: ragtime::Error::graph("no rank 2 data"),
                })
            }
            _ => None,
        };
        let (x, z) = rank2.map_or((&data.x, &data.z), |r| (&r.x, &r.z));
        let inputs = match id {
            RowSoftmax | RowSoftmaxRank2 | RowLogSoftmax | RowLayerNorm => vec![x.clone()],
            _ => vec![x.clone(), z.clone()],
        };
        let (xs, zs, splits) = (data.xs(), data.zs(), data.splits());
        let per_row = matches!(id, RowMean | RowMeanRank2);
        let out_len = if per_row { data.nrows() } else { data.nvals() };
        let at = |r: usize| splits[r] as usize;
        // One run of the workload's baseline loop on `par`; `approx` for the vectorized tanh / exp.
        let baseline_loop = |par: &Parallel, chunks: &[Range<usize>], buf: &mut [f32], approx: bool| match id {
            FusedElemwise if approx => par.run(chunks, buf, at, |rows, o| {
                let v = at(rows.start)..at(rows.end);
                baseline::fused_elemwise_approx(&xs[v.clone()], &zs[v], o)
            }),
            FusedElemwise => par.run(chunks, buf, at, |rows, o| {
                let v = at(rows.start)..at(rows.end);
                baseline::fused_elemwise(&xs[v.clone()], &zs[v], o)
            }),
            Axpy => baseline::axpy_rows(par, chunks, at, xs, zs, buf),
            RowMean | RowMeanRank2 => {
                par.run(chunks, buf, |r| r, |rows, o| baseline::row_mean(&splits[rows.start..=rows.end], xs, zs, o))
            }
            RowLogSoftmax if approx => par.run(chunks, buf, at, |rows, o| {
                baseline::row_log_softmax_approx(&splits[rows.start..=rows.end], xs, o)
            }),
            RowLogSoftmax => {
                par.run(chunks, buf, at, |rows, o| baseline::row_log_softmax(&splits[rows.start..=rows.end], xs, o))
            }
            RowLayerNorm => {
                par.run(chunks, buf, at, |rows, o| baseline::row_layer_norm(&splits[rows.start..=rows.end], xs, o))
            }
            _ if approx => {
                par.run(chunks, buf, at, |rows, o| baseline::row_softmax_approx(&splits[rows.start..=rows.end], xs, o))
            }
            _ => par.run(chunks, buf, at, |rows, o| baseline::row_softmax(&splits[rows.start..=rows.end], xs, o)),
        };
        // The vectorized approximations beside libm (W1, W4), checked against the libm loop below.
        let approx = matches!(id, FusedElemwise | RowSoftmax | RowSoftmaxRank2 | RowLogSoftmax);
        let chunks = self.parallel.row_chunks(splits);
        let mut approx_buf = vec![0f32; if approx { out_len } else { 0 }];
        let mut probe_buf = vec![0f32; if id == Axpy { 0 } else { data.nvals() }];
        let timed = {
            let mut approx_side = whole(|| baseline_loop(&self.parallel, &chunks, &mut approx_buf, true));
            // W2's own loop on W2's buffers and threads: the bandwidth this workload's limit is measured at.
            let mut probe_side = whole(|| baseline::axpy_rows(&self.parallel, &chunks, at, xs, zs, &mut probe_buf));
            let mut extra: Vec<Side<'_, BenchError>> = Vec::new();
            if approx {
                extra.push(&mut approx_side);
            }
            if id != Axpy {
                extra.push(&mut probe_side);
            }
            against_baseline(
                id,
                runs,
                (&f, &inputs),
                (&self.parallel, self.single.as_ref()),
                (splits, out_len),
                |par, chunks, buf| baseline_loop(par, chunks, buf, false),
                &mut extra,
            )?
        };
        let Timed { ragtime_s, baseline_s, single_thread_baseline_s, extra_s, outputs, baseline_out: buf } = timed;
        let mut extra_s = extra_s.into_iter();
        let approx_baseline_s = if approx { extra_s.next() } else { None };
        let bandwidth_probe_s = if id == Axpy { Some(baseline_s) } else { extra_s.next() };
        let out = single(id, outputs)?;

        let want = reference(id, &built, &inputs)?;
        // The row splits the output must have, outermost first.
        let mut want_splits: Vec<&[i64]> = rank2.map(|r| r.x.partitions()[0].row_splits()).into_iter().collect();
        if !per_row {
            want_splits.push(splits);
        }
        let check = (|| {
            let got_splits = out.nested_row_splits();
            if got_splits.len() != want_splits.len() {
                return Err(Mismatch { against: Against::Baseline, what: "shape", index: 0, got: None, want: None });
            }
            for (got, want) in got_splits.iter().zip(&want_splits) {
                check::splits(Against::Baseline, got, want)?;
            }
            check::row_output(&out, &buf, &want, approx_baseline_s.map(|_| &approx_buf[..]))
        })();
        Ok(Outcome {
            recycled_outputs: true,
            approx_baseline_s,
            bandwidth_probe_s,
            id,
            ragtime_s,
            baseline_s: Some(baseline_s),
            threads,
            baseline_threads: Some(self.parallel.threads()),
            single_thread_baseline_s,
            check,
            size: match rank2 {
                Some(r) => vec![
                    ("nodes_after", f.rewrite_report().nodes_after),
                    ("outer_rows", r.outer_rows()),
                    ("rows", data.nrows()),
                    ("values", data.nvals()),
                ],
                None if matches!(id, RowLogSoftmax | RowLayerNorm) => vec![
                    ("nodes_after", f.rewrite_report().nodes_after),
                    ("rows", data.nrows()),
                    ("values", data.nvals()),
                ],
                None => vec![("rows", data.nrows()), ("values", data.nvals())],
            },
        })
    }

    /// W5: `compile()` of W4's built graph; the compiled function is checked on the 5-row input.
    fn compile(&self) -> Result<Outcome, BenchError> {
        let id = WorkloadId::Compile;
        let built = workloads::row_softmax();
        // Each timed compile starts with an empty kernel cache, as docs/benchmarks.md asks (emptying it
        // is a map clear, negligible next to compiling).
        let (ragtime_s, f) = best_call(self.settings.runs, || {
            ragtime::ir::jit::clear_kernel_cache();
            built.compile()
        })
        .map_err(library(id))?;
        let small = data::small_input().map_err(library(id))?;
        let inputs = [small.clone()];
        let out = single(id, f.call(&inputs).map_err(library(id))?)?;
        let want = reference(id, &built, &inputs)?;
        let splits = small.partitions().first().map_or(&[0][..], |p| p.row_splits());
        let mut expected = vec![0f32; splits.last().map_or(0, |&n| n as usize)];
        baseline::row_softmax(splits, small.flat_slice::<f32>().unwrap_or(&[]), &mut expected);
        let check = (|| {
            check::tensors(Against::Interpreter, &out, &want)?;
            check::splits(Against::Expected, out.nested_row_splits().first().map_or(&[][..], |s| s), splits)?;
            check::values(Against::Expected, check::float_values(Against::Expected, &out)?, &expected)?;
            Ok(vec![Against::Expected, Against::Interpreter])
        })();
        Ok(Outcome {
            approx_baseline_s: None,
            bandwidth_probe_s: None,
            recycled_outputs: false,
            id,
            ragtime_s,
            baseline_s: None,
            threads: 1,
            baseline_threads: None,
            single_thread_baseline_s: None,
            check,
            size: vec![
                ("nodes_before", f.rewrite_report().nodes_before),
                ("nodes_after", f.rewrite_report().nodes_after),
            ],
        })
    }

    /// W6: W3's function called in a loop on the 5-row input; seconds per call.
    fn small_call(&self) -> Result<Outcome, BenchError> {
        let id = WorkloadId::SmallCall;
        let built = workloads::row_mean();
        let (f, threads) = compiled(id, &built, &self.settings)?;
        let small = data::small_input().map_err(library(id))?;
        let inputs = [small.clone(), small.clone()];
        let (batch_s, out) = best_call(self.settings.runs, || {
            let mut last = f.call(&inputs)?;
            for _ in 1..SMALL_CALLS {
                last = f.call(&inputs)?;
            }
            Ok(last)
        })
        .map_err(library(id))?;
        let out = single(id, out)?;
        let want = reference(id, &built, &inputs)?;
        let splits = small.partitions().first().map_or(&[0][..], |p| p.row_splits());
        let values = small.flat_slice::<f32>().unwrap_or(&[]);
        let mut expected = vec![0f32; small.nrows()];
        baseline::row_mean(splits, values, values, &mut expected);
        let check = (|| {
            check::tensors(Against::Interpreter, &out, &want)?;
            check::values(Against::Expected, check::float_values(Against::Expected, &out)?, &expected)?;
            Ok(vec![Against::Expected, Against::Interpreter])
        })();
        Ok(Outcome {
            approx_baseline_s: None,
            bandwidth_probe_s: None,
            recycled_outputs: false,
            id,
            ragtime_s: batch_s / SMALL_CALLS as f64,
            baseline_s: None,
            threads,
            baseline_threads: None,
            single_thread_baseline_s: None,
            check,
            size: vec![("rows", small.nrows()), ("calls_per_run", SMALL_CALLS)],
        })
    }

    /// W7: the bigram pipeline on the generated queries; the query-chunked baseline.
    fn bigram(&self, q: &Queries) -> Result<Outcome, BenchError> {
        let id = WorkloadId::Bigram;
        let built = workloads::bigram();
        let (f, threads) = compiled(id, &built, &self.settings)?;
        let inputs = [q.queries.clone(), q.table.clone()];
        let splits = q.splits();
        let table = q.table_values();
        let words = q.words_column();
        let timed = against_baseline(
            id,
            self.settings.runs,
            (&f, &inputs),
            (&self.parallel, self.single.as_ref()),
            (splits, q.count() * DIM),
            |par, chunks, buf| {
                if let Some(words) = words {
                    par.run(
                        chunks,
                        buf,
                        |r| r * DIM,
                        |rows, o| baseline::bigram(&splits[rows.start..=rows.end], words, table, o),
                    );
                }
            },
            &mut [],
        )?;
        let Timed { ragtime_s, baseline_s, single_thread_baseline_s, outputs, baseline_out: buf, .. } = timed;
        let out = single(id, outputs)?;

        let want = reference(id, &built, &inputs)?;
        let check = (|| {
            if out.flat_values().shape() != [q.count(), DIM] || !out.is_dense() {
                return Err(Mismatch { against: Against::Baseline, what: "shape", index: 0, got: None, want: None });
            }
            check::values(Against::Baseline, check::float_values(Against::Baseline, &out)?, &buf)?;
            check::tensors(Against::Interpreter, &out, &want)?;
            Ok(vec![Against::Baseline, Against::Interpreter])
        })();
        Ok(Outcome {
            approx_baseline_s: None,
            bandwidth_probe_s: None,
            recycled_outputs: true,
            id,
            ragtime_s,
            baseline_s: Some(baseline_s),
            threads,
            baseline_threads: Some(self.parallel.threads()),
            single_thread_baseline_s,
            check,
            size: vec![("queries", q.count()), ("words", q.words())],
        })
    }

    /// W7's other spellings: each variant's time, the slowest reported against the seed's spelling
    /// timed in the same run (`baseline_s`); the seed's output checked against the interpreter and
    /// every variant's against the seed's.
    fn bigram_variants(&self, q: &Queries) -> Result<Outcome, BenchError> {
        let id = WorkloadId::BigramVariants;
        let inputs = [q.queries.clone(), q.table.clone()];
        let variants = variants::bigram_variants();
        let mut compiled_variants = Vec::new();
        for variant in &variants {
            compiled_variants.push(compiled(id, &variant.built, &self.settings)?);
        }
        // The variants round-robin, the seed's spelling (the baseline) among them.
        let mut calls: Vec<Recycling<'_>> = compiled_variants.iter().map(|(f, _)| Recycling::new(f, &inputs)).collect();
        let best = {
            let mut sides: Vec<_> =
                calls.iter_mut().map(|call| move |c: &mut Clock| call.round(c).map_err(library(id))).collect();
            let mut sides: Vec<Side<'_, BenchError>> = sides.iter_mut().map(|s| s as Side<'_, BenchError>).collect();
            best_of_rounds(self.settings.runs, &mut sides)?
        };
        let mut timed = Vec::new();
        for (((variant, (f, threads)), call), seconds) in variants.iter().zip(&compiled_variants).zip(calls).zip(best) {
            timed.push((
                variant.time_key,
                seconds,
                single(id, call.into_outputs())?,
                *threads,
                f.rewrite_report().nodes_after,
            ));
        }
        let (seed, rest) = timed.split_first().ok_or(BenchError::Outputs { workload: id.name(), count: 0 })?;
        let slowest = rest.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or(seed);
        let want = reference(id, &variants[0].built, &inputs)?;
        let check = check::tensors(Against::Interpreter, &seed.2, &want)
            .and_then(|()| rest.iter().try_for_each(|v| check::tensors(Against::Expected, &v.2, &seed.2)))
            .map(|()| vec![Against::Expected, Against::Interpreter]);
        let mut size = vec![("queries", q.count()), ("variants", timed.len()), ("nodes_after", slowest.4)];
        size.extend(timed.iter().map(|v| (v.0, (v.1 * 1e6).round() as usize)));
        Ok(Outcome {
            approx_baseline_s: None,
            bandwidth_probe_s: None,
            recycled_outputs: true,
            id,
            ragtime_s: slowest.1,
            baseline_s: Some(seed.1),
            threads: slowest.3,
            baseline_threads: Some(seed.3),
            single_thread_baseline_s: None,
            check,
            size,
        })
    }

    /// W9: attention pooling over users -> sessions -> events; the user-chunked baseline (chunks
    /// balanced by events, as the executor balances rows by values).
    fn nested_attention(&self) -> Result<Outcome, BenchError> {
        let id = WorkloadId::NestedAttention;
        let Some(s) = &self.sessions else {
            return Err(BenchError::Library { workload: id.name(), source: ragtime::Error::graph("no W9 data") });
        };
        let built = workloads::nested_attention();
        let (f, threads) = compiled(id, &built, &self.settings)?;
        let inputs = [s.d.clone(), s.f.clone()];
        let (users, sessions) = (s.user_splits(), s.session_splits());
        // The events before each user: the work measure the chunks balance.
        let user_events: Vec<i64> = users.iter().map(|&u| sessions[u as usize]).collect();
        let (d, features) = (s.durations(), s.features());
        let timed = against_baseline(
            id,
            self.settings.runs,
            (&f, &inputs),
            (&self.parallel, self.single.as_ref()),
            (&user_events, s.users() * FEATURES),
            |par, chunks, buf| {
                par.run(
                    chunks,
                    buf,
                    |u| u * FEATURES,
                    |rows, o| baseline::nested_attention(&users[rows.start..=rows.end], sessions, d, features, o),
                )
            },
            &mut [],
        )?;
        let Timed { ragtime_s, baseline_s, single_thread_baseline_s, outputs, baseline_out: buf, .. } = timed;
        let out = single(id, outputs)?;

        let want = reference(id, &built, &inputs)?;
        let check = (|| {
            if out.flat_values().shape() != [s.users(), FEATURES] || !out.is_dense() {
                return Err(Mismatch { against: Against::Baseline, what: "shape", index: 0, got: None, want: None });
            }
            check::values(Against::Baseline, check::float_values(Against::Baseline, &out)?, &buf)?;
            check::tensors(Against::Interpreter, &out, &want)?;
            Ok(vec![Against::Baseline, Against::Interpreter])
        })();
        Ok(Outcome {
            approx_baseline_s: None,
            bandwidth_probe_s: None,
            recycled_outputs: true,
            id,
            ragtime_s,
            baseline_s: Some(baseline_s),
            threads,
            baseline_threads: Some(self.parallel.threads()),
            single_thread_baseline_s,
            check,
            size: vec![
                ("nodes_after", f.rewrite_report().nodes_after),
                ("rows", s.users()),
                ("sessions", sessions.len() - 1),
                ("values", s.events()),
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            only: WorkloadId::ALL.to_vec(),
            rows: 64,
            queries: 4,
            users: 2,
            runs: 1,
            threads: 1,
            memory_retained: false,
        }
    }

    const NOTHING: Sizes = Sizes { data: None, queries: None, sessions: None };

    #[test]
    fn each_family_is_built_for_its_first_reader_and_dropped_after_its_last() {
        use WorkloadId::*;
        let mut bench = Bench::new(&settings()).unwrap();
        assert_eq!(bench.sizes(), NOTHING, "nothing is built before a workload runs");
        bench.build_inputs(Axpy).unwrap();
        let after_w2 = bench.sizes();
        assert!(after_w2.data.is_some() && after_w2.queries.is_none() && after_w2.sessions.is_none());
        assert!(bench.rank2.is_none() && bench.inner.is_none());
        bench.build_inputs(RowMean).unwrap();
        assert_eq!(bench.sizes(), after_w2, "a family is built once");
        bench.build_inputs(Bigram).unwrap();
        assert!(bench.sizes().queries.is_some());
        bench.release_unneeded(&[NestedAttention, RowMeanRank2]);
        assert!(
            bench.queries.is_none() && bench.data.is_some(),
            "W7's queries go, W3's data stays for its rank 2 form"
        );
        bench.build_inputs(RowMeanRank2).unwrap();
        assert!(bench.rank2.is_some());
        bench.build_inputs(RowMeanInner8).unwrap();
        assert!(bench.inner.is_some());
        bench.release_unneeded(&[]);
        assert_eq!(bench.sizes(), NOTHING);
        assert!(bench.rank2.is_none() && bench.inner.is_none());
    }

    #[test]
    fn a_workload_run_first_builds_its_own_inputs() {
        let mut bench = Bench::new(&settings()).unwrap();
        let outcome = bench.run(WorkloadId::Axpy).unwrap();
        assert!(outcome.check.is_ok(), "{:?}", outcome.check);
        assert_eq!(outcome.size_of("rows"), Some(64));
    }
}
