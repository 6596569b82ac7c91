//! `RaggedTensor` → Arrow arrays: partitions become `LargeList` / `List` (uniform partitions
//! `FixedSizeList`), uniform inner dims `FixedSizeList`, flat values the leaf array.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, FixedSizeListArray, GenericBinaryArray, GenericListArray, GenericStringArray, OffsetSizeTrait,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field};
use ragtime_core::StringTensor;
use ragtime_core::TensorType;
use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, Error, ExecContext, RaggedTensor, Result, RowPartition,
};

use crate::element::ArrowElement;
use crate::shared::arrow_buffer;
use crate::OP_TO;

/// The offset width of variable-size lists and strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OffsetWidth {
    /// i32 offsets: `List`, `Utf8`, `Binary`. Ragtime's i64 splits and string offsets are narrowed
    /// (a copy); a column past `i32::MAX` values or bytes is refused.
    I32,
    /// i64 offsets: `LargeList`, `LargeUtf8`, `LargeBinary`. Ragtime's splits and string offsets
    /// are shared, not copied (the default).
    #[default]
    I64,
}

/// The Arrow type of string values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strings {
    /// `Utf8` / `LargeUtf8`: every string must be valid UTF-8 (checked; an `invalid_value` error
    /// names the first string that is not). The default.
    #[default]
    Utf8,
    /// `Binary` / `LargeBinary`: any bytes.
    Binary,
}

/// Options of the ragtime → Arrow conversion.
///
/// ```
/// use ragtime_arrow::{OffsetWidth, ToArrow};
/// use ragtime_core::RaggedTensor;
///
/// let t = RaggedTensor::from_row_splits(vec![1.0f32, 2.0, 3.0], [0, 2, 2, 3]).unwrap();
/// let large = ragtime_arrow::to_arrow(&t).unwrap();
/// assert_eq!(large.data_type().to_string(), "LargeList(Float32)");
/// let small = ToArrow::new().offsets(OffsetWidth::I32).nullable_items(false).convert(&t).unwrap();
/// assert_eq!(small.data_type().to_string(), "List(non-null Float32)");
/// ```
#[derive(Debug, Clone)]
pub struct ToArrow {
    offsets: OffsetWidth,
    strings: Strings,
    nullable_items: bool,
}

impl Default for ToArrow {
    fn default() -> Self {
        ToArrow { offsets: OffsetWidth::I64, strings: Strings::Utf8, nullable_items: true }
    }
}

/// Converts a ragged (or dense) tensor into an Arrow array with the default [`ToArrow`] options:
/// `LargeList` levels, `LargeUtf8` strings, nullable list items (as arrow-rs and most engines
/// declare them, though the arrays have no nulls). A scalar (rank 0) has no column form and is
/// refused.
pub fn to_arrow(tensor: &RaggedTensor) -> Result<ArrayRef> {
    ToArrow::new().convert(tensor)
}

impl ToArrow {
    /// The default options (see [`to_arrow`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the offset width of lists and strings.
    pub fn offsets(mut self, width: OffsetWidth) -> Self {
        self.offsets = width;
        self
    }

    /// Sets the Arrow type of string values.
    pub fn strings(mut self, strings: Strings) -> Self {
        self.strings = strings;
        self
    }

    /// Declares list items nullable (the default) or not. The arrays never hold nulls either
    /// way; this only changes the child fields of the data type, which engines compare.
    pub fn nullable_items(mut self, nullable: bool) -> Self {
        self.nullable_items = nullable;
        self
    }

    /// Converts `tensor` into an Arrow array of one slot per row.
    pub fn convert(&self, tensor: &RaggedTensor) -> Result<ArrayRef> {
        let flat = tensor.flat_values();
        let shape = flat.shape();
        if shape.is_empty() {
            return Err(Error::argument(OP_TO, "a scalar (rank 0) is not a column: give it at least one dimension"));
        }
        let mut array = self.leaf(tensor, flat)?;
        // Uniform inner dims, innermost first: the dim at axis `a` groups the elements of the
        // `product(shape[..a])` items above it.
        for axis in (1..shape.len()).rev() {
            array = self.fixed(array, shape[axis], shape[..axis].iter().product())?;
        }
        for partition in tensor.partitions().iter().rev() {
            array = match partition.uniform_row_length() {
                Some(size) => self.fixed(array, size, partition.nrows())?,
                None => self.list(array, partition)?,
            };
        }
        Ok(array)
    }

    /// The Arrow type `convert` gives a tensor of `dtype` whose levels below the rows are
    /// `levels` (outermost first: ragged partitions, uniform partitions, inner dims, as in
    /// [`RaggedTensor::levels`] without the first).
    /// A uniform size past `i32::MAX` is refused, as `convert` refuses it.
    pub fn data_type(&self, dtype: DType, levels: &[ragtime_core::Level<'_>]) -> Result<DataType> {
        let uniform = levels.iter().map(|level| match level {
            ragtime_core::Level::Ragged(p) => p.uniform_row_length(),
            ragtime_core::Level::Uniform(size) => Some(*size),
        });
        self.nest(dtype, uniform.collect())
    }

    /// The Arrow type `convert` gives every value of static type `ty` (one Arrow slot per row
    /// along its first dim): what a query engine must be told before any data exists. A uniform
    /// dim below the rows whose size is not known statically (`Dim::Unknown`) has no single
    /// Arrow type (`FixedSizeList` carries the size), so it is refused, as is a scalar type.
    pub fn column_type(&self, ty: &TensorType) -> Result<DataType> {
        let Some((_, below)) = ty.dims().split_first() else {
            return Err(Error::argument(OP_TO, "a scalar (rank 0) is not a column: give it at least one dimension"));
        };
        let uniform = below
            .iter()
            .map(|&dim| match dim {
                Dim::Ragged => Ok(None),
                Dim::UniformRows(size) | Dim::Known(size) => Ok(Some(size)),
                Dim::Unknown => Err(Error::argument(
                    OP_TO,
                    format!("{ty} has a uniform dimension of unknown size, which no Arrow type describes"),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        self.nest(ty.dtype(), uniform)
    }

    /// The leaf type of `dtype` nested in one list level per entry of `levels` (outermost
    /// first): `FixedSizeList` of the given size, else `List` / `LargeList`.
    fn nest(&self, dtype: DType, levels: Vec<Option<usize>>) -> Result<DataType> {
        let mut data_type = match dtype {
            DType::String => match (self.strings, self.offsets) {
                (Strings::Utf8, OffsetWidth::I32) => DataType::Utf8,
                (Strings::Utf8, OffsetWidth::I64) => DataType::LargeUtf8,
                (Strings::Binary, OffsetWidth::I32) => DataType::Binary,
                (Strings::Binary, OffsetWidth::I64) => DataType::LargeBinary,
            },
            other => crate::arrow_leaf_type(other).unwrap_or(DataType::Null),
        };
        for uniform in levels.into_iter().rev() {
            let field = Arc::new(Field::new_list_field(data_type, self.nullable_items));
            data_type = match uniform {
                Some(size) => DataType::FixedSizeList(field, fixed_size(size)?),
                None if self.offsets == OffsetWidth::I32 => DataType::List(field),
                None => DataType::LargeList(field),
            };
        }
        Ok(data_type)
    }

    fn field(&self, child: &ArrayRef) -> Arc<Field> {
        Arc::new(Field::new_list_field(child.data_type().clone(), self.nullable_items))
    }

    /// A fixed-size list array of `len` lists of `size` items of `values`.
    fn fixed(&self, values: ArrayRef, size: usize, len: usize) -> Result<ArrayRef> {
        let array = FixedSizeListArray::try_new_with_length(self.field(&values), fixed_size(size)?, values, None, len)
            .map_err(arrow_error)?;
        Ok(Arc::new(array))
    }

    /// A variable-size list array with the partition's rows.
    fn list(&self, values: ArrayRef, partition: &RowPartition) -> Result<ArrayRef> {
        let field = self.field(&values);
        match self.offsets {
            OffsetWidth::I64 => {
                let splits =
                    ScalarBuffer::new(arrow_buffer(partition.shared_row_splits().clone()), 0, partition.nrows() + 1);
                let array = GenericListArray::<i64>::try_new(field, OffsetBuffer::new(splits), values, None)
                    .map_err(arrow_error)?;
                Ok(Arc::new(array))
            }
            OffsetWidth::I32 => {
                let offsets = narrow(partition.row_splits(), "values")?;
                let array = GenericListArray::<i32>::try_new(field, offsets, values, None).map_err(arrow_error)?;
                Ok(Arc::new(array))
            }
        }
    }

    /// The leaf array of every element of the flat values.
    fn leaf(&self, tensor: &RaggedTensor, flat: &DenseTensor) -> Result<ArrayRef> {
        dispatch_dtype!(flat.dtype(),
        T => T::to_arrow(T::array(flat).ok_or_else(|| Error::dtype(OP_TO, "flat values do not hold their dtype"))?),
        string => {
            let column = flat.as_strings().ok_or_else(|| Error::dtype(OP_TO, "flat values do not hold strings"))?;
            self.string_leaf(tensor, column)
        })
    }

    fn string_leaf(&self, tensor: &RaggedTensor, column: &StringTensor) -> Result<ArrayRef> {
        let bytes = arrow_buffer(column.bytes().clone());
        let array: ArrayRef = match self.offsets {
            OffsetWidth::I64 => {
                let offsets = ScalarBuffer::<i64>::new(arrow_buffer(column.offsets().clone()), 0, column.len() + 1);
                self.string_array(tensor, column, OffsetBuffer::new(offsets), bytes)?
            }
            OffsetWidth::I32 => self.string_array(tensor, column, narrow(column.offsets(), "string bytes")?, bytes)?,
        };
        Ok(array)
    }

    fn string_array<O: OffsetSizeTrait>(
        &self,
        tensor: &RaggedTensor,
        column: &StringTensor,
        offsets: OffsetBuffer<O>,
        bytes: Buffer,
    ) -> Result<ArrayRef> {
        match self.strings {
            Strings::Binary => {
                Ok(Arc::new(GenericBinaryArray::<O>::try_new(offsets, bytes, None).map_err(arrow_error)?))
            }
            Strings::Utf8 => match GenericStringArray::<O>::try_new(offsets.clone(), bytes, None) {
                Ok(array) => Ok(Arc::new(array)),
                Err(_) => {
                    if let Some(i) = column.iter().position(|s| std::str::from_utf8(s).is_err()) {
                        let index = tensor.element_index(i);
                        return Err(Error::value(
                            OP_TO,
                            format!(
                                "string at row {} (index {index:?}) is not valid UTF-8: convert with Strings::Binary",
                                index[0]
                            ),
                        ));
                    }
                    // Every string is valid but bytes outside them are not (Arrow checks the
                    // whole buffer): copy just the strings.
                    let compact =
                        StringTensor::from_strings(&column.iter().collect::<Vec<_>>(), column.shape().to_vec())?;
                    let offsets: Vec<O> = compact
                        .offsets()
                        .iter()
                        .map(|&o| O::from_usize(o as usize))
                        .collect::<Option<_>>()
                        .ok_or_else(|| Error::argument(OP_TO, "string bytes exceed the offset width"))?;
                    let bytes = Buffer::from(compact.bytes().to_vec());
                    Ok(Arc::new(
                        GenericStringArray::<O>::try_new(OffsetBuffer::new(offsets.into()), bytes, None)
                            .map_err(arrow_error)?,
                    ))
                }
            },
        }
    }
}

/// A uniform size as Arrow's i32 fixed-size list size.
fn fixed_size(size: usize) -> Result<i32> {
    i32::try_from(size)
        .map_err(|_| Error::argument(OP_TO, format!("a uniform dimension of {size} exceeds Arrow's i32 list sizes")))
}

/// i64 splits or string offsets as i32 Arrow offsets (a copy); refused past `i32::MAX`.
fn narrow(splits: &[i64], what: &str) -> Result<OffsetBuffer<i32>> {
    let last = splits.last().copied().unwrap_or(0);
    if last > i64::from(i32::MAX) {
        return Err(Error::argument(
            OP_TO,
            format!("{last} {what} exceed i32 offsets: convert with OffsetWidth::I64 (LargeList, LargeUtf8)"),
        ));
    }
    let offsets: Vec<i32> = ExecContext::detached().try_collect(OP_TO, splits.iter().map(|&s| s as i32))?;
    Ok(OffsetBuffer::new(ScalarBuffer::from(offsets)))
}

/// An Arrow constructor's refusal. The arrays built here satisfy Arrow's rules by construction
/// (ragtime's partitions are validated), so this is not expected; it is reported, not unwrapped.
fn arrow_error(e: ArrowError) -> Error {
    Error::value(OP_TO, format!("Arrow refused the array: {e}"))
}
