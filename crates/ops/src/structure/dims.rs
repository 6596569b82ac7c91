//! [`ExpandDims`] and [`MergeDims`]: adding and merging dimensions.

use std::any::Any;

use ragtime_core::{Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties};

use crate::gather::take::raise_ragged_rank;
use crate::util::{fixed_inputs, normalize_axis, one};

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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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

    crate::grad::structure::movement_vjp_method!();
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
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
        let y = raise_ragged_rank(ctx, "merge_dims", x, inner)?;
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

    crate::grad::structure::movement_vjp_method!();
}
