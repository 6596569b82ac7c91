//! Moving rows: the shared machinery of concat, stack, tile and reverse (a target layout built
//! from per-dimension maps).

use std::ops::Range;

use ragtime_core::{DenseTensor, Error, ExecContext, Level, RaggedTensor, Result, RowPartition};

pub(crate) fn too_large(ctx: &ExecContext, op: &str) -> Error {
    let limits = ctx.limits();
    limits.exceeded(op, "elements", limits.elements, format!(
        "the result (with its index vectors, {PER_ELEMENT} bytes per element, at most {} bytes per buffer) would not fit",
        limits.buffer_bytes
    ))
}

/// The bytes [`ExecContext::checked_len`] counts per element (the element and its index vectors).
const PER_ELEMENT: usize = ragtime_core::limits::INDEX_BYTES_PER_ELEMENT + ragtime_core::limits::MAX_ELEMENT_BYTES;

/// True when `n` elements fit the limits of [`ExecContext::checked_len`] (elements, and bytes
/// with the index vectors built for them); charges nothing.
pub(crate) fn fits(ctx: &ExecContext, n: usize) -> bool {
    ctx.checked_size("", &[n], PER_ELEMENT).is_ok()
}

// ---------------------------------------------------------------------------------------------
// Moving rows: the shared machinery of concat, stack, tile and reverse.

/// How one output dimension reads the matching input dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DimMap {
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
/// `take_rows`. Every intermediate size is checked against the call's limits before
/// it is allocated.
pub(crate) fn remap(
    ctx: &ExecContext,
    op: &str,
    rt: &RaggedTensor,
    outer: Vec<usize>,
    inner: &[DimMap],
) -> Result<RaggedTensor> {
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
            .filter(|&n| fits(ctx, n))
            .ok_or_else(|| too_large(ctx, op))?;
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
            *dim = dim.checked_mul(map.factor()).filter(|&n| fits(ctx, n)).ok_or_else(|| too_large(ctx, op))?;
        }
        rows = next;
    }

    // `rows` index the input at level `depth`: flat values seen as [items at that level, rest...].
    let walked = depth - ragged_rank;
    ctx.checked_len(op, &[rows.len(), vshape[walked + 1..].iter().product()])?;
    let mut block_shape = vec![vshape[..=walked].iter().product()];
    block_shape.extend_from_slice(&vshape[walked + 1..]);
    let moved = reshaped(values, block_shape)?.take_rows_in(ctx, &rows)?;
    let mut flat_shape = vec![nvals];
    flat_shape.extend(out_inner);
    RaggedTensor::new(reshaped(&moved, flat_shape)?, partitions)
}

/// `t` with `shape` (shared, not copied, when the shape is already right).
pub(crate) fn reshaped(t: &DenseTensor, shape: Vec<usize>) -> Result<DenseTensor> {
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
