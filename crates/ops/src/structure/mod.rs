//! The structure family: ops that build, join, reshape and convert ragged tensors without
//! computing on values: concat/stack (`concat`), tile/reverse (`tile`), fill/range/one_hot
//! (`fill`), expand/merge dims (`dims`), dense and sparse conversions (`dense`), and the row
//! partition constructors (`build_partitions`) and accessors (`read_partitions`); `defs`
//! declares `FilledLike`, which gradients build.

pub(crate) mod build_partitions;
pub(crate) mod concat;
pub(crate) mod defs;
pub(crate) mod dense;
pub(crate) mod dims;
pub(crate) mod fill;
pub(crate) mod read_partitions;
pub(crate) mod remap;
pub(crate) mod tile;

#[cfg(test)]
mod partition_tests;
#[cfg(test)]
mod sweep;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

pub use build_partitions::{
    FromNestedRowSplits, FromRowBounds, FromRowLengths, FromRowSplits, FromUniformRowLength, FromValueRowids, Identity,
    SegmentIdsToRowSplits,
};
pub use concat::{expand_dims, Concat, Stack};
pub use defs::FilledLike;
pub use dense::{FromSparse, FromTensor, ToSparse, ToTensor};
pub use dims::{ExpandDims, MergeDims};
pub use fill::{Fill, OneHot, RaggedRange};
pub use read_partitions::{
    BoundingAxes, BoundingShape, FlatValues, NestedRowSplits, Nrows, Rank, RowBounds, RowLengths, RowSplits, Size,
    ValueRowids, Values,
};
pub use tile::{Reverse, Tile};

use ragtime_core::Result;
use ragtime_graph::Attrs;

use crate::util::shared;

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<ragtime_graph::OpRef>> {
    Some(match name {
        "concat" => shared(Concat::from_attrs(attrs)),
        "stack" => shared(Stack::from_attrs(attrs)),
        "tile" => shared(Tile::from_attrs(attrs)),
        "reverse" => shared(Reverse::from_attrs(attrs)),
        "fill" => shared(Fill::from_attrs(attrs)),
        "ragged.range" => shared(RaggedRange::from_attrs(attrs)),
        "to_tensor" => shared(ToTensor::from_attrs(attrs)),
        "from_tensor" => shared(FromTensor::from_attrs(attrs)),
        "to_sparse" => shared(ToSparse::from_attrs(attrs)),
        "from_sparse" => shared(FromSparse::from_attrs(attrs)),
        "one_hot" => shared(OneHot::from_attrs(attrs)),
        "expand_dims" => shared(ExpandDims::from_attrs(attrs)),
        "merge_dims" => shared(MergeDims::from_attrs(attrs)),
        "ones_like" => shared(FilledLike::from_attrs(true, attrs)),
        "zeros_like" => shared(FilledLike::from_attrs(false, attrs)),
        "identity" => shared(Identity::from_attrs(attrs)),
        "from_row_splits" => shared(FromRowSplits::from_attrs(attrs)),
        "from_row_lengths" => shared(FromRowLengths::from_attrs(attrs)),
        "from_value_rowids" => shared(FromValueRowids::from_attrs(attrs)),
        "from_nested_row_splits" => shared(FromNestedRowSplits::from_attrs(attrs)),
        "from_uniform_row_length" => shared(FromUniformRowLength::from_attrs(attrs)),
        "row_splits" => shared(RowSplits::from_attrs(attrs)),
        "row_lengths" => shared(RowLengths::from_attrs(attrs)),
        "value_rowids" => shared(ValueRowids::from_attrs(attrs)),
        "nrows" => shared(Nrows::from_attrs(attrs)),
        "flat_values" => shared(FlatValues::from_attrs(attrs)),
        "bounding_shape" => shared(BoundingShape::from_attrs(attrs)),
        "from_row_starts" => shared(FromRowBounds::from_attrs(false, attrs)),
        "from_row_limits" => shared(FromRowBounds::from_attrs(true, attrs)),
        "row_starts" => shared(RowBounds::from_attrs(false, attrs)),
        "row_limits" => shared(RowBounds::from_attrs(true, attrs)),
        "values" => shared(Values::from_attrs(attrs)),
        "nested_row_splits" => shared(NestedRowSplits::from_attrs(attrs)),
        "size" => shared(Size::from_attrs(attrs)),
        "rank" => shared(Rank::from_attrs(attrs)),
        "ragged.segment_ids_to_row_splits" => shared(SegmentIdsToRowSplits::from_attrs(attrs)),
        _ => return None,
    })
}
