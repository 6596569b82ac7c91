//! `ArrowElement`: how each numeric and boolean dtype maps onto an Arrow type and moves between
//! ragtime's flat values and an Arrow leaf array (instantiated through `dispatch_dtype!`).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, BooleanArray, PrimitiveArray};
use arrow_buffer::{BooleanBuffer, ScalarBuffer};
use arrow_schema::DataType;
use ragtime_core::{DenseArray, DenseTensor, Element, ExecContext, Result, SharedSlice};

use crate::from_arrow::Leaf;
use crate::shared::{adopt, arrow_buffer};

/// A ragtime element type with an Arrow counterpart. Implemented for every numeric dtype and bool,
/// so `dispatch_dtype!` can instantiate generic code over it.
pub(crate) trait ArrowElement: Element {
    /// The Arrow type of a leaf array of this element type.
    fn data_type() -> DataType;
    /// A leaf array of every element of `values`, in row-major order.
    fn to_arrow(values: &DenseArray<Self>) -> Result<ArrayRef>;
    /// The flat values read from the leaf array `array` (the slots `leaf` selects).
    fn from_arrow(leaf: &Leaf<'_>, array: ArrayRef) -> Result<DenseTensor>;
}

macro_rules! impl_primitive {
    ($($t:ty => $arrow:ty),*) => {$(
        impl ArrowElement for $t {
            fn data_type() -> DataType {
                <$arrow as arrow_array::ArrowPrimitiveType>::DATA_TYPE
            }

            fn to_arrow(values: &DenseArray<Self>) -> Result<ArrayRef> {
                let len = values.as_slice().len();
                let values: ScalarBuffer<$t> = if len == 0 {
                    ScalarBuffer::from(Vec::new())
                } else {
                    // Zero copy: the Arrow buffer keeps the ragtime buffer alive.
                    ScalarBuffer::new(arrow_buffer(values.data().clone()), 0, len)
                };
                Ok(Arc::new(PrimitiveArray::<$arrow>::new(values, None)))
            }

            fn from_arrow(leaf: &Leaf<'_>, array: ArrayRef) -> Result<DenseTensor> {
                let typed = array.as_primitive_opt::<$arrow>().ok_or_else(|| leaf.unexpected(array.data_type()))?.clone();
                // Dropping the caller's reference leaves `typed` the only owner of its buffer when
                // the caller handed over the only reference, so a `Vec` buffer can be taken over.
                drop(array);
                let (_, values, nulls) = typed.into_parts();
                let fill = leaf.null_fill::<$t>(nulls.as_ref())?;
                match (leaf.single_run(), fill, &nulls) {
                    // No nulls to replace: the values are adopted whoever owns them.
                    (Some(run), None, _) | (Some(run), Some(_), None) => leaf.view(adopt(values), run),
                    // Nulls to replace: in place only in a buffer ragtime may take over.
                    (Some(run), Some(fill), Some(nulls)) => match values.into_inner().into_vec::<$t>() {
                        Ok(mut adopted) => {
                            run.clone().filter(|&i| nulls.is_null(i)).for_each(|i| adopted[i] = fill);
                            leaf.view(SharedSlice::from_vec(adopted), run)
                        }
                        Err(shared) => {
                            let values = ScalarBuffer::<$t>::from(shared);
                            leaf.gather(|i| values[i], Some(nulls), Some(fill))
                        }
                    },
                    (None, _, _) => leaf.gather(|i| values[i], nulls.as_ref(), fill),
                }
            }
        }
    )*};
}
impl_primitive!(
    i8 => Int8Type, i16 => Int16Type, i32 => Int32Type, i64 => Int64Type,
    u8 => UInt8Type, u16 => UInt16Type, u32 => UInt32Type, u64 => UInt64Type,
    f32 => Float32Type, f64 => Float64Type
);

impl ArrowElement for bool {
    fn data_type() -> DataType {
        DataType::Boolean
    }

    fn to_arrow(values: &DenseArray<Self>) -> Result<ArrayRef> {
        // Arrow packs booleans into bits: always a copy.
        let values = values.as_slice();
        ExecContext::detached().checked_size("to_arrow", &[values.len()], 1)?;
        Ok(Arc::new(BooleanArray::new(BooleanBuffer::from_iter(values.iter().copied()), None)))
    }

    fn from_arrow(leaf: &Leaf<'_>, array: ArrayRef) -> Result<DenseTensor> {
        let typed = array.as_boolean_opt().ok_or_else(|| leaf.unexpected(array.data_type()))?;
        let fill = leaf.null_fill::<bool>(typed.nulls())?;
        // Unpacking bits into bytes: always a copy.
        let bits = typed.values();
        leaf.gather(|i| bits.value(i), typed.nulls(), fill)
    }
}
