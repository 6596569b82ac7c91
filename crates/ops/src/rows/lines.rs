//! The lines of a tensor along an axis (the rows a row op runs over), and checks shared by the
//! row ops.

use std::cmp::Ordering;

use ragtime_core::{DenseTensor, Element, Error, RaggedTensor, Result, TensorType};
use ragtime_graph::expect_arity;

use crate::util::normalize_axis;

/// The 1-d sequences of flat elements an op runs along: line `i` holds the elements
/// `starts[i] + j * stride` for `j` in `0..lens[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lines {
    pub(crate) starts: Vec<usize>,
    pub(crate) lens: Vec<usize>,
    pub(crate) stride: usize,
}

/// `axis` of an op over lines of `ty` (cumulative ops, `argmax` / `argmin`), normalized: any axis
/// of a dense tensor; of a ragged one the innermost ragged axis or a uniform inner axis.
pub(crate) fn line_axis(op: &str, axis: i64, ty: &TensorType) -> Result<usize> {
    let normalized = normalize_axis(op, axis, ty.rank())?;
    let rr = ty.ragged_rank();
    if rr > 0 && normalized < rr {
        return Err(Error::argument(
            op,
            format!(
                "axis {axis} is not defined for ragged rank {rr}: it must be the innermost ragged axis or a uniform \
                 inner axis"
            ),
        ));
    }
    Ok(normalized)
}

impl Lines {
    /// The lines along the last axis of `x`: the innermost ragged rows when `x` has no uniform
    /// inner dims, else the last dim of the flat values (also for dense `x`).
    pub(crate) fn last_axis(op: &str, x: &RaggedTensor) -> Result<Lines> {
        if x.rank() == 0 {
            return Err(Error::shapes(op, "takes a tensor of rank 1 or more, got a scalar"));
        }
        if x.ragged_rank() > 0 && x.flat_values().rank() == 1 {
            return Ok(Self::innermost_rows(x));
        }
        Self::flat_axis(x.flat_values(), x.flat_values().rank() - 1)
    }

    /// The lines along `axis` of `x` (already normalized): the innermost ragged axis or a uniform
    /// inner axis of a ragged tensor, any axis of a dense one.
    pub(crate) fn along(op: &str, x: &RaggedTensor, axis: usize) -> Result<Lines> {
        let rr = x.ragged_rank();
        if rr == 0 {
            return Self::flat_axis(x.flat_values(), axis);
        }
        match axis.cmp(&rr) {
            Ordering::Equal => Ok(Self::innermost_rows(x)),
            Ordering::Greater => Self::flat_axis(x.flat_values(), axis - rr),
            Ordering::Less => Err(Error::argument(
                op,
                format!(
                    "axis {axis} is not defined for ragged rank {rr}: it must be the innermost ragged axis ({rr}) \
                     or a uniform inner axis"
                ),
            )),
        }
    }

    /// One line per innermost row and position of the inner dims.
    fn innermost_rows(x: &RaggedTensor) -> Lines {
        let inner: usize = x.flat_values().shape()[1..].iter().product();
        let last = &x.partitions()[x.ragged_rank() - 1];
        let splits = last.row_splits();
        let mut lines = Lines { starts: Vec::new(), lens: Vec::new(), stride: inner };
        for w in splits.windows(2) {
            for lane in 0..inner {
                lines.starts.push(w[0] as usize * inner + lane);
                lines.lens.push((w[1] - w[0]) as usize);
            }
        }
        lines
    }

    /// The lines along dim `axis` of a dense array.
    fn flat_axis(values: &DenseTensor, axis: usize) -> Result<Lines> {
        let shape = values.shape();
        let len = shape[axis];
        let outer: usize = shape[..axis].iter().product();
        let stride: usize = shape[axis + 1..].iter().product();
        let count = outer * stride;
        let mut lines = Lines { starts: Vec::with_capacity(count), lens: vec![len; count], stride };
        for o in 0..outer {
            for s in 0..stride {
                lines.starts.push(o * len * stride + s);
            }
        }
        Ok(lines)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.starts.iter().copied().zip(self.lens.iter().copied())
    }
}

/// The values of `x` as a slice of `T` (the caller dispatched on the dtype).
pub(crate) fn slice_of<'a, T: Element>(op: &str, x: &'a RaggedTensor) -> Result<&'a [T]> {
    x.flat_slice::<T>().ok_or_else(|| Error::dtype(op, format!("expected {} values, got {}", T::DTYPE, x.dtype())))
}

/// A total order on numbers: NaN above everything (and equal to NaN), `-0.0 == 0.0`.
pub(crate) fn total<T: PartialOrd>(a: &T, b: &T) -> Ordering {
    #[allow(clippy::eq_op)]
    a.partial_cmp(b).unwrap_or_else(|| (a != a).cmp(&(b != b)))
}

pub(crate) fn expect_one_input(op: &str, inputs: &[TensorType]) -> Result<()> {
    expect_arity(op, inputs, 1..=1)?;
    if inputs[0].rank() == 0 {
        return Err(Error::shapes(op, "takes a tensor of rank 1 or more, got a scalar"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// softmax, log_softmax
