//! Running one call safely: the panic hook, the watchdog for hung calls and memory, catching
//! panics with their location, deep copies of inputs, and describing a case as a reproducer.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use ragtime_core::{dispatch_dtype, DenseTensor, Dim, RaggedTensor, RowPartition, StringTensor, TensorType};
use ragtime_graph::Attr;

use crate::rng::Rng;
use crate::values::rebuilt;

/// A single call slower than this aborts the whole run (printing the case first).
pub(crate) const HUNG_CALL: Duration = Duration::from_secs(10);
/// Resident memory past which the run aborts with the case in progress (inputs are tiny: only an
/// allocation driven by a huge attribute or index gets here).
pub(crate) const MAX_RESIDENT: usize = 2 << 30;

thread_local! {
    /// True while [`catch`] runs a call on this thread: its panics are recorded, not printed.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// The last panic caught on this thread ("message at file:line").
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that records the message and location of panics inside [`catch`]
/// instead of printing one report per caught panic; other panics (the test's own assertions) go
/// to the default hook.
pub(crate) fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                return default(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".into());
            let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{message} at {location}")));
        }));
    });
}

/// What the watchdog knows about the call in progress.
pub(crate) type Current = Arc<Mutex<Option<(Instant, String)>>>;

/// Starts a thread that aborts the process (after printing the case) when one call hangs or its
/// memory runs away: neither can be unwound, and a silent timeout or an OOM kill would hide the
/// reproducer.
pub(crate) fn start_watchdog() -> Current {
    let current: Current = Arc::new(Mutex::new(None));
    let watched = Arc::clone(&current);
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(50));
        let guard = watched.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((start, case)) = guard.as_ref() {
            let why = if start.elapsed() > HUNG_CALL {
                format!("call hung for {HUNG_CALL:?}")
            } else if resident_bytes().is_some_and(|b| b > MAX_RESIDENT) {
                format!(
                    "memory passed {} MiB during (or, if freed memory was kept, after) this call",
                    MAX_RESIDENT >> 20
                )
            } else {
                continue;
            };
            // Written straight to stderr: the test harness's capture would be lost on exit.
            let _ = writeln!(std::io::stderr(), "robustness sweep: {why}:\n{case}");
            std::process::exit(101);
        }
    });
    current
}

/// The resident memory of this process, where `/proc` tells it (Linux).
fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// One call under `catch_unwind`, timed and watched; `Err` carries the panic message.
pub(crate) fn catch<R>(
    watch: &Current,
    stage: &str,
    case: &dyn Fn() -> String,
    f: impl FnOnce() -> R,
) -> (Result<R, String>, Duration) {
    *watch.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), format!("[{stage}] {}", case())));
    let start = Instant::now();
    CATCHING.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    let elapsed = start.elapsed();
    // Freed memory is not always returned to the system, so the watchdog may see a blow-up only
    // after the call that caused it; a call long enough to have touched gigabytes checks here.
    if elapsed > Duration::from_millis(20) && resident_bytes().is_some_and(|b| b > MAX_RESIDENT) {
        let case = format!("[{stage}] {}", case());
        let _ = writeln!(std::io::stderr(), "robustness sweep: memory passed {} MiB in:\n{case}", MAX_RESIDENT >> 20);
        std::process::exit(101);
    }
    *watch.lock().unwrap_or_else(|e| e.into_inner()) = None;
    let result = result.map_err(|_| LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "panic".into()));
    (result, elapsed)
}

/// A copy of `x` that shares no buffer with it, to detect in-place mutation.
pub(crate) fn deep_copy(x: &RaggedTensor) -> RaggedTensor {
    let fv = x.flat_values();
    let shape = fv.shape().to_vec();
    let flat = dispatch_dtype!(fv.dtype(),
    T => DenseTensor::from_vec(shape, fv.as_slice::<T>().expect("standard layout").to_vec()).expect("same shape"),
    string => {
        let s = fv.as_strings().expect("a string column");
        DenseTensor::String(StringTensor::from_strings(&s.iter().collect::<Vec<_>>(), shape).expect("same shape"))
    });
    RaggedTensor::new(flat, x.partitions().iter().map(rebuilt).collect()).expect("same structure")
}

/// Types for `infer`: the exact types of the inputs, or (sometimes) with known dims made unknown.
pub(crate) fn types_for(rng: &mut Rng, inputs: &[RaggedTensor]) -> Vec<TensorType> {
    let loosen = rng.chance(0.3);
    inputs
        .iter()
        .map(|x| {
            let mut t = TensorType::of(x);
            if loosen {
                for axis in 0..t.rank() {
                    if matches!(t.dims()[axis], Dim::Known(_)) && rng.chance(0.5) {
                        t = t.with_dim(axis, Dim::Unknown).expect("a known dim made unknown keeps the type valid");
                    }
                }
            }
            t
        })
        .collect()
}

/// Types as `int32[2, *], float32[]`.
pub(crate) fn show_types(types: &[TensorType]) -> String {
    types.iter().map(TensorType::to_string).collect::<Vec<_>>().join(", ")
}

/// A reproducer: the op with its attributes, and each input with its exact type, the type `infer`
/// was given, and (for ragged inputs) the nested row splits, marking partitions built with a
/// uniform row length.
pub(crate) fn describe(
    op: &str,
    attrs: &BTreeMap<String, Attr>,
    inputs: &[RaggedTensor],
    types: &[TensorType],
) -> String {
    let mut s = format!("op_from_name({op:?}, {attrs:?})\n");
    for (i, (x, t)) in inputs.iter().zip(types).enumerate() {
        let _ = write!(s, "  input {i}: {x}  type {}  infer given {t}", TensorType::of(x));
        if !x.is_dense() {
            let _ = write!(s, "  splits {:?}", x.nested_row_splits());
            let uniform: Vec<Option<usize>> = x.partitions().iter().map(RowPartition::uniform_row_length).collect();
            if uniform.iter().any(Option::is_some) {
                let _ = write!(s, "  uniform row lengths {uniform:?}");
            }
        }
        s.push('\n');
    }
    s
}
