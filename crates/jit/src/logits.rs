//! The compiled code the JIT hands to a softmax-weighted `RowPooling` (`ragtime_ops::fused`),
//! which stays precompiled Rust: the kernel of its logits composite, called on one block of
//! elements at a time into the pooling's scratch, and the bulk AVX2 `exp` of a difference. Both
//! give the bits of the reference they replace (the composite's scalar kernels, `vmath`'s `exp`).

// Calling a compiled kernel on buffers the checks below bound; the block says why it is sound.
#![allow(unsafe_code)]

use std::sync::Arc;

use ragtime_core::{dispatch_dtype, DType, DenseTensor, Result};
use ragtime_ops::fused::{Composite, LogitsKernel, LogitsOut, OperandKind, PoolWeights, RowPooling};

use crate::exec::{composite_spec, kernel_for};
use crate::kernel::FusedKernel;
use crate::spec::KernelSpec;

/// A logits composite's flat kernel, with the spec it was compiled from (its operand kinds and
/// dtypes, checked before each call).
struct CompiledLogits {
    kernel: FusedKernel,
    spec: KernelSpec,
}

impl std::fmt::Debug for CompiledLogits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledLogits").field("spec", &self.spec).finish()
    }
}

impl LogitsKernel for CompiledLogits {
    fn eval(&self, columns: &[DenseTensor], e0: usize, e1: usize, out: LogitsOut<'_>) -> bool {
        let spec = &self.spec;
        if spec.rows() || spec.outputs().len() != 1 || columns.len() != spec.operands().len() || e0 > e1 {
            return false;
        }
        let mut inputs = Vec::with_capacity(columns.len());
        for (k, (column, kind)) in columns.iter().zip(spec.operands()).enumerate() {
            let data = dispatch_dtype!(spec.graph().inputs()[k],
                T => column.as_slice::<T>().map(|s| (s.as_ptr().cast::<u8>(), s.len())),
                string => None);
            let in_bounds = match (data, kind) {
                (Some((_, len)), OperandKind::Full) => len >= e1,
                (Some((_, len)), OperandKind::Scalar) => len == 1,
                _ => false,
            };
            match data {
                Some((ptr, _)) if in_bounds => inputs.push(ptr),
                _ => return false,
            }
        }
        let (ptr, len, size, dtype) = match out {
            LogitsOut::F32(o) => (o.as_mut_ptr().cast::<u8>(), o.len(), 4, DType::F32),
            LogitsOut::F64(o) => (o.as_mut_ptr().cast::<u8>(), o.len(), 8, DType::F64),
        };
        if spec.output_dtype(0) != dtype || len != e1 - e0 {
            return false;
        }
        // The kernel writes element `e` at `base + e * size`: shifted so that `e0` lands on `out[0]`.
        let base = ptr.wrapping_sub(e0 * size);
        // SAFETY: the kernel is a flat kernel of `spec` (no row splits read); every input pointer
        // addresses a buffer of the dtype its graph input has, full operands with at least `e1`
        // values (the kernel reads elements `e0..e1`), scalars one; it writes elements `e0..e1`
        // of its one output, of `spec`'s output dtype, at `base + e * size`, which is
        // `out[e - e0]`, inside `out` (`e1 - e0` values); the graph cannot fault (the rewrite
        // that built the pooling refuses faulting composites), and a fault only stops early.
        unsafe { self.kernel.call(&inputs, &[base], std::ptr::null(), e0, e1) }
    }
}

/// The pooling with its compiled code, when it has softmax weights: the bulk `exp` on CPUs that
/// run it, the logits composite's kernel when the JIT lowers the composite's spec. `None` when
/// there is nothing to add.
pub(crate) fn accelerated(pooling: &RowPooling) -> Result<Option<RowPooling>> {
    let PoolWeights::Softmax { logits } = pooling.weights() else { return Ok(None) };
    let exp = crate::bulk::supported().then_some(crate::bulk::exp_sub_f32_into as ragtime_ops::fused::BulkExpF32);
    let kernel = match logits.as_ref().and_then(|c: &Composite| composite_spec(c)) {
        Some(spec) => {
            let kernel = kernel_for(&spec)?;
            Some(Arc::new(CompiledLogits { kernel, spec }) as Arc<dyn LogitsKernel>)
        }
        None => None,
    };
    if exp.is_none() && kernel.is_none() {
        return Ok(None);
    }
    Ok(Some(pooling.with_compiled(exp, kernel)))
}
