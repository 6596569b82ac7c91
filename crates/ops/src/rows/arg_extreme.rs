//! [`ArgExtreme`]: `argmax` and `argmin` along an axis.

use std::any::Any;

use ragtime_core::{dispatch_dtype, DType, Element, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attrs, Cost, Op, OpProperties};

use crate::rows::lines::{expect_one_input, line_axis, slice_of, Lines};
use crate::rows::sort::expect_sortable;
use crate::util::{fixed_inputs, one};

/// `tf.math.argmax` / `tf.math.argmin` along `axis`: the position of the first largest (smallest)
/// element of each line, as `int64` or `int32`. Along the innermost ragged axis it runs row by
/// row (the result loses that ragged dim: dense `[nrows, *inner]` for ragged rank 1); along a
/// uniform inner axis over the flat values; any axis of a dense tensor. NaN counts as the
/// extreme (the position `reduce_max` / `reduce_min` take their NaN from); an empty line has no
/// extreme and is `invalid_value`, naming the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArgExtreme {
    /// `argmin` instead of `argmax`.
    pub min: bool,
    /// The axis (negative counts from the end).
    pub axis: i64,
    /// `int64` or `int32`.
    pub output_type: DType,
}

impl ArgExtreme {
    /// `argmax` (`min` false) or `argmin` along `axis`, giving `output_type` (int32 or int64).
    pub fn new(min: bool, axis: i64, output_type: DType) -> Self {
        ArgExtreme { min, axis, output_type }
    }

    fn op_name(&self) -> &'static str {
        if self.min {
            "argmin"
        } else {
            "argmax"
        }
    }

    /// From a graph file's node: `axis` (required), `output_type` (`int64` default, `int32`).
    pub fn from_attrs(min: bool, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "output_type"])?;
        let output_type = crate::util::index_dtype_attr(attrs, "output_type", DType::I64)?;
        Ok(ArgExtreme { min, axis: attrs.int("axis")?, output_type })
    }

    /// The axis, normalized and checked against the type ([`line_axis`]).
    fn checked_axis(&self, ty: &TensorType) -> Result<usize> {
        line_axis(self.op_name(), self.axis, ty)
    }
}

/// The position of the first extreme of each line (`None` for an empty line).
fn arg_extreme_lines<T: Element>(data: &[T], lines: &Lines, min: bool) -> Vec<Option<usize>> {
    #[allow(clippy::eq_op)]
    let is_nan = |v: &T| v != v;
    lines
        .iter()
        .map(|(start, len)| {
            let at = |j: usize| &data[start + j * lines.stride];
            let mut best = 0;
            for j in 1..len {
                if is_nan(at(best)) {
                    break;
                }
                let better = if min { at(j) < at(best) } else { at(j) > at(best) };
                if better || is_nan(at(j)) {
                    best = j;
                }
            }
            (len > 0).then_some(best)
        })
        .collect()
}

impl Op for ArgExtreme {
    fn name(&self) -> String {
        format!(
            "{}{{axis={}, output_type={}}}",
            if self.min { "ArgMin" } else { "ArgMax" },
            self.axis,
            self.output_type
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_one_input(self.op_name(), inputs)?;
        let x = &inputs[0];
        expect_sortable(self.op_name(), x)?;
        if !matches!(self.output_type, DType::I32 | DType::I64) {
            return Err(Error::argument(
                self.op_name(),
                format!("output_type must be int32 or int64, got {}", self.output_type),
            ));
        }
        let axis = self.checked_axis(x)?;
        let mut dims = x.dims().to_vec();
        dims.remove(axis);
        let ragged_rank =
            if x.ragged_rank() > 0 && axis == x.ragged_rank() { x.ragged_rank() - 1 } else { x.ragged_rank() };
        Ok(vec![TensorType::new(self.output_type, ragged_rank, dims)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let name = self.op_name();
        let [x] = fixed_inputs::<1>(name, inputs)?;
        let ty = TensorType::of(x);
        self.output_types(std::slice::from_ref(&ty))?;
        let axis = self.checked_axis(&ty)?;
        let lines = Lines::along(name, x, axis)?;
        let found = dispatch_dtype!(x.dtype(),
            T => arg_extreme_lines(slice_of::<T>(name, x)?, &lines, self.min),
            string => return Err(Error::dtype(name, "takes integer or float tensors, got string")));
        let mut positions: Vec<i64> = ctx.try_vec(name, found.len())?;
        for (line, position) in found.into_iter().enumerate() {
            let Some(p) = position else {
                // Along the innermost ragged axis a line is a row of the last partition: name it
                // at every level.
                let rr = x.ragged_rank();
                let row = if rr > 0 && axis == rr {
                    x.describe_row(rr - 1, line)
                } else {
                    format!("row {}", line / lines.stride.max(1))
                };
                let extreme = if self.min { "minimum" } else { "maximum" };
                return Err(Error::value(name, format!("{row} is empty: it has no {extreme}")));
            };
            positions.push(p as i64);
        }
        let (rr, mut shape) = (x.ragged_rank(), x.flat_values().shape().to_vec());
        let partitions = if rr > 0 && axis == rr {
            shape[0] = x.partitions()[rr - 1].nrows();
            x.partitions()[..rr - 1].to_vec()
        } else {
            shape.remove(axis - rr);
            x.partitions().to_vec()
        };
        let flat = crate::util::index_tensor(name, "position", shape, positions, self.output_type)?;
        one(RaggedTensor::new(flat, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: true, cost: Cost::Cheap }
    }
}
