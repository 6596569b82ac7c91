//! `getitem`: Python / TensorFlow indexing and slicing (`x[1]`, `x[:, -2:]`, `x[..., ::2]`) of dense and
//! ragged tensors, with the [`Key`] type, its graph-file syntax and the [`s!`](crate::s) macro.
//!
//! Semantics follow `tf.RaggedTensor.__getitem__`:
//! - keys apply to dimensions left to right; missing trailing keys mean "everything";
//! - an integer on the outer dimension picks one row (negative counts from the end) and removes the
//!   dimension; the next dimension then becomes the outer one, so `x[1, 2]` is fine even when dim 1 is ragged;
//! - a slice on the outer dimension picks rows; a slice on a ragged dimension slices every row on its
//!   own (`x[:, -2:]` keeps the last two items of each row), with Python's clipping rules;
//! - once a slice has kept the outer dimension, an integer on a ragged dimension is refused
//!   (`invalid_index`): the item may exist in some rows and not in others; an integer on a
//!   uniform partition ([`Dim::UniformRows`], built by `from_uniform_row_length`) takes that item
//!   of every row, as in TensorFlow (out of range is `index_out_of_range`, at build time since the
//!   row length is in the type);
//! - `...` stands for as many `:` as needed, `None` (`tf.newaxis`) inserts a dimension of size 1
//!   (a ragged-partition dimension when ragged dimensions follow it, as in TensorFlow).
//!
//! The type decides what a key may do, and the value follows it: a partition whose type is
//! [`Dim::UniformRows`] is one built with a uniform row length
//! ([`RowPartition::uniform_row_length`]), and the partitions this op builds keep that (a slice
//! of a uniform partition is uniform, `None` adds a uniform partition of length 1).

use std::any::Any;
use std::fmt;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};
use std::str::FromStr;

use ragtime_core::{DenseTensor, Dim, Error, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Attr, Attrs, Op, OpRef};

use crate::gather::{take_rows, take_spans};
use crate::util::one;

const OP: &str = "getitem";

/// What a [`Key`] takes along one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyItem {
    /// One position (negative counts from the end); the dimension disappears.
    Index(i64),
    /// Positions `start..stop` every `step` with Python's rules (negative bounds count from the end,
    /// bounds are clipped to the dimension, a negative step walks backwards; `None` is the default).
    Slice {
        /// First position (default: the first, or the last for a negative step).
        start: Option<i64>,
        /// Position to stop before (default: past the end, or before the start for a negative step).
        stop: Option<i64>,
        /// Stride (default 1; 0 is refused).
        step: Option<i64>,
    },
    /// `...`: as many full slices as needed to cover the dimensions the other items leave out.
    Ellipsis,
    /// `None` (`tf.newaxis`): inserts a dimension of size 1.
    NewAxis,
}

impl KeyItem {
    /// The slice `start:stop:step` (each part optional).
    pub fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Self {
        KeyItem::Slice { start, stop, step }
    }

    /// The full slice `:`.
    pub fn all() -> Self {
        KeyItem::slice(None, None, None)
    }

    /// A range with a step (`s![..;2]`, `s![1..;-1]` in the macro): `start:stop:step`. An index
    /// `i` counts as the range `i..=i`.
    pub fn stepped(range: impl Into<KeyItem>, step: i64) -> Self {
        match range.into() {
            KeyItem::Slice { start, stop, .. } => KeyItem::Slice { start, stop, step: Some(step) },
            KeyItem::Index(i) => KeyItem::Slice { start: Some(i), stop: inclusive_stop(i), step: Some(step) },
            other => other,
        }
    }
}

impl fmt::Display for KeyItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = |v: &Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
        match self {
            KeyItem::Index(i) => write!(f, "{i}"),
            KeyItem::Slice { start, stop, step: None } => write!(f, "{}:{}", part(start), part(stop)),
            KeyItem::Slice { start, stop, step } => write!(f, "{}:{}:{}", part(start), part(stop), part(step)),
            KeyItem::Ellipsis => f.write_str("..."),
            KeyItem::NewAxis => f.write_str("None"),
        }
    }
}

macro_rules! key_item_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for KeyItem {
            fn from(i: $t) -> Self {
                KeyItem::Index(i64::from(i))
            }
        }
        impl From<Range<$t>> for KeyItem {
            fn from(r: Range<$t>) -> Self {
                KeyItem::slice(Some(i64::from(r.start)), Some(i64::from(r.end)), None)
            }
        }
        impl From<RangeFrom<$t>> for KeyItem {
            fn from(r: RangeFrom<$t>) -> Self {
                KeyItem::slice(Some(i64::from(r.start)), None, None)
            }
        }
        impl From<RangeTo<$t>> for KeyItem {
            fn from(r: RangeTo<$t>) -> Self {
                KeyItem::slice(None, Some(i64::from(r.end)), None)
            }
        }
        impl From<RangeInclusive<$t>> for KeyItem {
            fn from(r: RangeInclusive<$t>) -> Self {
                KeyItem::slice(Some(i64::from(*r.start())), inclusive_stop(i64::from(*r.end())), None)
            }
        }
        impl From<RangeToInclusive<$t>> for KeyItem {
            fn from(r: RangeToInclusive<$t>) -> Self {
                KeyItem::slice(None, inclusive_stop(i64::from(r.end)), None)
            }
        }
    )*};
}
key_item_from_int!(i32, i64);

/// The exclusive stop of an inclusive end: `..=-1` runs to the end of the dimension.
fn inclusive_stop(end: i64) -> Option<i64> {
    if end == -1 {
        None
    } else {
        end.checked_add(1)
    }
}

impl From<RangeFull> for KeyItem {
    fn from(_: RangeFull) -> Self {
        KeyItem::all()
    }
}

/// A whole index expression, one [`KeyItem`] per comma: what `x[...]` holds in Python.
///
/// The graph-file syntax is Python's without the brackets: `"1, 2"`, `":, -2:"`, `"::2"`, `"...,
/// 0"`, `"None, :"`; `"()"` is the empty key (the whole tensor). [`Key`]'s `Display` prints that syntax back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Key(pub Vec<KeyItem>);

impl Key {
    /// The items, in order.
    pub fn items(&self) -> &[KeyItem] {
        &self.0
    }
}

impl<T: Into<KeyItem>> From<T> for Key {
    fn from(item: T) -> Self {
        Key(vec![item.into()])
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("()");
        }
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

impl FromStr for Key {
    type Err = Error;

    /// Parses Python index syntax without brackets; a malformed key is an `invalid_argument` error.
    fn from_str(text: &str) -> Result<Self> {
        let bad = |why: &str| Error::argument(OP, format!("malformed key {text:?}: {why}"));
        let trimmed = text.trim();
        if trimmed == "()" {
            return Ok(Key::default());
        }
        if trimmed.is_empty() {
            return Err(bad("the key is empty (write \"()\" for the whole tensor)"));
        }
        if trimmed.split(',').nth(MAX_KEY_ITEMS + 1).is_some() {
            return Err(bad(&format!("more than {MAX_KEY_ITEMS} items")));
        }
        let mut parts: Vec<&str> = trimmed.split(',').map(str::trim).collect();
        // Python accepts one trailing comma (`x[1,]`).
        if parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
        let int = |s: &str| -> Result<Option<i64>> {
            if s.is_empty() {
                return Ok(None);
            }
            let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(&format!("{s:?} is not an integer")));
            }
            s.parse::<i64>().map(Some).map_err(|_| bad(&format!("{s:?} does not fit in 64 bits")))
        };
        let items = parts
            .into_iter()
            .map(|part| match part {
                "" => Err(bad("an item is empty")),
                "..." => Ok(KeyItem::Ellipsis),
                "None" | "newaxis" | "tf.newaxis" => Ok(KeyItem::NewAxis),
                _ if part.contains(':') => {
                    let bounds: Vec<&str> = part.split(':').map(str::trim).collect();
                    if bounds.len() > 3 {
                        return Err(bad(&format!("{part:?} has more than two colons")));
                    }
                    Ok(KeyItem::Slice {
                        start: int(bounds[0])?,
                        stop: int(bounds[1])?,
                        step: bounds.get(2).map(|s| int(s)).transpose()?.flatten(),
                    })
                }
                _ => Ok(KeyItem::Index(int(part)?.ok_or_else(|| bad("an item is empty"))?)),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Key(items))
    }
}

/// Builds a [`Key`] from Rust index expressions: integers, ranges and [`KeyItem`]s; a range
/// followed by `;step` has a step, as in `ndarray::s!` (`s![..;2]` is Python's `::2`).
///
/// ```
/// use ragtime_ops::index::{Key, KeyItem};
/// assert_eq!(ragtime_ops::s![.., -2..].to_string(), ":, -2:");
/// assert_eq!(ragtime_ops::s![1, 2], "1, 2".parse::<Key>().unwrap());
/// assert_eq!(ragtime_ops::s![1.., KeyItem::slice(None, None, Some(-1))].to_string(), "1:, ::-1");
/// assert_eq!(ragtime_ops::s![..;-1, 1..4;2].to_string(), "::-1, 1:4:2");
/// ```
#[macro_export]
macro_rules! s {
    (@items [$($acc:expr),*]) => {
        $crate::index::Key(::std::vec![$($acc),*])
    };
    (@items [$($acc:expr),*] $range:expr ; $step:expr $(, $($rest:tt)*)?) => {
        $crate::s!(@items [$($acc,)* $crate::index::KeyItem::stepped($range, $step)] $($($rest)*)?)
    };
    (@items [$($acc:expr),*] $item:expr $(, $($rest:tt)*)?) => {
        $crate::s!(@items [$($acc,)* $crate::index::KeyItem::from($item)] $($($rest)*)?)
    };
    ($($items:tt)*) => {
        $crate::s!(@items [] $($items)*)
    };
}

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

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = inputs else {
            return Err(Error::argument(OP, format!("takes 1 input, got {}", inputs.len())));
        };
        check_key_len(&self.key)?;
        let walk = Walk { key: &self.key };
        let items = walk.expand(x.rank())?;
        one(walk.outer_value(x, &items, 0)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn keeps_uniform_rows(&self) -> bool {
        true
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        _outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::structure::same_movement_vjp(self, graph, inputs, output_grads)
    }
}

/// The most items a key may have: each item consumes an input dim or adds an output dim, both
/// at most [`MAX_RANK`](ragtime_core::limits::MAX_RANK), plus one `...`. Longer keys are refused
/// before they are walked (the walk recurses once per item).
pub const MAX_KEY_ITEMS: usize = 2 * ragtime_core::limits::MAX_RANK + 1;

fn check_key_len(key: &Key) -> Result<()> {
    if key.0.len() > MAX_KEY_ITEMS {
        return Err(Error::argument(
            OP,
            format!("the key has {} items, more than the limit of {MAX_KEY_ITEMS}", key.0.len()),
        ));
    }
    Ok(())
}

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    match name {
        "getitem" => Some(GetItem::from_attrs(attrs).map(|op| std::sync::Arc::new(op) as OpRef)),
        _ => None,
    }
}

/// A slice with its step resolved (never 0).
#[derive(Debug, Clone, Copy)]
struct SliceSpec {
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
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
    fn positions(&self, len: usize) -> impl Iterator<Item = usize> {
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

    fn outer_value(&self, x: &RaggedTensor, items: &[Item], axis: usize) -> Result<RaggedTensor> {
        let Some((first, rest)) = items.split_first() else { return Ok(x.clone()) };
        if x.is_dense() {
            return Ok(RaggedTensor::dense(self.dense_value(x.flat_values(), items, false, axis)?));
        }
        match *first {
            Item::NewAxis => wrap_value(self.outer_value(x, rest, axis)?),
            Item::Index(i) => {
                let row = self.position(i, axis, x.nrows())?;
                let row_value = take_rows(OP, x, &[row])?.values()?;
                self.outer_value(&row_value, rest, axis + 1)
            }
            Item::Slice(s) => {
                let sliced = if s.is_full() {
                    x.clone()
                } else {
                    let rows: Vec<usize> = s.positions(x.nrows()).collect();
                    take_rows(OP, x, &rows)?
                };
                self.inner_value(&sliced, rest, axis)
            }
        }
    }

    fn inner_value(&self, x: &RaggedTensor, items: &[Item], axis: usize) -> Result<RaggedTensor> {
        let Some((first, rest)) = items.split_first() else { return Ok(x.clone()) };
        if x.is_dense() {
            return Ok(RaggedTensor::dense(self.dense_value(x.flat_values(), items, true, axis)?));
        }
        let (partition, inner) = match *first {
            Item::NewAxis => {
                // Every row becomes a row of one item (the row itself).
                let inner = self.inner_value(x, rest, axis)?;
                (RowPartition::from_uniform_row_length(1, inner.nrows())?, inner)
            }
            Item::Slice(s) => {
                let rows = &x.partitions()[0];
                let values = x.values()?;
                if s.is_full() {
                    (rows.clone(), self.inner_value(&values, rest, axis + 1)?)
                } else {
                    let (partition, taken) = slice_each_row(rows, &s)?;
                    let sliced = take_spans(OP, &values, taken)?;
                    (partition, self.inner_value(&sliced, rest, axis + 1)?)
                }
            }
            Item::Index(i) => {
                let rows = &x.partitions()[0];
                let Some(n) = rows.uniform_row_length() else { return Err(self.ragged_index_error(axis + 1)) };
                let pos = self.position(i, axis + 1, n)?;
                // Row `r` of a uniform partition starts at value `r * n`.
                let picks: Vec<usize> = (0..rows.nrows()).map(|r| r * n + pos).collect();
                let picked = take_rows(OP, &x.values()?, &picks)?;
                return self.inner_value(&picked, rest, axis + 1);
            }
        };
        let mut partitions = Vec::with_capacity(inner.ragged_rank() + 1);
        partitions.push(partition);
        partitions.extend_from_slice(inner.partitions());
        RaggedTensor::new(inner.flat_values().clone(), partitions)
    }

    /// Indexes a dense tensor (`keep_outer`: dimension 0 is kept whole and the items start at dimension 1).
    fn dense_value(&self, t: &DenseTensor, items: &[Item], keep_outer: bool, axis: usize) -> Result<DenseTensor> {
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
        t.reshape(vec![lead, block])?.take_rows(&rows)?.reshape(out_shape)
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

#[cfg(test)]
mod tests {
    use ragtime_core::{ragged, DType, ErrorKind, Literal};

    use super::*;

    /// Runs `x[key]` through both `infer` and `perform`, checking that they agree.
    fn get(x: &RaggedTensor, key: &str) -> Result<RaggedTensor> {
        let op = GetItem::new(key.parse::<Key>()?);
        let inferred = op.infer(&[TensorType::of(x)]);
        let performed = op.perform(std::slice::from_ref(x)).map(|mut v| v.remove(0));
        match (&inferred, &performed) {
            (Ok(ty), Ok(value)) => assert!(
                ty[0].accepts(&TensorType::of(value)),
                "x[{key}]: infer says {}, perform gave {}",
                ty[0],
                TensorType::of(value)
            ),
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "x[{key}]: infer and perform fail differently"),
            (Err(a), Ok(v)) => panic!("x[{key}]: infer fails ({a}) but perform gives {v}"),
            (Ok(_), Err(_)) => {} // data-dependent failures are perform's alone
        }
        performed
    }

    fn check(x: &RaggedTensor, key: &str, want: Result<RaggedTensor>) {
        let want = want.expect("expected value is a valid literal");
        let got = get(x, key).unwrap_or_else(|e| panic!("x[{key}] failed: {e}"));
        assert!(got.equals(&want), "x[{key}]: got {got}, want {want}");
    }

    fn check_err(x: &RaggedTensor, key: &str, kind: ErrorKind) {
        match get(x, key) {
            Ok(v) => panic!("x[{key}]: expected a {kind} error, got {v}"),
            Err(e) => assert_eq!(e.kind(), kind, "x[{key}]: {e}"),
        }
    }

    fn dense(lit: impl Into<Literal>) -> Result<RaggedTensor> {
        RaggedTensor::from_literal_typed(&lit.into(), None, Some(0), None)
    }

    /// `n` empty int32 rows.
    fn int_rows(n: usize) -> Result<RaggedTensor> {
        RaggedTensor::from_row_splits(DenseTensor::vector::<i32>(vec![]), vec![0; n + 1])
    }

    fn digits() -> RaggedTensor {
        ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap()
    }

    fn queries() -> RaggedTensor {
        ragged![["Who", "is", "George", "Washington"], ["What", "is", "the", "weather", "tomorrow"], ["Goodnight"]]
            .unwrap()
    }

    fn rt3() -> RaggedTensor {
        ragged![[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]].unwrap()
    }

    #[test]
    fn seed_walkthrough_cases() {
        check(&digits(), "0", ragged![3, 1, 4, 1]);
        check(&digits(), ":, :2", ragged![[3, 1], [], [5, 9], [6], []]);
        check(&digits(), ":, -2:", ragged![[4, 1], [], [9, 2], [6], []]);
    }

    #[test]
    fn two_dimensional_ragged_cases() {
        let q = queries();
        check(&q, "1", ragged!["What", "is", "the", "weather", "tomorrow"]);
        check(&q, "1, 2", RaggedTensor::from_literal(&Literal::from("the")));
        check(&q, "1:", ragged![["What", "is", "the", "weather", "tomorrow"], ["Goodnight"]]);
        check(&q, ":, :3", ragged![["Who", "is", "George"], ["What", "is", "the"], ["Goodnight"]]);
        check(&q, ":, -2:", ragged![["George", "Washington"], ["weather", "tomorrow"], ["Goodnight"]]);
        check(&q, "::2", ragged![["Who", "is", "George", "Washington"], ["Goodnight"]]);
        check(&q, "-1", ragged!["Goodnight"]);
        check_err(&q, ":, 1", ErrorKind::InvalidIndex);
        check_err(&q, "7", ErrorKind::IndexOutOfRange);
        check_err(&q, "-4", ErrorKind::IndexOutOfRange);
    }

    #[test]
    fn three_dimensional_ragged_cases() {
        let t = rt3();
        check(&t, "1", ragged![[5], [], [6]]);
        check(&t, "3, 0", ragged![8, 9]);
        check(&t, ":, 1:3", ragged![[[4]], [[], [6]], [], [[10]]]);
        check(&t, ":, -1:", ragged![[[4]], [[6]], [[7]], [[10]]]);
        // After `1`, dim 1 of the row is its outer dim; dim 2 stays ragged.
        check(&t, "1, 2", ragged![6]);
        check_err(&t, "1, :, 0", ErrorKind::InvalidIndex);
        check_err(&t, ":, :, 0", ErrorKind::InvalidIndex);
        // Slicing the innermost ragged dim of every row of every row.
        check(&t, ":, :, :1", ragged![[[1], [4]], [[5], [], [6]], [[7]], [[8], [10]]]);
    }

    #[test]
    fn per_row_slices_follow_python_rules() {
        let x = ragged![[1, 2, 3], [], [4, 5]].unwrap();
        check(&x, ":, ::-1", ragged![[3, 2, 1], [], [5, 4]]);
        check(&x, ":, 1:", ragged![[2, 3], [], [5]]);
        check(&x, ":, :-1", ragged![[1, 2], [], [4]]);
        check(&x, ":, -100:100", ragged![[1, 2, 3], [], [4, 5]]);
        check(&x, ":, 5:", int_rows(3));
        check(&x, ":, ::2", ragged![[1, 3], [], [4]]);
        check(&x, ":, :0", int_rows(3));
        check(&x, "::-1, :1", ragged![[4], [], [1]]);
        check(&x, "...", ragged![[1, 2, 3], [], [4, 5]]);
        check(&x, "..., :1", ragged![[1], [], [4]]);
        check(&x, "2, ...", ragged![4, 5]);
        check(&x, "()", ragged![[1, 2, 3], [], [4, 5]]);
    }

    #[test]
    fn slice_positions_match_python() {
        let positions =
            |start, stop, step, len| -> Vec<usize> { SliceSpec { start, stop, step }.positions(len).collect() };
        // list(range(5))[...] in Python.
        assert_eq!(positions(Some(1), Some(-1), 2, 5), vec![1, 3]);
        assert_eq!(positions(None, None, -2, 5), vec![4, 2, 0]);
        assert_eq!(positions(Some(-100), Some(2), 1, 5), vec![0, 1]);
        assert_eq!(positions(Some(3), Some(1), 1, 5), Vec::<usize>::new());
        assert_eq!(positions(Some(5), Some(1), -1, 5), vec![4, 3, 2]);
        assert_eq!(positions(Some(-1), Some(-6), -1, 5), vec![4, 3, 2, 1, 0]);
        assert_eq!(positions(None, None, i64::MIN, 5), vec![4]);
        assert_eq!(positions(None, None, i64::MAX, 5), vec![0]);
        assert_eq!(positions(None, None, -1, 0), Vec::<usize>::new());
    }

    #[test]
    fn empty_and_zero_row_tensors() {
        let none = RaggedTensor::from_row_splits(DenseTensor::vector::<i32>(vec![]), vec![0]).unwrap();
        assert_eq!(none.nrows(), 0);
        let got = get(&none, ":, :2").unwrap();
        assert_eq!((got.nrows(), got.ragged_rank()), (0, 1));
        check_err(&none, "0", ErrorKind::IndexOutOfRange);
        let empty_rows = ragged![[], []].unwrap();
        check(
            &empty_rows,
            "1",
            RaggedTensor::from_literal_typed(&Literal::List(vec![]), Some(DType::F32), Some(0), None),
        );
        check(&ragged![[""], ["a", ""]].unwrap(), ":, -1:", ragged![[""], [""]]);
    }

    #[test]
    fn dense_tensors_index_like_numpy() {
        let x = dense(vec![vec![1, 2, 3], vec![4, 5, 6]]).unwrap();
        check(&x, "1", ragged![4, 5, 6]);
        check(&x, ":, 1", ragged![2, 5]);
        check(&x, "..., -1", ragged![3, 6]);
        check(&x, "::-1, 0", ragged![4, 1]);
        check(&x, "1, 2", RaggedTensor::from_literal(&Literal::from(6)));
        check(&x, ":, 1:", dense(vec![vec![2, 3], vec![5, 6]]));
        check(&x, "None", dense(vec![vec![vec![1, 2, 3], vec![4, 5, 6]]]));
        check(&x, ":, None", dense(vec![vec![vec![1, 2, 3]], vec![vec![4, 5, 6]]]));
        check(&x, "..., None", dense(vec![vec![vec![1], vec![2], vec![3]], vec![vec![4], vec![5], vec![6]]]));
        check_err(&x, "2", ErrorKind::IndexOutOfRange);
        check_err(&x, ":, -4", ErrorKind::IndexOutOfRange);
        check_err(&x, "0, 0, 0", ErrorKind::InvalidIndex);
        check_err(&x, "..., 0, ...", ErrorKind::InvalidIndex);
        check_err(&x, "::0", ErrorKind::InvalidArgument);
    }

    #[test]
    fn uniform_inner_dims_of_ragged_tensors() {
        let lit = Literal::from(vec![vec![vec![1, 2], vec![3, 4]], vec![vec![5, 6]]]);
        let x = RaggedTensor::from_literal_typed(&lit, None, Some(1), Some(&[2])).unwrap();
        check(&x, ":, :, 0", ragged![[1, 3], [5]]);
        check(&x, "0, :, 1", ragged![2, 4]);
        check(&x, "0, 1", ragged![3, 4]);
        check_err(&x, ":, :, 2", ErrorKind::IndexOutOfRange);
        let last = get(&x, ":, -1:").unwrap();
        assert_eq!(last.to_literal(), Literal::from(vec![vec![vec![3, 4]], vec![vec![5, 6]]]));
    }

    #[test]
    fn new_axis_on_ragged_tensors() {
        // Dimensions added by `None` are ragged when a ragged dimension follows (TensorFlow).
        check(&digits(), "None", ragged![[[3, 1, 4, 1], [], [5, 9, 2], [6], []]]);
        check(&digits(), ":, None", ragged![[[3, 1, 4, 1]], [[]], [[5, 9, 2]], [[6]], [[]]]);
        check(&digits(), "0, None", dense(vec![vec![3, 1, 4, 1]]));
        let wrapped = get(&digits(), ":, None, :2").unwrap();
        assert_eq!(wrapped.to_literal(), ragged![[[3, 1]], [[]], [[5, 9]], [[6]], [[]]].unwrap().to_literal());
    }

    #[test]
    fn keys_parse_and_print() {
        for text in ["1, 2", ":, -2:", "::2", "1:", "-1", ":, 1:3", "..., None", "1:5:-2", ":", "()"] {
            let key: Key = text.parse().unwrap();
            assert_eq!(key.to_string(), text);
        }
        assert_eq!(" : , -2 : ".parse::<Key>().unwrap(), s![.., -2..]);
        assert_eq!("1,".parse::<Key>().unwrap(), s![1]);
        assert_eq!("+3".parse::<Key>().unwrap(), s![3]);
        assert_eq!("tf.newaxis".parse::<Key>().unwrap(), Key(vec![KeyItem::NewAxis]));
        for bad in ["", "1,,2", "a", "1:2:3:4", "1.5", "--1", "99999999999999999999", ", 1"] {
            let err = bad.parse::<Key>().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{bad:?}");
            assert!(err.to_string().contains("getitem"), "{err}");
        }
    }

    #[test]
    fn rust_ranges_build_keys() {
        assert_eq!(s![1, 2].to_string(), "1, 2");
        assert_eq!(s![1..].to_string(), "1:");
        assert_eq!(s![..3, 1..3].to_string(), ":3, 1:3");
        assert_eq!(s![1i64..=2, ..=-1].to_string(), "1:3, :");
        assert_eq!(s![KeyItem::Ellipsis, KeyItem::slice(None, None, Some(2))].to_string(), "..., ::2");
        assert_eq!(s![].to_string(), "()");
        assert_eq!(GetItem::new(s![.., -2..]).name(), "GetItem{:, -2:}");
        assert_eq!(GetItem::new(-1).name(), "GetItem{-1}");
    }

    #[test]
    fn registry_builds_getitem() {
        let mut map = std::collections::BTreeMap::new();
        map.insert("key".to_string(), Attr::Str(":, :2".into()));
        let op = lookup("getitem", &Attrs::new("getitem", map.clone())).unwrap().unwrap();
        assert_eq!(op.name(), "GetItem{:, :2}");
        map.insert("axis".to_string(), Attr::Int(0));
        let err = lookup("getitem", &Attrs::new("getitem", map)).unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(lookup("gather", &Attrs::default()).is_none());
    }

    #[test]
    fn inputs_are_left_untouched() {
        let x = digits();
        let before = x.to_literal();
        get(&x, ":, ::-1").unwrap();
        assert_eq!(x.to_literal(), before);
    }

    #[test]
    fn infer_rejects_statically() {
        let op = GetItem::new(s![.., 1]);
        let err = op.infer(&[TensorType::ragged(DType::F32, 1)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidIndex);
        assert_eq!(op.infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let ty = GetItem::new(s![.., ..2]).infer(&[TensorType::ragged(DType::F32, 2).with_inner(&[Some(3)])]).unwrap();
        assert_eq!(ty[0].to_string(), "float32[?, *, *, 3]");
        let ty = GetItem::new(s![0]).infer(&[TensorType::ragged(DType::F32, 2)]).unwrap();
        assert_eq!(ty[0].to_string(), "float32[?, *]");
        let ty =
            GetItem::new(s![1..3, .., 0]).infer(&[TensorType::dense(DType::I64, &[Some(5), None, Some(2)])]).unwrap();
        assert_eq!(ty[0].to_string(), "int64[2, ?]");
        let err = GetItem::new(s![5]).infer(&[TensorType::dense(DType::I64, &[Some(5)])]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::IndexOutOfRange);
    }

    /// `rows` of `values` grouped `length` to a row with a uniform partition.
    fn uniform(values: Result<RaggedTensor>, length: usize) -> RaggedTensor {
        RaggedTensor::from_uniform_row_length(values.unwrap(), length).unwrap()
    }

    #[test]
    fn an_integer_indexes_a_uniform_partition_like_a_dense_dim() {
        // Law: with a uniform partition, x[:, i] is the dense tensor's [:, i] (TensorFlow takes
        // `values[i::n]`), for every i in -n..n.
        let x = uniform(dense(vec![1, 2, 3, 4, 5, 6]), 3);
        let d = dense(vec![vec![1, 2, 3], vec![4, 5, 6]]).unwrap();
        assert_eq!(TensorType::of(&x).to_string(), "int32[2, (3)]");
        for i in -3..3 {
            let key = format!(":, {i}");
            let got = get(&x, &key).unwrap();
            assert!(got.equals(&get(&d, &key).unwrap()), "x[{key}] = {got}");
            let ty = GetItem::new(key.parse::<Key>().unwrap()).infer(&[TensorType::of(&x)]).unwrap();
            assert_eq!(ty[0].to_string(), "int32[2]", "x[{key}]");
        }
        // Out of range is known from the type, before any data.
        for key in [":, 3", ":, -4", "..., 3"] {
            check_err(&x, key, ErrorKind::IndexOutOfRange);
            let e = GetItem::new(key.parse::<Key>().unwrap()).infer(&[TensorType::of(&x)]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::IndexOutOfRange, "x[{key}]: {e}");
        }
        // The same rows without the uniform partition stay ragged, as in TensorFlow.
        check_err(&ragged![[1, 2, 3], [4, 5, 6]].unwrap(), ":, 1", ErrorKind::InvalidIndex);
    }

    #[test]
    fn an_integer_on_a_uniform_partition_over_ragged_rows() {
        // Law: row r of x[:, i] is x[r, i].
        let x = uniform(ragged![[1], [2, 3], [], [4], [5, 6], [7]], 2);
        assert_eq!(TensorType::of(&x).to_string(), "int32[3, (2), *]");
        for key in [":, 1", ":, -2", ":, 0, :1", ":, 1, ::-1"] {
            let got = get(&x, key).unwrap();
            let rest = key.strip_prefix(":, ").unwrap();
            let rows: Vec<Literal> = (0..3).map(|r| get(&x, &format!("{r}, {rest}")).unwrap().to_literal()).collect();
            assert_eq!(got.to_literal(), Literal::List(rows), "x[{key}]");
            assert_eq!(TensorType::of(&got).ragged_rank(), 1, "x[{key}] keeps the inner ragged dim");
        }
        check_err(&x, ":, 2", ErrorKind::IndexOutOfRange);
        // An integer on the ragged dim after it is still refused.
        check_err(&x, ":, :, 0", ErrorKind::InvalidIndex);
    }

    #[test]
    fn slices_and_new_axes_keep_partitions_uniform() {
        let x = uniform(dense(vec![1, 2, 3, 4, 5, 6]), 3);
        let cases = [
            (":, 1:", "int32[2, (2)]"),
            (":, ::-1", "int32[2, (3)]"),
            (":, 5:", "int32[2, (0)]"),
            ("1:", "int32[1, (3)]"),
            ("0", "int32[3]"),
            (":, None", "int32[2, (1), (3)]"),
        ];
        for (key, want) in cases {
            let op = GetItem::new(key.parse::<Key>().unwrap());
            assert_eq!(op.infer(&[TensorType::of(&x)]).unwrap()[0].to_string(), want, "x[{key}]");
            // `get` checks that the value's partitions are typed as inferred.
            let got = get(&x, key).unwrap();
            assert_eq!(TensorType::of(&got).to_string(), want, "x[{key}] = {got}");
        }
    }
}
