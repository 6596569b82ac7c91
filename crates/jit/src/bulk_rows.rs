//! Row folds in precompiled AVX2 code: the float32 maximum of every row of a flat block, read
//! straight from the kernel's input, without the IR fold's branches on the row's length.
//!
//! The IR folds a row's maximum with NaN-dropping `maxps` from the identity (the lowest finite
//! float32) and flags the rows whose result may differ from the exact fold's: a row holding a
//! NaN, or whose maximum is a zero (its sign depends on the order of ±0); those rows fold again
//! exactly in IR (`lower/fold.rs`). For every other row the maximum of the identity and the
//! row's values is one number, whatever the order, so this function computes it over masked
//! loads (lanes past the row hold the identity) and reports the same flag; the kernel refolds
//! the flagged rows in IR, so every row gets the exact fold's bits.

// AVX2 intrinsics on raw pointers; each block says why it is sound.
#![allow(unsafe_code)]

use crate::bulk_abi::RowMaxFn;

/// The row maxima for this CPU (AVX2, detected at run time); `None` without it.
pub(crate) fn row_max_f32() -> Option<RowMaxFn> {
    imp::row_max_f32()
}

/// Each row's maximum from the lowest finite float32 and whether the row needs the exact
/// refold (it holds a NaN or its maximum is a zero), on the bulk path: `(maximum, refold)` per
/// row of `values` (rows as `splits`, which start at 0); `None` when this CPU has no such path.
/// A row without the flag has the exact fold's result.
///
/// # Panics
/// If `splits` is not a valid partition of `values` starting at 0.
pub fn row_max_f32_of(values: &[f32], splits: &[i64]) -> Option<Vec<(f32, bool)>> {
    assert!(
        splits.first() == Some(&0)
            && splits.last().is_some_and(|&s| s as usize == values.len())
            && splits.windows(2).all(|w| w[0] <= w[1]),
        "row_max_f32_of: splits do not partition the values"
    );
    let f = row_max_f32()?;
    let rows = splits.len() - 1;
    let mut out = vec![0f32; 2 * rows];
    // SAFETY: `f` is handed out only on CPUs with AVX2; the splits (checked above) start at 0,
    // never decrease and end at `values.len()`; `out` has room for two values per row at
    // stride 2.
    unsafe { f(values.as_ptr(), splits.as_ptr(), rows, out.as_mut_ptr(), 2) };
    Some(out.chunks(2).map(|pair| (pair[0], pair[1].to_bits() != 0)).collect())
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::{
        __m256, __m256i, _mm256_blendv_ps, _mm256_castps256_ps128, _mm256_castsi256_ps, _mm256_cmp_ps,
        _mm256_extractf128_ps, _mm256_loadu_si256, _mm256_maskload_ps, _mm256_max_ps, _mm256_movemask_ps, _mm256_or_ps,
        _mm256_set1_ps, _mm_cvtss_f32, _mm_max_ps, _mm_max_ss, _mm_movehdup_ps, _mm_movehl_ps, _CMP_UNORD_Q,
    };

    use crate::bulk_abi::RowMaxFn;

    pub(super) fn row_max_f32() -> Option<RowMaxFn> {
        std::is_x86_feature_detected!("avx2").then_some(row_max_f32_entry as RowMaxFn)
    }

    /// Eight lanes of ones then eight of zeros: the mask of the first `k <= 8` lanes of a vector
    /// starts at `8 - k`.
    static FIRST_LANES: [i32; 16] = [-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0];

    /// The eight values at `p` whose lanes are below `k`, the identity in the others (those
    /// lanes are not read), and whether a lane read is a NaN (as lanes).
    ///
    /// # Safety
    /// AVX2 is enabled; the first `min(k, 8)` values at `p` are readable.
    #[inline(always)]
    unsafe fn lanes_below(p: *const f32, k: usize, identity: __m256) -> (__m256, __m256) {
        // SAFETY: `8 - min(k, 8) <= 8`, so the mask's eight lanes are in the table; the masked
        // load reads only the first `min(k, 8)` values, which the caller makes readable.
        unsafe {
            let mask: __m256i = _mm256_loadu_si256(FIRST_LANES.as_ptr().add(8 - k.min(8)).cast());
            let x = _mm256_maskload_ps(p, mask);
            let x = _mm256_blendv_ps(identity, x, _mm256_castsi256_ps(mask));
            (x, _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x))
        }
    }

    /// For each row `r < rows`, the values `splits[r] - splits[0] .. splits[r + 1] - splits[0]`
    /// of `values`: `out[r * stride]` = their maximum from the lowest finite float32 (NaNs
    /// dropped), `out[r * stride + 1]` = nonzero bits when the row holds a NaN or the maximum is
    /// a zero, else zero bits.
    ///
    /// # Safety
    /// The CPU has AVX2; `splits` is valid for `rows + 1` reads and never decreases; `values` is
    /// valid for reads of `splits[rows] - splits[0]` values; `out` for writes at every
    /// `r * stride` and `r * stride + 1`, `r < rows`.
    #[target_feature(enable = "avx2")]
    unsafe extern "C" fn row_max_f32_entry(
        values: *const f32,
        splits: *const i64,
        rows: usize,
        out: *mut f32,
        stride: usize,
    ) {
        let identity = _mm256_set1_ps(f32::MIN);
        // SAFETY: the function's contract: `splits` has `rows + 1` entries.
        let base = unsafe { *splits };
        let mut start = 0usize;
        for r in 0..rows {
            // SAFETY: `r + 1 <= rows`.
            let end = (unsafe { *splits.add(r + 1) } - base) as usize;
            let n = end - start;
            // Masked loads touch only lanes inside the row; pointers to masked-off lanes are
            // formed with `wrapping_add` and never read.
            let p = values.wrapping_add(start);
            // SAFETY: AVX2 is enabled; every load covers only values of the row (`lanes_below`
            // reads the first `min(n - i, 8)` values at `p + i`, `i < n` or none), readable by
            // the contract; `out + r * stride` and the next value are writable.
            unsafe {
                let (x0, nan0) = lanes_below(p, n, identity);
                let (x1, nan1) = lanes_below(p.wrapping_add(8), n.saturating_sub(8), identity);
                let mut m = _mm256_max_ps(x0, x1);
                let mut nan = _mm256_or_ps(nan0, nan1);
                let mut i = 16;
                while i < n {
                    let (x, x_nan) = lanes_below(p.add(i), n - i, identity);
                    m = _mm256_max_ps(m, x);
                    nan = _mm256_or_ps(nan, x_nan);
                    i += 8;
                }
                let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
                let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
                let max = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
                let refold = (_mm256_movemask_ps(nan) != 0) | (max == 0.0);
                *out.add(r * stride) = max;
                *out.add(r * stride + 1) = f32::from_bits(u32::from(refold));
            }
            start = end;
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    pub(super) fn row_max_f32() -> Option<crate::bulk_abi::RowMaxFn> {
        None
    }
}
