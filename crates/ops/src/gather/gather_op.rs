//! [`Gather`] (`gather`, `embedding_lookup`) and [`GatherAxis`] (`gather` with `axis` and
//! `batch_dims`).

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Cost, Op, OpProperties};

use crate::gather::defs::{Gather, GatherAxis};
use crate::gather::gather_nd::{nd_view, nd_view_type};
use crate::gather::take::{position_of, row_of, split_outer, take_rows, GATHER, INDEX_DTYPES};
use crate::index::getitem::row_type;
use crate::structure::dims::MergeDims;
use crate::util::{expect_dtype, one};

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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
            return one(row_of(ctx, GATHER, params, rows[0])?);
        }
        let taken = split_outer(take_rows(ctx, GATHER, params, &rows)?, indices.flat_values().shape())?;
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

    crate::grad::structure::movement_vjp_method!();
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
fn gather_axis_value(
    ctx: &ExecContext,
    p: &RaggedTensor,
    i: &RaggedTensor,
    axis: usize,
    batch: usize,
) -> Result<RaggedTensor> {
    if batch == 0 && axis == 0 {
        return Ok(Gather.perform(ctx, &[p.clone(), i.clone()])?.remove(0));
    }
    if batch == 0 {
        let repeated = take_rows(ctx, GATHER, &nd_view(i, 0)?, &vec![0; p.nrows()])?;
        return gather_axis_value(ctx, p, &repeated, axis, 1);
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
            let mut global = ctx.try_vec::<i64>(GATHER, local.len())?;
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
            Ok(Gather.perform(ctx, &[nd_view(p, 2)?, positions])?.remove(0))
        }
        (1, _) => {
            // A new batch dim: row b of indices repeated for each of params' items in row b.
            let lengths: Vec<i64> = (0..p.nrows()).map(|b| p_items.children(b).len() as i64).collect();
            let reps: Vec<usize> =
                lengths.iter().enumerate().flat_map(|(b, &n)| std::iter::repeat_n(b, n as usize)).collect();
            let repeated = take_rows(ctx, GATHER, i, &reps)?
                .with_outer_partitions(&[RowPartition::from_row_lengths(&lengths)?])?;
            gather_axis_value(ctx, p, &repeated, axis, 2)
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
                ctx,
                &merge.perform(ctx, std::slice::from_ref(p))?.remove(0),
                &merge.perform(ctx, std::slice::from_ref(i))?.remove(0),
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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let (p, i) = (&inputs[0], &inputs[1]);
        let (axis, batch) = self.resolve(p.rank(), i.rank())?;
        let out = gather_axis_value(ctx, p, i, axis, batch)?;
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

    crate::grad::structure::movement_vjp_method!();
}
