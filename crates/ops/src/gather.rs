//! Row selection and row combination along the outer dimension: `gather` / `embedding_lookup`,
//! `boolean_mask`, and the segment reductions (`segment_sum` / `mean` / `max` / `min`,
//! `unsorted_segment_sum` / `max` / `min` / `prod` / `mean` / `sqrt_n`), plus the primitives they share: [`take_rows`] (gathering whole rows of a
//! ragged tensor) and [`raise_ragged_rank`] (turning uniform dimensions into row partitions).

use std::any::Any;

use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, Error, RaggedTensor, Result, RowPartition, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties, OpRef};

use crate::index::row_type;
use crate::structure::MergeDims;
use crate::util::{expect_dense_rank, expect_dtype, one, shared};

const GATHER: &str = "gather";
const BOOLEAN_MASK: &str = "boolean_mask";

/// The dtypes TensorFlow accepts for indices and segment ids.
const INDEX_DTYPES: [DType; 2] = [DType::I32, DType::I64];

/// Gathers whole rows (along the outer dimension) of a dense or ragged tensor, in the order given;
/// rows may repeat. Every partition of the result is rebuilt for the rows taken (a partition with a
/// uniform row length stays uniform) and the flat values are moved once, with
/// [`DenseTensor::take_rows`]. `op` names the caller in errors; a row `>= x.nrows()` is an
/// `index_out_of_range` error.
pub fn take_rows(op: &str, x: &RaggedTensor, rows: &[usize]) -> Result<RaggedTensor> {
    let nrows = x.nrows();
    if x.rank() == 0 {
        return Err(Error::shapes(op, "cannot take rows of a scalar"));
    }
    if let Some(&bad) = rows.iter().find(|&&r| r >= nrows) {
        return Err(Error::out_of_range(op, bad as i64, 0, nrows));
    }
    if x.is_dense() {
        return Ok(RaggedTensor::dense(x.flat_values().take_rows(rows)?));
    }
    take_spans(op, x, rows.iter().map(|&r| r..r + 1).collect())
}

/// [`take_rows`] for runs of consecutive rows: the rows of every span of `spans`, in order
/// (spans may repeat or overlap; an empty span takes nothing). A span past `x.nrows()` is an
/// `index_out_of_range` error. Each level of the result is built with one pass over the rows
/// taken, and the flat values move with one copy per run of consecutive values.
pub fn take_spans(op: &str, x: &RaggedTensor, spans: Vec<std::ops::Range<usize>>) -> Result<RaggedTensor> {
    let nrows = x.nrows();
    if x.rank() == 0 {
        return Err(Error::shapes(op, "cannot take rows of a scalar"));
    }
    if let Some(bad) = spans.iter().find(|s| s.end > nrows && !s.is_empty()) {
        return Err(Error::out_of_range(op, bad.start.max(nrows) as i64, 0, nrows));
    }
    if x.is_dense() {
        return Ok(RaggedTensor::dense(x.flat_values().take_row_runs(&spans)?));
    }
    // The spans of rows taken at the current level, in output order. Level by level, the rows of a
    // span own one contiguous span of the next level, so spans stay few.
    let mut spans = spans;
    let mut partitions = Vec::with_capacity(x.ragged_rank());
    for partition in x.partitions() {
        let splits = partition.row_splits();
        let taken = spans.iter().fold(0usize, |n, s| n.saturating_add(s.len()));
        let mut new_splits = ragtime_core::limits::try_vec(op, taken.saturating_add(1))?;
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
    RaggedTensor::new(x.flat_values().take_row_runs(&spans)?, partitions)
}

/// Row `row` of `x` (checked by the caller): a tensor of one rank less, as `x[row]`.
fn row_of(op: &str, x: &RaggedTensor, row: usize) -> Result<RaggedTensor> {
    if x.is_dense() {
        let t = x.flat_values();
        return Ok(RaggedTensor::dense(t.take_rows(&[row])?.reshape(t.shape()[1..].to_vec())?));
    }
    take_rows(op, x, &[row])?.values()
}

/// The same tensor with at least `ragged_rank` ragged dimensions: the outermost uniform dimensions of
/// the flat values become partitions with a uniform row length (TensorFlow's `from_tensor(...,
/// ragged_rank=k)`). Needs `x.rank() > ragged_rank`; a tensor already ragged enough is returned as is.
/// Rows of empty items still get one split each, so the rows folded into partitions are refused
/// (`invalid_argument`) past [`DenseTensor::MAX_ELEMENTS`] instead of being allocated.
pub fn raise_ragged_rank(op: &str, x: &RaggedTensor, ragged_rank: usize) -> Result<RaggedTensor> {
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
    DenseTensor::checked_len(op, &shape[..=folded])?;
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
fn split_outer(x: RaggedTensor, outer_shape: &[usize]) -> Result<RaggedTensor> {
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
fn position_of(x: &RaggedTensor, flat: usize) -> String {
    let index = x.element_index(flat);
    if index.is_empty() {
        return String::new();
    }
    format!("{index:?}")
}

/// Fails unless the dims both types know agree on the first `k` dimensions (`what` names `b`).
fn check_prefix_dims(op: &str, data: &TensorType, b: &TensorType, k: usize, what: &str) -> Result<()> {
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
struct Aligned {
    /// The partitions of data's dims `1..k` (shared with the prefix tensor).
    partitions: Vec<RowPartition>,
    /// The items at dimension `k - 1` of data: one row per element of the prefix tensor.
    items: RaggedTensor,
    /// The prefix tensor's elements, one per item.
    prefix: DenseTensor,
}

/// Checks that `prefix`'s shape (rank k >= 1, dense or ragged) is a prefix of `data`'s, row by row,
/// and splits `data` into the items the prefix's elements stand for.
fn align_prefix(op: &str, data: &RaggedTensor, prefix: &RaggedTensor, what: &str) -> Result<Aligned> {
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
    let data = raise_ragged_rank(op, data, k - 1)?;
    let prefix = raise_ragged_rank(op, prefix, k - 1)?;
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

impl Op for Gather {
    fn name(&self) -> String {
        "Gather".into()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(GATHER, inputs, 2..=2)?;
        let (params, indices) = (&inputs[0], &inputs[1]);
        expect_dtype(GATHER, 1, indices, &INDEX_DTYPES, "int32 or int64 (indices)")?;
        if params.rank() == 0 {
            return Err(Error::shapes(GATHER, "input 0 (params) must have rank >= 1, got a scalar"));
        }
        if indices.rank() == 0 {
            return Ok(vec![row_type(params)?]);
        }
        let mut dims = indices.dims().to_vec();
        let ragged_rank = if params.ragged_rank() > 0 {
            // Every dim of the indices after the first becomes a partition.
            dims[1..].fill(Dim::Ragged);
            indices.rank() - 1 + params.ragged_rank()
        } else {
            indices.ragged_rank()
        };
        dims.extend_from_slice(&params.dims()[1..]);
        Ok(vec![TensorType::new(params.dtype(), ragged_rank, dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let (params, indices) = (&inputs[0], &inputs[1]);
        let nrows = params.nrows();
        let rows = indices
            .flat_values()
            .to_i64_vec(GATHER, "input 1 (indices)")?
            .into_iter()
            .enumerate()
            .map(|(pos, index)| match usize::try_from(index) {
                Ok(row) if row < nrows => Ok(row),
                _ => Err(Error::out_of_range_at(
                    GATHER,
                    index,
                    0,
                    nrows,
                    format!("indices{} of input 1", position_of(indices, pos)),
                )),
            })
            .collect::<Result<Vec<usize>>>()?;
        if indices.rank() == 0 {
            return one(row_of(GATHER, params, rows[0])?);
        }
        let taken = split_outer(take_rows(GATHER, params, &rows)?, indices.flat_values().shape())?;
        one(taken.with_outer_partitions(indices.partitions())?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn keeps_uniform_rows(&self) -> bool {
        // The rows taken keep params' partitions as they were (`take_rows` rebuilds a uniform
        // partition as uniform), and the indices' own partitions are reused.
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
    fn resolve(&self, params_rank: usize, indices_rank: usize) -> Result<(usize, usize)> {
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

/// The type of `gather(p, i, axis, batch)` (resolved), following the reduction of [`GatherAxis`].
fn gather_axis_type(p: &TensorType, i: &TensorType, axis: usize, batch: usize) -> Result<TensorType> {
    match (batch, axis) {
        (0, 0) => Ok(Gather.infer(&[p.clone(), i.clone()])?.remove(0)),
        (0, _) => gather_axis_type(p, &repeated_type(p.dims()[0], i)?, axis, 1),
        (1, 1) => {
            expect_dtype(GATHER, 1, i, &INDEX_DTYPES, "int32 or int64 (indices)")?;
            Ok(Gather.infer(&[nd_view_type(p, 2)?, i.clone().with_dtype(DType::I64)])?.remove(0))
        }
        (1, _) => {
            let mut dims = vec![i.dims()[0], Dim::Ragged];
            dims.extend_from_slice(&i.dims()[1..]);
            let repeated = TensorType::new(i.dtype(), i.ragged_rank() + 1, dims)?;
            gather_axis_type(p, &repeated, axis, 2)
        }
        _ => {
            let merge = MergeDims::new(0, 1);
            let inner = gather_axis_type(
                &merge.infer(std::slice::from_ref(p))?.remove(0),
                &merge.infer(std::slice::from_ref(i))?.remove(0),
                axis - 1,
                batch - 1,
            )?;
            let mut dims = vec![i.dims()[0], Dim::Ragged];
            dims.extend_from_slice(&inner.dims()[1..]);
            TensorType::new(inner.dtype(), inner.ragged_rank() + 1, dims)
        }
    }
}

/// The type of `i` repeated `n` times as a new outer dim.
fn repeated_type(n: Dim, i: &TensorType) -> Result<TensorType> {
    let mut dims = vec![n];
    dims.extend_from_slice(i.dims());
    if i.ragged_rank() > 0 {
        dims[1] = Dim::Ragged;
        TensorType::new(i.dtype(), i.ragged_rank() + 1, dims)
    } else {
        TensorType::new(i.dtype(), 0, dims)
    }
}

/// For each flat element of `x`, the outer row it belongs to.
fn outer_rows(x: &RaggedTensor) -> Vec<usize> {
    let flat = x.flat_values();
    let item = flat.row_size();
    let mut rows: Vec<usize> = if item == 0 { Vec::new() } else { (0..flat.len()).map(|e| e / item).collect() };
    for p in x.partitions().iter().rev() {
        let ids = p.value_rowids();
        for r in &mut rows {
            *r = ids[*r] as usize;
        }
    }
    rows
}

/// The value of `gather(p, i, axis, batch)` (resolved).
fn gather_axis_value(p: &RaggedTensor, i: &RaggedTensor, axis: usize, batch: usize) -> Result<RaggedTensor> {
    if batch == 0 && axis == 0 {
        return Ok(Gather.perform(&[p.clone(), i.clone()])?.remove(0));
    }
    if batch == 0 {
        let repeated = take_rows(GATHER, &nd_view(i, 0)?, &vec![0; p.nrows()])?;
        return gather_axis_value(p, &repeated, axis, 1);
    }
    if p.nrows() != i.nrows() {
        return Err(Error::shapes(
            GATHER,
            format!("batch dim 0: params has {} rows, indices {}", p.nrows(), i.nrows()),
        ));
    }
    let p_items = p.levels()[1];
    match (batch, axis) {
        (1, 1) => {
            // Each index becomes the global position of its item among params' dim-1 items.
            let local = i.flat_values().to_i64_vec(GATHER, "input 1 (indices)")?;
            let rows = outer_rows(i);
            let mut global = ragtime_core::limits::try_vec::<i64>(GATHER, local.len())?;
            for (e, (&index, &row)) in local.iter().zip(&rows).enumerate() {
                let items = p_items.children(row);
                match usize::try_from(index) {
                    Ok(k) if k < items.len() => global.push((items.start + k) as i64),
                    _ => {
                        return Err(Error::out_of_range_at(
                            GATHER,
                            index,
                            axis,
                            items.len(),
                            format!("indices{} of input 1, in row {row} of params", position_of(i, e)),
                        ))
                    }
                }
            }
            let positions = i.with_flat_values(DenseTensor::from_vec(i.flat_values().shape().to_vec(), global)?)?;
            Ok(Gather.perform(&[nd_view(p, 2)?, positions])?.remove(0))
        }
        (1, _) => {
            // A new batch dim: row b of indices repeated for each of params' items in row b.
            let lengths: Vec<i64> = (0..p.nrows()).map(|b| p_items.children(b).len() as i64).collect();
            let reps: Vec<usize> =
                lengths.iter().enumerate().flat_map(|(b, &n)| std::iter::repeat_n(b, n as usize)).collect();
            let repeated =
                take_rows(GATHER, i, &reps)?.with_outer_partitions(&[RowPartition::from_row_lengths(&lengths)?])?;
            gather_axis_value(p, &repeated, axis, 2)
        }
        _ => {
            let i_items = i.levels()[1];
            if let Some(row) = (0..p.nrows()).find(|&b| p_items.children(b).len() != i_items.children(b).len()) {
                return Err(Error::shapes(
                    GATHER,
                    format!(
                        "batch dim 1: row {row} has {} items in params, {} in indices",
                        p_items.children(row).len(),
                        i_items.children(row).len()
                    ),
                ));
            }
            let outer = match i.partitions().first() {
                Some(partition) => partition.clone(),
                None => RowPartition::from_uniform_row_length(i.flat_values().shape()[1], i.nrows())?,
            };
            let merge = MergeDims::new(0, 1);
            let inner = gather_axis_value(
                &merge.perform(std::slice::from_ref(p))?.remove(0),
                &merge.perform(std::slice::from_ref(i))?.remove(0),
                axis - 1,
                batch - 1,
            )?;
            inner.with_outer_partitions(&[outer])
        }
    }
}

/// The dense shape of `gather` on dense `params` and `indices` (TensorFlow's
/// `indices.shape[:batch] + params.shape[batch:axis] + indices.shape[batch:] + params.shape[axis + 1:]`).
fn dense_gather_shape(p: &[usize], i: &[usize], axis: usize, batch: usize) -> Vec<usize> {
    let mut shape = i[..batch].to_vec();
    shape.extend_from_slice(&p[batch..axis]);
    shape.extend_from_slice(&i[batch..]);
    shape.extend_from_slice(&p[axis + 1..]);
    shape
}

impl Op for GatherAxis {
    fn name(&self) -> String {
        format!("Gather{{axis={}, batch_dims={}}}", self.axis, self.batch_dims)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(GATHER, inputs, 2..=2)?;
        let (p, i) = (&inputs[0], &inputs[1]);
        expect_dtype(GATHER, 1, i, &INDEX_DTYPES, "int32 or int64 (indices)")?;
        let (axis, batch) = self.resolve(p.rank(), i.rank())?;
        let ty = gather_axis_type(p, i, axis, batch)?;
        if p.ragged_rank() == 0 && i.ragged_rank() == 0 {
            let mut dims = i.dims()[..batch].to_vec();
            dims.extend_from_slice(&p.dims()[batch..axis]);
            dims.extend_from_slice(&i.dims()[batch..]);
            dims.extend_from_slice(&p.dims()[axis + 1..]);
            return Ok(vec![TensorType::new(p.dtype(), 0, dims)?]);
        }
        Ok(vec![ty])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let (p, i) = (&inputs[0], &inputs[1]);
        let (axis, batch) = self.resolve(p.rank(), i.rank())?;
        let out = gather_axis_value(p, i, axis, batch)?;
        if p.is_dense() && i.is_dense() {
            // The repeated and merged dims came back as uniform partitions: fold them.
            let shape = dense_gather_shape(p.flat_values().shape(), i.flat_values().shape(), axis, batch);
            return one(RaggedTensor::dense(out.flat_values().reshape(shape)?));
        }
        one(out)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: true, cost: Cost::Cheap }
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

/// `gather_nd(params, indices)` (`tf.gather_nd`, batch_dims 0): each index tuple (the last dim of
/// `indices`, of size `M`) names the sub-tensor `params[i0][i1]...[i(M-1)]`; the result has the
/// shape `indices.shape[:-1] + params.shape[M:]` (ragged indices keep their partitions, as in
/// [`Gather`]). `indices` is dense, or ragged with one uniform innermost dim; `M` must be known
/// and at most `params`' rank. Every index is bounds-checked, into ragged rows too (TensorFlow
/// 2.21 reads past a short row): `index_out_of_range`, naming the index tuple.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GatherNd;

const GATHER_ND: &str = "gather_nd";

impl GatherNd {
    /// `gather_nd(params, indices)`.
    pub fn new() -> Self {
        GatherNd
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(GatherNd)
    }
}

/// The index depth `M` of `gather_nd` indices of type `indices` (their last dim, uniform and
/// known), checked against `params`.
fn index_depth(params: &TensorType, indices: &TensorType) -> Result<usize> {
    let inner = indices.inner_dims();
    let depth = match (indices.ragged_rank(), inner) {
        (0, _) if indices.rank() >= 1 => indices.dims()[indices.rank() - 1],
        (r, [d]) if r > 0 => *d,
        _ => {
            return Err(Error::shapes(
                GATHER_ND,
                format!("input 1 (indices, {indices}) must be dense, or ragged with one uniform innermost dim"),
            ))
        }
    };
    let Dim::Known(m) = depth else {
        return Err(Error::shapes(GATHER_ND, format!("the last dim of input 1 (indices, {indices}) must be known")));
    };
    if m > params.rank() {
        return Err(Error::shapes(
            GATHER_ND,
            format!("index tuples of {m} entries for input 0 (params) of rank {}", params.rank()),
        ));
    }
    Ok(m)
}

/// The type of the sub-tensors `gather_nd` selects with index tuples of `depth` entries, as the
/// rows of one tensor (see [`nd_view`]).
fn nd_view_type(params: &TensorType, depth: usize) -> Result<TensorType> {
    if depth == 0 {
        let mut dims = vec![Dim::Known(1)];
        dims.extend_from_slice(params.dims());
        let rr = if params.ragged_rank() > 0 {
            dims[1] = Dim::Ragged;
            params.ragged_rank() + 1
        } else {
            0
        };
        return TensorType::new(params.dtype(), rr, dims);
    }
    // The elements at dim `depth - 1`, each with the dims after it.
    let mut dims = vec![Dim::Unknown];
    dims.extend_from_slice(&params.dims()[depth..]);
    TensorType::new(params.dtype(), (params.ragged_rank() + 1).saturating_sub(depth), dims)
}

/// `params` seen as rows of the sub-tensors an index tuple of `depth` entries selects: the
/// elements at dim `depth - 1` (all of `params` as one row for depth 0).
fn nd_view(params: &RaggedTensor, depth: usize) -> Result<RaggedTensor> {
    let rr = params.ragged_rank();
    let flat = params.flat_values();
    if depth == 0 {
        if params.is_dense() {
            let mut shape = vec![1];
            shape.extend_from_slice(flat.shape());
            return Ok(RaggedTensor::dense(flat.reshape(shape)?));
        }
        return params.with_outer_partitions(&[RowPartition::from_uniform_row_length(params.nrows(), 1)?]);
    }
    // The elements at dim `depth - 1`: rows of the partitions below it, or items of the flat
    // values with the dims above them folded.
    let dim = depth - 1;
    if dim <= rr {
        return RaggedTensor::new(flat.clone(), params.partitions()[dim..].to_vec());
    }
    let shape = flat.shape();
    let folded = dim - rr;
    let mut view_shape = vec![shape[..=folded].iter().product()];
    view_shape.extend_from_slice(&shape[folded + 1..]);
    Ok(RaggedTensor::dense(flat.reshape(view_shape)?))
}

impl Op for GatherNd {
    fn name(&self) -> String {
        "GatherNd".into()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(GATHER_ND, inputs, 2..=2)?;
        let (params, indices) = (&inputs[0], &inputs[1]);
        expect_dtype(GATHER_ND, 1, indices, &INDEX_DTYPES, "int32 or int64 (indices)")?;
        let depth = index_depth(params, indices)?;
        let mut dims = indices.dims().to_vec();
        dims.pop();
        let batch = TensorType::new(DType::I64, indices.ragged_rank(), dims)?;
        Gather.infer(&[nd_view_type(params, depth)?, batch])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let (params, indices) = (&inputs[0], &inputs[1]);
        let depth = index_depth(&types[0], &types[1])?;
        let tuples = indices.flat_values().to_i64_vec(GATHER_ND, "input 1 (indices)")?;
        // `infer` made sure the indices' flat values end in the tuple dim.
        let batch_shape = {
            let shape = indices.flat_values().shape();
            shape[..shape.len() - 1].to_vec()
        };
        let ntuples: usize = batch_shape.iter().product();
        let levels = params.levels();
        let mut positions = ragtime_core::limits::try_vec::<i64>(GATHER_ND, ntuples)?;
        for t in 0..ntuples {
            let tuple = &tuples[t * depth..(t + 1) * depth];
            // Walk down the dims: `pos` is the element's position among the elements at dim `k`.
            let mut children = 0..params.nrows();
            let mut pos = 0;
            for (k, &index) in tuple.iter().enumerate() {
                let size = children.len();
                pos = match usize::try_from(index) {
                    Ok(i) if i < size => children.start + i,
                    _ => {
                        return Err(Error::out_of_range_at(
                            GATHER_ND,
                            index,
                            k,
                            size,
                            format!("index tuple {tuple:?} of input 1, at indices{}", position_of(indices, t * depth)),
                        ))
                    }
                };
                if k + 1 < depth {
                    children = levels[k + 1].children(pos);
                }
            }
            positions.push(pos as i64);
        }
        let positions =
            RaggedTensor::new(DenseTensor::from_vec(batch_shape, positions)?, indices.partitions().to_vec())?;
        Gather.perform(&[nd_view(params, depth)?, positions])
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: true, cost: Cost::Cheap }
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

/// `boolean_mask(data, mask)` (TensorFlow's `tf.ragged.boolean_mask`): keeps the items of `data`
/// where `mask` is true, without flattening the mask's dimensions.
///
/// `mask` is a bool tensor (dense or ragged) whose shape is a prefix of `data`'s, row by row. With a
/// mask of rank k the result has data's rank and ragged rank `max(data.ragged_rank, k - 1)`: a mask
/// of rank 1 selects rows, a deeper mask makes its last dimension ragged.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BooleanMask;

impl BooleanMask {
    /// `boolean_mask(data, mask)`.
    pub fn new() -> Self {
        BooleanMask
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(BooleanMask)
    }
}

impl Op for BooleanMask {
    fn name(&self) -> String {
        "BooleanMask".into()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(BOOLEAN_MASK, inputs, 2..=2)?;
        let (data, mask) = (&inputs[0], &inputs[1]);
        expect_dtype(BOOLEAN_MASK, 1, mask, &[DType::Bool], "bool (mask)")?;
        let k = mask.rank();
        if k == 0 || k > data.rank() {
            return Err(Error::shapes(
                BOOLEAN_MASK,
                format!("the shape of input 1 (mask, {mask}) must be a prefix of the shape of input 0 (data, {data})"),
            ));
        }
        check_prefix_dims(BOOLEAN_MASK, data, mask, k, "input 1 (mask)")?;
        let ragged_rank = data.ragged_rank().max(k - 1);
        let outer = match (data.dims()[0], mask.dims()[0]) {
            _ if k == 1 => Dim::Unknown,
            (Dim::Known(n), _) | (_, Dim::Known(n)) => Dim::Known(n),
            _ => Dim::Unknown,
        };
        let mut dims = vec![outer];
        dims.extend(std::iter::repeat_n(Dim::Ragged, ragged_rank));
        dims.extend_from_slice(&data.dims()[ragged_rank + 1..]);
        Ok(vec![TensorType::new(data.dtype(), ragged_rank, dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let Aligned { mut partitions, items, prefix } =
            align_prefix(BOOLEAN_MASK, &inputs[0], &inputs[1], "input 1 (mask)")?;
        let flags =
            prefix.as_slice::<bool>().ok_or_else(|| Error::dtype(BOOLEAN_MASK, "input 1 (mask) must be bool"))?;
        let keep: Vec<usize> = flags.iter().enumerate().filter(|(_, &f)| f).map(|(i, _)| i).collect();
        let taken = take_rows(BOOLEAN_MASK, &items, &keep)?;
        // The mask's last dimension: its rows now hold only the items kept.
        if let Some(last) = partitions.pop() {
            let lengths: Vec<i64> =
                (0..last.nrows()).map(|r| flags[last.row_range(r)].iter().filter(|&&f| f).count() as i64).collect();
            partitions.push(RowPartition::from_row_lengths(&lengths)?);
        }
        one(taken.with_outer_partitions(&partitions)?)
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

    fn op_name(self) -> &'static str {
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
    fn fold(self) -> SegmentReduction {
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

/// Checks the data input of a segment reduction: numeric, rank >= 1.
fn check_segment_data(op: &str, data: &TensorType) -> Result<()> {
    if !data.dtype().is_numeric() {
        return Err(Error::dtype(op, format!("input 0 (data) must be numeric, got {}", data.dtype())));
    }
    if data.rank() == 0 {
        return Err(Error::shapes(op, "input 0 (data) must have rank >= 1, got a scalar"));
    }
    Ok(())
}

impl Op for SegmentReduce {
    fn name(&self) -> String {
        self.reduction.op_name().into()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.reduction.tf_name();
        if self.reduction == SegmentReduction::SqrtN {
            return Err(Error::argument(op, "TensorFlow has no sorted segment_sqrt_n: use unsorted_segment_sqrt_n"));
        }
        expect_arity(op, inputs, 2..=2)?;
        let (data, ids) = (&inputs[0], &inputs[1]);
        check_segment_data(op, data)?;
        expect_dtype(op, 1, ids, &INDEX_DTYPES, "int32 or int64 (segment_ids)")?;
        expect_dense_rank(op, 1, ids, 1)?;
        check_prefix_dims(op, data, ids, 1, "input 1 (segment_ids)")?;
        Ok(vec![data.clone().with_dim(0, Dim::Unknown)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.reduction.tf_name();
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let (data, ids) = (&inputs[0], &inputs[1]);
        let ids = ids.flat_values().to_i64_vec(op, "input 1 (segment_ids)")?;
        if ids.len() != data.nrows() {
            return Err(Error::shapes(
                op,
                format!("input 1 (segment_ids) has {} ids for the {} rows of input 0 (data)", ids.len(), data.nrows()),
            ));
        }
        let mut segments = Vec::with_capacity(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            if id < 0 {
                return Err(Error::argument(op, format!("segment_ids[{i}] = {id} is negative")));
            }
            if i > 0 && id < ids[i - 1] {
                return Err(Error::argument(
                    op,
                    format!(
                        "segment_ids must be sorted, but segment_ids[{i}] = {id} follows segment_ids[{}] = {}",
                        i - 1,
                        ids[i - 1]
                    ),
                ));
            }
            segments.push(Some(id as usize));
        }
        let nsegments = ids.last().map_or(0, |&id| id as usize + 1);
        let (partitions, values, _) =
            aggregate(op, data.partitions(), data.flat_values(), &segments, nsegments, self.reduction, false)?;
        one(RaggedTensor::new(values, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::reduce::sorted_segment_vjp(self, graph, inputs, outputs, output_grads)
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
    fn output_dtype(&self, dtype: DType) -> Result<DType> {
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

impl Op for UnsortedSegmentReduce {
    fn name(&self) -> String {
        format!("Unsorted{}{{num_segments={}}}", self.reduction.op_name(), self.num_segments)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.reduction.unsorted_name();
        expect_arity(op, inputs, 2..=2)?;
        let (data, ids) = (&inputs[0], &inputs[1]);
        check_segment_data(op, data)?;
        let dtype = self.output_dtype(data.dtype())?;
        expect_dtype(op, 1, ids, &INDEX_DTYPES, "int32 or int64 (segment_ids)")?;
        let k = ids.rank();
        if k == 0 || k > data.rank() {
            return Err(Error::shapes(
                op,
                format!(
                    "the shape of input 1 (segment_ids, {ids}) must be a prefix of the shape of input 0 (data, {data})"
                ),
            ));
        }
        check_prefix_dims(op, data, ids, k, "input 1 (segment_ids)")?;
        let mut dims = vec![Dim::Known(self.num_segments)];
        dims.extend_from_slice(&data.dims()[k..]);
        let ragged_rank = data.ragged_rank().saturating_sub(k - 1);
        Ok(vec![TensorType::new(dtype, ragged_rank, dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.reduction.unsorted_name();
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let ids = &inputs[1];
        let Aligned { items, prefix, .. } = align_prefix(op, &inputs[0], ids, "input 1 (segment_ids)")?;
        let n = self.num_segments;
        let segments = prefix
            .to_i64_vec(op, "input 1 (segment_ids)")?
            .into_iter()
            .enumerate()
            .map(|(pos, id)| match usize::try_from(id) {
                Err(_) => Ok(None),
                Ok(s) if s < n => Ok(Some(s)),
                Ok(_) => Err(Error::out_of_range_at(
                    op,
                    id,
                    0,
                    n,
                    format!("segment_ids{} of input 1, with num_segments = {n}", position_of(ids, pos)),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let (partitions, values, counts) =
            aggregate(op, items.partitions(), items.flat_values(), &segments, n, self.reduction, true)?;
        let values = match self.reduction {
            SegmentReduction::Mean | SegmentReduction::SqrtN => {
                divide_by_counts(op, values, &counts, self.reduction, ids.ragged_rank() > 0)?
            }
            _ => values,
        };
        one(RaggedTensor::new(values, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: true, cost: Cost::Cheap }
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::reduce::unsorted_segment_vjp(self, graph, inputs, outputs, output_grads)
    }
}

/// Divides each item of the segment sums `values` (shape `[n, inner...]`) by its count
/// (`Mean`) or the count's square root (`SqrtN`), in the true-division float type. A zero
/// count gives NaN when the segment ids were ragged (TensorFlow's ragged path divides 0 by 0),
/// else 0 (its dense kernels divide by `max(count, 1)`).
fn divide_by_counts(
    op: &str,
    values: DenseTensor,
    counts: &[usize],
    reduction: SegmentReduction,
    ragged_ids: bool,
) -> Result<DenseTensor> {
    let dtype = values.dtype().true_division_type().ok_or_else(|| Error::dtype(op, "takes numeric data"))?;
    let shape = values.shape().to_vec();
    let row = values.row_size();
    let sums = values.cast(DType::F64)?;
    let sums = sums.as_slice::<f64>().ok_or_else(|| Error::dtype(op, "the sums are not float64"))?;
    let mut out = ragtime_core::limits::try_vec::<f64>(op, sums.len())?;
    for (i, &sum) in sums.iter().enumerate() {
        let count = counts[i / row.max(1)] as f64;
        out.push(match (count == 0.0, ragged_ids) {
            (true, true) => f64::NAN,
            (true, false) => 0.0,
            _ if reduction == SegmentReduction::SqrtN => sum / count.sqrt(),
            _ => sum / count,
        });
    }
    DenseTensor::from_vec(shape, out)?.cast(dtype)
}

/// A vector of `n` copies of `value`, or an `invalid_argument` error (instead of an abort or a
/// machine-filling allocation) when `n` exceeds [`DenseTensor::MAX_ELEMENTS`] or cannot be
/// allocated: segment ids choose the output size, so a huge id must not take the process down.
fn filled<T: Clone>(op: &str, n: usize, value: T) -> Result<Vec<T>> {
    DenseTensor::checked_len(op, &[n])?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::argument(op, format!("the output needs {n} elements, more than fit in memory")))?;
    v.resize(n, value);
    Ok(v)
}

/// Combines the rows at one level (rows of `partitions[0]`, or of `values` when there is no
/// partition left) into `nsegments` segments; `segments[i]` is row i's segment (`None`: dropped).
/// A ragged level's output row is as long as the longest row of its segment, and its items are the
/// segments of the next level, so the recursion combines items position by position.
/// Also gives how many rows of the innermost level each output row combined. `unsorted`: an
/// empty segment holds the reduction's identity (see [`UnsortedSegmentReduce`]), not 0.
fn aggregate(
    op: &str,
    partitions: &[RowPartition],
    values: &DenseTensor,
    segments: &[Option<usize>],
    nsegments: usize,
    reduction: SegmentReduction,
    unsorted: bool,
) -> Result<(Vec<RowPartition>, DenseTensor, Vec<usize>)> {
    let Some((rows, inner)) = partitions.split_first() else {
        let (combined, counts) = dispatch_dtype!(values.dtype(),
            T => combine_rows::<T>(op, values, segments, nsegments, reduction, unsorted)?,
            string => return Err(Error::dtype(op, "input 0 (data) must be numeric, got string")));
        return Ok((Vec::new(), combined, counts));
    };
    let lengths = rows.row_lengths();
    let mut out_lengths = filled(op, nsegments, 0i64)?;
    for (row, segment) in segments.iter().enumerate() {
        if let Some(s) = *segment {
            out_lengths[s] = out_lengths[s].max(lengths[row]);
        }
    }
    let out_rows = RowPartition::from_row_lengths(&out_lengths)?;
    let out_splits = out_rows.row_splits();
    let mut item_segments = vec![None; rows.nvals()];
    for (row, segment) in segments.iter().enumerate() {
        if let Some(s) = *segment {
            for (position, item) in rows.row_range(row).enumerate() {
                item_segments[item] = Some(out_splits[s] as usize + position);
            }
        }
    }
    let (mut out_partitions, out_values, counts) =
        aggregate(op, inner, values, &item_segments, out_rows.nvals(), reduction, unsorted)?;
    out_partitions.insert(0, out_rows);
    Ok((out_partitions, out_values, counts))
}

/// Element arithmetic of the segment reductions. Implemented for every non-string element type so
/// that `dispatch_dtype!` can instantiate the kernel; `bool` data is refused before it gets here.
trait SegmentElement: Element {
    /// `self + other`, wrapping for integers (as TensorFlow's kernels do).
    fn plus(self, other: Self) -> Self;
    /// `self * other`, wrapping for integers.
    fn times(self, other: Self) -> Self;
    /// `self / count` (integers truncate toward zero).
    fn divided_by(self, count: usize) -> Self;
}

macro_rules! segment_element_int {
    ($($t:ty),*) => {$(
        impl SegmentElement for $t {
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn times(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            fn divided_by(self, count: usize) -> Self {
                (self as i128 / count as i128) as $t
            }
        }
    )*};
}
segment_element_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! segment_element_float {
    ($($t:ty),*) => {$(
        impl SegmentElement for $t {
            fn plus(self, other: Self) -> Self {
                self + other
            }
            fn times(self, other: Self) -> Self {
                self * other
            }
            fn divided_by(self, count: usize) -> Self {
                self / count as $t
            }
        }
    )*};
}
segment_element_float!(f32, f64);

impl SegmentElement for bool {
    fn plus(self, other: Self) -> Self {
        self | other
    }
    fn times(self, other: Self) -> Self {
        self & other
    }
    fn divided_by(self, _count: usize) -> Self {
        self
    }
}

/// True for NaN (the one value not equal to itself).
fn is_nan<T: PartialOrd>(v: T) -> bool {
    v.partial_cmp(&v).is_none()
}

/// The dense kernel: combines the rows of `values` (shape `[n, inner...]`) by segment into
/// `[nsegments, inner...]`, and counts the rows of each segment. Empty segments stay 0, or with
/// `unsorted` hold the identity of max (lowest finite), min (highest finite) and prod (1).
fn combine_rows<T: SegmentElement>(
    op: &str,
    values: &DenseTensor,
    segments: &[Option<usize>],
    nsegments: usize,
    reduction: SegmentReduction,
    unsorted: bool,
) -> Result<(DenseTensor, Vec<usize>)> {
    let src = values.as_slice::<T>().ok_or_else(|| Error::dtype(op, "input 0 (data) has an unexpected dtype"))?;
    let row = values.row_size();
    let size = nsegments
        .checked_mul(row)
        .ok_or_else(|| Error::argument(op, format!("{nsegments} segments of {row} elements overflow")))?;
    let mut out = filled(op, size, T::default())?;
    let mut counts = filled(op, nsegments, 0usize)?;
    for (i, segment) in segments.iter().enumerate() {
        let Some(s) = *segment else { continue };
        let source = &src[i * row..(i + 1) * row];
        let target = &mut out[s * row..(s + 1) * row];
        if counts[s] == 0 {
            target.copy_from_slice(source);
        } else {
            for (acc, &v) in target.iter_mut().zip(source) {
                *acc = match reduction.fold() {
                    SegmentReduction::Sum | SegmentReduction::Mean | SegmentReduction::SqrtN => acc.plus(v),
                    SegmentReduction::Prod => acc.times(v),
                    // NaN wins: once the accumulator is NaN it stays NaN.
                    SegmentReduction::Max | SegmentReduction::Min if is_nan(*acc) => *acc,
                    SegmentReduction::Max if v > *acc || is_nan(v) => v,
                    SegmentReduction::Min if v < *acc || is_nan(v) => v,
                    SegmentReduction::Max | SegmentReduction::Min => *acc,
                };
            }
        }
        counts[s] += 1;
    }
    if reduction == SegmentReduction::Mean && !unsorted {
        for (s, &count) in counts.iter().enumerate().filter(|(_, &c)| c > 1) {
            for v in &mut out[s * row..(s + 1) * row] {
                *v = v.divided_by(count);
            }
        }
    }
    if unsorted {
        let identity = match reduction {
            SegmentReduction::Max => Some(crate::reduce::finite_extreme::<T>(false)),
            SegmentReduction::Min => Some(crate::reduce::finite_extreme::<T>(true)),
            SegmentReduction::Prod => Some(T::from_i64(1)),
            _ => None,
        };
        if let Some(identity) = identity {
            for (s, _) in counts.iter().enumerate().filter(|(_, &c)| c == 0) {
                out[s * row..(s + 1) * row].fill(identity);
            }
        }
    }
    let mut shape = vec![nsegments];
    shape.extend_from_slice(&values.shape()[1..]);
    Ok((DenseTensor::from_vec(shape, out)?, counts))
}

/// `gather` from graph-file attributes: `axis` and `batch_dims` (`batch_dims` 0 by default and
/// `axis` `batch_dims` by default, as `tf.gather`; both 0 give [`Gather`]).
fn gather_op(attrs: &Attrs) -> Result<OpRef> {
    attrs.only(&["axis", "batch_dims"])?;
    let batch_dims = attrs.int_opt("batch_dims")?.unwrap_or(0);
    let axis = attrs.int_opt("axis")?.unwrap_or(batch_dims);
    if axis == 0 && batch_dims == 0 {
        return shared(Ok(Gather));
    }
    shared(Ok(GatherAxis::new(axis, batch_dims)))
}

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    let segment = |reduction| shared(SegmentReduce::from_attrs(reduction, attrs));
    let unsorted = |reduction| shared(UnsortedSegmentReduce::from_attrs(reduction, attrs));
    Some(match name {
        "gather" => gather_op(attrs),
        "embedding_lookup" => shared(Gather::from_attrs(attrs)),
        "boolean_mask" => shared(BooleanMask::from_attrs(attrs)),
        "gather_nd" => shared(GatherNd::from_attrs(attrs)),
        "segment_sum" => segment(SegmentReduction::Sum),
        "segment_mean" => segment(SegmentReduction::Mean),
        "segment_max" => segment(SegmentReduction::Max),
        "segment_min" => segment(SegmentReduction::Min),
        "unsorted_segment_sum" => unsorted(SegmentReduction::Sum),
        "unsorted_segment_max" => unsorted(SegmentReduction::Max),
        "unsorted_segment_min" => unsorted(SegmentReduction::Min),
        "unsorted_segment_prod" => unsorted(SegmentReduction::Prod),
        "unsorted_segment_mean" => unsorted(SegmentReduction::Mean),
        "unsorted_segment_sqrt_n" => unsorted(SegmentReduction::SqrtN),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use ragtime_core::{ragged, ErrorKind, Literal};

    use super::*;

    /// Runs `op` through both `infer` and `perform`, checking that they agree on the type.
    fn run(op: &dyn Op, inputs: &[RaggedTensor]) -> Result<RaggedTensor> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let inferred = op.output_types(&types);
        let performed = op.perform(inputs).map(|mut v| v.remove(0));
        match (&inferred, &performed) {
            (Ok(ty), Ok(value)) => assert!(
                ty[0].accepts(&TensorType::of(value)),
                "{}: infer says {}, perform gave {}",
                op.name(),
                ty[0],
                TensorType::of(value)
            ),
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{}: infer and perform fail differently", op.name()),
            (Err(a), Ok(v)) => panic!("{}: infer fails ({a}) but perform gives {v}", op.name()),
            (Ok(_), Err(_)) => {}
        }
        performed
    }

    fn check(op: &dyn Op, inputs: &[RaggedTensor], want: Result<RaggedTensor>) {
        let want = want.expect("expected value is a valid literal");
        let got = run(op, inputs).unwrap_or_else(|e| panic!("{} failed: {e}", op.name()));
        assert!(got.equals(&want), "{}: got {got}, want {want}", op.name());
    }

    fn check_err(op: &dyn Op, inputs: &[RaggedTensor], kind: ErrorKind) -> Error {
        match run(op, inputs) {
            Ok(v) => panic!("{}: expected a {kind} error, got {v}", op.name()),
            Err(e) => {
                assert_eq!(e.kind(), kind, "{}: {e}", op.name());
                e
            }
        }
    }

    fn dense(lit: impl Into<Literal>) -> Result<RaggedTensor> {
        RaggedTensor::from_literal_typed(&lit.into(), None, Some(0), None)
    }

    fn typed(lit: impl Into<Literal>, dtype: DType, ragged_rank: usize) -> Result<RaggedTensor> {
        RaggedTensor::from_literal_typed(&lit.into(), Some(dtype), Some(ragged_rank), None)
    }

    fn letters() -> RaggedTensor {
        ragged!["a", "b", "c", "d", "e"].unwrap()
    }

    fn ragged_letters() -> RaggedTensor {
        ragged![["a", "b", "c"], ["d"], [], ["e"]].unwrap()
    }

    // ---- gather: the examples of TensorFlow's `tf.gather` documentation for ragged tensors ----

    #[test]
    fn gather_dense_params() {
        check(&Gather::new(), &[letters(), ragged![3, 1, 2, 1, 0].unwrap()], ragged!["d", "b", "c", "b", "a"]);
        check(
            &Gather::new(),
            &[letters(), ragged![[3, 1, 2], [1], [], [0]].unwrap()],
            ragged![["d", "b", "c"], ["b"], [], ["a"]],
        );
    }

    #[test]
    fn gather_ragged_params() {
        check(
            &Gather::new(),
            &[ragged_letters(), ragged![3, 1, 2, 1, 0].unwrap()],
            ragged![["e"], ["d"], [], ["d"], ["a", "b", "c"]],
        );
        check(
            &Gather::new(),
            &[ragged_letters(), ragged![[3, 1, 2], [1], [], [0]].unwrap()],
            ragged![[["e"], ["d"], []], [["d"]], [], [["a", "b", "c"]]],
        );
        check(
            &Gather::new(),
            &[ragged_letters(), RaggedTensor::from_literal(&Literal::from(0)).unwrap()],
            ragged!["a", "b", "c"],
        );
        let empty = typed(Literal::List(vec![]), DType::I64, 0).unwrap();
        let got = run(&Gather::new(), &[ragged_letters(), empty]).unwrap();
        assert_eq!((got.nrows(), got.ragged_rank(), got.dtype()), (0, 1, DType::String));
    }

    #[test]
    fn gather_with_matrix_indices() {
        let params = dense(vec![vec![1, 2], vec![3, 4]]).unwrap();
        let indices = typed(vec![vec![1, 0], vec![1, 1]], DType::I64, 0).unwrap();
        check(
            &Gather::new(),
            &[params, indices.clone()],
            dense(vec![vec![vec![3, 4], vec![1, 2]], vec![vec![3, 4], vec![3, 4]]]),
        );
        // Over ragged params, the indices' inner dimension becomes a (uniform) partition.
        let got = run(&Gather::new(), &[ragged![[1], [2, 3]].unwrap(), indices]).unwrap();
        assert_eq!(got.ragged_rank(), 2);
        assert_eq!(got.to_literal(), Literal::from(vec![vec![vec![2, 3], vec![1]], vec![vec![2, 3], vec![2, 3]]]));
    }

    #[test]
    fn gather_rows_with_inner_dims() {
        let table = dense(vec![vec![0.5f32, 1.5], vec![2.5, 3.5], vec![4.5, 5.5]]).unwrap();
        let got = run(&Gather::new(), &[table, ragged![[2, 0], [], [1]].unwrap()]).unwrap();
        assert_eq!(got.ragged_rank(), 1);
        assert_eq!(
            got.to_literal(),
            Literal::from(vec![vec![vec![4.5f32, 5.5], vec![0.5, 1.5]], vec![], vec![vec![2.5, 3.5]]])
        );
    }

    #[test]
    fn gather_refuses_bad_indices() {
        let err = check_err(&Gather::new(), &[letters(), ragged![[0], [4, 5]].unwrap()], ErrorKind::IndexOutOfRange);
        assert!(err.to_string().contains("indices[1, 1]"), "{err}");
        check_err(&Gather::new(), &[letters(), ragged![0, -1].unwrap()], ErrorKind::IndexOutOfRange);
        check_err(&Gather::new(), &[ragged_letters(), ragged![4].unwrap()], ErrorKind::IndexOutOfRange);
        check_err(&Gather::new(), &[letters(), ragged![0.0, 1.0].unwrap()], ErrorKind::TypeMismatch);
        check_err(&Gather::new(), &[letters(), typed(vec![0], DType::U8, 0).unwrap()], ErrorKind::TypeMismatch);
        let scalar = RaggedTensor::from_literal(&Literal::from(1)).unwrap();
        check_err(&Gather::new(), &[scalar.clone(), scalar], ErrorKind::IncompatibleShapes);
        assert_eq!(Gather::new().infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn take_rows_keeps_uniform_partitions() {
        let x = RaggedTensor::from_uniform_row_length(DenseTensor::vector(vec![1i32, 2, 3, 4, 5, 6]), 2).unwrap();
        let got = take_rows("test", &x, &[2, 0, 2]).unwrap();
        assert_eq!(got.partitions()[0].uniform_row_length(), Some(2));
        assert_eq!(got.to_literal(), Literal::from(vec![vec![5, 6], vec![1, 2], vec![5, 6]]));
        let rt3 = ragged![[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]].unwrap();
        let got = take_rows("test", &rt3, &[3, 1, 3]).unwrap();
        let want = ragged![[[8, 9], [10]], [[5], [], [6]], [[8, 9], [10]]].unwrap();
        assert!(got.equals(&want), "got {got}");
    }

    #[test]
    fn take_rows_gathers_nested_rows() {
        let x = ragged![[[1, 2], [3]], [], [[4]]].unwrap();
        let got = take_rows("test", &x, &[2, 0, 2]).unwrap();
        assert!(got.equals(&ragged![[[4]], [[1, 2], [3]], [[4]]].unwrap()), "got {got}");
        assert_eq!(take_rows("test", &x, &[]).unwrap().nrows(), 0);
        assert_eq!(take_rows("test", &x, &[3]).unwrap_err().kind(), ErrorKind::IndexOutOfRange);
        let scalar = RaggedTensor::dense(DenseTensor::scalar(1i32));
        assert_eq!(take_rows("test", &scalar, &[]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn raise_ragged_rank_folds_uniform_dims() {
        let x = dense(vec![vec![vec![1, 2], vec![3, 4], vec![5, 6]]]).unwrap();
        let raised = raise_ragged_rank("test", &x, 2).unwrap();
        assert_eq!(raised.ragged_rank(), 2);
        assert_eq!(raised.to_literal(), x.to_literal());
        assert_eq!(raise_ragged_rank("test", &x, 3).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    }

    // ---- boolean_mask: the examples of `tf.ragged.boolean_mask`'s documentation ----

    #[test]
    fn boolean_mask_examples() {
        let (t, f) = (true, false);
        check(
            &BooleanMask::new(),
            &[
                dense(vec![vec![1, 2, 3], vec![4, 5, 6], vec![7, 8, 9]]).unwrap(),
                dense(vec![vec![t, f, t], vec![f, f, f], vec![t, f, f]]).unwrap(),
            ],
            ragged![[1, 3], [], [7]],
        );
        check(
            &BooleanMask::new(),
            &[ragged![[1, 2, 3], [4], [5, 6]].unwrap(), ragged![[f, f, t], [f], [t, t]].unwrap()],
            ragged![[3], [], [5, 6]],
        );
        check(
            &BooleanMask::new(),
            &[ragged![[1, 2, 3], [4], [5, 6]].unwrap(), ragged![t, f, t].unwrap()],
            ragged![[1, 2, 3], [5, 6]],
        );
    }

    #[test]
    fn boolean_mask_keeps_inner_dims() {
        let (t, f) = (true, false);
        // Rows of a dense matrix: the result stays dense.
        check(
            &BooleanMask::new(),
            &[dense(vec![vec![1, 2], vec![3, 4], vec![5, 6]]).unwrap(), ragged![f, t, t].unwrap()],
            dense(vec![vec![3, 4], vec![5, 6]]),
        );
        // A rank-2 mask over rank-3 data: the masked dim becomes ragged, the last one stays uniform.
        let data = dense(vec![vec![vec![1, 2], vec![3, 4]], vec![vec![5, 6], vec![7, 8]]]).unwrap();
        let got = run(&BooleanMask::new(), &[data, dense(vec![vec![f, t], vec![t, t]]).unwrap()]).unwrap();
        assert_eq!((got.ragged_rank(), got.flat_values().shape()), (1, &[3usize, 2][..]));
        assert_eq!(got.to_literal(), Literal::from(vec![vec![vec![3, 4]], vec![vec![5, 6], vec![7, 8]]]));
        // Strings, empty strings and empty rows.
        check(
            &BooleanMask::new(),
            &[ragged![["", "x"], [], ["y"]].unwrap(), ragged![[t, f], [], [f]].unwrap()],
            RaggedTensor::from_row_splits(ragged!["",].unwrap(), vec![0, 1, 1, 1]),
        );
    }

    #[test]
    fn boolean_mask_refuses_mismatches() {
        let (t, f) = (true, false);
        let data = ragged![[1, 2, 3], [4], [5, 6]].unwrap();
        check_err(
            &BooleanMask::new(),
            &[data.clone(), ragged![[t, f, t], [f, f], [t, t]].unwrap()],
            ErrorKind::IncompatibleShapes,
        );
        check_err(&BooleanMask::new(), &[data.clone(), ragged![t, f].unwrap()], ErrorKind::IncompatibleShapes);
        check_err(
            &BooleanMask::new(),
            &[data.clone(), dense(vec![vec![t, f, t], vec![f, f, f], vec![t, f, f]]).unwrap()],
            ErrorKind::IncompatibleShapes,
        );
        check_err(&BooleanMask::new(), &[data.clone(), ragged![1, 0, 1].unwrap()], ErrorKind::TypeMismatch);
        check_err(
            &BooleanMask::new(),
            &[data, RaggedTensor::from_literal(&Literal::from(true)).unwrap()],
            ErrorKind::IncompatibleShapes,
        );
        check_err(
            &BooleanMask::new(),
            &[dense(vec![1, 2]).unwrap(), dense(vec![t, f, t]).unwrap()],
            ErrorKind::IncompatibleShapes,
        );
    }

    // ---- segment reductions: the examples of `tf.math.segment_*`'s documentation ----

    fn c() -> RaggedTensor {
        dense(vec![vec![1, 2, 3, 4], vec![4, 3, 2, 1], vec![5, 6, 7, 8]]).unwrap()
    }

    fn segment(reduction: SegmentReduction) -> SegmentReduce {
        SegmentReduce::new(reduction)
    }

    #[test]
    fn segment_reductions_of_matrices() {
        let ids = ragged![0, 0, 1].unwrap();
        check(&segment(SegmentReduction::Sum), &[c(), ids.clone()], dense(vec![vec![5, 5, 5, 5], vec![5, 6, 7, 8]]));
        check(&segment(SegmentReduction::Max), &[c(), ids.clone()], dense(vec![vec![4, 3, 3, 4], vec![5, 6, 7, 8]]));
        check(&segment(SegmentReduction::Min), &[c(), ids], dense(vec![vec![1, 2, 2, 1], vec![5, 6, 7, 8]]));
        let cf = dense(vec![vec![1.0, 2.0, 3.0, 4.0], vec![4.0, 3.0, 2.0, 1.0], vec![5.0, 6.0, 7.0, 8.0]]).unwrap();
        check(
            &segment(SegmentReduction::Mean),
            &[cf, typed(vec![0, 0, 1], DType::I64, 0).unwrap()],
            dense(vec![vec![2.5f32, 2.5, 2.5, 2.5], vec![5.0, 6.0, 7.0, 8.0]]),
        );
    }

    #[test]
    fn empty_segments_give_zero() {
        let data = ragged![1.5, -2.0, 4.0].unwrap();
        let ids = ragged![0, 0, 3].unwrap();
        for (reduction, first) in [
            (SegmentReduction::Sum, -0.5f32),
            (SegmentReduction::Mean, -0.25),
            (SegmentReduction::Max, 1.5),
            (SegmentReduction::Min, -2.0),
        ] {
            check(&segment(reduction), &[data.clone(), ids.clone()], ragged![first, 0.0, 0.0, 4.0]);
        }
        let none = typed(Literal::List(vec![]), DType::I32, 0).unwrap();
        let got = run(&segment(SegmentReduction::Sum), &[none.clone(), none]).unwrap();
        assert_eq!(got.flat_values().shape(), &[0]);
    }

    #[test]
    fn integer_means_truncate() {
        check(
            &segment(SegmentReduction::Mean),
            &[ragged![1, 2, -3, -4].unwrap(), ragged![0, 0, 1, 1].unwrap()],
            ragged![1, -3],
        );
    }

    #[test]
    fn ragged_segments_combine_by_position() {
        // Row s of the result is as long as the longest row of segment s; empty segments are empty rows.
        let data = ragged![[1, 2], [3], [4, 5, 6]].unwrap();
        check(
            &segment(SegmentReduction::Sum),
            &[data.clone(), ragged![0, 0, 2].unwrap()],
            ragged![[4, 2], [], [4, 5, 6]],
        );
        check(&segment(SegmentReduction::Max), &[data.clone(), ragged![0, 0, 0].unwrap()], ragged![[4, 5, 6]]);
        check(&segment(SegmentReduction::Mean), &[data, ragged![0, 0, 0].unwrap()], ragged![[2, 3, 6]]);
        let deep = ragged![[[1], [2, 3]], [[10, 20]], [[5]]].unwrap();
        check(&segment(SegmentReduction::Sum), &[deep, ragged![0, 0, 1].unwrap()], ragged![[[11, 20], [2, 3]], [[5]]]);
    }

    #[test]
    fn segment_ids_must_be_sorted_and_fit() {
        let data = ragged![1, 2, 3].unwrap();
        let err = check_err(
            &segment(SegmentReduction::Sum),
            &[data.clone(), ragged![0, 2, 1].unwrap()],
            ErrorKind::InvalidArgument,
        );
        assert!(err.to_string().contains("segment_sum") && err.to_string().contains("segment_ids[2] = 1"), "{err}");
        check_err(
            &segment(SegmentReduction::Max),
            &[data.clone(), ragged![-1, 0, 0].unwrap()],
            ErrorKind::InvalidArgument,
        );
        check_err(
            &segment(SegmentReduction::Min),
            &[data.clone(), ragged![0, 0].unwrap()],
            ErrorKind::IncompatibleShapes,
        );
        check_err(
            &segment(SegmentReduction::Sum),
            &[data.clone(), ragged![[0], [0, 0]].unwrap()],
            ErrorKind::IncompatibleShapes,
        );
        check_err(
            &segment(SegmentReduction::Sum),
            &[data.clone(), ragged![0.0, 0.0, 0.0].unwrap()],
            ErrorKind::TypeMismatch,
        );
        check_err(
            &segment(SegmentReduction::Sum),
            &[ragged![true, false].unwrap(), ragged![0, 0].unwrap()],
            ErrorKind::TypeMismatch,
        );
        check_err(
            &segment(SegmentReduction::Sum),
            &[ragged!["a"].unwrap(), ragged![0].unwrap()],
            ErrorKind::TypeMismatch,
        );
        check_err(
            &segment(SegmentReduction::Sum),
            &[data, ragged![0, 0, i64::MAX].unwrap()],
            ErrorKind::InvalidArgument,
        );
        // 2^31 + 1 segments of empty rows: refused before per-segment bookkeeping is allocated.
        let empty_rows = ragged![[], [], []].unwrap().cast(DType::U16).unwrap();
        check_err(
            &segment(SegmentReduction::Sum),
            &[empty_rows, typed(vec![0i64, 0, 1 << 31], DType::I64, 0).unwrap()],
            ErrorKind::InvalidArgument,
        );
    }

    #[test]
    fn unsorted_segment_sum_examples() {
        let c = dense(vec![vec![1, 2, 3, 4], vec![5, 6, 7, 8], vec![4, 3, 2, 1]]).unwrap();
        check(
            &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
            &[c.clone(), ragged![0, 1, 0].unwrap()],
            dense(vec![vec![5, 5, 5, 5], vec![5, 6, 7, 8]]),
        );
        // Negative ids drop their rows; missing segments are 0.
        check(
            &UnsortedSegmentReduce::new(SegmentReduction::Sum, 3),
            &[c.clone(), ragged![-1, 2, 2].unwrap()],
            dense(vec![vec![0, 0, 0, 0], vec![0, 0, 0, 0], vec![9, 9, 9, 9]]),
        );
        // Ids with the shape of the whole matrix: every element is an item.
        let ids = dense(vec![vec![0, 1, 0, 1], vec![0, 0, 0, 0], vec![1, 1, 1, 1]]).unwrap();
        check(
            &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
            &[c.clone(), ids],
            ragged![1 + 3 + 5 + 6 + 7 + 8, 2 + 4 + 4 + 3 + 2 + 1],
        );
        let err = check_err(
            &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
            &[c.clone(), ragged![0, 2, 1].unwrap()],
            ErrorKind::IndexOutOfRange,
        );
        assert!(err.to_string().contains("segment_ids[1]"), "{err}");
        check_err(
            &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
            &[c, ragged![0, 1].unwrap()],
            ErrorKind::IncompatibleShapes,
        );
        assert_eq!(UnsortedSegmentReduce::new(SegmentReduction::Sum, 4).name(), "UnsortedSegmentSum{num_segments=4}");
    }

    #[test]
    fn unsorted_segment_sum_of_ragged_data() {
        let data = ragged![[1, 2], [3], [4, 5, 6]].unwrap();
        check(
            &UnsortedSegmentReduce::new(SegmentReduction::Sum, 3),
            &[data.clone(), ragged![2, 2, 0].unwrap()],
            ragged![[4, 5, 6], [], [4, 2]],
        );
        // Ragged ids with data's row structure: every value is an item.
        check(
            &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
            &[data.clone(), ragged![[0, 1], [1], [0, 0, 1]].unwrap()],
            ragged![1 + 4 + 5, 2 + 3 + 6],
        );
        check_err(
            &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
            &[data, ragged![[0, 1], [1, 1], [0, 0, 1]].unwrap()],
            ErrorKind::IncompatibleShapes,
        );
    }

    #[test]
    fn registry_builds_these_ops() {
        let none = Attrs::default();
        for (name, op_name) in [
            ("gather", "Gather"),
            ("embedding_lookup", "Gather"),
            ("boolean_mask", "BooleanMask"),
            ("segment_sum", "SegmentSum"),
            ("segment_mean", "SegmentMean"),
            ("segment_max", "SegmentMax"),
            ("segment_min", "SegmentMin"),
        ] {
            assert_eq!(lookup(name, &none).unwrap().unwrap().name(), op_name);
        }
        let mut map = std::collections::BTreeMap::new();
        map.insert("num_segments".to_string(), ragtime_graph::Attr::Int(5));
        let attrs = Attrs::new("unsorted_segment_sum", map.clone());
        assert_eq!(
            lookup("unsorted_segment_sum", &attrs).unwrap().unwrap().name(),
            "UnsortedSegmentSum{num_segments=5}"
        );
        map.insert("num_segments".to_string(), ragtime_graph::Attr::Int(-1));
        let attrs = Attrs::new("unsorted_segment_sum", map);
        assert_eq!(lookup("unsorted_segment_sum", &attrs).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(lookup("unsorted_segment_sum", &none).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert!(lookup("getitem", &none).is_none());
    }
}
