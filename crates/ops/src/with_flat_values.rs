//! `ragged.with_flat_values(x, values, *same)` (`tf.RaggedTensor.with_flat_values`): `x`'s row
//! partitions over new flat values, the op behind `map_flat_values` in the DSL. Extra inputs are
//! ragged tensors that must share `x`'s partitions (TensorFlow's `map_flat_values` requires every
//! ragged argument to have the same nested row splits).

use std::any::Any;

use ragtime_core::{Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Attrs, Cost, Graph, Op, OpProperties, OpRef, VarId};

use crate::util::{one, shared};

const NAME: &str = "ragged.with_flat_values";

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    (name == NAME).then(|| shared(WithFlatValues::from_attrs(attrs)))
}

/// `with_flat_values(x, values, same...)`: a tensor with `x`'s row partitions (the same
/// `RowPartition`s, so the optimizer's partition identity holds between `x` and the result) and
/// `values` as its flat values; `values` must have one row per flat value of `x` (its inner
/// dimensions are free). Every further input must have `x`'s partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct WithFlatValues;

impl WithFlatValues {
    /// The op.
    pub fn new() -> Self {
        WithFlatValues
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(WithFlatValues)
    }
}

impl Op for WithFlatValues {
    fn name(&self) -> String {
        "WithFlatValues".into()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(NAME, inputs, 2..=usize::MAX)?;
        let (x, values) = (&inputs[0], &inputs[1]);
        if !x.is_ragged() {
            return Err(Error::argument(NAME, format!("input 0 must be ragged, got {x}")));
        }
        if values.is_ragged() || values.rank() == 0 {
            return Err(Error::argument(
                NAME,
                format!("input 1 (the new flat values) must be a dense tensor of rank 1 or more, got {values}"),
            ));
        }
        for (i, other) in inputs.iter().enumerate().skip(2) {
            if other.ragged_rank() != x.ragged_rank() {
                return Err(Error::shapes(
                    NAME,
                    format!("input {i} has ragged rank {} but input 0 has {}", other.ragged_rank(), x.ragged_rank()),
                ));
            }
        }
        let mut dims = x.dims()[..=x.ragged_rank()].to_vec();
        dims.extend_from_slice(&values.dims()[1..]);
        Ok(vec![TensorType::new(values.dtype(), x.ragged_rank(), dims)?])
    }

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        if inputs.len() < 2 {
            return Err(Error::argument(NAME, format!("takes at least 2 inputs, got {}", inputs.len())));
        }
        let (x, values) = (&inputs[0], &inputs[1]);
        if x.is_dense() || !values.is_dense() || values.rank() == 0 {
            return Err(Error::argument(NAME, "takes a ragged tensor and dense flat values of rank 1 or more"));
        }
        let nvals = x.flat_values().shape()[0];
        let rows = values.flat_values().shape()[0];
        if rows != nvals {
            return Err(Error::shapes(
                NAME,
                format!(
                    "the new flat values have {rows} rows but input 0 has {nvals} flat values: a function mapped over \
                     flat values must keep their number"
                ),
            ));
        }
        for (i, other) in inputs.iter().enumerate().skip(2) {
            if !other.same_structure(x) || other.flat_values().shape().first() != Some(&nvals) {
                return Err(Error::shapes(
                    NAME,
                    format!(
                        "input {i} does not have the row partitions of input 0 (map_flat_values needs one structure)"
                    ),
                ));
            }
        }
        one(RaggedTensor::new(values.flat_values().clone(), x.partitions().to_vec())?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { keeps_partitions_of: Some(0), cost: Cost::Free, ..OpProperties::default() }
    }

    fn keeps_uniform_rows(&self) -> bool {
        // The output's partitions are input 0's own, uniform row lengths included.
        true
    }

    /// The output's flat values are `values`, element for element: their gradient is the output
    /// gradient's flat values. `x` and the other inputs give only partitions (no gradient).
    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        _outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        let mut grads = vec![None; inputs.len()];
        if let Some(&Some(g)) = output_grads.first() {
            grads[1] =
                Some(graph.apply(std::sync::Arc::new(crate::structure::read_partitions::FlatValues::new()), &[g])?[0]);
        }
        Ok(grads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtime_core::limits::Limits;
    use ragtime_core::ExecContext;
    use ragtime_core::{ragged, DenseTensor, ErrorKind};

    #[test]
    fn keeps_the_partitions_and_takes_the_values() {
        let ctx = &ExecContext::new(Limits::untrusted());
        let x = ragged![[1, 2], [], [3]].unwrap();
        let values: RaggedTensor =
            DenseTensor::from_vec(vec![3, 2], vec![1.0f32, 1.5, 2.0, 2.5, 3.0, 3.5]).unwrap().into();
        let out = WithFlatValues.perform(ctx, &[x.clone(), values.clone()]).unwrap().remove(0);
        assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]), "the partition Arc is shared");
        assert_eq!(out.to_literal(), ragged![[[1.0f32, 1.5], [2.0, 2.5]], [], [[3.0, 3.5]]].unwrap().to_literal());
        let types: Vec<TensorType> = [x, values].iter().map(TensorType::of).collect();
        assert_eq!(WithFlatValues.infer(&types).unwrap()[0], TensorType::of(&out));
    }

    #[test]
    fn refuses_another_number_of_values_or_another_structure() {
        let ctx = &ExecContext::new(Limits::untrusted());
        let x = ragged![[1, 2], [], [3]].unwrap();
        let short: RaggedTensor = DenseTensor::vector(vec![1, 2]).into();
        let e = WithFlatValues.perform(ctx, &[x.clone(), short]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes, "{e}");
        let values: RaggedTensor = DenseTensor::vector(vec![7, 8, 9]).into();
        let other = ragged![[1], [2, 3]].unwrap();
        let e = WithFlatValues.perform(ctx, &[x, values, other]).unwrap_err();
        assert!(e.to_string().contains("input 2 does not have the row partitions"), "{e}");
    }
}
