//! Structure, partition, indexing and gather functions of the DSL (`concat`, `tile`, `x.get(s![.., :2])`,
//! `gather`, `from_row_splits`, ...).

use ragtime_core::{Error, Literal};
use ragtime_graph::Op;
use ragtime_ops::gather::{BooleanMask, Gather, SegmentReduce, SegmentReduction, UnsortedSegmentSum};
use ragtime_ops::index::{GetItem, Key};
use ragtime_ops::partition_ops::{
    BoundingShape, FlatValues, FromNestedRowSplits, FromRowLengths, FromRowSplits, FromUniformRowLength,
    FromValueRowids, Identity, Nrows, RowLengths, RowSplits, ValueRowids,
};
use ragtime_ops::structure::{
    Concat, Fill, FromSparse, FromTensor, RaggedRange, Reverse, Stack, Tile, ToSparse, ToTensor,
};

use crate::Var;

/// Applies a one-output op to several inputs (at least one).
#[track_caller]
fn apply_n(op: impl Op, inputs: &[&Var]) -> Var {
    match inputs.split_first() {
        Some((first, rest)) => first.apply1(op, rest),
        None => Var::error(Error::argument(op.name(), "needs at least one input")),
    }
}

/// The same value (`tf.identity`).
#[track_caller]
pub fn identity(x: &Var) -> Var {
    x.apply1(Identity::new(), &[])
}

/// Joins tensors along `axis` (`tf.concat`): axis 0 appends rows, a ragged axis joins rows item by item.
#[track_caller]
pub fn concat(xs: &[&Var], axis: i64) -> Var {
    apply_n(Concat::new(axis), xs)
}

/// Stacks tensors along a new `axis` (`tf.stack`).
#[track_caller]
pub fn stack(xs: &[&Var], axis: i64) -> Var {
    apply_n(Stack::new(axis), xs)
}

/// Repeats the tensor `multiples[d]` times along each dim `d` (`tf.tile`), ragged rows included.
#[track_caller]
pub fn tile(x: &Var, multiples: &[usize]) -> Var {
    x.apply1(Tile::new(multiples.to_vec()), &[])
}

/// Reverses the given axes (`tf.reverse`), ragged ones included.
#[track_caller]
pub fn reverse(x: &Var, axes: &[i64]) -> Var {
    x.apply1(Reverse::new(axes.to_vec()), &[])
}

/// A dense tensor of shape `dims` (an integer vector) filled with the scalar `value` (`tf.fill`).
#[track_caller]
pub fn fill(dims: &Var, value: &Var) -> Var {
    dims.apply1(Fill::new(), &[value])
}

/// `tf.ragged.range(limits)`: row `i` is `0, 1, ..., limits[i] - 1`.
#[track_caller]
pub fn range(limits: &Var) -> Var {
    limits.apply1(RaggedRange::new(), &[])
}

/// `tf.ragged.range(starts, limits, deltas)`: row `i` counts from `starts[i]` to `limits[i]` by `deltas[i]`
/// (scalars broadcast; deltas default to 1).
#[track_caller]
pub fn range_between(starts: &Var, limits: &Var, deltas: Option<&Var>) -> Var {
    match deltas {
        Some(d) => starts.apply1(RaggedRange::new(), &[limits, d]),
        None => starts.apply1(RaggedRange::new(), &[limits]),
    }
}

/// The options of [`to_tensor`] (`RaggedTensor.to_tensor(default_value, shape)`), built by
/// chaining: `ToTensorOptions::new().default_value(-1).shape([Some(2), None])`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToTensorOptions {
    default_value: Option<Literal>,
    shape: Option<Vec<Option<usize>>>,
}

impl ToTensorOptions {
    /// Pad with zeros (empty strings), to the bounding shape.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pad with this value (converted to the tensor's dtype) instead of zero.
    pub fn default_value(mut self, value: impl Into<Literal>) -> Self {
        self.default_value = Some(value.into());
        self
    }

    /// Cut or pad to this shape; a `None` dim takes the bounding size.
    pub fn shape(mut self, shape: impl IntoIterator<Item = Option<usize>>) -> Self {
        self.shape = Some(shape.into_iter().collect());
        self
    }
}

/// A dense tensor padded with the options' default value (zero / empty string unless set),
/// optionally cut or padded to a shape (`None` dims take the bounding size)
/// (`RaggedTensor.to_tensor`): `to_tensor(&x, ToTensorOptions::new().default_value(-1))`.
#[track_caller]
pub fn to_tensor(x: &Var, options: ToTensorOptions) -> Var {
    x.apply1(ToTensor::new(options.default_value, options.shape), &[])
}

/// A ragged tensor from a dense one (`RaggedTensor.from_tensor`): rows keep their first `lengths[i]`
/// items, or drop trailing `padding`, or keep everything.
#[track_caller]
pub fn from_tensor(tensor: &Var, lengths: Option<&Var>, padding: Option<Literal>) -> Var {
    match lengths {
        Some(l) => tensor.apply1(FromTensor::new(padding), &[l]),
        None => tensor.apply1(FromTensor::new(padding), &[]),
    }
}

/// The sparse encoding `(indices, values, dense_shape)` (`RaggedTensor.to_sparse`).
#[track_caller]
pub fn to_sparse(x: &Var) -> (Var, Var, Var) {
    let mut outs = x.graph().apply(ToSparse::new(), &[x]).into_iter();
    // A `match`, not a closure: the error keeps the caller's location (`#[track_caller]`).
    let first = match outs.next() {
        Some(v) => v,
        None => Var::error(Error::graph("to_sparse gave no output")),
    };
    let second = outs.next().unwrap_or_else(|| first.clone());
    let third = outs.next().unwrap_or_else(|| first.clone());
    (first, second, third)
}

/// A ragged tensor from a 2-d sparse encoding (`RaggedTensor.from_sparse`).
#[track_caller]
pub fn from_sparse(indices: &Var, values: &Var, dense_shape: &Var) -> Var {
    indices.apply1(FromSparse::new(), &[values, dense_shape])
}

/// Adds an outer ragged dim from row splits (`RaggedTensor.from_row_splits`, validating).
#[track_caller]
pub fn from_row_splits(values: &Var, splits: &Var) -> Var {
    values.apply1(FromRowSplits::new(), &[splits])
}

/// Adds an outer ragged dim from row lengths.
#[track_caller]
pub fn from_row_lengths(values: &Var, lengths: &Var) -> Var {
    values.apply1(FromRowLengths::new(), &[lengths])
}

/// Adds an outer ragged dim from each value's row id; `nrows` adds trailing empty rows.
#[track_caller]
pub fn from_value_rowids(values: &Var, rowids: &Var, nrows: Option<usize>) -> Var {
    values.apply1(FromValueRowids::new(nrows), &[rowids])
}

/// Builds every ragged dim at once from nested row splits (= PaddlePaddle LoD offsets).
#[track_caller]
pub fn from_nested_row_splits(flat_values: &Var, splits: &[&Var]) -> Var {
    flat_values.apply1(FromNestedRowSplits::new(), splits)
}

/// Adds an outer dim of rows of `row_length` values each.
#[track_caller]
pub fn from_uniform_row_length(values: &Var, row_length: usize) -> Var {
    values.apply1(FromUniformRowLength::new(row_length, None), &[])
}

/// Gathers rows of `params` by `indices` (`tf.gather`); ragged indices give a ragged result.
#[track_caller]
pub fn gather(params: &Var, indices: &Var) -> Var {
    params.apply1(Gather::new(), &[indices])
}

/// Embedding rows of `table` for ids (`tf.nn.embedding_lookup`, the same as [`gather`]).
#[track_caller]
pub fn embedding_lookup(table: &Var, ids: &Var) -> Var {
    gather(table, ids)
}

/// Keeps the items where `mask` is true (`tf.ragged.boolean_mask`).
#[track_caller]
pub fn boolean_mask(data: &Var, mask: &Var) -> Var {
    data.apply1(BooleanMask::new(), &[mask])
}

/// Sums rows of `data` by sorted segment id (`tf.math.segment_sum`).
#[track_caller]
pub fn segment_sum(data: &Var, segment_ids: &Var) -> Var {
    data.apply1(SegmentReduce::new(SegmentReduction::Sum), &[segment_ids])
}

/// Means of rows of `data` by sorted segment id (`tf.math.segment_mean`).
#[track_caller]
pub fn segment_mean(data: &Var, segment_ids: &Var) -> Var {
    data.apply1(SegmentReduce::new(SegmentReduction::Mean), &[segment_ids])
}

/// Maxima of rows of `data` by sorted segment id (`tf.math.segment_max`).
#[track_caller]
pub fn segment_max(data: &Var, segment_ids: &Var) -> Var {
    data.apply1(SegmentReduce::new(SegmentReduction::Max), &[segment_ids])
}

/// Minima of rows of `data` by sorted segment id (`tf.math.segment_min`).
#[track_caller]
pub fn segment_min(data: &Var, segment_ids: &Var) -> Var {
    data.apply1(SegmentReduce::new(SegmentReduction::Min), &[segment_ids])
}

/// Sums rows of `data` into `num_segments` segments by any ids (`tf.math.unsorted_segment_sum`).
#[track_caller]
pub fn unsorted_segment_sum(data: &Var, segment_ids: &Var, num_segments: usize) -> Var {
    data.apply1(UnsortedSegmentSum::new(num_segments), &[segment_ids])
}

impl Var {
    /// `x[key]` with Python's index syntax: `x.get(s![.., -2..])`, `x.get(s![1, 2])`, `x.get(0)`.
    #[track_caller]
    pub fn get(&self, key: impl Into<Key>) -> Var {
        self.apply1(GetItem::new(key), &[])
    }

    /// `x[key]` with the key written as text, as in graph files: `x.getitem(":, -2:")`.
    #[track_caller]
    pub fn getitem(&self, key: &str) -> Var {
        match key.parse::<Key>() {
            Ok(k) => self.get(k),
            Err(e) => Var::error(e),
        }
    }

    /// The outermost row splits (`RaggedTensor.row_splits`).
    #[track_caller]
    pub fn row_splits(&self) -> Var {
        self.apply1(RowSplits::new(), &[])
    }

    /// Row lengths along `axis` (`RaggedTensor.row_lengths(axis)`, axis 1 by default in TF).
    #[track_caller]
    pub fn row_lengths(&self, axis: i64) -> Var {
        self.apply1(RowLengths::new(axis), &[])
    }

    /// The row id of every value (`RaggedTensor.value_rowids`).
    #[track_caller]
    pub fn value_rowids(&self) -> Var {
        self.apply1(ValueRowids::new(), &[])
    }

    /// The number of rows, an int64 scalar (`RaggedTensor.nrows`).
    #[track_caller]
    pub fn nrows(&self) -> Var {
        self.apply1(Nrows::new(), &[])
    }

    /// All values without partitions (`RaggedTensor.flat_values`).
    #[track_caller]
    pub fn flat_values(&self) -> Var {
        self.apply1(FlatValues::new(), &[])
    }

    /// The smallest dense shape holding every row (`RaggedTensor.bounding_shape`).
    #[track_caller]
    pub fn bounding_shape(&self) -> Var {
        self.apply1(BoundingShape::new(), &[])
    }

    /// A dense tensor padded with zeros / empty strings (`RaggedTensor.to_tensor()`).
    #[track_caller]
    pub fn to_tensor(&self) -> Var {
        to_tensor(self, ToTensorOptions::new())
    }

    /// A dense tensor with a padding value and / or a shape (`RaggedTensor.to_tensor(default_value,
    /// shape)`): `x.to_tensor_with(ToTensorOptions::new().default_value(-1).shape([None, Some(4)]))`.
    #[track_caller]
    pub fn to_tensor_with(&self, options: ToTensorOptions) -> Var {
        to_tensor(self, options)
    }

    /// The sparse encoding `(indices, values, dense_shape)` (`RaggedTensor.to_sparse`).
    #[track_caller]
    pub fn to_sparse(&self) -> (Var, Var, Var) {
        to_sparse(self)
    }

    /// Joins `self` and `others` along `axis` (`tf.concat([self, *others], axis)`).
    #[track_caller]
    pub fn concat(&self, others: &[&Var], axis: i64) -> Var {
        let mut all = vec![self];
        all.extend_from_slice(others);
        concat(&all, axis)
    }

    /// Stacks `self` and `others` along a new `axis` (`tf.stack([self, *others], axis)`).
    #[track_caller]
    pub fn stack(&self, others: &[&Var], axis: i64) -> Var {
        let mut all = vec![self];
        all.extend_from_slice(others);
        stack(&all, axis)
    }

    /// Repeats the tensor `multiples[d]` times along each dim `d` (`tf.tile`).
    #[track_caller]
    pub fn tile(&self, multiples: &[usize]) -> Var {
        tile(self, multiples)
    }

    /// Reverses the given axes (`tf.reverse`).
    #[track_caller]
    pub fn reverse(&self, axes: &[i64]) -> Var {
        reverse(self, axes)
    }

    /// Rows of `self` picked by `indices` (`tf.gather(self, indices)`).
    #[track_caller]
    pub fn gather(&self, indices: &Var) -> Var {
        gather(self, indices)
    }

    /// The rows of this table for ids (`tf.nn.embedding_lookup(self, ids)`).
    #[track_caller]
    pub fn embedding_lookup(&self, ids: &Var) -> Var {
        embedding_lookup(self, ids)
    }

    /// The items where `mask` is true (`tf.ragged.boolean_mask(self, mask)`).
    #[track_caller]
    pub fn boolean_mask(&self, mask: &Var) -> Var {
        boolean_mask(self, mask)
    }

    /// Sums of rows by sorted segment id (`tf.math.segment_sum(self, ids)`).
    #[track_caller]
    pub fn segment_sum(&self, segment_ids: &Var) -> Var {
        segment_sum(self, segment_ids)
    }

    /// Means of rows by sorted segment id (`tf.math.segment_mean(self, ids)`).
    #[track_caller]
    pub fn segment_mean(&self, segment_ids: &Var) -> Var {
        segment_mean(self, segment_ids)
    }

    /// Maxima of rows by sorted segment id (`tf.math.segment_max(self, ids)`).
    #[track_caller]
    pub fn segment_max(&self, segment_ids: &Var) -> Var {
        segment_max(self, segment_ids)
    }

    /// Minima of rows by sorted segment id (`tf.math.segment_min(self, ids)`).
    #[track_caller]
    pub fn segment_min(&self, segment_ids: &Var) -> Var {
        segment_min(self, segment_ids)
    }

    /// Sums of rows into `num_segments` segments by any ids (`tf.math.unsorted_segment_sum`).
    #[track_caller]
    pub fn unsorted_segment_sum(&self, segment_ids: &Var, num_segments: usize) -> Var {
        unsorted_segment_sum(self, segment_ids, num_segments)
    }

    /// The same value (`tf.identity`).
    #[track_caller]
    pub fn identity(&self) -> Var {
        identity(self)
    }
}
