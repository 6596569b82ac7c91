//! Recycled buffers: the process-wide pool of large buffers callers handed back
//! ([`recycle`], `Function::recycle`), from which every op's fallible allocation
//! ([`ExecContext::try_vec`](crate::ExecContext::try_vec)) is served before the allocator, so
//! repeated calls write into memory that is already mapped instead of paying page faults on
//! fresh pages (one per 4 KiB written). JIT kernels and reference ops take from the same pool.
//!
//! Only buffers of at least [`MIN_BYTES`] enter (smaller ones cost the allocator nothing worth
//! saving), at most [`MAX_BUFFERS`] are kept and [`MAX_BYTES`] in all; a buffer is handed out only
//! for a request of at least half its capacity, so a small output never pins a big buffer.
//! [`release`] empties the pool.

use std::any::{Any, TypeId};
use std::sync::Mutex;

use crate::{dispatch_dtype, RaggedTensor};

/// Buffers smaller than this are not kept: the allocator serves them from memory it keeps anyway.
pub const MIN_BYTES: usize = 64 << 10;
/// Buffers kept at most.
pub const MAX_BUFFERS: usize = 32;
/// Bytes kept at most (capacities, over every element type).
pub const MAX_BYTES: usize = 2 << 30;

/// A kept buffer: a `Vec<T>` behind `Any`, with its element type and capacity in bytes.
struct Kept {
    type_id: TypeId,
    capacity: usize,
    buffer: Box<dyn Any + Send>,
}

static POOL: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

fn pool() -> std::sync::MutexGuard<'static, Vec<Kept>> {
    // A panic while holding the lock leaves a list of whole buffers: still consistent.
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An empty buffer with room for `n` items of `T` from the pool: the smallest kept one that fits
/// and is not more than twice `n`; `None` when there is none (or `n` is below [`MIN_BYTES`]).
pub fn take<T: Send + 'static>(n: usize) -> Option<Vec<T>> {
    let bytes = n.checked_mul(std::mem::size_of::<T>())?;
    if bytes < MIN_BYTES {
        return None;
    }
    let mut kept = pool();
    let best = kept
        .iter()
        .enumerate()
        .filter(|(_, k)| k.type_id == TypeId::of::<Vec<T>>() && k.capacity >= bytes && k.capacity / 2 <= bytes)
        .min_by_key(|(_, k)| k.capacity)
        .map(|(i, _)| i)?;
    let k = kept.swap_remove(best);
    drop(kept);
    let mut v = *k.buffer.downcast::<Vec<T>>().ok()?;
    v.clear();
    Some(v)
}

/// Keeps `buffer` for a later [`take`] when it is large enough and the pool has room; drops it
/// otherwise.
pub fn give<T: Send + 'static>(buffer: Vec<T>) {
    let capacity = buffer.capacity().saturating_mul(std::mem::size_of::<T>());
    if capacity < MIN_BYTES {
        return;
    }
    let mut kept = pool();
    let held: usize = kept.iter().map(|k| k.capacity).sum();
    if kept.len() < MAX_BUFFERS && held.saturating_add(capacity) <= MAX_BYTES {
        kept.push(Kept { type_id: TypeId::of::<Vec<T>>(), capacity, buffer: Box::new(buffer) });
    }
}

/// Hands the flat values' buffer of a value the caller no longer needs to the pool. Only a buffer
/// nobody else holds is taken (a tensor sharing its buffer with another value, or borrowing it
/// from Arrow, is just dropped), so a recycled buffer is never one the caller can still read.
pub fn recycle(value: RaggedTensor) {
    let flat = value.into_flat_values();
    dispatch_dtype!(flat.dtype(),
        T => {
            if let Ok(v) = flat.try_into_buffer::<T>() {
                give(v);
            }
        },
        string => {})
}

/// Drops every kept buffer, giving the memory back to the allocator.
pub fn release() {
    pool().clear();
}

/// The number of buffers and their bytes (capacities) kept now.
pub fn kept() -> (usize, usize) {
    let kept = pool();
    (kept.len(), kept.iter().map(|k| k.capacity).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the pool tests one at a time: they share the process-wide pool.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn buffers_come_back_by_type_and_size() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        release();
        let n = 2 * MIN_BYTES / 4;
        let v: Vec<f32> = Vec::with_capacity(n);
        let at = v.as_ptr();
        give(v);
        assert_eq!(kept(), (1, n * 4), "a buffer of twice MIN_BYTES is kept");
        assert!(take::<i32>(n).is_none(), "a buffer of f32 is never handed out as i32");
        assert!(take::<f32>(n + 1).is_none(), "too small for n + 1 items");
        assert!(take::<f32>(n / 2 - 1).is_none(), "more than twice the request");
        let back = take::<f32>(n / 2).expect("the kept buffer serves half its capacity");
        assert_eq!((back.as_ptr(), back.len(), back.capacity()), (at, 0, n));
        assert_eq!(kept(), (0, 0));
        give(Vec::<u8>::with_capacity(MIN_BYTES - 1));
        assert_eq!(kept(), (0, 0), "small buffers are not kept");
        assert!(take::<u8>(16).is_none(), "small requests go to the allocator");
    }

    #[test]
    fn the_pool_is_bounded_in_count() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        release();
        for _ in 0..MAX_BUFFERS + 3 {
            give(Vec::<u8>::with_capacity(MIN_BYTES));
        }
        assert_eq!(kept(), (MAX_BUFFERS, MAX_BUFFERS * MIN_BYTES));
        release();
        assert_eq!(kept(), (0, 0));
    }
}
