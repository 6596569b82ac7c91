//! `SharedSlice`: the one shared, immutable buffer type behind numeric values, row splits and
//! string columns, owned either by ragtime (a `Vec`) or by anyone else (an Arrow buffer).
//!
//! A value that arrives from another library (an Arrow array read from Parquet, a `RecordBatch`
//! column) is wrapped as it is: the foreign owner stays alive as long as some tensor views it, and
//! its memory is never written. Only a buffer ragtime allocated itself, and that nobody else
//! holds, can be handed back as a `Vec` ([`SharedSlice::try_into_vec`]) for reuse.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// Who keeps the memory of a [`SharedSlice`] alive.
enum Owner<T: 'static> {
    /// A buffer ragtime allocated: it can become a `Vec` again when no one else holds it.
    Vec(Arc<Vec<T>>),
    /// An `Arc<[T]>` (possibly held elsewhere): read in place, never written, never recycled.
    Slice(Arc<[T]>),
    /// Memory owned by another library (an Arrow `ScalarBuffer`, an `Arc<[T]>`, ...): read in
    /// place, never written, never recycled.
    Foreign(Arc<dyn AsRef<[T]> + Send + Sync>),
}

impl<T: 'static> Clone for Owner<T> {
    fn clone(&self) -> Self {
        match self {
            Owner::Vec(v) => Owner::Vec(v.clone()),
            Owner::Slice(s) => Owner::Slice(s.clone()),
            Owner::Foreign(f) => Owner::Foreign(f.clone()),
        }
    }
}

/// An immutable, cheaply clonable view of `[T]`: an owner (a ragtime `Vec`, an `Arc<[T]>` or a
/// foreign buffer) plus the sub-range viewed, so clones and slices share memory instead of copying it.
///
/// A foreign owner's `as_ref()` must return the same slice on every call, as every buffer type
/// does (Arrow's `ScalarBuffer` and `Buffer`, `Vec`, `Arc<[T]>`, `Box<[T]>`); an owner whose
/// slice shrinks after construction is a logic error that makes reads panic.
///
/// ```
/// use std::sync::Arc;
/// use ragtime_core::SharedSlice;
///
/// let owned = SharedSlice::from_vec(vec![1, 2, 3, 4]);
/// let tail = owned.slice(2..4).unwrap();
/// assert_eq!((&tail[..], tail.as_ptr()), (&[3, 4][..], owned[2..].as_ptr()), "slices share memory");
///
/// let foreign = SharedSlice::from_owner(Arc::<[i32]>::from(vec![5, 6]));
/// assert!(foreign.is_foreign());
/// assert!(foreign.try_into_vec().is_err(), "a foreign buffer is never handed out for reuse");
/// ```
pub struct SharedSlice<T: 'static> {
    owner: Owner<T>,
    start: usize,
    len: usize,
}

impl<T: 'static> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        SharedSlice { owner: self.owner.clone(), start: self.start, len: self.len }
    }
}

impl<T: Send + Sync + 'static> SharedSlice<T> {
    /// A ragtime-owned buffer of `data` (no copy).
    pub fn from_vec(data: Vec<T>) -> Self {
        let len = data.len();
        SharedSlice { owner: Owner::Vec(Arc::new(data)), start: 0, len }
    }

    /// Views all of a foreign buffer without copying it; `owner` is kept alive by the view and
    /// its clones, and its memory is never written.
    pub fn from_owner<O: AsRef<[T]> + Send + Sync + 'static>(owner: O) -> Self {
        Self::from_shared_owner(Arc::new(owner))
    }

    /// [`SharedSlice::from_owner`] for an owner already behind an `Arc`.
    pub fn from_shared_owner(owner: Arc<dyn AsRef<[T]> + Send + Sync>) -> Self {
        let len = (*owner).as_ref().len();
        SharedSlice { owner: Owner::Foreign(owner), start: 0, len }
    }
}

impl<T: 'static> SharedSlice<T> {
    /// The elements viewed.
    #[inline(always)]
    pub fn as_slice(&self) -> &[T] {
        match &self.owner {
            Owner::Vec(v) => &v[self.start..self.start + self.len],
            Owner::Slice(s) => &s[self.start..self.start + self.len],
            Owner::Foreign(f) => Self::foreign_slice(&**f, self.start, self.len),
        }
    }

    /// The view of a foreign owner (out of line: the `Vec` and `Arc<[T]>` cases are the hot ones).
    #[inline(never)]
    fn foreign_slice(owner: &(dyn AsRef<[T]> + Send + Sync), start: usize, len: usize) -> &[T] {
        owner
            .as_ref()
            .get(start..start + len)
            .expect("a SharedSlice owner's as_ref() must return the same slice on every call")
    }

    /// Number of elements viewed.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no element is viewed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements `range` of this view (indices relative to it), sharing the memory; `None`
    /// when the range is reversed or reaches past the end.
    pub fn slice(&self, range: Range<usize>) -> Option<Self> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        Some(SharedSlice { owner: self.owner.clone(), start: self.start + range.start, len: range.len() })
    }

    /// True when ragtime did not allocate the memory ([`SharedSlice::from_owner`], an `Arc<[T]>`):
    /// it is never written or recycled.
    pub fn is_foreign(&self) -> bool {
        !matches!(self.owner, Owner::Vec(_))
    }

    /// The buffer as a `Vec` (its first `len()` elements, no copy) when ragtime allocated it, no
    /// other value holds it and this view starts at its beginning: for recycling buffers.
    /// Otherwise (a foreign buffer, a shared one, a view into the middle) `self` comes back.
    pub fn try_into_vec(self) -> std::result::Result<Vec<T>, Self> {
        match self.owner {
            Owner::Vec(v) if self.start == 0 => match Arc::try_unwrap(v) {
                Ok(mut data) => {
                    data.truncate(self.len);
                    Ok(data)
                }
                Err(v) => Err(SharedSlice { owner: Owner::Vec(v), start: 0, len: self.len }),
            },
            owner => Err(SharedSlice { owner, start: self.start, len: self.len }),
        }
    }
}

impl<T: 'static> Deref for SharedSlice<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: 'static> AsRef<[T]> for SharedSlice<T> {
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Send + Sync + 'static> Default for SharedSlice<T> {
    fn default() -> Self {
        Self::from_vec(Vec::new())
    }
}

impl<T: Send + Sync + 'static> From<Vec<T>> for SharedSlice<T> {
    fn from(data: Vec<T>) -> Self {
        Self::from_vec(data)
    }
}

impl<T: Send + Sync + 'static> From<Arc<[T]>> for SharedSlice<T> {
    /// Shares the `Arc` (it may be held elsewhere, so it is never written or recycled).
    fn from(data: Arc<[T]>) -> Self {
        let len = data.len();
        SharedSlice { owner: Owner::Slice(data), start: 0, len }
    }
}

impl<T: Send + Sync + 'static> FromIterator<T> for SharedSlice<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self::from_vec(iter.into_iter().collect())
    }
}

impl<T: PartialEq + 'static> PartialEq for SharedSlice<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: fmt::Display + 'static> fmt::Debug for SharedSlice<T> {
    /// The elements, summarized past 1,000 like tensors.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::literal::summarize_list(self.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_share_memory_and_check_their_bounds() {
        let all = SharedSlice::from_vec((0..10).collect::<Vec<i64>>());
        let middle = all.slice(2..7).unwrap();
        assert_eq!(&middle[..], &[2, 3, 4, 5, 6]);
        assert_eq!(middle.as_ptr(), all[2..].as_ptr());
        let inner = middle.slice(1..3).unwrap();
        assert_eq!((&inner[..], inner.as_ptr()), (&[3i64, 4][..], all[3..].as_ptr()), "a slice of a slice");
        assert!(middle.slice(3..6).is_none(), "past the end of the view, though inside the owner");
        let reversed = std::ops::Range { start: 3, end: 2 };
        assert!(middle.slice(reversed).is_none(), "reversed");
        assert!(middle.slice(5..5).unwrap().is_empty());
    }

    #[test]
    fn only_a_unique_ragtime_buffer_from_its_start_becomes_a_vec() {
        let v = vec![1u32, 2, 3];
        let ptr = v.as_ptr();
        let owned = SharedSlice::from_vec(v);
        let held = owned.clone();
        let owned = owned.try_into_vec().expect_err("a clone holds it");
        drop(held);
        let back = owned.try_into_vec().unwrap();
        assert_eq!((back.as_ptr(), back.as_slice()), (ptr, &[1u32, 2, 3][..]), "the same allocation");

        let head = SharedSlice::from_vec(vec![1u32, 2, 3]).slice(0..2).unwrap();
        assert_eq!(head.try_into_vec().unwrap(), [1, 2], "a view of the front: truncated, no copy");
        let tail = SharedSlice::from_vec(vec![1u32, 2, 3]).slice(1..3).unwrap();
        assert_eq!(&tail.try_into_vec().unwrap_err()[..], &[2, 3], "a view into the middle stays a view");

        let foreign = SharedSlice::from_owner(vec![1u32, 2, 3]);
        assert!(foreign.is_foreign());
        assert_eq!(&foreign.try_into_vec().unwrap_err()[..], &[1, 2, 3], "foreign memory is never recycled");
    }

    #[test]
    fn foreign_owners_stay_alive_with_their_views() {
        let owner: Arc<[f64]> = Arc::from(vec![0.5, 1.5, 2.5]);
        let ptr = owner.as_ptr();
        let view = SharedSlice::from(owner).slice(1..3).unwrap();
        assert_eq!((&view[..], view.as_ptr()), (&[1.5, 2.5][..], ptr.wrapping_add(1)));
        assert_eq!(format!("{view:?}"), "[1.5, 2.5]");
        assert_eq!(view, SharedSlice::from_vec(vec![1.5, 2.5]), "equality compares elements, not owners");
    }
}
