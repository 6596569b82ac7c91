//! `ExecContext`: the run-time settings of one call (threads, limits, memory budget, Debug flag,
//! current node), passed to every op's `perform` instead of living in thread-locals.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::limits::{self, Limits, INDEX_BYTES_PER_ELEMENT, MAX_ELEMENT_BYTES};
use crate::Result;

/// A call's memory budget as ops see it: what [`ExecContext::charge`] (and so `try_vec`,
/// `checked_len` and the string builders) charges. The accounting is the runtime's
/// (`ragtime_runtime::Budget`, one atomic counter shared by the call's nodes and worker
/// threads); this is the smallest interface the context needs to hold it, since the context
/// lives here, under `Op::perform`.
pub trait CallBudget: fmt::Debug + Send + Sync {
    /// Charges `bytes` for op `op`, refusing them (`resource_exhausted`, naming `op`) when they
    /// would pass the budget; refused bytes are not charged.
    fn charge(&self, op: &str, bytes: usize) -> Result<()>;

    /// The bytes charged so far.
    fn used(&self) -> usize;
}

/// What one call of a compiled function runs with: the threads its ops may use, the [`Limits`] in
/// force, its memory budget (every data-sized buffer an op allocates is charged to it, and one that
/// would pass it is refused before it is made), the Debug flag, and the node being run (for
/// errors). The runtime builds one per call (`ragtime_runtime::call_context`, which gives it a
/// fresh budget of `limits.call_budget`); cloning shares the budget.
///
/// ```
/// use ragtime_core::{limits::Limits, ExecContext};
/// let ctx = ExecContext::new(Limits::untrusted()).with_threads(2);
/// assert_eq!((ctx.threads(), ctx.budget_used()), (2, None), "no budget attached: nothing charged");
/// assert!(ctx.try_vec::<u64>("demo", 1 << 30).is_err(), "8 GiB pass the untrusted per-buffer limit");
/// ```
#[derive(Debug, Clone)]
pub struct ExecContext {
    threads: usize,
    limits: Limits,
    /// `None` outside a call: nothing is charged.
    budget: Option<Arc<dyn CallBudget>>,
    debug: bool,
    node: Option<Arc<str>>,
}

impl ExecContext {
    /// A context under `limits`, one thread, Debug off, and no budget until one is attached
    /// ([`ExecContext::with_budget`]; a call's context comes with one, see the type's docs).
    pub fn new(limits: Limits) -> Self {
        ExecContext { threads: 1, limits, budget: None, debug: false, node: None }
    }

    /// The context of code that runs outside any call (building input values, converting
    /// Arrow data, tests): [`Limits::trusted`], no budget, one thread.
    pub fn detached() -> &'static ExecContext {
        static DETACHED: OnceLock<ExecContext> = OnceLock::new();
        DETACHED.get_or_init(|| ExecContext::new(Limits::trusted()))
    }

    /// This context charging `budget` (shared by every clone made from it).
    pub fn with_budget(mut self, budget: Arc<dyn CallBudget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// This context under `limits` (the budget, if any, is kept).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// This context with up to `threads` threads (at least one).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// This context with the Debug flag (`Mode::Debug`: kernels check themselves against the
    /// reference implementation).
    pub fn with_debug(mut self, debug: bool) -> Self {
        self.debug = debug;
        self
    }

    /// This context while node `node` (its op and output, as errors name it) runs; shares the budget.
    pub fn at_node(&self, node: &Arc<str>) -> Self {
        ExecContext { node: Some(node.clone()), ..self.clone() }
    }

    /// The threads the call's ops may use.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether the call runs in `Mode::Debug`.
    pub fn debug(&self) -> bool {
        self.debug
    }

    /// The node being run, when the executor said.
    pub fn node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    /// The bytes charged so far to the call's budget (`None` outside a call).
    pub fn budget_used(&self) -> Option<usize> {
        self.budget.as_ref().map(|b| b.used())
    }

    /// Charges `bytes` to the call's budget (nothing outside a call), refusing them when they
    /// would pass its limit.
    pub fn charge(&self, op: &str, bytes: usize) -> Result<()> {
        match &self.budget {
            Some(budget) => budget.charge(op, bytes),
            None => Ok(()),
        }
    }

    /// See [`Limits::checked_size`].
    pub fn checked_size(&self, op: &str, shape: &[usize], bytes_per_element: usize) -> Result<usize> {
        self.limits.checked_size(op, shape, bytes_per_element)
    }

    /// See [`Limits::checked_bytes`].
    pub fn checked_bytes(&self, op: &str, bytes: usize, what: &str) -> Result<usize> {
        self.limits.checked_bytes(op, bytes, what)
    }

    /// See [`Limits::checked_rank`].
    pub fn checked_rank(&self, op: &str, rank: usize) -> Result<usize> {
        self.limits.checked_rank(op, rank)
    }

    /// The number of elements of `shape`, refusing a shape whose non-zero dimensions multiply
    /// past the elements limit, or whose elements with the index vectors built for them (row ids,
    /// source positions: 16 bytes each, plus 8 for the widest element) pass the per-buffer limit.
    /// The bytes counted are charged to the call's budget. Zero dimensions are left out of the
    /// check because builders still walk the other dimensions (`[2^40, 0]` has 2^40 rows).
    pub fn checked_len(&self, op: &str, shape: &[usize]) -> Result<usize> {
        let per_element = INDEX_BYTES_PER_ELEMENT + MAX_ELEMENT_BYTES;
        let n = self.limits.checked_size(op, shape, per_element)?;
        self.charge(op, n * per_element)?;
        Ok(n)
    }

    /// An empty vector with room for `n` items, allocated fallibly: more than the per-buffer
    /// limit, more than the call's budget, or more than the allocator can give, is an error from
    /// `op` instead of an abort. A large buffer comes from the [`pool`](crate::pool) of recycled
    /// ones when one fits (charged all the same).
    pub fn try_vec<T: Send + 'static>(&self, op: &str, n: usize) -> Result<Vec<T>> {
        let bytes = n.saturating_mul(std::mem::size_of::<T>());
        self.limits.checked_bytes(op, bytes, &format!("a buffer of {n} items"))?;
        self.charge(op, bytes)?;
        if let Some(v) = crate::pool::take(n) {
            return Ok(v);
        }
        let mut v = Vec::new();
        v.try_reserve_exact(n).map_err(|_| {
            limits::exhausted(op, format!("cannot allocate a buffer of {n} items ({bytes} bytes): out of memory"))
        })?;
        Ok(v)
    }

    /// `n` copies of `value`, allocated fallibly (see [`ExecContext::try_vec`]).
    pub fn try_filled<T: Clone + Send + 'static>(&self, op: &str, n: usize, value: T) -> Result<Vec<T>> {
        let mut v = self.try_vec(op, n)?;
        v.resize(n, value);
        Ok(v)
    }

    /// Collects an iterator of known length into a fallibly allocated vector (see [`ExecContext::try_vec`]).
    pub fn try_collect<T: Send + 'static>(&self, op: &str, items: impl ExactSizeIterator<Item = T>) -> Result<Vec<T>> {
        let mut v = self.try_vec(op, items.len())?;
        v.extend(items);
        Ok(v)
    }
}

impl Default for ExecContext {
    /// A call under [`Limits::trusted`], one thread.
    fn default() -> Self {
        ExecContext::new(Limits::trusted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn fallible_buffers_refuse_instead_of_aborting() {
        let ctx = ExecContext::new(Limits::untrusted());
        let limit = Limits::untrusted().buffer_bytes;
        assert_eq!(ctx.try_vec::<u64>("t", limit / 8 + 1).unwrap_err().kind(), ErrorKind::ResourceExhausted);
        assert_eq!(ctx.try_vec::<u8>("t", usize::MAX).unwrap_err().kind(), ErrorKind::ResourceExhausted);
        assert_eq!(ctx.try_filled("t", 3, 7u8).unwrap(), [7, 7, 7]);
        assert_eq!(ctx.try_collect("t", 0..4u32).unwrap(), [0, 1, 2, 3]);
        assert_eq!(ctx.checked_len("t", &[0, 5]).unwrap(), 0);
        assert!(ctx.checked_len("t", &[usize::MAX, 3]).is_err());
    }

    #[test]
    fn contexts_charge_the_budget_they_hold_and_share_it() {
        /// Counts what it is charged, up to 1000 bytes (the runtime's `Budget` is the real one).
        #[derive(Debug, Default)]
        struct Counter(std::sync::Mutex<usize>);
        impl CallBudget for Counter {
            fn charge(&self, op: &str, bytes: usize) -> Result<()> {
                let mut used = self.0.lock().unwrap();
                if *used + bytes > 1000 {
                    return Err(limits::exhausted(op, format!("{bytes} more bytes")));
                }
                *used += bytes;
                Ok(())
            }
            fn used(&self) -> usize {
                *self.0.lock().unwrap()
            }
        }
        let ctx = ExecContext::new(Limits::untrusted());
        assert_eq!(ctx.budget_used(), None);
        ctx.try_vec::<u64>("t", 1000).unwrap();
        let ctx = ctx.with_budget(Arc::new(Counter::default()));
        ctx.try_vec::<u64>("t", 100).unwrap();
        let at = ctx.at_node(&Arc::from("Tile{..} -> y"));
        assert_eq!(at.budget_used(), Some(800), "the node's context shares the call's budget");
        assert_eq!(at.try_vec::<u64>("t", 100).unwrap_err().kind(), ErrorKind::ResourceExhausted);
        assert_eq!(at.node(), Some("Tile{..} -> y"));
        let wider = ctx.with_limits(Limits::trusted());
        assert_eq!((wider.limits(), wider.budget_used()), (&Limits::trusted(), Some(800)));
        assert_eq!(ExecContext::detached().budget_used(), None);
    }
}
