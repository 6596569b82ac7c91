//! [`GatherNd`]: `gather_nd` over a ragged or dense `params`.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties};

use crate::gather::defs::Gather;
use crate::gather::take::{position_of, INDEX_DTYPES};
use crate::util::expect_dtype;

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
pub(crate) fn nd_view_type(params: &TensorType, depth: usize) -> Result<TensorType> {
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
pub(crate) fn nd_view(params: &RaggedTensor, depth: usize) -> Result<RaggedTensor> {
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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
        let mut positions = ctx.try_vec::<i64>(GATHER_ND, ntuples)?;
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
        Gather.perform(ctx, &[nd_view(params, depth)?, positions])
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: true, cost: Cost::Cheap }
    }

    crate::grad::structure::movement_vjp_method!();
}
