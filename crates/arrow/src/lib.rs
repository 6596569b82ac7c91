//! ragtime-arrow: conversions between ragtime's [`RaggedTensor`] and Apache Arrow arrays
//! (arrow-rs 59), sharing buffers instead of copying them wherever the two layouts agree.
//!
//! Arrow's list layout is ragtime's own: a list column is a values array plus offsets, exactly a
//! flat values tensor plus row splits; a string column is one byte buffer plus offsets in both.
//! This crate sits above `ragtime-core` and beside `ragtime`; nothing in ragtime depends on Arrow.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Array, ListArray, types::Float32Type};
//!
//! let column = ListArray::from_iter_primitive::<Float32Type, _, _>([
//!     Some(vec![Some(1.0), Some(2.0)]),
//!     Some(vec![]),
//!     Some(vec![Some(3.0)]),
//! ]);
//! let t = ragtime_arrow::from_arrow("scores", Arc::new(column))?;
//! assert_eq!(t.to_string(), "<Ragged float32 [[1.0, 2.0], [], [3.0]]>");
//! let back = ragtime_arrow::to_arrow(&t)?;
//! assert_eq!(back.len(), 3);
//! # Ok::<(), ragtime_core::Error>(())
//! ```
//!
//! # Type mapping
//!
//! | ragtime | Arrow |
//! | --- | --- |
//! | ragged partition | `LargeList` (default) or `List` ([`OffsetWidth`]); both are read |
//! | uniform partition (`RowPartition::from_uniform_row_length`) above a ragged one | `FixedSizeList` |
//! | uniform inner dims of the flat values (and the dims of a dense tensor after the first) | `FixedSizeList`, one per dim |
//! | `bool` | `Boolean` |
//! | `int8` .. `int64`, `uint8` .. `uint64`, `float32`, `float64` | `Int8` .. `Int64`, `UInt8` .. `UInt64`, `Float32`, `Float64` |
//! | `string` | `LargeUtf8` (default), `Utf8`, `LargeBinary`, `Binary` ([`Strings`]); read also from `Utf8View`, `BinaryView` |
//!
//! Reading, the nesting depth of the Arrow type is the tensor's rank: each `List` / `LargeList`
//! is a ragged dimension; a `FixedSizeList` is a uniform partition when a variable-size list
//! lies below it, and otherwise a uniform dim of the values (a column of only fixed-size lists,
//! or a primitive column, is a dense tensor). So a uniform partition with no ragged partition
//! below it comes back as an inner dim: TensorFlow treats both as the same shape. Any other
//! Arrow type (`Struct`, `Map`, `Dictionary`, `ListView`, `Float16`, dates, decimals, `Null`, ...)
//! is refused with a `type_mismatch` error naming the column and the type.
//!
//! # What is copied
//!
//! Both directions share buffers through ragtime's [`ragtime_core::SharedSlice`], whose owner is
//! either a ragtime allocation or any other library's buffer (here an Arrow `ScalarBuffer`).
//!
//! **ragtime → Arrow** ([`to_arrow`], [`ToArrow`]) never copies numeric values, row splits (with
//! the default i64 offsets), string bytes or string offsets: the Arrow buffers hold a clone of
//! the ragtime buffer (an `Arc` reference count; `bytes::Bytes::from_owner`) and read it in
//! place, so the tensor and the array share memory and either may outlive the other (a tensor
//! that itself views Arrow memory hands that same memory back). Copied:
//! - booleans: ragtime stores one byte per value, Arrow one bit (bit-packing copy);
//! - splits and string offsets for [`OffsetWidth::I32`] (narrowed to i32, refused past `i32::MAX`);
//! - a uniform partition's splits are not needed (a `FixedSizeList` has no offsets);
//! - for [`Strings::Utf8`], nothing, but every byte is validated once (Arrow's check), and if the
//!   byte buffer holds non-UTF-8 bytes outside every string (a buffer shared with a slice of
//!   another column) the strings are copied into a compact buffer.
//!
//! **Arrow → ragtime** ([`from_arrow`], [`FromArrow`]) adopts Arrow's buffers wherever the
//! layouts agree, whoever allocated them (a `Vec`, a builder, an IPC or Parquet reader's
//! 64-byte-aligned allocation) and whoever else holds them (a `RecordBatch`, a clone of the
//! column): the tensor keeps the Arrow buffer alive and reads it in place. Adopted, no copy:
//! - numeric values, including those of a sliced array or of lists spanning part of the values
//!   (the tensor views the part the column uses; the rest stays allocated with it);
//! - `LargeList` offsets as row splits when the column's first offset is 0 (a whole array, or a
//!   slice from its first row);
//! - `LargeUtf8` / `LargeBinary` bytes and offsets, sliced or not (a string column's offsets need
//!   not start at 0), and the bytes of `Utf8` / `Binary`.
//!
//! Adopted buffers stay Arrow's: ragtime never writes them, and the executor's buffer reuse
//! (`Function::recycle`) only takes buffers ragtime allocated. The one exception to "Arrow's":
//! when the conversion receives the only reference to a buffer that Rust allocated as a `Vec`
//! (`Buffer::into_vec`), it takes that `Vec` over as a ragtime buffer.
//!
//! Copied:
//! - `LargeList` offsets that do not start at 0 (a slice starting past the first row): the
//!   offsets the column uses, rebased to 0 as row splits must be (in place, no copy, when the
//!   conversion holds the only reference to a whole `Vec`-allocated offsets buffer);
//! - `List`, `Utf8` and `Binary` offsets (i32, widened to i64);
//! - booleans (unpacked from bits to bytes);
//! - `Utf8View` / `BinaryView` strings (one copy of the bytes the column uses, through a builder);
//! - uniform partitions (`RowPartition::from_uniform_row_length` builds the splits);
//! - the levels below a null list read as empty whose offsets span children
//!   ([`NullLists::AsEmpty`]): the children are dropped, so the selected ones are gathered;
//! - values with nulls replaced ([`NullValues::Replace`]): written in place into a buffer taken
//!   over as above, copied otherwise (strings with nulls replaced go through a builder).
//!
//! `crates/arrow/tests/zero_copy.rs` checks the zero-copy paths above by comparing data pointers,
//! including a compiled `ragtime::Function` called on converted Arrow data.
//!
//! # Nulls
//!
//! ragtime tensors have no nulls. A null list or a null value is refused with an `invalid_value`
//! error naming the column and the row (and the index within the row), unless the caller picks a
//! policy with [`FromArrow`]: [`NullLists::AsEmpty`] reads a null variable-size list as an empty
//! row, [`NullValues::Replace`] reads every null value as a given value. A null fixed-size list
//! is always refused (it cannot be empty). Arrays written by ragtime have no nulls.
//!
//! # Malformed input
//!
//! Arrays built by arrow-rs's safe constructors are valid, but arrays assembled with `unsafe`
//! (the C data interface, IPC reading without validation) need not be. Every offsets buffer is
//! checked before use (not empty, no negative or decreasing offset, none past the children) and
//! every string view's buffer range too, so malformed input gives an `invalid_row_partition`
//! error naming the column and the row, never a panic or an out-of-bounds read.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod element;
mod from_arrow;
mod offsets;
#[cfg(feature = "parquet")]
pub mod parquet;
mod shared;
mod to_arrow;

#[cfg(feature = "parquet")]
pub use self::parquet::{run_parquet, ParquetError, ParquetInput, ParquetOptions, ParquetRun, ParquetSummary};
pub use from_arrow::{from_arrow, FromArrow, NullLists, NullValues};
pub use to_arrow::{to_arrow, OffsetWidth, Strings, ToArrow};

pub use ragtime_core::{Error, RaggedTensor, Result};

use arrow_schema::DataType;
use ragtime_core::{dispatch_dtype, DType, Dim, TensorType};

use element::ArrowElement;

/// The op name of errors raised reading Arrow arrays.
const OP_FROM: &str = "from_arrow";
/// The op name of errors raised writing Arrow arrays.
const OP_TO: &str = "to_arrow";

/// The Arrow type of a leaf array of `dtype`, for every dtype but strings (whose Arrow type is a
/// choice, see [`Strings`]).
fn arrow_leaf_type(dtype: DType) -> Option<DataType> {
    dispatch_dtype!(dtype, T => Some(<T as ArrowElement>::data_type()), string => None)
}

/// Whether a function input of type `expected` takes a column that reads as `found`
/// ([`FromArrow::column_type`]): dtype, ragged rank and inner dims must agree; the number of
/// rows is each batch's own, so it is not compared (a function with a known row count refuses a
/// batch of another length when it is called).
pub fn input_takes(expected: &TensorType, found: &TensorType) -> bool {
    let comparable = match expected.dims().first() {
        Some(&dim) if dim != Dim::Ragged && found.rank() > 0 => found.clone().with_dim(0, dim).ok(),
        _ => Some(found.clone()),
    };
    comparable.is_some_and(|f| expected.accepts(&f))
}

/// The ragtime dtype of an Arrow leaf type (`Float32` → `float32`, `Utf8` → `string`, ...), if
/// it has one.
pub fn dtype_of(data_type: &DataType) -> Option<DType> {
    from_arrow::leaf_dtype(data_type)
}
