//! How a fused op's inputs and outputs line up with its iteration space: [`OperandKind`] (full,
//! scalar, per-row operands), [`Layout`] (one call's operands checked against those kinds, what
//! the fast paths index) and [`RowOutput`] (a row kernel's element and per-row outputs).

use ragtime_core::{dispatch_dtype, DenseTensor, Error, ExecContext, RaggedTensor, Result};

use super::scalar_graph::ScalarRef;

/// How an input of a fused op lines up with its iteration space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// One value per element: the same structure and flat shape as the iteration space.
    Full,
    /// A rank-0 value, repeated for every element.
    Scalar,
    /// One item per innermost row of a ragged iteration space (a row reduction with `keepdims`:
    /// dense `[nrows, 1]` against ragged rank 1, `[n, *, 1]` with the outer partitions against
    /// ragged rank 2, `[nrows, 1, k]` against `[n, *, k]`, ...), repeated along the row.
    PerRow,
}

/// The operands of one call checked against the kinds fusion assumed: what a fast path (the
/// chunked reference or a JIT kernel) may index without further checks.
#[derive(Debug)]
pub struct Layout<'a> {
    /// The first full operand: its partitions and flat shape are the iteration space.
    pub reference: &'a RaggedTensor,
    /// Each input's values: Full as flat 1-d (as long as the reference's flat values), PerRow as
    /// `[rows * item_width]` (one item per innermost row), Scalar as rank 0.
    pub columns: Vec<DenseTensor>,
    /// Values per item of the space: the product of the flat values' inner dims (1 for scalar
    /// items).
    pub item_width: usize,
}

impl<'a> Layout<'a> {
    /// `None` when an operand does not have the shape its kind needs (the caller then runs the
    /// inner graph, which broadcasts in general or reports the error). `rows`: the space must be
    /// ragged (row kernels), its rows the innermost partition's, its items the flat values' rows
    /// ([`Layout::item_width`] values each).
    pub fn new(kinds: &[OperandKind], inputs: &'a [RaggedTensor], rows: bool) -> Result<Option<Self>> {
        let Some(reference) = kinds.iter().zip(inputs).find(|(k, _)| **k == OperandKind::Full).map(|(_, x)| x) else {
            return Ok(None);
        };
        let flat_shape = reference.flat_values().shape();
        let rows_layout = reference.ragged_rank() >= 1 && !flat_shape.is_empty();
        let item_width: usize = flat_shape.iter().skip(1).product();
        if rows && !rows_layout {
            return Ok(None);
        }
        let outer = reference.partitions().split_last().map_or(&[][..], |(_, outer)| outer);
        let nrows = reference.partitions().last().map_or(0, |p| p.nrows());
        let total = reference.flat_values().len();
        let mut columns = Vec::with_capacity(inputs.len());
        for (kind, x) in kinds.iter().zip(inputs) {
            let column = match kind {
                OperandKind::Full => {
                    if !x.same_structure(reference) || x.flat_values().shape() != flat_shape {
                        return Ok(None);
                    }
                    match x.flat_values() {
                        flat if flat.rank() == 1 => flat.clone(),
                        flat => flat.reshape(vec![total])?,
                    }
                }
                OperandKind::Scalar => match x.as_dense() {
                    Some(d) if d.rank() == 0 => d.clone(),
                    _ => return Ok(None),
                },
                OperandKind::PerRow => {
                    let same_outer =
                        x.partitions().len() == outer.len() && x.partitions().iter().zip(outer).all(|(a, b)| a.same(b));
                    // `[nrows, 1]` followed by the space's inner dims.
                    let shape = x.flat_values().shape();
                    let lines_up = shape.len() == flat_shape.len() + 1
                        && shape[..2] == [nrows, 1]
                        && shape[2..] == flat_shape[1..];
                    if !rows_layout || !same_outer || !lines_up {
                        return Ok(None);
                    }
                    x.flat_values().reshape(vec![nrows * item_width])?
                }
            };
            columns.push(column);
        }
        Ok(Some(Layout { reference, columns, item_width }))
    }

    /// The row splits of the innermost partition: the rows row kernels and per-row operands
    /// iterate over (`None` for a dense space).
    pub fn row_splits(&self) -> Option<&'a [i64]> {
        self.reference.partitions().last().map(|p| p.row_splits())
    }

    /// A per-row result (`values`, one item per innermost row) in the shape of a reduction over
    /// the innermost ragged axis: `[rows]` or `[rows, 1]` with `keepdims`, then the space's inner
    /// dims, under the outer partitions of the space (which it shares), so a ragged rank 2 space
    /// gives `[n, *]` / `[n, *, 1]`.
    pub fn per_row_output(&self, values: DenseTensor, keepdims: bool) -> Result<RaggedTensor> {
        let partitions = self.reference.partitions();
        let outer = partitions.split_last().map_or(&[][..], |(_, outer)| outer);
        let nrows = partitions.last().map_or(0, |p| p.nrows());
        let mut shape = if keepdims { vec![nrows, 1] } else { vec![nrows] };
        shape.extend_from_slice(&self.reference.flat_values().shape()[1..]);
        let flat = values.reshape(shape)?;
        if outer.is_empty() {
            return Ok(RaggedTensor::dense(flat));
        }
        RaggedTensor::new(flat, outer.to_vec())
    }

    /// The column of input `i` for flat elements `e0..e1` (`rows`: the row of each element,
    /// needed by per-row operands).
    pub(crate) fn column(
        &self,
        ctx: &ExecContext,
        kinds: &[OperandKind],
        i: usize,
        e0: usize,
        e1: usize,
        rows: &[usize],
    ) -> Result<DenseTensor> {
        let c = &self.columns[i];
        match kinds[i] {
            OperandKind::Full => slice(c, e0, e1),
            OperandKind::Scalar => fill(c, e1 - e0),
            OperandKind::PerRow => c.take_rows_in(ctx, rows),
        }
    }

    /// Names the row of flat element `e` for error messages, as the unfused ops do.
    pub(crate) fn locate(&self, e: usize) -> String {
        ragtime_core::describe_element(self.reference.partitions(), self.reference.flat_values().shape(), e)
    }
}

/// Elements `a..b` of a 1-d tensor.
fn slice(t: &DenseTensor, a: usize, b: usize) -> Result<DenseTensor> {
    dispatch_dtype!(t.dtype(),
        T => {
            let s = t.as_slice::<T>().and_then(|s| s.get(a..b)).ok_or_else(|| Error::graph("a fused operand is shorter than its iteration space"))?;
            DenseTensor::from_vec(vec![b - a], s.to_vec())
        },
        string => Err(Error::dtype("fused", "string operands are not fused")))
}

/// `len` copies of the value of a rank-0 tensor.
fn fill(t: &DenseTensor, len: usize) -> Result<DenseTensor> {
    dispatch_dtype!(t.dtype(),
        T => {
            let v = *t.as_slice::<T>().and_then(|s| s.first()).ok_or_else(|| Error::graph("a fused scalar operand is empty"))?;
            DenseTensor::from_vec(vec![len], vec![v; len])
        },
        string => Err(Error::dtype("fused", "string operands are not fused")))
}

/// An output of a [`RowKernel`](crate::RowKernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowOutput {
    /// A ragged value with the iteration space's structure.
    Elements(ScalarRef),
    /// The result of a reduction (one reduction may be returned in both shapes).
    Reduction {
        /// Which reduction.
        index: usize,
        /// Shape `[nrows, 1]` when set, else `[nrows]`.
        keepdims: bool,
    },
}

impl RowOutput {
    /// The element-level values among `outputs`, in order.
    pub fn elements(outputs: &[RowOutput]) -> Vec<ScalarRef> {
        outputs.iter().filter_map(|o| if let RowOutput::Elements(r) = o { Some(*r) } else { None }).collect()
    }
}
