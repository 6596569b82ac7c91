//! Row folds of a flat block in bulk: every row's float32 sum or maximum, sixteen rows at a time,
//! kept in the rows' value slots and expanded over each row's elements, in one call.
//!
//! One row at a time, a fold's cost is its horizontal part: four shuffle-and-combine steps on
//! the row's last vector, its branches and its mask, for a row of ten values (W4's profile: the
//! max and sum folds and their expansions were half the kernel). Sixteen rows at a time the
//! horizontal parts share their shuffles: each row is one 16-lane vector (its values folded lane
//! by lane, 16 at a time), and the sixteen vectors reduce together in four levels of 8, 4, 2 and 1
//! shuffle pairs, 30 shuffles for 16 rows instead of 8 a row (the transpose-and-reduce of
//! `reduce16`).
//!
//! **The order of a sum**, which fixes its bits. Lane `l` of a row's vector holds the fold of its
//! values `l, l + 16, l + 32, …`, left to right, from the first two chunks (values past the row
//! read as `+0`); then the lanes fold as a tree: `Q(q) = (x[4q] + x[4q+2]) + (x[4q+1] + x[4q+3])`,
//! then `(Q0 + Q1) + (Q2 + Q3)`; then `+ 0.0` (an empty row, or one of zeros, sums to `+0`, as the
//! reference's fold from `+0` does). This differs from the IR fold's order, so a kernel that folds
//! a reduction here folds it here for every row, on its flat blocks and on its row-by-row blocks
//! alike (`plan::FlatBlocks::bulk_folds`): a row's bits do not depend on the block it falls in,
//! nor on the threads.
//!
//! **AVX-512 (and BMI2) only.** A machine without them keeps the IR folds (`supported`,
//! `plan::Target::tiles`); a row's lane masks are the halves of one `bzhi`. A portable
//! variant of the same order, the sixteen lanes of each row in an array, took 13-17 ns a row on
//! W4's rows against the IR fold's 3-4.
//!
//! **A maximum** drops NaNs lane by lane (`maxps`), starts from the ragged identity `-f32::MAX`,
//! and reports whether some row held a NaN or came out a zero (±0 order): the kernel then folds
//! that block again with the IR's exact fold, so every row gets the exact fold's bits.

// AVX-512 intrinsics on raw pointers; each block says why it is sound.
#![allow(unsafe_code)]

use crate::bulk::Isa;

use crate::bulk_abi::{RowFoldFn, EXPAND_SLACK, ROW_VALUE_BYTES};

/// Bytes per row of a value slot.
const SLOT_BYTES: usize = ROW_VALUE_BYTES as usize;

/// What a bulk row fold computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFold {
    /// The sum, in the order of the module's documentation.
    Sum,
    /// The maximum from `-f32::MAX`, NaNs dropped; rows with a NaN or a zero result flagged.
    Max,
}

/// True when this CPU runs the row folds: AVX-512 (and AVX2 and FMA) and BMI2. Machines without
/// them keep the IR folds (`plan::Target::host`).
pub(crate) fn supported() -> bool {
    crate::bulk::supported() && Isa::Avx512.runs() && bmi2()
}

/// The row fold for this CPU: `None` where the folds do not run ([`supported`]).
pub(crate) fn row_fold_f32(fold: RowFold) -> Option<RowFoldFn> {
    if !supported() {
        return None;
    }
    match fold {
        #[cfg(target_arch = "x86_64")]
        RowFold::Sum => Some(avx512::fold_rows::<false>),
        #[cfg(target_arch = "x86_64")]
        RowFold::Max => Some(avx512::fold_rows::<true>),
        #[cfg(not(target_arch = "x86_64"))]
        _ => None,
    }
}

/// True when this CPU has BMI2 (the folds' lane masks are `bzhi`s).
fn bmi2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("bmi2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// What a bulk row fold wrote, for tests: each row's result, the four copies in its slot, the
/// expansion buffer (`values.len()` values and the 32 of slack past them, zeros where nothing was
/// written), and whether a maximum flagged a row for the exact fold.
#[derive(Debug, Clone, PartialEq)]
pub struct RowFolds {
    /// Each row's result (the slot's scalar).
    pub results: Vec<f32>,
    /// Each row's four copies (the slot's vector).
    pub copies: Vec<[f32; 4]>,
    /// The expansion buffer.
    pub expanded: Vec<f32>,
    /// A maximum's row held a NaN or came out a zero.
    pub flagged: bool,
}

/// Every row's fold of `values` over the rows `splits` (offsets into `values`); `None` when this
/// CPU has no AVX-512. For tests and benchmarks.
///
/// # Panics
/// If `splits` is empty, decreases, or ends past `values`.
pub fn row_fold_f32_on_slices(fold: RowFold, values: &[f32], splits: &[i64]) -> Option<RowFolds> {
    let f = row_fold_f32(fold)?;
    assert!(!splits.is_empty() && splits.windows(2).all(|w| 0 <= w[0] && w[0] <= w[1]), "row_fold: bad splits");
    assert!(splits[splits.len() - 1] as usize <= values.len(), "row_fold: splits past the values");
    let rows = splits.len() - 1;
    let mut slots = vec![0u8; rows * SLOT_BYTES];
    let mut expanded = vec![0f32; values.len() + EXPAND_SLACK as usize];
    // SAFETY: `f` comes from a lookup that gives it only on CPUs running its instruction set; the
    // rows lie within `values`; `slots` holds `rows` entries; `expanded` holds every value's index
    // plus the slack.
    let flagged = unsafe { f(values.as_ptr(), splits.as_ptr(), rows, expanded.as_mut_ptr(), slots.as_mut_ptr()) };
    let float = |at: usize| f32::from_ne_bytes(slots[at..at + 4].try_into().expect("four bytes"));
    Some(RowFolds {
        results: (0..rows).map(|r| float(r * SLOT_BYTES)).collect(),
        copies: (0..rows).map(|r| std::array::from_fn(|k| float(r * SLOT_BYTES + 16 + 4 * k))).collect(),
        expanded,
        flagged: flagged != 0,
    })
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m512, __mmask16, _bzhi_u32, _mm512_add_ps, _mm512_cmp_ps_mask, _mm512_mask_cmp_ps_mask, _mm512_mask_loadu_ps,
        _mm512_max_ps, _mm512_permutexvar_ps, _mm512_set1_epi32, _mm512_set1_ps, _mm512_setzero_ps,
        _mm512_shuffle_f32x4, _mm512_shuffle_ps, _mm512_storeu_ps, _mm512_unpackhi_ps, _mm512_unpacklo_ps, _mm_set1_ps,
        _mm_storeu_ps, _CMP_EQ_OQ, _CMP_ORD_Q,
    };

    use super::SLOT_BYTES;

    /// The sixteen rows' vectors folded together: lane `j` of the result is row `j`'s fold of its
    /// lanes in the module's lane tree (pairs `(l, l + 2)`, then `(l, l + 1)` within each quarter by
    /// `unpack` and `shuffle`, then quarters `(0, 1)`, `(2, 3)` and the halves by `shuffle_f32x4`).
    macro_rules! reduce16 {
        ($v:expr, $op:ident) => {{
            let v: &[__m512; 16] = &$v;
            let mut s = [_mm512_setzero_ps(); 8];
            for i in 0..8 {
                s[i] = $op(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
            }
            let mut u = [_mm512_setzero_ps(); 4];
            for i in 0..4 {
                u[i] = $op(
                    _mm512_shuffle_ps::<0x44>(s[2 * i], s[2 * i + 1]),
                    _mm512_shuffle_ps::<0xEE>(s[2 * i], s[2 * i + 1]),
                );
            }
            let mut w = [_mm512_setzero_ps(); 2];
            for i in 0..2 {
                w[i] = $op(
                    _mm512_shuffle_f32x4::<0x88>(u[2 * i], u[2 * i + 1]),
                    _mm512_shuffle_f32x4::<0xDD>(u[2 * i], u[2 * i + 1]),
                );
            }
            $op(_mm512_shuffle_f32x4::<0x88>(w[0], w[1]), _mm512_shuffle_f32x4::<0xDD>(w[0], w[1]))
        }};
    }

    /// The masks of a row's lanes `0..min(n, 16)` and `16..min(n, 32)` (of its second vector):
    /// the halves of one `bzhi` (which clears the bits from index `min(n, 32)` up).
    #[target_feature(enable = "bmi2")]
    #[inline]
    fn first_two(n: usize) -> (__mmask16, __mmask16) {
        let m = _bzhi_u32(u32::MAX, n.min(32) as u32);
        (m as __mmask16, (m >> 16) as __mmask16)
    }

    /// The mask of lanes `0..min(n, 16)`.
    #[target_feature(enable = "bmi2")]
    #[inline]
    fn first(n: usize) -> __mmask16 {
        first_two(n).0
    }

    /// Row `r`'s 16-lane vector: its chunks of sixteen folded lane by lane, from the first two
    /// (`fill` past its end); a lane where a value is a NaN clears its bit of `ordered` (maxima
    /// only: one masked compare a vector, the mask staying in its register).
    ///
    /// # Safety
    /// `RowFoldFn`'s contract for row `r`.
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi2")]
    #[inline]
    unsafe fn row_vector<const MAX: bool>(
        values: *const f32,
        splits: *const i64,
        r: usize,
        ordered: &mut __mmask16,
    ) -> __m512 {
        let fill = if MAX { _mm512_set1_ps(-f32::MAX) } else { _mm512_setzero_ps() };
        // SAFETY: the caller's contract: the offsets exist and the row lies within `values`; masked
        // loads touch only the row's lanes (the second vector's address may lie past the buffer,
        // hence `wrapping_add`, but a row of sixteen or fewer values loads no lane of it).
        unsafe {
            let s = *splits.add(r) as usize;
            let l = *splits.add(r + 1) as usize - s;
            let (k_lo, k_hi) = first_two(l);
            let lo = _mm512_mask_loadu_ps(fill, k_lo, values.add(s));
            let hi = _mm512_mask_loadu_ps(fill, k_hi, values.wrapping_add(s + 16));
            let mut v = if MAX {
                *ordered = _mm512_mask_cmp_ps_mask::<_CMP_ORD_Q>(*ordered, lo, hi);
                _mm512_max_ps(lo, hi)
            } else {
                _mm512_add_ps(lo, hi)
            };
            let mut i = 32;
            while i < l {
                let c = _mm512_mask_loadu_ps(fill, first(l - i), values.add(s + i));
                if MAX {
                    *ordered = _mm512_mask_cmp_ps_mask::<_CMP_ORD_Q>(*ordered, v, c);
                    v = _mm512_max_ps(v, c);
                } else {
                    v = _mm512_add_ps(v, c);
                }
                i += 16;
            }
            v
        }
    }

    /// Writes a row's `value` into its slot entry `slot` (the scalar, then four copies).
    ///
    /// # Safety
    /// `RowFoldFn`'s contract: `slot` is the row's entry.
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi2")]
    #[inline]
    unsafe fn keep(value: f32, slot: *mut u8) {
        // SAFETY: the caller's contract: the slot entry is the row's.
        unsafe {
            slot.cast::<f32>().write_unaligned(value);
            _mm_storeu_ps(slot.add(16).cast(), _mm_set1_ps(value));
        }
    }

    /// Writes row `r`'s result, in every lane of `value`, over its values in `expand` (unmasked
    /// stores in row order: later rows overwrite what falls past this one). Measured on W4: the
    /// branch to a row's second vector beats storing one there always (at the row's start again,
    /// or to a spare buffer), though one row in five takes it.
    ///
    /// # Safety
    /// `RowFoldFn`'s contract for row `r`: `expand` holds the row's values plus `EXPAND_SLACK`
    /// past its start (and past the block's end).
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi2")]
    #[inline]
    unsafe fn expand_row(splits: *const i64, r: usize, value: __m512, expand: *mut f32) {
        // SAFETY: the caller's contract.
        unsafe {
            let s = *splits.add(r) as usize;
            let l = *splits.add(r + 1) as usize - s;
            _mm512_storeu_ps(expand.add(s), value);
            let mut i = 16;
            while i < l {
                _mm512_storeu_ps(expand.add(s + i), value);
                i += 16;
            }
        }
    }

    /// The entry, a sum or (`MAX`) a maximum: sixteen rows at a time (the last tile's missing rows
    /// are `fill`), a full tile's sixteen row vectors kept in registers.
    ///
    /// # Safety
    /// `RowFoldFn`'s contract, on a CPU with the features enabled here.
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi2")]
    pub(super) unsafe extern "C" fn fold_rows<const MAX: bool>(
        values: *const f32,
        splits: *const i64,
        rows: usize,
        expand: *mut f32,
        slots: *mut u8,
    ) -> u32 {
        let fill = if MAX { _mm512_set1_ps(-f32::MAX) } else { _mm512_setzero_ps() };
        let mut flagged: u32 = 0;
        let mut results = [0f32; 16];
        let mut r = 0;
        while r < rows {
            let g = (rows - r).min(16);
            let mut ordered: __mmask16 = 0xffff;
            let v: [__m512; 16] = if g == 16 {
                // SAFETY: rows `r..r + 16` exist (`g == 16`).
                let mut row = |j: usize| unsafe { row_vector::<MAX>(values, splits, r + j, &mut ordered) };
                [
                    row(0),
                    row(1),
                    row(2),
                    row(3),
                    row(4),
                    row(5),
                    row(6),
                    row(7),
                    row(8),
                    row(9),
                    row(10),
                    row(11),
                    row(12),
                    row(13),
                    row(14),
                    row(15),
                ]
            } else {
                let mut v = [fill; 16];
                for (j, lane) in v.iter_mut().enumerate().take(g) {
                    // SAFETY: row `r + j` exists (`j < g`).
                    *lane = unsafe { row_vector::<MAX>(values, splits, r + j, &mut ordered) };
                }
                v
            };
            let folded = if MAX {
                _mm512_max_ps(reduce16!(v, _mm512_max_ps), fill)
            } else {
                _mm512_add_ps(reduce16!(v, _mm512_add_ps), fill)
            };
            if MAX {
                let zero = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(folded, _mm512_setzero_ps());
                flagged |= u32::from(!ordered) | u32::from(zero & first(g));
            }
            if !slots.is_null() {
                // SAFETY: a local array of sixteen.
                unsafe { _mm512_storeu_ps(results.as_mut_ptr(), folded) };
                for (j, &value) in results.iter().enumerate().take(g) {
                    // SAFETY: row `r + j` exists; its slot entry is within `slots`.
                    unsafe { keep(value, slots.add((r + j) * SLOT_BYTES)) };
                }
            }
            if !expand.is_null() {
                for j in 0..g {
                    // Row `j`'s result in every lane, permuted from the register (one instruction
                    // where a store of the sixteen and a broadcast load of each took two).
                    let value = _mm512_permutexvar_ps(_mm512_set1_epi32(j as i32), folded);
                    // SAFETY: row `r + j` exists.
                    unsafe { expand_row(splits, r + j, value, expand) };
                }
            }
            r += g;
        }
        flagged
    }
}
