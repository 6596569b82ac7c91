//! Wide table-row sums for `HashedGatherReduce` (`ragtime_fused::hashed_bag`): the loop that adds
//! a bag's embedding rows to its accumulator, compiled for AVX2 and selected at run time, handed
//! to the op as a safe function pointer ([`RowsAddF32`]) when the JIT lowers a graph.
//!
//! The fused op is precompiled Rust in a crate that forbids `unsafe`, so it runs baseline x86-64
//! (SSE2) code: four 128-bit adds per 16-float row. Here the same loop runs on 256-bit vectors.
//! Each accumulator value gets its rows' values added one bucket after the other, in the order
//! given, as in the reference: the same IEEE additions in the same order, so the same bits.

// Calling an AVX2-compiled function after checking that the CPU runs AVX2; the block says why.
#![allow(unsafe_code)]

use ragtime_fused::{HashedGatherReduce, RowsAddF32};
use ragtime_graph::OpRef;

/// The row sum for this CPU: the AVX2 one where the CPU runs AVX2, else `None` (the op keeps its
/// own loop).
pub(crate) fn rows_add_f32() -> Option<RowsAddF32> {
    imp::supported().then_some(rows_add_f32_wide as RowsAddF32)
}

/// `op` with this CPU's row sum, when it is a `HashedGatherReduce` without one and the CPU has one.
pub(crate) fn hashed_bag_with_rows_add(op: &OpRef) -> Option<HashedGatherReduce> {
    let bag = op.as_any().downcast_ref::<HashedGatherReduce>().filter(|b| !b.has_rows_add())?;
    Some(bag.with_rows_add(rows_add_f32()?))
}

/// Adds the rows `buckets` of `table` (rows of `acc.len()` values) to `acc`, bucket by bucket;
/// panics, as slicing does, if a bucket's row is not in `table`.
fn rows_add_f32_wide(acc: &mut [f32], table: &[f32], buckets: &[usize]) {
    imp::rows_add(acc, table, buckets)
}

/// The rows of `buckets` added to `acc`, for a row width `N` the compiler unrolls: the
/// accumulator stays in registers across the rows.
#[inline(always)]
fn add_rows_of<const N: usize>(acc: &mut [f32; N], table: &[f32], buckets: &[usize]) {
    let mut sum = *acc;
    for &b in buckets {
        let row = &table[b * N..b * N + N];
        for (s, t) in sum.iter_mut().zip(row) {
            *s += t;
        }
    }
    *acc = sum;
}

/// [`add_rows_of`] for any row width.
#[inline(always)]
fn add_rows(acc: &mut [f32], table: &[f32], buckets: &[usize]) {
    if let Ok(acc) = <&mut [f32; 16]>::try_from(&mut *acc) {
        return add_rows_of(acc, table, buckets);
    }
    if let Ok(acc) = <&mut [f32; 8]>::try_from(&mut *acc) {
        return add_rows_of(acc, table, buckets);
    }
    if let Ok(acc) = <&mut [f32; 32]>::try_from(&mut *acc) {
        return add_rows_of(acc, table, buckets);
    }
    let n = acc.len();
    for &b in buckets {
        for (s, t) in acc.iter_mut().zip(&table[b * n..b * n + n]) {
            *s += t;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod imp {
    pub(super) fn supported() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    pub(super) fn rows_add(acc: &mut [f32], table: &[f32], buckets: &[usize]) {
        if supported() {
            // SAFETY: the only requirement of a `target_feature` function is that the CPU runs
            // its features, checked just above (a cached flag); the body is safe Rust.
            unsafe { avx2(acc, table, buckets) }
        } else {
            super::add_rows(acc, table, buckets)
        }
    }

    #[target_feature(enable = "avx2")]
    fn avx2(acc: &mut [f32], table: &[f32], buckets: &[usize]) {
        super::add_rows(acc, table, buckets)
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    pub(super) fn supported() -> bool {
        false
    }

    pub(super) fn rows_add(acc: &mut [f32], table: &[f32], buckets: &[usize]) {
        super::add_rows(acc, table, buckets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wide sum against a plain loop over the same rows, bit for bit, for the widths with a
    /// loop of their own and two without; buckets repeat and come in any order.
    #[test]
    fn wide_row_sums_are_the_plain_loops_bits() {
        let Some(add) = rows_add_f32() else { return };
        for n in [1usize, 7, 8, 16, 32] {
            let rows = 37;
            let table: Vec<f32> =
                (0..rows * n).map(|k| ((k * 7919) % 1013) as f32 / 97.0 - 5.0 + 1e-7 * k as f32).collect();
            let buckets: Vec<usize> = (0..50).map(|k| (k * 13 + k * k) % rows).collect();
            let start: Vec<f32> = (0..n).map(|i| i as f32 * 0.1 - 0.3).collect();
            let mut want = start.clone();
            for &b in &buckets {
                for (w, t) in want.iter_mut().zip(&table[b * n..b * n + n]) {
                    *w += t;
                }
            }
            let mut got = start.clone();
            add(&mut got, &table, &buckets);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "width {n}");
            let mut none = start.clone();
            add(&mut none, &table, &[]);
            assert_eq!(bits(&none), bits(&start), "width {n}: no buckets, no change");
        }
    }
}
