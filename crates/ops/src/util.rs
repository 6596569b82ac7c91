//! Small helpers shared by the ops: axis normalization, single outputs, dtype checks.

use ragtime_core::{DType, Error, RaggedTensor, Result, TensorType};

/// Resolves a possibly negative `axis` against `rank` (`-1` is the last axis).
pub fn normalize_axis(op: &str, axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        return Err(Error::argument(op, format!("axis {axis} is out of range for a tensor of rank {rank}")));
    }
    Ok(a as usize)
}

/// Wraps one output value, the common case of `Op::perform`.
pub fn one(value: RaggedTensor) -> Result<Vec<RaggedTensor>> {
    Ok(vec![value])
}

/// Fails unless input `index` of `op` has one of the accepted dtypes.
pub fn expect_dtype(op: &str, index: usize, ty: &TensorType, accepted: &[DType], what: &str) -> Result<()> {
    if accepted.contains(&ty.dtype) {
        return Ok(());
    }
    Err(Error::dtype(op, format!("input {index} must be {what}, got {}", ty.dtype)))
}

/// Fails unless input `index` of `op` is an integer tensor (indices, splits, lengths).
pub fn expect_integer(op: &str, index: usize, ty: &TensorType) -> Result<()> {
    if ty.dtype.is_integer() {
        return Ok(());
    }
    Err(Error::dtype(op, format!("input {index} must be an integer tensor, got {}", ty.dtype)))
}

/// Fails unless input `index` of `op` is a dense tensor of rank `rank`.
pub fn expect_dense_rank(op: &str, index: usize, ty: &TensorType, rank: usize) -> Result<()> {
    if ty.ragged_rank == 0 && ty.rank() == rank {
        return Ok(());
    }
    Err(Error::shapes(op, format!("input {index} must be a dense tensor of rank {rank}, got {ty}")))
}
