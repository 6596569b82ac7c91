//! [`GetItem`]: applies a [`Key`] to a ragged or dense tensor, one dim at a time, with
//! TensorFlow's ragged `__getitem__` rules.

use std::any::Any;
use std::ops::Range;

use ragtime_core::{DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Attr, Attrs, Op};

use crate::gather::take::{take_rows, take_spans};
use crate::index::key::{check_key_len, Key, KeyItem, OP};
use crate::util::one;

/// `getitem` (`x[key]`): indexing and slicing with TensorFlow's semantics on dense and ragged tensors.
#[derive(Debug, Clone, PartialEq)]
pub struct GetItem {
    /// The index expression.
    pub key: Key,
}

impl GetItem {
    /// `x[key]`; e.g. `GetItem::new(s![.., -2..])`.
    pub fn new(key: impl Into<Key>) -> Self {
        GetItem { key: key.into() }
    }

    /// From graph-file attributes: `key` (a string in Python syntax, or a single integer).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["key"])?;
        let key = match attrs.get("key") {
            Some(Attr::Int(i)) => Key(vec![KeyItem::Index(*i)]),
            _ => attrs.str("key")?.parse()?,
        };
        Ok(GetItem { key })
    }
}

impl Op for GetItem {
    fn name(&self) -> String {
        format!("GetItem{{{}}}", self.key)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(OP, inputs, 1..=1)?;
        check_key_len(&self.key)?;
        let walk = Walk { key: &self.key };
        let items = walk.expand(inputs[0].rank())?;
        Ok(vec![walk.outer_type(&inputs[0], &items, 0)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = inputs else {
            return Err(Error::argument(OP, format!("takes 1 input, got {}", inputs.len())));
        };
        check_key_len(&self.key)?;
        let walk = Walk { key: &self.key };
        let items = walk.expand(x.rank())?;
        one(walk.outer_value(ctx, x, &items, 0)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn keeps_uniform_rows(&self) -> bool {
        true
    }

    crate::grad::structure::movement_vjp_method!();
}

/// A slice with its step resolved (never 0).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SliceSpec {
    pub(crate) start: Option<i64>,
    pub(crate) stop: Option<i64>,
    pub(crate) step: i64,
}

impl SliceSpec {
    /// True for `:` (TensorFlow's "trivial slice", which keeps row partitions as they are).
    fn is_full(&self) -> bool {
        self.start.is_none() && self.stop.is_none() && self.step == 1
    }

    /// Python's `slice.indices(len)`: the first position and the number of positions taken.
    fn resolve(&self, len: usize) -> (i64, usize) {
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        let step = self.step;
        let (lower, upper) = if step > 0 { (0, len) } else { (-1, len - 1) };
        let clip = |v: i64| if v < 0 { v.saturating_add(len).max(lower) } else { v.min(upper) };
        let start = self.start.map_or(if step > 0 { lower } else { upper }, clip);
        let stop = self.stop.map_or(if step > 0 { upper } else { lower }, clip);
        let (from, to) = if step > 0 { (start, stop) } else { (stop, start) };
        let count = if from < to { ((to - from - 1) as u64 / step.unsigned_abs() + 1) as usize } else { 0 };
        (start, count)
    }

    /// The positions taken from a dimension of length `len`, in order.
    pub(crate) fn positions(&self, len: usize) -> impl Iterator<Item = usize> {
        let (start, count) = self.resolve(len);
        let step = self.step as i128;
        (0..count).map(move |k| (start as i128 + k as i128 * step) as usize)
    }
}

/// One key item after `...` has been expanded.
#[derive(Debug, Clone, Copy)]
enum Item {
    Index(i64),
    Slice(SliceSpec),
    NewAxis,
}

/// The walk of a key over a type or a value. Both walks follow TensorFlow's recursion
/// (`_ragged_getitem` for the outer dimension, `_ragged_getitem_inner_dimensions` once the outer
/// dimension is kept) step for step, so that `infer` and `perform` agree by construction.
/// `axis` arguments are the input dimension the walk stands on, for error messages.
struct Walk<'a> {
    key: &'a Key,
}

impl Walk<'_> {
    /// Expands `...`, checks the number of indices against `rank` and the steps.
    fn expand(&self, rank: usize) -> Result<Vec<Item>> {
        let items = self.key.items();
        let ellipses = items.iter().filter(|i| **i == KeyItem::Ellipsis).count();
        if ellipses > 1 {
            return Err(Error::index(OP, format!("key `{}` has more than one `...`", self.key)));
        }
        let consuming = items.iter().filter(|i| matches!(i, KeyItem::Index(_) | KeyItem::Slice { .. })).count();
        if consuming > rank {
            return Err(Error::index(
                OP,
                format!(
                    "too many indices: key `{}` indexes {consuming} dimensions of a tensor of rank {rank}",
                    self.key
                ),
            ));
        }
        let mut out = Vec::with_capacity(items.len() + rank);
        for item in items {
            match *item {
                KeyItem::Index(i) => out.push(Item::Index(i)),
                KeyItem::Slice { step: Some(0), .. } => {
                    return Err(Error::argument(OP, format!("slice step cannot be zero in key `{}`", self.key)))
                }
                KeyItem::Slice { start, stop, step } => {
                    out.push(Item::Slice(SliceSpec { start, stop, step: step.unwrap_or(1) }))
                }
                KeyItem::NewAxis => out.push(Item::NewAxis),
                KeyItem::Ellipsis => out.extend(
                    std::iter::repeat_n(SliceSpec { start: None, stop: None, step: 1 }, rank - consuming)
                        .map(Item::Slice),
                ),
            }
        }
        Ok(out)
    }

    fn out_of_range(&self, index: i64, axis: usize, size: usize) -> Error {
        Error::out_of_range_at(OP, index, axis, size, format!("key `{}`", self.key))
    }

    /// Resolves a (possibly negative) index into a dimension of `size`.
    fn position(&self, index: i64, axis: usize, size: usize) -> Result<usize> {
        let n = i64::try_from(size).unwrap_or(i64::MAX);
        let pos = if index < 0 { index + n } else { index };
        if pos < 0 || pos >= n {
            return Err(self.out_of_range(index, axis, size));
        }
        Ok(pos as usize)
    }

    fn ragged_index_error(&self, axis: usize) -> Error {
        Error::index(
            OP,
            format!(
                "key `{}` indexes ragged dimension {axis} with an integer; only slices may index an inner \
                 ragged dimension (the item may exist in some rows and not in others)",
                self.key
            ),
        )
    }

    // ---- types ----

    fn outer_type(&self, ty: &TensorType, items: &[Item], axis: usize) -> Result<TensorType> {
        let Some((first, rest)) = items.split_first() else { return Ok(ty.clone()) };
        if ty.ragged_rank() == 0 {
            return self.dense_type(ty, items, false, axis);
        }
        match *first {
            Item::NewAxis => Ok(wrap_type(self.outer_type(ty, rest, axis)?)?),
            Item::Index(i) => {
                if let Dim::Known(n) = ty.dims()[0] {
                    self.position(i, axis, n)?;
                }
                // One row of a uniform partition has the partition's row length.
                let mut row = row_type(ty)?;
                if let Dim::UniformRows(n) = ty.dims()[1] {
                    row = row.with_dim(0, Dim::Known(n))?;
                }
                self.outer_type(&row, rest, axis + 1)
            }
            Item::Slice(s) => {
                let sliced = ty.clone().with_dim(0, sliced_dim(ty.dims()[0], &s))?;
                self.inner_type(&sliced, rest, axis)
            }
        }
    }

    fn inner_type(&self, ty: &TensorType, items: &[Item], axis: usize) -> Result<TensorType> {
        let Some((first, rest)) = items.split_first() else { return Ok(ty.clone()) };
        if ty.ragged_rank() == 0 {
            return self.dense_type(ty, items, true, axis);
        }
        let (inner, partition) = match *first {
            Item::NewAxis => (self.inner_type(ty, rest, axis)?, Dim::UniformRows(1)),
            Item::Slice(s) => {
                let partition = match ty.dims()[1] {
                    Dim::UniformRows(n) => Dim::UniformRows(s.resolve(n).1),
                    _ => Dim::Ragged,
                };
                (self.inner_type(&row_type(ty)?, rest, axis + 1)?, partition)
            }
            Item::Index(i) => {
                let Dim::UniformRows(n) = ty.dims()[1] else { return Err(self.ragged_index_error(axis + 1)) };
                self.position(i, axis + 1, n)?;
                // Item `i` of every row: the outer dimension stays, the indexed one goes.
                let mut dims = vec![ty.dims()[0]];
                dims.extend_from_slice(&ty.dims()[2..]);
                let picked = TensorType::new(ty.dtype(), ty.ragged_rank() - 1, dims)?;
                return self.inner_type(&picked, rest, axis + 1);
            }
        };
        // A new partition (of the new axis, or of the sliced rows) goes on top of the inner result,
        // whose outer dimension it splits.
        let mut dims = vec![ty.dims()[0], partition];
        dims.extend_from_slice(&inner.dims()[1..]);
        TensorType::new(ty.dtype(), inner.ragged_rank() + 1, dims)
    }

    fn dense_type(&self, ty: &TensorType, items: &[Item], keep_outer: bool, axis: usize) -> Result<TensorType> {
        let mut dims = Vec::with_capacity(ty.rank() + items.len());
        let mut d = usize::from(keep_outer);
        dims.extend_from_slice(&ty.dims()[..d]);
        for item in items {
            match *item {
                Item::NewAxis => dims.push(Dim::Known(1)),
                Item::Index(i) => {
                    let dim = *ty.dims().get(d).ok_or_else(|| self.too_many(ty.rank()))?;
                    if let Dim::Known(n) = dim {
                        self.position(i, axis + d, n)?;
                    }
                    d += 1;
                }
                Item::Slice(s) => {
                    let dim = *ty.dims().get(d).ok_or_else(|| self.too_many(ty.rank()))?;
                    dims.push(sliced_dim(dim, &s));
                    d += 1;
                }
            }
        }
        dims.extend_from_slice(&ty.dims()[d.min(ty.rank())..]);
        TensorType::new(ty.dtype(), 0, dims)
    }

    fn too_many(&self, rank: usize) -> Error {
        Error::index(OP, format!("too many indices: key `{}` for a tensor of rank {rank}", self.key))
    }

    // ---- values ----

    fn outer_value(&self, ctx: &ExecContext, x: &RaggedTensor, items: &[Item], axis: usize) -> Result<RaggedTensor> {
        let Some((first, rest)) = items.split_first() else { return Ok(x.clone()) };
        if x.is_dense() {
            return Ok(RaggedTensor::dense(self.dense_value(ctx, x.flat_values(), items, false, axis)?));
        }
        match *first {
            Item::NewAxis => wrap_value(self.outer_value(ctx, x, rest, axis)?),
            Item::Index(i) => {
                let row = self.position(i, axis, x.nrows())?;
                let row_value = take_rows(ctx, OP, x, &[row])?.values()?;
                self.outer_value(ctx, &row_value, rest, axis + 1)
            }
            Item::Slice(s) => {
                let sliced = if s.is_full() {
                    x.clone()
                } else {
                    let rows: Vec<usize> = s.positions(x.nrows()).collect();
                    take_rows(ctx, OP, x, &rows)?
                };
                self.inner_value(ctx, &sliced, rest, axis)
            }
        }
    }

    fn inner_value(&self, ctx: &ExecContext, x: &RaggedTensor, items: &[Item], axis: usize) -> Result<RaggedTensor> {
        let Some((first, rest)) = items.split_first() else { return Ok(x.clone()) };
        if x.is_dense() {
            return Ok(RaggedTensor::dense(self.dense_value(ctx, x.flat_values(), items, true, axis)?));
        }
        let (partition, inner) = match *first {
            Item::NewAxis => {
                // Every row becomes a row of one item (the row itself).
                let inner = self.inner_value(ctx, x, rest, axis)?;
                (RowPartition::from_uniform_row_length(1, inner.nrows())?, inner)
            }
            Item::Slice(s) => {
                let rows = &x.partitions()[0];
                let values = x.values()?;
                if s.is_full() {
                    (rows.clone(), self.inner_value(ctx, &values, rest, axis + 1)?)
                } else {
                    let (partition, taken) = slice_each_row(rows, &s)?;
                    let sliced = take_spans(ctx, OP, &values, taken)?;
                    (partition, self.inner_value(ctx, &sliced, rest, axis + 1)?)
                }
            }
            Item::Index(i) => {
                let rows = &x.partitions()[0];
                let Some(n) = rows.uniform_row_length() else { return Err(self.ragged_index_error(axis + 1)) };
                let pos = self.position(i, axis + 1, n)?;
                // Row `r` of a uniform partition starts at value `r * n`.
                let picks: Vec<usize> = (0..rows.nrows()).map(|r| r * n + pos).collect();
                let picked = take_rows(ctx, OP, &x.values()?, &picks)?;
                return self.inner_value(ctx, &picked, rest, axis + 1);
            }
        };
        let mut partitions = Vec::with_capacity(inner.ragged_rank() + 1);
        partitions.push(partition);
        partitions.extend_from_slice(inner.partitions());
        RaggedTensor::new(inner.flat_values().clone(), partitions)
    }

    /// Indexes a dense tensor (`keep_outer`: dimension 0 is kept whole and the items start at dimension 1).
    fn dense_value(
        &self,
        ctx: &ExecContext,
        t: &DenseTensor,
        items: &[Item],
        keep_outer: bool,
        axis: usize,
    ) -> Result<DenseTensor> {
        let shape = t.shape();
        let mut out_shape = Vec::with_capacity(shape.len() + items.len());
        // The positions taken along each input dimension; `None` keeps the whole dimension.
        let mut taken: Vec<Option<Vec<usize>>> = Vec::with_capacity(shape.len());
        if keep_outer {
            out_shape.push(shape[0]);
            taken.push(None);
        }
        for item in items {
            let d = taken.len();
            match *item {
                Item::NewAxis => out_shape.push(1),
                Item::Index(i) => {
                    let size = *shape.get(d).ok_or_else(|| self.too_many(shape.len()))?;
                    taken.push(Some(vec![self.position(i, axis + d, size)?]));
                }
                Item::Slice(s) => {
                    let size = *shape.get(d).ok_or_else(|| self.too_many(shape.len()))?;
                    if s.is_full() {
                        out_shape.push(size);
                        taken.push(None);
                    } else {
                        let positions: Vec<usize> = s.positions(size).collect();
                        out_shape.push(positions.len());
                        taken.push(Some(positions));
                    }
                }
            }
        }
        out_shape.extend_from_slice(&shape[taken.len()..]);
        let Some(last) = taken.iter().rposition(Option::is_some) else {
            return t.reshape(out_shape);
        };
        // Dimensions after `last` are kept whole: move them as blocks of `block` elements.
        let block: usize = shape[last + 1..].iter().product();
        let mut rows = vec![0usize];
        for (d, positions) in taken[..=last].iter().enumerate() {
            let size = shape[d];
            rows = match positions {
                Some(p) => rows.iter().flat_map(|&r| p.iter().map(move |&q| r * size + q)).collect(),
                None => rows.iter().flat_map(|&r| (0..size).map(move |q| r * size + q)).collect(),
            };
        }
        let lead: usize = shape[..=last].iter().product();
        t.reshape(vec![lead, block])?.take_rows_in(ctx, &rows)?.reshape(out_shape)
    }
}

/// The type of one row of a tensor of type `ty` (its outer dimension dropped): also the type of
/// the values of a ragged tensor, whose row count is not known statically.
pub(crate) fn row_type(ty: &TensorType) -> Result<TensorType> {
    let mut dims = ty.dims().get(1..).unwrap_or(&[]).to_vec();
    let ragged_rank = ty.ragged_rank().saturating_sub(1);
    if ty.ragged_rank() > 0 {
        dims[0] = Dim::Unknown;
    }
    TensorType::new(ty.dtype(), ragged_rank, dims)
}

/// The type after wrapping a value in one outer row (`x[None]`): a uniform partition holding all
/// the rows, typed so when their number is known.
fn wrap_type(inner: TensorType) -> Result<TensorType> {
    let mut dims = vec![Dim::Known(1)];
    if inner.ragged_rank() == 0 {
        dims.extend(inner.dims());
        return TensorType::new(inner.dtype(), 0, dims);
    }
    dims.push(inner.dims()[0].size().map_or(Dim::Ragged, Dim::UniformRows));
    dims.extend_from_slice(&inner.dims()[1..]);
    TensorType::new(inner.dtype(), inner.ragged_rank() + 1, dims)
}

/// Wraps a value in one outer row (`x[None]`): a dense tensor gains a leading dimension of 1, a
/// ragged one an outer partition holding all its rows (as TensorFlow does).
fn wrap_value(inner: RaggedTensor) -> Result<RaggedTensor> {
    if inner.is_dense() {
        let mut shape = vec![1];
        shape.extend_from_slice(inner.flat_values().shape());
        return Ok(RaggedTensor::dense(inner.flat_values().reshape(shape)?));
    }
    let mut partitions = vec![RowPartition::from_uniform_row_length(inner.nrows(), 1)?];
    partitions.extend_from_slice(inner.partitions());
    RaggedTensor::new(inner.flat_values().clone(), partitions)
}

fn sliced_dim(dim: Dim, s: &SliceSpec) -> Dim {
    match dim {
        Dim::Known(n) => Dim::Known(s.resolve(n).1),
        other => other,
    }
}

/// Slices every row of `rows` on its own: the new partition and the value positions kept, in order,
/// as runs of consecutive positions (one per row for a step of 1, one per position otherwise).
/// A partition with a uniform row length keeps one (every row is sliced the same way).
fn slice_each_row(rows: &RowPartition, s: &SliceSpec) -> Result<(RowPartition, Vec<Range<usize>>)> {
    let mut taken = Vec::with_capacity(rows.nrows());
    let mut splits = Vec::with_capacity(rows.nrows() + 1);
    splits.push(0i64);
    let mut total = 0usize;
    for w in rows.row_splits().windows(2) {
        let range = w[0] as usize..w[1] as usize;
        if s.step == 1 {
            let (start, count) = s.resolve(range.len());
            let start = range.start + start as usize;
            if count > 0 {
                taken.push(start..start + count);
            }
            total += count;
        } else {
            let before = taken.len();
            taken.extend(s.positions(range.len()).map(|k| range.start + k..range.start + k + 1));
            total += taken.len() - before;
        }
        splits.push(total as i64);
    }
    let partition = match rows.uniform_row_length() {
        Some(len) => RowPartition::from_uniform_row_length(s.resolve(len).1, rows.nrows())?,
        None => RowPartition::from_row_splits(splits)?,
    };
    Ok((partition, taken))
}
