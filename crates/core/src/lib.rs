//! ragtime-core: the values ragtime computes on — dtypes, static types, row partitions, ragged
//! tensors with numeric (shared buffers, possibly borrowed from Arrow) or string (bytes + offsets) flat values — and the shared error type.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod buffer;
pub mod compare;
mod context;
mod convert;
mod dense;
mod dtype;
mod element;
mod error;
pub mod limits;
mod literal;
mod nested;
mod partition;
pub mod pool;
mod ragged;
mod strings;
mod types;

pub use buffer::SharedSlice;
pub use context::{CallBudget, ExecContext};
pub use dense::{DenseArray, DenseTensor};
pub use dtype::DType;
pub use element::Element;
pub use error::{Error, ErrorKind, Result};
pub use literal::{Literal, TypedLiteral, ValuesDisplay};
pub use nested::{Nested, NestedOut, Rows, Scalar, ScalarOut, StringRow, StringRows};
pub use partition::RowPartition;
pub use ragged::{describe_element, Level, RaggedTensor};
pub use strings::{append_bytes, copy_bytes, StringBuilder, StringTensor};
pub use types::{Dim, TensorType};
