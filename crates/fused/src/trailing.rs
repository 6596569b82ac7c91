//! Row kernels over the trailing uniform axis (`reduce_sum(x, axis=-1)` of a `[n, *, k]` or dense
//! `[n, k]` value, a layer norm over features, a softmax over classes): the operands seen as a
//! ragged rank 1 tensor of rows of `k` scalars, so the row passes (and the JIT's kernels) run on
//! them unchanged, and the results given back the operands' shape.
//!
//! A view copies no values: full operands are their flat values reshaped to one dimension under
//! a uniform partition of rows of `k`, per-row operands (`[n, *, 1]`, the reductions' results with
//! `keepdims`) their flat values as a dense `[rows, 1]`.

use std::cell::RefCell;

use ragtime_core::{DenseTensor, RaggedTensor, Result, RowPartition};

use crate::operands::{OperandKind, RowOutput};

/// The operands of one call seen as rows of the trailing axis, and what restores the results.
#[derive(Debug)]
pub(crate) struct TrailingView<'a> {
    /// The operands as a rank 1 row kernel reads them (same order and kinds).
    pub(crate) inputs: Vec<RaggedTensor>,
    /// The first full operand as given: its partitions and flat shape are the results'.
    reference: &'a RaggedTensor,
}

thread_local! {
    /// The last uniform partition built: consecutive calls over the same shape share its splits
    /// instead of writing `rows + 1` of them each time.
    static LAST_PARTITION: RefCell<Option<RowPartition>> = const { RefCell::new(None) };
}

/// `rows` rows of `length` values, reused from the previous call on this thread when it matches.
fn uniform_partition(length: usize, rows: usize) -> Result<RowPartition> {
    LAST_PARTITION.with(|last| {
        let mut last = last.borrow_mut();
        if let Some(p) = last.as_ref().filter(|p| p.uniform_row_length() == Some(length) && p.nrows() == rows) {
            return Ok(p.clone());
        }
        let p = RowPartition::from_uniform_row_length(length, rows)?;
        *last = Some(p.clone());
        Ok(p)
    })
}

impl<'a> TrailingView<'a> {
    /// The view of `inputs` (of `kinds`) as rows of their trailing axis of `length` values, or
    /// `None` when an operand does not have the shape its kind needs there (the caller then runs
    /// the inner graph, which broadcasts in general or reports the error).
    pub(crate) fn new(kinds: &[OperandKind], inputs: &'a [RaggedTensor], length: usize) -> Result<Option<Self>> {
        let Some(reference) = kinds.iter().zip(inputs).find(|(k, _)| **k == OperandKind::Full).map(|(_, x)| x) else {
            return Ok(None);
        };
        let flat_shape = reference.flat_values().shape();
        if length == 0 || flat_shape.len() < 2 || flat_shape.last() != Some(&length) {
            return Ok(None);
        }
        let total = reference.flat_values().len();
        let rows = total / length;
        let mut per_row_shape = flat_shape.to_vec();
        *per_row_shape.last_mut().expect("rank >= 2") = 1;
        let partition = uniform_partition(length, rows)?;
        let mut viewed = Vec::with_capacity(inputs.len());
        for (kind, x) in kinds.iter().zip(inputs) {
            viewed.push(match kind {
                OperandKind::Full => {
                    if !x.same_structure(reference) || x.flat_values().shape() != flat_shape {
                        return Ok(None);
                    }
                    RaggedTensor::new(x.flat_values().reshape(vec![total])?, vec![partition.clone()])?
                }
                OperandKind::PerRow => {
                    if !x.same_structure(reference) || x.flat_values().shape() != per_row_shape.as_slice() {
                        return Ok(None);
                    }
                    RaggedTensor::dense(x.flat_values().reshape(vec![rows, 1])?)
                }
                OperandKind::Scalar => match x.as_dense() {
                    Some(d) if d.rank() == 0 => x.clone(),
                    _ => return Ok(None),
                },
            });
        }
        Ok(Some(TrailingView { inputs: viewed, reference }))
    }

    /// The results of the row kernel run on the view, in the shape of the operands: element
    /// outputs in the reference's, per-row results in that of a reduction over its last axis.
    pub(crate) fn restore(&self, outputs: &[RowOutput], results: Vec<RaggedTensor>) -> Result<Vec<RaggedTensor>> {
        let flat_shape = self.reference.flat_values().shape();
        let partitions = self.reference.partitions();
        outputs
            .iter()
            .zip(results)
            .map(|(out, result)| {
                let mut shape = flat_shape.to_vec();
                match *out {
                    RowOutput::Elements(_) => {}
                    RowOutput::Reduction { keepdims: true, .. } => *shape.last_mut().expect("rank >= 2") = 1,
                    RowOutput::Reduction { keepdims: false, .. } => {
                        shape.pop();
                    }
                }
                let flat: DenseTensor = result.flat_values().reshape(shape)?;
                if partitions.is_empty() {
                    Ok(RaggedTensor::dense(flat))
                } else {
                    RaggedTensor::new(flat, partitions.to_vec())
                }
            })
            .collect()
    }
}
