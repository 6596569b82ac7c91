//! Errors of building a ragtime UDF and of running one inside a query.

use std::path::PathBuf;

/// Why a [`crate::RagtimeUdf`] could not be built. Every variant names the UDF.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UdfError {
    /// The graph file could not be read, parsed or compiled.
    #[error("UDF {udf}: graph file {}: {source}", path.display())]
    GraphFile {
        /// The UDF's name.
        udf: String,
        /// The graph file.
        path: PathBuf,
        /// ragtime's error.
        source: Box<ragtime::Error>,
    },
    /// The graph file has no case of that name, or several cases and none was chosen.
    #[error("UDF {udf}: graph file {}: {}; its cases: {}", path.display(),
        wanted.as_ref().map_or("holds several cases: name one".to_string(), |w| format!("no case {w:?}")),
        cases.join(", "))]
    Case {
        /// The UDF's name.
        udf: String,
        /// The graph file.
        path: PathBuf,
        /// The case asked for.
        wanted: Option<String>,
        /// The cases the file holds.
        cases: Vec<String>,
    },
    /// A function input named as an argument or bound is wrong, or an input is left without a
    /// value.
    #[error("UDF {udf}: input {input:?} {reason}")]
    Input {
        /// The UDF's name.
        udf: String,
        /// The input.
        input: String,
        /// What is wrong.
        reason: String,
    },
    /// A UDF manifest could not be read or is malformed.
    #[error("UDF manifest {}: {reason}", path.display())]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The chosen output does not exist or has no Arrow column type.
    #[error("UDF {udf}: {reason}")]
    Output {
        /// The UDF's name.
        udf: String,
        /// What is wrong.
        reason: String,
    },
}

/// A ragtime UDF failed on a batch: an argument column could not be read (a null without a
/// policy, malformed offsets), the function refused the batch, or its output is not one row per
/// input row. DataFusion carries it as `DataFusionError::External`; downcast to get `source`.
#[derive(Debug, thiserror::Error)]
#[error("UDF {udf}{}: {source}", argument.as_ref().map_or(String::new(), |a| format!(", {a}")))]
pub struct CallError {
    /// The UDF's name.
    pub udf: String,
    /// The argument being read (`argument 0 (scores)`), when the error is about one.
    pub argument: Option<String>,
    /// ragtime's error, which names the op or column and the row.
    pub source: ragtime::Error,
}
