//! Structure ops: `concat`, `stack`, `tile`, `reverse`, `fill`, `ragged.range`, `one_hot`,
//! `expand_dims`, `merge_dims`, `ones_like` / `zeros_like`, and the dense / sparse conversions
//! `to_tensor`, `from_tensor`, `to_sparse`, `from_sparse`.
//!
//! Data movement follows one idea throughout: compute the new row partitions and the list of
//! source rows, then gather with [`DenseTensor::take_rows`], which works for every dtype
//! (strings included). [`crate::gather::take_rows`] (whole outer rows) and the private `remap`
//! (rows and items of every dimension) are that idea in code.

use std::any::Any;
use std::collections::BTreeSet;
use std::ops::Range;

use ragtime_core::{
    DType, DenseTensor, Dim, Element, Error, Level, Literal, RaggedTensor, Result, RowPartition, StringTensor,
    TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties};

use crate::gather::{raise_ragged_rank, take_rows};
use crate::index::row_type;
use crate::util::{
    dense_input, expect_dense_rank, expect_int_vector, expect_integer, fixed_inputs, int_vector_input, literal_attr,
    literal_tensor, normalize_axis, one, scalar_attr, scalar_tensor, shared, show_literal,
};

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
        _ => return None,
    })
}

fn too_large(op: &str) -> Error {
    Error::argument(
        op,
        format!(
            "the result would exceed {} elements or {} bytes with its index vectors",
            DenseTensor::MAX_ELEMENTS,
            ragtime_core::limits::MAX_BYTES
        ),
    )
}

/// True when `n` elements fit the limits of [`DenseTensor::checked_len`] (elements, and bytes
/// with the index vectors built for them).
fn fits(n: usize) -> bool {
    DenseTensor::checked_len("", &[n]).is_ok()
}

// ---------------------------------------------------------------------------------------------
// Moving rows: the shared machinery of concat, stack, tile and reverse.

/// How one output dimension reads the matching input dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DimMap {
    /// Items in order.
    Keep,
    /// Items in reverse order.
    Reverse,
    /// The items, repeated this many times.
    Tile(usize),
}

impl DimMap {
    fn factor(self) -> usize {
        match self {
            DimMap::Tile(m) => m,
            _ => 1,
        }
    }

    fn push_children(self, children: Range<usize>, out: &mut Vec<usize>) {
        match self {
            DimMap::Keep => out.extend(children),
            DimMap::Reverse => out.extend(children.rev()),
            // An empty row tiles to an empty row: don't spin `m` times over nothing (m may be huge).
            DimMap::Tile(_) if children.is_empty() => {}
            DimMap::Tile(m) => (0..m).for_each(|_| out.extend(children.clone())),
        }
    }
}

/// Rebuilds `rt` with output row `i` taken from input row `outer[i]` (repeats allowed), and every
/// deeper dimension `d` read through `inner[d - 1]` (`Keep` where `inner` is too short).
///
/// The walk goes down level by level collecting source rows and new row lengths, only as deep
/// as the deepest dimension that changes; below it whole blocks of values move with one
/// `take_rows`. Every intermediate size is checked against [`DenseTensor::MAX_ELEMENTS`] before
/// it is allocated.
fn remap(op: &str, rt: &RaggedTensor, outer: Vec<usize>, inner: &[DimMap]) -> Result<RaggedTensor> {
    let values = rt.flat_values();
    let vshape = values.shape();
    if vshape.is_empty() {
        return Err(Error::argument(op, "a scalar has no rows to move"));
    }
    let nrows = rt.nrows();
    if let Some(&bad) = outer.iter().find(|&&r| r >= nrows) {
        return Err(Error::out_of_range(op, bad as i64, 0, nrows));
    }
    let ragged_rank = rt.ragged_rank();
    let map_of = |d: usize| inner.get(d - 1).copied().unwrap_or(DimMap::Keep);
    let depth = (ragged_rank + 1..rt.rank()).rev().find(|&d| map_of(d) != DimMap::Keep).unwrap_or(ragged_rank);

    let mut rows = outer;
    let mut nvals = rows.len();
    let mut partitions = Vec::with_capacity(ragged_rank);
    let mut out_inner = vshape[1..].to_vec();
    let levels = rt.levels();
    for d in 1..=depth {
        let map = map_of(d);
        let level = levels[d];
        let count = rows
            .iter()
            .try_fold(0usize, |acc, &r| {
                level.children(r).len().checked_mul(map.factor()).and_then(|n| acc.checked_add(n))
            })
            .filter(|&n| fits(n))
            .ok_or_else(|| too_large(op))?;
        let mut next = Vec::with_capacity(count);
        if let Level::Ragged(_) = level {
            let mut lengths = Vec::with_capacity(rows.len());
            for &r in &rows {
                let children = level.children(r);
                lengths.push((children.len() * map.factor()) as i64);
                map.push_children(children, &mut next);
            }
            partitions.push(RowPartition::from_row_lengths(&lengths)?);
            nvals = next.len();
        } else {
            for &r in &rows {
                map.push_children(level.children(r), &mut next);
            }
            // The dim may be tiled past any size even when no value moves (another dim is 0).
            let dim = &mut out_inner[d - ragged_rank - 1];
            *dim = dim.checked_mul(map.factor()).filter(|&n| fits(n)).ok_or_else(|| too_large(op))?;
        }
        rows = next;
    }

    // `rows` index the input at level `depth`: flat values seen as [items at that level, rest...].
    let walked = depth - ragged_rank;
    DenseTensor::checked_len(op, &[rows.len(), vshape[walked + 1..].iter().product()])?;
    let mut block_shape = vec![vshape[..=walked].iter().product()];
    block_shape.extend_from_slice(&vshape[walked + 1..]);
    let moved = reshaped(values, block_shape)?.take_rows(&rows)?;
    let mut flat_shape = vec![nvals];
    flat_shape.extend(out_inner);
    RaggedTensor::new(reshaped(&moved, flat_shape)?, partitions)
}

/// `t` with `shape` (shared, not copied, when the shape is already right).
fn reshaped(t: &DenseTensor, shape: Vec<usize>) -> Result<DenseTensor> {
    if t.shape() == shape.as_slice() {
        return Ok(t.clone());
    }
    t.reshape(shape)
}

// ---------------------------------------------------------------------------------------------
// concat and stack.
//
// Both follow TensorFlow's ragged concat/stack: with only dense operands the dense op runs; else
// dense operands become ragged (their second dimension a uniform partition), every operand is
// raised to the largest ragged rank, and then axis 0 appends rows, axis 1 joins each row's items
// (interleave the rows of all operands, then merge or group them), and a deeper axis recurses
// into the values under the shared outer partition. The type functions mirror the value
// functions step by step, so that inference predicts the exact ragged rank.

/// Checks the operands of `concat` / `stack` (same dtype, same rank) and resolves `axis`.
fn check_join(op: &str, types: &[TensorType], axis: i64, stack: bool) -> Result<usize> {
    let first = types.first().ok_or_else(|| Error::argument(op, "takes at least 1 input, got 0"))?;
    for (i, t) in types.iter().enumerate().skip(1) {
        if t.dtype() != first.dtype() {
            return Err(Error::dtype(op, format!("input {i} is {}, input 0 is {}", t.dtype(), first.dtype())));
        }
        if t.rank() != first.rank() {
            return Err(Error::shapes(
                op,
                format!("input {i} has rank {} ({t}), input 0 has rank {} ({first})", t.rank(), first.rank()),
            ));
        }
    }
    normalize_axis(op, axis, first.rank() + usize::from(stack))
}

/// True when TensorFlow would run the dense concat / stack on these operands.
fn joins_dense(all_dense: bool, rank: usize, axis: usize, stack: bool, top: bool) -> bool {
    all_dense && (top || axis + 1 == rank + usize::from(stack) || axis + 1 == rank)
}

/// Merges one dimension seen in several operands (known sizes must agree).
fn merge_dim(a: Dim, b: Dim) -> Option<Dim> {
    match (a, b) {
        (Dim::Known(x), Dim::Known(y)) => (x == y).then_some(a),
        (Dim::Known(_), Dim::Unknown) => Some(a),
        (Dim::Unknown, _) if !b.is_partition() => Some(b),
        // A uniform partition meets a ragged one (or one of another length) as ragged.
        (Dim::Ragged | Dim::UniformRows(_), Dim::Ragged | Dim::UniformRows(_)) => Some(Dim::Ragged),
        _ => None,
    }
}

/// Merges the dims of every operand, position by position; a disagreement names the operand.
fn merge_dim_lists(op: &str, lists: &[Vec<Dim>], what: &str) -> Result<Vec<Dim>> {
    let mut merged = lists.first().cloned().unwrap_or_default();
    for (i, list) in lists.iter().enumerate().skip(1) {
        let bad = || Error::shapes(op, format!("input {i} has {what} {list:?}, input 0 has {:?}", lists[0]));
        if list.len() != merged.len() {
            return Err(bad());
        }
        for (m, &d) in merged.iter_mut().zip(list) {
            *m = merge_dim(*m, d).ok_or_else(bad)?;
        }
    }
    Ok(merged)
}

/// The sum of several dims (known only when all are).
fn sum_dims(dims: impl Iterator<Item = Dim>) -> Dim {
    dims.map(Dim::size).try_fold(0usize, |acc, d| acc.checked_add(d?)).map_or(Dim::Unknown, Dim::Known)
}

/// `t` with its ragged rank raised to `ragged_rank` (uniform dims turned into partitions).
fn raise_type(op: &str, t: &TensorType, ragged_rank: usize) -> Result<TensorType> {
    if t.ragged_rank() >= ragged_rank {
        return Ok(t.clone());
    }
    if t.rank() <= ragged_rank {
        return Err(Error::shapes(op, format!("{t} has too few dimensions for ragged rank {ragged_rank}")));
    }
    let mut dims = t.dims().to_vec();
    dims[t.ragged_rank() + 1..=ragged_rank].fill(Dim::Ragged);
    TensorType::new(t.dtype(), ragged_rank, dims)
}

/// The type of a dense concat / stack.
fn dense_join_type(op: &str, types: &[TensorType], axis: usize, stack: bool) -> Result<TensorType> {
    let dtype = types[0].dtype();
    let dims = if stack {
        let mut dims = merge_dim_lists(op, &types.iter().map(|t| t.dims().to_vec()).collect::<Vec<_>>(), "shape")?;
        dims.insert(axis, Dim::Known(types.len()));
        dims
    } else {
        let others: Vec<Vec<Dim>> = types
            .iter()
            .map(|t| t.dims().iter().enumerate().filter(|&(k, _)| k != axis).map(|(_, &d)| d).collect())
            .collect();
        let mut dims = merge_dim_lists(op, &others, &format!("dims other than axis {axis}"))?;
        dims.insert(axis, sum_dims(types.iter().map(|t| t.dims()[axis])));
        dims
    };
    TensorType::new(dtype, 0, dims)
}

/// The type of `concat` (`stack == false`) or `stack` along the resolved `axis`.
fn join_type(op: &str, types: &[TensorType], axis: usize, stack: bool, top: bool) -> Result<TensorType> {
    let first = types.first().ok_or_else(|| Error::argument(op, "takes at least 1 input, got 0"))?;
    // TensorFlow returns a lone concat operand as it is; a lone stack operand goes the general way
    // (which may make inner dims ragged, as several operands would).
    if types.len() == 1 && !stack {
        return Ok(first.clone());
    }
    let all_dense = types.iter().all(|t| !t.is_ragged());
    if joins_dense(all_dense, first.rank(), axis, stack, top) {
        return dense_join_type(op, types, axis, stack);
    }
    let ragged_rank = types.iter().map(|t| t.ragged_rank()).max().unwrap_or(0).max(1);
    let raised = types.iter().map(|t| raise_type(op, t, ragged_rank)).collect::<Result<Vec<_>>>()?;
    let outers: Vec<Vec<Dim>> = raised.iter().map(|t| vec![t.dims()[0]]).collect();
    let (outer, ragged, inner) = match axis {
        0 | 1 => {
            let inners: Vec<Vec<Dim>> = raised.iter().map(|t| t.dims()[ragged_rank + 1..].to_vec()).collect();
            let inner = merge_dim_lists(op, &inners, "inner dims")?;
            let outer = match (axis, stack) {
                (0, false) => sum_dims(raised.iter().map(|t| t.dims()[0])),
                (0, true) => Dim::Known(types.len()),
                _ => merge_dim_lists(op, &outers, "rows")?[0],
            };
            (outer, ragged_rank + usize::from(stack), inner)
        }
        _ => {
            let outer = merge_dim_lists(op, &outers, "rows")?[0];
            let values: Vec<TensorType> = raised.iter().map(row_type).collect::<Result<_>>()?;
            let joined = join_type(op, &values, axis - 1, stack, false)?;
            (outer, joined.ragged_rank() + 1, joined.dims()[joined.ragged_rank() + 1..].to_vec())
        }
    };
    let mut dims = vec![outer];
    dims.extend(std::iter::repeat_n(Dim::Ragged, ragged));
    dims.extend(inner);
    TensorType::new(first.dtype(), ragged, dims)
}

/// `t` with a dimension of size 1 inserted at `axis` (`0..=t.rank()`), as TensorFlow's ragged
/// `expand_dims`: a dense tensor is reshaped; a ragged one gains a uniform partition (axis 0
/// wraps all rows in one row, axis 1 wraps each row) or, deeper, the same inside its values.
/// An axis past the rank is an `invalid_argument` error.
pub fn expand_dims(t: &RaggedTensor, axis: usize) -> Result<RaggedTensor> {
    if axis > t.rank() {
        return Err(Error::argument(
            "expand_dims",
            format!("axis {axis} is out of range for inserting a dimension into a tensor of rank {}", t.rank()),
        ));
    }
    if t.is_dense() {
        let mut shape = t.flat_values().shape().to_vec();
        shape.insert(axis, 1);
        return Ok(t.flat_values().reshape(shape)?.into());
    }
    let nrows = t.nrows();
    match axis {
        0 => t.with_outer_partitions(&[RowPartition::from_uniform_row_length(nrows, 1)?]),
        1 => t.with_outer_partitions(&[RowPartition::from_uniform_row_length(1, nrows)?]),
        _ => expand_dims(&t.values()?, axis - 1)?.with_outer_partitions(&t.partitions()[..1]),
    }
}

/// Dense concat / stack along `axis`: each output row of the dims before `axis` is the
/// concatenation of the matching chunks of every operand.
fn dense_join(op: &str, inputs: &[RaggedTensor], axis: usize, stack: bool) -> Result<DenseTensor> {
    let parts: Vec<DenseTensor> = inputs
        .iter()
        .map(|t| {
            let mut shape = t.flat_values().shape().to_vec();
            if stack {
                shape.insert(axis, 1);
            }
            reshaped(t.flat_values(), shape)
        })
        .collect::<Result<_>>()?;
    let shape0 = parts[0].shape().to_vec();
    for (i, p) in parts.iter().enumerate().skip(1) {
        let s = p.shape();
        if s.len() != shape0.len() || s.iter().zip(&shape0).enumerate().any(|(k, (a, b))| k != axis && a != b) {
            return Err(Error::shapes(
                op,
                format!(
                    "input {i} has shape {:?}, input 0 has shape {:?}",
                    inputs[i].flat_values().shape(),
                    inputs[0].flat_values().shape()
                ),
            ));
        }
    }
    let outer: usize = shape0[..axis].iter().product();
    let chunks: Vec<usize> = parts.iter().map(|p| p.shape()[axis..].iter().product()).collect();
    let mut out_shape = shape0.clone();
    out_shape[axis] = parts.iter().map(|p| p.shape()[axis]).sum();
    DenseTensor::checked_len(op, &out_shape)?;
    let flat: Vec<DenseTensor> = parts.iter().map(|p| reshaped(p, vec![p.len()])).collect::<Result<_>>()?;
    let source = DenseTensor::concat_rows(&flat)?;
    let starts: Vec<usize> = flat.iter().scan(0, |acc, p| Some(std::mem::replace(acc, *acc + p.len()))).collect();
    let mut index = Vec::with_capacity(source.len());
    for o in 0..outer {
        for (&start, &chunk) in starts.iter().zip(&chunks) {
            index.extend(start + o * chunk..start + (o + 1) * chunk);
        }
    }
    source.take_rows(&index)?.reshape(out_shape)
}

/// Axis 0: the rows of every operand one after the other (grouped per operand for `stack`).
fn join_rows(op: &str, inputs: &[RaggedTensor], stack: bool) -> Result<RaggedTensor> {
    let inner = &inputs[0].flat_values().shape()[1..];
    for (i, t) in inputs.iter().enumerate().skip(1) {
        if &t.flat_values().shape()[1..] != inner {
            return Err(Error::shapes(
                op,
                format!(
                    "input {i} has values of inner shape {:?}, input 0 has {inner:?}",
                    &t.flat_values().shape()[1..]
                ),
            ));
        }
    }
    let flat = DenseTensor::concat_rows(&inputs.iter().map(|t| t.flat_values().clone()).collect::<Vec<_>>())?;
    let mut partitions = Vec::with_capacity(inputs[0].ragged_rank() + 1);
    if stack {
        let counts: Vec<i64> = inputs.iter().map(|t| t.nrows() as i64).collect();
        partitions.push(RowPartition::from_row_lengths(&counts)?);
    }
    for level in 0..inputs[0].ragged_rank() {
        let lengths: Vec<i64> =
            inputs.iter().flat_map(|t| t.partitions()[level].row_lengths().iter().copied()).collect();
        partitions.push(RowPartition::from_row_lengths(&lengths)?);
    }
    RaggedTensor::new(flat, partitions)
}

/// Axis 1: row `r` of the result joins row `r` of every operand (concat merges their items,
/// stack keeps one sub-row per operand).
fn join_columns(op: &str, inputs: &[RaggedTensor], stack: bool) -> Result<RaggedTensor> {
    let nrows = inputs[0].nrows();
    for (i, t) in inputs.iter().enumerate().skip(1) {
        if t.nrows() != nrows {
            return Err(Error::shapes(
                op,
                format!(
                    "input {i} has {} rows, input 0 has {nrows}; joining along axis 1 needs equal row counts",
                    t.nrows()
                ),
            ));
        }
    }
    if !stack {
        if let Some(joined) = concat_flat_rows(op, inputs)? {
            return Ok(joined);
        }
    }
    let all = join_rows(op, inputs, false)?;
    let n = inputs.len();
    let interleaved: Vec<usize> = (0..nrows).flat_map(|row| (0..n).map(move |i| i * nrows + row)).collect();
    let rows = take_rows(op, &all, &interleaved)?;
    if stack {
        return rows.with_outer_partitions(&[RowPartition::from_uniform_row_length(n, nrows)?]);
    }
    let pairs = rows.partitions().first().ok_or_else(|| Error::argument(op, "lost the row partition"))?;
    let merged = RowPartition::from_row_splits(pairs.row_splits().iter().step_by(n).copied().collect())?;
    rows.values()?.with_outer_partitions(&[merged])
}

/// Concat along axis 1 of ragged rank 1 operands and dense operands of rank >= 2 (same row
/// count, dtype and item shape): row `r` of the result is row `r` of every operand (a dense
/// operand's row is its `k` items), copied as one run each, straight into the result. `None` when
/// the operands do not have that form (the general path then joins them, or names what differs).
fn concat_flat_rows(op: &str, inputs: &[RaggedTensor]) -> Result<Option<RaggedTensor>> {
    // Each operand as items (`[n_items, item...]`) and row splits over them.
    let mut items: Vec<DenseTensor> = Vec::with_capacity(inputs.len());
    let mut uniform: Vec<Option<Vec<i64>>> = Vec::with_capacity(inputs.len());
    for t in inputs {
        let v = t.flat_values();
        match t.ragged_rank() {
            1 => {
                items.push(v.clone());
                uniform.push(None);
            }
            0 if v.rank() >= 2 => {
                let (rows, k) = (v.shape()[0], v.shape()[1]);
                let mut shape = vec![rows * k];
                shape.extend_from_slice(&v.shape()[2..]);
                items.push(v.reshape(shape)?);
                let mut splits = ragtime_core::limits::try_vec(op, rows + 1)?;
                splits.extend((0..=rows).map(|r| (r * k) as i64));
                uniform.push(Some(splits));
            }
            _ => return Ok(None),
        }
    }
    let first = &items[0];
    if !items.iter().all(|v| v.dtype() == first.dtype() && v.shape().get(1..) == first.shape().get(1..)) {
        return Ok(None);
    }
    let splits: Vec<&[i64]> = inputs
        .iter()
        .zip(&uniform)
        .map(|(t, u)| u.as_deref().unwrap_or_else(|| t.partitions()[0].row_splits()))
        .collect();
    let nrows = inputs[0].nrows();
    let mut new_splits = ragtime_core::limits::try_vec(op, nrows + 1)?;
    new_splits.push(0i64);
    let mut total = 0i64;
    for r in 0..nrows {
        for s in &splits {
            total += s[r + 1] - s[r];
        }
        new_splits.push(total);
    }
    let columns: Option<Vec<&StringTensor>> =
        items.iter().map(|v| v.as_strings().filter(|c| c.shape().len() == 1)).collect();
    let values = match columns {
        Some(columns) => concat_string_rows(op, &columns, &splits, &new_splits)?,
        None => {
            let sources: Vec<&DenseTensor> = items.iter().collect();
            let runs = (0..nrows)
                .flat_map(|r| splits.iter().enumerate().map(move |(i, s)| (i, s[r] as usize..s[r + 1] as usize)));
            DenseTensor::gather_row_runs(op, &sources, runs)?
        }
    };
    Ok(Some(RaggedTensor::new(values, vec![RowPartition::from_row_splits(new_splits)?])?))
}

/// [`concat_flat_rows`] of string columns: row `r` of the result is row `r` of each column in
/// turn (`splits[i]` are column `i`'s rows, `new_splits` the result's). The bytes each row takes
/// are counted first, then the offsets and the bytes are filled by groups of rows on the call's
/// threads: a concat that adds markers around every row of tokens copies one short run per row
/// and column, where a general gather of runs pays for each run.
fn concat_string_rows(
    op: &str,
    columns: &[&StringTensor],
    splits: &[&[i64]],
    new_splits: &[i64],
) -> Result<DenseTensor> {
    let nrows = new_splits.len() - 1;
    let total = new_splits[nrows] as usize;
    let mut row_bytes: Vec<i64> = ragtime_core::limits::try_vec(op, nrows + 1)?;
    row_bytes.push(0);
    let mut bytes = 0i64;
    for r in 0..nrows {
        for (c, s) in columns.iter().zip(splits) {
            let o = c.offsets();
            bytes += o[s[r + 1] as usize] - o[s[r] as usize];
        }
        row_bytes.push(bytes);
    }
    ragtime_core::limits::checked_bytes(op, bytes as usize, "the strings of the result")?;
    let mut offsets: Vec<i64> = ragtime_core::limits::try_vec(op, total + 1)?;
    offsets.resize(total + 1, 0);
    crate::parallel::fill_spans(&mut offsets[1..], new_splits, |rows, chunk| {
        let mut k = 0;
        for r in rows {
            let mut end = row_bytes[r];
            for (c, s) in columns.iter().zip(splits) {
                let o = c.offsets();
                for t in s[r] as usize..s[r + 1] as usize {
                    end += o[t + 1] - o[t];
                    chunk[k] = end;
                    k += 1;
                }
            }
        }
    })?;
    let buf: Vec<u8> = crate::parallel::spans_filled(op, &row_bytes, |rows, chunk| {
        let mut at = 0;
        for r in rows {
            for (c, s) in columns.iter().zip(splits) {
                let o = c.offsets();
                let (begin, end) = (o[s[r] as usize] as usize, o[s[r + 1] as usize] as usize);
                at = ragtime_core::append_bytes(chunk, at, c.bytes(), begin, end);
            }
        }
    })?;
    Ok(DenseTensor::String(StringTensor::from_parts(buf, offsets, vec![total])?))
}

/// `concat` (`stack == false`) or `stack` of `inputs` along the resolved `axis`.
fn join(op: &str, inputs: &[RaggedTensor], axis: usize, stack: bool, top: bool) -> Result<RaggedTensor> {
    let first = inputs.first().ok_or_else(|| Error::argument(op, "takes at least 1 input, got 0"))?;
    if inputs.len() == 1 && !stack {
        return Ok(first.clone());
    }
    if joins_dense(inputs.iter().all(RaggedTensor::is_dense), first.rank(), axis, stack, top) {
        return dense_join(op, inputs, axis, stack).map(RaggedTensor::from);
    }
    let ragged_rank = inputs.iter().map(RaggedTensor::ragged_rank).max().unwrap_or(0).max(1);
    let raised = inputs.iter().map(|t| raise_ragged_rank(op, t, ragged_rank)).collect::<Result<Vec<_>>>()?;
    match axis {
        0 => join_rows(op, &raised, stack),
        1 => join_columns(op, &raised, stack),
        _ => {
            let outer = &raised[0].partitions()[0];
            for (i, t) in raised.iter().enumerate().skip(1) {
                if !t.partitions()[0].same(outer) {
                    return Err(Error::shapes(
                        op,
                        format!(
                            "input {i} and input 0 have different rows ({:?} vs {:?}); joining inside rows needs equal row lengths",
                            t.partitions()[0].row_lengths(),
                            outer.row_lengths()
                        ),
                    ));
                }
            }
            let values = raised.iter().map(RaggedTensor::values).collect::<Result<Vec<_>>>()?;
            join(op, &values, axis - 1, stack, false)?.with_outer_partitions(std::slice::from_ref(outer))
        }
    }
}

/// `concat(x1, x2, ...)` along `axis`: `tf.concat` for dense and ragged operands (mixed too).
/// Axis 0 appends rows; axis 1 joins each row's items; deeper axes join inside rows, which must
/// then have equal lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct Concat {
    axis: i64,
}

impl Concat {
    /// Concatenation along `axis` (negative counts from the end).
    pub fn new(axis: i64) -> Self {
        Concat { axis }
    }
    /// The axis, as given (negative counts from the end).
    pub fn axis(&self) -> i64 {
        self.axis
    }
    /// From graph-file attributes: `axis` (required).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis"])?;
        Ok(Concat::new(attrs.int("axis")?))
    }
}

impl Op for Concat {
    fn name(&self) -> String {
        format!("Concat{{axis={}}}", self.axis)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("concat", inputs, 1..=usize::MAX)?;
        let axis = check_join("concat", inputs, self.axis, false)?;
        Ok(vec![join_type("concat", inputs, axis, false, true)?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let axis = check_join("concat", &types, self.axis, false)?;
        one(join("concat", inputs, axis, false, true)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
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

/// `stack(x1, x2, ...)` along `axis`: `tf.stack` for dense and ragged operands (mixed too); the
/// result has one more dimension, of size the number of operands.
#[derive(Debug, Clone, PartialEq)]
pub struct Stack {
    axis: i64,
}

impl Stack {
    /// Stacking along `axis` of the result (negative counts from the end).
    pub fn new(axis: i64) -> Self {
        Stack { axis }
    }

    /// The axis of the result the inputs are stacked along (negative counts from the end).
    pub fn axis(&self) -> i64 {
        self.axis
    }
    /// From graph-file attributes: `axis` (default 0, as in `tf.stack`).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis"])?;
        Ok(Stack::new(attrs.int_opt("axis")?.unwrap_or(0)))
    }
}

impl Op for Stack {
    fn name(&self) -> String {
        format!("Stack{{axis={}}}", self.axis)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("stack", inputs, 1..=usize::MAX)?;
        let axis = check_join("stack", inputs, self.axis, true)?;
        Ok(vec![join_type("stack", inputs, axis, true, true)?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let axis = check_join("stack", &types, self.axis, true)?;
        one(join("stack", inputs, axis, true, true)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
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

// ---------------------------------------------------------------------------------------------
// tile and reverse.

/// `tile(x)` with `multiples`: `tf.tile`, generalized to ragged dimensions as TensorFlow does:
/// `multiples[0]` repeats the list of rows, `multiples[d]` repeats the items of every row of
/// dimension `d` (ragged or uniform). A result over [`DenseTensor::MAX_ELEMENTS`] values is an
/// `invalid_argument` error, never an allocation attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    multiples: Vec<usize>,
}

impl Tile {
    /// Tiling with one multiple per dimension.
    pub fn new(multiples: Vec<usize>) -> Self {
        Tile { multiples }
    }
    /// From graph-file attributes: `multiples` (required, non-negative).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["multiples"])?;
        let multiples = attrs
            .ints_opt("multiples")?
            .ok_or_else(|| Error::argument("tile", "attribute `multiples` is required"))?
            .into_iter()
            .map(|m| {
                usize::try_from(m).map_err(|_| Error::argument("tile", format!("multiples must be >= 0, got {m}")))
            })
            .collect::<Result<_>>()?;
        Ok(Tile::new(multiples))
    }

    fn check_rank(&self, rank: usize) -> Result<()> {
        if self.multiples.len() == rank {
            return Ok(());
        }
        Err(Error::argument(
            "tile",
            format!("multiples has {} entries for a tensor of rank {rank}", self.multiples.len()),
        ))
    }
}

impl Op for Tile {
    fn name(&self) -> String {
        format!("Tile{{multiples={:?}}}", self.multiples)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("tile", inputs, 1..=1)?;
        let x = &inputs[0];
        self.check_rank(x.rank())?;
        let dims = x
            .dims()
            .iter()
            .zip(&self.multiples)
            .map(|(&d, &m)| match d {
                Dim::Known(n) => n.checked_mul(m).map(Dim::Known).ok_or_else(|| too_large("tile")),
                Dim::Unknown if m == 0 => Ok(Dim::Known(0)),
                other => Ok(other),
            })
            .collect::<Result<_>>()?;
        Ok(vec![TensorType::new(x.dtype(), x.ragged_rank(), dims)?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("tile", inputs)?;
        self.check_rank(x.rank())?;
        let Some((&times, inner)) = self.multiples.split_first() else {
            return one(x.clone());
        };
        let nrows = x.nrows();
        DenseTensor::checked_len("tile", &[times, nrows])?;
        let outer: Vec<usize> = (0..times).flat_map(|_| 0..nrows).collect();
        let maps: Vec<DimMap> = inner.iter().map(|&m| DimMap::Tile(m)).collect();
        one(remap("tile", x, outer, &maps)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
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

/// `reverse(x)` along the axes in `axis`: `tf.reverse`. A ragged axis reverses the items of every
/// row. As in TensorFlow, a repeated axis is refused for a dense tensor and counts once for a
/// ragged one (whose reverse is a slice with step -1 per listed axis).
#[derive(Debug, Clone, PartialEq)]
pub struct Reverse {
    axes: Vec<i64>,
}

impl Reverse {
    /// Reversal along `axes` (negative counts from the end).
    pub fn new(axes: Vec<i64>) -> Self {
        Reverse { axes }
    }
    /// From graph-file attributes: `axis` (required; a list, or one integer).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis"])?;
        let axes = attrs.ints_opt("axis")?.ok_or_else(|| Error::argument("reverse", "attribute `axis` is required"))?;
        Ok(Reverse::new(axes))
    }

    /// The resolved axes of a tensor of type `x`.
    fn resolve(&self, x: &TensorType) -> Result<BTreeSet<usize>> {
        let mut axes = BTreeSet::new();
        for &a in &self.axes {
            let axis = normalize_axis("reverse", a, x.rank())?;
            if !axes.insert(axis) && !x.is_ragged() {
                return Err(Error::argument("reverse", format!("axis {axis} is listed more than once")));
            }
        }
        Ok(axes)
    }
}

impl Op for Reverse {
    fn name(&self) -> String {
        format!("Reverse{{axis={:?}}}", self.axes)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("reverse", inputs, 1..=1)?;
        self.resolve(&inputs[0])?;
        Ok(vec![inputs[0].clone()])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("reverse", inputs)?;
        let axes = self.resolve(&TensorType::of(x))?;
        if axes.is_empty() {
            return one(x.clone());
        }
        DenseTensor::checked_len("reverse", &[x.nrows()])?;
        let outer: Vec<usize> =
            if axes.contains(&0) { (0..x.nrows()).rev().collect() } else { (0..x.nrows()).collect() };
        let maps: Vec<DimMap> =
            (1..x.rank()).map(|d| if axes.contains(&d) { DimMap::Reverse } else { DimMap::Keep }).collect();
        one(remap("reverse", x, outer, &maps)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
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

// ---------------------------------------------------------------------------------------------
// fill and ragged.range.

/// `fill(dims, value)`: `tf.fill`, a dense tensor of shape `dims` (an integer vector) whose every
/// element is the scalar `value`. Negative or oversized dims are `invalid_argument` errors.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fill;

impl Fill {
    /// The op.
    pub fn new() -> Self {
        Fill
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Fill)
    }
}

impl Op for Fill {
    fn name(&self) -> String {
        "Fill".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "fill";
        expect_arity(OP, inputs, 2..=2)?;
        expect_int_vector(OP, 0, &inputs[0])?;
        expect_dense_rank(OP, 1, &inputs[1], 0)?;
        let rank = inputs[0].dims()[0].size().ok_or_else(|| {
            Error::argument(OP, "the length of input 0 (dims) must be known when the graph is built: it is the rank")
        })?;
        ragtime_core::limits::checked_rank(OP, rank)?;
        Ok(vec![TensorType::dense(inputs[1].dtype(), &vec![None; rank])])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "fill";
        let [dims, value] = fixed_inputs(OP, inputs)?;
        let dims = int_vector_input(OP, 0, "dims", dims)?;
        let shape = dims
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                usize::try_from(d)
                    .map_err(|_| Error::argument(OP, format!("input 0 (dims) has a negative size {d} at position {k}")))
            })
            .collect::<Result<Vec<_>>>()?;
        DenseTensor::checked_len(OP, &shape)?;
        let value = dense_input(OP, 1, "value", value)?;
        if value.rank() != 0 {
            return Err(Error::shapes(OP, format!("input 1 (value) must be a scalar, got shape {:?}", value.shape())));
        }
        one(DenseTensor::full(shape, value)?.into())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        _outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        // The value is repeated over the whole result: its gradient is the sum back to its shape.
        let (Some(g), [_, value]) = (output_grads.first().copied().flatten(), inputs) else {
            return Ok(vec![None; inputs.len()]);
        };
        let value_ty = graph.var(*value).map(|v| v.ty.clone()).ok_or_else(|| Error::graph("fill: unknown value"))?;
        Ok(vec![None, Some(crate::broadcast::sum_to_operand(graph, g, &value_ty)?)])
    }
}

/// The dtypes `ragged.range` accepts, in TensorFlow's promotion order.
const RANGE_DTYPES: [DType; 4] = [DType::I32, DType::I64, DType::F32, DType::F64];

/// The element types of `ragged.range`: how many values a range has, and the step.
trait RangeElement: Element {
    /// The number of values of `range(start, limit, delta)` (`delta != 0`), if representable.
    fn range_len(start: Self, limit: Self, delta: Self) -> Option<usize>;
    /// The value after `v` (wrapping for integers: the step past the last value may overflow).
    fn step(v: Self, delta: Self) -> Self;
}

macro_rules! range_int {
    ($($t:ty),*) => {$(
        impl RangeElement for $t {
            fn range_len(start: Self, limit: Self, delta: Self) -> Option<usize> {
                let (s, l, d) = (i128::from(start), i128::from(limit), i128::from(delta));
                if (d > 0 && l < s) || (d < 0 && l > s) {
                    return Some(0);
                }
                usize::try_from(((l - s).abs() + d.abs() - 1) / d.abs()).ok()
            }
            fn step(v: Self, delta: Self) -> Self {
                v.wrapping_add(delta)
            }
        }
    )*};
}
range_int!(i32, i64);

macro_rules! range_float {
    ($($t:ty),*) => {$(
        impl RangeElement for $t {
            fn range_len(start: Self, limit: Self, delta: Self) -> Option<usize> {
                if (delta > 0.0 && limit < start) || (delta < 0.0 && limit > start) {
                    return Some(0);
                }
                let n = f64::from(((limit - start) / delta).abs().ceil());
                (n.is_finite() && n <= DenseTensor::MAX_ELEMENTS as f64).then_some(n as usize)
            }
            fn step(v: Self, delta: Self) -> Self {
                v + delta
            }
        }
    )*};
}
range_float!(f32, f64);

/// One operand of `ragged.range`: a scalar (broadcast to every row) or a vector.
struct RangeOperand<T> {
    values: Vec<T>,
    scalar: bool,
}

impl<T: Copy> RangeOperand<T> {
    fn at(&self, row: usize) -> T {
        self.values[if self.scalar { 0 } else { row }]
    }
}

/// The rows `range(starts[i], limits[i], deltas[i])` as a ragged tensor.
fn ragged_ranges<T: RangeElement>(operands: [&DenseTensor; 3], nrows: usize) -> Result<RaggedTensor> {
    const OP: &str = "ragged.range";
    let [starts, limits, deltas] =
        operands.map(|t| RangeOperand { values: t.as_slice::<T>().unwrap_or(&[]).to_vec(), scalar: t.rank() == 0 });
    let mut lengths = Vec::with_capacity(nrows);
    let mut total = 0usize;
    for row in 0..nrows {
        let (start, limit, delta) = (starts.at(row), limits.at(row), deltas.at(row));
        if delta == T::default() {
            return Err(Error::argument(OP, format!("row {row}: delta must not be 0")));
        }
        let len = T::range_len(start, limit, delta)
            .and_then(|n| total.checked_add(n).map(|t| (n, t)))
            .filter(|&(_, t)| fits(t))
            .ok_or_else(|| {
                Error::argument(
                    OP,
                    format!(
                        "row {row}: range({start}, {limit}, {delta}) makes more values than the limits allow ({} elements, {} bytes)",
                        DenseTensor::MAX_ELEMENTS,
                        ragtime_core::limits::MAX_BYTES
                    ),
                )
            })?;
        total = len.1;
        lengths.push(len.0 as i64);
    }
    let mut values = Vec::with_capacity(total);
    for (row, &len) in lengths.iter().enumerate() {
        let (mut v, delta) = (starts.at(row), deltas.at(row));
        for _ in 0..len {
            values.push(v);
            v = T::step(v, delta);
        }
    }
    RaggedTensor::from_row_lengths(DenseTensor::vector(values), &lengths)
}

/// `ragged.range(limits)`, `ragged.range(starts, limits)` or `ragged.range(starts, limits, deltas)`:
/// `tf.ragged.range`, one row `range(starts[i], limits[i], deltas[i])` per row (starts default to
/// 0, deltas to 1). Operands are scalars (broadcast) or vectors of one length, of int32, int64,
/// float32 or float64, promoted to the widest among them. A zero delta is `invalid_argument`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RaggedRange;

impl RaggedRange {
    /// The op.
    pub fn new() -> Self {
        RaggedRange
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(RaggedRange)
    }

    /// The promoted dtype and the number of rows (`None` when unknown), from the operand types.
    fn plan(types: &[TensorType]) -> Result<(DType, Option<usize>)> {
        const OP: &str = "ragged.range";
        let mut dtype_rank = 0;
        let mut nrows: Option<(usize, Dim)> = None;
        for (i, t) in types.iter().enumerate() {
            let rank = RANGE_DTYPES.iter().position(|&d| d == t.dtype()).ok_or_else(|| {
                Error::dtype(OP, format!("input {i} must be int32, int64, float32 or float64, got {}", t.dtype()))
            })?;
            dtype_rank = dtype_rank.max(rank);
            if t.is_ragged() || t.rank() > 1 {
                return Err(Error::shapes(OP, format!("input {i} must be a scalar or a vector, got {t}")));
            }
            if t.rank() == 1 {
                nrows = match nrows {
                    None => Some((i, t.dims()[0])),
                    Some((j, d)) => {
                        let merged = merge_dim(d, t.dims()[0]).ok_or_else(|| {
                            Error::shapes(
                                OP,
                                format!("input {i} is {t}, input {j} is {}: vectors must have one length", types[j]),
                            )
                        })?;
                        Some((j, merged))
                    }
                };
            }
        }
        let rows = match nrows {
            None => Some(1),
            Some((_, d)) => d.size(),
        };
        Ok((RANGE_DTYPES[dtype_rank], rows))
    }
}

impl Op for RaggedRange {
    fn name(&self) -> String {
        "RaggedRange".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("ragged.range", inputs, 1..=3)?;
        let (dtype, nrows) = Self::plan(inputs)?;
        Ok(vec![TensorType::new(dtype, 1, vec![Dim::from_option(nrows), Dim::Ragged])?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "ragged.range";
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        expect_arity(OP, &types, 1..=3)?;
        let (dtype, nrows) = Self::plan(&types)?;
        let nrows = nrows.ok_or_else(|| Error::shapes(OP, "vector operands must have one length"))?;
        let dense = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| dense_input(OP, i, "range bound", t)?.cast(dtype))
            .collect::<Result<Vec<_>>>()?;
        let zero = DenseTensor::zero(dtype);
        let one_step = DenseTensor::scalar(1i32).cast(dtype)?;
        let operands = match dense.as_slice() {
            [limits] => [&zero, limits, &one_step],
            [starts, limits] => [starts, limits, &one_step],
            [starts, limits, deltas] => [starts, limits, deltas],
            _ => return Err(Error::argument(OP, format!("takes 1 to 3 inputs, got {}", inputs.len()))),
        };
        one(match dtype {
            DType::I32 => ragged_ranges::<i32>(operands, nrows)?,
            DType::I64 => ragged_ranges::<i64>(operands, nrows)?,
            DType::F32 => ragged_ranges::<f32>(operands, nrows)?,
            _ => ragged_ranges::<f64>(operands, nrows)?,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// expand_dims, merge_dims, ones_like, zeros_like

/// `expand_dims(x, axis)` (`tf.expand_dims`): a dim of size 1 inserted before `axis` (`-1` is
/// after the last dim). For ragged `x`, an axis up to the ragged rank inserts a uniform row
/// partition of length 1 (ragged rank + 1; axis 0 puts every row under one new outer row), a later
/// axis a uniform inner dim of size 1.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExpandDims {
    /// Where the new dim goes, in `-(rank + 1)..=rank`.
    pub axis: i64,
}

impl ExpandDims {
    /// `expand_dims` at `axis`.
    pub fn new(axis: i64) -> Self {
        ExpandDims { axis }
    }
    /// From graph-file attributes: `axis` (required).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis"])?;
        Ok(ExpandDims { axis: attrs.int("axis")? })
    }
}

impl Op for ExpandDims {
    fn name(&self) -> String {
        format!("ExpandDims{{axis={}}}", self.axis)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("expand_dims", inputs, 1..=1)?;
        let x = &inputs[0];
        let axis = normalize_axis("expand_dims", self.axis, x.rank() + 1)?;
        let rr = x.ragged_rank();
        let mut dims = x.dims().to_vec();
        let ragged_rank = if rr > 0 && axis == 0 {
            dims[0] = Dim::Ragged;
            dims.insert(0, Dim::Known(1));
            rr + 1
        } else if rr > 0 && axis <= rr {
            dims.insert(axis, Dim::Ragged);
            rr + 1
        } else {
            dims.insert(axis, Dim::Known(1));
            rr
        };
        Ok(vec![TensorType::new(x.dtype(), ragged_rank, dims)?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("expand_dims", inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let axis = normalize_axis("expand_dims", self.axis, x.rank() + 1)?;
        let rr = x.ragged_rank();
        if rr == 0 || axis > rr {
            let flat = x.flat_values();
            let mut shape = flat.shape().to_vec();
            shape.insert(axis - rr, 1);
            return one(x.with_flat_values(flat.reshape(shape)?)?);
        }
        let mut partitions = x.partitions().to_vec();
        // The number of elements at the level the new partition splits: rows of `axis - 1`.
        let (length, nrows) = if axis == 0 { (x.nrows(), 1) } else { (1, partitions[axis - 1].nrows()) };
        // Above the partition of the same level (partition `k` describes dim `k + 1`).
        partitions.insert(axis.saturating_sub(1), RowPartition::from_uniform_row_length(length, nrows)?);
        one(RaggedTensor::new(x.flat_values().clone(), partitions)?)
    }
    fn properties(&self) -> OpProperties {
        OpProperties { cost: Cost::Free, ..OpProperties::default() }
    }
    fn as_any(&self) -> &dyn Any {
        self
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

/// `merge_dims(x, outer_axis, inner_axis)` (`RaggedTensor.merge_dims`): dims `outer_axis` to
/// `inner_axis` (inclusive) become one, their items concatenated in order. Merging from axis 0
/// past every ragged dim gives a dense tensor; `outer_axis == inner_axis` changes nothing;
/// `outer_axis > inner_axis` is `invalid_argument`. Dense tensors are reshaped likewise.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MergeDims {
    /// The first merged dim.
    pub outer_axis: i64,
    /// The last merged dim.
    pub inner_axis: i64,
}

impl MergeDims {
    /// `merge_dims(outer_axis, inner_axis)`.
    pub fn new(outer_axis: i64, inner_axis: i64) -> Self {
        MergeDims { outer_axis, inner_axis }
    }
    /// From graph-file attributes: `outer_axis`, `inner_axis` (required).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["outer_axis", "inner_axis"])?;
        Ok(MergeDims { outer_axis: attrs.int("outer_axis")?, inner_axis: attrs.int("inner_axis")? })
    }
    /// The axes, resolved against `rank`.
    fn axes(&self, rank: usize) -> Result<(usize, usize)> {
        let outer = normalize_axis("merge_dims", self.outer_axis, rank)?;
        let inner = normalize_axis("merge_dims", self.inner_axis, rank)?;
        if outer > inner {
            return Err(Error::argument(
                "merge_dims",
                format!("outer_axis {} comes after inner_axis {}", self.outer_axis, self.inner_axis),
            ));
        }
        Ok((outer, inner))
    }
}

impl Op for MergeDims {
    fn name(&self) -> String {
        format!("MergeDims{{outer_axis={}, inner_axis={}}}", self.outer_axis, self.inner_axis)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("merge_dims", inputs, 1..=1)?;
        let x = &inputs[0];
        let (outer, inner) = self.axes(x.rank())?;
        let rr = x.ragged_rank();
        if outer == inner {
            return Ok(vec![x.clone()]);
        }
        let (merged, ragged_rank) = if rr == 0 || outer > rr {
            let sizes: Option<Vec<usize>> = x.dims()[outer..=inner].iter().map(|d| d.size()).collect();
            (Dim::from_option(sizes.and_then(|s| s.iter().try_fold(1usize, |a, &b| a.checked_mul(b)))), rr)
        } else if outer == 0 {
            (Dim::Unknown, rr.saturating_sub(inner))
        } else {
            (Dim::Ragged, outer + rr.saturating_sub(inner))
        };
        let mut dims = x.dims()[..outer].to_vec();
        dims.push(merged);
        dims.extend_from_slice(&x.dims()[inner + 1..]);
        Ok(vec![TensorType::new(x.dtype(), ragged_rank, dims)?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("merge_dims", inputs)?;
        let (outer, inner) = self.axes(x.rank())?;
        let rr = x.ragged_rank();
        if outer == inner {
            return one(x.clone());
        }
        if rr == 0 || outer > rr {
            let flat = x.flat_values();
            let (o, i) = (outer - rr, inner - rr);
            let shape = flat.shape();
            let mut merged = shape[..o].to_vec();
            merged.push(shape[o..=i].iter().product());
            merged.extend_from_slice(&shape[i + 1..]);
            return one(x.with_flat_values(flat.reshape(merged)?)?);
        }
        // Every merged dim as a partition, then the partitions of dims `outer + 1..=inner` are
        // folded into the one of dim `outer` (or dropped when `outer` is the outer dim).
        let y = raise_ragged_rank("merge_dims", x, inner)?;
        let parts = y.partitions();
        let mut partitions = Vec::with_capacity(parts.len());
        if outer > 0 {
            partitions.extend_from_slice(&parts[..outer - 1]);
            let mut splits = parts[outer - 1].row_splits().to_vec();
            for p in &parts[outer..inner] {
                let through = p.row_splits();
                for s in &mut splits {
                    *s = through[*s as usize];
                }
            }
            partitions.push(RowPartition::from_row_splits(splits)?);
        }
        partitions.extend_from_slice(&parts[inner..]);
        one(RaggedTensor::new(y.flat_values().clone(), partitions)?)
    }
    fn properties(&self) -> OpProperties {
        OpProperties { cost: Cost::Free, ..OpProperties::default() }
    }
    fn as_any(&self) -> &dyn Any {
        self
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

/// `ones_like(x)` / `zeros_like(x)` (`tf.ones_like` / `tf.zeros_like`): `x`'s structure (its
/// partitions shared) filled with one / zero of `dtype` (default `x`'s): `true` / `false` for
/// bool, `""` for the zeros of strings; ones of strings are `type_mismatch`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FilledLike {
    /// Ones instead of zeros.
    pub ones: bool,
    /// The result's dtype (`None`: the input's).
    pub dtype: Option<DType>,
}

impl FilledLike {
    /// `ones_like` (`ones`) or `zeros_like`, giving `dtype` (`None`: the input's).
    pub fn new(ones: bool, dtype: Option<DType>) -> Self {
        FilledLike { ones, dtype }
    }
    /// From graph-file attributes: `dtype` (optional).
    pub fn from_attrs(ones: bool, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["dtype"])?;
        let op = if ones { "ones_like" } else { "zeros_like" };
        let dtype = attrs
            .str_opt("dtype")?
            .map(|name| DType::from_name(name).ok_or_else(|| Error::argument(op, format!("unknown dtype `{name}`"))))
            .transpose()?;
        Ok(FilledLike { ones, dtype })
    }
    fn op_name(&self) -> &'static str {
        if self.ones {
            "ones_like"
        } else {
            "zeros_like"
        }
    }
    /// The fill value as a 0-d tensor of `dtype`.
    fn fill(&self, dtype: DType) -> Result<DenseTensor> {
        let lit = match dtype {
            DType::Bool => Literal::Bool(self.ones),
            DType::String if self.ones => {
                return Err(Error::dtype(self.op_name(), "strings have no one"));
            }
            DType::String => Literal::Str(Vec::new()),
            _ => Literal::Int(i128::from(self.ones)),
        };
        scalar_tensor(self.op_name(), "the fill value", &lit, dtype)
    }
}

impl Op for FilledLike {
    fn name(&self) -> String {
        let name = if self.ones { "OnesLike" } else { "ZerosLike" };
        match self.dtype {
            Some(d) => format!("{name}{{dtype={d}}}"),
            None => name.into(),
        }
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(self.op_name(), inputs, 1..=1)?;
        let dtype = self.dtype.unwrap_or(inputs[0].dtype());
        self.fill(dtype)?;
        Ok(vec![inputs[0].clone().with_dtype(dtype)])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs(self.op_name(), inputs)?;
        let dtype = self.dtype.unwrap_or(x.dtype());
        let flat = DenseTensor::full(x.flat_values().shape().to_vec(), &self.fill(dtype)?)?;
        one(x.with_flat_values(flat)?)
    }
    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Cheap }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        _outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        let _ = (graph, output_grads);
        // Constant in its input's values.
        Ok(vec![None; inputs.len()])
    }
}

// ---------------------------------------------------------------------------------------------
// one_hot

/// `one_hot(indices)` (`tf.one_hot` with axis -1): each index becomes a new innermost uniform dim
/// of size `depth` holding `on_value` at the index and `off_value` elsewhere; an index outside
/// `[0, depth)` gives `off_value` only. The result keeps the indices' partitions.
///
/// `dtype` is the values' dtype: given, else `on_value`'s (`off_value`'s) literal type, else
/// float32. `on_value` / `off_value` default to 1 / 0 (true / false for bool); strings need both.
#[derive(Debug, Clone, PartialEq)]
pub struct OneHot {
    /// The size of the new dim.
    pub depth: usize,
    /// The value at the index (`None`: one).
    pub on_value: Option<Literal>,
    /// The value elsewhere (`None`: zero).
    pub off_value: Option<Literal>,
    /// The values' dtype (`None`: from the values, else float32).
    pub dtype: Option<DType>,
}

const ONE_HOT: &str = "one_hot";

impl OneHot {
    /// `one_hot` with `depth`, float32 ones and zeros.
    pub fn new(depth: usize) -> Self {
        OneHot { depth, on_value: None, off_value: None, dtype: None }
    }

    /// The same op giving `on` / `off` (their dtype unless [`OneHot::with_dtype`] says otherwise).
    pub fn with_values(self, on: impl Into<Literal>, off: impl Into<Literal>) -> Self {
        OneHot { on_value: Some(on.into()), off_value: Some(off.into()), ..self }
    }

    /// The same op giving values of `dtype`.
    pub fn with_dtype(self, dtype: DType) -> Self {
        OneHot { dtype: Some(dtype), ..self }
    }

    /// From graph-file attributes: `depth` (required, >= 0), `on_value`, `off_value` (scalars),
    /// `dtype`.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["depth", "on_value", "off_value", "dtype"])?;
        let depth = attrs.int("depth")?;
        let depth =
            usize::try_from(depth).map_err(|_| Error::argument(ONE_HOT, format!("depth must be >= 0, got {depth}")))?;
        let dtype = attrs
            .str_opt("dtype")?
            .map(|name| {
                DType::from_name(name).ok_or_else(|| Error::argument(ONE_HOT, format!("unknown dtype `{name}`")))
            })
            .transpose()?;
        Ok(OneHot {
            depth,
            on_value: scalar_attr(attrs, "on_value")?,
            off_value: scalar_attr(attrs, "off_value")?,
            dtype,
        })
    }

    /// The values' dtype (see the type's doc).
    fn value_dtype(&self) -> DType {
        let of_literal = |lit: &Literal| match lit {
            Literal::Int(_) => Some(DType::I32),
            Literal::Float(_) => Some(DType::F32),
            Literal::Bool(_) => Some(DType::Bool),
            Literal::Str(_) => Some(DType::String),
            Literal::List(_) => None,
        };
        self.dtype
            .or_else(|| self.on_value.as_ref().and_then(of_literal))
            .or_else(|| self.off_value.as_ref().and_then(of_literal))
            .unwrap_or(DType::F32)
    }

    /// `[off, on]` as a 1-d tensor of the values' dtype (`type_mismatch` when a value is not of it).
    fn palette(&self) -> Result<DenseTensor> {
        let dtype = self.value_dtype();
        let default = |on: bool| match dtype {
            DType::Bool => Ok(Literal::Bool(on)),
            DType::String => Err(Error::dtype(ONE_HOT, "string values need both on_value and off_value")),
            _ => Ok(Literal::Int(i128::from(on))),
        };
        let off = self.off_value.clone().map_or_else(|| default(false), Ok)?;
        let on = self.on_value.clone().map_or_else(|| default(true), Ok)?;
        let off = scalar_tensor(ONE_HOT, "off_value", &off, dtype)?.reshape(vec![1])?;
        let on = scalar_tensor(ONE_HOT, "on_value", &on, dtype)?.reshape(vec![1])?;
        DenseTensor::concat_rows(&[off, on])
    }
}

impl Op for OneHot {
    fn name(&self) -> String {
        format!(
            "OneHot{{depth={}, on_value={}, off_value={}, dtype={}}}",
            self.depth,
            show_option_literal(&self.on_value),
            show_option_literal(&self.off_value),
            self.value_dtype()
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(ONE_HOT, inputs, 1..=1)?;
        let indices = &inputs[0];
        if !matches!(indices.dtype(), DType::U8 | DType::I8 | DType::I32 | DType::I64) {
            return Err(Error::dtype(
                ONE_HOT,
                format!("indices must be uint8, int8, int32 or int64, got {}", indices.dtype()),
            ));
        }
        self.palette()?;
        let mut dims = indices.dims().to_vec();
        dims.push(Dim::Known(self.depth));
        ragtime_core::limits::checked_rank(ONE_HOT, dims.len())?;
        Ok(vec![TensorType::new(self.value_dtype(), indices.ragged_rank(), dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [indices] = fixed_inputs::<1>(ONE_HOT, inputs)?;
        self.output_types(&[TensorType::of(indices)])?;
        let palette = self.palette()?;
        let values = indices.flat_values();
        let mut shape = values.shape().to_vec();
        shape.push(self.depth);
        ragtime_core::limits::checked_size(ONE_HOT, &shape, self.value_dtype().size_of().max(1))?;
        let ids = values.to_i64_vec(ONE_HOT, "input 0 (indices)")?;
        let depth = self.depth as i64;
        // Row 1 of the palette (on) where the position is the index, row 0 (off) elsewhere.
        let picks = ids.iter().flat_map(|&id| {
            (0..depth).map(move |d| {
                let row = usize::from(d == id);
                (0, row..row + 1)
            })
        });
        let flat = DenseTensor::gather_row_runs(ONE_HOT, &[&palette], picks)?;
        one(indices.with_flat_values(flat.reshape(shape)?)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// Dense and sparse conversions.

/// An optional scalar attribute as written in op names (`None` when absent).
fn show_option_literal(lit: &Option<Literal>) -> String {
    lit.as_ref().map_or_else(|| "None".into(), show_literal)
}

/// Fails (`incompatible_shapes`) unless a default of shape `default` broadcasts to the inner dims
/// `inner` (aligned from the right; unknown dims accept anything).
fn check_default_broadcasts(default: &[usize], inner: &[Dim]) -> Result<()> {
    let fits = default.len() <= inner.len()
        && default.iter().rev().zip(inner.iter().rev()).all(|(&d, dim)| d == 1 || dim.size().is_none_or(|n| n == d));
    if fits {
        return Ok(());
    }
    Err(Error::shapes(
        "to_tensor",
        format!("default_value of shape {default:?} does not broadcast to the inner dims {inner:?}"),
    ))
}

/// `to_tensor(x)`: `tf.RaggedTensor.to_tensor`, a dense tensor padded with `default_value` (zero or
/// the empty string when absent; a scalar, or a tensor that broadcasts to the uniform inner shape,
/// else `incompatible_shapes`); `shape` (one entry per dimension, `None` = bounding size)
/// truncates or pads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToTensor {
    default_value: Option<Literal>,
    shape: Option<Vec<Option<usize>>>,
}

impl ToTensor {
    /// The conversion with an optional default (a scalar or a nested list that broadcasts to the
    /// inner shape) and an optional target shape.
    pub fn new(default_value: Option<Literal>, shape: Option<Vec<Option<usize>>>) -> Self {
        ToTensor { default_value, shape }
    }
    /// From graph-file attributes: `default_value` (a scalar), `shape` (a list of sizes, with
    /// `null` or -1 for the bounding size); both optional.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["default_value", "shape"])?;
        let shape = attrs
            .dims_opt("shape")?
            .map(|dims| {
                dims.into_iter()
                    .map(|d| match d {
                        None | Some(-1) => Ok(None),
                        Some(n) => usize::try_from(n).map(Some).map_err(|_| {
                            Error::argument("to_tensor", format!("shape sizes must be >= 0 or null, got {n}"))
                        }),
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .transpose()?;
        Ok(ToTensor::new(literal_attr(attrs, "default_value")?, shape))
    }

    fn check_shape(&self, rank: usize) -> Result<()> {
        match &self.shape {
            Some(s) if s.len() != rank => Err(Error::shapes(
                "to_tensor",
                format!("target shape has {} dimensions, the tensor has rank {rank}", s.len()),
            )),
            _ => Ok(()),
        }
    }
}

impl Op for ToTensor {
    fn name(&self) -> String {
        let shape = match &self.shape {
            None => "None".to_string(),
            Some(s) => {
                let dims: Vec<String> = s.iter().map(|d| d.map_or("?".into(), |n| n.to_string())).collect();
                format!("[{}]", dims.join(", "))
            }
        };
        format!("ToTensor{{default_value={}, shape={shape}}}", show_option_literal(&self.default_value))
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("to_tensor", inputs, 1..=1)?;
        let x = &inputs[0];
        if let Some(lit) = &self.default_value {
            let default = literal_tensor("to_tensor", "default_value", lit, x.dtype())?;
            check_default_broadcasts(default.shape(), x.inner_dims())?;
        }
        self.check_shape(x.rank())?;
        let dims: Vec<Option<usize>> = match &self.shape {
            Some(s) => {
                // Uniform inner dims cannot be reshaped (the same check `RaggedTensor::to_tensor` makes).
                let inner = s.iter().zip(x.dims()).enumerate().skip(x.ragged_rank() + 1);
                if let Some((d, (t, n))) =
                    inner.filter_map(|(d, (t, n))| Some((d, (t.as_ref()?, n.size()?)))).find(|(_, (t, n))| **t != *n)
                {
                    return Err(Error::shapes(
                        "to_tensor",
                        format!("target shape {s:?} gives uniform dimension {d} size {t}, the values have {n}"),
                    ));
                }
                s.iter().zip(x.dims()).map(|(target, d)| target.or(d.size())).collect()
            }
            None => x.dims().iter().map(|d| d.size()).collect(),
        };
        Ok(vec![TensorType::dense(x.dtype(), &dims)])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("to_tensor", inputs)?;
        self.check_shape(x.rank())?;
        let default = match &self.default_value {
            Some(lit) => Some(literal_tensor("to_tensor", "default_value", lit, x.dtype())?),
            None => None,
        };
        one(x.to_tensor(default.as_ref(), self.shape.as_deref())?.into())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        _outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        // Padding comes from no input element: position -1, which the scatter-add drops.
        let twin = ToTensor::new(Some(Literal::Int(-1)), self.shape.clone());
        crate::grad::structure::movement_vjp(std::sync::Arc::new(twin), graph, inputs, output_grads)
    }
}

/// `from_tensor(tensor[, lengths])`: `tf.RaggedTensor.from_tensor` with `ragged_rank` (1 by
/// default; dims `1..=ragged_rank` become ragged). Each innermost ragged row keeps its first
/// `lengths[i]` items, or drops its trailing items equal to `padding` (a value of the item shape,
/// `tensor.shape[ragged_rank + 1..]`; another shape is `incompatible_shapes`), or keeps everything;
/// the outer ragged dims stay full (uniform). `lengths` and `padding` together are refused, and so
/// are `lengths` with `ragged_rank` above 1.
#[derive(Debug, Clone, PartialEq)]
pub struct FromTensor {
    padding: Option<Literal>,
    ragged_rank: usize,
}

impl Default for FromTensor {
    fn default() -> Self {
        FromTensor { padding: None, ragged_rank: 1 }
    }
}

impl FromTensor {
    /// The conversion with an optional padding value (a scalar or a nested list of the item
    /// shape), ragged rank 1.
    pub fn new(padding: Option<Literal>) -> Self {
        FromTensor { padding, ragged_rank: 1 }
    }
    /// The same conversion making `ragged_rank` dims ragged (at least 1).
    pub fn with_ragged_rank(self, ragged_rank: usize) -> Self {
        FromTensor { ragged_rank, ..self }
    }
    /// From graph-file attributes: `padding` (optional scalar or list), `ragged_rank` (>= 1, 1
    /// by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["padding", "ragged_rank"])?;
        let ragged_rank = attrs.int_opt("ragged_rank")?.unwrap_or(1);
        let ragged_rank = usize::try_from(ragged_rank).ok().filter(|&k| k >= 1).ok_or_else(|| {
            Error::argument("from_tensor", format!("ragged_rank must be at least 1, got {ragged_rank}"))
        })?;
        Ok(FromTensor { padding: literal_attr(attrs, "padding")?, ragged_rank })
    }
}

impl Op for FromTensor {
    fn name(&self) -> String {
        format!("FromTensor{{padding={}, ragged_rank={}}}", show_option_literal(&self.padding), self.ragged_rank)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_tensor";
        expect_arity(OP, inputs, 1..=2)?;
        let t = &inputs[0];
        let k = self.ragged_rank;
        if k == 0 {
            return Err(Error::argument(OP, "ragged_rank must be at least 1"));
        }
        if t.is_ragged() || t.rank() < k + 1 {
            return Err(Error::shapes(OP, format!("input 0 must be a dense tensor of rank >= {}, got {t}", k + 1)));
        }
        if let Some(lengths) = inputs.get(1) {
            expect_int_vector(OP, 1, lengths)?;
            if self.padding.is_some() {
                return Err(Error::argument(OP, "give row lengths or padding, not both"));
            }
            if k > 1 {
                return Err(Error::argument(OP, "row lengths are only taken with ragged_rank 1"));
            }
            if let (Dim::Known(n), Dim::Known(m)) = (t.dims()[0], lengths.dims()[0]) {
                if n != m {
                    return Err(Error::shapes(OP, format!("input 1 has {m} row lengths for a tensor of {n} rows")));
                }
            }
        }
        if let Some(lit) = &self.padding {
            let padding = literal_tensor(OP, "padding", lit, t.dtype())?;
            let item = &t.dims()[k + 1..];
            let fits = padding.rank() == item.len()
                && padding.shape().iter().zip(item).all(|(&p, d)| d.size().is_none_or(|n| n == p));
            if !fits {
                return Err(Error::shapes(
                    OP,
                    format!("padding of shape {:?} does not have the item shape {item:?}", padding.shape()),
                ));
            }
        }
        let mut dims = vec![t.dims()[0]];
        dims.extend(std::iter::repeat_n(Dim::Ragged, k));
        dims.extend_from_slice(&t.dims()[k + 1..]);
        Ok(vec![TensorType::new(t.dtype(), k, dims)?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_tensor";
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let (tensor, rest) = inputs.split_first().ok_or_else(|| Error::argument(OP, "takes 1 or 2 inputs, got 0"))?;
        let tensor = dense_input(OP, 0, "tensor", tensor)?;
        let lengths = match rest {
            [] => None,
            [lengths] => Some(int_vector_input(OP, 1, "row lengths", lengths)?),
            _ => return Err(Error::argument(OP, format!("takes 1 or 2 inputs, got {}", inputs.len()))),
        };
        let padding = match &self.padding {
            Some(lit) => Some(literal_tensor(OP, "padding", lit, tensor.dtype())?),
            None => None,
        };
        // The outer ragged dims are full: fold them into the rows of the innermost one, convert
        // those, then put the outer dims back as uniform partitions.
        let k = self.ragged_rank;
        let shape = tensor.shape();
        let outer = &shape[..k];
        let rows = DenseTensor::checked_len(OP, outer)?;
        let mut folded = vec![rows];
        folded.extend_from_slice(&shape[k..]);
        let inner = RaggedTensor::from_tensor(&tensor.reshape(folded)?, lengths.as_deref(), padding.as_ref())?;
        let mut partitions = Vec::with_capacity(k);
        let mut nrows = shape[0];
        for &len in &outer[1..] {
            partitions.push(RowPartition::from_uniform_row_length(len, nrows)?);
            nrows *= len;
        }
        one(inner.with_outer_partitions(&partitions)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        _outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        if self.padding.is_some() {
            // The rows' lengths depend on the values (trailing padding is cut), so positions
            // cannot stand in for them.
            return Err(Error::argument("from_tensor", "has no gradient with `padding`; give row lengths instead"));
        }
        crate::grad::structure::same_movement_vjp(self, graph, inputs, output_grads)
    }
}

/// `to_sparse(x)`: `tf.RaggedTensor.to_sparse`, three outputs: `indices` (int64 `[n, rank]`),
/// `values` (`[n]`) and `dense_shape` (int64 `[rank]`, the bounding shape).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToSparse;

impl ToSparse {
    /// The op.
    pub fn new() -> Self {
        ToSparse
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(ToSparse)
    }
}

impl Op for ToSparse {
    fn name(&self) -> String {
        "ToSparse".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("to_sparse", inputs, 1..=1)?;
        let x = &inputs[0];
        let rank = x.rank();
        Ok(vec![
            TensorType::dense(DType::I64, &[None, Some(rank)]),
            TensorType::dense(x.dtype(), &[None]),
            TensorType::dense(DType::I64, &[Some(rank)]),
        ])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("to_sparse", inputs)?;
        let (indices, values, dense_shape) = x.to_sparse()?;
        Ok(vec![indices.into(), values.into(), dense_shape.into()])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `from_sparse(indices, values, dense_shape)`: `tf.RaggedTensor.from_sparse` for a rank-2 sparse
/// tensor whose indices are in row-major order, each row's columns being `0, 1, 2, ...`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FromSparse;

impl FromSparse {
    /// The op.
    pub fn new() -> Self {
        FromSparse
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(FromSparse)
    }
}

impl Op for FromSparse {
    fn name(&self) -> String {
        "FromSparse".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_sparse";
        expect_arity(OP, inputs, 3..=3)?;
        let (indices, values, dense_shape) = (&inputs[0], &inputs[1], &inputs[2]);
        expect_integer(OP, 0, indices)?;
        expect_dense_rank(OP, 0, indices, 2)?;
        expect_dense_rank(OP, 1, values, 1)?;
        expect_int_vector(OP, 2, dense_shape)?;
        if matches!(indices.dims()[1], Dim::Known(k) if k != 2)
            || matches!(dense_shape.dims()[0], Dim::Known(k) if k != 2)
        {
            return Err(Error::shapes(
                OP,
                format!("only rank-2 sparse tensors convert: indices {indices}, dense_shape {dense_shape}"),
            ));
        }
        if merge_dim(indices.dims()[0], values.dims()[0]).is_none() {
            return Err(Error::shapes(OP, format!("input 0 (indices) is {indices} but input 1 (values) is {values}")));
        }
        Ok(vec![TensorType::new(values.dtype(), 1, vec![Dim::Unknown, Dim::Ragged])?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_sparse";
        let [indices, values, dense_shape] = fixed_inputs(OP, inputs)?;
        let indices = dense_input(OP, 0, "indices", indices)?;
        let values = dense_input(OP, 1, "values", values)?;
        let dense_shape = dense_input(OP, 2, "dense_shape", dense_shape)?;
        one(RaggedTensor::from_sparse(indices, values, dense_shape)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition_ops::testing::*;
    use ragtime_core::{ragged, ErrorKind};
    use ragtime_graph::Attr;

    fn axis(a: i64) -> [(&'static str, Attr); 1] {
        [("axis", Attr::Int(a))]
    }

    fn int64(rt: RaggedTensor) -> RaggedTensor {
        rt.cast(DType::I64).unwrap()
    }

    fn dense<T: Element>(shape: &[usize], data: Vec<T>) -> RaggedTensor {
        DenseTensor::from_vec(shape.to_vec(), data).unwrap().into()
    }

    fn string_scalar(s: &str) -> RaggedTensor {
        RaggedTensor::from_literal(&Literal::from(s)).unwrap()
    }

    #[track_caller]
    fn assert_kind(result: Result<impl std::fmt::Debug>, kind: ErrorKind) {
        match result {
            Err(e) => assert_eq!(e.kind(), kind, "wrong error: {e}"),
            Ok(v) => panic!("expected a {kind} error, got {v:?}"),
        }
    }

    fn words_x() -> RaggedTensor {
        ragged![["John"], ["a", "big", "dog"], ["my", "cat"]].unwrap()
    }

    fn words_z() -> RaggedTensor {
        ragged![["fell", "asleep"], ["barked"], ["is", "fuzzy"]].unwrap()
    }

    #[test]
    fn concat_axis1_strings() {
        // structure/concat_axis1_strings
        let y = run1("concat", &axis(1), &[words_x(), words_z()]).unwrap();
        let want = ragged![["John", "fell", "asleep"], ["a", "big", "dog", "barked"], ["my", "cat", "is", "fuzzy"]];
        assert_value(&y, &want.unwrap());
        let y = run1("concat", &axis(-1), &[words_x(), words_z()]).unwrap();
        assert_eq!(y.nrows(), 3, "axis -1 of a rank-2 tensor is axis 1");
    }

    #[test]
    fn string_rows_concatenated_in_parallel_match_a_gather_of_runs() {
        // 40,000 rows (enough to split across threads) of 0-4 strings of 0-20 bytes, with
        // one-string markers (a dense [n, 1] column) on both sides, as padded tokens are built.
        let words = ["", "a", "bb", "ccc", "dddddddddddddddddddd", "é"];
        let mut rows = Vec::new();
        let mut seed = 11u64;
        for _ in 0..40_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (seed >> 40) % 5;
            rows.push((0..len).map(|k| words[((seed >> (k * 4 + 8)) % 6) as usize]).collect::<Vec<_>>());
        }
        let tokens =
            RaggedTensor::from_literal_typed(&Literal::from(rows), Some(DType::String), Some(1), None).unwrap();
        let n = tokens.nrows();
        let marker = |m: &str| {
            let one = DenseTensor::String(StringTensor::from_strings(&[m], vec![]).unwrap());
            RaggedTensor::dense(DenseTensor::full(vec![n, 1], &one).unwrap())
        };
        let inputs = [marker("<s>"), tokens.clone(), marker(""), tokens];
        let _threads = crate::parallel::enter_threads(2);
        let got = run1("concat", &axis(1), &inputs).unwrap();
        // The general path: one run per row and operand, gathered.
        let items: Vec<DenseTensor> = inputs
            .iter()
            .map(|t| if t.is_dense() { t.flat_values().reshape(vec![n]).unwrap() } else { t.flat_values().clone() })
            .collect();
        let splits: Vec<Vec<i64>> = inputs
            .iter()
            .map(|t| if t.is_dense() { (0..=n as i64).collect() } else { t.partitions()[0].row_splits().to_vec() })
            .collect();
        let sources: Vec<&DenseTensor> = items.iter().collect();
        let runs =
            (0..n).flat_map(|r| splits.iter().enumerate().map(move |(i, s)| (i, s[r] as usize..s[r + 1] as usize)));
        let want = DenseTensor::gather_row_runs("concat", &sources, runs).unwrap();
        let (got_col, want_col) = (got.flat_values().as_strings().unwrap(), want.as_strings().unwrap());
        assert_eq!(got_col.offsets(), want_col.offsets(), "string lengths");
        assert_eq!(got_col.bytes(), want_col.bytes(), "string bytes");
        let lengths: Vec<i64> = (0..n).map(|r| splits.iter().map(|s| s[r + 1] - s[r]).sum()).collect();
        assert_eq!(got.partitions()[0].row_lengths(), lengths, "row lengths");
    }

    #[test]
    fn stack_axis0_and_axis1_strings() {
        // structure/stack_axis0 and structure/stack_axis1
        let y = run1("stack", &axis(0), &[words_x(), words_z()]).unwrap();
        let want =
            ragged![[["John"], ["a", "big", "dog"], ["my", "cat"]], [["fell", "asleep"], ["barked"], ["is", "fuzzy"]]];
        assert_value(&y, &want.unwrap());
        let y = run1("stack", &axis(1), &[words_x(), words_z()]).unwrap();
        let want = ragged![
            [["John"], ["fell", "asleep"]],
            [["a", "big", "dog"], ["barked"]],
            [["my", "cat"], ["is", "fuzzy"]]
        ];
        assert_value(&y, &want.unwrap());
    }

    #[test]
    fn concat_axis0_appends_rows() {
        // seed_walkthrough/concat_axis0
        let digits = ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap();
        let y = run1("concat", &axis(0), &[digits, ragged![[5, 3]].unwrap()]).unwrap();
        assert_value(&y, &ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], [], [5, 3]].unwrap());
    }

    #[test]
    fn palindromes() {
        // structure/palindrome and structure/palindrome_dense
        let x = ragged![[1, 2], [3], [4, 5, 6]].unwrap();
        let r = run1("reverse", &[("axis", Attr::List(vec![Attr::Int(1)]))], std::slice::from_ref(&x)).unwrap();
        let y = run1("concat", &axis(1), &[x, r]).unwrap();
        assert_value(&y, &ragged![[1, 2, 2, 1], [3, 3], [4, 5, 6, 6, 5, 4]].unwrap());
        let x = dense(&[3, 2], vec![1, 2, 3, 4, 5, 6]);
        let r = run1("reverse", &[("axis", Attr::List(vec![Attr::Int(1)]))], std::slice::from_ref(&x)).unwrap();
        let y = run1("concat", &axis(1), &[x, r]).unwrap();
        assert_value(&y, &dense(&[3, 4], vec![1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 6, 5]));
    }

    #[test]
    fn bigram_markers() {
        // The first steps of strings/seed_bigram_embedding: nrows -> stack -> fill -> concat(axis 1).
        let queries =
            ragged![["Who", "is", "Dan", "Smith"], ["Pause"], ["Will", "it", "rain", "later", "today"]].unwrap();
        let n = run1("nrows", &[], std::slice::from_ref(&queries)).unwrap();
        let dims = run1("stack", &axis(0), &[n, DenseTensor::scalar(1i64).into()]).unwrap();
        assert_value(&dims, &i64s(&[3, 1]));
        let marker = run1("fill", &[], &[dims, string_scalar("#")]).unwrap();
        assert_eq!(marker.flat_values().shape(), &[3, 1]);
        let padded = run1("concat", &axis(1), &[marker.clone(), queries, marker]).unwrap();
        let want = ragged![
            ["#", "Who", "is", "Dan", "Smith", "#"],
            ["#", "Pause", "#"],
            ["#", "Will", "it", "rain", "later", "today", "#"]
        ];
        assert_value(&padded, &want.unwrap());
    }

    #[test]
    fn join_types_are_exact() {
        let scalar = TensorType::scalar(DType::I64);
        let t = build("stack", &axis(0)).infer(&[scalar.clone(), scalar]).unwrap();
        assert_eq!(t[0].to_string(), "int64[2]");
        let marker = TensorType::dense(DType::String, &[None, None]);
        let queries = TensorType::ragged(DType::String, 1);
        let t = build("concat", &axis(1)).infer(&[marker.clone(), queries, marker]).unwrap();
        assert_eq!(t[0].to_string(), "string[?, *]");
        let a = TensorType::dense(DType::F32, &[Some(3), Some(4)]);
        let b = TensorType::dense(DType::F32, &[Some(2), Some(4)]);
        assert_eq!(build("concat", &axis(0)).infer(&[a.clone(), b]).unwrap()[0].to_string(), "float32[5, 4]");
        assert_eq!(
            build("stack", &axis(-1)).infer(&[a.clone(), a.clone()]).unwrap()[0].to_string(),
            "float32[3, 4, 2]"
        );
        let r = TensorType::ragged(DType::F32, 1).with_inner(&[Some(4)]);
        assert_eq!(
            build("concat", &axis(1)).infer(&[r.clone(), r.clone()]).unwrap()[0].to_string(),
            "float32[?, *, 4]"
        );
        let d3 = TensorType::dense(DType::F32, &[Some(2), Some(5), Some(4)]);
        assert_eq!(build("stack", &axis(0)).infer(&[r.clone(), d3]).unwrap()[0].to_string(), "float32[2, *, *, 4]");
        assert_kind(build("stack", &axis(0)).infer(&[r.clone(), a]), ErrorKind::IncompatibleShapes);
        assert_eq!(build("stack", &axis(1)).infer(&[r]).unwrap()[0].to_string(), "float32[?, *, *, 4]");
    }

    #[test]
    fn join_errors() {
        let x = ragged![[1, 2], [3]].unwrap();
        let f = ragged![[1.5], [2.5]].unwrap();
        assert_kind(run("concat", &axis(1), &[x.clone(), f]), ErrorKind::TypeMismatch);
        let three_rows = ragged![[1], [2], [3]].unwrap();
        assert_kind(run("concat", &axis(1), &[x.clone(), three_rows.clone()]), ErrorKind::IncompatibleShapes);
        assert_kind(run("stack", &axis(1), &[x.clone(), three_rows]), ErrorKind::IncompatibleShapes);
        assert_kind(run("concat", &axis(0), &[x.clone(), i32s(&[1])]), ErrorKind::IncompatibleShapes);
        assert_kind(run("concat", &axis(2), &[x.clone(), x.clone()]), ErrorKind::InvalidArgument);
        assert_kind(run("stack", &axis(-4), &[x.clone(), x.clone()]), ErrorKind::InvalidArgument);
        assert_kind(run("concat", &axis(0), &[]), ErrorKind::InvalidArgument);
        let a = TensorType::dense(DType::I32, &[Some(2), Some(1)]);
        let b = TensorType::dense(DType::I32, &[Some(3), Some(1)]);
        assert_kind(build("concat", &axis(1)).infer(&[a.clone(), b.clone()]), ErrorKind::IncompatibleShapes);
        assert_kind(build("stack", &axis(0)).infer(&[a, b]), ErrorKind::IncompatibleShapes);
        assert_kind(Concat::new(0).perform(&[]), ErrorKind::InvalidArgument);
    }

    #[test]
    fn concat_inside_rows() {
        // Axis 2 of a ragged rank 2 tensor joins the innermost rows pairwise.
        let a = ragged![[[1], [2, 3]], [[4]]].unwrap();
        let b = ragged![[[5], []], [[6, 7]]].unwrap();
        let y = run1("concat", &axis(2), &[a.clone(), b.clone()]).unwrap();
        assert_value(&y, &ragged![[[1, 5], [2, 3]], [[4, 6, 7]]].unwrap());
        let y = run1("stack", &axis(2), &[a.clone(), b]).unwrap();
        assert_value(&y, &ragged![[[[1], [5]], [[2, 3], []]], [[[4], [6, 7]]]].unwrap());
        let c = ragged![[[5]], [[6], [7]]].unwrap();
        assert_kind(run("concat", &axis(2), &[a, c]), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn concat_along_a_uniform_inner_axis() {
        let a =
            RaggedTensor::from_row_lengths(DenseTensor::from_vec(vec![3, 2], vec![1, 2, 3, 4, 5, 6]).unwrap(), &[2, 1])
                .unwrap();
        let b =
            RaggedTensor::from_row_lengths(DenseTensor::from_vec(vec![3, 1], vec![7, 8, 9]).unwrap(), &[2, 1]).unwrap();
        let y = run1("concat", &axis(2), &[a.clone(), b]).unwrap();
        let want = RaggedTensor::from_row_lengths(
            DenseTensor::from_vec(vec![3, 3], vec![1, 2, 7, 3, 4, 8, 5, 6, 9]).unwrap(),
            &[2, 1],
        );
        assert_value(&y, &want.unwrap());
        let y = run1("stack", &axis(-1), &[a.clone(), a]).unwrap();
        assert_eq!(TensorType::of(&y).to_string(), "int32[2, *, 2, 2]");
    }

    #[test]
    fn mixed_dense_and_ragged_operands() {
        let r = ragged![[1, 2], [3]].unwrap();
        let d = dense(&[2, 2], vec![4, 5, 6, 7]);
        let y = run1("concat", &axis(0), &[r.clone(), d.clone()]).unwrap();
        assert_value(&y, &ragged![[1, 2], [3], [4, 5], [6, 7]].unwrap());
        let y = run1("concat", &axis(1), &[d.clone(), r.clone()]).unwrap();
        assert_value(&y, &ragged![[4, 5, 1, 2], [6, 7, 3]].unwrap());
        let y = run1("stack", &axis(0), &[r, d]).unwrap();
        assert_value(&y, &ragged![[[1, 2], [3]], [[4, 5], [6, 7]]].unwrap());
    }

    #[test]
    fn joins_of_empty_rows_and_zero_rows() {
        let empty_rows = ragged![[], []].unwrap().cast(DType::I32).unwrap();
        let x = ragged![[1], []].unwrap();
        assert_value(&run1("concat", &axis(1), &[empty_rows.clone(), x.clone()]).unwrap(), &x);
        let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0]).unwrap();
        assert_value(&run1("concat", &axis(0), &[none.clone(), x.clone()]).unwrap(), &x);
        assert_eq!(run1("concat", &axis(1), &[none.clone(), none.clone()]).unwrap().nrows(), 0);
        assert_eq!(run1("stack", &axis(0), &[none.clone(), none]).unwrap().to_string(), "<Ragged int32 [[], []]>");
    }

    #[test]
    fn stack_of_one_operand_expands() {
        let x = ragged![[1, 2], [3]].unwrap();
        assert_value(&run1("stack", &axis(0), std::slice::from_ref(&x)).unwrap(), &ragged![[[1, 2], [3]]].unwrap());
        assert_value(&run1("stack", &axis(1), std::slice::from_ref(&x)).unwrap(), &ragged![[[1, 2]], [[3]]].unwrap());
        let y = run1("stack", &axis(2), std::slice::from_ref(&x)).unwrap();
        assert_eq!(TensorType::of(&y).to_string(), "int32[2, *, 1]");
        assert_value(&run1("concat", &axis(1), std::slice::from_ref(&x)).unwrap(), &x);
    }

    #[test]
    fn expand_dims_inserts_a_dimension_of_one() {
        let x = ragged![[1, 2], [3]].unwrap();
        assert_value(&expand_dims(&x, 0).unwrap(), &ragged![[[1, 2], [3]]].unwrap());
        assert_value(&expand_dims(&x, 1).unwrap(), &ragged![[[1, 2]], [[3]]].unwrap());
        assert_eq!(TensorType::of(&expand_dims(&x, 2).unwrap()).to_string(), "int32[2, *, 1]");
        let s: RaggedTensor = DenseTensor::scalar(5i32).into();
        assert_value(&expand_dims(&s, 0).unwrap(), &i32s(&[5]));
        assert_kind(expand_dims(&x, 3), ErrorKind::InvalidArgument);
        assert_kind(expand_dims(&s, 1), ErrorKind::InvalidArgument);
    }

    #[test]
    fn tile_repeats_rows_and_items() {
        // structure/tile_2_1, structure/tile_2_3, seed_walkthrough/tile_1_2
        let x = ragged![[1, 2], [3], [4, 5, 6]].unwrap();
        let tile = |m: Vec<i64>, x: &RaggedTensor| {
            run1("tile", &[("multiples", Attr::List(m.into_iter().map(Attr::Int).collect()))], std::slice::from_ref(x))
        };
        assert_value(&tile(vec![2, 1], &x).unwrap(), &ragged![[1, 2], [3], [4, 5, 6], [1, 2], [3], [4, 5, 6]].unwrap());
        let want = ragged![
            [1, 2, 1, 2, 1, 2],
            [3, 3, 3],
            [4, 5, 6, 4, 5, 6, 4, 5, 6],
            [1, 2, 1, 2, 1, 2],
            [3, 3, 3],
            [4, 5, 6, 4, 5, 6, 4, 5, 6]
        ];
        assert_value(&tile(vec![2, 3], &x).unwrap(), &want.unwrap());
        let digits = ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap();
        let want = ragged![[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2], [6, 6], []];
        assert_value(&tile(vec![1, 2], &digits).unwrap(), &want.unwrap());
        assert_value(&tile(vec![1, 0], &x).unwrap(), &ragged![[], [], []].unwrap().cast(DType::I32).unwrap());
        assert_eq!(tile(vec![0, 5], &x).unwrap().nrows(), 0);
        let d = dense(&[2, 2], vec![1, 2, 3, 4]);
        assert_value(&tile(vec![1, 2], &d).unwrap(), &dense(&[2, 4], vec![1, 2, 1, 2, 3, 4, 3, 4]));
        assert_value(&tile(vec![2, 1], &d).unwrap(), &dense(&[4, 2], vec![1, 2, 3, 4, 1, 2, 3, 4]));
        let r2 = ragged![[[1, 2], [3]], [[4]]].unwrap();
        let want = ragged![[[1, 2, 1, 2], [3, 3], [1, 2, 1, 2], [3, 3]], [[4, 4], [4, 4]]];
        assert_value(&tile(vec![1, 2, 2], &r2).unwrap(), &want.unwrap());
    }

    #[test]
    fn tile_refuses_bad_and_huge_multiples() {
        let x = ragged![[1, 2], [3]].unwrap();
        let multiples = |m: Vec<i64>| [("multiples", Attr::List(m.into_iter().map(Attr::Int).collect()))];
        assert_kind(run("tile", &multiples(vec![2]), std::slice::from_ref(&x)), ErrorKind::InvalidArgument);
        assert_kind(
            run("tile", &multiples(vec![1 << 40, 1 << 40]), std::slice::from_ref(&x)),
            ErrorKind::InvalidArgument,
        );
        assert_kind(run("tile", &multiples(vec![1, 1 << 62]), std::slice::from_ref(&x)), ErrorKind::InvalidArgument);
        let d = dense(&[2, 2], vec![1, 2, 3, 4]);
        assert_kind(run("tile", &multiples(vec![1 << 33, 1 << 33]), &[d]), ErrorKind::InvalidArgument);
        let e = crate::registry::op_from_name("tile", &attrs("tile", &multiples(vec![1, -1]))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(build("tile", &multiples(vec![2, 1])).name(), "Tile{multiples=[2, 1]}");
    }

    #[test]
    fn tiling_empty_rows_by_a_huge_multiple_is_instant() {
        let multiples = |m: Vec<i64>| [("multiples", Attr::List(m.into_iter().map(Attr::Int).collect()))];
        let started = std::time::Instant::now();
        let ragged_empty = RaggedTensor::from_literal_typed(
            &Literal::List(vec![Literal::List(vec![])]),
            Some(DType::I32),
            Some(1),
            None,
        )
        .unwrap();
        let out = run1("tile", &multiples(vec![1, 1 << 40]), std::slice::from_ref(&ragged_empty)).unwrap();
        assert_value(&out, &ragged_empty);
        let dense_empty = dense(&[1, 0], Vec::<i32>::new());
        let out = run1("tile", &multiples(vec![1, 1 << 40]), std::slice::from_ref(&dense_empty)).unwrap();
        assert_eq!(out.flat_values().shape(), &[1, 0]);
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "took {:?}", started.elapsed());
    }

    #[test]
    fn reverse_any_axes() {
        let axes = |a: Vec<i64>| [("axis", Attr::List(a.into_iter().map(Attr::Int).collect()))];
        let x = ragged![[[1, 2], [3]], [], [[4, 5, 6]]].unwrap();
        assert_value(
            &run1("reverse", &axes(vec![0]), std::slice::from_ref(&x)).unwrap(),
            &ragged![[[4, 5, 6]], [], [[1, 2], [3]]].unwrap(),
        );
        assert_value(
            &run1("reverse", &axes(vec![1]), std::slice::from_ref(&x)).unwrap(),
            &ragged![[[3], [1, 2]], [], [[4, 5, 6]]].unwrap(),
        );
        assert_value(
            &run1("reverse", &axes(vec![-1, 0]), std::slice::from_ref(&x)).unwrap(),
            &ragged![[[6, 5, 4]], [], [[2, 1], [3]]].unwrap(),
        );
        assert_value(
            &run1("reverse", &axes(vec![2, 2]), std::slice::from_ref(&x)).unwrap(),
            &ragged![[[2, 1], [3]], [], [[6, 5, 4]]].unwrap(),
        );
        assert_value(&run1("reverse", &axes(vec![]), std::slice::from_ref(&x)).unwrap(), &x);
        let d = dense(&[2, 3], vec![1, 2, 3, 4, 5, 6]);
        assert_value(
            &run1("reverse", &axes(vec![0, 1]), std::slice::from_ref(&d)).unwrap(),
            &dense(&[2, 3], vec![6, 5, 4, 3, 2, 1]),
        );
        assert_kind(run("reverse", &axes(vec![1, -1]), std::slice::from_ref(&d)), ErrorKind::InvalidArgument);
        assert_kind(run("reverse", &axes(vec![2]), &[d]), ErrorKind::InvalidArgument);
        let s = ragged![["a", "b"], ["c"]].unwrap();
        assert_value(&run1("reverse", &axes(vec![1]), &[s]).unwrap(), &ragged![["b", "a"], ["c"]].unwrap());
    }

    #[test]
    fn fill_builds_dense_tensors() {
        let y = run1("fill", &[], &[i32s(&[2, 3]), DenseTensor::scalar(7i32).into()]).unwrap();
        assert_value(&y, &dense(&[2, 3], vec![7; 6]));
        let y = run1("fill", &[], &[i64s(&[0, 4]), DenseTensor::scalar(1.5f64).into()]).unwrap();
        assert_eq!(y.flat_values().shape(), &[0, 4]);
        assert_kind(run("fill", &[], &[i64s(&[2, -1]), DenseTensor::scalar(7i32).into()]), ErrorKind::InvalidArgument);
        assert_kind(
            run("fill", &[], &[i64s(&[1 << 40, 1 << 40]), DenseTensor::scalar(7i32).into()]),
            ErrorKind::InvalidArgument,
        );
        assert_kind(run("fill", &[], &[i64s(&[2]), i32s(&[1, 2])]), ErrorKind::IncompatibleShapes);
        let floats: RaggedTensor = DenseTensor::vector(vec![2.0f32]).into();
        assert_kind(run("fill", &[], &[floats, DenseTensor::scalar(7i32).into()]), ErrorKind::TypeMismatch);
        let t =
            build("fill", &[]).infer(&[TensorType::dense(DType::I64, &[Some(2)]), TensorType::scalar(DType::String)]);
        assert_eq!(t.unwrap()[0].to_string(), "string[?, ?]");
        let t = build("fill", &[]).infer(&[TensorType::vector(DType::I64), TensorType::scalar(DType::String)]);
        assert_kind(t, ErrorKind::InvalidArgument);
    }

    #[test]
    fn ragged_range_like_tensorflow() {
        // structure/ragged_range and structure/ragged_range_starts_deltas
        let y = run1("ragged.range", &[], &[i64s(&[7, 0, 1, 3])]).unwrap();
        assert_value(&y, &int64(ragged![[0, 1, 2, 3, 4, 5, 6], [], [0], [0, 1, 2]].unwrap()));
        let y = run1("ragged.range", &[], &[i32s(&[0, 5, 8]), i32s(&[3, 3, 3]), i32s(&[1, -1, -2])]).unwrap();
        assert_value(&y, &ragged![[0, 1, 2], [5, 4], [8, 6, 4]].unwrap());
    }

    #[test]
    fn ragged_range_broadcasts_and_promotes() {
        let y = run1("ragged.range", &[], &[DenseTensor::scalar(2i32).into(), i64s(&[4, 1, 5])]).unwrap();
        assert_value(&y, &int64(ragged![[2, 3], [], [2, 3, 4]].unwrap()));
        let y = run1("ragged.range", &[], &[DenseTensor::scalar(3i32).into()]).unwrap();
        assert_value(&y, &ragged![[0, 1, 2]].unwrap());
        let starts: RaggedTensor = DenseTensor::vector(vec![0.0f32, 1.0]).into();
        let y = run1(
            "ragged.range",
            &[],
            &[starts, DenseTensor::scalar(1.0f32).into(), DenseTensor::scalar(0.25f32).into()],
        );
        assert_value(&y.unwrap(), &ragged![[0.0, 0.25, 0.5, 0.75], []].unwrap());
        let y = run1("ragged.range", &[], &[i32s(&[i32::MAX - 1]), i32s(&[i32::MAX])]).unwrap();
        assert_value(&y, &ragged![[i32::MAX - 1]].unwrap());
        let t = build("ragged.range", &[]).infer(&[TensorType::scalar(DType::I32), TensorType::vector(DType::F64)]);
        assert_eq!(t.unwrap()[0].to_string(), "float64[?, *]");
    }

    #[test]
    fn ragged_range_errors() {
        assert_kind(run("ragged.range", &[], &[i32s(&[0]), i32s(&[3]), i32s(&[0])]), ErrorKind::InvalidArgument);
        assert_kind(run("ragged.range", &[], &[i32s(&[0, 1]), i32s(&[3, 4, 5])]), ErrorKind::IncompatibleShapes);
        assert_kind(run("ragged.range", &[], &[dense(&[1, 1], vec![3i32])]), ErrorKind::IncompatibleShapes);
        assert_kind(run("ragged.range", &[], &[DenseTensor::vector(vec![3u8]).into()]), ErrorKind::TypeMismatch);
        assert_kind(
            run("ragged.range", &[], &[i64s(&[i64::MAX]), i64s(&[i64::MIN]), i64s(&[-1])]),
            ErrorKind::InvalidArgument,
        );
        let nan: RaggedTensor = DenseTensor::scalar(f64::NAN).into();
        assert_kind(run("ragged.range", &[], &[nan]), ErrorKind::InvalidArgument);
        assert_kind(run("ragged.range", &[], &[]), ErrorKind::InvalidArgument);
    }

    #[test]
    fn to_tensor_op() {
        // structure/to_tensor_default_shape and structure/to_tensor_plain
        let s = ragged![["Hi"], ["Welcome", "to", "the", "fair"], ["Have", "fun"]].unwrap();
        let shape = Attr::List(vec![Attr::Null, Attr::Int(10)]);
        let y = run1("to_tensor", &[("default_value", Attr::Str(String::new())), ("shape", shape)], &[s]).unwrap();
        assert_eq!(y.flat_values().shape(), &[3, 10]);
        let strings = y.flat_strings().unwrap();
        assert_eq!((strings.get(10), strings.get(13), strings.get(14)), (&b"Welcome"[..], &b"fair"[..], &b""[..]));
        let x = ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap();
        let y = run1("to_tensor", &[], std::slice::from_ref(&x)).unwrap();
        let want = dense(&[5, 4], vec![3, 1, 4, 1, 0, 0, 0, 0, 5, 9, 2, 0, 6, 0, 0, 0, 0, 0, 0, 0]);
        assert_value(&y, &want);
        let op = build(
            "to_tensor",
            &[("default_value", Attr::Int(-1)), ("shape", Attr::List(vec![Attr::Int(2), Attr::Int(-1)]))],
        );
        assert_eq!(op.name(), "ToTensor{default_value=-1, shape=[2, ?]}");
        assert_eq!(op.infer(&[TensorType::of(&x)]).unwrap()[0].to_string(), "int32[2, ?]");
        assert_value(
            &op.perform(std::slice::from_ref(&x)).unwrap()[0],
            &dense(&[2, 4], vec![3, 1, 4, 1, -1, -1, -1, -1]),
        );
        assert_kind(
            run("to_tensor", &[("default_value", Attr::Str("x".into()))], std::slice::from_ref(&x)),
            ErrorKind::TypeMismatch,
        );
        assert_kind(
            run("to_tensor", &[("default_value", Attr::Float(0.5))], std::slice::from_ref(&x)),
            ErrorKind::TypeMismatch,
        );
        assert_kind(
            run("to_tensor", &[("shape", Attr::List(vec![Attr::Int(3)]))], &[x]),
            ErrorKind::IncompatibleShapes,
        );
    }

    #[test]
    fn from_tensor_op() {
        // structure/from_tensor_padding and structure/from_tensor_lengths
        let t = dense(&[3, 4], vec![1, 3, -1, -1, 2, -1, -1, -1, 4, 5, 8, 9]);
        let y = run1("from_tensor", &[("padding", Attr::Int(-1))], &[t]).unwrap();
        assert_value(&y, &ragged![[1, 3], [2], [4, 5, 8, 9]].unwrap());
        let t = dense(&[3, 4], vec![1, 3, 0, 0, 2, 0, 0, 0, 4, 5, 8, 9]);
        let y = run1("from_tensor", &[], &[t.clone(), i64s(&[2, 1, 4])]).unwrap();
        assert_value(&y, &ragged![[1, 3], [2], [4, 5, 8, 9]].unwrap());
        let y = run1("from_tensor", &[], std::slice::from_ref(&t)).unwrap();
        // Without lengths or padding TensorFlow builds the rows with `from_uniform_row_length`.
        assert_eq!(TensorType::of(&y).to_string(), "int32[3, (4)]");
        assert_kind(
            run("from_tensor", &[("padding", Attr::Int(0))], &[t.clone(), i64s(&[1, 1, 1])]),
            ErrorKind::InvalidArgument,
        );
        assert_kind(run("from_tensor", &[], &[t.clone(), i64s(&[1, 1])]), ErrorKind::IncompatibleShapes);
        assert_kind(run("from_tensor", &[("padding", Attr::Str("".into()))], &[t]), ErrorKind::TypeMismatch);
        assert_kind(run("from_tensor", &[], &[i32s(&[1, 2])]), ErrorKind::IncompatibleShapes);
        assert_kind(run("from_tensor", &[], &[ragged![[1], [2]].unwrap()]), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn sparse_round_trip() {
        // structure/to_sparse and structure/from_sparse
        let s = ragged![["Hi"], ["Welcome", "to", "the", "fair"], ["Have", "fun"]].unwrap();
        let out = run("to_sparse", &[], std::slice::from_ref(&s)).unwrap();
        assert_value(&out[0], &dense(&[7, 2], vec![0i64, 0, 1, 0, 1, 1, 1, 2, 1, 3, 2, 0, 2, 1]));
        assert_eq!(out[1].flat_values().shape(), &[7]);
        assert_value(&out[2], &i64s(&[3, 4]));
        let back = run1("from_sparse", &[], &[out[0].clone(), out[1].clone(), i64s(&[3, 4])]).unwrap();
        assert_value(&back, &s);
        let indices = dense(&[3, 2], vec![0i64, 0, 2, 0, 2, 1]);
        let values = RaggedTensor::from_literal(&Literal::from(vec!["a", "b", "c"])).unwrap();
        let y = run1("from_sparse", &[], &[indices.clone(), values.clone(), i64s(&[3, 3])]).unwrap();
        assert_value(&y, &ragged![["a"], [], ["b", "c"]].unwrap());
        assert_kind(run("from_sparse", &[], &[indices, values, i64s(&[3, 3, 3])]), ErrorKind::IncompatibleShapes);
        let t = build("to_sparse", &[]).infer(&[TensorType::ragged(DType::F32, 2)]).unwrap();
        let shown: Vec<String> = t.iter().map(|t| t.to_string()).collect();
        assert_eq!(shown, ["int64[?, 3]", "float32[?]", "int64[3]"]);
    }

    #[test]
    fn empty_tensors_with_huge_dims_are_refused_not_allocated() {
        // 2^40 rows of nothing: no data, but per-row bookkeeping would need terabytes.
        let x: RaggedTensor = DenseTensor::from_vec(vec![1 << 40, 0], Vec::<i32>::new()).unwrap().into();
        let r = ragged![[1]].unwrap();
        assert_kind(
            run("reverse", &[("axis", Attr::List(vec![Attr::Int(0)]))], std::slice::from_ref(&x)),
            ErrorKind::InvalidArgument,
        );
        let multiples = [("multiples", Attr::List(vec![Attr::Int(1), Attr::Int(1)]))];
        assert_kind(run("tile", &multiples, std::slice::from_ref(&x)), ErrorKind::InvalidArgument);
        assert_kind(run("concat", &axis(0), &[x.clone(), r]), ErrorKind::InvalidArgument);
        assert_kind(run("to_tensor", &[], std::slice::from_ref(&x)), ErrorKind::InvalidArgument);
        assert_kind(run("to_sparse", &[], std::slice::from_ref(&x)), ErrorKind::InvalidArgument);
        assert_kind(run("from_tensor", &[], std::slice::from_ref(&x)), ErrorKind::InvalidArgument);
        assert_kind(run("row_lengths", &[], std::slice::from_ref(&x)), ErrorKind::InvalidArgument);
    }

    /// `t` (dense, rank >= 2) as a ragged tensor of ragged rank `ragged_rank` with uniform rows.
    fn as_ragged(t: &RaggedTensor, ragged_rank: usize) -> RaggedTensor {
        raise_ragged_rank("test", t, ragged_rank).unwrap()
    }

    /// Asserts that ragged `got` densifies to dense `want` (padded to `want`'s shape, since a
    /// ragged tensor without rows has no bounding size in its ragged dims).
    #[track_caller]
    fn assert_densifies_to(got: &RaggedTensor, want: &RaggedTensor) {
        let shape: Vec<Option<usize>> = want.flat_values().shape().iter().map(|&d| Some(d)).collect();
        assert_value(&got.to_tensor(None, Some(&shape)).unwrap().into(), want);
    }

    #[test]
    fn ragged_paths_agree_with_dense_paths() {
        let a = dense(&[2, 3, 2], (0..12).collect::<Vec<i32>>());
        let b = dense(&[2, 3, 2], (100..112).collect::<Vec<i32>>());
        for op in ["concat", "stack"] {
            let out_rank = 3 + usize::from(op == "stack");
            for ax in -(out_rank as i64)..out_rank as i64 {
                let want = run1(op, &axis(ax), &[a.clone(), b.clone()]).unwrap();
                for (ra, rb) in [(1, 0), (0, 2), (1, 1), (2, 2), (2, 1)] {
                    let (x, y) = (as_ragged(&a, ra), as_ragged(&b, rb));
                    assert_densifies_to(&run1(op, &axis(ax), &[x, y]).unwrap(), &want);
                }
            }
        }
        for multiples in [[1, 1, 1], [2, 1, 3], [1, 3, 1], [0, 2, 2], [3, 2, 0]] {
            let attr = [("multiples", Attr::List(multiples.iter().map(|&m| Attr::Int(m)).collect()))];
            let want = run1("tile", &attr, std::slice::from_ref(&a)).unwrap();
            for rr in 1..=2 {
                assert_densifies_to(&run1("tile", &attr, &[as_ragged(&a, rr)]).unwrap(), &want);
            }
        }
        for axes in [vec![0], vec![1], vec![2], vec![0, 2], vec![-1, -2, -3]] {
            let attr = [("axis", Attr::List(axes.iter().map(|&m| Attr::Int(m)).collect()))];
            let want = run1("reverse", &attr, std::slice::from_ref(&a)).unwrap();
            for rr in 1..=2 {
                assert_densifies_to(&run1("reverse", &attr, &[as_ragged(&a, rr)]).unwrap(), &want);
            }
        }
    }

    #[test]
    fn scalars_pass_through_tile_and_reverse() {
        let s: RaggedTensor = DenseTensor::scalar(5i32).into();
        assert_value(&run1("tile", &[("multiples", Attr::List(vec![]))], std::slice::from_ref(&s)).unwrap(), &s);
        assert_value(&run1("reverse", &[("axis", Attr::List(vec![]))], std::slice::from_ref(&s)).unwrap(), &s);
    }
}

/// A deterministic sweep over random shapes, ops and attributes: nothing may panic, inferred types
/// must accept computed values, and when both inference and evaluation fail they agree on the kind.
#[cfg(test)]
mod sweep {
    use super::*;
    use crate::partition_ops::testing::*;
    use ragtime_graph::Attr;

    /// A small linear congruential generator (the sweep must be reproducible, without new dependencies).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n.max(1)
        }
        fn int(&mut self, lo: i64, span: u64) -> i64 {
            lo + self.below(span) as i64
        }
        fn vector(&mut self, n: usize, lo: i64, span: u64) -> RaggedTensor {
            DenseTensor::vector((0..n).map(|_| self.int(lo, span)).collect::<Vec<i64>>()).into()
        }
        /// A tensor of `rank` dims, ragged rank 0 to 2, with short (often empty) rows.
        fn tensor(&mut self, rank: usize) -> RaggedTensor {
            let ragged_rank = (self.below(3) as usize).min(rank - 1);
            let mut count = self.below(4) as usize;
            let mut partitions = Vec::new();
            for _ in 0..ragged_rank {
                let lengths: Vec<i64> = (0..count).map(|_| self.int(0, 4)).collect();
                count = lengths.iter().sum::<i64>() as usize;
                partitions.push(RowPartition::from_row_lengths(&lengths).unwrap());
            }
            let mut shape = vec![count];
            shape.extend((ragged_rank + 1..rank).map(|_| self.below(3) as usize));
            let n: usize = shape.iter().product();
            RaggedTensor::new(DenseTensor::from_vec(shape, (0..n as i32).collect()).unwrap(), partitions).unwrap()
        }
    }

    fn check(name: &str, attrs: &[(&str, Attr)], inputs: &[RaggedTensor]) {
        let op = build(name, attrs);
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let shown = || inputs.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        match (op.output_types(&types), op.perform(inputs)) {
            (Ok(types), Ok(values)) => {
                for (t, v) in types.iter().zip(&values) {
                    assert!(t.accepts(&TensorType::of(v)), "{name} {attrs:?} {:?}: inferred {t}, got {v}", shown());
                }
            }
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{name} {attrs:?} {:?}: {a} / {b}", shown()),
            // Data-dependent failures (row lengths, partition values) are only seen by `perform`.
            (Ok(_), Err(_)) => {}
            (Err(e), Ok(_)) => {
                panic!("{name} {attrs:?} {:?}: inference refused ({e}) what evaluation accepts", shown())
            }
        }
    }

    #[test]
    fn structure_ops() {
        let mut rng = Lcg(7);
        for _ in 0..20_000 {
            let rank = 1 + rng.below(4) as usize;
            let a = rng.tensor(rank);
            let b = if rng.below(2) == 0 { rng.tensor(rank) } else { a.clone() };
            let axis = [("axis", Attr::Int(rng.int(-4, 9)))];
            match rng.below(8) {
                0 => check("concat", &axis, &[a, b]),
                1 => check("stack", &axis, &[a, b]),
                2 => check("stack", &axis, &[a]),
                3 => {
                    let multiples = (0..a.rank()).map(|_| Attr::Int(rng.int(0, 3))).collect();
                    check("tile", &[("multiples", Attr::List(multiples))], &[a]);
                }
                4 => {
                    let axes = Attr::List(vec![Attr::Int(rng.int(-4, 9)), Attr::Int(rng.int(0, 3))]);
                    check("reverse", &[("axis", axes)], &[a]);
                }
                5 => check("to_tensor", &[("default_value", Attr::Int(9))], &[a]),
                6 => check("to_sparse", &[], &[a]),
                _ => check("row_lengths", &axis, &[a]),
            }
        }
    }

    #[test]
    fn constructors_with_random_partitions() {
        let mut rng = Lcg(11);
        for _ in 0..20_000 {
            let rank = 1 + rng.below(3) as usize;
            let a = rng.tensor(rank);
            let n = rng.below(5) as usize;
            match rng.below(9) {
                0 => check("from_row_splits", &[], &[a, rng.vector(n, -1, 6)]),
                1 => check("from_row_lengths", &[], &[a, rng.vector(n, -1, 4)]),
                2 => {
                    let nrows = rng.int(0, 5);
                    let attrs = if rng.below(2) == 0 { vec![] } else { vec![("nrows", Attr::Int(nrows))] };
                    check("from_value_rowids", &attrs, &[a, rng.vector(n, -1, 4)]);
                }
                3 => check("from_nested_row_splits", &[], &[a, rng.vector(n, 0, 4), rng.vector(3, 0, 4)]),
                4 => check("from_uniform_row_length", &[("uniform_row_length", Attr::Int(rng.int(0, 3)))], &[a]),
                5 => {
                    let rank = rng.below(3) as usize;
                    check("fill", &[], &[rng.vector(rank, -1, 4), DenseTensor::scalar(1i32).into()]);
                }
                6 => {
                    let operands = (0..1 + rng.below(3))
                        .map(|_| {
                            if rng.below(2) == 0 {
                                DenseTensor::scalar(rng.int(-3, 7)).into()
                            } else {
                                rng.vector(n, -3, 7)
                            }
                        })
                        .collect::<Vec<_>>();
                    check("ragged.range", &[], &operands);
                }
                7 => {
                    let padding = rng.int(0, 3);
                    let attrs = if rng.below(2) == 0 { vec![] } else { vec![("padding", Attr::Int(padding))] };
                    let mut inputs = vec![a.to_tensor(None, None).map(RaggedTensor::from).unwrap_or(a)];
                    if rng.below(2) == 0 {
                        inputs.push(rng.vector(n, -1, 5));
                    }
                    check("from_tensor", &attrs, &inputs);
                }
                _ => {
                    let indices = (0..2 * n).map(|_| rng.int(-1, 4)).collect::<Vec<_>>();
                    let indices = DenseTensor::from_vec(vec![n, 2], indices).unwrap().into();
                    check("from_sparse", &[], &[indices, rng.vector(n, 0, 9), rng.vector(2, 0, 4)]);
                }
            }
        }
    }
}
