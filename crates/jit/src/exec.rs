//! Fused ops run as machine code: the [`JitKernel`] op that wraps a `Composite` / `RowKernel`
//! with its compiled kernel, the process-wide kernel cache, the split of work across threads,
//! and [`lower_fused`], the pass that swaps fused ops for JIT kernels.
#![allow(unsafe_code)]

use std::any::Any;
use std::cell::RefCell;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use ragtime_core::compare::compare;
use ragtime_core::{dispatch_dtype, DenseTensor, Element, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_fused::{Composite, Layout, OperandKind, RowKernel, RowOutput, RowPooling};
use ragtime_graph::{FunctionGraph, Op, OpProperties, OpRef};
use ragtime_runtime::{parallel, KernelCache};
use rayon::prelude::*;

use crate::kernel::{FusedKernel, Jit};
use crate::lower::emit_kernel;
use crate::plan::{KernelPlan, Split, Target};
use crate::pooled::JitPooling;
use crate::spec::KernelSpec;

/// A compiled kernel with the plan it was emitted from.
type Compiled = (FusedKernel, Arc<KernelPlan>);

/// The process-wide kernel cache: every function's kernels, by spec.
fn cache() -> &'static KernelCache<KernelSpec, Compiled> {
    static CACHE: OnceLock<KernelCache<KernelSpec, Compiled>> = OnceLock::new();
    CACHE.get_or_init(|| KernelCache::new("JIT kernel cache"))
}

thread_local! {
    /// Each thread compiles into its own module (compiled code is never freed, so kernels
    /// outlive the module's use and may be shared through the cache). A compiler's working
    /// state, not a run-time setting: calls read their settings from their `ExecContext`.
    static JIT: RefCell<Option<Jit>> = const { RefCell::new(None) };
}

/// An output buffer a kernel fills: a `Vec` of the output's element type with room for its
/// values, not yet initialized.
trait OutputBuffer {
    fn as_mut_ptr(&mut self) -> *mut u8;
    /// The filled buffer as a tensor of `shape` (`n` elements).
    ///
    /// # Safety
    /// The kernel wrote the first `n` elements, and `n` is at most the capacity.
    unsafe fn finish(self: Box<Self>, n: usize, shape: Vec<usize>) -> Result<DenseTensor>;
}

impl<T: Element> OutputBuffer for Vec<T> {
    fn as_mut_ptr(&mut self) -> *mut u8 {
        Vec::as_mut_ptr(self).cast::<u8>()
    }

    unsafe fn finish(mut self: Box<Self>, n: usize, shape: Vec<usize>) -> Result<DenseTensor> {
        // SAFETY: the caller guarantees the first `n <= capacity` elements were written (with
        // values of `T`: bool outputs only ever get 0 or 1).
        unsafe { self.set_len(n) };
        DenseTensor::from_vec(shape, *self)
    }
}

/// Room for `n` values of `T` (a recycled buffer from `ragtime_core::pool` when one fits, else a
/// fallible allocation), charged to the call's memory budget like every data-sized buffer, and
/// not zeroed (the kernel writes every element).
fn output_buffer<T: Element>(ctx: &ExecContext, name: &str, n: usize) -> Result<Box<dyn OutputBuffer>> {
    Ok(Box::new(ctx.try_vec::<T>(name, n)?))
}

/// Empties the process-wide kernel cache, so the next compile of any graph compiles its kernels
/// anew (for measuring cold compiles; machine code already handed out stays valid).
pub fn clear_kernel_cache() {
    cache().clear();
}

/// The number of kernels in the process-wide cache.
pub fn cached_kernels() -> usize {
    cache().len()
}

/// The compiled kernel of `spec`, from the process-wide cache (keyed by the spec: scalar graph,
/// operand kinds, reductions, outputs and dtype) or compiled now.
pub fn kernel_for(spec: &KernelSpec) -> Result<FusedKernel> {
    compiled(spec).map(|(kernel, _)| kernel)
}

/// The kernel of `spec` and its plan for this machine, from the cache or planned and compiled
/// now, once per spec (`RAGTIME_JIT_PLAN=1` prints each plan compiled to stderr).
fn compiled(spec: &KernelSpec) -> Result<Compiled> {
    cache().get_or_compile(spec, || {
        let plan = Arc::new(KernelPlan::new(spec, Target::host()));
        if std::env::var_os("RAGTIME_JIT_PLAN").is_some() {
            eprintln!("{plan}");
        }
        let kernel = JIT.with(|cell| -> Result<FusedKernel> {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = Some(Jit::new().map_err(|e| Error::graph(format!("JIT: {e}")))?);
            }
            let jit = slot.as_mut().ok_or_else(|| Error::graph("JIT: no module"))?;
            jit.compile_fused(|b, p| emit_kernel(b, p, &plan)).map_err(|e| Error::graph(format!("JIT: {e}")))
        })?;
        Ok((kernel, plan))
    })
}

/// The thread count a function uses when none is given: `RAGTIME_THREADS`, else every core.
pub fn default_threads() -> usize {
    std::env::var("RAGTIME_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A fused op running as a JIT kernel; when the operands are not shaped as fusion assumed, it
/// runs the fused op's reference implementation instead.
#[derive(Debug, Clone)]
pub struct JitKernel {
    inner: OpRef,
    /// `Jit` + the fused op's name, built once: errors and printouts use it, calls never format.
    name: String,
    /// The plan the kernel was emitted from (its spec included).
    plan: Arc<KernelPlan>,
    kernel: FusedKernel,
    /// What the last call did (shared by clones of this op, not by other lowerings).
    stats: Arc<ExecStats>,
}

impl PartialEq for JitKernel {
    fn eq(&self, other: &Self) -> bool {
        self.inner.op_eq(&*other.inner)
    }
}

/// How a [`JitKernel`]'s calls ran: the threads their context gave them and the pieces the
/// work was cut into (one when it ran on the calling thread alone).
#[derive(Debug, Default)]
pub struct ExecStats {
    calls: AtomicUsize,
    last_threads: AtomicUsize,
    last_pieces: AtomicUsize,
}

impl ExecStats {
    /// Calls that ran the kernel (not the reference).
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }
    /// The thread count of the last call's context.
    pub fn last_threads(&self) -> usize {
        self.last_threads.load(Ordering::Relaxed)
    }
    /// The pieces the last call's work was cut into.
    pub fn last_pieces(&self) -> usize {
        self.last_pieces.load(Ordering::Relaxed)
    }
}

/// Buffer pointers shared by the threads of one kernel call.
struct Buffers {
    inputs: Vec<*const u8>,
    outputs: Vec<*mut u8>,
    splits: *const i64,
}

// SAFETY: the pointers are only dereferenced by the kernel, which reads inputs (never written
// during the call) and writes output ranges that differ between threads (`JitKernel::launch`
// gives each thread a disjoint range of elements or rows).
unsafe impl Sync for Buffers {}

impl Buffers {
    /// # Safety
    /// As [`FusedKernel::call`], for these buffers.
    unsafe fn launch(&self, kernel: FusedKernel, begin: usize, end: usize) -> bool {
        // SAFETY: forwarded to the caller.
        unsafe { kernel.call(&self.inputs, &self.outputs, self.splits, begin, end) }
    }
}

impl JitKernel {
    /// The compiled kernel (shared, through the cache, by every op with the same spec).
    pub fn kernel(&self) -> FusedKernel {
        self.kernel
    }

    /// The spec the kernel was compiled from.
    pub fn spec(&self) -> &KernelSpec {
        self.plan.spec()
    }

    /// The plan the kernel was emitted from.
    pub fn plan(&self) -> &KernelPlan {
        &self.plan
    }

    /// How its calls ran (threads, pieces).
    pub fn stats(&self) -> &ExecStats {
        &self.stats
    }

    /// The kernel's results on `inputs`, their per-row results folded over the next outer
    /// ragged axis where the kernel says so; `None` when the operands do not have the shapes the
    /// kernel assumes or an op faulted (the caller then runs the reference).
    fn kernel_outputs(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Option<Vec<RaggedTensor>>> {
        let Some(layout) = Layout::new(self.spec().operands(), inputs, self.spec().rows())? else {
            return Ok(None);
        };
        if self.spec().rows() && layout.item_width != self.spec().item_width() {
            return Ok(None);
        }
        let Some(outputs) = self.run(ctx, &layout)? else { return Ok(None) };
        // Reductions over the next outer ragged axis fold the per-row results the kernel wrote.
        Ok(Some(match self.inner.as_any().downcast_ref::<RowKernel>() {
            Some(k) if !k.outer_folds().is_empty() => k.fold_outer(ctx, outputs)?,
            _ => outputs,
        }))
    }

    /// Runs the kernel on `ctx`'s threads, its outputs charged to `ctx`'s budget; `None` when an
    /// op faulted (the caller then runs the reference, which reports the error as the
    /// interpreter does).
    fn run(&self, ctx: &ExecContext, layout: &Layout<'_>) -> Result<Option<Vec<RaggedTensor>>> {
        let spec = self.plan.spec();
        let reference = layout.reference;
        let total = reference.flat_values().len();
        let rows = spec.rows();
        let splits: &[i64] = match (rows, layout.row_splits()) {
            (true, Some(splits)) => splits,
            (true, None) => return Err(Error::graph("JIT: a row kernel over a dense space")),
            (false, _) => &[],
        };
        let nrows = splits.len().saturating_sub(1);
        // Values per item of a row kernel (`perform` checked the layout's against the spec's).
        let width = if rows { spec.item_width() } else { 1 };
        // Every bound the kernel relies on, checked before it runs.
        if rows && splits.last().map(|&s| s as usize * width) != Some(total) {
            return Err(Error::graph("JIT: the flat values do not end at the last row split"));
        }
        if layout.columns.len() != spec.operands().len() {
            return Err(Error::graph(format!(
                "JIT: {} operands for a kernel of {}",
                layout.columns.len(),
                spec.operands().len()
            )));
        }
        let mut inputs = Vec::with_capacity(layout.columns.len());
        for (k, (column, kind)) in layout.columns.iter().zip(spec.operands()).enumerate() {
            let dtype = spec.graph().inputs()[k];
            let data = dispatch_dtype!(dtype,
                T => column.as_slice::<T>().map(|s| (s.as_ptr().cast::<u8>(), s.len())),
                string => None)
            .ok_or_else(|| Error::graph(format!("JIT: operand {k} is not {dtype}")))?;
            let want = match kind {
                OperandKind::Full => total,
                OperandKind::Scalar => 1,
                OperandKind::PerRow => nrows * width,
            };
            if data.1 != want {
                return Err(Error::graph(format!("JIT: operand {k} has {} values, expected {want}", data.1)));
            }
            inputs.push(data.0);
        }
        let name = &self.name;
        let lengths: Vec<usize> = spec
            .outputs()
            .iter()
            .map(|o| match o {
                RowOutput::Elements(_) => total,
                RowOutput::Reduction { .. } => nrows * width,
            })
            .collect();
        let mut outputs: Vec<Box<dyn OutputBuffer>> = lengths
            .iter()
            .enumerate()
            .map(|(j, &n)| {
                dispatch_dtype!(spec.output_dtype(j),
                    T => output_buffer::<T>(ctx, name, n),
                    string => Err(Error::graph("JIT: string outputs are not lowered")))
            })
            .collect::<Result<_>>()?;
        let buffers = Buffers {
            inputs,
            outputs: outputs.iter_mut().map(|o| o.as_mut_ptr()).collect(),
            splits: if rows { splits.as_ptr() } else { std::ptr::null() },
        };
        let threads = ctx.threads();
        let ranges = match self.plan.split {
            Split::Rows => row_ranges(splits, threads),
            Split::Elements => flat_ranges(total, threads),
        };
        self.stats.calls.fetch_add(1, Ordering::Relaxed);
        self.stats.last_threads.store(threads, Ordering::Relaxed);
        self.stats.last_pieces.store(ranges.len(), Ordering::Relaxed);
        let launch = |rows: &Range<usize>| {
            // SAFETY: every input pointer addresses a buffer of the dtype the kernel reads (checked
            // above against the spec's graph) with the length the kernel indexes (full operands
            // `total` values, per-row ones `nrows * width`, scalars 1); outputs have room for
            // `total` or `nrows * width` elements of their dtype; for row kernels `splits` is a
            // validated partition (non-decreasing, from 0 to `total / width` items, checked
            // above) with `nrows + 1` entries and `end <= nrows`;
            // ranges of different calls are disjoint, so no two threads write the same element.
            unsafe { buffers.launch(self.kernel, rows.start, rows.end) }
        };
        let completed = if ranges.len() <= 1 {
            ranges.iter().all(launch)
        } else {
            parallel::pool(threads)?.install(|| ranges.par_iter().all(launch))
        };
        drop(buffers);
        if !completed {
            // An op faulted: the outputs are incomplete and dropped as they are (empty).
            return Ok(None);
        }
        let flat_shape = reference.flat_values().shape();
        spec.outputs()
            .iter()
            .zip(outputs.into_iter().zip(&lengths))
            .map(|(o, (buffer, &n))| {
                let shape = match *o {
                    RowOutput::Elements(_) => flat_shape.to_vec(),
                    RowOutput::Reduction { .. } => vec![nrows * width],
                };
                // SAFETY: every range completed, and the ranges cover every element `0..total`
                // (flat ranges) or every row `0..nrows` and with them every item
                // `splits[0]..splits[nrows]` = `0..total / width` (row ranges); the kernel writes
                // each element output at every value of every item and each reduction output at
                // every value of every row of its range; `n` is the length the buffer was made for.
                let flat = unsafe { buffer.finish(n, shape) }?;
                match *o {
                    RowOutput::Elements(_) => RaggedTensor::new(flat, reference.partitions().to_vec()),
                    RowOutput::Reduction { keepdims, .. } => layout.per_row_output(flat, keepdims),
                }
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
}

/// Element ranges for up to `threads` threads.
fn flat_ranges(total: usize, threads: usize) -> Vec<Range<usize>> {
    let parts = parallel::pieces(total, threads);
    let step = total.div_ceil(parts).max(1);
    (0..parts).map(|p| p * step..((p + 1) * step).min(total)).filter(|r| !r.is_empty() || total == 0).collect()
}

/// Row ranges for up to `threads` threads, balanced by values plus rows.
fn row_ranges(splits: &[i64], threads: usize) -> Vec<Range<usize>> {
    parallel::balanced_ranges(splits.len().saturating_sub(1), threads, |r| splits[r] as usize + r)
}

impl Op for JitKernel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        self.inner.infer(inputs)
    }

    fn keeps_uniform_rows(&self) -> bool {
        // Outputs keep the iteration space's partitions, as the fused op's do.
        self.inner.keeps_uniform_rows()
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        // A row kernel's rows as it sees them (rows along a trailing axis: a view of them).
        let outputs = match self.inner.as_any().downcast_ref::<RowKernel>() {
            Some(k) => k.on_rows(inputs, |rows| self.kernel_outputs(ctx, rows))?,
            None => self.kernel_outputs(ctx, inputs)?,
        };
        let Some(outputs) = outputs else {
            // Operands of another shape (the reference broadcasts them), or a fault (integer
            // division by zero, negative integer exponent): the reference implementation runs,
            // naming the op and the row as the interpreter does.
            return self.inner.perform(ctx, inputs);
        };
        if ctx.debug() {
            // `Mode::Debug`: the kernel and its reference side by side: the first element that
            // differs beyond the conformance tolerance is reported with both values.
            let reference = self.inner.perform(ctx, inputs)?;
            for (k, (want, got)) in reference.iter().zip(&outputs).enumerate() {
                compare(want, got).map_err(|why| {
                    Error::graph(format!(
                        "Mode::Debug: JIT kernel {} differs from its reference at output {k}: {why}",
                        self.name()
                    ))
                })?;
            }
        }
        Ok(outputs)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn inner_graph(&self) -> Option<&FunctionGraph> {
        self.inner.inner_graph()
    }

    fn properties(&self) -> OpProperties {
        self.inner.properties()
    }
}

/// The kernel spec of a fused op, if it is one the JIT lowers.
pub fn spec_of(op: &OpRef) -> Option<KernelSpec> {
    let any = op.as_any();
    if let Some(c) = any.downcast_ref::<Composite>() {
        let outputs: Vec<RowOutput> = c.graph().outputs().iter().map(|&r| RowOutput::Elements(r)).collect();
        return KernelSpec::new(c.graph(), c.operands(), &[], &outputs);
    }
    let k = any.downcast_ref::<RowKernel>()?;
    let spec = KernelSpec::new(k.graph(), k.operands(), k.reductions(), k.outputs())?.over_items(k.item_width());
    Some(match k.trailing_length() {
        Some(length) => spec.over_trailing_axis(length),
        None => spec,
    })
}

/// A `RowPooling` whose weights kernel the JIT lowers, with that kernel compiled (`None` for any
/// other op).
fn pooling_with_compiled_weights(op: &OpRef) -> Result<Option<JitPooling>> {
    let Some(weights) = op.as_any().downcast_ref::<RowPooling>().and_then(|p| p.weights()) else { return Ok(None) };
    let Some(spec) = spec_of(&ragtime_fused::op_ref(weights.clone())) else { return Ok(None) };
    let (kernel, _) = compiled(&spec)?;
    Ok(Some(JitPooling::new(op.clone(), kernel)))
}

/// Replaces every fused op the JIT can lower by a [`JitKernel`] (running on the threads of each
/// call's context; in a `Mode::Debug` context each call also runs the reference implementation
/// and compares); returns how many were lowered. Kernels come from the process-wide cache.
pub fn lower_fused(fg: &mut FunctionGraph) -> Result<usize> {
    let mut lowered = 0;
    for node in fg.toposort()? {
        let Some(apply) = fg.node(node) else { continue };
        if let Some(op) = pooling_with_compiled_weights(&apply.op)? {
            let (inputs, outputs) = (apply.inputs.clone(), apply.outputs.clone());
            let new = fg.add_node(Arc::new(op), &inputs)?;
            fg.replace_all(&outputs.into_iter().zip(new).collect::<Vec<_>>(), "jit")?;
            lowered += 1;
            continue;
        }
        if let Some(op) = crate::rows_add::hashed_bag_with_rows_add(&apply.op) {
            // Not a kernel: the bag's row sums compiled for a wider instruction set.
            let (inputs, outputs) = (apply.inputs.clone(), apply.outputs.clone());
            let new = fg.add_node(Arc::new(op), &inputs)?;
            fg.replace_all(&outputs.into_iter().zip(new).collect::<Vec<_>>(), "jit")?;
            lowered += 1;
            continue;
        }
        if let Some(op) = crate::prefetch::gather_reduce_with_prefetch(&apply.op) {
            // Not a kernel (not counted): the bag's table rows asked for a few bags ahead.
            let (inputs, outputs) = (apply.inputs.clone(), apply.outputs.clone());
            let new = fg.add_node(Arc::new(op), &inputs)?;
            fg.replace_all(&outputs.into_iter().zip(new).collect::<Vec<_>>(), "jit")?;
            continue;
        }
        let Some(spec) = spec_of(&apply.op) else { continue };
        let (inner, inputs, outputs) = (apply.op.clone(), apply.inputs.clone(), apply.outputs.clone());
        let (kernel, plan) = compiled(&spec)?;
        let name = format!("Jit{}", inner.name());
        let op = JitKernel { inner, name, plan, kernel, stats: Arc::default() };
        let new = fg.add_node(Arc::new(op), &inputs)?;
        let pairs: Vec<_> = outputs.into_iter().zip(new).collect();
        fg.replace_all(&pairs, "jit")?;
        lowered += 1;
    }
    fg.remove_dead();
    Ok(lowered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_by_values_plus_rows_and_elements_evenly() {
        let even: Vec<i64> = (0..=200_000).map(|r| r * 3).collect();
        let ranges = row_ranges(&even, 2);
        assert_eq!(ranges.len(), 2 * parallel::PIECES_PER_THREAD, "large calls are cut into pieces: {ranges:?}");
        assert!(ranges.iter().all(|r| r.len() == 25_000), "equal rows, equal pieces: {ranges:?}");
        assert_eq!(row_ranges(&[0], 8), vec![0..0], "zero rows: one empty range");
        assert_eq!(flat_ranges(10, 8), vec![0..10], "small inputs stay on one thread");
        assert_eq!(flat_ranges(0, 8), vec![0..0]);
        let flat = flat_ranges(1 << 22, 2);
        assert_eq!(flat.len(), 2 * parallel::PIECES_PER_THREAD);
        assert!(flat.windows(2).all(|w| w[0].end == w[1].start) && flat.last().unwrap().end == 1 << 22, "{flat:?}");
    }
}
