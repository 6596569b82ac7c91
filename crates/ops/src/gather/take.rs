//! Moving rows by index: [`take_rows`], [`take_spans`], raising the ragged rank, and aligning a
//! prefix of dims between data and indices; the kernels the gather ops, `getitem` and the
//! structure ops share.

use ragtime_core::{DType, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};

pub(crate) const GATHER: &str = "gather";
pub(crate) const BOOLEAN_MASK: &str = "boolean_mask";

/// The dtypes TensorFlow accepts for indices and segment ids.
pub(crate) const INDEX_DTYPES: [DType; 2] = [DType::I32, DType::I64];

/// Gathers whole rows (along the outer dimension) of a dense or ragged tensor, in the order given;
/// rows may repeat. Every partition of the result is rebuilt for the rows taken (a partition with a
/// uniform row length stays uniform) and the flat values are moved once, with
/// [`DenseTensor::take_rows`]. `op` names the caller in errors; a row `>= x.nrows()` is an
/// `index_out_of_range` error.
pub fn take_rows(ctx: &ExecContext, op: &str, x: &RaggedTensor, rows: &[usize]) -> Result<RaggedTensor> {
    let nrows = x.nrows();
    if x.rank() == 0 {
        return Err(Error::shapes(op, "cannot take rows of a scalar"));
    }
    if let Some(&bad) = rows.iter().find(|&&r| r >= nrows) {
        return Err(Error::out_of_range(op, bad as i64, 0, nrows));
    }
    if x.is_dense() {
        return Ok(RaggedTensor::dense(x.flat_values().take_rows_in(ctx, rows)?));
    }
    take_spans(ctx, op, x, rows.iter().map(|&r| r..r + 1).collect())
}

/// [`take_rows`] for runs of consecutive rows: the rows of every span of `spans`, in order
/// (spans may repeat or overlap; an empty span takes nothing). A span past `x.nrows()` is an
/// `index_out_of_range` error. Each level of the result is built with one pass over the rows
/// taken, and the flat values move with one copy per run of consecutive values.
pub fn take_spans(
    ctx: &ExecContext,
    op: &str,
    x: &RaggedTensor,
    spans: Vec<std::ops::Range<usize>>,
) -> Result<RaggedTensor> {
    let nrows = x.nrows();
    if x.rank() == 0 {
        return Err(Error::shapes(op, "cannot take rows of a scalar"));
    }
    if let Some(bad) = spans.iter().find(|s| s.end > nrows && !s.is_empty()) {
        return Err(Error::out_of_range(op, bad.start.max(nrows) as i64, 0, nrows));
    }
    if x.is_dense() {
        return Ok(RaggedTensor::dense(x.flat_values().take_row_runs_in(ctx, &spans)?));
    }
    // The spans of rows taken at the current level, in output order. Level by level, the rows of a
    // span own one contiguous span of the next level, so spans stay few.
    let mut spans = spans;
    let mut partitions = Vec::with_capacity(x.ragged_rank());
    for partition in x.partitions() {
        let splits = partition.row_splits();
        let taken = spans.iter().fold(0usize, |n, s| n.saturating_add(s.len()));
        let mut new_splits = ctx.try_vec(op, taken.saturating_add(1))?;
        new_splits.push(0i64);
        let mut total = 0i64;
        let mut next: Vec<std::ops::Range<usize>> = Vec::with_capacity(spans.len());
        for span in spans.iter().filter(|s| !s.is_empty()) {
            let base = total - splits[span.start];
            new_splits.extend(splits[span.start + 1..=span.end].iter().map(|&s| s + base));
            total = base + splits[span.end];
            let (start, end) = (splits[span.start] as usize, splits[span.end] as usize);
            match next.last_mut() {
                Some(last) if last.end == start => last.end = end,
                _ if start < end => next.push(start..end),
                _ => {}
            }
        }
        let nrows = new_splits.len() - 1;
        partitions.push(match partition.uniform_row_length() {
            Some(len) => RowPartition::from_uniform_row_length(len, nrows)?,
            None => RowPartition::from_row_splits(new_splits)?,
        });
        spans = next;
    }
    RaggedTensor::new(x.flat_values().take_row_runs_in(ctx, &spans)?, partitions)
}

/// Row `row` of `x` (checked by the caller): a tensor of one rank less, as `x[row]`.
pub(crate) fn row_of(ctx: &ExecContext, op: &str, x: &RaggedTensor, row: usize) -> Result<RaggedTensor> {
    if x.is_dense() {
        let t = x.flat_values();
        return Ok(RaggedTensor::dense(t.take_rows_in(ctx, &[row])?.reshape(t.shape()[1..].to_vec())?));
    }
    take_rows(ctx, op, x, &[row])?.values()
}

/// The same tensor with at least `ragged_rank` ragged dimensions: the outermost uniform dimensions of
/// the flat values become partitions with a uniform row length (TensorFlow's `from_tensor(...,
/// ragged_rank=k)`). Needs `x.rank() > ragged_rank`; a tensor already ragged enough is returned as is.
/// Rows of empty items still get one split each, so the rows folded into partitions are refused
/// (`resource_exhausted`) past the call's limits instead of being allocated.
pub fn raise_ragged_rank(ctx: &ExecContext, op: &str, x: &RaggedTensor, ragged_rank: usize) -> Result<RaggedTensor> {
    if x.ragged_rank() >= ragged_rank {
        return Ok(x.clone());
    }
    if x.rank() <= ragged_rank {
        return Err(Error::shapes(
            op,
            format!("a tensor of rank {} cannot have {ragged_rank} ragged dimensions", x.rank()),
        ));
    }
    let shape = x.flat_values().shape();
    let folded = ragged_rank - x.ragged_rank();
    ctx.checked_len(op, &shape[..=folded])?;
    let mut partitions = x.partitions().to_vec();
    let mut nrows = shape[0];
    for &len in &shape[1..=folded] {
        partitions.push(RowPartition::from_uniform_row_length(len, nrows)?);
        nrows *= len;
    }
    let mut flat_shape = vec![nrows];
    flat_shape.extend_from_slice(&shape[folded + 1..]);
    RaggedTensor::new(x.flat_values().reshape(flat_shape)?, partitions)
}

/// Splits the outer dimension of `x` into `outer_shape` (whose product is `x.nrows()`): a dense
/// tensor is reshaped, a ragged one gains uniform partitions (as TensorFlow's ragged gather does).
pub(crate) fn split_outer(x: RaggedTensor, outer_shape: &[usize]) -> Result<RaggedTensor> {
    if outer_shape.len() <= 1 {
        return Ok(x);
    }
    if x.is_dense() {
        let mut shape = outer_shape.to_vec();
        shape.extend_from_slice(&x.flat_values().shape()[1..]);
        return Ok(RaggedTensor::dense(x.flat_values().reshape(shape)?));
    }
    let mut partitions = Vec::with_capacity(outer_shape.len() - 1);
    let mut nrows = outer_shape[0];
    for &len in &outer_shape[1..] {
        partitions.push(RowPartition::from_uniform_row_length(len, nrows)?);
        nrows *= len;
    }
    x.with_outer_partitions(&partitions)
}

/// Where element `flat` of `x`'s flat values is, as written after a name in error messages:
/// `[1, 0, 2]`, or nothing for a scalar.
pub(crate) fn position_of(x: &RaggedTensor, flat: usize) -> String {
    let index = x.element_index(flat);
    if index.is_empty() {
        return String::new();
    }
    format!("{index:?}")
}

/// Fails unless the dims both types know agree on the first `k` dimensions (`what` names `b`).
pub(crate) fn check_prefix_dims(op: &str, data: &TensorType, b: &TensorType, k: usize, what: &str) -> Result<()> {
    for (j, (x, y)) in data.dims().iter().zip(b.dims()).take(k).enumerate() {
        if let (Dim::Known(m), Dim::Known(n)) = (x, y) {
            if m != n {
                return Err(Error::shapes(
                    op,
                    format!("dimension {j} of {what} has size {n} but dimension {j} of input 0 (data) has size {m}"),
                ));
            }
        }
    }
    Ok(())
}

/// `data` split at the prefix shape of a mask or of segment ids.
pub(crate) struct Aligned {
    /// The partitions of data's dims `1..k` (shared with the prefix tensor).
    pub(crate) partitions: Vec<RowPartition>,
    /// The items at dimension `k - 1` of data: one row per element of the prefix tensor.
    pub(crate) items: RaggedTensor,
    /// The prefix tensor's elements, one per item.
    pub(crate) prefix: DenseTensor,
}

/// Checks that `prefix`'s shape (rank k >= 1, dense or ragged) is a prefix of `data`'s, row by row,
/// and splits `data` into the items the prefix's elements stand for.
pub(crate) fn align_prefix(
    ctx: &ExecContext,
    op: &str,
    data: &RaggedTensor,
    prefix: &RaggedTensor,
    what: &str,
) -> Result<Aligned> {
    let k = prefix.rank();
    if k == 0 || k > data.rank() {
        return Err(Error::shapes(
            op,
            format!(
                "the shape of {what} (rank {k}) must be a prefix of the shape of input 0 (data, rank {})",
                data.rank()
            ),
        ));
    }
    let data = raise_ragged_rank(ctx, op, data, k - 1)?;
    let prefix = raise_ragged_rank(ctx, op, prefix, k - 1)?;
    if prefix.nrows() != data.nrows() {
        return Err(Error::shapes(
            op,
            format!("{what} has {} rows but input 0 (data) has {}", prefix.nrows(), data.nrows()),
        ));
    }
    for (j, (a, b)) in data.partitions().iter().zip(prefix.partitions()).take(k - 1).enumerate() {
        if a.same(b) {
            continue;
        }
        let (la, lb) = (a.row_lengths(), b.row_lengths());
        let reason = match la.iter().zip(lb).position(|(x, y)| x != y) {
            Some(row) => format!(
                "dimension {} differs: row {row} has {} items in {what} and {} in input 0 (data)",
                j + 1,
                lb[row],
                la[row]
            ),
            None => format!("dimension {} differs: {} rows in {what}, {} in input 0 (data)", j + 1, lb.len(), la.len()),
        };
        return Err(Error::shapes(op, reason));
    }
    let items = RaggedTensor::new(data.flat_values().clone(), data.partitions()[k - 1..].to_vec())?;
    Ok(Aligned { partitions: data.partitions()[..k - 1].to_vec(), items, prefix: prefix.flat_values().clone() })
}
