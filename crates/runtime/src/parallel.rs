//! Intra-op parallelism for reference kernels: the rayon pools (one per thread count, shared
//! with the JIT's kernels), and the one way a kernel splits its output across the threads of its
//! call ([`ExecContext::threads`]).
//!
//! Parallel regions only compute into memory the calling op allocated (through its context, so
//! charged to the call's budget). Worker threads get no context of their own, so nested work
//! stays sequential.

use std::collections::HashMap;
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

/// Pieces per thread of [`fill_chunks_balanced`], as the JIT executor cuts a large call.
pub const PIECES_PER_THREAD: usize = 4;

/// [`fill_chunks`] for items of uneven work (a row's tokens, say): [`PIECES_PER_THREAD`]
/// chunks per thread, taken by the threads as they come free, so a thread that was slowed
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
