//! [`BooleanMask`]: `boolean_mask`, keeping the rows (or elements) a mask marks.

use std::any::Any;

use ragtime_core::{DType, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Attrs, Op};

use crate::gather::take::{align_prefix, check_prefix_dims, take_rows, Aligned, BOOLEAN_MASK};
use crate::util::{expect_dtype, one};

/// `boolean_mask(data, mask)` (TensorFlow's `tf.ragged.boolean_mask`): keeps the items of `data`
/// where `mask` is true, without flattening the mask's dimensions.
///
/// `mask` is a bool tensor (dense or ragged) whose shape is a prefix of `data`'s, row by row. With a
/// mask of rank k the result has data's rank and ragged rank `max(data.ragged_rank, k - 1)`: a mask
/// of rank 1 selects rows, a deeper mask makes its last dimension ragged.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BooleanMask;

impl BooleanMask {
    /// `boolean_mask(data, mask)`.
    pub fn new() -> Self {
        BooleanMask
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(BooleanMask)
    }
}

impl Op for BooleanMask {
    fn name(&self) -> String {
        "BooleanMask".into()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(BOOLEAN_MASK, inputs, 2..=2)?;
        let (data, mask) = (&inputs[0], &inputs[1]);
        expect_dtype(BOOLEAN_MASK, 1, mask, &[DType::Bool], "bool (mask)")?;
        let k = mask.rank();
        if k == 0 || k > data.rank() {
            return Err(Error::shapes(
                BOOLEAN_MASK,
                format!("the shape of input 1 (mask, {mask}) must be a prefix of the shape of input 0 (data, {data})"),
            ));
        }
        check_prefix_dims(BOOLEAN_MASK, data, mask, k, "input 1 (mask)")?;
        let ragged_rank = data.ragged_rank().max(k - 1);
        let outer = match (data.dims()[0], mask.dims()[0]) {
            _ if k == 1 => Dim::Unknown,
            (Dim::Known(n), _) | (_, Dim::Known(n)) => Dim::Known(n),
            _ => Dim::Unknown,
        };
        let mut dims = vec![outer];
        dims.extend(std::iter::repeat_n(Dim::Ragged, ragged_rank));
        dims.extend_from_slice(&data.dims()[ragged_rank + 1..]);
        Ok(vec![TensorType::new(data.dtype(), ragged_rank, dims)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let Aligned { mut partitions, items, prefix } =
            align_prefix(ctx, BOOLEAN_MASK, &inputs[0], &inputs[1], "input 1 (mask)")?;
        let flags =
            prefix.as_slice::<bool>().ok_or_else(|| Error::dtype(BOOLEAN_MASK, "input 1 (mask) must be bool"))?;
        let keep: Vec<usize> = flags.iter().enumerate().filter(|(_, &f)| f).map(|(i, _)| i).collect();
        let taken = take_rows(ctx, BOOLEAN_MASK, &items, &keep)?;
        // The mask's last dimension: its rows now hold only the items kept.
        if let Some(last) = partitions.pop() {
            let lengths: Vec<i64> =
                (0..last.nrows()).map(|r| flags[last.row_range(r)].iter().filter(|&&f| f).count() as i64).collect();
            partitions.push(RowPartition::from_row_lengths(&lengths)?);
        }
        one(taken.with_outer_partitions(&partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}
