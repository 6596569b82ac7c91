//! Resource limits: the one place where sizes computed from data or attributes are checked
//! (rank, elements, bytes) and where data-sized buffers are allocated fallibly.
//!
//! Every op that allocates a buffer whose size comes from an input value or an attribute checks
//! the size here first ([`checked_size`], [`DenseTensor::checked_len`]) and allocates it with
//! [`try_vec`], so that a small input can never ask for an absurd allocation, and an allocation the
//! machine cannot give is an `invalid_argument` error instead of an abort. `docs/safety.md` gives
//! the numbers and the reasons.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{DenseTensor, Error, Result};

/// The highest rank of a tensor or a type (dims, ragged ones included), TensorFlow's limit.
pub const MAX_RANK: usize = 254;

/// The most bytes one result (or one scratch buffer) of an op may take: 1 GiB. A 2 KB graph file
/// cannot ask for more than this per op, and a few such buffers fit a 4 GB address space.
pub const MAX_BYTES: usize = 1 << 30;

/// The bytes of scratch index vectors (row ids, source positions) that structure ops build per
/// output element, on top of the element itself; [`DenseTensor::checked_len`] counts them.
pub const INDEX_BYTES_PER_ELEMENT: usize = 16;

/// The worst element size of a numeric dtype (int64, float64), used where the dtype is not at hand.
pub const MAX_ELEMENT_BYTES: usize = 8;

/// The default per-call memory budget (4 GiB): the bytes of data-sized buffers one call of a
/// compiled function may allocate in all. It lets the benchmark workloads (10 million values)
/// run and keeps a small graph file from asking for many gigabytes over a chain of ops.
pub const DEFAULT_CALL_BUDGET: usize = 4 << 30;

static CALL_BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_CALL_BUDGET);

thread_local! {
    /// The budget of the call running on this thread: `(limit, bytes charged so far)`.
    static BUDGET: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// Sets the process-wide default per-call memory budget (used by calls whose function sets none).
pub fn set_default_call_budget(bytes: usize) {
    CALL_BUDGET.store(bytes, Ordering::Relaxed);
}

/// The process-wide default per-call memory budget.
pub fn default_call_budget() -> usize {
    CALL_BUDGET.load(Ordering::Relaxed)
}

/// Opens a memory budget of `limit` bytes for the call about to run on this thread; the budget
/// closes (and the enclosing one, if any, comes back) when the guard is dropped. While a budget is
/// open, every data-sized allocation of the ops ([`try_vec`], [`DenseTensor::checked_len`],
/// string builders) is charged to it, and one that would pass the limit is refused before it is
/// made.
pub fn enter_budget(limit: usize) -> BudgetGuard {
    let previous = BUDGET.with(|b| b.replace(Some((limit, 0))));
    BudgetGuard { previous }
}

/// Closes the budget opened by [`enter_budget`] when dropped.
#[derive(Debug)]
pub struct BudgetGuard {
    previous: Option<(usize, usize)>,
}

impl Drop for BudgetGuard {
    fn drop(&mut self) {
        BUDGET.with(|b| b.set(self.previous));
    }
}

/// The bytes charged so far to the budget open on this thread, if any.
pub fn budget_used() -> Option<usize> {
    BUDGET.with(|b| b.get().map(|(_, used)| used))
}

/// Charges `bytes` to the budget open on this thread (nothing when none is open), refusing them
/// (as `invalid_argument` from `op`) when they would pass its limit.
pub fn charge(op: &str, bytes: usize) -> Result<()> {
    BUDGET.with(|b| match b.get() {
        None => Ok(()),
        Some((limit, used)) => {
            let total = used.saturating_add(bytes);
            if total > limit {
                return Err(Error::argument(
                    op,
                    format!(
                        "{bytes} more bytes would exceed the call's memory budget of {limit} bytes ({used} already used)"
                    ),
                ));
            }
            b.set(Some((limit, total)));
            Ok(())
        }
    })
}

/// The number of elements of `shape`, refusing (as `invalid_argument` from `op`) a shape whose
/// non-zero dims multiply past [`DenseTensor::MAX_ELEMENTS`] or whose elements take more than
/// [`MAX_BYTES`] at `bytes_per_element` each. Zero dims are left out of the check (builders may
/// still walk the other dims: `[2^40, 0]` has 2^40 rows), but the result counts them (0 elements).
pub fn checked_size(op: &str, shape: &[usize], bytes_per_element: usize) -> Result<usize> {
    if shape.len() > MAX_RANK {
        return Err(rank_error(op, shape.len()));
    }
    let nonzero = shape.iter().filter(|&&d| d != 0).try_fold(1usize, |acc, &d| acc.checked_mul(d));
    match nonzero {
        Some(n) if n > DenseTensor::MAX_ELEMENTS => Err(Error::argument(
            op,
            format!("a result of shape {shape:?} would exceed {} elements", DenseTensor::MAX_ELEMENTS),
        )),
        Some(n) if n.checked_mul(bytes_per_element).is_none_or(|b| b > MAX_BYTES) => Err(Error::argument(
            op,
            format!(
                "a result of shape {shape:?} would take {} bytes ({bytes_per_element} per element), over the limit of {MAX_BYTES}",
                n.saturating_mul(bytes_per_element)
            ),
        )),
        Some(n) => Ok(if shape.contains(&0) { 0 } else { n }),
        None => Err(Error::argument(
            op,
            format!("a result of shape {shape:?} would exceed {} elements", DenseTensor::MAX_ELEMENTS),
        )),
    }
}

/// Refuses a byte count past [`MAX_BYTES`] (`what` says which buffer, e.g. "string bytes").
pub fn checked_bytes(op: &str, bytes: usize, what: &str) -> Result<usize> {
    if bytes > MAX_BYTES {
        return Err(Error::argument(op, format!("{what} would take {bytes} bytes, over the limit of {MAX_BYTES}")));
    }
    Ok(bytes)
}

/// Refuses a rank past [`MAX_RANK`].
pub fn checked_rank(op: &str, rank: usize) -> Result<usize> {
    if rank > MAX_RANK {
        return Err(rank_error(op, rank));
    }
    Ok(rank)
}

fn rank_error(op: &str, rank: usize) -> Error {
    Error::argument(op, format!("rank {rank} exceeds the limit of {MAX_RANK}"))
}

/// An empty vector with room for `n` items, allocated fallibly: more than [`MAX_BYTES`], more than
/// the call's memory budget ([`enter_budget`]), or more than the allocator can give, is an
/// `invalid_argument` error from `op` instead of an abort.
pub fn try_vec<T>(op: &str, n: usize) -> Result<Vec<T>> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    checked_bytes(op, bytes, &format!("a buffer of {n} items"))?;
    charge(op, bytes)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::argument(op, format!("cannot allocate a buffer of {n} items ({bytes} bytes)")))?;
    Ok(v)
}

/// `n` copies of `value`, allocated fallibly (see [`try_vec`]).
pub fn try_filled<T: Clone>(op: &str, n: usize, value: T) -> Result<Vec<T>> {
    let mut v = try_vec(op, n)?;
    v.resize(n, value);
    Ok(v)
}

/// Collects an iterator of known length into a fallibly allocated vector (see [`try_vec`]).
pub fn try_collect<T>(op: &str, items: impl ExactSizeIterator<Item = T>) -> Result<Vec<T>> {
    let mut v = try_vec(op, items.len())?;
    v.extend(items);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn sizes_are_checked_in_elements_and_bytes() {
        assert_eq!(checked_size("t", &[0, 5], 8).unwrap(), 0);
        assert_eq!(checked_size("t", &[3, 5], 8).unwrap(), 15);
        assert_eq!(checked_size("t", &[], 8).unwrap(), 1);
        let e = checked_size("t", &[usize::MAX, 3], 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = checked_size("t", &[1 << 29], 8).unwrap_err();
        assert!(e.to_string().contains("bytes"), "{e}");
        assert_eq!(checked_size("t", &[1 << 29], 1).unwrap(), 1 << 29, "the same count of bytes fits");
        let e = checked_size("t", &vec![1; MAX_RANK + 1], 1).unwrap_err();
        assert!(e.to_string().contains("rank"), "{e}");
    }

    #[test]
    fn fallible_buffers_refuse_instead_of_aborting() {
        assert_eq!(try_vec::<u64>("t", MAX_BYTES / 8 + 1).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(try_vec::<u8>("t", usize::MAX).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(try_filled("t", 3, 7u8).unwrap(), [7, 7, 7]);
        assert_eq!(try_collect("t", 0..4u32).unwrap(), [0, 1, 2, 3]);
        assert_eq!(checked_rank("t", MAX_RANK).unwrap(), MAX_RANK);
        assert_eq!(checked_rank("t", MAX_RANK + 1).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn budgets_charge_buffers_and_close_with_their_guard() {
        assert_eq!(budget_used(), None);
        {
            let _outer = enter_budget(1000);
            try_vec::<u64>("t", 100).unwrap();
            assert_eq!(budget_used(), Some(800));
            let e = try_vec::<u64>("t", 100).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.to_string().contains("memory budget of 1000 bytes (800 already used)"), "{e}");
            {
                let _inner = enter_budget(10);
                assert_eq!(budget_used(), Some(0));
            }
            assert_eq!(budget_used(), Some(800), "the enclosing budget comes back");
        }
        assert_eq!(budget_used(), None);
        try_vec::<u64>("t", 1000).unwrap();
    }
}
