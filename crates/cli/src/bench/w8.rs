//! W8 `train_step` (`docs/benchmarks.md`): one SGD step of a fastText-style classifier on W7's
//! queries, as a compiled function with updates of its states (the 2^18 x 32 table `E`, `W`, `b`),
//! timed next to the same forward pass, backward pass and update written by hand in plain Rust,
//! and checked against it and against `Mode::FastCompile` from the initial parameters.
//!
//! Timed steps follow each other without resetting the parameters (each is a real SGD step; the
//! work per step does not depend on the values); the check runs one step from the initial
//! parameters on each side, outside the timed region.

use std::ops::Range;

use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::Result;
use rayon::prelude::*;
use std::sync::Arc;

use rayon::ThreadPool;

use super::check::{self, Against, Mismatch};
use super::data::Queries;
use super::rounds::{best_of_rounds_then_one_thread, whole, Clock, Side};
use super::run::{Outcome, Settings};
use super::workloads::{Built, WorkloadId};
use super::BenchError;

/// The table's rows: the hash buckets of words and bigrams.
pub const TABLE_ROWS: usize = 1 << 18;
/// The embedding width.
pub const WIDTH: usize = 32;
/// The classes.
pub const CLASSES: usize = 4;
/// The SGD learning rate.
pub const LR: f32 = 0.5;

/// The initial parameters of `docs/benchmarks.md`: `E[k] = (((k * 53) % 1000) / 1000 - 0.5) / 10`,
/// `W[k] = ((k * 29) % 100) / 100 - 0.5`, `b = 0`, row-major.
pub fn initial_parameters() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let e = (0..TABLE_ROWS * WIDTH).map(|k| (((k * 53) % 1000) as f64 / 1000.0 - 0.5) as f32 / 10.0).collect();
    let w = (0..WIDTH * CLASSES).map(|k| (((k * 29) % 100) as f64 / 100.0 - 0.5) as f32).collect();
    (e, w, vec![0.0; CLASSES])
}

/// The labels: the bucket of each query's first word among the 4 classes (`to_hash_bucket_fast(w1, 4)`).
pub fn labels(q: &Queries) -> Result<RaggedTensor> {
    let words = q.words_column().ok_or_else(|| ragtime::Error::graph("W8: the queries are not strings"))?;
    let splits = q.splits();
    let labels: Vec<i64> = splits[..splits.len() - 1]
        .iter()
        .map(|&s| (farmhash::fingerprint64(words.get(s as usize)) % CLASSES as u64) as i64)
        .collect();
    Ok(DenseTensor::from_vec(vec![labels.len()], labels)?.into())
}

/// The model's states, holding fresh copies of the initial parameters.
pub fn states() -> Result<[State; 3]> {
    let (e, w, b) = initial_parameters();
    Ok([
        State::new("E", DenseTensor::from_vec(vec![TABLE_ROWS, WIDTH], e)?.into())?,
        State::new("W", DenseTensor::from_vec(vec![WIDTH, CLASSES], w)?.into())?,
        State::new("b", DenseTensor::from_vec(vec![CLASSES], b)?.into())?,
    ])
}

/// The step's graph over `states`: inputs `(queries, labels)`, the loss, and the new value of
/// each parameter (`p - 0.5 * d loss / d p`).
#[derive(Debug)]
pub struct Step {
    /// `queries` (string `[q, (words)]`) and `labels` (int64 `[q]`).
    pub inputs: [Var; 2],
    /// The mean cross-entropy, before the step.
    pub loss: Var,
    /// `E`, `W`, `b` after the step.
    pub new_values: [Var; 3],
}

/// The mean cross-entropy of the classifier with table `e`, weights `w` and bias `b` on
/// `queries` (W7's features: the words' and the `#`-padded bigrams' buckets) and `labels`.
pub fn loss(queries: &Var, labels: &Var, e: &Var, w: &Var, b: &Var) -> Var {
    let buckets = TABLE_ROWS as i64;
    let marker_shape = ops::stack(&[&queries.nrows(), &queries.nrows().scalar_like(1)], 0);
    let marker = ops::fill(&marker_shape, &queries.scalar_like("#"));
    let padded = ops::concat(&[&marker, queries, &marker], 1);
    let bigrams = strings::join(&[&padded.get(s![.., ..-1]), &padded.get(s![.., 1..])], "+");
    let features = ops::concat(
        &[&strings::to_hash_bucket_fast(queries, buckets), &strings::to_hash_bucket_fast(&bigrams, buckets)],
        1,
    );
    let hidden = ops::embedding_lookup(e, &features).reduce_mean(1);
    let logits = &hidden.matmul(w) + b;
    let picked = (&ops::one_hot(labels, CLASSES) * &logits).reduce_sum(1);
    (&logits.reduce_logsumexp(1) - &picked).reduce_mean(None)
}

fn inputs(g: &Graph) -> [Var; 2] {
    [
        g.input("queries", TensorType::ragged(DType::String, 1)),
        g.input("labels", TensorType::dense(DType::I64, &[None])),
    ]
}

/// Builds the step on `states`.
pub fn step(states: &[State; 3]) -> Result<Step> {
    let g = Graph::new();
    let [queries, labels] = inputs(&g);
    let [e, w, b] = [g.state(&states[0]), g.state(&states[1]), g.state(&states[2])];
    let loss = loss(&queries, &labels, &e, &w, &b);
    let grads = ragtime::grad(&loss, &[&e, &w, &b])?;
    let new = |p: &Var, d: &Var| p - &(d * LR);
    let new_values = [new(&e, &grads[0]), new(&w, &grads[1]), new(&b, &grads[2])];
    Ok(Step { inputs: [queries, labels], loss, new_values })
}

/// The step compiled with its updates in `options`.
pub fn compile(states: &[State; 3], options: CompileOptions) -> Result<Function> {
    let s = step(states)?;
    let [qs, ls] = &s.inputs;
    let updates: Vec<(&State, &Var)> = states.iter().zip(&s.new_values).collect();
    s.loss.graph().compile_with_updates(&[qs, ls], &[&s.loss], &updates, options)
}

/// The forward pass alone with the parameters as inputs `(queries, labels, E, W, b)`, as a
/// [`Built`] graph (what the tests compiling every workload's graph compile).
pub fn built() -> Built {
    let g = Graph::new();
    let [queries, labels] = inputs(&g);
    let e = g.input("E", TensorType::dense(DType::F32, &[Some(TABLE_ROWS), Some(WIDTH)]));
    let w = g.input("W", TensorType::dense(DType::F32, &[Some(WIDTH), Some(CLASSES)]));
    let b = g.input("b", TensorType::dense(DType::F32, &[Some(CLASSES)]));
    let output = loss(&queries, &labels, &e, &w, &b);
    Built { inputs: vec![queries, labels, e, w, b], output }
}

/// The hand-written step on `threads` threads: features hashed and each query's forward pass and
/// output gradient computed in parallel over chunks of queries, then `dW`, `db` and the loss
/// summed in one sequential pass, and the table's rows updated in parallel the way ragtime's
/// in-place update splits them (each thread owns a range of rows and walks every query in order).
#[derive(Debug)]
pub struct HandStep {
    pool: Option<Arc<ThreadPool>>,
    chunks: Vec<Range<usize>>,
    /// Where each query's features start (`2 n + 1` per query of `n` words).
    feature_splits: Vec<usize>,
    features: Vec<u32>,
    /// Per query: `h` (`WIDTH`), `d loss / d logits` (`CLASSES`), the query's loss.
    records: Vec<f32>,
}

const RECORD: usize = WIDTH + CLASSES + 1;

impl HandStep {
    /// Buffers for `q`'s queries, on `threads` threads.
    pub fn new(q: &Queries, threads: usize) -> std::result::Result<HandStep, ragtime::Error> {
        let splits = q.splits();
        let count = q.count();
        let feature_splits: Vec<usize> = (0..=count).map(|r| 2 * splits[r] as usize + r).collect();
        let pool = match threads > 1 {
            // ragtime's own pool, as for the other baselines (`baseline::Parallel`).
            true => Some(ragtime::ir::thread_pool(threads)?),
            false => None,
        };
        // Chunks of queries holding about the same number of features, several per thread.
        let pieces = (threads * 8).max(1);
        let total = feature_splits[count];
        let mut bounds = vec![0usize];
        for t in 1..pieces {
            let at = feature_splits.partition_point(|&f| f < total * t / pieces).min(count);
            bounds.push(at.max(bounds[bounds.len() - 1]));
        }
        bounds.push(count);
        let chunks = bounds.windows(2).map(|w| w[0]..w[1]).collect();
        Ok(HandStep { pool, chunks, features: vec![0; total], records: vec![0.0; count * RECORD], feature_splits })
    }

    /// One step on `(e, w, b)`; returns the loss before it.
    pub fn run(&mut self, q: &Queries, labels: &[i64], e: &mut [f32], w: &mut [f32], b: &mut [f32]) -> f32 {
        let (Some(words), splits) = (q.words_column(), q.splits()) else { return f32::NAN };
        let count = q.count();
        let mut pieces = Vec::with_capacity(self.chunks.len());
        let (mut features, mut records) = (&mut self.features[..], &mut self.records[..]);
        for rows in &self.chunks {
            let nf = self.feature_splits[rows.end] - self.feature_splits[rows.start];
            let (f, f_rest) = features.split_at_mut(nf);
            let (r, r_rest) = records.split_at_mut(rows.len() * RECORD);
            pieces.push((rows.clone(), f, r));
            (features, records) = (f_rest, r_rest);
        }
        let (table, weights, bias) = (&*e, &*w, &*b);
        let forward = |(rows, f, r): (Range<usize>, &mut [u32], &mut [f32])| {
            forward_chunk(rows, splits, words, labels, table, weights, bias, count, f, r)
        };
        match &self.pool {
            Some(pool) => pool.install(|| pieces.into_par_iter().for_each(forward)),
            None => pieces.into_iter().for_each(forward),
        }
        // Backward: dW, db and the loss from the records, sequentially; then each feature's row
        // moves against its query's `dh / n`, the table's rows split between the threads.
        let threads = self.pool.as_ref().map_or(1, |p| p.current_num_threads());
        let rows_per_thread = TABLE_ROWS.div_ceil(threads);
        let (records, feature_splits, features, weights) = (&self.records, &self.feature_splits, &self.features, &*w);
        let update = |(k, rows): (usize, &mut [f32])| {
            update_rows(k * rows_per_thread, rows, records, feature_splits, features, weights)
        };
        match &self.pool {
            Some(pool) => pool.install(|| e.par_chunks_mut(rows_per_thread * WIDTH).enumerate().for_each(update)),
            None => update((0, e)),
        }
        let mut dw = [0f32; WIDTH * CLASSES];
        let mut db = [0f32; CLASSES];
        let mut loss = 0f64;
        for rec in self.records.chunks_exact(RECORD) {
            let (h, dl) = (&rec[..WIDTH], &rec[WIDTH..WIDTH + CLASSES]);
            for (i, &hi) in h.iter().enumerate() {
                for (c, &d) in dl.iter().enumerate() {
                    dw[i * CLASSES + c] += hi * d;
                }
            }
            for (c, &d) in dl.iter().enumerate() {
                db[c] += d;
            }
            loss += f64::from(rec[WIDTH + CLASSES]);
        }
        for (x, d) in w.iter_mut().zip(dw) {
            *x -= LR * d;
        }
        for (x, d) in b.iter_mut().zip(db) {
            *x -= LR * d;
        }
        (loss / count as f64) as f32
    }
}

/// The table's rows `first_row..` (in `rows`) after the step: each feature's row in range minus
/// its query's `dh / n * LR`, queries in order.
fn update_rows(
    first_row: usize,
    rows: &mut [f32],
    records: &[f32],
    feature_splits: &[usize],
    features: &[u32],
    w: &[f32],
) {
    let owned = first_row..first_row + rows.len() / WIDTH;
    for (r, rec) in records.chunks_exact(RECORD).enumerate() {
        let members = &features[feature_splits[r]..feature_splits[r + 1]];
        if !members.iter().any(|&id| owned.contains(&(id as usize))) {
            continue;
        }
        let dl = &rec[WIDTH..WIDTH + CLASSES];
        let n = members.len() as f32;
        let mut dh = [0f32; WIDTH];
        for (i, d) in dh.iter_mut().enumerate() {
            *d = (0..CLASSES).map(|c| weights_at(w, i, c) * dl[c]).sum::<f32>() / n * LR;
        }
        for &id in members.iter().filter(|&&id| owned.contains(&(id as usize))) {
            let at = (id as usize - first_row) * WIDTH;
            for (x, d) in rows[at..at + WIDTH].iter_mut().zip(&dh) {
                *x -= d;
            }
        }
    }
}

fn weights_at(w: &[f32], i: usize, c: usize) -> f32 {
    w[i * CLASSES + c]
}

/// The forward pass and the logits' gradient of queries `rows`: their features' buckets into
/// `features`, and one record per query into `records`.
#[allow(clippy::too_many_arguments)]
fn forward_chunk(
    rows: Range<usize>,
    splits: &[i64],
    words: &StringTensor,
    labels: &[i64],
    e: &[f32],
    w: &[f32],
    b: &[f32],
    count: usize,
    features: &mut [u32],
    records: &mut [f32],
) {
    let bucket = |s: &[u8]| (farmhash::fingerprint64(s) % TABLE_ROWS as u64) as u32;
    let mut joined = Vec::with_capacity(64);
    let mut at = 0;
    for (r, rec) in rows.zip(records.chunks_exact_mut(RECORD)) {
        let (s, end) = (splits[r] as usize, splits[r + 1] as usize);
        let n = end - s;
        let first = at;
        for i in s..end {
            features[at] = bucket(words.get(i));
            at += 1;
        }
        let padded = |i: usize| if i == 0 || i == n + 1 { &b"#"[..] } else { words.get(s + i - 1) };
        for i in 0..=n {
            joined.clear();
            joined.extend_from_slice(padded(i));
            joined.push(b'+');
            joined.extend_from_slice(padded(i + 1));
            features[at] = bucket(&joined);
            at += 1;
        }
        let mut h = [0f32; WIDTH];
        for &id in &features[first..at] {
            for (a, &v) in h.iter_mut().zip(&e[id as usize * WIDTH..(id as usize + 1) * WIDTH]) {
                *a += v;
            }
        }
        let k = (at - first) as f32;
        h.iter_mut().for_each(|a| *a /= k);
        let mut logits = [0f32; CLASSES];
        for (c, l) in logits.iter_mut().enumerate() {
            *l = b[c] + h.iter().enumerate().map(|(i, &hi)| hi * weights_at(w, i, c)).sum::<f32>();
        }
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = logits.iter().map(|&l| (l - max).exp()).sum();
        let lse = max + sum.ln();
        let label = labels[r] as usize;
        rec[..WIDTH].copy_from_slice(&h);
        for c in 0..CLASSES {
            let p = (logits[c] - lse).exp();
            rec[WIDTH + c] = (p - if c == label { 1.0 } else { 0.0 }) / count as f32;
        }
        rec[WIDTH + CLASSES] = lse - logits[label];
    }
}

fn library(source: ragtime::Error) -> BenchError {
    BenchError::Library { workload: WorkloadId::TrainStep.name(), source }
}

/// The parameters of `states` as float32 vectors.
fn values(states: &[State; 3]) -> Vec<Vec<f32>> {
    states.iter().map(|s| s.get().flat_slice::<f32>().map(<[f32]>::to_vec).unwrap_or_default()).collect()
}

/// Compares a step's loss and parameters with another's.
fn same_step(against: Against, got: (f32, &[Vec<f32>]), want: (f32, &[Vec<f32>])) -> std::result::Result<(), Mismatch> {
    check::values(against, &[got.0], &[want.0])?;
    for (g, w) in got.1.iter().zip(want.1) {
        check::values(against, g, w)?;
    }
    Ok(())
}

/// Runs W8: times the compiled step and the hand-written one, then checks one step of each (and
/// of the step compiled in `Mode::FastCompile`, with the same updates) from the initial parameters.
///
/// The `FastCompile` step runs the unoptimized forward and backward graph, and its updates take
/// the same forms as the optimized step's (the table's rows updated in place from the bags'
/// gradient, which no rewrite chooses): computing the new table as an output instead would
/// materialize `[features, 32]` gradients and int64 positions (over 8 GB at `--rows 2^24`). The
/// hand-written step checks the in-place update independently.
pub fn run(settings: &Settings) -> std::result::Result<Outcome, BenchError> {
    let id = WorkloadId::TrainStep;
    let q = Queries::new(settings.queries).map_err(library)?;
    let labels_tensor = labels(&q).map_err(library)?;
    let labels = labels_tensor.flat_slice::<i64>().unwrap_or(&[]).to_vec();
    let inputs = [q.queries.clone(), labels_tensor];
    let threads = settings.threads.max(1);
    let (runs, parallel) = (settings.runs, |threads| HandStep::new(&q, threads));
    let pool_error = |threads| move |source| BenchError::ThreadPool { threads, source };

    let trained = states().map_err(library)?;
    let f = compile(&trained, CompileOptions::from(Mode::FastRun).threads(threads)).map_err(library)?;
    if std::env::var_os("RAGTIME_BENCH_GRAPHS").is_some_and(|v| v == "1") {
        eprintln!("{}: optimized graph\n{}", id.name(), f.debugprint());
    }
    // The compiled step, the hand-written one on all threads and (with several) on one, in turn each
    // round; each hand-written side steps its own copy of the parameters.
    let mut ragtime_side = |c: &mut Clock| c.time(|| f.call(&inputs)).map(drop).map_err(library);
    let mut hand = parallel(threads).map_err(pool_error(threads))?;
    let (mut e, mut w, mut b) = initial_parameters();
    let mut hand_side = whole(|| {
        hand.run(&q, &labels, &mut e, &mut w, &mut b);
    });
    let mut hand_one = if threads > 1 { Some(parallel(1).map_err(pool_error(1))?) } else { None };
    let (mut e1, mut w1, mut b1) = if threads > 1 { initial_parameters() } else { Default::default() };
    let mut hand_one_side = whole(|| {
        if let Some(hand) = &mut hand_one {
            hand.run(&q, &labels, &mut e1, &mut w1, &mut b1);
        }
    });
    let mut sides: Vec<Side<'_, BenchError>> = vec![&mut ragtime_side, &mut hand_side];
    let one_thread: Option<Side<'_, BenchError>> = if threads > 1 { Some(&mut hand_one_side) } else { None };
    let (best, single_thread_baseline_s) = best_of_rounds_then_one_thread(runs, &mut sides, one_thread)?;
    drop(sides);
    let (ragtime_s, baseline_s) = (best[0], best[1]);

    // The check: one step from the initial parameters on each side.
    let fresh = states().map_err(library)?;
    let f_check = compile(&fresh, CompileOptions::from(Mode::FastRun).threads(threads)).map_err(library)?;
    let loss = super::memory::measured_call(|| f_check.call(&inputs)).map_err(library)?[0]
        .to_vec::<f32>()
        .map_err(library)?[0];
    let got = values(&fresh);
    let (mut e, mut w, mut b) = initial_parameters();
    let mut hand = parallel(threads).map_err(pool_error(threads))?;
    let hand_loss = hand.run(&q, &labels, &mut e, &mut w, &mut b);
    let reference_states = states().map_err(library)?;
    let reference =
        compile(&reference_states, CompileOptions::from(Mode::FastCompile).threads(threads)).map_err(library)?;
    let reference_loss = reference.call(&inputs).map_err(library)?[0].to_vec::<f32>().map_err(library)?[0];
    let want = values(&reference_states);
    let check = (|| {
        same_step(Against::Baseline, (loss, &got), (hand_loss, &[e, w, b]))?;
        same_step(Against::Interpreter, (loss, &got), (reference_loss, &want))?;
        Ok(vec![Against::Baseline, Against::Interpreter])
    })();
    Ok(Outcome {
        approx_baseline_s: None,
        bandwidth_probe_s: None,
        recycled_outputs: false,
        id,
        ragtime_s,
        baseline_s: Some(baseline_s),
        threads,
        baseline_threads: Some(threads),
        single_thread_baseline_s,
        check,
        size: vec![
            ("nodes_after", f.rewrite_report().nodes_after),
            ("queries", q.count()),
            ("words", q.words()),
            ("jit_kernels", f.jit_kernels()),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::data::Queries;

    /// The optimized step: the embedding bag's forward is one `GatherReduce` reading the words'
    /// and the bigrams' ids as two parts (no concatenated ids); its backward and the table's
    /// update are the in-place bag update, fed by the logits' gradient and `W` (the bags'
    /// gradient `dlogits @ Wᵀ` is computed bag by bag inside it): no gather of the features,
    /// scatter-add, flat positions, concat, transpose or second matmul is left in the graph.
    #[test]
    fn the_step_is_fused_and_updates_the_table_in_place() {
        let f = compile(&states().unwrap(), CompileOptions::from(Mode::FastRun)).unwrap();
        assert_eq!(
            f.describe_updates(),
            [
                "E <- embedding-bag (mean) scatter-subtract in place, ids in 2 parts, gradient a @ wᵀ per bag",
                "W <- replace",
                "b <- replace"
            ]
        );
        let printed = f.debugprint();
        // The outer graph only: the inner graphs of fused ops, printed after it, show what they replaced.
        let outer = printed.split("\nInner graphs:").next().unwrap_or_default();
        let count = |name: &str| outer.lines().filter(|l| l.contains(name) && !l.contains("···")).count();
        assert_eq!(count("GatherReduce{mean, tables=2}"), 1, "{printed}");
        assert_eq!(count("Gather"), 1, "{printed}");
        assert_eq!(count("MatMul"), 1, "{printed}");
        for gone in ["ScatterAdd", "FlatPositions", "Concat", "Transpose"] {
            assert_eq!(count(gone), 0, "{gone} in {printed}");
        }
    }

    /// One step on a few queries: the compiled step, the hand-written one and the interpreter's
    /// new values agree.
    #[test]
    fn a_small_step_is_checked() {
        let settings = Settings {
            only: vec![WorkloadId::TrainStep],
            rows: 64,
            queries: 300,
            users: 1,
            runs: 1,
            threads: 2,
            memory_retained: false,
        };
        let outcome = run(&settings).unwrap();
        assert_eq!(
            outcome.check.as_ref().map_err(|m| m.to_string()),
            Ok(&vec![Against::Baseline, Against::Interpreter])
        );
        assert!(labels(&Queries::new(10).unwrap())
            .unwrap()
            .flat_slice::<i64>()
            .unwrap()
            .iter()
            .all(|&l| (0..4).contains(&l)));
    }
}
