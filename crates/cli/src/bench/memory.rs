//! Allocation accounting for `ragtime bench`: a counting global allocator (the `ragtime` binary
//! installs it) and the peak bytes allocated during a measured call, next to its outputs' bytes.
//!
//! Why a counting allocator rather than glibc's statistics: `mallinfo2` reports only what is in use
//! now (no peak, so a call's scratch freed before it returns would be missed), and its arena
//! figures include memory glibc keeps for reuse (`retain_freed_memory`). Counting the requested
//! bytes at the global allocator sees every Rust allocation of every thread, exactly, and its peak
//! can be reset before a call. It forwards each method to `System` unchanged (`alloc_zeroed` stays
//! `calloc`, `realloc` stays in place), so timings are those of the plain allocator plus one
//! relaxed atomic add per allocation and free (the peak is tracked only while a call is measured). Memory the JIT maps for machine code is not a Rust
//! allocation and is not counted.
//!
//! Crates offering the same were not usable as they are: `peak_alloc` turns `alloc_zeroed` into
//! `malloc` + `memset` and every `realloc` into a copy (it would change the timings), `cap` has no
//! resettable peak, `allocation-counter` counts the calling thread only (the kernels run on rayon
//! workers) and `tracking-allocator` adds a header to each block and implements no `realloc`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use ragtime::estimate::ValueSize;
use ragtime::{Function, RaggedTensor};

/// Bytes currently allocated through [`CountingAllocator`].
static CURRENT: AtomicUsize = AtomicUsize::new(0);
/// The most bytes allocated at once since the last [`measure`] began.
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Set by the first allocation through [`CountingAllocator`]: whether it is the global allocator.
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Whether a [`measure`] is running: only then is the peak tracked (a compare-and-swap loop per
/// allocation), so timed calls pay one relaxed add per allocation and free, not that loop.
static MEASURING: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting the bytes it hands out; install it with `#[global_allocator]`.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAllocator;

impl CountingAllocator {
    fn added(size: usize) {
        let now = CURRENT.fetch_add(size, Ordering::Relaxed).wrapping_add(size);
        if MEASURING.load(Ordering::Relaxed) {
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
    }

    fn removed(size: usize) {
        CURRENT.fetch_sub(size, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards its arguments to `System` unchanged and returns its result, so the
// `GlobalAlloc` contract is `System`'s; the counters are plain atomics and never allocate.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            Self::added(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            Self::added(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        Self::removed(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`; the caller's contract is passed on.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            // Counted as the change in size: a copying realloc's transient double is glibc's, not
            // the caller's request.
            match new_size.checked_sub(layout.size()) {
                Some(grown) => Self::added(grown),
                None => Self::removed(layout.size() - new_size),
            }
        }
        new
    }
}

/// Whether the running binary counts allocations (the `ragtime` binary does; the Python console
/// script and test binaries do not, and then no allocation figure is reported).
pub fn counting() -> bool {
    if !INSTALLED.load(Ordering::Relaxed) {
        let probe = std::hint::black_box(vec![0u8; 4096]);
        INSTALLED.store(CURRENT.load(Ordering::Relaxed) >= probe.len(), Ordering::Relaxed);
    }
    INSTALLED.load(Ordering::Relaxed)
}

/// The peak bytes allocated while `f` ran, above what was allocated when it began (the scratch it
/// freed included), or `None` when allocations are not counted. Measurements must not overlap
/// (the bench measures one call at a time).
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Option<usize>) {
    if !counting() {
        return (f(), None);
    }
    let start = CURRENT.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    MEASURING.store(true, Ordering::SeqCst);
    let out = f();
    MEASURING.store(false, Ordering::SeqCst);
    (out, Some(PEAK.load(Ordering::Relaxed).saturating_sub(start)))
}

/// What the measured calls of one workload allocated (the largest figure over its calls).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallMemory {
    /// Peak bytes allocated by a call whose outputs' buffers were not handed back: its outputs
    /// plus its scratch.
    pub fresh_peak: Option<usize>,
    /// Peak bytes allocated by a call made after `Function::recycle` handed the previous outputs
    /// back (the buffer pool serves the outputs): its scratch, in the steady state of a loop.
    pub recycled_peak: Option<usize>,
    /// The bytes of the outputs' buffers (`RaggedTensor::buffer_bytes`).
    pub output_bytes: Option<usize>,
    /// The bytes of the call's inputs' buffers.
    pub input_bytes: Option<usize>,
    /// `Function::estimate_memory`'s estimate for the call's inputs, made before the call.
    pub estimate: Option<usize>,
    /// `Function::estimate_memory`'s upper bound, when it gives one.
    pub upper_bound: Option<usize>,
}

impl CallMemory {
    fn merge(&mut self, other: CallMemory) {
        let max = |a: Option<usize>, b: Option<usize>| a.max(b);
        self.fresh_peak = max(self.fresh_peak, other.fresh_peak);
        self.recycled_peak = max(self.recycled_peak, other.recycled_peak);
        self.output_bytes = max(self.output_bytes, other.output_bytes);
        self.input_bytes = max(self.input_bytes, other.input_bytes);
        self.estimate = max(self.estimate, other.estimate);
        self.upper_bound = max(self.upper_bound, other.upper_bound);
    }

    /// Appends the figures as named sizes (`alloc_peak_bytes`, `alloc_peak_recycled_bytes`,
    /// `output_bytes`, `input_bytes`, `alloc_estimate_bytes`, `alloc_upper_bound_bytes`), which the JSON reports
    /// beside the input's size.
    pub fn annotate(self, size: &mut Vec<(&'static str, usize)>) {
        let named = [
            ("alloc_peak_bytes", self.fresh_peak),
            ("alloc_peak_recycled_bytes", self.recycled_peak),
            ("output_bytes", self.output_bytes),
            ("input_bytes", self.input_bytes),
            ("alloc_estimate_bytes", self.estimate),
            ("alloc_upper_bound_bytes", self.upper_bound),
        ];
        for (name, value) in named {
            if let Some(v) = value {
                size.retain(|(n, _)| *n != name);
                size.push((name, v));
            }
        }
    }
}

/// The figures of the workload being run, recorded by the timing helpers and taken by
/// `Bench::run` (the bench runs one workload at a time).
static RECORDED: Mutex<CallMemory> = Mutex::new(CallMemory {
    fresh_peak: None,
    recycled_peak: None,
    output_bytes: None,
    input_bytes: None,
    estimate: None,
    upper_bound: None,
});

/// Records one measured call.
pub fn record(memory: CallMemory) {
    if let Ok(mut recorded) = RECORDED.lock() {
        recorded.merge(memory);
    }
}

/// Takes (and clears) what was recorded since the last call.
pub fn take() -> CallMemory {
    RECORDED.lock().map(|mut r| std::mem::take(&mut *r)).unwrap_or_default()
}

/// The bytes of `values`' buffers (`RaggedTensor::buffer_bytes`).
pub fn output_bytes(values: &[RaggedTensor]) -> usize {
    values.iter().map(RaggedTensor::buffer_bytes).fold(0, usize::saturating_add)
}

/// Runs one call with fresh outputs under [`measure`] and records its peak and outputs' bytes.
pub fn measured_call(call: impl FnOnce() -> ragtime::Result<Vec<RaggedTensor>>) -> ragtime::Result<Vec<RaggedTensor>> {
    let (outputs, peak) = measure(call);
    let outputs = outputs?;
    record(CallMemory { fresh_peak: peak, output_bytes: peak.map(|_| output_bytes(&outputs)), ..Default::default() });
    Ok(outputs)
}

/// Records the bytes of `inputs` and what `f.estimate_memory` predicts for them (an error
/// records no prediction: the call itself reports it).
pub fn record_estimate(f: &Function, inputs: &[RaggedTensor]) {
    let sizes: Vec<ValueSize> = inputs.iter().map(ValueSize::of).collect();
    let input_bytes = Some(output_bytes(inputs));
    match f.estimate_memory(&sizes) {
        Ok(predicted) => record(CallMemory {
            input_bytes,
            estimate: Some(predicted.estimate),
            upper_bound: predicted.upper_bound,
            ..Default::default()
        }),
        Err(_) => record(CallMemory { input_bytes, ..Default::default() }),
    }
}
