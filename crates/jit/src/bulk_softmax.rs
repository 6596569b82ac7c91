//! The float32 row softmax as one precompiled AVX-512 call per range of rows, several short rows
//! per vector: the function a softmax row kernel (`RowPasses::Softmax` in its plan) calls
//! instead of running its max, `exp`-and-sum and division passes in 128-bit IR.
//!
//! Consecutive rows of at most sixteen values in all (up to four rows) share one 512-bit vector:
//! row `g` of the vector is "group" `g`, and everything per row happens in the group's 128-bit
//! lane. The row's values are gathered into its lane (`vpermps` by a per-lane index built from
//! the row offsets) in the layout of the JIT's own 4-lane fold, so one vector of instructions
//! folds up to four rows at once: the max (exact in any order), then, after one `exp` over the
//! whole vector, the sum in exactly the IR fold's order (two 4-lane accumulators over 8-value
//! blocks, then a 4-value vector, then the row's last four values with those already added
//! zeroed, then the lanes pairwise; rows under four values one by one), which an in-lane
//! butterfly finishes. Each lane then takes its row's max and sum back by its row's index
//! (`vpermps`), so the subtraction, `exp` and division are flat over the vector. Longer rows go
//! one at a time (the same fold from two registers, or from memory past 32 values).
//!
//! So every row gets the bits of the JIT's kernel: the max is a NaN-dropping `vmaxps` fold,
//! which equals the exact fold unless the row holds a NaN or its max is a zero (the JIT refolds
//! such rows); those rows, and rows whose max is infinite, are handed back: the function returns
//! the row's index and the kernel runs it through its IR passes, then calls again from the next.

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

/// True when this CPU runs the row softmax.
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
        __m128, __m512, __m512i, _mm256_add_ps, _mm256_castps256_ps128, _mm256_cvtepi64_epi32, _mm256_extractf128_ps,
        _mm256_loadu_ps, _mm256_mask_cmple_epi64_mask, _mm256_maskz_loadu_epi64, _mm256_maskz_mov_ps,
        _mm256_set1_epi64x, _mm256_setzero_ps, _mm256_sub_epi64, _mm512_add_epi32, _mm512_add_ps, _mm512_and_si512,
        _mm512_castps512_ps128, _mm512_castps512_ps256, _mm512_castsi128_si512, _mm512_cmp_ps_mask,
        _mm512_cmpge_epi32_mask, _mm512_cmplt_epi32_mask, _mm512_div_ps, _mm512_extractf32x4_ps,
        _mm512_extractf32x8_ps, _mm512_loadu_epi32, _mm512_mask_add_epi32, _mm512_mask_blend_epi32,
        _mm512_mask_blend_ps, _mm512_mask_cmp_ps_mask, _mm512_mask_cmpge_epi32_mask, _mm512_mask_cmplt_epi32_mask,
        _mm512_mask_loadu_ps, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_maskz_mov_ps,
        _mm512_maskz_permutex2var_ps, _mm512_max_ps, _mm512_permute_ps, _mm512_permutexvar_epi32,
        _mm512_permutexvar_ps, _mm512_set1_epi32, _mm512_set1_ps, _mm512_setr_epi32, _mm512_setzero_ps,
        _mm512_setzero_si512, _mm512_shuffle_f32x4, _mm512_sub_epi32, _mm512_sub_ps, _mm512_test_epi32_mask,
        _mm_add_ps, _mm_cvtss_f32, _mm_loadu_ps, _mm_mask_mov_epi32, _mm_maskz_mov_ps, _mm_permute_ps, _mm_set1_epi32,
        _mm_slli_si128, _mm_sub_epi32, _CMP_EQ_OQ, _CMP_UNORD_Q,
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

    /// Rows sharing one vector: one per 128-bit lane.
    const GROUPS: usize = 4;

    /// Values of the rows sharing one pair of vectors.
    const LANES: i64 = 32;

    /// `vpermps` immediates within each 128-bit lane: halves swapped, then neighbours swapped
    /// (the JIT's lane fold, `fold_lanes`).
    const HALVES: i32 = 0b01_00_11_10;
    const NEIGHBOURS: i32 = 0b10_11_00_01;

    /// The per-lane constants of the packed path, built once per call.
    #[derive(Clone, Copy)]
    struct Consts {
        /// Lane `l`: its group, `l / 4` (to spread a group's value over the group's lane).
        group: __m512i,
        /// Lane `l`: `l % 4`, its place within the group.
        place: __m512i,
        /// Lane `l`: where a row of under four values puts its value `l % 4`'s slot: values
        /// `e0, e1, e2` go to `[e0, e2, e1, -]`, so that the pairwise fold adds them in order.
        short_place: __m512i,
        iota: __m512i,
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

    /// Rows of at most this many values go one at a time in registers (two vectors).
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
            let f = _mm_add_ps(f, _mm_permute_ps::<HALVES>(f));
            _mm_cvtss_f32(_mm_add_ps(f, _mm_permute_ps::<NEIGHBOURS>(f)))
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
            let a = _mm512_max_ps(a, _mm512_permute_ps::<HALVES>(a));
            _mm512_max_ps(a, _mm512_permute_ps::<NEIGHBOURS>(a))
        }
    }

    /// Whether a row with this max (splat) and NaN flag is one the function hands back: the JIT
    /// refolds a row with a NaN or a zero max exactly, and an infinite max makes `exp` NaN.
    ///
    /// # Safety
    /// The CPU has AVX-512.
    #[inline(always)]
    unsafe fn odd_max(max: __m512) -> u16 {
        // SAFETY: the caller's contract.
        unsafe {
            _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(max, _mm512_setzero_ps())
                | _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(max, _mm512_set1_ps(f32::INFINITY))
        }
    }

    /// Softmax of one row of `len` values at `xr` into `or`, alone; `false` (nothing written)
    /// for a row the function hands back.
    ///
    /// # Safety
    /// The CPU has AVX-512; `xr` is valid for `len` reads and `or` for `len` writes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
    unsafe fn one_row(m: &mut Avx512F32, xr: *const f32, or: *mut f32, len: usize) -> bool {
        // SAFETY: the caller's contract; masked-off lanes are neither read nor written (their
        // addresses, past the row, are only formed with `wrapping_add`).
        unsafe {
            let lowest = _mm512_set1_ps(-f32::MAX);
            let (mut acc, mut nan) = (lowest, 0);
            let mut i = 0;
            while i < len.max(1) {
                let k0 = first_lanes(len.saturating_sub(i));
                let k1 = first_lanes(len.saturating_sub(i + 16));
                let v0 = _mm512_mask_loadu_ps(lowest, k0, xr.wrapping_add(i));
                let v1 = _mm512_mask_loadu_ps(lowest, k1, xr.wrapping_add(i + 16));
                nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v0, v0) | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v1, v1);
                acc = _mm512_max_ps(v0, acc);
                acc = _mm512_max_ps(v1, acc);
                i += 32;
            }
            let max = splat_max(acc);
            if nan | odd_max(max) != 0 {
                return false;
            }
            let exp = |m: &mut Avx512F32, k, p: *const f32| {
                let v = _mm512_maskz_loadu_ps(k, p);
                _mm512_maskz_mov_ps(k, explog::exp(m, _mm512_sub_ps(v, max), None))
            };
            if len <= SHORT {
                let (k0, k1) = (first_lanes(len), first_lanes(len.saturating_sub(16)));
                let e0 = exp(m, k0, xr);
                let e1 = if len > 16 { exp(m, k1, xr.add(16)) } else { _mm512_setzero_ps() };
                let sum = _mm512_set1_ps(short_row_sum(e0, e1, len));
                _mm512_mask_storeu_ps(or, k0, _mm512_div_ps(e0, sum));
                _mm512_mask_storeu_ps(or.wrapping_add(16), k1, _mm512_div_ps(e1, sum));
                return true;
            }
            let mut i = 0;
            while i < len {
                let k = first_lanes(len - i);
                _mm512_mask_storeu_ps(or.add(i), k, exp(m, k, xr.add(i)));
                i += 16;
            }
            let sum = _mm512_set1_ps(row_sum(or, len));
            let mut i = 0;
            while i < len {
                let k = first_lanes(len - i);
                let e = _mm512_maskz_loadu_ps(k, or.add(i));
                _mm512_mask_storeu_ps(or.add(i), k, _mm512_div_ps(e, sum));
                i += 16;
            }
            true
        }
    }

    /// Softmax of the `k >= 1` rows starting at value `base`, which end at `ends` (relative to
    /// `base`, lanes `k..` holding the last row's end, at most 16), in one vector. Returns the
    /// first of them not computed (handed back), or `k`.
    ///
    /// # Safety
    /// The CPU has AVX-512; values `base..base + ends[k - 1]` are valid for reads in `x` and
    /// writes in `out`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
    unsafe fn packed_rows(
        m: &mut Avx512F32,
        c: &Consts,
        x: *const f32,
        out: *mut f32,
        base: usize,
        ends: std::arch::x86_64::__m128i,
        total: usize,
        k: usize,
    ) -> usize {
        // SAFETY: the caller's contract; masked loads and stores touch only the `total` values.
        unsafe {
            // Each lane: its group's start and length.
            let starts = _mm_slli_si128::<4>(ends);
            let lens = _mm_sub_epi32(ends, starts);
            let start = _mm512_permutexvar_epi32(c.group, _mm512_castsi128_si512(starts));
            let len = _mm512_permutexvar_epi32(c.group, _mm512_castsi128_si512(lens));
            let ends = _mm512_castsi128_si512(ends);
            let lanes = [first_lanes(total), first_lanes(total.saturating_sub(16))];
            let v = [
                _mm512_maskz_loadu_ps(lanes[0], x.add(base)),
                _mm512_maskz_loadu_ps(lanes[1], x.wrapping_add(base + 16)),
            ];
            // The group's values `4q + place` for eighths `q` of up to 32 values, from both registers.
            let at = _mm512_add_epi32(start, c.place);
            let quarter = |q: i32| _mm512_add_epi32(at, _mm512_set1_epi32(4 * q));
            let gather = |k: u16, idx: __m512i, r: [__m512; 2]| _mm512_maskz_permutex2var_ps(k, r[0], idx, r[1]);
            let lowest = _mm512_set1_ps(-f32::MAX);
            let gather_max = |q: i32| {
                let in_row = _mm512_cmplt_epi32_mask(_mm512_add_epi32(c.place, _mm512_set1_epi32(4 * q)), len);
                _mm512_mask_blend_ps(in_row, lowest, gather(in_row, quarter(q), v))
            };
            let max = _mm512_max_ps(
                _mm512_max_ps(_mm512_max_ps(gather_max(0), gather_max(1)), _mm512_max_ps(gather_max(2), gather_max(3))),
                _mm512_max_ps(_mm512_max_ps(gather_max(4), gather_max(5)), _mm512_max_ps(gather_max(6), gather_max(7))),
            );
            let max = _mm512_max_ps(max, _mm512_permute_ps::<HALVES>(max));
            let max = _mm512_max_ps(max, _mm512_permute_ps::<NEIGHBOURS>(max));
            let nan = _mm512_mask_cmp_ps_mask::<_CMP_UNORD_Q>(lanes[0], v[0], v[0])
                | _mm512_mask_cmp_ps_mask::<_CMP_UNORD_Q>(lanes[1], v[1], v[1]);
            if nan | odd_max(max) != 0 {
                // Rare: the rows one by one, up to the first handed back.
                let mut row_start = 0;
                for g in 0..k {
                    let row_end = if g + 1 < k { ends_lane(ends, g) } else { total };
                    if !one_row(m, x.add(base + row_start), out.add(base + row_start), row_end - row_start) {
                        return g;
                    }
                    row_start = row_end;
                }
                return k;
            }
            // Each lane's group index times four: the groups that end at or before it.
            let four = _mm512_set1_epi32(4);
            let sixteen = _mm512_set1_epi32(16);
            let mut group4 = [_mm512_setzero_si512(); 2];
            for g in 0..GROUPS as i32 - 1 {
                let end = _mm512_permutexvar_epi32(_mm512_set1_epi32(g), ends);
                group4[0] = _mm512_mask_add_epi32(group4[0], _mm512_cmpge_epi32_mask(c.iota, end), group4[0], four);
                let past = _mm512_cmpge_epi32_mask(_mm512_add_epi32(c.iota, sixteen), end);
                group4[1] = _mm512_mask_add_epi32(group4[1], past, group4[1], four);
            }
            let e0 = explog::exp(m, _mm512_sub_ps(v[0], _mm512_permutexvar_ps(group4[0], max)), None);
            let e1 = explog::exp(m, _mm512_sub_ps(v[1], _mm512_permutexvar_ps(group4[1], max)), None);
            let e = [e0, e1];
            // The sum in the IR fold's order: accumulators `((e[q0] + e[q2]) + e[q4]) + e[q6]`
            // (and the odd eighths) over whole 8-value blocks, then the 4-value vector after them,
            // then the last four values with those already added zeroed (rows under four:
            // `[e0, e2, e1, 0]`).
            let block = |j: i32| _mm512_cmpge_epi32_mask(len, _mm512_set1_epi32(8 * (j + 1)));
            let blocks = [block(0), block(1), block(2), block(3)];
            let acc = |odd: i32| {
                let mut acc = gather(blocks[0], quarter(odd), e);
                for j in 1..4 {
                    acc = _mm512_add_ps(acc, gather(blocks[j as usize], quarter(2 * j + odd), e));
                }
                acc
            };
            let f = _mm512_add_ps(acc(0), acc(1));
            let has_four = _mm512_test_epi32_mask(len, four);
            let after_blocks = _mm512_add_epi32(at, _mm512_and_si512(len, _mm512_set1_epi32(!7)));
            let f = _mm512_add_ps(f, gather(has_four, after_blocks, e));
            let short = _mm512_cmplt_epi32_mask(len, four);
            let rest = _mm512_and_si512(len, _mm512_set1_epi32(3));
            let new = _mm512_mask_cmpge_epi32_mask(!short, _mm512_add_epi32(c.place, rest), four);
            let short_new = _mm512_mask_cmplt_epi32_mask(short, c.short_place, len);
            let last = _mm512_sub_epi32(_mm512_add_epi32(at, len), four);
            let last = _mm512_mask_blend_epi32(short, last, _mm512_add_epi32(start, c.short_place));
            let f = _mm512_add_ps(f, gather(new | short_new, last, e));
            let f = _mm512_add_ps(f, _mm512_permute_ps::<HALVES>(f));
            let f = _mm512_add_ps(f, _mm512_permute_ps::<NEIGHBOURS>(f));
            for h in 0..2 {
                let q = _mm512_div_ps(e[h], _mm512_permutexvar_ps(group4[h], f));
                _mm512_mask_storeu_ps(out.wrapping_add(base + 16 * h), lanes[h], q);
            }
            k
        }
    }

    /// Lane `g` of the row ends.
    #[inline(always)]
    fn ends_lane(ends: __m512i, g: usize) -> usize {
        let mut lanes = [0i32; 16];
        // SAFETY: an `__m512i` is 64 bytes, as `lanes`.
        unsafe { std::ptr::copy_nonoverlapping((&raw const ends).cast::<i32>(), lanes.as_mut_ptr(), 16) };
        lanes[g] as usize
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
            let c = Consts {
                group: _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                place: _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3),
                short_place: _mm512_setr_epi32(0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3),
                iota: _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            };
            let mut r = first;
            while r < last {
                let base = *splits.add(r);
                // The next rows (up to four, none past `last`) that end within 16 values of
                // `base`: a prefix, the offsets being nondecreasing.
                let ahead = ((1u32 << (last - r).min(GROUPS)) - 1) as u8;
                let ends =
                    _mm256_sub_epi64(_mm256_maskz_loadu_epi64(ahead, splits.add(r + 1)), _mm256_set1_epi64x(base));
                let fit = _mm256_mask_cmple_epi64_mask(ahead, ends, _mm256_set1_epi64x(LANES));
                let k = fit.trailing_ones() as usize;
                let base = base as usize;
                if k == 0 {
                    let len = *splits.add(r + 1) as usize - base;
                    if !one_row(&mut m, x.add(base), out.add(base), len) {
                        return r;
                    }
                    r += 1;
                    continue;
                }
                let total = *splits.add(r + k) as usize - base;
                let ends = _mm_mask_mov_epi32(_mm_set1_epi32(total as i32), fit, _mm256_cvtepi64_epi32(ends));
                let done = packed_rows(&mut m, &c, x, out, base, ends, total, k);
                if done < k {
                    return r + done;
                }
                r += k;
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
