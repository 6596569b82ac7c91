//! ragtime functions inside DataFusion: a compiled [`ragtime::Function`] (or a graph file) as a
//! scalar UDF over Arrow list columns.
//!
//! ```text
//! let softmax = RagtimeUdf::new("ragtime_softmax", function).build()?;
//! ctx.register_udf(softmax);
//! ctx.sql("SELECT ragtime_softmax(scores) FROM 'events.parquet'").await?;
//! ```
//!
//! Each batch's argument columns become ragtime values without copying their values
//! ([`ragtime_arrow::FromArrow`]), the compiled function runs on the whole batch (fused JIT
//! kernels, the function's threads), and its output becomes the result column, again without
//! copying values ([`ragtime_arrow::ToArrow`]). Argument types are checked when the query is
//! planned. `crates/datafusion/examples/datafusion.rs` runs the SQL examples.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod manifest;
mod udf;

pub use error::{CallError, UdfError};
pub use manifest::{load_manifest, MANIFEST_FORMAT};
pub use udf::RagtimeUdf;
