//! Builds ops from their graph-file names and attributes (the conformance vocabulary).

use ragtime_core::{Error, Result};
use ragtime_graph::{Attrs, OpRef};

/// Every op name a graph file may use.
pub const OP_NAMES: &[&str] = &[
    "identity",
    "add",
    "subtract",
    "multiply",
    "divide",
    "floordiv",
    "floormod",
    "pow",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_invert",
    "negative",
    "abs",
    "square",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "floor",
    "ceil",
    "round",
    "sign",
    "cast",
    "where",
    "reduce_sum",
    "reduce_mean",
    "reduce_max",
    "reduce_min",
    "reduce_prod",
    "reduce_all",
    "reduce_any",
    "concat",
    "stack",
    "tile",
    "reverse",
    "getitem",
    "gather",
    "embedding_lookup",
    "boolean_mask",
    "segment_sum",
    "segment_mean",
    "segment_max",
    "segment_min",
    "unsorted_segment_sum",
    "fill",
    "from_row_splits",
    "from_row_lengths",
    "from_value_rowids",
    "from_nested_row_splits",
    "from_uniform_row_length",
    "from_tensor",
    "to_tensor",
    "to_sparse",
    "from_sparse",
    "row_splits",
    "row_lengths",
    "value_rowids",
    "nrows",
    "flat_values",
    "bounding_shape",
    "ragged.range",
    "strings.split",
    "strings.substr",
    "strings.join",
    "strings.reduce_join",
    "strings.length",
    "strings.lower",
    "strings.upper",
    "strings.to_hash_bucket_fast",
    "strings.ngrams",
];

/// A module's lookup: the op called `name` if the module owns that name.
type Lookup = fn(&str, &Attrs) -> Option<Result<OpRef>>;

/// The op called `name` in graph files, configured by `attrs`.
pub fn op_from_name(name: &str, attrs: &Attrs) -> Result<OpRef> {
    let lookups: [Lookup; 7] = [
        crate::elemwise::lookup,
        crate::reduce::lookup,
        crate::partition_ops::lookup,
        crate::structure::lookup,
        crate::index::lookup,
        crate::gather::lookup,
        crate::strings::lookup,
    ];
    for lookup in lookups {
        if let Some(op) = lookup(name, attrs) {
            return op;
        }
    }
    Err(Error::argument(name, format!("unknown op `{name}`")))
}
