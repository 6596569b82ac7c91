//! The one error type of ragtime: every crate returns [`Error`], and [`Error::kind`] maps it onto the conformance kinds.

use std::fmt;

/// The coarse class of an [`Error`], as named by the conformance cases (`expect_error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Row splits / lengths / row ids that do not describe a valid partition.
    InvalidRowPartition,
    /// Operands whose shapes cannot be broadcast or combined.
    IncompatibleShapes,
    /// Operand dtypes that an op does not accept.
    TypeMismatch,
    /// An index the op refuses by design (a scalar index into a ragged dimension).
    InvalidIndex,
    /// An index outside its dimension.
    IndexOutOfRange,
    /// A literal that is not a tensor (mixed dtypes, mixed nesting depths), or a malformed value.
    InvalidValue,
    /// An attribute or argument outside what the op accepts (negative bucket count, bad axis, ...).
    InvalidArgument,
    /// A graph that is malformed (unknown variable, wrong arity, cycle, ...).
    InvalidGraph,
}

impl ErrorKind {
    /// The kind's name as written in conformance files (`invalid_row_partition`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidRowPartition => "invalid_row_partition",
            ErrorKind::IncompatibleShapes => "incompatible_shapes",
            ErrorKind::TypeMismatch => "type_mismatch",
            ErrorKind::InvalidIndex => "invalid_index",
            ErrorKind::IndexOutOfRange => "index_out_of_range",
            ErrorKind::InvalidValue => "invalid_value",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::InvalidGraph => "invalid_graph",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every failure ragtime reports. Messages name the op, the input and the offending row or value.
///
/// `op` is the op (or constructor) that refused, e.g. `from_row_splits` or `add`;
/// errors raised while running a graph are wrapped in [`Error::AtNode`] naming the node.
///
/// `{:?}` prints the same human message as `{}`, so `fn main() -> ragtime::Result<()>` reports
/// a failure readably; `{:#?}` prints the structured form (variant and fields).
#[derive(Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Invalid row partition (see [`ErrorKind::InvalidRowPartition`]).
    #[error("{op}: invalid row partition: {reason}")]
    InvalidRowPartition { op: String, reason: String },
    /// Shapes that cannot be combined.
    #[error("{op}: incompatible shapes: {reason}")]
    IncompatibleShapes { op: String, reason: String },
    /// A dtype an op does not accept.
    #[error("{op}: type mismatch: {reason}")]
    TypeMismatch { op: String, reason: String },
    /// An index refused by design.
    #[error("{op}: invalid index: {reason}")]
    InvalidIndex { op: String, reason: String },
    /// An index outside its dimension.
    #[error("{op}: index {index} out of range for dimension {axis} of size {size}{}", context.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    IndexOutOfRange { op: String, index: i64, axis: usize, size: usize, context: Option<String> },
    /// A value or literal that is not a tensor.
    #[error("{op}: invalid value: {reason}")]
    InvalidValue { op: String, reason: String },
    /// An attribute or argument outside what the op accepts.
    #[error("{op}: invalid argument: {reason}")]
    InvalidArgument { op: String, reason: String },
    /// A malformed graph.
    #[error("invalid graph: {reason}")]
    InvalidGraph { reason: String },
    /// An error raised by the node `node` (printed as in `debugprint`) while building or running a graph.
    #[error("in node {node}: {source}")]
    AtNode { node: String, source: Box<Error> },
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        match self {
            Error::InvalidRowPartition { op, reason }
            | Error::IncompatibleShapes { op, reason }
            | Error::TypeMismatch { op, reason }
            | Error::InvalidIndex { op, reason }
            | Error::InvalidValue { op, reason }
            | Error::InvalidArgument { op, reason } => {
                f.debug_struct(self.variant_name()).field("op", op).field("reason", reason).finish()
            }
            Error::IndexOutOfRange { op, index, axis, size, context } => f
                .debug_struct("IndexOutOfRange")
                .field("op", op)
                .field("index", index)
                .field("axis", axis)
                .field("size", size)
                .field("context", context)
                .finish(),
            Error::InvalidGraph { reason } => f.debug_struct("InvalidGraph").field("reason", reason).finish(),
            Error::AtNode { node, source } => {
                f.debug_struct("AtNode").field("node", node).field("source", source).finish()
            }
        }
    }
}

/// `Result` with ragtime's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The conformance kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidRowPartition { .. } => ErrorKind::InvalidRowPartition,
            Error::IncompatibleShapes { .. } => ErrorKind::IncompatibleShapes,
            Error::TypeMismatch { .. } => ErrorKind::TypeMismatch,
            Error::InvalidIndex { .. } => ErrorKind::InvalidIndex,
            Error::IndexOutOfRange { .. } => ErrorKind::IndexOutOfRange,
            Error::InvalidValue { .. } => ErrorKind::InvalidValue,
            Error::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            Error::InvalidGraph { .. } => ErrorKind::InvalidGraph,
            Error::AtNode { source, .. } => source.kind(),
        }
    }

    fn variant_name(&self) -> &'static str {
        match self {
            Error::InvalidRowPartition { .. } => "InvalidRowPartition",
            Error::IncompatibleShapes { .. } => "IncompatibleShapes",
            Error::TypeMismatch { .. } => "TypeMismatch",
            Error::InvalidIndex { .. } => "InvalidIndex",
            Error::IndexOutOfRange { .. } => "IndexOutOfRange",
            Error::InvalidValue { .. } => "InvalidValue",
            Error::InvalidArgument { .. } => "InvalidArgument",
            Error::InvalidGraph { .. } => "InvalidGraph",
            Error::AtNode { .. } => "AtNode",
        }
    }

    /// The innermost error: the one an [`Error::AtNode`] chain wraps (the error itself otherwise).
    pub fn root(&self) -> &Error {
        match self {
            Error::AtNode { source, .. } => source.root(),
            other => other,
        }
    }

    /// Wraps this error with the node that raised it.
    pub fn at_node(self, node: impl Into<String>) -> Error {
        Error::AtNode { node: node.into(), source: Box::new(self) }
    }

    /// Shorthand constructors, so that call sites stay one line long.
    pub fn partition(op: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidRowPartition { op: op.into(), reason: reason.into() }
    }
    /// See [`Error::IncompatibleShapes`].
    pub fn shapes(op: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::IncompatibleShapes { op: op.into(), reason: reason.into() }
    }
    /// See [`Error::TypeMismatch`].
    pub fn dtype(op: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::TypeMismatch { op: op.into(), reason: reason.into() }
    }
    /// See [`Error::InvalidIndex`].
    pub fn index(op: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidIndex { op: op.into(), reason: reason.into() }
    }
    /// See [`Error::IndexOutOfRange`].
    pub fn out_of_range(op: impl Into<String>, index: i64, axis: usize, size: usize) -> Error {
        Error::IndexOutOfRange { op: op.into(), index, axis, size, context: None }
    }
    /// See [`Error::IndexOutOfRange`]; `context` says where (which row, which input).
    pub fn out_of_range_at(
        op: impl Into<String>,
        index: i64,
        axis: usize,
        size: usize,
        context: impl Into<String>,
    ) -> Error {
        Error::IndexOutOfRange { op: op.into(), index, axis, size, context: Some(context.into()) }
    }
    /// See [`Error::InvalidValue`].
    pub fn value(op: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidValue { op: op.into(), reason: reason.into() }
    }
    /// See [`Error::InvalidArgument`].
    pub fn argument(op: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidArgument { op: op.into(), reason: reason.into() }
    }
    /// See [`Error::InvalidGraph`].
    pub fn graph(reason: impl Into<String>) -> Error {
        Error::InvalidGraph { reason: reason.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_reads_like_display_and_alternate_debug_is_structured() {
        let e = Error::out_of_range("gather", 7, 0, 3).at_node("GetItem{:, 0}");
        assert_eq!(format!("{e:?}"), e.to_string());
        assert_eq!(format!("{e:?}"), "in node GetItem{:, 0}: gather: index 7 out of range for dimension 0 of size 3");
        let structured = format!("{e:#?}");
        assert!(structured.starts_with("AtNode {") && structured.contains("IndexOutOfRange {"), "{structured}");
        assert!(format!("{:#?}", Error::graph("x")).contains("InvalidGraph"));
        assert_eq!(e.root(), &Error::out_of_range("gather", 7, 0, 3));
        let r: Result<()> = Err(Error::dtype("add", "int32 and float32"));
        assert_eq!(format!("{r:?}"), "Err(add: type mismatch: int32 and float32)");
    }
}
