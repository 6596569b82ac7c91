//! Arrow offsets: the check every offsets buffer passes before it is used, and its conversion into
//! ragtime's i64 row splits and string offsets (shared when the layouts allow, else copied).

use std::ops::Range;

use arrow_array::OffsetSizeTrait;
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use ragtime_core::{Error, ExecContext, Result, SharedSlice};

use crate::shared::adopt;
use crate::OP_FROM;

/// What is wrong with an offsets buffer. Arrays built by arrow-rs's safe constructors never have
/// any of these faults; arrays assembled with `unsafe` (FFI, IPC without validation) may.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OffsetFault {
    /// No offsets at all (a list array has `len + 1`).
    Empty,
    /// `offsets[index]` is negative.
    Negative { index: usize, value: i64 },
    /// `offsets[index] < offsets[index - 1]`: slot `index - 1` would have a negative length.
    Decreasing { index: usize, value: i64, previous: i64 },
    /// `offsets[index]` points past the end of the `len` children.
    PastEnd { index: usize, value: i64, len: usize },
}

impl OffsetFault {
    /// The slot (list or string) whose bounds are wrong.
    pub(crate) fn slot(&self) -> usize {
        match *self {
            OffsetFault::Empty => 0,
            OffsetFault::Negative { index, .. } | OffsetFault::PastEnd { index, .. } => index.saturating_sub(1),
            OffsetFault::Decreasing { index, .. } => index - 1,
        }
    }

    /// What is wrong, for an error message.
    pub(crate) fn describe(&self) -> String {
        match *self {
            OffsetFault::Empty => "the offsets buffer is empty (a list of n slots needs n + 1 offsets)".to_string(),
            OffsetFault::Negative { index, value } => format!("offset {index} is negative ({value})"),
            OffsetFault::Decreasing { index, value, previous } => {
                format!("offsets decrease: offset {index} is {value} after {previous}")
            }
            OffsetFault::PastEnd { index, value, len } => {
                format!("offset {index} is {value}, past the end of the {len} children")
            }
        }
    }
}

/// An Arrow offset type (i32 for `List` / `Utf8` / `Binary`, i64 for the `Large` ones).
pub(crate) trait Offset: OffsetSizeTrait {
    /// The offset as i64 (exact for both widths).
    fn widen(self) -> i64;

    /// Row splits for the slots `run` of `offsets` (`run.end < offsets.len()`), rebased to start
    /// at 0. Shares the buffer when it is i64 and `offsets[run.start]` is 0; otherwise copies
    /// (i64 offsets of a whole, uniquely owned `Vec` buffer are rebased in place instead).
    fn into_splits(offsets: OffsetBuffer<Self>, run: Range<usize>) -> Result<SharedSlice<i64>> {
        rebased(&offsets, run).map(SharedSlice::from_vec)
    }

    /// The string offsets of the slots `run` (`run.end < offsets.len()`), as they are (not
    /// rebased: a string column's offsets index its byte buffer wherever they start). Shared
    /// when i64, widened (a copy) when i32.
    fn string_offsets(offsets: &OffsetBuffer<Self>, run: Range<usize>) -> Result<SharedSlice<i64>> {
        ExecContext::detached()
            .try_collect(OP_FROM, offsets[run.start..=run.end].iter().map(|&o| o.widen()))
            .map(SharedSlice::from_vec)
    }
}

impl Offset for i32 {
    fn widen(self) -> i64 {
        i64::from(self)
    }
}

impl Offset for i64 {
    fn widen(self) -> i64 {
        self
    }

    fn into_splits(offsets: OffsetBuffer<i64>, run: Range<usize>) -> Result<SharedSlice<i64>> {
        let whole = run.start == 0 && run.end + 1 == offsets.len();
        if offsets[run.start] == 0 {
            return shared_window(adopt(offsets.into_inner()), run);
        }
        if whole {
            return match offsets.into_inner().into_inner().into_vec::<i64>() {
                Ok(mut splits) => {
                    // Rebasing in place: still no copy.
                    let base = splits[0];
                    splits.iter_mut().for_each(|s| *s -= base);
                    Ok(SharedSlice::from_vec(splits))
                }
                Err(shared) => rebased(&ScalarBuffer::<i64>::from(shared), run).map(SharedSlice::from_vec),
            };
        }
        rebased(&offsets, run).map(SharedSlice::from_vec)
    }

    fn string_offsets(offsets: &OffsetBuffer<i64>, run: Range<usize>) -> Result<SharedSlice<i64>> {
        shared_window(SharedSlice::from_owner(offsets.inner().clone()), run)
    }
}

/// `offsets[run.start..=run.end]` of a shared buffer, still shared.
fn shared_window(offsets: SharedSlice<i64>, run: Range<usize>) -> Result<SharedSlice<i64>> {
    offsets
        .slice(run.start..run.end + 1)
        .ok_or_else(|| Error::partition(OP_FROM, format!("offsets for slots {run:?} reach past the offsets buffer")))
}

/// A copy of `offsets[run.start..=run.end]`, widened to i64 and rebased to start at 0.
fn rebased<O: Offset>(offsets: &[O], run: Range<usize>) -> Result<Vec<i64>> {
    let window = &offsets[run.start..=run.end];
    let base = window[0].widen();
    ExecContext::detached().try_collect(OP_FROM, window.iter().map(|&o| o.widen() - base))
}

/// Checks that `offsets` are usable: at least one, none negative, never decreasing, the last at
/// most `len` (the number of children they index).
pub(crate) fn check<O: Offset>(offsets: &[O], len: usize) -> std::result::Result<(), OffsetFault> {
    let Some(&first) = offsets.first() else { return Err(OffsetFault::Empty) };
    if first.widen() < 0 {
        return Err(OffsetFault::Negative { index: 0, value: first.widen() });
    }
    let mut previous = first.widen();
    for (index, &o) in offsets.iter().enumerate().skip(1) {
        let value = o.widen();
        if value < previous {
            return Err(OffsetFault::Decreasing { index, value, previous });
        }
        previous = value;
    }
    if previous as u64 > len as u64 {
        return Err(OffsetFault::PastEnd { index: offsets.len() - 1, value: previous, len });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_offsets_pass_and_each_fault_is_named() {
        assert_eq!(check(&[0i32, 2, 2, 5], 5), Ok(()));
        assert_eq!(check(&[3i64, 3], 3), Ok(()), "offsets may start past 0 (sliced arrays)");
        assert_eq!(check::<i32>(&[], 0), Err(OffsetFault::Empty));
        assert_eq!(check(&[-1i32, 2], 5), Err(OffsetFault::Negative { index: 0, value: -1 }));
        let fault = check(&[0i64, 4, 3, 5], 5).unwrap_err();
        assert_eq!(fault, OffsetFault::Decreasing { index: 2, value: 3, previous: 4 });
        assert_eq!(fault.slot(), 1, "slot 1 would have length -1");
        let fault = check(&[0i32, 2, 6], 5).unwrap_err();
        assert_eq!(fault, OffsetFault::PastEnd { index: 2, value: 6, len: 5 });
        assert_eq!(fault.slot(), 1);
        assert!(fault.describe().contains("past the end of the 5 children"), "{}", fault.describe());
    }

    #[test]
    fn splits_are_shared_from_zero_and_rebased_otherwise() {
        let offsets = OffsetBuffer::new(ScalarBuffer::from(vec![2i64, 4, 4, 7]));
        let sub = i64::into_splits(offsets.clone(), 1..3).unwrap();
        assert_eq!(&sub[..], [0, 0, 3], "a run starting past 0: copied and rebased");
        let shared = offsets.clone();
        let copy = i64::into_splits(offsets, 0..3).unwrap();
        assert_eq!(&copy[..], [0, 2, 2, 5], "shared elsewhere: copied and rebased");
        let ptr = shared.as_ptr();
        let adopted = i64::into_splits(shared, 0..3).unwrap();
        assert_eq!((&adopted[..], adopted.as_ptr()), (&[0i64, 2, 2, 5][..], ptr), "unshared: rebased in place");

        let from_zero = OffsetBuffer::new(ScalarBuffer::from(vec![0i64, 3, 3, 5]));
        let kept = from_zero.clone();
        let window = i64::into_splits(from_zero, 0..2).unwrap();
        assert_eq!((&window[..], window.as_ptr()), (&[0i64, 3, 3][..], kept.as_ptr()), "starting at 0: shared");
        assert!(window.is_foreign(), "a buffer the caller still holds is shared, never taken over");

        let narrow = OffsetBuffer::new(ScalarBuffer::from(vec![1i32, 3]));
        assert_eq!(&i32::into_splits(narrow, 0..1).unwrap()[..], [0, 2], "i32 offsets are widened");
    }

    #[test]
    fn string_offsets_are_shared_when_i64_and_never_rebased() {
        let wide = OffsetBuffer::new(ScalarBuffer::from(vec![0i64, 2, 5, 9]));
        let got = i64::string_offsets(&wide, 1..3).unwrap();
        assert_eq!((&got[..], got.as_ptr()), (&[2i64, 5, 9][..], wide[1..].as_ptr()));
        let narrow = OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 2, 5, 9]));
        assert_eq!(&i32::string_offsets(&narrow, 1..3).unwrap()[..], [2, 5, 9]);
    }
}
