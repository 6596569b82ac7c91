//! [`Concat`] and [`Stack`], with TensorFlow's ragged concat/stack rules.

use std::any::Any;

use ragtime_core::{
    DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, StringTensor, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Op};
use ragtime_runtime::parallel;

use crate::gather::take::{raise_ragged_rank, take_rows};
use crate::index::getitem::row_type;
use crate::structure::remap::reshaped;
use crate::util::{normalize_axis, one};

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
pub(crate) fn merge_dim(a: Dim, b: Dim) -> Option<Dim> {
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
fn dense_join(ctx: &ExecContext, op: &str, inputs: &[RaggedTensor], axis: usize, stack: bool) -> Result<DenseTensor> {
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
    ctx.checked_len(op, &out_shape)?;
    let flat: Vec<DenseTensor> = parts.iter().map(|p| reshaped(p, vec![p.len()])).collect::<Result<_>>()?;
    let source = DenseTensor::concat_rows_in(ctx, &flat)?;
    let starts: Vec<usize> = flat.iter().scan(0, |acc, p| Some(std::mem::replace(acc, *acc + p.len()))).collect();
    let mut index = Vec::with_capacity(source.len());
    for o in 0..outer {
        for (&start, &chunk) in starts.iter().zip(&chunks) {
            index.extend(start + o * chunk..start + (o + 1) * chunk);
        }
    }
    source.take_rows_in(ctx, &index)?.reshape(out_shape)
}

/// Axis 0: the rows of every operand one after the other (grouped per operand for `stack`).
fn join_rows(ctx: &ExecContext, op: &str, inputs: &[RaggedTensor], stack: bool) -> Result<RaggedTensor> {
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
    let flat = DenseTensor::concat_rows_in(ctx, &inputs.iter().map(|t| t.flat_values().clone()).collect::<Vec<_>>())?;
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
fn join_columns(ctx: &ExecContext, op: &str, inputs: &[RaggedTensor], stack: bool) -> Result<RaggedTensor> {
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
        if let Some(joined) = concat_flat_rows(ctx, op, inputs)? {
            return Ok(joined);
        }
    }
    let all = join_rows(ctx, op, inputs, false)?;
    let n = inputs.len();
    let interleaved: Vec<usize> = (0..nrows).flat_map(|row| (0..n).map(move |i| i * nrows + row)).collect();
    let rows = take_rows(ctx, op, &all, &interleaved)?;
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
fn concat_flat_rows(ctx: &ExecContext, op: &str, inputs: &[RaggedTensor]) -> Result<Option<RaggedTensor>> {
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
                let mut splits = ctx.try_vec(op, rows + 1)?;
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
    let mut new_splits = ctx.try_vec(op, nrows + 1)?;
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
        Some(columns) => concat_string_rows(ctx, op, &columns, &splits, &new_splits)?,
        None => {
            let sources: Vec<&DenseTensor> = items.iter().collect();
            let runs = (0..nrows)
                .flat_map(|r| splits.iter().enumerate().map(move |(i, s)| (i, s[r] as usize..s[r + 1] as usize)));
            DenseTensor::gather_row_runs(ctx, op, &sources, runs)?
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
    ctx: &ExecContext,
    op: &str,
    columns: &[&StringTensor],
    splits: &[&[i64]],
    new_splits: &[i64],
) -> Result<DenseTensor> {
    let nrows = new_splits.len() - 1;
    let total = new_splits[nrows] as usize;
    let mut row_bytes: Vec<i64> = ctx.try_vec(op, nrows + 1)?;
    row_bytes.push(0);
    let mut bytes = 0i64;
    for r in 0..nrows {
        for (c, s) in columns.iter().zip(splits) {
            let o = c.offsets();
            bytes += o[s[r + 1] as usize] - o[s[r] as usize];
        }
        row_bytes.push(bytes);
    }
    ctx.checked_bytes(op, bytes as usize, "the strings of the result")?;
    let mut offsets: Vec<i64> = ctx.try_vec(op, total + 1)?;
    offsets.resize(total + 1, 0);
    parallel::fill_spans(ctx, &mut offsets[1..], new_splits, |rows, chunk| {
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
    let buf: Vec<u8> = parallel::spans_filled(ctx, op, &row_bytes, |rows, chunk| {
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
fn join(
    ctx: &ExecContext,
    op: &str,
    inputs: &[RaggedTensor],
    axis: usize,
    stack: bool,
    top: bool,
) -> Result<RaggedTensor> {
    let first = inputs.first().ok_or_else(|| Error::argument(op, "takes at least 1 input, got 0"))?;
    if inputs.len() == 1 && !stack {
        return Ok(first.clone());
    }
    if joins_dense(inputs.iter().all(RaggedTensor::is_dense), first.rank(), axis, stack, top) {
        return dense_join(ctx, op, inputs, axis, stack).map(RaggedTensor::from);
    }
    let ragged_rank = inputs.iter().map(RaggedTensor::ragged_rank).max().unwrap_or(0).max(1);
    let raised = inputs.iter().map(|t| raise_ragged_rank(ctx, op, t, ragged_rank)).collect::<Result<Vec<_>>>()?;
    match axis {
        0 => join_rows(ctx, op, &raised, stack),
        1 => join_columns(ctx, op, &raised, stack),
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
            join(ctx, op, &values, axis - 1, stack, false)?.with_outer_partitions(std::slice::from_ref(outer))
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
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let axis = check_join("concat", &types, self.axis, false)?;
        one(join(ctx, "concat", inputs, axis, false, true)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
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
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let axis = check_join("stack", &types, self.axis, true)?;
        one(join(ctx, "stack", inputs, axis, true, true)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

// ---------------------------------------------------------------------------------------------
// tile and reverse.
