//! The same-run baselines: plain Rust loops over the same buffers ragtime reads, writing into buffers the
//! caller allocates once and reuses, on the same footing as ragtime's kernels (`../shared/BENCHMARKS.md`):
//! each loop is compiled for the instruction set the kernels use (AVX2 + FMA, chosen at run time by
//! `multiversion`, with a plain x86-64 fallback), and runs on a rayon pool of `--threads` threads with the
//! rows cut into four pieces per thread, balanced by value count and taken by the threads as they come
//! free, as the executor does. W1 and W4 also have a loop with a vectorizable `tanh` / `exp` of ragtime's
//! accuracy (`approx.rs`) beside the one calling libm.
// `multiversion` calls the clone compiled for the detected instruction set through `unsafe`, after
// checking at run time that the CPU has it; this module writes no `unsafe` itself.
#![allow(unsafe_code)]

use std::ops::Range;

use multiversion::multiversion;

use ragtime::StringTensor;
use rayon::prelude::*;
use std::sync::Arc;

use rayon::ThreadPool;

use super::approx;
use super::data::{BUCKETS, DIM, FEATURES, INNER};

/// Pieces of rows per thread, as the JIT executor cuts a large call (`ragtime_runtime::parallel::PIECES_PER_THREAD`).
pub const PIECES_PER_THREAD: usize = 4;

/// The instruction set the baseline loops run with on this CPU, in the order `multiversion` tries them.
pub fn instruction_set() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        return "x86_64+avx2+fma";
    }
    "baseline"
}

/// Runs row-chunked loops on `threads` threads (with one thread, on the caller's).
///
/// The threads are ragtime's own pool of that size (`ragtime::ir::thread_pool`), the one compiled
/// functions run on: the interleaved rounds alternate ragtime's calls and the loops, and with a
/// pool of their own the loops' threads would still be spinning for work while ragtime's start
/// (and the other way round), two pools competing for the same cores.
#[derive(Debug)]
pub struct Parallel {
    threads: usize,
    pool: Option<Arc<ThreadPool>>,
}

impl Parallel {
    /// A runner for `threads` threads (at least one).
    pub fn new(threads: usize) -> Result<Parallel, ragtime::Error> {
        let threads = threads.max(1);
        let pool = if threads > 1 { Some(ragtime::ir::thread_pool(threads)?) } else { None };
        Ok(Parallel { threads, pool })
    }

    /// The number of threads the loops run on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Rows `0..nrows` (`splits` has `nrows + 1` entries) cut into [`PIECES_PER_THREAD`] contiguous
    /// ranges per thread (one with one thread), each holding about the same number of values.
    pub fn row_chunks(&self, splits: &[i64]) -> Vec<Range<usize>> {
        let nrows = splits.len().saturating_sub(1);
        let total = splits.last().copied().unwrap_or(0).max(0) as u128;
        let pieces = if self.threads > 1 { self.threads * PIECES_PER_THREAD } else { 1 };
        let mut bounds = vec![0usize];
        for t in 1..pieces {
            let target = (total * t as u128 / pieces as u128) as i64;
            let row = splits.partition_point(|&s| s < target).min(nrows);
            bounds.push(row.max(*bounds.last().unwrap_or(&0)));
        }
        bounds.push(nrows);
        bounds.windows(2).map(|w| w[0]..w[1]).collect()
    }

    /// Runs `kernel(rows, out_piece)` for each chunk of rows, in parallel: `out_start(row)` is where the
    /// output of `row` begins in `out` (a value index, a row index, ...), so each chunk writes its own
    /// disjoint piece of `out`.
    pub fn run<K>(&self, chunks: &[Range<usize>], out: &mut [f32], out_start: impl Fn(usize) -> usize, kernel: K)
    where
        K: Fn(Range<usize>, &mut [f32]) + Sync,
    {
        let Some(pool) = &self.pool else {
            for rows in chunks {
                let piece = out.get_mut(out_start(rows.start)..out_start(rows.end)).unwrap_or_default();
                kernel(rows.clone(), piece);
            }
            return;
        };
        let mut pieces = Vec::with_capacity(chunks.len());
        let mut rest = out;
        for rows in chunks {
            let len = (out_start(rows.end) - out_start(rows.start)).min(rest.len());
            let (piece, tail) = rest.split_at_mut(len);
            pieces.push(piece);
            rest = tail;
        }
        pool.install(|| {
            pieces.into_par_iter().zip(chunks.par_iter()).for_each(|(piece, rows)| kernel(rows.clone(), piece))
        });
    }
}

/// W1 over aligned slices: `out = tanh(x * 2 + 1) * z - x`, with the scalar `f32::tanh` (libm's `tanhf`).
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn fused_elemwise(x: &[f32], z: &[f32], out: &mut [f32]) {
    for ((o, &x), &z) in out.iter_mut().zip(x).zip(z) {
        *o = (x * 2.0 + 1.0).tanh() * z - x;
    }
}

/// W2 over aligned slices: `out = x * 2 + z`.
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn axpy(x: &[f32], z: &[f32], out: &mut [f32]) {
    for ((o, &x), &z) in out.iter_mut().zip(x).zip(z) {
        *o = x * 2.0 + z;
    }
}

/// W2's baseline loop: [`axpy`] over the rows `chunks` cut, on `par`'s threads; row `r`'s values
/// start at `value_start(r)` in `x`, `z` and `out`. Besides W2's baseline it is the bandwidth probe
/// timed beside each of W1-W4 (`docs/benchmarks.md`, "How the timing works").
pub fn axpy_rows(
    par: &Parallel,
    chunks: &[Range<usize>],
    value_start: impl Fn(usize) -> usize + Sync,
    x: &[f32],
    z: &[f32],
    out: &mut [f32],
) {
    par.run(chunks, out, &value_start, |rows, o| {
        let v = value_start(rows.start)..value_start(rows.end);
        axpy(&x[v.clone()], &z[v], o)
    })
}

/// W3 for the rows whose splits are `splits` (`rows + 1` entries, indexing `x` and `z`):
/// `out[r] = sum(x * 2 + z over row r) / len(row r)` (NaN for an empty row, as `0 / 0`).
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn row_mean(splits: &[i64], x: &[f32], z: &[f32], out: &mut [f32]) {
    for (o, w) in out.iter_mut().zip(splits.windows(2)) {
        let (s, e) = (w[0] as usize, w[1] as usize);
        let mut sum = 0f32;
        for (&x, &z) in x[s..e].iter().zip(&z[s..e]) {
            sum += x * 2.0 + z;
        }
        *o = sum / (e - s) as f32;
    }
}

/// Calls `f(row, o)` for each row of `x` that `splits` delimits, `o` the row's part of `out`
/// (which starts at the first row's first value): the row walk every row loop here shares.
#[inline(always)]
fn each_row(splits: &[i64], x: &[f32], out: &mut [f32], mut f: impl FnMut(&[f32], &mut [f32])) {
    let base = splits.first().copied().unwrap_or(0) as usize;
    for w in splits.windows(2) {
        let (s, e) = (w[0] as usize, w[1] as usize);
        f(&x[s..e], &mut out[s - base..e - base]);
    }
}

/// W4 for the rows whose splits are `splits`: each row of `x` -> `exp(x - max) / sum(exp(x - max))`,
/// three passes per row with the scalar `f32::exp`; `out` starts at the first row's first value.
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn row_softmax(splits: &[i64], x: &[f32], out: &mut [f32]) {
    each_row(splits, x, out, |row, o| {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0f32;
        for (o, &x) in o.iter_mut().zip(row) {
            *o = (x - max).exp();
            sum += *o;
        }
        for o in o.iter_mut() {
            *o /= sum;
        }
    });
}

/// The two baselines of a row loop generic over its `exp` (`$with(splits, x, out, exp)`): `$libm`
/// with libm's `f32::exp`, `$approx` with the vectorizable [`approx::exp`], both multiversioned.
macro_rules! exp_pair {
    ($libm:ident, $approx:ident, $with:ident) => {
        #[doc = concat!("[`", stringify!($with), "`] with libm's `f32::exp`.")]
        #[multiversion(targets("x86_64+avx2+fma"))]
        pub fn $libm(splits: &[i64], x: &[f32], out: &mut [f32]) {
            $with(splits, x, out, f32::exp)
        }

        #[doc = concat!("[`", stringify!($with), "`] with the vectorizable [`approx::exp`].")]
        #[multiversion(targets("x86_64+avx2+fma"))]
        pub fn $approx(splits: &[i64], x: &[f32], out: &mut [f32]) {
            $with(splits, x, out, approx::exp)
        }
    };
}

/// W4's family, `log_softmax` of each row (`tf.nn.log_softmax`), with `exp` computed by `exp`:
/// per row the maximum, `sum(exp(x - max))` (the `exp` pass alone, so the compiler vectorizes an
/// inlined approximation), then `x - max - ln(sum)` with libm's `ln` once per row.
#[inline(always)]
fn row_log_softmax_with(splits: &[i64], x: &[f32], out: &mut [f32], exp: impl Fn(f32) -> f32) {
    each_row(splits, x, out, |row, o| {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for (o, &x) in o.iter_mut().zip(row) {
            *o = exp(x - max);
        }
        let log_sum = o.iter().sum::<f32>().ln();
        for (o, &x) in o.iter_mut().zip(row) {
            *o = (x - max) - log_sum;
        }
    });
}

exp_pair!(row_log_softmax, row_log_softmax_approx, row_log_softmax_with);

/// W4's family, a layer norm of each row: `c = x - mean`, `c / sqrt(mean(c * c) + eps)`, the
/// row's three passes in order (the square root is one instruction: no libm call to replace).
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn row_layer_norm(splits: &[i64], x: &[f32], out: &mut [f32]) {
    each_row(splits, x, out, |row, o| {
        let n = row.len() as f32;
        let mean = row.iter().sum::<f32>() / n;
        let var = row.iter().map(|&x| (x - mean) * (x - mean)).sum::<f32>() / n;
        let scale = 1.0 / (var + super::workloads::LAYER_NORM_EPSILON).sqrt();
        for (o, &x) in o.iter_mut().zip(row) {
            *o = (x - mean) * scale;
        }
    });
}

/// A layer norm of each item of 8 features (`W4_feature_layer_norm`): `c = x - mean`, `c /
/// sqrt(mean(c * c) + eps)` over the item's 8 values; `x` and `out` hold whole items.
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn feature_layer_norm8(x: &[f32], out: &mut [f32]) {
    for (o, item) in out.chunks_exact_mut(INNER).zip(x.chunks_exact(INNER)) {
        let mean = item.iter().sum::<f32>() / INNER as f32;
        let var = item.iter().map(|&x| (x - mean) * (x - mean)).sum::<f32>() / INNER as f32;
        let scale = 1.0 / (var + super::workloads::LAYER_NORM_EPSILON).sqrt();
        for (o, &x) in o.iter_mut().zip(item) {
            *o = (x - mean) * scale;
        }
    }
}

/// W1 with the vectorizable `tanh` of `approx.rs` (ragtime's accuracy) instead of libm's.
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn fused_elemwise_approx(x: &[f32], z: &[f32], out: &mut [f32]) {
    for ((o, &x), &z) in out.iter_mut().zip(x).zip(z) {
        *o = approx::tanh(x * 2.0 + 1.0) * z - x;
    }
}

/// W4 with the vectorizable `exp` of `approx.rs` instead of libm's: per row, the maximum, then the
/// `exp` pass alone (so the compiler vectorizes it), then the sum and the division. W4's rows are
/// short (10 values on average), so the folds stay in order, as in the libm loop.
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn row_softmax_approx(splits: &[i64], x: &[f32], out: &mut [f32]) {
    each_row(splits, x, out, |row, o| {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for (o, &x) in o.iter_mut().zip(row) {
            *o = approx::exp(x - max);
        }
        let sum: f32 = o.iter().sum();
        for o in o.iter_mut() {
            *o /= sum;
        }
    });
}

/// W3 over `[rows, *, 8]` values, for the rows whose splits (into the items of 8 values) are `splits`:
/// `out[r, j] = sum(x * 2 + z over row r, column j) / len(row r)` (NaN for an empty row); `out` holds
/// 8 values per row. The 8 columns are one AVX2 vector.
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn row_mean_inner8(splits: &[i64], x: &[f32], z: &[f32], out: &mut [f32]) {
    for (o, w) in out.chunks_exact_mut(INNER).zip(splits.windows(2)) {
        let (s, e) = (w[0] as usize * INNER, w[1] as usize * INNER);
        let mut sum = [0f32; INNER];
        for (x, z) in x[s..e].chunks_exact(INNER).zip(z[s..e].chunks_exact(INNER)) {
            for j in 0..INNER {
                sum[j] += x[j] * 2.0 + z[j];
            }
        }
        let n = (w[1] - w[0]) as f32;
        for (o, s) in o.iter_mut().zip(sum) {
            *o = s / n;
        }
    }
}

/// W4 over `[rows, *, 8]` values: each row and column of `x` -> `exp(x - max) / sum(exp(x - max))`,
/// three passes per row over vectors of 8 with `exp` computed by `exp` (libm's `f32::exp` or
/// [`approx::exp`]); `out` starts at the first row's first value.
#[inline(always)]
fn row_softmax_inner8_with(splits: &[i64], x: &[f32], out: &mut [f32], exp: impl Fn(f32) -> f32) {
    let base = splits.first().copied().unwrap_or(0) as usize * INNER;
    for w in splits.windows(2) {
        let (s, e) = (w[0] as usize * INNER, w[1] as usize * INNER);
        let row = &x[s..e];
        let o = &mut out[s - base..e - base];
        let mut max = [f32::NEG_INFINITY; INNER];
        for item in row.chunks_exact(INNER) {
            for j in 0..INNER {
                max[j] = max[j].max(item[j]);
            }
        }
        let mut sum = [0f32; INNER];
        for (o, item) in o.chunks_exact_mut(INNER).zip(row.chunks_exact(INNER)) {
            for j in 0..INNER {
                o[j] = exp(item[j] - max[j]);
                sum[j] += o[j];
            }
        }
        for o in o.chunks_exact_mut(INNER) {
            for j in 0..INNER {
                o[j] /= sum[j];
            }
        }
    }
}

exp_pair!(row_softmax_inner8, row_softmax_inner8_approx, row_softmax_inner8_with);

/// W9 for the users whose splits (into the sessions) are `user_splits` (`users + 1` entries):
/// for each session, the softmax of `2 d` over its events weighting its feature vectors (`e_k =
/// exp(2 d_k - max)`, `p = sum(e_k f_k) / sum(e_k)`, zeros for an empty session), then the maximum of
/// `p` over the user's sessions, feature by feature (the lowest float32 for a user without sessions);
/// `out` holds 8 values per user.
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn nested_attention(user_splits: &[i64], session_splits: &[i64], d: &[f32], f: &[f32], out: &mut [f32]) {
    for (o, u) in out.chunks_exact_mut(FEATURES).zip(user_splits.windows(2)) {
        let mut best = [f32::MIN; FEATURES];
        for s in u[0] as usize..u[1] as usize {
            let (e0, e1) = (session_splits[s] as usize, session_splits[s + 1] as usize);
            let mut pooled = [0f32; FEATURES];
            if e1 > e0 {
                let max = d[e0..e1].iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x * 2.0));
                let mut sum = 0f32;
                for k in e0..e1 {
                    let e = (d[k] * 2.0 - max).exp();
                    sum += e;
                    for (p, &x) in pooled.iter_mut().zip(&f[k * FEATURES..(k + 1) * FEATURES]) {
                        *p += e * x;
                    }
                }
                for p in &mut pooled {
                    *p /= sum;
                }
            }
            for (b, p) in best.iter_mut().zip(pooled) {
                *b = b.max(p);
            }
        }
        o.copy_from_slice(&best);
    }
}

/// The bucket of one string, as `strings.to_hash_bucket_fast` computes it: FarmHash Fingerprint64
/// modulo the bucket count.
pub fn bucket(s: &[u8]) -> usize {
    (farmhash::fingerprint64(s) % BUCKETS as u64) as usize
}

/// W7 for the queries whose splits (into `words`) are `splits`: for each query of words `w1 .. wn`,
/// the mean of the table rows of the buckets of its words, then of its bigrams
/// `#+w1, w1+w2, .., wn+#`; `out` holds `DIM` values per query.
#[multiversion(targets("x86_64+avx2+fma"))]
pub fn bigram(splits: &[i64], words: &StringTensor, table: &[f32], out: &mut [f32]) {
    let mut joined: Vec<u8> = Vec::with_capacity(64);
    let add = |acc: &mut [f32; DIM], s: &[u8]| {
        let b = bucket(s);
        for (a, t) in acc.iter_mut().zip(&table[b * DIM..(b + 1) * DIM]) {
            *a += t;
        }
    };
    for (o, w) in out.chunks_exact_mut(DIM).zip(splits.windows(2)) {
        let (s, e) = (w[0] as usize, w[1] as usize);
        let mut acc = [0f32; DIM];
        for i in s..e {
            add(&mut acc, words.get(i));
        }
        // The query padded with "#" on both sides; each bigram joins neighbours with "+".
        let padded = |i: usize| if i == 0 || i == e - s + 1 { &b"#"[..] } else { words.get(s + i - 1) };
        for i in 0..=e - s {
            joined.clear();
            joined.extend_from_slice(padded(i));
            joined.push(b'+');
            joined.extend_from_slice(padded(i + 1));
            add(&mut acc, &joined);
        }
        let count = (2 * (e - s) + 1) as f32;
        for (o, a) in o.iter_mut().zip(acc) {
            *o = a / count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_row_once_and_balance_values() {
        let splits: Vec<i64> = std::iter::once(0).chain((1..=1000).map(|i| i * 10)).collect();
        for threads in [1, 2, 3, 7] {
            let p = Parallel::new(threads).unwrap();
            let chunks = p.row_chunks(&splits);
            let pieces = if threads > 1 { threads * PIECES_PER_THREAD } else { 1 };
            assert_eq!(chunks.len(), pieces);
            assert_eq!(chunks.first().unwrap().start, 0);
            assert_eq!(chunks.last().unwrap().end, 1000);
            assert!(chunks.windows(2).all(|w| w[0].end == w[1].start));
            let sizes: Vec<usize> = chunks.iter().map(|c| c.len()).collect();
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{sizes:?}");
        }
        // All rows empty: still a cover.
        let p = Parallel::new(4).unwrap();
        let chunks = p.row_chunks(&[0, 0, 0]);
        assert_eq!(chunks.iter().map(|c| c.len()).sum::<usize>(), 2);
    }

    #[test]
    fn parallel_and_serial_loops_agree() {
        let splits: Vec<i64> = vec![0, 3, 3, 8, 9, 20];
        let x: Vec<f32> = (0..20).map(|k| k as f32 / 7.0).collect();
        let z: Vec<f32> = (0..20).map(|k| 1.0 - k as f32 / 5.0).collect();
        let mut serial = vec![0f32; 5];
        row_mean(&splits, &x, &z, &mut serial);
        assert_eq!(serial[0], (0.0 + 2.0 / 7.0 + 4.0 / 7.0 + 3.0 - 3.0 / 5.0) / 3.0);
        assert!(serial[1].is_nan());
        let p = Parallel::new(3).unwrap();
        let chunks = p.row_chunks(&splits);
        let mut parallel = vec![0f32; 5];
        p.run(&chunks, &mut parallel, |r| r, |rows, o| row_mean(&splits[rows.start..=rows.end], &x, &z, o));
        assert_eq!(serial[2..], parallel[2..]);
        let mut soft = vec![0f32; 20];
        p.run(&chunks, &mut soft, |r| splits[r] as usize, |rows, o| row_softmax(&splits[rows.start..=rows.end], &x, o));
        let row: f32 = soft[3..8].iter().sum();
        assert!((row - 1.0).abs() < 1e-6);
    }

    #[test]
    fn inner8_loops_work_column_by_column() {
        // Rows [items 0, 1], [], [item 2]: each column of the inner-dim loops is W3's / W4's loop on
        // that column alone.
        let splits = [0i64, 2, 2, 3];
        let x: Vec<f32> = (0..3 * INNER).map(|k| k as f32 / 9.0 - 1.0).collect();
        let z: Vec<f32> = (0..3 * INNER).map(|k| 0.5 - k as f32 / 7.0).collect();
        let mut mean = vec![0f32; 3 * INNER];
        row_mean_inner8(&splits, &x, &z, &mut mean);
        let (mut soft, mut soft_approx) = (vec![0f32; 3 * INNER], vec![0f32; 3 * INNER]);
        row_softmax_inner8(&splits, &x, &mut soft);
        row_softmax_inner8_approx(&splits, &x, &mut soft_approx);
        for j in 0..INNER {
            let column = |v: &[f32]| -> Vec<f32> { (0..3).map(|i| v[i * INNER + j]).collect() };
            let (xc, zc) = (column(&x), column(&z));
            let mut want = vec![0f32; 3];
            row_mean(&splits, &xc, &zc, &mut want);
            assert_eq!(mean[j], want[0]);
            assert!(mean[INNER + j].is_nan());
            assert_eq!(mean[2 * INNER + j], want[2]);
            let mut want = vec![0f32; 3];
            row_softmax(&splits, &xc, &mut want);
            assert_eq!(column(&soft), want, "column {j}");
            assert!(column(&soft_approx).iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6));
        }
    }

    #[test]
    fn nested_attention_pools_each_session_and_takes_the_users_maximum() {
        // User 0: sessions [events 0, 1] and [] ; user 1: no sessions; user 2: one session [event 2].
        let (users, sessions) = ([0i64, 2, 2, 3], [0i64, 2, 2, 3]);
        let d = [0.0f32, 0.5, 0.25];
        let f: Vec<f32> = (0..3 * FEATURES).map(|i| i as f32 / 10.0 - 1.0).collect();
        let mut out = vec![0f32; 3 * FEATURES];
        nested_attention(&users, &sessions, &d, &f, &mut out);
        let (w0, w1) = (1.0f64, 1.0f64.exp());
        for j in 0..FEATURES {
            let (f0, f1) = (f[j] as f64, f[FEATURES + j] as f64);
            let pooled = (w0 * f0 + w1 * f1) / (w0 + w1);
            // The empty session pools to zero, so the user's maximum is at least 0.
            assert!((out[j] as f64 - pooled.max(0.0)).abs() < 1e-6, "feature {j}");
            assert_eq!(out[FEATURES + j], f32::MIN);
            assert_eq!(out[2 * FEATURES + j], f[2 * FEATURES + j]);
        }
    }

    #[test]
    fn bigram_pads_and_joins() {
        let words = StringTensor::from_strings(&["a", "b"], vec![2]).unwrap();
        let table: Vec<f32> = (0..BUCKETS * DIM).map(|k| k as f32).collect();
        let mut out = vec![0f32; DIM];
        bigram(&[0, 2], &words, &table, &mut out);
        let buckets = ["a", "b", "#+a", "a+b", "b+#"].map(|s| bucket(s.as_bytes()));
        let want = buckets.iter().map(|&b| (b * DIM) as f32).sum::<f32>() / 5.0;
        assert_eq!(out[0], want);
    }
}
