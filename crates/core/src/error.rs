//! The one error type of ragtime: every crate returns [`Error`], and [`Error::kind`] maps it onto the conformance kinds.

use std::fmt;
use std::panic::Location;

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
    /// A request over a resource limit or the call's memory budget, or memory the machine
    /// cannot give (TensorFlow's `ResourceExhaustedError`).
    ResourceExhausted,
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
            ErrorKind::ResourceExhausted => "resource_exhausted",
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
    InvalidRowPartition {
        /// The op (or constructor) that refused.
        op: String,
        /// What was wrong, and where (input, row, value).
        reason: String,
    },
    /// Shapes that cannot be combined.
    #[error("{op}: incompatible shapes: {reason}")]
    IncompatibleShapes {
        /// The op (or constructor) that refused.
        op: String,
        /// What was wrong, and where (input, row, value).
        reason: String,
    },
    /// A dtype an op does not accept.
    #[error("{op}: type mismatch: {reason}")]
    TypeMismatch {
        /// The op (or constructor) that refused.
        op: String,
        /// What was wrong, and where (input, row, value).
        reason: String,
    },
    /// An index refused by design.
    #[error("{op}: invalid index: {reason}")]
    InvalidIndex {
        /// The op (or constructor) that refused.
        op: String,
        /// What was wrong, and where (input, row, value).
        reason: String,
    },
    /// An index outside its dimension.
    #[error("{op}: index {index} out of range for dimension {axis} of size {size}{}", context.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    IndexOutOfRange {
        /// The op that refused.
        op: String,
        /// The index given.
        index: i64,
        /// The dimension it indexes.
        axis: usize,
        /// The size of that dimension.
        size: usize,
        /// Where (which row, which input), when known.
        context: Option<String>,
    },
    /// A value or literal that is not a tensor.
    #[error("{op}: invalid value: {reason}")]
    InvalidValue {
        /// The op (or constructor) that refused.
        op: String,
        /// What was wrong, and where (input, row, value).
        reason: String,
    },
    /// An attribute or argument outside what the op accepts.
    #[error("{op}: invalid argument: {reason}")]
    InvalidArgument {
        /// The op (or constructor) that refused.
        op: String,
        /// What was wrong, and where (input, row, value).
        reason: String,
    },
    /// A request over a limit or a budget (see [`ErrorKind::ResourceExhausted`]).
    #[error("{op}: resource exhausted: {reason}")]
    ResourceExhausted {
        /// The op (or constructor) that refused.
        op: String,
        /// Which limit, its value, and how to raise it or batch the data.
        reason: String,
    },
    /// A malformed graph.
    #[error("invalid graph: {reason}")]
    InvalidGraph {
        /// What is wrong with the graph.
        reason: String,
    },
    /// An error raised by the node `node` (printed as in `debugprint`) while building or running a graph.
    #[error("in node {node}: {source}")]
    AtNode {
        /// The node, as `debugprint` names it.
        node: String,
        /// The node's error.
        source: Box<Error>,
    },
    /// An error found while building a graph, with the place in the user's code that built the
    /// op (the caller of the DSL method, through `#[track_caller]`).
    #[error("{source} (built at {location})")]
    Built {
        /// Where the user's code built the op.
        location: &'static Location<'static>,
        /// The error of building it.
        source: Box<Error>,
    },
    /// Several independent errors, reported together (e.g. by `compile()`, one per problem
    /// among the outputs); never empty, never nested.
    #[error("{}", several(errors))]
    Several {
        /// The errors, in the order they were found.
        errors: Vec<Error>,
    },
}

/// `2 errors:` and one numbered line per error.
fn several(errors: &[Error]) -> String {
    let mut text = format!("{} errors:", errors.len());
    for (i, e) in errors.iter().enumerate() {
        text.push_str(&format!("\n  {}. {e}", i + 1));
    }
    text
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
            | Error::InvalidArgument { op, reason }
            | Error::ResourceExhausted { op, reason } => {
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
            Error::Built { location, source } => {
                f.debug_struct("Built").field("location", location).field("source", source).finish()
            }
            Error::Several { errors } => f.debug_struct("Several").field("errors", errors).finish(),
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
            Error::ResourceExhausted { .. } => ErrorKind::ResourceExhausted,
            Error::AtNode { source, .. } | Error::Built { source, .. } => source.kind(),
            Error::Several { errors } => errors.first().map_or(ErrorKind::InvalidGraph, Error::kind),
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
            Error::ResourceExhausted { .. } => "ResourceExhausted",
            Error::AtNode { .. } => "AtNode",
            Error::Built { .. } => "Built",
            Error::Several { .. } => "Several",
        }
    }

    /// The innermost error: the one an [`Error::AtNode`] / [`Error::Built`] chain wraps (the
    /// first one's, for [`Error::Several`]; the error itself otherwise).
    pub fn root(&self) -> &Error {
        match self {
            Error::AtNode { source, .. } | Error::Built { source, .. } => source.root(),
            Error::Several { errors } => errors.first().map_or(self, Error::root),
            other => other,
        }
    }

    /// Where in the user's code the op that failed was built, when the error comes from building
    /// a graph with the DSL (the first error's, for [`Error::Several`]).
    pub fn location(&self) -> Option<&'static Location<'static>> {
        match self {
            Error::Built { location, .. } => Some(location),
            Error::AtNode { source, .. } => source.location(),
            Error::Several { errors } => errors.first().and_then(Error::location),
            _ => None,
        }
    }

    /// Records where the op that raised this error was built (an error that already knows its
    /// place keeps it).
    pub fn built_at(self, location: &'static Location<'static>) -> Error {
        if self.location().is_some() {
            return self;
        }
        Error::Built { location, source: Box::new(self) }
    }

    /// The independent errors this error stands for: the list of an [`Error::Several`], the
    /// error itself otherwise.
    pub fn errors(&self) -> &[Error] {
        match self {
            Error::Several { errors } => errors,
            other => std::slice::from_ref(other),
        }
    }

    /// One error for all of `errors`: duplicates (the same error reached through several
    /// variables) dropped, [`Error::Several`] flattened; `None` when there is none.
    pub fn combine(errors: impl IntoIterator<Item = Error>) -> Option<Error> {
        let mut distinct: Vec<Error> = Vec::new();
        for e in errors {
            for one in e.errors() {
                if !distinct.contains(one) {
                    distinct.push(one.clone());
                }
            }
        }
        match distinct.len() {
            0 => None,
            1 => distinct.pop(),
            _ => Some(Error::Several { errors: distinct }),
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
    /// See [`Error::ResourceExhausted`].
    pub fn exhausted(op: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::ResourceExhausted { op: op.into(), reason: reason.into() }
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

    #[test]
    fn built_errors_carry_the_callers_location_once() {
        let here = Location::caller();
        let e = Error::dtype("add", "int32 and float32").at_node("Add").built_at(here);
        assert_eq!(e.location(), Some(here));
        assert_eq!(e.to_string(), format!("in node Add: add: type mismatch: int32 and float32 (built at {here})"));
        assert_eq!(e.kind(), ErrorKind::TypeMismatch);
        assert_eq!(e.root(), &Error::dtype("add", "int32 and float32"));
        // A second location (the error passed on through a later op) does not replace the first.
        let later = Location::caller();
        assert_ne!(later, here);
        assert_eq!(e.clone().built_at(later).location(), Some(here));
        assert!(format!("{e:#?}").starts_with("Built {"), "{e:#?}");
    }

    #[test]
    fn combined_errors_are_distinct_and_flat() {
        let a = Error::dtype("add", "a");
        let b = Error::shapes("concat", "b");
        assert_eq!(Error::combine([]), None);
        assert_eq!(Error::combine([a.clone(), a.clone()]), Some(a.clone()));
        let both = Error::combine([a.clone(), b.clone(), a.clone()]).unwrap();
        assert_eq!(both.errors(), [a.clone(), b.clone()]);
        assert_eq!(both.kind(), ErrorKind::TypeMismatch);
        assert_eq!(both.to_string(), "2 errors:\n  1. add: type mismatch: a\n  2. concat: incompatible shapes: b");
        let nested = Error::combine([both.clone(), Error::argument("x", "c"), b.clone()]).unwrap();
        assert_eq!(nested.errors().len(), 3);
    }
}
