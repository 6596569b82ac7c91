//! Whole row passes in precompiled AVX-512 code: a row kernel whose passes are a known family
//! (float32 softmax: max; `exp(x - max)` and its sum; the division) calls one function for a
//! range of rows instead of running its passes in 128-bit IR.
//!
//! The function gives every row the bits of the JIT's own kernel: the max is a NaN-dropping
//! `vmaxps` fold, which equals the exact fold unless the row holds a NaN or its max is a zero
//! (the JIT refolds such rows; here they are handed back, below); `exp` is `vmath`'s algorithm
//! through [`Arith`], lane for lane the IR's; the sum adds the same values in the same order as
//! the JIT's vector fold (two 4-lane accumulators over 8-value blocks, then a 4-value vector,
//! then the row's last four values with those already added replaced by zeros, then the lanes
//! pairwise; rows under four values one by one), which for rows of at most 32 values is rebuilt
//! from two registers by a tabled permutation. Rows go in blocks, pass by pass (all maxes, then
//! all exponentials and sums, then all divisions), so each pass has independent rows for the
//! core to overlap instead of one row's chain of dependent steps at a time. A row the function
//! does not compute (a NaN, a zero or an infinite max) ends the call: it returns that row's
//! index and the kernel runs the row through its IR passes, then calls again from the next row.

// AVX-512 intrinsics on raw pointers; each block says why it is sound.
#![allow(unsafe_code)]

/// `fn(x, out, splits, first, last) -> row`: softmax of rows `first..last` of the values `x`
/// (row `r` is `x[splits[r]..splits[r + 1]]`) into `out` at the same positions; returns the
/// first row not computed (a NaN, a zero or an infinite max), or `last`.
pub(crate) type SoftmaxRowsFn = unsafe extern "C" fn(*const f32, *mut f32, *const i64, usize, usize) -> usize;

/// The float32 row softmax for this CPU, when it has AVX-512 (`None` otherwise: kernels keep
/// their IR passes).
pub(crate) fn softmax_rows_f32() -> Option<SoftmaxRowsFn> {
    imp::softmax_rows_f32()
}

/// True when this CPU runs the row-pass functions.
pub(crate) fn supported() -> bool {
    imp::supported()
}

/// Softmax of the rows of `x` from row `first` on (row `r` is `x[splits[r]..splits[r + 1]]`)
/// into `out`, as the JIT's float32 softmax kernel computes it, on the AVX-512 path. Returns
/// `None` when this CPU has no such path, else the first row it did not compute (the row count
/// when it computed all): that row and later ones of `out` are left alone.
///
/// # Panics
/// If `splits` is not a partition of `x` (starting at 0, nondecreasing, ending at `x.len()`),
/// `first` is past the last row, or `out` is not as long as `x`.
pub fn softmax_rows_f32_into(x: &[f32], splits: &[i64], first: usize, out: &mut [f32]) -> Option<usize> {
    assert_eq!(x.len(), out.len(), "softmax_rows_f32_into: output of another length");
    assert!(
        splits.first() == Some(&0)
            && splits.last() == Some(&(x.len() as i64))
            && splits.windows(2).all(|w| w[0] <= w[1]),
        "softmax_rows_f32_into: not a partition of the values"
    );
    let nrows = splits.len() - 1;
    assert!(first <= nrows, "softmax_rows_f32_into: row {first} of {nrows}");
    let f = softmax_rows_f32()?;
    // SAFETY: `f` is handed out only on CPUs with AVX-512; `splits` is a partition of `x`
    // (checked above), so every row it names is in bounds of `x` and `out`, distinct buffers.
    Some(unsafe { f(x.as_ptr(), out.as_mut_ptr(), splits.as_ptr(), first, nrows) })
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::{
        __m128, __m512, __mmask16, _mm256_add_ps, _mm256_castps256_ps128, _mm256_extractf128_ps, _mm256_loadu_ps,
        _mm256_maskz_mov_ps, _mm256_setzero_ps, _mm512_castps512_ps128, _mm512_castps512_ps256, _mm512_cmp_ps_mask,
        _mm512_cvtss_f32, _mm512_div_ps, _mm512_extractf32x4_ps, _mm512_extractf32x8_ps, _mm512_loadu_epi32,
        _mm512_mask_loadu_ps, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_maskz_mov_ps,
        _mm512_maskz_permutex2var_ps, _mm512_max_ps, _mm512_permute_ps, _mm512_set1_ps, _mm512_setzero_ps,
        _mm512_shuffle_f32x4, _mm512_sub_ps, _mm_add_ps, _mm_cvtss_f32, _mm_loadu_ps, _mm_maskz_mov_ps, _mm_permute_ps,
        _CMP_UNORD_Q,
    };

    use super::SoftmaxRowsFn;
    use crate::bulk_avx512::{first_lanes, Avx512F32};
    use ragtime_vmath::explog;

    pub(super) fn supported() -> bool {
        crate::bulk_avx512::supported()
    }

    pub(super) fn softmax_rows_f32() -> Option<SoftmaxRowsFn> {
        supported().then_some(softmax_rows_entry as SoftmaxRowsFn)
    }

    /// How the sum of a row of `len <= 32` values, held in two registers (zeros past `len`),
    /// follows the JIT's fold: which 8-value blocks go to the accumulators (bit `j`: block `j`),
    /// and a permutation of the two registers that gathers the 4-value vector after them into
    /// lanes 0-3 and the row's last four values (those already folded zeroed) into lanes 4-7,
    /// with the lanes it fills. Rows under four values (folded one by one from zero) put their
    /// values in lanes 4-7 so that the pairwise lane fold adds them in order.
    #[derive(Clone, Copy)]
    struct ShortSum {
        blocks: u8,
        gather: u16,
        index: [i32; 16],
    }

    /// Rows of at most this many values keep their values in registers (two vectors).
    const SHORT: usize = 32;

    const fn short_sum(len: usize) -> ShortSum {
        let mut s = ShortSum { blocks: 0, gather: 0, index: [0; 16] };
        if len < 4 {
            // `((0 + e0) + e1) + e2` is `(f0 + f2) + (f1 + f3)` of `f = [e0, e2, e1, 0]`.
            let order = [0usize, 2, 1];
            let mut k = 0;
            while k < len {
                s.index[4 + order[k]] = k as i32;
                s.gather |= 1 << (4 + order[k]);
                k += 1;
            }
            return s;
        }
        let blocks = len / 8;
        s.blocks = ((1u32 << blocks) - 1) as u8;
        if len % 8 >= 4 {
            let mut k = 0;
            while k < 4 {
                s.index[k] = (8 * blocks + k) as i32;
                s.gather |= 1 << k;
                k += 1;
            }
        }
        let rest = len % 4;
        let mut k = 4 - rest;
        while k < 4 {
            s.index[4 + k] = (len - 4 + k) as i32;
            s.gather |= 1 << (4 + k);
            k += 1;
        }
        s
    }

    const SHORT_SUMS: [ShortSum; SHORT + 1] = {
        let mut t = [ShortSum { blocks: 0, gather: 0, index: [0; 16] }; SHORT + 1];
        let mut len = 0;
        while len <= SHORT {
            t[len] = short_sum(len);
            len += 1;
        }
        t
    };

    /// Folds the four lanes of `f` as the JIT does (halves, then neighbours): lane 0 holds
    /// `(f0 + f2) + (f1 + f3)`.
    ///
    /// # Safety
    /// The CPU has AVX-512 (the callers' `#[target_feature]`).
    #[inline(always)]
    unsafe fn fold_lanes(f: __m128) -> f32 {
        // SAFETY: the caller's contract.
        unsafe {
            let f = _mm_add_ps(f, _mm_permute_ps::<0b01_00_11_10>(f));
            _mm_cvtss_f32(_mm_add_ps(f, _mm_permute_ps::<0b10_11_00_01>(f)))
        }
    }

    /// The JIT-order sum of a row of `len <= 32` values held in `e0` and `e1` (zeros past
    /// `len`).
    ///
    /// # Safety
    /// The CPU has AVX-512; `len <= 32`.
    #[inline(always)]
    unsafe fn short_row_sum(e0: __m512, e1: __m512, len: usize) -> f32 {
        let t = &SHORT_SUMS[len];
        let block = |j: u8| if t.blocks & (1 << j) != 0 { 0xff } else { 0 };
        // SAFETY: the caller's contract; `t.index` is 16 `i32`s.
        unsafe {
            let acc = _mm256_maskz_mov_ps(block(0), _mm512_castps512_ps256(e0));
            let acc = _mm256_add_ps(acc, _mm256_maskz_mov_ps(block(1), _mm512_extractf32x8_ps::<1>(e0)));
            let acc = _mm256_add_ps(acc, _mm256_maskz_mov_ps(block(2), _mm512_castps512_ps256(e1)));
            let acc = _mm256_add_ps(acc, _mm256_maskz_mov_ps(block(3), _mm512_extractf32x8_ps::<1>(e1)));
            let f = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps::<1>(acc));
            let index = _mm512_loadu_epi32(t.index.as_ptr());
            let g = _mm512_maskz_permutex2var_ps(t.gather, e0, index, e1);
            let f = _mm_add_ps(f, _mm512_castps512_ps128(g));
            let f = _mm_add_ps(f, _mm512_extractf32x4_ps::<1>(g));
            fold_lanes(f)
        }
    }

    /// The JIT-order sum of `p[..len]`, `len >= 4`, read from memory.
    ///
    /// # Safety
    /// The CPU has AVX-512; `p` is valid for `len >= 4` reads.
    #[inline(always)]
    unsafe fn row_sum(p: *const f32, len: usize) -> f32 {
        let (end8, end4) = (len & !7, len & !3);
        // SAFETY: the caller's contract; every load is within `p[..len]` (the last one starts at
        // `len - 4 >= 0`).
        unsafe {
            let mut acc = _mm256_setzero_ps();
            let mut i = 0;
            while i < end8 {
                acc = _mm256_add_ps(acc, _mm256_loadu_ps(p.add(i)));
                i += 8;
            }
            let mut f = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps::<1>(acc));
            if end4 > end8 {
                f = _mm_add_ps(f, _mm_loadu_ps(p.add(end8)));
            }
            let rest = len - end4;
            let new = (0xf0u8 >> rest) & 0xf;
            f = _mm_add_ps(f, _mm_maskz_mov_ps(new, _mm_loadu_ps(p.add(len - 4))));
            fold_lanes(f)
        }
    }

    /// The max of every lane of `acc` (which holds no NaN), splat over all lanes.
    ///
    /// # Safety
    /// The CPU has AVX-512.
    #[inline(always)]
    unsafe fn splat_max(acc: __m512) -> __m512 {
        // SAFETY: the caller's contract.
        unsafe {
            let a = _mm512_max_ps(acc, _mm512_shuffle_f32x4::<0b01_00_11_10>(acc, acc));
            let a = _mm512_max_ps(a, _mm512_shuffle_f32x4::<0b10_11_00_01>(a, a));
            let a = _mm512_max_ps(a, _mm512_permute_ps::<0b01_00_11_10>(a));
            _mm512_max_ps(a, _mm512_permute_ps::<0b10_11_00_01>(a))
        }
    }

    /// Rows per block: each pass goes over a block's rows (max; `exp` and sum; division), so the
    /// rows' work is independent within a pass rather than one long chain per row.
    const BLOCK: usize = 32;

    /// The max of the row's `len` values at `p` from the identity `-f32::MAX`, NaN-dropping
    /// (`vmaxps(v, acc)` keeps `acc` for a NaN `v`), splat; and whether the row is one the JIT
    /// folds again exactly or whose exponentials could be NaN (a NaN, a zero or an infinite max).
    ///
    /// # Safety
    /// The CPU has AVX-512; `p` is valid for `len` reads.
    #[inline(always)]
    unsafe fn row_max(p: *const f32, len: usize) -> (__m512, bool) {
        // SAFETY: the caller's contract; masked-off lanes are not read (their addresses, past the
        // row, are only formed with `wrapping_add`).
        unsafe {
            let lowest = _mm512_set1_ps(-f32::MAX);
            let (mut acc, mut nan) = (lowest, 0);
            let mut i = 0;
            while i < len.max(1) {
                let k0 = first_lanes(len.saturating_sub(i));
                let k1 = first_lanes(len.saturating_sub(i + 16));
                let v0 = _mm512_mask_loadu_ps(lowest, k0, p.add(i));
                let v1 = _mm512_mask_loadu_ps(lowest, k1, p.wrapping_add(i + 16));
                nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v0, v0) | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v1, v1);
                acc = _mm512_max_ps(v0, acc);
                acc = _mm512_max_ps(v1, acc);
                i += 32;
            }
            let max = splat_max(acc);
            let top = _mm512_cvtss_f32(max);
            (max, nan != 0 || top == 0.0 || top == f32::INFINITY)
        }
    }

    /// # Safety
    /// The CPU has the features of [`crate::bulk_avx512::supported`]; `splits[first..=last]` are
    /// nondecreasing offsets, each row's values `splits[r]..splits[r + 1]` valid for reads in
    /// `x` and for writes in `out`, which does not overlap `x`.
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
    unsafe extern "C" fn softmax_rows_entry(
        x: *const f32,
        out: *mut f32,
        splits: *const i64,
        first: usize,
        last: usize,
    ) -> usize {
        // SAFETY: this function's contract: the features, and every access below is within a
        // row `splits[r]..splits[r + 1]` for `r` in `first..last` (masked lanes past a row's
        // end are neither read nor written).
        unsafe {
            let mut m = Avx512F32::new();
            let row = |r: usize| {
                let start = *splits.add(r) as usize;
                (start, *splits.add(r + 1) as usize - start)
            };
            let mut maxes = [_mm512_setzero_ps(); BLOCK];
            let mut sums = [0f32; BLOCK];
            let mut begin = first;
            while begin < last {
                let block_end = (begin + BLOCK).min(last);
                // Pass 1: the maxes; a row handed back ends the block (and the call) before it.
                let mut end = block_end;
                for r in begin..block_end {
                    let (start, len) = row(r);
                    let (max, rare) = row_max(x.add(start), len);
                    if rare {
                        end = r;
                        break;
                    }
                    maxes[r - begin] = max;
                }
                // Pass 2: `exp(x - max)` into `out`, and its sum in the JIT's order.
                for r in begin..end {
                    let (start, len) = row(r);
                    let (xr, or, max) = (x.add(start), out.add(start), maxes[r - begin]);
                    let exp = |m: &mut Avx512F32, k: __mmask16, p: *const f32| {
                        let v = _mm512_maskz_loadu_ps(k, p);
                        _mm512_maskz_mov_ps(k, explog::exp(m, _mm512_sub_ps(v, max), None))
                    };
                    if len <= SHORT {
                        let (k0, k1) = (first_lanes(len), first_lanes(len.saturating_sub(16)));
                        let e0 = exp(&mut m, k0, xr);
                        _mm512_mask_storeu_ps(or, k0, e0);
                        let e1 = if len > 16 {
                            let e1 = exp(&mut m, k1, xr.add(16));
                            _mm512_mask_storeu_ps(or.add(16), k1, e1);
                            e1
                        } else {
                            _mm512_setzero_ps()
                        };
                        sums[r - begin] = short_row_sum(e0, e1, len);
                    } else {
                        let mut i = 0;
                        while i < len {
                            let k = first_lanes(len - i);
                            _mm512_mask_storeu_ps(or.add(i), k, exp(&mut m, k, xr.add(i)));
                            i += 16;
                        }
                        sums[r - begin] = row_sum(or, len);
                    }
                }
                // Pass 3: the division by the row's sum.
                for r in begin..end {
                    let (start, len) = row(r);
                    let (or, sum) = (out.add(start), _mm512_set1_ps(sums[r - begin]));
                    let mut i = 0;
                    while i < len {
                        let k = first_lanes(len - i);
                        let e = _mm512_maskz_loadu_ps(k, or.add(i));
                        _mm512_mask_storeu_ps(or.add(i), k, _mm512_div_ps(e, sum));
                        i += 16;
                    }
                }
                if end < block_end {
                    return end;
                }
                begin = block_end;
            }
            last
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    pub(super) fn supported() -> bool {
        false
    }
    pub(super) fn softmax_rows_f32() -> Option<super::SoftmaxRowsFn> {
        None
    }
}
