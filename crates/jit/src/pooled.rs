//! [`JitPooling`]: a `RowPooling` whose weights come from a fused-in row kernel (W9: the softmax
//! of each session's events), with that kernel running as JIT machine code block by block into
//! the pooling's scratch buffer: the weights of a few thousand elements at a time, read by the
//! pooling while they are in cache, never a per-element weights buffer.
#![allow(unsafe_code)]

use std::any::Any;

use ragtime_core::compare::compare;
use ragtime_core::{dispatch_dtype, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_fused::{Layout, OperandKind, RowKernel, RowPooling};
use ragtime_graph::{FunctionGraph, Op, OpProperties, OpRef};

use crate::kernel::FusedKernel;

/// A `RowPooling` with a weights kernel, the kernel compiled (see the module docs); when the
/// operands are not shaped as fusion assumed, or the kernel faults, the fused op's reference
/// runs instead.
#[derive(Debug, Clone)]
pub struct JitPooling {
    /// The `RowPooling` (with its weights kernel).
    inner: OpRef,
    name: String,
    /// The weights kernel's machine code.
    kernel: FusedKernel,
}

impl PartialEq for JitPooling {
    fn eq(&self, other: &Self) -> bool {
        self.inner.op_eq(&*other.inner)
    }
}

/// Bytes of the pooled vectors `f` whose rows' weights the kernel computes in one call (at least
/// one row), their cache lines prefetched just before: the pooling reads `f` at 32 bytes an event
/// (W9) with one multiply and add each, so if the lines were first asked for there, a block's
/// whole `f` traffic would come at once, at the memory's pace, while the kernel's time before it
/// moved almost nothing. Asked for a run at a time, the lines arrive while the kernel computes.
/// W9 at 2^17 users, one thread, best of 10 calls, runs alternated on a loaded machine (most runs;
/// each setting had outliers): 9.1-10.5 ms without; 6.8-7.6 ms with runs of 2 or 3 KB; 8 KB runs
/// (bursts of 128 prefetches) 8.2-13 ms, 16 KB 9.2-14 ms. In cache (49,140 events) the extra
/// kernel calls cost about 6%.
const PREFETCH_BYTES: usize = 3072;

/// Asks for the cache lines of bytes `bytes` of `values` (at most the first `2 * PREFETCH_BYTES`:
/// a longer row's lines are streamed by the pooling loop itself) without waiting for them. One
/// prefetch per iteration: unrolled eight to an iteration, the pooling after it found half as
/// much of its data in cache (W9, one thread: 12.9% of the samples in the pooling against 6.4%).
fn prefetch<T>(values: &[T], bytes: std::ops::Range<usize>) {
    let base = values.as_ptr().addr();
    let end = bytes.end.min(bytes.start + 2 * PREFETCH_BYTES);
    if bytes.start < end {
        // Up to the line holding the last byte.
        crate::prefetch::lines(base + bytes.start, base + end - 1 + crate::prefetch::LINE);
    }
}

/// The pointers one call's blocks pass to the weights kernel.
struct Operands {
    inputs: Vec<*const u8>,
    splits: *const i64,
}

// SAFETY: the pointers address the call's input buffers and row splits, which nothing writes
// during the call; the kernel only reads them.
unsafe impl Sync for Operands {}

impl JitPooling {
    /// The lowering of `op`, a `RowPooling` whose weights kernel was compiled to `kernel`.
    pub(crate) fn new(op: OpRef, kernel: FusedKernel) -> Self {
        let name = format!("Jit{}", op.name());
        JitPooling { inner: op, name, kernel }
    }

    fn pooling(&self) -> Result<(&RowPooling, &RowKernel)> {
        let pooling = self.inner.as_any().downcast_ref::<RowPooling>();
        pooling
            .and_then(|p| Some((p, p.weights()?)))
            .ok_or_else(|| Error::graph("JIT: a pooling lowering without its weights kernel"))
    }

    /// The pooling with the kernel computing the weights; `None` when the reference must run
    /// (operands not as assumed, or a fault).
    fn run(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Option<RaggedTensor>> {
        let (pooling, weights) = self.pooling()?;
        let n = weights.operands().len();
        let (Some(operands), Some(f)) = (inputs.get(..n), inputs.get(n).filter(|_| inputs.len() == n + 1)) else {
            return Ok(None);
        };
        let Some(layout) = Layout::new(weights.operands(), operands, true)? else { return Ok(None) };
        let dtype = weights.graph().dtype(weights.graph().outputs()[0]);
        let Some(splits) = layout.row_splits() else { return Ok(None) };
        let total = layout.reference.flat_values().len();
        let nrows = splits.len().saturating_sub(1);
        if layout.item_width != 1 || dtype != f.dtype() || splits.last().map(|&s| s as usize) != Some(total) {
            return Ok(None);
        }
        // Every bound the kernel relies on, checked before it runs (as `JitKernel` does).
        let mut pointers = Vec::with_capacity(n);
        for (k, (column, kind)) in layout.columns.iter().zip(weights.operands()).enumerate() {
            let want = match kind {
                OperandKind::Full => total,
                OperandKind::Scalar => 1,
                OperandKind::PerRow => nrows,
            };
            let input_dtype = weights.graph().inputs()[k];
            let data = dispatch_dtype!(input_dtype,
                T => column.as_slice::<T>().map(|s| (s.as_ptr().cast::<u8>(), s.len())),
                string => None);
            match data {
                Some((pointer, len)) if len == want => pointers.push(pointer),
                _ => return Ok(None),
            }
        }
        // Borrowed whole, so the closures below share the `Sync` table, not its raw fields.
        let operands = &Operands { inputs: pointers, splits: splits.as_ptr() };
        let kernel = self.kernel;
        macro_rules! pool {
            ($t:ty) => {{
                let Some(vectors) = f.flat_slice::<$t>() else { return Ok(None) };
                let vector_bytes = pooling.width() * std::mem::size_of::<$t>();
                let run_events = (PREFETCH_BYTES / vector_bytes).max(1);
                let compute = |r0: usize, r1: usize, out: &mut [$t]| -> bool {
                    let first = splits[r0] as usize;
                    if r0 > r1 || r1 > nrows || out.len() != splits[r1] as usize - first {
                        return false;
                    }
                    // The kernel writes element `e` of the block's rows at `base + e`: `base` is
                    // `out` moved back by the block's first element, so those land in `out`.
                    let base = out.as_mut_ptr().wrapping_sub(first).cast::<u8>();
                    // The rows in runs whose vectors span about `PREFETCH_BYTES` (at least one
                    // row each), each run's vectors asked for just before its weights are
                    // computed (see `PREFETCH_BYTES`).
                    let mut a = r0;
                    while a < r1 {
                        let mut b = a + 1;
                        while b < r1 && (splits[b + 1] - splits[a]) as usize <= run_events {
                            b += 1;
                        }
                        let (e0, e1) = (splits[a] as usize, splits[b] as usize);
                        prefetch(vectors, e0 * vector_bytes..e1 * vector_bytes);
                        // SAFETY: the input pointers address buffers of the dtypes the kernel
                        // reads with the lengths it indexes (checked above: full operands `total`
                        // values, per-row ones `nrows`, scalars 1); `splits` is the validated
                        // partition of the layout (non-decreasing, `nrows + 1` entries, ending at
                        // `total`) and `r0 <= a < b <= r1 <= nrows`; the only output is the
                        // weights, written at elements `splits[a]..splits[b]`, within
                        // `splits[r0]..splits[r1]`, which `base` maps onto `out` (its length
                        // checked above); each block has its own `out`, so concurrent calls write
                        // apart.
                        if !unsafe { kernel.call(&operands.inputs, &[base], operands.splits, a, b) } {
                            return false;
                        }
                        a = b;
                    }
                    true
                };
                pooling.pool_computed::<$t>(ctx, (layout.reference, f), &compute, crate::pool_fill::fill_for::<$t>())
            }};
        }
        let pooled = match dtype {
            ragtime_core::DType::F32 => pool!(f32),
            ragtime_core::DType::F64 => pool!(f64),
            _ => None,
        };
        match pooled {
            Some(result) => result,
            None => Ok(None),
        }
    }
}

impl Op for JitPooling {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        self.inner.infer(inputs)
    }

    fn keeps_uniform_rows(&self) -> bool {
        self.inner.keeps_uniform_rows()
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let Some(out) = self.run(ctx, inputs)? else {
            // Operands not as fusion assumed, or a fault: the reference reports what the
            // unfused ops report.
            return self.inner.perform(ctx, inputs);
        };
        if ctx.debug() {
            let reference = self.inner.perform(ctx, inputs)?;
            if let Some(want) = reference.first() {
                compare(want, &out).map_err(|why| {
                    Error::graph(format!("Mode::Debug: JIT pooling {} differs from its reference: {why}", self.name))
                })?;
            }
        }
        Ok(vec![out])
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
