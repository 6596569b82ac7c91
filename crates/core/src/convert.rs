//! Conversions between ragged tensors and dense or sparse tensors (`to_tensor`, `from_tensor`,
//! `to_sparse`, `from_sparse`), with TensorFlow's `tf.RaggedTensor` semantics.

use crate::{dispatch_dtype, DType, DenseTensor, Error, ExecContext, RaggedTensor, Result, RowPartition, StringTensor};

impl DenseTensor {
    /// The 0-d zero of `dtype` (`false`, `0`, `0.0` or the empty string): the default padding.
    pub fn zero(dtype: DType) -> Self {
        dispatch_dtype!(dtype,
            T => DenseTensor::scalar(T::default()),
            string => DenseTensor::String(empty_string_scalar()))
    }
}

fn empty_string_scalar() -> StringTensor {
    StringTensor::from_strings(&[""], vec![]).unwrap_or_else(|_| unreachable!("one string fits shape []"))
}

/// Row-major positions of an `out` grid inside a `src` grid of the same rank: `Some(flat index)`
/// where every coordinate is inside `src`, `None` where the output pads.
fn grid_positions(out: &[usize], src: &[usize]) -> Vec<Option<usize>> {
    let mut pos = vec![Some(0usize)];
    for (&o, &s) in out.iter().zip(src) {
        pos = pos.iter().flat_map(|p| (0..o).map(move |j| p.filter(|_| j < s).map(|p| p * s + j))).collect();
    }
    pos
}

/// Row-major flat indices into a tensor of shape `from` broadcast (numpy rules) to shape `to`.
fn broadcast_positions(op: &str, what: &str, from: &[usize], to: &[usize]) -> Result<Vec<usize>> {
    let incompatible = || Error::shapes(op, format!("{what} of shape {from:?} does not broadcast to {to:?}"));
    let lead = to.len().checked_sub(from.len()).ok_or_else(incompatible)?;
    let mut pos = vec![0usize];
    for (k, &t) in to.iter().enumerate() {
        let f = if k < lead { 1 } else { from[k - lead] };
        if f != t && f != 1 {
            return Err(incompatible());
        }
        pos = pos.iter().flat_map(|&p| (0..t).map(move |j| p * f + if f == 1 { 0 } else { j })).collect();
    }
    Ok(pos)
}

impl RaggedTensor {
    /// The dense tensor holding this tensor's values, as TensorFlow's `RaggedTensor.to_tensor`.
    ///
    /// Missing values are `default_value` (zero, `false` or the empty string when `None`), which
    /// must broadcast to the uniform inner shape of the result. `shape`, when given, has one entry
    /// per dimension: a known size truncates or pads that dimension, `None` takes the bounding
    /// shape's size. A dense tensor converts to itself (padded or truncated to `shape`).
    pub fn to_tensor(
        &self,
        default_value: Option<&DenseTensor>,
        shape: Option<&[Option<usize>]>,
    ) -> Result<DenseTensor> {
        self.to_tensor_in(ExecContext::detached(), default_value, shape)
    }

    /// [`RaggedTensor::to_tensor`] for an op of the call `ctx` (its limits and budget).
    pub fn to_tensor_in(
        &self,
        ctx: &ExecContext,
        default_value: Option<&DenseTensor>,
        shape: Option<&[Option<usize>]>,
    ) -> Result<DenseTensor> {
        const OP: &str = "to_tensor";
        let rank = self.rank();
        let bounding = self.bounding_shape();
        let out_shape: Vec<usize> = match shape {
            None => bounding,
            Some(s) if s.len() != rank => {
                return Err(Error::shapes(
                    OP,
                    format!("target shape {s:?} has {} dimensions, the tensor has rank {rank}", s.len()),
                ))
            }
            Some(s) => {
                // The outer and ragged dims may be cut or padded; the uniform inner dims must match
                // (TensorFlow refuses to reshape values).
                let outer_rank = self.ragged_rank() + 1;
                for (d, (target, natural)) in s.iter().zip(&bounding).enumerate().skip(outer_rank) {
                    if let Some(t) = target.filter(|t| t != natural) {
                        return Err(Error::shapes(
                            OP,
                            format!(
                                "target shape {s:?} gives uniform dimension {d} size {t}, the values have {natural}"
                            ),
                        ));
                    }
                }
                s.iter().zip(&bounding).map(|(target, natural)| target.unwrap_or(*natural)).collect()
            }
        };
        let fill = match default_value {
            Some(d) if d.dtype() != self.dtype() => {
                return Err(Error::dtype(OP, format!("default value is {}, the tensor is {}", d.dtype(), self.dtype())))
            }
            Some(d) => d.clone(),
            None => DenseTensor::zero(self.dtype()),
        };
        let total = ctx.checked_len(OP, &out_shape)?;
        if rank == 0 {
            return Ok(self.flat_values().clone());
        }
        let outer_rank = self.ragged_rank() + 1;
        let (outer_shape, out_inner) = out_shape.split_at(outer_rank);
        let values = self.flat_values();
        let value_inner = &values.shape()[1..];

        // Which flat-values row lands at each position of the outer (uniform + ragged) grid.
        let levels = self.levels();
        let mut rows: Vec<Option<usize>> = vec![Some(0)];
        for (level, &width) in levels[..outer_rank].iter().zip(outer_shape) {
            rows = rows
                .iter()
                .flat_map(|r| {
                    let children = r.map_or(0..0, |r| level.children(r));
                    (0..width).map(move |j| (j < children.len()).then(|| children.start + j))
                })
                .collect();
        }

        // Source of every output element: flattened values, then the default broadcast to one item.
        let inner_map = grid_positions(out_inner, value_inner);
        let default_map = broadcast_positions(OP, "default value", fill.shape(), out_inner)?;
        let item_size: usize = value_inner.iter().product();
        let nflat = values.len();
        let source = DenseTensor::concat_rows(&[values.reshape(vec![nflat])?, fill.take_rows_flat(&default_map)?])?;
        let mut index = Vec::with_capacity(total);
        for row in &rows {
            for (e, within) in inner_map.iter().enumerate() {
                index.push(match (row, within) {
                    (Some(r), Some(w)) => r * item_size + w,
                    _ => nflat + e,
                });
            }
        }
        source.take_rows(&index)?.reshape(out_shape)
    }

    /// The sparse form of this tensor, as TensorFlow's `RaggedTensor.to_sparse`: `indices` (int64,
    /// `[n, rank]`, row-major order), `values` (`[n]`) and `dense_shape` (int64, the bounding shape).
    /// Every element of the uniform inner dimensions is an entry of its own.
    pub fn to_sparse(&self) -> Result<(DenseTensor, DenseTensor, DenseTensor)> {
        self.to_sparse_in(ExecContext::detached())
    }

    /// [`RaggedTensor::to_sparse`] for an op of the call `ctx` (its limits and budget).
    pub fn to_sparse_in(&self, ctx: &ExecContext) -> Result<(DenseTensor, DenseTensor, DenseTensor)> {
        const OP: &str = "to_sparse";
        let rank = self.rank();
        let values = self.flat_values();
        let n = values.len();
        ctx.checked_len(OP, &self.bounding_shape())?;
        ctx.checked_len(OP, &[n, rank])?;
        // Walk the levels keeping, for every item, its coordinates so far and its row in the next level.
        let mut coords: Vec<i64> = Vec::new();
        let mut rows: Vec<usize> = vec![0];
        for (depth, level) in self.levels().into_iter().enumerate() {
            let mut next_coords = Vec::with_capacity(n * (depth + 1));
            let mut next_rows = Vec::new();
            for (i, &r) in rows.iter().enumerate() {
                let children = level.children(r);
                for (j, child) in children.clone().enumerate() {
                    next_coords.extend_from_slice(&coords[i * depth..(i + 1) * depth]);
                    next_coords.push(j as i64);
                    next_rows.push(child);
                }
            }
            coords = next_coords;
            rows = next_rows;
        }
        let indices = DenseTensor::from_vec(vec![rows.len(), rank], coords)?;
        let dense_shape = DenseTensor::vector(self.bounding_shape().iter().map(|&d| d as i64).collect());
        Ok((indices, values.reshape(vec![n])?, dense_shape))
    }

    /// A ragged tensor of ragged rank 1 from the rows of a dense `tensor` (rank >= 2), as
    /// TensorFlow's `RaggedTensor.from_tensor`.
    ///
    /// With `lengths` (one per row), row `i` keeps its first `lengths[i]` items (clamped to
    /// `0..=ncols`); with `padding` (of one item's shape), every row drops its trailing
    /// items equal to `padding`; with neither, every row keeps all its items. Giving both is an
    /// `invalid_argument` error.
    pub fn from_tensor(tensor: &DenseTensor, lengths: Option<&[i64]>, padding: Option<&DenseTensor>) -> Result<Self> {
        Self::from_tensor_in(ExecContext::detached(), tensor, lengths, padding)
    }

    /// [`RaggedTensor::from_tensor`] for an op of the call `ctx` (its limits and budget).
    pub fn from_tensor_in(
        ctx: &ExecContext,
        tensor: &DenseTensor,
        lengths: Option<&[i64]>,
        padding: Option<&DenseTensor>,
    ) -> Result<Self> {
        const OP: &str = "from_tensor";
        let shape = tensor.shape();
        if shape.len() < 2 {
            return Err(Error::shapes(OP, format!("input 0 must have rank >= 2, got shape {shape:?}")));
        }
        let (nrows, ncols) = (shape[0], shape[1]);
        ctx.checked_len(OP, &[nrows, ncols])?;
        let mut items_shape = vec![nrows * ncols];
        items_shape.extend_from_slice(&shape[2..]);
        let items = tensor.reshape(items_shape)?;
        let row_lengths: Vec<i64> = match (lengths, padding) {
            (Some(_), Some(_)) => return Err(Error::argument(OP, "give row lengths or padding, not both")),
            (None, None) => {
                let partition = RowPartition::from_uniform_row_length(ncols, nrows)?;
                return RaggedTensor::new(items, vec![partition]);
            }
            (Some(l), None) => {
                if l.len() != nrows {
                    return Err(Error::shapes(OP, format!("{} row lengths for a tensor of {nrows} rows", l.len())));
                }
                l.iter().map(|&len| len.clamp(0, ncols as i64)).collect()
            }
            (None, Some(p)) => padded_row_lengths(tensor, p)?,
        };
        let keep: Vec<usize> = row_lengths
            .iter()
            .enumerate()
            .flat_map(|(i, &len)| (0..len as usize).map(move |j| i * ncols + j))
            .collect();
        Self::from_row_lengths(items.take_rows(&keep)?, &row_lengths)
    }

    /// A ragged tensor of ragged rank 1 from a rank-2 sparse tensor, as TensorFlow's
    /// `RaggedTensor.from_sparse`: `indices` (integer, `[n, 2]`) must be in row-major order with
    /// each row's column indices `0, 1, 2, ...`; `values` is `[n]`; `dense_shape` is `[nrows, ncols]`.
    pub fn from_sparse(indices: &DenseTensor, values: &DenseTensor, dense_shape: &DenseTensor) -> Result<Self> {
        Self::from_sparse_in(ExecContext::detached(), indices, values, dense_shape)
    }

    /// [`RaggedTensor::from_sparse`] for an op of the call `ctx` (its limits and budget).
    pub fn from_sparse_in(
        ctx: &ExecContext,
        indices: &DenseTensor,
        values: &DenseTensor,
        dense_shape: &DenseTensor,
    ) -> Result<Self> {
        const OP: &str = "from_sparse";
        let shape = dense_shape.to_i64_vec(OP, "input 2 (dense_shape)")?;
        if dense_shape.rank() != 1 || shape.len() != 2 {
            return Err(Error::shapes(
                OP,
                format!(
                    "input 2 (dense_shape) must be a vector of length 2 (only rank-2 sparse tensors convert), got shape {:?}",
                    dense_shape.shape()
                ),
            ));
        }
        if let Some(&d) = shape.iter().find(|&&d| d < 0) {
            return Err(Error::argument(OP, format!("input 2 (dense_shape) has a negative dimension {d}")));
        }
        let (nrows, ncols) = (shape[0], shape[1]);
        ctx.checked_len(OP, &[nrows as usize])?;
        let idx = indices.to_i64_vec(OP, "input 0 (indices)")?;
        if indices.rank() != 2 || indices.shape()[1] != 2 {
            return Err(Error::shapes(
                OP,
                format!("input 0 (indices) must have shape [n, 2], got {:?}", indices.shape()),
            ));
        }
        if values.rank() != 1 || values.len() != indices.shape()[0] {
            return Err(Error::shapes(
                OP,
                format!(
                    "input 1 (values) must have shape [{}] to match the indices, got {:?}",
                    indices.shape()[0],
                    values.shape()
                ),
            ));
        }
        let mut rowids = Vec::with_capacity(values.len());
        let mut previous: Option<(i64, i64)> = None;
        for (k, entry) in idx.chunks_exact(2).enumerate() {
            let (row, col) = (entry[0], entry[1]);
            for (axis, (index, size)) in [(row, nrows), (col, ncols)].into_iter().enumerate() {
                if !(0..size).contains(&index) {
                    let context = format!("indices[{k}] = [{row}, {col}]");
                    return Err(Error::out_of_range_at(OP, index, axis, size as usize, context));
                }
            }
            let expected = match previous {
                Some((prev_row, _)) if row < prev_row => {
                    return Err(Error::partition(
                        OP,
                        format!(
                            "indices must be in row-major order: indices[{k}] = [{row}, {col}] follows row {prev_row}"
                        ),
                    ))
                }
                Some((prev_row, prev_col)) if row == prev_row => prev_col + 1,
                _ => 0,
            };
            if col != expected {
                // Not right-ragged: TensorFlow reports the partition it cannot build.
                return Err(Error::partition(
                    OP,
                    format!(
                        "indices[{k}] = [{row}, {col}]: the column indices of a row must be 0, 1, 2, ... in order; expected column {expected}"
                    ),
                ));
            }
            rowids.push(row);
            previous = Some((row, col));
        }
        Self::from_value_rowids(values.clone(), &rowids, Some(nrows as usize))
    }
}

/// The length of every row of `tensor` once trailing items equal to `padding` are dropped.
fn padded_row_lengths(tensor: &DenseTensor, padding: &DenseTensor) -> Result<Vec<i64>> {
    const OP: &str = "from_tensor";
    if padding.dtype() != tensor.dtype() {
        return Err(Error::dtype(OP, format!("padding is {}, the tensor is {}", padding.dtype(), tensor.dtype())));
    }
    let shape = tensor.shape();
    let item_shape = &shape[2..];
    // TensorFlow compares each item with the padding as a whole: the padding has the item's
    // shape (a scalar only for scalar items).
    if padding.shape() != item_shape {
        return Err(Error::shapes(
            OP,
            format!("padding must have the item shape {item_shape:?}, got {:?}", padding.shape()),
        ));
    }
    let scalar = padding.rank() == 0;
    let (nrows, ncols) = (shape[0], shape[1]);
    let item: usize = item_shape.iter().product();
    let pad_index = |e: usize| if scalar { 0 } else { e };
    let is_padding: Vec<bool> = dispatch_dtype!(tensor.dtype(),
    T => {
        let (data, pad) = (tensor.as_slice::<T>().unwrap_or(&[]), padding.as_slice::<T>().unwrap_or(&[]));
        (0..nrows * ncols).map(|it| (0..item).all(|e| data[it * item + e] == pad[pad_index(e)])).collect()
    },
    string => match (tensor.as_strings(), padding.as_strings()) {
        (Some(data), Some(pad)) => {
            (0..nrows * ncols).map(|it| (0..item).all(|e| data.get(it * item + e) == pad.get(pad_index(e)))).collect()
        }
        _ => Vec::new(),
    });
    Ok((0..nrows)
        .map(|i| {
            let row = &is_padding[i * ncols..(i + 1) * ncols];
            row.iter().rposition(|&p| !p).map_or(0, |last| last as i64 + 1)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ragged, ErrorKind, Literal};

    fn lit(v: &str) -> Literal {
        Literal::from(v)
    }

    #[test]
    fn to_tensor_pads_with_zero() {
        // structure/to_tensor_plain
        let rt = ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap();
        let t = rt.to_tensor(None, None).unwrap();
        assert_eq!(t.shape(), &[5, 4]);
        assert_eq!(t.as_slice::<i32>().unwrap(), &[3, 1, 4, 1, 0, 0, 0, 0, 5, 9, 2, 0, 6, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn to_tensor_with_default_and_shape() {
        // structure/to_tensor_default_shape (truncated to 5 columns here)
        let rt = ragged![["Hi"], ["Welcome", "to", "the", "fair"], ["Have", "fun"]].unwrap();
        let default = DenseTensor::String(StringTensor::from_strings(&["-"], vec![]).unwrap());
        let t = rt.to_tensor(Some(&default), Some(&[None, Some(5)])).unwrap();
        assert_eq!(t.shape(), &[3, 5]);
        let got: Vec<&[u8]> = t.as_strings().unwrap().iter().collect();
        let want: Vec<&[u8]> =
            ["Hi", "-", "-", "-", "-", "Welcome", "to", "the", "fair", "-", "Have", "fun", "-", "-", "-"]
                .iter()
                .map(|s| s.as_bytes())
                .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn to_tensor_truncates_rows_and_columns() {
        let rt = ragged![[1, 2, 3], [4], [5, 6]].unwrap();
        let t = rt.to_tensor(None, Some(&[Some(2), Some(2)])).unwrap();
        assert_eq!(t.shape(), &[2, 2]);
        assert_eq!(t.as_slice::<i32>().unwrap(), &[1, 2, 4, 0]);
    }

    #[test]
    fn to_tensor_inner_dims_and_vector_default() {
        let rt =
            RaggedTensor::from_literal_typed(&Literal::from(vec![vec![vec![1, 2]], vec![]]), None, Some(1), Some(&[2]))
                .unwrap();
        let default = DenseTensor::vector(vec![7i32, 8]);
        let t = rt.to_tensor(Some(&default), None).unwrap();
        assert_eq!(t.shape(), &[2, 1, 2]);
        assert_eq!(t.as_slice::<i32>().unwrap(), &[1, 2, 7, 8]);
    }

    #[test]
    fn to_tensor_ragged_rank_two() {
        let rt = ragged![[[1, 2], [3]], [], [[4]]].unwrap();
        let t = rt.to_tensor(None, None).unwrap();
        assert_eq!(t.shape(), &[3, 2, 2]);
        assert_eq!(t.as_slice::<i32>().unwrap(), &[1, 2, 3, 0, 0, 0, 0, 0, 4, 0, 0, 0]);
    }

    #[test]
    fn to_tensor_errors() {
        let rt = ragged![[1], [2, 3]].unwrap();
        let e = rt.to_tensor(Some(&DenseTensor::scalar(1.5f32)), None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TypeMismatch);
        let e = rt.to_tensor(None, Some(&[None])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
        let e = rt.to_tensor(None, Some(&[Some(1 << 20), Some(1 << 20)])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ResourceExhausted, "an oversized target shape is refused, not allocated");
    }

    #[test]
    fn to_sparse_matches_tensorflow() {
        // structure/to_sparse
        let rt = ragged![["Hi"], ["Welcome", "to", "the", "fair"], ["Have", "fun"]].unwrap();
        let (indices, values, shape) = rt.to_sparse().unwrap();
        assert_eq!(indices.shape(), &[7, 2]);
        assert_eq!(indices.as_slice::<i64>().unwrap(), &[0, 0, 1, 0, 1, 1, 1, 2, 1, 3, 2, 0, 2, 1]);
        assert_eq!(values.shape(), &[7]);
        assert_eq!(values.as_strings().unwrap().get(4), b"fair");
        assert_eq!(shape.as_slice::<i64>().unwrap(), &[3, 4]);
    }

    #[test]
    fn to_sparse_of_empty_rows_and_inner_dims() {
        let rt =
            RaggedTensor::from_literal_typed(&Literal::from(vec![vec![], vec![vec![1, 2]]]), None, Some(1), Some(&[2]))
                .unwrap();
        let (indices, values, shape) = rt.to_sparse().unwrap();
        assert_eq!(indices.shape(), &[2, 3]);
        assert_eq!(indices.as_slice::<i64>().unwrap(), &[1, 0, 0, 1, 0, 1]);
        assert_eq!(values.as_slice::<i32>().unwrap(), &[1, 2]);
        assert_eq!(shape.as_slice::<i64>().unwrap(), &[2, 1, 2]);
    }

    #[test]
    fn from_tensor_padding_and_lengths() {
        // structure/from_tensor_padding and structure/from_tensor_lengths
        let t = DenseTensor::from_vec(vec![3, 4], vec![1, 3, -1, -1, 2, -1, -1, -1, 4, 5, 8, 9]).unwrap();
        let rt = RaggedTensor::from_tensor(&t, None, Some(&DenseTensor::scalar(-1i32))).unwrap();
        assert!(rt.equals(&ragged![[1, 3], [2], [4, 5, 8, 9]].unwrap()), "got {rt}");
        let rt = RaggedTensor::from_tensor(&t, Some(&[2, 1, 4]), None).unwrap();
        assert!(rt.equals(&ragged![[1, 3], [2], [4, 5, 8, 9]].unwrap()), "got {rt}");
    }

    #[test]
    fn from_tensor_clamps_lengths_and_keeps_all_without_options() {
        let t = DenseTensor::from_vec(vec![2, 2], vec![1, 2, 3, 4]).unwrap();
        let rt = RaggedTensor::from_tensor(&t, Some(&[-3, 9]), None).unwrap();
        assert!(rt.equals(&ragged![[], [3, 4]].unwrap()), "got {rt}");
        let rt = RaggedTensor::from_tensor(&t, None, None).unwrap();
        assert!(rt.equals(&ragged![[1, 2], [3, 4]].unwrap()), "got {rt}");
    }

    #[test]
    fn from_tensor_padding_only_strips_the_suffix() {
        let t = DenseTensor::from_vec(vec![2, 3], vec![0, 1, 0, 0, 0, 0]).unwrap();
        let rt = RaggedTensor::from_tensor(&t, None, Some(&DenseTensor::scalar(0i32))).unwrap();
        assert!(rt.equals(&ragged![[0, 1], []].unwrap()), "got {rt}");
    }

    #[test]
    fn from_tensor_errors() {
        let t = DenseTensor::vector(vec![1, 2]);
        assert_eq!(RaggedTensor::from_tensor(&t, None, None).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
        let t = DenseTensor::from_vec(vec![2, 2], vec![1, 2, 3, 4]).unwrap();
        let pad = DenseTensor::scalar(0i32);
        assert_eq!(
            RaggedTensor::from_tensor(&t, Some(&[1, 1]), Some(&pad)).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        assert_eq!(RaggedTensor::from_tensor(&t, Some(&[1]), None).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
        let pad = DenseTensor::scalar(0i64);
        assert_eq!(RaggedTensor::from_tensor(&t, None, Some(&pad)).unwrap_err().kind(), ErrorKind::TypeMismatch);
        // Items of shape [2] need a padding of shape [2] (TensorFlow refuses a scalar).
        let cube = DenseTensor::from_vec(vec![1, 2, 2], vec![1, 2, 0, 0]).unwrap();
        let e = RaggedTensor::from_tensor(&cube, None, Some(&DenseTensor::scalar(0i32))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
        let rt = RaggedTensor::from_tensor(&cube, None, Some(&DenseTensor::vector(vec![0i32, 0]))).unwrap();
        assert_eq!(rt.partitions()[0].row_splits(), &[0, 1]);
    }

    #[test]
    fn from_sparse_matches_tensorflow() {
        // structure/from_sparse
        let indices = DenseTensor::from_vec(vec![3, 2], vec![0i64, 0, 2, 0, 2, 1]).unwrap();
        let values = RaggedTensor::from_literal(&Literal::from(vec![lit("a"), lit("b"), lit("c")])).unwrap();
        let shape = DenseTensor::vector(vec![3i64, 3]);
        let rt = RaggedTensor::from_sparse(&indices, values.flat_values(), &shape).unwrap();
        assert!(rt.equals(&ragged![["a"], [], ["b", "c"]].unwrap()), "got {rt}");
    }

    #[test]
    fn from_sparse_errors() {
        let values = DenseTensor::vector(vec![1i32, 2]);
        let shape = DenseTensor::vector(vec![2i64, 2]);
        let check = |idx: Vec<i64>, kind: ErrorKind| {
            let indices = DenseTensor::from_vec(vec![2, 2], idx.clone()).unwrap();
            let e = RaggedTensor::from_sparse(&indices, &values, &shape).unwrap_err();
            assert_eq!(e.kind(), kind, "indices {idx:?}: {e}");
        };
        check(vec![0, 0, 0, 2], ErrorKind::IndexOutOfRange);
        check(vec![0, 0, 2, 0], ErrorKind::IndexOutOfRange);
        // Not right-ragged (a gap, a repeated index): no partition describes it.
        check(vec![0, 1, 1, 0], ErrorKind::InvalidRowPartition);
        check(vec![0, 0, 0, 0], ErrorKind::InvalidRowPartition);
        check(vec![1, 0, 0, 0], ErrorKind::InvalidRowPartition);
        let indices = DenseTensor::from_vec(vec![2, 2], vec![0i64, 0, 0, 1]).unwrap();
        let e = RaggedTensor::from_sparse(&indices, &values, &DenseTensor::vector(vec![2i64, 2, 2])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
        let e = RaggedTensor::from_sparse(&indices, &DenseTensor::vector(vec![1i32]), &shape).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn checked_len_refuses_huge_shapes() {
        let ctx = ExecContext::new(crate::limits::Limits::untrusted());
        assert_eq!(ctx.checked_len("t", &[0, 5]).unwrap(), 0);
        assert_eq!(ctx.checked_len("t", &[0, usize::MAX]).unwrap_err().kind(), ErrorKind::ResourceExhausted);
        assert_eq!(ctx.checked_len("t", &[usize::MAX, 3]).unwrap_err().kind(), ErrorKind::ResourceExhausted);
        assert_eq!(ctx.checked_len("t", &[]).unwrap(), 1);
    }
}
