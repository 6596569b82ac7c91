//! Structure, partition, indexing and gather functions of the DSL (`concat`, `tile`, `x.get(s![.., :2])`,
//! `gather`, `from_row_splits`, ...).

use ragtime_core::{DType, Error, Literal};
use ragtime_graph::Op;
use ragtime_ops::cross::Cross;
use ragtime_ops::gather::{
    BooleanMask, Gather, GatherAxis, GatherNd, SegmentReduce, SegmentReduction, UnsortedSegmentReduce,
};
use ragtime_ops::index::{GetItem, Key};
use ragtime_ops::linalg::MatMul;
use ragtime_ops::structure::{
    BoundingAxes, BoundingShape, FlatValues, FromNestedRowSplits, FromRowBounds, FromRowLengths, FromRowSplits,
    FromUniformRowLength, FromValueRowids, Identity, NestedRowSplits, Nrows, Rank, RowBounds, RowLengths, RowSplits,
    SegmentIdsToRowSplits, Size, ValueRowids, Values,
};
use ragtime_ops::structure::{
    Concat, ExpandDims, Fill, FilledLike, FromSparse, FromTensor, MergeDims, OneHot, RaggedRange, Reverse, Stack, Tile,
    ToSparse, ToTensor,
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

/// A ragged tensor of `ragged_rank` ragged dims from a dense one (`RaggedTensor.from_tensor(t,
/// padding=, ragged_rank=)`): the outer ragged dims keep every item, the innermost drops trailing
/// `padding` (or keeps everything). `ragged_rank` 0, or one not below the tensor's rank, is a
/// build error.
#[track_caller]
pub fn from_tensor_ragged_rank(tensor: &Var, padding: Option<Literal>, ragged_rank: usize) -> Var {
    tensor.apply1(FromTensor::new(padding).with_ragged_rank(ragged_rank), &[])
}

/// The values `one_hot` writes, and their dtype: TensorFlow's defaults are 1 / 0 as float32;
/// chaining: `OneHotOptions::new().values(7, -1).dtype(DType::I64)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OneHotOptions {
    on_value: Option<Literal>,
    off_value: Option<Literal>,
    dtype: Option<DType>,
}

impl OneHotOptions {
    /// Ones and zeros, float32.
    pub fn new() -> Self {
        Self::default()
    }

    /// `on` at the index, `off` elsewhere (their dtype, unless [`OneHotOptions::dtype`] is set).
    pub fn values(mut self, on: impl Into<Literal>, off: impl Into<Literal>) -> Self {
        self.on_value = Some(on.into());
        self.off_value = Some(off.into());
        self
    }

    /// The result's dtype.
    pub fn dtype(mut self, dtype: DType) -> Self {
        self.dtype = Some(dtype);
        self
    }
}

/// A new innermost dim of size `depth` holding 1.0 at each index and 0.0 elsewhere
/// (`tf.one_hot`); indices outside `[0, depth)` give zeros only.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let ids = g.input("ids", TensorType::ragged(DType::I32, 1));
/// let f = compile(&[&ids], &[&ids.one_hot(3)]).unwrap();
/// let y = f.call(&[ragged![[2], []].unwrap()]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![[[0.0, 0.0, 1.0]], []].unwrap().to_literal());
/// ```
#[track_caller]
pub fn one_hot(indices: &Var, depth: usize) -> Var {
    one_hot_with(indices, depth, OneHotOptions::new())
}

/// `tf.one_hot` with other values or dtype.
#[track_caller]
pub fn one_hot_with(indices: &Var, depth: usize, options: OneHotOptions) -> Var {
    let op = OneHot { depth, on_value: options.on_value, off_value: options.off_value, dtype: options.dtype };
    indices.apply1(op, &[])
}

/// `x · w` for each item of `x` (shape `[B, (r)..., D]`, its last dim uniform) with the dense
/// matrix `w` (`[D, K]`): the linear layer over sequences
/// (`tf.ragged.map_flat_values(tf.matmul, x, w)`; `tf.matmul` for dense `x`).
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let x = g.input("x", TensorType::ragged(DType::F32, 1).with_inner(&[Some(2)]));
/// let w = g.input("w", TensorType::dense(DType::F32, &[Some(2), Some(1)]));
/// let f = compile(&[&x, &w], &[&x.matmul(&w)]).unwrap();
/// let xs = RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap(), vec![0, 2, 2]).unwrap();
/// let ws = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 1], vec![1.0f32, 10.0]).unwrap());
/// let y = f.call(&[xs, ws]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![[[21.0], [43.0]], []].unwrap().to_literal());
/// ```
#[track_caller]
pub fn matmul(x: &Var, w: &Var) -> Var {
    x.apply1(MatMul::new(), &[w])
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

/// `tf.gather(params, indices, axis=axis, batch_dims=batch_dims)`: gathers along `axis`, the
/// first `batch_dims` dims shared by `params` and `indices`; indices into ragged rows are
/// bounds-checked.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let params = g.input("params", TensorType::ragged(DType::I32, 1));
/// let indices = g.input("indices", TensorType::ragged(DType::I64, 1));
/// let f = compile(&[&params, &indices], &[&ragtime::ops::gather_with(&params, &indices, 1, 1)]).unwrap();
/// let y = f.call(&[ragged![[10, 20], [30]].unwrap(), ragged![[1i64, 1, 0], [0i64]].unwrap()]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![[20, 20, 10], [30]].unwrap().to_literal());
/// ```
#[track_caller]
pub fn gather_with(params: &Var, indices: &Var, axis: i64, batch_dims: i64) -> Var {
    if axis == 0 && batch_dims == 0 {
        return params.apply1(Gather::new(), &[indices]);
    }
    params.apply1(GatherAxis::new(axis, batch_dims), &[indices])
}

/// The sub-tensors of `params` named by the index tuples in the last dim of `indices`
/// (`tf.gather_nd`); every index is bounds-checked.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let params = g.input("params", TensorType::ragged(DType::I32, 1));
/// let indices = g.input("indices", TensorType::dense(DType::I64, &[Some(2), Some(2)]));
/// let f = compile(&[&params, &indices], &[&ragtime::ops::gather_nd(&params, &indices)]).unwrap();
/// let idx = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 2], vec![1i64, 0, 0, 1]).unwrap());
/// let y = f.call(&[ragged![[1, 2], [3]].unwrap(), idx]).unwrap();
/// assert_eq!(y[0].to_vec::<i32>().unwrap(), vec![3, 2]);
/// ```
#[track_caller]
pub fn gather_nd(params: &Var, indices: &Var) -> Var {
    params.apply1(GatherNd::new(), &[indices])
}

/// Every combination of one item of each input's row, joined with `_X_` (`tf.ragged.cross`);
/// inputs are ragged rank 1 or dense matrices of strings, int32 or int64.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let a = g.input("a", TensorType::ragged(DType::String, 1));
/// let b = g.input("b", TensorType::ragged(DType::I64, 1));
/// let f = compile(&[&a, &b], &[&ragtime::ops::cross(&[&a, &b])]).unwrap();
/// let y = f.call(&[ragged![["x", "y"]].unwrap(), ragged![[7i64]].unwrap()]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![["x_X_7", "y_X_7"]].unwrap().to_literal());
/// ```
#[track_caller]
pub fn cross(inputs: &[&Var]) -> Var {
    apply_n(Cross::strings(), inputs)
}

/// The combinations of [`cross`] hashed as TensorFlow's `tf.ragged.cross_hashed` does
/// (FingerprintCat64 chains from `hash_key`, then mod `num_buckets`; 0 buckets keep the full
/// int64 range); int64.
#[track_caller]
pub fn cross_hashed(inputs: &[&Var], num_buckets: u64, hash_key: u64) -> Var {
    apply_n(Cross::hashed(num_buckets, hash_key), inputs)
}

/// Adds an outer ragged dim from the row starts (`RaggedTensor.from_row_starts`, validating).
#[track_caller]
pub fn from_row_starts(values: &Var, starts: &Var) -> Var {
    values.apply1(FromRowBounds::new(false), &[starts])
}

/// Adds an outer ragged dim from the row limits (`RaggedTensor.from_row_limits`, validating).
#[track_caller]
pub fn from_row_limits(values: &Var, limits: &Var) -> Var {
    values.apply1(FromRowBounds::new(true), &[limits])
}

/// Row splits from sorted segment ids: `[0] + cumsum(bincount(ids))`
/// (`tf.ragged.segment_ids_to_row_splits`); a negative id is an invalid partition.
#[track_caller]
pub fn segment_ids_to_row_splits(segment_ids: &Var) -> Var {
    segment_ids.apply1(SegmentIdsToRowSplits::new(None), &[])
}

/// [`segment_ids_to_row_splits`] with at least `num_segments` rows (empty rows at the end).
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let ids = g.input("ids", TensorType::dense(DType::I64, &[None]));
/// let f = compile(&[&ids], &[&ragtime::ops::segment_ids_to_row_splits_with(&ids, 4)]).unwrap();
/// let y = f.call(&[ragged![0i64, 0, 2].unwrap()]).unwrap();
/// assert_eq!(y[0].to_vec::<i64>().unwrap(), vec![0, 2, 2, 3, 3]);
/// ```
#[track_caller]
pub fn segment_ids_to_row_splits_with(segment_ids: &Var, num_segments: usize) -> Var {
    segment_ids.apply1(SegmentIdsToRowSplits::new(Some(num_segments)), &[])
}

/// A dim of size 1 inserted before `axis` (`tf.expand_dims`); up to the ragged rank it is a
/// uniform ragged dim.
#[track_caller]
pub fn expand_dims(x: &Var, axis: i64) -> Var {
    x.apply1(ExpandDims::new(axis), &[])
}

/// Dims `outer_axis..=inner_axis` merged into one (`RaggedTensor.merge_dims`).
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let x = g.input("x", TensorType::ragged(DType::I32, 2));
/// let f = compile(&[&x], &[&x.merge_dims(1, 2)]).unwrap();
/// let y = f.call(&[ragged![[[1, 2], [3]], [[]]].unwrap()]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![[1, 2, 3], []].unwrap().to_literal());
/// ```
#[track_caller]
pub fn merge_dims(x: &Var, outer_axis: i64, inner_axis: i64) -> Var {
    x.apply1(MergeDims::new(outer_axis, inner_axis), &[])
}

/// `x`'s structure filled with ones (`tf.ones_like`); strings have no one.
#[track_caller]
pub fn ones_like(x: &Var) -> Var {
    x.apply1(FilledLike::new(true, None), &[])
}

/// `x`'s structure filled with ones of `dtype` (`tf.ones_like(x, dtype=)`).
#[track_caller]
pub fn ones_like_as(x: &Var, dtype: DType) -> Var {
    x.apply1(FilledLike::new(true, Some(dtype)), &[])
}

/// `x`'s structure filled with zeros, `""` for strings (`tf.zeros_like`).
#[track_caller]
pub fn zeros_like(x: &Var) -> Var {
    x.apply1(FilledLike::new(false, None), &[])
}

/// `x`'s structure filled with zeros of `dtype` (`tf.zeros_like(x, dtype=)`).
#[track_caller]
pub fn zeros_like_as(x: &Var, dtype: DType) -> Var {
    x.apply1(FilledLike::new(false, Some(dtype)), &[])
}

/// The number of elements (`tf.size`), an int32 scalar; `size_with(x, DType::I64)` for int64.
#[track_caller]
pub fn size(x: &Var) -> Var {
    size_with(x, DType::I32)
}

/// The number of elements as `out_type` (int32 or int64).
#[track_caller]
pub fn size_with(x: &Var, out_type: DType) -> Var {
    x.apply1(Size::new(out_type), &[])
}

/// The number of dims, ragged ones included (`tf.rank`), an int32 scalar.
#[track_caller]
pub fn rank(x: &Var) -> Var {
    x.apply1(Rank::new(), &[])
}

/// One int64 row splits vector per ragged dim, outermost first (`RaggedTensor.nested_row_splits`).
#[track_caller]
pub fn nested_row_splits(x: &Var) -> Vec<Var> {
    x.graph().apply(NestedRowSplits::new(), &[x])
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
    data.apply1(UnsortedSegmentReduce::new(SegmentReduction::Sum, num_segments), &[segment_ids])
}

/// Maxima of rows of `data` by any ids (`tf.math.unsorted_segment_max`); an empty segment of a
/// dense result holds the dtype's lowest finite value.
#[track_caller]
pub fn unsorted_segment_max(data: &Var, segment_ids: &Var, num_segments: usize) -> Var {
    data.apply1(UnsortedSegmentReduce::new(SegmentReduction::Max, num_segments), &[segment_ids])
}

/// Minima of rows of `data` by any ids (`tf.math.unsorted_segment_min`); an empty segment of a
/// dense result holds the dtype's highest finite value.
#[track_caller]
pub fn unsorted_segment_min(data: &Var, segment_ids: &Var, num_segments: usize) -> Var {
    data.apply1(UnsortedSegmentReduce::new(SegmentReduction::Min, num_segments), &[segment_ids])
}

/// Products of rows of `data` by any ids (`tf.math.unsorted_segment_prod`); integers wrap.
#[track_caller]
pub fn unsorted_segment_prod(data: &Var, segment_ids: &Var, num_segments: usize) -> Var {
    data.apply1(UnsortedSegmentReduce::new(SegmentReduction::Prod, num_segments), &[segment_ids])
}

/// Means of rows of `data` by any ids (`tf.math.unsorted_segment_mean`); integers give float32
/// (8/16-bit) or float64.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let data = g.input("data", TensorType::ragged(DType::F32, 1));
/// let ids = g.input("ids", TensorType::dense(DType::I32, &[None]));
/// let f = compile(&[&data, &ids], &[&ragtime::ops::unsorted_segment_mean(&data, &ids, 2)]).unwrap();
/// let y = f.call(&[ragged![[1.0, 2.0], [3.0]].unwrap(), ragged![0, 0].unwrap()]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![[2.0, 2.0], []].unwrap().to_literal());
/// ```
#[track_caller]
pub fn unsorted_segment_mean(data: &Var, segment_ids: &Var, num_segments: usize) -> Var {
    data.apply1(UnsortedSegmentReduce::new(SegmentReduction::Mean, num_segments), &[segment_ids])
}

/// Sums of rows of `data` by any ids divided by the square root of each count
/// (`tf.math.unsorted_segment_sqrt_n`); floats only.
#[track_caller]
pub fn unsorted_segment_sqrt_n(data: &Var, segment_ids: &Var, num_segments: usize) -> Var {
    data.apply1(UnsortedSegmentReduce::new(SegmentReduction::SqrtN, num_segments), &[segment_ids])
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

    /// Where each outermost row starts (`RaggedTensor.row_starts`), int64.
    #[track_caller]
    pub fn row_starts(&self) -> Var {
        self.apply1(RowBounds::new(false), &[])
    }

    /// Where each outermost row ends (`RaggedTensor.row_limits`), int64.
    #[track_caller]
    pub fn row_limits(&self) -> Var {
        self.apply1(RowBounds::new(true), &[])
    }

    /// The outermost rows concatenated, one ragged dim less (`RaggedTensor.values`).
    #[track_caller]
    pub fn values(&self) -> Var {
        self.apply1(Values::new(), &[])
    }

    /// One int64 row splits vector per ragged dim (`RaggedTensor.nested_row_splits`).
    #[track_caller]
    pub fn nested_row_splits(&self) -> Vec<Var> {
        nested_row_splits(self)
    }

    /// `tf.expand_dims(self, axis)`.
    #[track_caller]
    pub fn expand_dims(&self, axis: i64) -> Var {
        expand_dims(self, axis)
    }

    /// `self.merge_dims(outer_axis, inner_axis)`.
    #[track_caller]
    pub fn merge_dims(&self, outer_axis: i64, inner_axis: i64) -> Var {
        merge_dims(self, outer_axis, inner_axis)
    }

    /// `tf.ones_like(self)`.
    #[track_caller]
    pub fn ones_like(&self) -> Var {
        ones_like(self)
    }

    /// `tf.zeros_like(self)`.
    #[track_caller]
    pub fn zeros_like(&self) -> Var {
        zeros_like(self)
    }

    /// `tf.size(self)`: int32.
    #[track_caller]
    pub fn size(&self) -> Var {
        size(self)
    }

    /// `tf.rank(self)`: int32.
    #[track_caller]
    pub fn rank(&self) -> Var {
        rank(self)
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

    /// The size of dim `axis` of the bounding shape, as an int64 scalar
    /// (`RaggedTensor.bounding_shape(axis=)`); `axis` must lie in `0..rank` (TensorFlow gathers
    /// that entry of the full bounding shape), otherwise a build error.
    #[track_caller]
    pub fn bounding_shape_axis(&self, axis: i64) -> Var {
        self.apply1(BoundingShape::with(BoundingAxes::One(axis), DType::I64), &[])
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

    /// `tf.one_hot(self, depth)`: float32 ones and zeros in a new innermost dim.
    #[track_caller]
    pub fn one_hot(&self, depth: usize) -> Var {
        one_hot(self, depth)
    }

    /// `self · w` for each item (`tf.ragged.map_flat_values(tf.matmul, self, w)`).
    #[track_caller]
    pub fn matmul(&self, w: &Var) -> Var {
        matmul(self, w)
    }

    /// Maxima of rows by any ids (`tf.math.unsorted_segment_max`).
    #[track_caller]
    pub fn unsorted_segment_max(&self, segment_ids: &Var, num_segments: usize) -> Var {
        unsorted_segment_max(self, segment_ids, num_segments)
    }

    /// Minima of rows by any ids (`tf.math.unsorted_segment_min`).
    #[track_caller]
    pub fn unsorted_segment_min(&self, segment_ids: &Var, num_segments: usize) -> Var {
        unsorted_segment_min(self, segment_ids, num_segments)
    }

    /// Products of rows by any ids (`tf.math.unsorted_segment_prod`).
    #[track_caller]
    pub fn unsorted_segment_prod(&self, segment_ids: &Var, num_segments: usize) -> Var {
        unsorted_segment_prod(self, segment_ids, num_segments)
    }

    /// Means of rows by any ids (`tf.math.unsorted_segment_mean`).
    #[track_caller]
    pub fn unsorted_segment_mean(&self, segment_ids: &Var, num_segments: usize) -> Var {
        unsorted_segment_mean(self, segment_ids, num_segments)
    }

    /// Sums of rows by any ids over the square root of each count (`tf.math.unsorted_segment_sqrt_n`).
    #[track_caller]
    pub fn unsorted_segment_sqrt_n(&self, segment_ids: &Var, num_segments: usize) -> Var {
        unsorted_segment_sqrt_n(self, segment_ids, num_segments)
    }

    /// The same value (`tf.identity`).
    #[track_caller]
    pub fn identity(&self) -> Var {
        identity(self)
    }
}
