//! The gather family: [`Gather`], [`GatherAxis`], [`GatherNd`], [`BooleanMask`] and the segment
//! reductions ([`SegmentReduce`], [`UnsortedSegmentReduce`]), over the row-moving kernels of `take`;
//! `defs` declares the op types gradients build.

pub(crate) mod boolean_mask;
pub(crate) mod defs;
pub(crate) mod gather_nd;
pub(crate) mod gather_op;
pub(crate) mod segments;
pub(crate) mod take;

#[cfg(test)]
mod tests;

pub use boolean_mask::BooleanMask;
pub use defs::{Gather, GatherAxis, SegmentReduce, SegmentReduction, UnsortedSegmentReduce};
pub use gather_nd::GatherNd;

pub use take::{raise_ragged_rank, take_rows, take_spans};

use ragtime_core::Result;
use ragtime_graph::{Attrs, OpRef};

use crate::util::shared;

/// `gather` from graph-file attributes: `axis` and `batch_dims` (`batch_dims` 0 by default and
/// `axis` `batch_dims` by default, as `tf.gather`; both 0 give [`Gather`]).
fn gather_op(attrs: &Attrs) -> Result<OpRef> {
    attrs.only(&["axis", "batch_dims"])?;
    let batch_dims = attrs.int_opt("batch_dims")?.unwrap_or(0);
    let axis = attrs.int_opt("axis")?.unwrap_or(batch_dims);
    if axis == 0 && batch_dims == 0 {
        return shared(Ok(Gather));
    }
    shared(Ok(GatherAxis::new(axis, batch_dims)))
}

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    let segment = |reduction| shared(SegmentReduce::from_attrs(reduction, attrs));
    let unsorted = |reduction| shared(UnsortedSegmentReduce::from_attrs(reduction, attrs));
    Some(match name {
        "gather" => gather_op(attrs),
        "embedding_lookup" => shared(Gather::from_attrs(attrs)),
        "boolean_mask" => shared(BooleanMask::from_attrs(attrs)),
        "gather_nd" => shared(GatherNd::from_attrs(attrs)),
        "segment_sum" => segment(SegmentReduction::Sum),
        "segment_mean" => segment(SegmentReduction::Mean),
        "segment_max" => segment(SegmentReduction::Max),
        "segment_min" => segment(SegmentReduction::Min),
        "unsorted_segment_sum" => unsorted(SegmentReduction::Sum),
        "unsorted_segment_max" => unsorted(SegmentReduction::Max),
        "unsorted_segment_min" => unsorted(SegmentReduction::Min),
        "unsorted_segment_prod" => unsorted(SegmentReduction::Prod),
        "unsorted_segment_mean" => unsorted(SegmentReduction::Mean),
        "unsorted_segment_sqrt_n" => unsorted(SegmentReduction::SqrtN),
        _ => return None,
    })
}
