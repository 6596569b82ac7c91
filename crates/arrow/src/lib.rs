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
//! **ragtime → Arrow** ([`to_arrow`], [`ToArrow`]) never copies numeric values, row splits (with
//! the default i64 offsets), string bytes or string offsets: the Arrow buffers hold a clone of
//! the ragtime buffer (an `Arc` reference count; `bytes::Bytes::from_owner`) and read it in
//! place, so the tensor and the array share memory and either may outlive the other. Copied:
//! - booleans: ragtime stores one byte per value, Arrow one bit (bit-packing copy);
//! - splits and string offsets for [`OffsetWidth::I32`] (narrowed to i32, refused past `i32::MAX`);
//! - a uniform partition's splits are not needed (a `FixedSizeList` has no offsets);
//! - for [`Strings::Utf8`], nothing, but every byte is validated once (Arrow's check), and if the
//!   byte buffer holds non-UTF-8 bytes outside every string (a buffer shared with a slice of
//!   another column) the strings are copied into a compact buffer.
//!
//! **Arrow → ragtime** ([`from_arrow`], [`FromArrow`]) adopts buffers only when it may take them
//! over: the conversion must receive the only reference to the array (move the `ArrayRef` in;
//! a clone held elsewhere, e.g. by a `RecordBatch`, makes every buffer shared), and the buffer
//! must have been allocated as a Rust `Vec` (`Buffer::into_vec`: arrays built from `Vec`s,
//! `ScalarBuffer::from(vec)`, `PrimitiveArray::from(vec)`; builders and IPC / Parquet readers
//! allocate 64-byte-aligned buffers, which cannot become a `Vec`). Then:
//! - numeric values are adopted (no copy), whether or not the lists span the whole values array:
//!   the tensor views the part the lists use, and the rest stays allocated with it;
//! - `LargeList` offsets are adopted as row splits (rebased in place if they do not start at 0).
//!
//! Copied:
//! - numeric values or `LargeList` offsets that are shared, not `Vec`-allocated, or of an array
//!   that is itself a slice (`Array::slice` with a non-zero offset): the part the column uses;
//! - `List` offsets (i32, widened to i64) and the offsets of a slice of the top-level array;
//! - booleans (unpacked from bits to bytes);
//! - strings, always: ragtime's string columns own their bytes and offsets in `Arc<[u8]>` /
//!   `Arc<[i64]>`, which cannot adopt an Arrow buffer (one copy of the bytes the column uses,
//!   offsets widened and rebased; views and columns with nulls replaced go through a builder);
//! - uniform partitions (`RowPartition::from_uniform_row_length` builds the splits);
//! - the levels below a null list read as empty whose offsets span children
//!   ([`NullLists::AsEmpty`]): the children are dropped, so the selected ones are gathered;
//! - values with nulls replaced ([`NullValues::Replace`]) are written in place into an adopted
//!   buffer, into the copy otherwise.
//!
//! `crates/arrow/tests/zero_copy.rs` checks the zero-copy paths above by comparing data pointers.
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
use ragtime_core::{dispatch_dtype, DType};

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

/// The ragtime dtype of an Arrow leaf type (`Float32` → `float32`, `Utf8` → `string`, ...), if
/// it has one.
pub fn dtype_of(data_type: &DataType) -> Option<DType> {
    from_arrow::leaf_dtype(data_type)
}
