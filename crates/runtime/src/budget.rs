//! The call budget's accounting: [`Budget`], the bytes one call may allocate and has allocated,
//! and the contexts that carry one ([`call_context`], [`with_fresh_budget`]).
//!
//! Ops are charged through their [`ExecContext`] (`try_vec`, `checked_len`, `charge`), which holds
//! the call's budget as a [`CallBudget`] (declared in `ragtime-core`, where the context is, since
//! `Op::perform` takes it): this crate decides how a call is budgeted, core only how an op asks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ragtime_core::limits::{Limits, HOW_TO_RAISE};
use ragtime_core::{CallBudget, Error, ExecContext, Result};

/// The bytes charged to one call, up to a limit. Shared by the contexts of the call's nodes and
/// safe to charge from the worker threads of a parallel region (one atomic counter).
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    used: AtomicUsize,
}

impl Budget {
    /// A budget of `limit` bytes, none used.
    pub fn new(limit: usize) -> Self {
        Budget { limit, used: AtomicUsize::new(0) }
    }

    /// The bytes the call may allocate in all.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl CallBudget for Budget {
    fn charge(&self, op: &str, bytes: usize) -> Result<()> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .map(drop)
            .map_err(|used| {
                Error::exhausted(
                    op,
                    format!(
                        "{bytes} more bytes would exceed the call's memory budget of {} bytes ({used} already used); {HOW_TO_RAISE}",
                        self.limit
                    ),
                )
            })
    }

    fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// The context of one call under `limits`: a fresh [`Budget`] of `limits.call_budget`, one
/// thread, Debug off (the executor's caller adds its threads and Debug flag).
///
/// ```
/// use ragtime_core::limits::Limits;
/// let ctx = ragtime_runtime::call_context(Limits::untrusted().with_call_budget(1000)).with_threads(2);
/// let _kept: Vec<u64> = ctx.try_vec("demo", 100)?;
/// assert_eq!(ctx.budget_used(), Some(800));
/// assert!(ctx.try_vec::<u64>("demo", 100).is_err(), "800 + 800 bytes pass the budget");
/// # Ok::<(), ragtime_core::Error>(())
/// ```
pub fn call_context(limits: Limits) -> ExecContext {
    ExecContext::new(limits).with_budget(Arc::new(Budget::new(limits.call_budget)))
}

/// `ctx`'s settings with a fresh budget of `limit` bytes (the replays of `Mode::Debug`, which
/// must not eat the call's budget).
pub fn with_fresh_budget(ctx: &ExecContext, limit: usize) -> ExecContext {
    ctx.clone().with_limits(ctx.limits().with_call_budget(limit)).with_budget(Arc::new(Budget::new(limit)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_charge_buffers_and_are_shared_by_the_nodes_of_a_call() {
        let ctx = call_context(Limits::untrusted().with_call_budget(1000));
        ctx.try_vec::<u64>("t", 100).unwrap();
        assert_eq!(ctx.budget_used(), Some(800));
        let node: Arc<str> = Arc::from("Tile{..} -> y");
        let at = ctx.at_node(&node);
        let e = at.try_vec::<u64>("t", 100).unwrap_err();
        assert!(e.to_string().contains("memory budget of 1000 bytes (800 already used)"), "{e}");
        assert_eq!(e.kind(), ragtime_core::ErrorKind::ResourceExhausted);
        assert_eq!(at.node(), Some("Tile{..} -> y"));
        let fresh = with_fresh_budget(&ctx, 10);
        assert_eq!(fresh.budget_used(), Some(0));
        assert_eq!(fresh.limits().call_budget, 10);
        assert_eq!(ctx.budget_used(), Some(800), "a fresh budget leaves the call's alone");
        assert_eq!(ExecContext::detached().budget_used(), None);
        ExecContext::detached().try_vec::<u64>("t", 1000).unwrap();
    }

    #[test]
    fn worker_threads_charge_one_budget() {
        let ctx = call_context(Limits::untrusted().with_call_budget(1 << 20));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..64 {
                        ctx.charge("t", 1024).unwrap();
                    }
                });
            }
        });
        assert_eq!(ctx.budget_used(), Some(4 * 64 * 1024));
        assert!(ctx.charge("t", 1 << 20).is_err());
    }
}
