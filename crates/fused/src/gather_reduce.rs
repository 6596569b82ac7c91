//! `GatherReduce`: the sum or mean over each ragged row of table rows picked by index (an
//! "embedding bag"), fused so the gathered rows are never materialized.
//!
//! It replaces `reduce_{sum,mean}(concat([gather(p_0, i_0), gather(p_1, i_1), ...], axis=1),
//! axis=1)` (or one gather without the concat) where each `p_k` is a dense float table and each
//! `i_k` ragged indices of rank 2. The unfused graph copies every picked row twice (gather, then
//! concat) before summing; this op adds each picked row straight from the table into the row's
//! accumulator, in the order the concatenation would have laid them out, so the result is
//! bit-identical (same start, same adds in the same order, the same f64 division for means).

use std::any::Any;
use std::borrow::Cow;

use ragtime_core::{DenseTensor, Element, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Cost, FunctionGraph, Op, OpProperties};
use ragtime_runtime::{parallel, InnerGraph};

use ragtime_ops::reduce::add_item;
use ragtime_ops::reduce::ReduceKind;
use ragtime_ops::reduce::RowSum;

/// Asks for the cache lines of the `len` bytes at address `from` without waiting for them (a
/// hint: any address is harmless, nothing is read). This crate forbids `unsafe`, so the JIT hands
/// one to [`GatherReduce::with_prefetch`].
pub type PrefetchBytes = fn(from: usize, len: usize);

/// The fused gather-then-reduce op; inputs are `(table_0, indices_0, table_1, indices_1, ...)`.
#[derive(Debug, Clone)]
pub struct GatherReduce {
    kind: ReduceKind,
    keepdims: bool,
    tables: usize,
    inner: InnerGraph,
    /// Asks for the picked table rows a few output rows ahead, when the JIT gave one.
    prefetch: Option<PrefetchBytes>,
}

impl PartialEq for GatherReduce {
    /// The same sums: whether the rows are prefetched does not change them.
    fn eq(&self, other: &Self) -> bool {
        (self.kind, self.keepdims, self.tables, &self.inner) == (other.kind, other.keepdims, other.tables, &other.inner)
    }
}

/// How many output rows ahead of the one being summed the picked table rows are prefetched: a
/// bag's rows are scattered over a table larger than the caches (W8: 2^18 rows of 128 bytes), so
/// without it the loop waits on a miss or two at a time. W8's bags hold about 13 rows.
pub const PREFETCH_ROWS_AHEAD: usize = 4;

/// Asks (through `prefetch`) for the table rows output row `r` picks, when it exists.
fn prefetch_row<T>(sources: &[Source<'_, T>], r: usize, width: usize, prefetch: Option<PrefetchBytes>) {
    let Some(prefetch) = prefetch else { return };
    let row_bytes = width * std::mem::size_of::<T>();
    for (data, splits, ids) in sources {
        let (Some(&start), Some(&end)) = (splits.get(r), splits.get(r + 1)) else { continue };
        for &id in ids.get(start as usize..end as usize).unwrap_or(&[]) {
            // The ids were checked in range.
            prefetch(data.as_ptr().addr() + id as usize * row_bytes, row_bytes);
        }
    }
}

/// The rows of `chunk` (rows `first_row..` of `N` values each): each the sum (or mean) of the
/// picked table rows of every source in turn, accumulated in a `[T; N]`; the rows
/// [`PREFETCH_ROWS_AHEAD`] ahead prefetched first when `prefetch` is given.
fn sum_rows<T: RowSum, const N: usize>(
    sources: &[Source<'_, T>],
    first_row: usize,
    chunk: &mut [T],
    mean: bool,
    prefetch: Option<PrefetchBytes>,
) {
    for (r, out) in (first_row..).zip(chunk.chunks_exact_mut(N)) {
        prefetch_row(sources, r + PREFETCH_ROWS_AHEAD, N, prefetch);
        let mut acc = [T::ZERO; N];
        let mut count = 0usize;
        for (data, splits, ids) in sources {
            let row = &ids[splits[r] as usize..splits[r + 1] as usize];
            count += row.len();
            for &id in row {
                let at = id as usize * N;
                for (a, &v) in acc.iter_mut().zip(&data[at..at + N]) {
                    *a += v;
                }
            }
        }
        for (o, a) in out.iter_mut().zip(acc) {
            *o = if mean { T::mean(a, count) } else { a };
        }
    }
}

/// [`sum_rows`] for rows of any width `inner` (at least 1), summed in place in `chunk`.
fn sum_rows_of_width<T: RowSum>(
    sources: &[Source<'_, T>],
    inner: usize,
    first_row: usize,
    chunk: &mut [T],
    mean: bool,
    prefetch: Option<PrefetchBytes>,
) {
    for (r, acc) in (first_row..).zip(chunk.chunks_exact_mut(inner.max(1))) {
        prefetch_row(sources, r + PREFETCH_ROWS_AHEAD, inner, prefetch);
        let acc = &mut acc[..inner];
        let mut count = 0usize;
        for (data, splits, ids) in sources {
            let row = &ids[splits[r] as usize..splits[r + 1] as usize];
            count += row.len();
            for &id in row {
                let at = id as usize * inner;
                add_item(acc, &data[at..at + inner]);
            }
        }
        if mean {
            for a in acc.iter_mut() {
                *a = T::mean(*a, count);
            }
        }
    }
}

/// One table of a call: its values, the row splits of its indices and the indices.
type Source<'a, T> = (&'a [T], &'a [i64], Cow<'a, [i64]>);

impl GatherReduce {
    /// `kind` (sum or mean) over the rows gathered from each `(table, indices)` pair of inputs,
    /// with the ops it replaces as its inner graph (which defines its types, errors and every case
    /// the fast path does not take); `tables` pairs of inputs. Returns `None` for other reductions
    /// or an inner graph without one input per input of the op.
    pub fn new(kind: ReduceKind, keepdims: bool, tables: usize, inner: InnerGraph) -> Option<Self> {
        let fits = inner.graph().inputs().len() == 2 * tables;
        (matches!(kind, ReduceKind::Sum | ReduceKind::Mean) && tables > 0 && fits).then_some(GatherReduce {
            kind,
            keepdims,
            tables,
            inner,
            prefetch: None,
        })
    }

    /// The op prefetching the picked table rows ahead with `prefetch` (the same sums).
    pub fn with_prefetch(&self, prefetch: PrefetchBytes) -> Self {
        GatherReduce { prefetch: Some(prefetch), ..self.clone() }
    }

    /// Whether the op prefetches the table rows ([`Self::with_prefetch`]).
    pub fn has_prefetch(&self) -> bool {
        self.prefetch.is_some()
    }

    /// The reduction (sum or mean).
    pub fn kind(&self) -> ReduceKind {
        self.kind
    }

    /// Whether the reduced axis is kept (as 1).
    pub fn keepdims(&self) -> bool {
        self.keepdims
    }

    /// The number of `(table, indices)` pairs of inputs.
    pub fn tables(&self) -> usize {
        self.tables
    }

    /// The fast path, when every table is dense of element type `T` with one row shape and every
    /// index tensor is ragged `[nrows, *]` with the same number of rows and every index in range;
    /// `None` sends the call to the inner graph (the replaced ops, which report the errors).
    fn fast<T: RowSum + Element + Send + Sync>(
        &self,
        ctx: &ExecContext,
        inputs: &[RaggedTensor],
    ) -> Option<Result<RaggedTensor>> {
        let pairs: Vec<(&RaggedTensor, &RaggedTensor)> = inputs.chunks_exact(2).map(|p| (&p[0], &p[1])).collect();
        let (first_table, first_indices) = *pairs.first()?;
        let row_shape = first_table.flat_values().shape().get(1..)?.to_vec();
        let inner: usize = row_shape.iter().product();
        let nrows = first_indices.nrows();
        let mut sources: Vec<Source<'_, T>> = Vec::with_capacity(pairs.len());
        for (table, indices) in pairs {
            let values = table.flat_values();
            let [partition] = indices.partitions() else { return None };
            let ok = table.is_dense()
                && values.shape().get(1..) == Some(&row_shape[..])
                && indices.flat_values().shape().len() == 1
                && partition.nrows() == nrows;
            if !ok {
                return None;
            }
            let data = values.as_slice::<T>()?;
            let table_rows = values.shape()[0];
            // int64 indices (what hashing gives) are read in place, others widened once.
            let ids: Cow<'_, [i64]> = match indices.flat_values().as_slice::<i64>() {
                Some(ids) => Cow::Borrowed(ids),
                None => Cow::Owned(indices.flat_values().to_i64_vec("gather", "indices").ok()?),
            };
            if ids.iter().any(|&id| !(0..table_rows as i64).contains(&id)) {
                return None;
            }
            sources.push((data, partition.row_splits(), ids));
        }
        let op = if self.kind == ReduceKind::Mean { "reduce_mean" } else { "reduce_sum" };
        // Zeros written by the threads that then fill the rows (W8's forward bag: 12.8 MB that one
        // thread used to write before the others could start): the sums start from them.
        let mut out: Vec<T> = match nrows.checked_mul(inner).map(|n| parallel::filled(ctx, op, n, T::ZERO)) {
            Some(Ok(v)) => v,
            Some(Err(e)) => return Some(Err(e)),
            None => return None,
        };
        let mean = self.kind == ReduceKind::Mean;
        // Rows balanced by the table rows they add (plus one per row for its division and store),
        // in several pieces per thread: bags vary in size, and a slowed thread takes fewer.
        let work = |r: usize| r + sources.iter().map(|(_, splits, _)| (splits[r] - splits[0]) as usize).sum::<usize>();
        let filled = parallel::fill_balanced(ctx, &mut out, inner.max(1), work, |first_row, chunk| match inner {
            // Common embedding widths sum in a fixed-size accumulator the compiler keeps in
            // registers (the same adds in the same order as the general loop).
            4 => sum_rows::<T, 4>(&sources, first_row, chunk, mean, self.prefetch),
            8 => sum_rows::<T, 8>(&sources, first_row, chunk, mean, self.prefetch),
            16 => sum_rows::<T, 16>(&sources, first_row, chunk, mean, self.prefetch),
            32 => sum_rows::<T, 32>(&sources, first_row, chunk, mean, self.prefetch),
            _ => sum_rows_of_width(&sources, inner, first_row, chunk, mean, self.prefetch),
        });
        if let Err(e) = filled {
            return Some(Err(e));
        }
        let mut shape = vec![nrows];
        if self.keepdims {
            shape.push(1);
        }
        shape.extend_from_slice(&row_shape);
        Some(DenseTensor::from_vec(shape, out).map(RaggedTensor::from))
    }
}

impl Op for GatherReduce {
    fn name(&self) -> String {
        let kind = if self.kind == ReduceKind::Mean { "mean" } else { "sum" };
        let keep = if self.keepdims { ", keepdims" } else { "" };
        format!("GatherReduce{{{kind}, tables={}{keep}}}", self.tables)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        self.inner.infer(inputs)
    }

    fn keeps_uniform_rows(&self) -> bool {
        // The original ops' types were recorded through `output_types`; the fast paths keep the
        // partitions of the iteration space, as the original ops do.
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let fast = match inputs.first().map(|t| t.dtype()) {
            _ if inputs.len() != 2 * self.tables => None,
            Some(ragtime_core::DType::F32) => self.fast::<f32>(ctx, inputs),
            Some(ragtime_core::DType::F64) => self.fast::<f64>(ctx, inputs),
            _ => None,
        };
        self.inner.fast_or_run(ctx, inputs, fast)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn inner_graph(&self) -> Option<&FunctionGraph> {
        Some(self.inner.graph())
    }

    fn properties(&self) -> OpProperties {
        // An index out of range fails, as the gathers it replaces.
        OpProperties { can_fail: true, cost: Cost::Cheap, ..OpProperties::default() }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use super::*;

    /// The addresses the test prefetcher was asked for (one test uses it at a time).
    static ASKED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn record(from: usize, len: usize) {
        CALLS.fetch_add(1, Ordering::Relaxed);
        ASKED.lock().unwrap().push((from, len));
    }

    /// Tables, the row splits of their ids, and the ids.
    type Bags = (Vec<Vec<f32>>, Vec<Vec<i64>>, Vec<Vec<i64>>);

    /// Two tables of 50 rows `width` wide and bags of 0 to 6 ids into each.
    fn sources(width: usize) -> Bags {
        let tables =
            (0..2).map(|t| (0..50 * width).map(|k| ((k * 37 + t) % 101) as f32 / 7.0 - 5.0).collect()).collect();
        let mut seed = 99u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let (mut splits, mut ids) = (vec![vec![0i64], vec![0i64]], vec![Vec::new(), Vec::new()]);
        for _ in 0..40 {
            for t in 0..2 {
                for _ in 0..next(7) {
                    ids[t].push(next(50) as i64);
                }
                splits[t].push(ids[t].len() as i64);
            }
        }
        (tables, splits, ids)
    }

    /// The straightforward sums (or means) of the rows `first..first + n`.
    fn plain(
        tables: &[Vec<f32>],
        splits: &[Vec<i64>],
        ids: &[Vec<i64>],
        width: usize,
        rows: std::ops::Range<usize>,
        mean: bool,
    ) -> Vec<f32> {
        let mut out = Vec::new();
        for r in rows {
            let mut acc = vec![0f32; width];
            let mut count = 0;
            for t in 0..2 {
                for &id in &ids[t][splits[t][r] as usize..splits[t][r + 1] as usize] {
                    count += 1;
                    for (a, v) in acc.iter_mut().zip(&tables[t][id as usize * width..(id as usize + 1) * width]) {
                        *a += v;
                    }
                }
            }
            out.extend(acc.iter().map(|&a| if mean { f32::mean(a, count) } else { a }));
        }
        out
    }

    /// With a prefetcher the sums are the same bits as without it and as the straightforward
    /// loop; it is asked for exactly the rows picked `PREFETCH_ROWS_AHEAD` rows ahead (none past
    /// the last row), each inside its table.
    #[test]
    fn prefetching_rows_ahead_changes_no_sum() {
        for (width, mean) in [(4, true), (32, false), (5, true)] {
            let (tables, splits, ids) = sources(width);
            let srcs: Vec<Source<'_, f32>> =
                (0..2).map(|t| (&tables[t][..], &splits[t][..], Cow::Borrowed(&ids[t][..]))).collect();
            let (first, n) = (3, 37);
            let want = plain(&tables, &splits, &ids, width, first..first + n, mean);
            let run = |prefetch: Option<PrefetchBytes>| {
                let mut out = vec![0f32; n * width];
                match width {
                    4 => sum_rows::<f32, 4>(&srcs, first, &mut out, mean, prefetch),
                    32 => sum_rows::<f32, 32>(&srcs, first, &mut out, mean, prefetch),
                    _ => sum_rows_of_width(&srcs, width, first, &mut out, mean, prefetch),
                }
                out
            };
            ASKED.lock().unwrap().clear();
            CALLS.store(0, Ordering::Relaxed);
            let (without, with) = (run(None), run(Some(record)));
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&with), bits(&without), "width {width}");
            assert_eq!(bits(&with), bits(&want), "width {width}");
            let asked = std::mem::take(&mut *ASKED.lock().unwrap());
            let ahead = first + PREFETCH_ROWS_AHEAD..(first + n + PREFETCH_ROWS_AHEAD).min(40);
            let picked: usize = (0..2).map(|t| (splits[t][ahead.end] - splits[t][ahead.start]) as usize).sum();
            assert_eq!(asked.len(), picked, "width {width}");
            assert_eq!(CALLS.load(Ordering::Relaxed), picked);
            for (from, len) in asked {
                assert_eq!(len, width * 4);
                let inside = tables.iter().any(|t| {
                    let base = t.as_ptr().addr();
                    from >= base && from + len <= base + t.len() * 4
                });
                assert!(inside, "width {width}: a row outside the tables");
            }
        }
    }
}
