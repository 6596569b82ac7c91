//! `RowPooling`'s pooling loops (`ragtime_fused::fill_block`: each row's weighted vectors added,
//! then folded per outer row) compiled for AVX2 and selected at run time, handed to the op as a
//! safe function pointer ([`FillBlock`]) by [`JitPooling`](crate::JitPooling).
//!
//! The fused op is precompiled Rust in a crate that forbids `unsafe`, so it runs baseline x86-64
//! (SSE2) code: a row's 8-float accumulator is two 128-bit vectors, each event two multiplies and
//! two adds, and the IEEE maximum over a user's sessions eight selects on each half. Here the same
//! generic code is instantiated inside an AVX2 function, so it runs on 256-bit vectors: the same
//! multiplications and additions (never contracted into FMAs) in the same order, so the same bits.

// Calling an AVX2-compiled function after checking that the CPU runs AVX2; the block says why.
#![allow(unsafe_code)]

use ragtime_fused::{fill_block, FillBlock, PoolBlock, PoolFloat};
use ragtime_ops::reduce::ReduceKind;

/// The pooling fill for this CPU: the AVX2 instance where the CPU runs AVX2, else the op's own.
pub(crate) fn fill_for<T: PoolFloat>() -> FillBlock<T> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        return avx2::fill::<T>;
    }
    fill_block::<T>
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;

    /// [`fill_block`] on 256-bit vectors where the CPU runs AVX2 (see the module docs).
    pub(super) fn fill<T: PoolFloat>(
        ops: &PoolBlock<'_, T>,
        outer: Option<ReduceKind>,
        width: usize,
        first: usize,
        chunk: &mut [T],
    ) {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the only requirement of a `target_feature` function is that the CPU runs
            // its features, checked just above (a cached flag); the body is safe Rust.
            unsafe { wide(ops, outer, width, first, chunk) }
        } else {
            fill_block(ops, outer, width, first, chunk)
        }
    }

    #[target_feature(enable = "avx2")]
    fn wide<T: PoolFloat>(
        ops: &PoolBlock<'_, T>,
        outer: Option<ReduceKind>,
        width: usize,
        first: usize,
        chunk: &mut [T],
    ) {
        fill_block(ops, outer, width, first, chunk)
    }
}
