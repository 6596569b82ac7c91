//! The gather ops that gradients build, as values: [`Gather`], [`GatherAxis`], [`SegmentReduction`],
//! [`SegmentReduce`] and [`UnsortedSegmentReduce`] with their constructors, apart from their
//! semantics (`impl Op` in `gather_op` and `segments`).

use ragtime_core::{DType, Error, Result};
use ragtime_graph::Attrs;

use crate::gather::take::GATHER;

/// `gather(params, indices)` (TensorFlow's `tf.gather` on axis 0 and `tf.nn.embedding_lookup`):
/// the rows of `params` named by `indices`.
///
/// The result has shape `indices.shape + params.shape[1:]`: ragged indices keep their partitions
/// (each index replaced by its row of `params`); dense indices of rank > 1 over ragged params become
/// uniform partitions, as in TensorFlow's ragged gather. Indices are int32 or int64 and must lie in
/// `[0, params.nrows())` (negative indices are out of range, as in TensorFlow).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gather;

impl Gather {
    /// `gather(params, indices)`.
    pub fn new() -> Self {
        Gather
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Gather)
    }
}

/// `gather(params, indices, axis=, batch_dims=)` (`tf.gather` with its `axis` and `batch_dims`):
/// `result[b..., p..., i..., rest...] = params[b..., p..., indices[b..., i...], rest...]` where the
/// first `batch_dims` dims (`b`) are shared by `params` and `indices` and gathering happens along
/// `axis` of `params`. Axis 0 without batch dims is [`Gather`]. Negative `axis` counts from the end
/// of `params`, negative `batch_dims` from the end of `indices`; `0 <= batch_dims <= axis < rank`.
///
/// It reduces, as TensorFlow's ragged gather does, to one primitive: with one batch dim and
/// axis 1, every index is moved to the global position of its item among `params`' dim-1 items
/// and one [`Gather`] takes them. Other forms get there by repeating `indices` over the dims of
/// `params` before `axis` (a new batch dim) and by merging shared batch dims (which must have
/// equal rows in both). Indices into ragged rows are bounds-checked (`index_out_of_range`).
/// Dense `params` with dense `indices` give a dense result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GatherAxis {
    /// The gathered axis of `params`.
    pub axis: i64,
    /// How many leading dims `params` and `indices` share.
    pub batch_dims: i64,
}

impl GatherAxis {
    /// `gather` along `axis` with `batch_dims`.
    pub fn new(axis: i64, batch_dims: i64) -> Self {
        GatherAxis { axis, batch_dims }
    }

    /// `(axis, batch_dims)` resolved against the ranks.
    pub(crate) fn resolve(&self, params_rank: usize, indices_rank: usize) -> Result<(usize, usize)> {
        let axis = if self.axis < 0 { self.axis + params_rank as i64 } else { self.axis };
        let batch = if self.batch_dims < 0 { self.batch_dims + indices_rank as i64 } else { self.batch_dims };
        if batch < 0 || batch as usize > indices_rank {
            return Err(Error::argument(
                GATHER,
                format!("batch_dims {} is out of range for indices of rank {indices_rank}", self.batch_dims),
            ));
        }
        if axis < batch || axis as usize >= params_rank {
            return Err(Error::argument(
                GATHER,
                format!("axis {} must lie in batch_dims..rank ({batch}..{params_rank}) of params", self.axis),
            ));
        }
        Ok((axis as usize, batch as usize))
    }
}

/// How a segment reduction combines the rows of one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegmentReduction {
    /// `segment_sum` (integers wrap, as in TensorFlow).
    Sum,
    /// `segment_mean`, in the data's dtype (integer means truncate toward zero, as in TensorFlow);
    /// `unsorted_segment_mean` divides in the true-division float type.
    Mean,
    /// `segment_max` (NaN wins).
    Max,
    /// `segment_min` (NaN wins).
    Min,
    /// `segment_prod` (integers wrap).
    Prod,
    /// `unsorted_segment_sqrt_n`: the sum divided by the square root of the count (floats only).
    SqrtN,
}

impl SegmentReduction {
    /// TensorFlow's (and the graph files') name of the sorted op: `segment_sum`, ...
    pub fn tf_name(self) -> &'static str {
        match self {
            SegmentReduction::Sum => "segment_sum",
            SegmentReduction::Mean => "segment_mean",
            SegmentReduction::Max => "segment_max",
            SegmentReduction::Min => "segment_min",
            SegmentReduction::Prod => "segment_prod",
            SegmentReduction::SqrtN => "segment_sqrt_n",
        }
    }

    /// TensorFlow's (and the graph files') name of the unsorted op: `unsorted_segment_sum`, ...
    pub fn unsorted_name(self) -> &'static str {
        match self {
            SegmentReduction::Sum => "unsorted_segment_sum",
            SegmentReduction::Mean => "unsorted_segment_mean",
            SegmentReduction::Max => "unsorted_segment_max",
            SegmentReduction::Min => "unsorted_segment_min",
            SegmentReduction::Prod => "unsorted_segment_prod",
            SegmentReduction::SqrtN => "unsorted_segment_sqrt_n",
        }
    }

    pub(crate) fn op_name(self) -> &'static str {
        match self {
            SegmentReduction::Sum => "SegmentSum",
            SegmentReduction::Mean => "SegmentMean",
            SegmentReduction::Max => "SegmentMax",
            SegmentReduction::Min => "SegmentMin",
            SegmentReduction::Prod => "SegmentProd",
            SegmentReduction::SqrtN => "SegmentSqrtN",
        }
    }

    /// The combination the kernel folds a segment with (means and square-root means divide the
    /// sum afterwards).
    pub(crate) fn fold(self) -> SegmentReduction {
        match self {
            SegmentReduction::Mean | SegmentReduction::SqrtN => SegmentReduction::Sum,
            other => other,
        }
    }
}

/// `segment_sum` / `segment_mean` / `segment_max` / `segment_min(data, segment_ids)` (TensorFlow's
/// `tf.math.segment_*`): combines the rows of `data` that share a segment id.
///
/// `segment_ids` is a sorted, non-negative int32 / int64 vector with one id per row of `data`; the
/// result has `max id + 1` rows, and a segment without rows gives 0 (for every reduction, as
/// TensorFlow documents). Ragged `data` is combined position by position as in TensorFlow's ragged
/// segment ops: row `s` of the result is as long as the longest row of segment `s` (empty when the
/// segment has no rows) and each of its items combines the items at that position.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentReduce {
    /// The combination.
    pub reduction: SegmentReduction,
}

impl SegmentReduce {
    /// The sorted segment reduction `reduction`.
    pub fn new(reduction: SegmentReduction) -> Self {
        SegmentReduce { reduction }
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(reduction: SegmentReduction, attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(SegmentReduce { reduction })
    }
}

/// `unsorted_segment_sum` / `_max` / `_min` / `_prod` / `_mean` / `_sqrt_n(data, segment_ids)`
/// with attribute `num_segments` (TensorFlow's `tf.math.unsorted_segment_*`): combines the items of
/// `data` that share a segment id, in any order.
///
/// `segment_ids` (int32 / int64, dense or ragged) has a shape that is a prefix of `data`'s; the result
/// has shape `[num_segments] + data.shape[rank(segment_ids):]`. Negative ids drop their items (as
/// TensorFlow documents); ids `>= num_segments` are `index_out_of_range`. Ragged items combine
/// position by position, as in [`SegmentReduce`], so an empty segment is an empty row. A segment
/// without items in a dense result holds 0 (sum), the dtype's lowest finite value (max), highest
/// (min), 1 (prod), and for mean and sqrt_n 0 with dense segment ids but NaN with ragged ones
/// (TensorFlow's ragged path divides by the zero count). Means of integers divide in the
/// true-division float type (float32 for 8/16-bit integers, float64 for wider ones); sqrt_n takes
/// floats only.
#[derive(Debug, Clone, PartialEq)]
pub struct UnsortedSegmentReduce {
    /// The combination.
    pub reduction: SegmentReduction,
    /// The number of rows of the result.
    pub num_segments: usize,
}

impl UnsortedSegmentReduce {
    /// `unsorted_segment_<reduction>(data, segment_ids, num_segments)`.
    pub fn new(reduction: SegmentReduction, num_segments: usize) -> Self {
        UnsortedSegmentReduce { reduction, num_segments }
    }

    /// From graph-file attributes: `num_segments` (a non-negative integer).
    pub fn from_attrs(reduction: SegmentReduction, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["num_segments"])?;
        let n = attrs.int("num_segments")?;
        let num_segments = usize::try_from(n)
            .map_err(|_| Error::argument(reduction.unsorted_name(), format!("num_segments must be >= 0, got {n}")))?;
        Ok(UnsortedSegmentReduce { reduction, num_segments })
    }

    /// The result dtype for data of `dtype` (already checked numeric).
    pub(crate) fn output_dtype(&self, dtype: DType) -> Result<DType> {
        match self.reduction {
            SegmentReduction::Mean => Ok(dtype.true_division_type().unwrap_or(dtype)),
            SegmentReduction::SqrtN if !dtype.is_float() => Err(Error::dtype(
                self.reduction.unsorted_name(),
                format!("input 0 (data) must be float32 or float64, got {dtype}"),
            )),
            _ => Ok(dtype),
        }
    }
}
