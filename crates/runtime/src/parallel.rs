//! Intra-op parallelism for reference kernels: the rayon pools (one per thread count, shared
//! with the JIT's kernels), the one way a kernel splits its output across the threads of its
//! call ([`ExecContext::threads`]), and the one split of rows into pieces of equal work
//! ([`balanced_ranges`]) that the JIT's row kernels and the fused poolings share.
//!
//! Parallel regions only compute into memory the calling op allocated (through its context, so
//! charged to the call's budget). Worker threads get no context of their own, so nested work
//! stays sequential.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use ragtime_core::{Error, ExecContext, Result};
use rayon::prelude::*;

/// The shared pool of `threads` threads, started on first use.
pub fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().map_err(|_| Error::graph("thread pools poisoned"))?;
    if let Some(p) = pools.get(&threads) {
        return Ok(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("ragtime-{i}"))
            .build()
            .map_err(|e| Error::graph(format!("cannot start {threads} threads: {e}")))?,
    );
    pools.insert(threads, p.clone());
    Ok(p)
}

/// Fewest items a thread gets: below this, splitting costs more than it saves.
pub const MIN_ITEMS_PER_THREAD: usize = 1 << 14;

/// `n` copies of `value` in a fallibly allocated buffer ([`ExecContext::try_filled`]), written by
/// `ctx`'s threads when each gets at least [`MIN_ITEMS_PER_THREAD`] items: a kernel that then
/// fills the buffer on those threads does not first wait for one thread to write all of it (W7's
/// 1.6 million outputs took a serial pass before the parallel one).
pub fn filled<T: Clone + Send + Sync + 'static>(ctx: &ExecContext, op: &str, n: usize, value: T) -> Result<Vec<T>> {
    if ctx.threads().min(n / MIN_ITEMS_PER_THREAD) <= 1 {
        return ctx.try_filled(op, n, value);
    }
    let mut out = ctx.try_vec(op, n)?;
    // An indexed iterator of known length: rayon writes each thread's part in place.
    pool(ctx.threads())?.install(|| out.par_extend(rayon::iter::repeat_n(value, n)));
    Ok(out)
}

/// Calls `fill(first_item, chunk)` on consecutive chunks of `out`, each a whole number of items
/// of `item_len` elements: on `ctx`'s threads when each gets at least
/// [`MIN_ITEMS_PER_THREAD`] items, else once over all of `out` on this thread. `fill` must
/// only compute (see the module docs).
pub fn fill_chunks<T: Send>(
    ctx: &ExecContext,
    out: &mut [T],
    item_len: usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()> {
    fill_in_pieces(ctx, out, item_len, 1, fill)
}

/// [`fill_chunks`] for items of uneven work whose cost is not known up front (a query's tokens,
/// say; [`fill_balanced`] when it is): [`PIECES_PER_THREAD`] chunks per thread, taken by the threads as they come free, so a thread that was slowed
/// (by the rows it got, or by another process) does not hold up the call.
pub fn fill_chunks_balanced<T: Send>(
    ctx: &ExecContext,
    out: &mut [T],
    item_len: usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()> {
    fill_in_pieces(ctx, out, item_len, PIECES_PER_THREAD, fill)
}

/// [`fill_chunks`] with `pieces` chunks per thread.
fn fill_in_pieces<T: Send>(
    ctx: &ExecContext,
    out: &mut [T],
    item_len: usize,
    pieces: usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()> {
    let items = out.len().checked_div(item_len).unwrap_or(0);
    let threads = ctx.threads().min(items / MIN_ITEMS_PER_THREAD);
    if threads <= 1 {
        fill(0, out);
        return Ok(());
    }
    let per_chunk = items.div_ceil(threads * pieces);
    pool(ctx.threads())?.install(|| {
        out.par_chunks_mut(per_chunk * item_len).enumerate().for_each(|(k, chunk)| fill(k * per_chunk, chunk));
    });
    Ok(())
}

/// Below this much work (values plus rows, for row kernels) per piece, work is not split
/// further (below it once, a call runs on the calling thread only): splitting smaller work costs
/// more in synchronization than it saves.
pub const MIN_WORK_PER_PIECE: usize = 1 << 16;

/// Pieces per thread of a large call, taken by the pool's threads as they come free: a thread
/// that is slowed (on a virtual machine, a virtual CPU may be descheduled for a while) then does
/// less of the work instead of holding up the call. W3 with two threads, medians of four runs of
/// best-of-20: 3.33 ms with one piece per thread, 2.63 ms with four; W1 and W4 the same either
/// way.
pub const PIECES_PER_THREAD: usize = 4;

/// How many pieces `total` units of work are cut into for `threads` threads: one with one
/// thread or little work, else up to [`PIECES_PER_THREAD`] per thread of at least
/// [`MIN_WORK_PER_PIECE`] units each.
pub fn pieces(total: usize, threads: usize) -> usize {
    if threads <= 1 {
        return 1;
    }
    (total / MIN_WORK_PER_PIECE).clamp(1, threads * PIECES_PER_THREAD)
}

/// The first item `i` in `begin..=items` whose cumulative work `work(i)` reaches `target`
/// (`items` if none), by bisection: the work grows with the item, and a linear scan cost a
/// sizeable part of a memory-bound call on 2^20 rows.
fn first_reaching(work: &impl Fn(usize) -> usize, begin: usize, items: usize, target: usize) -> usize {
    let (mut lo, mut hi) = (begin, items);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if work(mid) >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Items `0..items` cut into [`pieces`] contiguous, non-empty ranges of about equal work for up
/// to `threads` threads (one range, maybe empty, when there is nothing to split), where `work(i)`
/// is the work of the items before item `i` (non-decreasing, `work(items)` the total): rows
/// balanced by their values plus rows (`work(r) = splits[r] + r`), users by their events, ...
pub fn balanced_ranges(items: usize, threads: usize, work: impl Fn(usize) -> usize) -> Vec<Range<usize>> {
    let total = work(items);
    let parts = pieces(total, threads);
    let mut ranges = Vec::with_capacity(parts);
    let mut begin = 0;
    for p in 1..=parts {
        let target = total * p / parts;
        let end = if p == parts { items } else { first_reaching(&work, begin, items, target) };
        if end > begin {
            ranges.push(begin..end);
            begin = end;
        }
    }
    if ranges.is_empty() {
        ranges.push(0..items);
    }
    ranges
}

/// Calls `fill(first_item, chunk)` on the pieces of [`balanced_ranges`] (items of `item_len`
/// elements, `work` as there), on `ctx`'s threads as they come free (once over all of `out` on
/// this thread when there is one piece). `fill` must only compute (see the module docs).
pub fn fill_balanced<T: Send>(
    ctx: &ExecContext,
    out: &mut [T],
    item_len: usize,
    work: impl Fn(usize) -> usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()> {
    let items = out.len().checked_div(item_len).unwrap_or(0);
    let ranges = balanced_ranges(items, ctx.threads(), work);
    if ranges.len() <= 1 {
        fill(0, out);
        return Ok(());
    }
    let mut pieces = Vec::with_capacity(ranges.len());
    let mut rest = out;
    for range in &ranges {
        let (chunk, tail) = rest.split_at_mut(range.len() * item_len);
        pieces.push((range.start, chunk));
        rest = tail;
    }
    pool(ctx.threads())?.install(|| pieces.into_par_iter().for_each(|(first, chunk)| fill(first, chunk)));
    Ok(())
}

/// Calls `fill(items, chunk)` on consecutive groups of items whose outputs have variable sizes:
/// item `i` owns `out[offsets[i] - offsets[0]..offsets[i + 1] - offsets[0]]` (`offsets` has one
/// more entry than there are items, non-decreasing, and spans `out`). Groups go to the call's
/// threads when each gets at least [`MIN_ITEMS_PER_THREAD`] items, else one call covers all.
/// `fill` must only compute (see the module docs).
pub fn fill_spans<T: Send>(
    ctx: &ExecContext,
    out: &mut [T],
    offsets: &[i64],
    fill: impl Fn(std::ops::Range<usize>, &mut [T]) + Sync,
) -> Result<()> {
    let items = offsets.len().saturating_sub(1);
    let threads = ctx.threads().min(items / MIN_ITEMS_PER_THREAD);
    if threads <= 1 {
        fill(0..items, out);
        return Ok(());
    }
    let per_group = items.div_ceil(threads);
    let mut groups = Vec::with_capacity(threads);
    let mut rest = out;
    for first in (0..items).step_by(per_group) {
        let last = (first + per_group).min(items);
        let len = (offsets[last] - offsets[first]) as usize;
        let (chunk, tail) = rest.split_at_mut(len);
        groups.push((first..last, chunk));
        rest = tail;
    }
    pool(ctx.threads())?.install(|| groups.into_par_iter().for_each(|(range, chunk)| fill(range, chunk)));
    Ok(())
}

/// A new buffer of `offsets[last] - offsets[0]` elements (a fallible allocation charged to `op`),
/// filled by [`fill_spans`]: the one way the string kernels build a variable-size output after
/// computing its offsets.
pub fn spans_filled<T: Send + Clone + Default + 'static>(
    ctx: &ExecContext,
    op: &str,
    offsets: &[i64],
    fill: impl Fn(std::ops::Range<usize>, &mut [T]) + Sync,
) -> Result<Vec<T>> {
    let len = match (offsets.first(), offsets.last()) {
        (Some(&first), Some(&last)) => usize::try_from(last - first).unwrap_or(0),
        _ => 0,
    };
    let mut out: Vec<T> = ctx.try_vec(op, len)?;
    out.resize(len, T::default());
    fill_spans(ctx, &mut out, offsets, fill)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_buffers_hold_n_copies_on_any_thread_count() {
        for threads in [1, 2, 3] {
            let ctx = ExecContext::default().with_threads(threads);
            for n in [0, 5, 3 * MIN_ITEMS_PER_THREAD + 7] {
                let v = filled(&ctx, "test", n, 2.5f32).unwrap();
                assert_eq!(v.len(), n);
                assert!(v.iter().all(|&x| x == 2.5));
            }
        }
    }

    #[test]
    fn chunks_cover_the_output_once_whatever_the_thread_count() {
        for threads in [1, 2, 3, 8] {
            let ctx = ExecContext::default().with_threads(threads);
            let items = 5 * MIN_ITEMS_PER_THREAD + 7;
            let balanced = [false, true];
            for balanced in balanced {
                let mut out = vec![0usize; items * 2];
                let fill = |first: usize, chunk: &mut [usize]| {
                    for (k, pair) in chunk.chunks_exact_mut(2).enumerate() {
                        pair[0] += first + k;
                        pair[1] += 1;
                    }
                };
                if balanced {
                    fill_chunks_balanced(&ctx, &mut out, 2, fill).unwrap();
                } else {
                    fill_chunks(&ctx, &mut out, 2, fill).unwrap();
                }
                let want: Vec<usize> = (0..items).flat_map(|i| [i, 1]).collect();
                assert_eq!(out, want, "{threads} threads (balanced {balanced}): every item filled exactly once");
            }
        }
    }

    #[test]
    fn balanced_ranges_cover_every_item_once_and_balance_work() {
        // Rows of 0-20 values, as in the benchmarks, plus one huge row in the middle.
        let mut splits = vec![0i64];
        for r in 0..300_000i64 {
            let len = if r == 150_000 { 1_000_000 } else { (r * 7919) % 21 };
            splits.push(splits.last().unwrap() + len);
        }
        let nrows = splits.len() - 1;
        let work = |r: usize| splits[r] as usize + r;
        for threads in [1, 2, 3, 8] {
            let ranges = balanced_ranges(nrows, threads, work);
            // Pieces whose share ends inside the huge row merge with the next.
            assert!(ranges.len() <= pieces(work(nrows), threads), "{threads} threads: {ranges:?}");
            assert_eq!(ranges.len() == 1, threads == 1, "{threads} threads: {ranges:?}");
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges.last().unwrap().end, nrows);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()), "{ranges:?}");
            // Apart from the huge row's piece, no piece holds much more than its share.
            let share = work(nrows) / pieces(work(nrows), threads);
            for r in ranges.iter().filter(|r| !r.contains(&150_000)) {
                assert!(work(r.end) - work(r.start) <= share + 21, "{threads} threads: {r:?}");
            }
        }
        let ranges = balanced_ranges(200_000, 2, |r| r * 4);
        assert_eq!(ranges.len(), 2 * PIECES_PER_THREAD, "large calls are cut into pieces: {ranges:?}");
        assert!(ranges.iter().all(|r| r.len() == 25_000), "equal rows, equal pieces: {ranges:?}");
        assert_eq!(balanced_ranges(0, 8, |_| 0), vec![0..0], "zero items: one empty range");
        assert_eq!(balanced_ranges(10, 8, |r| r), vec![0..10], "small inputs stay on one thread");
    }

    #[test]
    fn the_bisection_finds_the_item_a_linear_scan_finds() {
        let splits: Vec<i64> = [0i64, 0, 0, 5, 5, 1_000, 1_001, 1_001, 2_000].to_vec();
        let nrows = splits.len() - 1;
        let work = |r: usize| splits[r] as usize + r;
        for begin in 0..=nrows {
            for target in 0..=work(nrows) + 2 {
                let scan = (begin..=nrows).find(|&r| work(r) >= target).unwrap_or(nrows);
                assert_eq!(first_reaching(&work, begin, nrows, target), scan, "begin {begin}, target {target}");
            }
        }
    }

    #[test]
    fn balanced_fills_write_each_item_once_by_its_index() {
        for threads in [1, 2, 3] {
            let ctx = ExecContext::default().with_threads(threads);
            let items = 5 * MIN_WORK_PER_PIECE + 7;
            let mut out = vec![0usize; items * 2];
            // Work growing with the square of the index: later items are heavier.
            fill_balanced(
                &ctx,
                &mut out,
                2,
                |i| i * i / 1000,
                |first, chunk| {
                    for (k, pair) in chunk.chunks_exact_mut(2).enumerate() {
                        pair[0] += first + k;
                        pair[1] += 1;
                    }
                },
            )
            .unwrap();
            let want: Vec<usize> = (0..items).flat_map(|i| [i, 1]).collect();
            assert_eq!(out, want, "{threads} threads");
        }
    }

    #[test]
    fn spans_of_every_size_are_filled_once_by_their_item() {
        for threads in [1, 2, 3] {
            let ctx = ExecContext::default().with_threads(threads);
            let items = 3 * MIN_ITEMS_PER_THREAD + 5;
            let offsets: Vec<i64> = std::iter::once(0)
                .chain((0..items).scan(0i64, |s, i| {
                    *s += (i % 4) as i64;
                    Some(*s)
                }))
                .collect();
            let mut out = vec![usize::MAX; *offsets.last().unwrap() as usize];
            fill_spans(&ctx, &mut out, &offsets, |range, chunk| {
                let base = offsets[range.start];
                for i in range {
                    for v in &mut chunk[(offsets[i] - base) as usize..(offsets[i + 1] - base) as usize] {
                        *v = i;
                    }
                }
            })
            .unwrap();
            let want: Vec<usize> = (0..items).flat_map(|i| std::iter::repeat_n(i, i % 4)).collect();
            assert_eq!(out, want, "{threads} threads: every byte written by its own item");
        }
    }
}
