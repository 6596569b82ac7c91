//! Isolation of the upstream Parquet and Arrow IPC readers: a panic they raise on a corrupt file
//! (an assertion or an `unwrap` on footer, page or column-chunk metadata they trust) is caught
//! and returned as text, so the run can report it as a typed error instead of ending the process.
//!
//! Why `catch_unwind` is sound here: the closure given to [`isolated`] reads one file through
//! reader state that only the current run owns (the file handle, the metadata, the record-batch
//! reader); after a caught panic that state is never used again (the caller turns the panic into
//! an error, the run returns it and drops the readers), so no half-updated reader is observed.
//! Nothing shared is mutated inside the closure but the allocator, which unwinding leaves
//! consistent. A build with `panic = "abort"` cannot catch anything: the readers' panics then
//! abort, as they would without this module.
//!
//! The default panic hook would still print the caught panic's message to stderr; a hook
//! installed once per process stays silent while the panicking thread is inside [`isolated`] and
//! hands every other panic to the hook that was installed before it (the standard one unless
//! the program set its own), so panics elsewhere are reported as before.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many [`isolated`] calls are running on this thread (they may nest). A thread-local
    /// because the panic hook is process-wide and only knows the panicking thread; it is the
    /// hook's bookkeeping, not a run-time setting (those travel in `ExecContext`).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

static QUIET_HOOK: Once = Once::new();

/// Installs, once per process, the hook that keeps isolated panics quiet.
fn install_quiet_hook() {
    QUIET_HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// Leaves an isolated region when dropped, also if the closure's result panics on drop.
struct Inside;

impl Inside {
    fn enter() -> Inside {
        DEPTH.with(|d| d.set(d.get() + 1));
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Runs `read`, returning the panic's message as `Err` if it panics (see the module text for why
/// the state `read` touched must be dropped, not reused, after an `Err`).
pub(super) fn isolated<T>(read: impl FnOnce() -> T) -> Result<T, String> {
    install_quiet_hook();
    let inside = Inside::enter();
    let result = panic::catch_unwind(AssertUnwindSafe(read));
    drop(inside);
    result.map_err(|payload| {
        if let Some(text) = payload.downcast_ref::<&str>() {
            (*text).to_string()
        } else if let Some(text) = payload.downcast_ref::<String>() {
            text.clone()
        } else {
            "the reader panicked".to_string()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_the_depth_is_restored() {
        assert_eq!(isolated(|| 7), Ok(7));
        assert_eq!(isolated(|| -> u8 { panic!("bad footer {}", 3) }), Err("bad footer 3".to_string()));
        assert_eq!(isolated(|| -> u8 { panic!("static text") }), Err("static text".to_string()));
        let nested = isolated(|| isolated(|| -> u8 { panic!("inner") }));
        assert_eq!(nested, Ok(Err("inner".to_string())));
        assert_eq!(DEPTH.with(Cell::get), 0);
    }
}
