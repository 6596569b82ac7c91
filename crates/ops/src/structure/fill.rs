//! Constructors of values: [`Fill`], [`RaggedRange`], [`FilledLike`] and [`OneHot`].

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Dim, Element, Error, ExecContext, Literal, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Attrs, Cost, Graph, Op, OpProperties, VarId};

use crate::structure::concat::merge_dim;
use crate::structure::defs::FilledLike;
use crate::structure::dense::show_option_literal;
use crate::structure::remap::fits;
use crate::util::{
    dense_input, expect_dense_rank, expect_int_vector, fixed_inputs, int_vector_input, one, scalar_attr, scalar_tensor,
};

/// `fill(dims, value)`: `tf.fill`, a dense tensor of shape `dims` (an integer vector) whose every
/// element is the scalar `value`. Negative or oversized dims are `invalid_argument` errors.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fill;

impl Fill {
    /// The op.
    pub fn new() -> Self {
        Fill
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Fill)
    }
}

impl Op for Fill {
    fn name(&self) -> String {
        "Fill".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "fill";
        expect_arity(OP, inputs, 2..=2)?;
        expect_int_vector(OP, 0, &inputs[0])?;
        expect_dense_rank(OP, 1, &inputs[1], 0)?;
        let rank = inputs[0].dims()[0].size().ok_or_else(|| {
            Error::argument(OP, "the length of input 0 (dims) must be known when the graph is built: it is the rank")
        })?;
        ragtime_core::limits::checked_rank(OP, rank)?;
        Ok(vec![TensorType::dense(inputs[1].dtype(), &vec![None; rank])])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "fill";
        let [dims, value] = fixed_inputs(OP, inputs)?;
        let dims = int_vector_input(OP, 0, "dims", dims)?;
        let shape = dims
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                usize::try_from(d)
                    .map_err(|_| Error::argument(OP, format!("input 0 (dims) has a negative size {d} at position {k}")))
            })
            .collect::<Result<Vec<_>>>()?;
        ctx.checked_len(OP, &shape)?;
        let value = dense_input(OP, 1, "value", value)?;
        if value.rank() != 0 {
            return Err(Error::shapes(OP, format!("input 1 (value) must be a scalar, got shape {:?}", value.shape())));
        }
        one(DenseTensor::full_in(ctx, shape, value)?.into())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        _outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        // The value is repeated over the whole result: its gradient is the sum back to its shape.
        let (Some(g), [_, value]) = (output_grads.first().copied().flatten(), inputs) else {
            return Ok(vec![None; inputs.len()]);
        };
        let value_ty = graph.var(*value).map(|v| v.ty.clone()).ok_or_else(|| Error::graph("fill: unknown value"))?;
        Ok(vec![None, Some(crate::broadcast::sum_to_operand(graph, g, &value_ty)?)])
    }
}

/// The dtypes `ragged.range` accepts, in TensorFlow's promotion order.
const RANGE_DTYPES: [DType; 4] = [DType::I32, DType::I64, DType::F32, DType::F64];

/// The element types of `ragged.range`: how many values a range has, and the step.
trait RangeElement: Element {
    /// The number of values of `range(start, limit, delta)` (`delta != 0`), if representable.
    fn range_len(start: Self, limit: Self, delta: Self) -> Option<usize>;
    /// The value after `v` (wrapping for integers: the step past the last value may overflow).
    fn step(v: Self, delta: Self) -> Self;
    /// True for a float NaN (a bound no range can have).
    fn is_nan(self) -> bool {
        false
    }
}

macro_rules! range_int {
    ($($t:ty),*) => {$(
        impl RangeElement for $t {
            fn range_len(start: Self, limit: Self, delta: Self) -> Option<usize> {
                let (s, l, d) = (i128::from(start), i128::from(limit), i128::from(delta));
                if (d > 0 && l < s) || (d < 0 && l > s) {
                    return Some(0);
                }
                usize::try_from(((l - s).abs() + d.abs() - 1) / d.abs()).ok()
            }
            fn step(v: Self, delta: Self) -> Self {
                v.wrapping_add(delta)
            }
        }
    )*};
}
range_int!(i32, i64);

macro_rules! range_float {
    ($($t:ty),*) => {$(
        impl RangeElement for $t {
            fn range_len(start: Self, limit: Self, delta: Self) -> Option<usize> {
                if (delta > 0.0 && limit < start) || (delta < 0.0 && limit > start) {
                    return Some(0);
                }
                let n = f64::from(((limit - start) / delta).abs().ceil());
                (n.is_finite() && n <= usize::MAX as f64).then_some(n as usize)
            }
            fn step(v: Self, delta: Self) -> Self {
                v + delta
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    )*};
}
range_float!(f32, f64);

/// One operand of `ragged.range`: a scalar (broadcast to every row) or a vector.
struct RangeOperand<T> {
    values: Vec<T>,
    scalar: bool,
}

impl<T: Copy> RangeOperand<T> {
    fn at(&self, row: usize) -> T {
        self.values[if self.scalar { 0 } else { row }]
    }
}

/// The rows `range(starts[i], limits[i], deltas[i])` as a ragged tensor.
fn ragged_ranges<T: RangeElement>(
    ctx: &ExecContext,
    operands: [&DenseTensor; 3],
    nrows: usize,
) -> Result<RaggedTensor> {
    const OP: &str = "ragged.range";
    let [starts, limits, deltas] =
        operands.map(|t| RangeOperand { values: t.as_slice::<T>().unwrap_or(&[]).to_vec(), scalar: t.rank() == 0 });
    let mut lengths = Vec::with_capacity(nrows);
    let mut total = 0usize;
    for row in 0..nrows {
        let (start, limit, delta) = (starts.at(row), limits.at(row), deltas.at(row));
        if delta == T::default() {
            return Err(Error::argument(OP, format!("row {row}: delta must not be 0")));
        }
        if start.is_nan() || limit.is_nan() || delta.is_nan() {
            return Err(Error::argument(OP, format!("row {row}: range({start}, {limit}, {delta}) has a NaN bound")));
        }
        let len = T::range_len(start, limit, delta)
            .and_then(|n| total.checked_add(n).map(|t| (n, t)))
            .filter(|&(_, t)| fits(ctx, t))
            .ok_or_else(|| {
                let limits = ctx.limits();
                limits.exceeded(
                    OP,
                    "elements",
                    limits.elements,
                    format!("row {row}: range({start}, {limit}, {delta}) makes more values than fit (at most {} bytes per buffer)", limits.buffer_bytes),
                )
            })?;
        total = len.1;
        lengths.push(len.0 as i64);
    }
    let mut values = Vec::with_capacity(total);
    for (row, &len) in lengths.iter().enumerate() {
        let (mut v, delta) = (starts.at(row), deltas.at(row));
        for _ in 0..len {
            values.push(v);
            v = T::step(v, delta);
        }
    }
    RaggedTensor::from_row_lengths(DenseTensor::vector(values), &lengths)
}

/// `ragged.range(limits)`, `ragged.range(starts, limits)` or `ragged.range(starts, limits, deltas)`:
/// `tf.ragged.range`, one row `range(starts[i], limits[i], deltas[i])` per row (starts default to
/// 0, deltas to 1). Operands are scalars (broadcast) or vectors of one length, of int32, int64,
/// float32 or float64, promoted to the widest among them. A zero delta is `invalid_argument`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RaggedRange;

impl RaggedRange {
    /// The op.
    pub fn new() -> Self {
        RaggedRange
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(RaggedRange)
    }

    /// The promoted dtype and the number of rows (`None` when unknown), from the operand types.
    fn plan(types: &[TensorType]) -> Result<(DType, Option<usize>)> {
        const OP: &str = "ragged.range";
        let mut dtype_rank = 0;
        let mut nrows: Option<(usize, Dim)> = None;
        for (i, t) in types.iter().enumerate() {
            let rank = RANGE_DTYPES.iter().position(|&d| d == t.dtype()).ok_or_else(|| {
                Error::dtype(OP, format!("input {i} must be int32, int64, float32 or float64, got {}", t.dtype()))
            })?;
            dtype_rank = dtype_rank.max(rank);
            if t.is_ragged() || t.rank() > 1 {
                return Err(Error::shapes(OP, format!("input {i} must be a scalar or a vector, got {t}")));
            }
            if t.rank() == 1 {
                nrows = match nrows {
                    None => Some((i, t.dims()[0])),
                    Some((j, d)) => {
                        let merged = merge_dim(d, t.dims()[0]).ok_or_else(|| {
                            Error::shapes(
                                OP,
                                format!("input {i} is {t}, input {j} is {}: vectors must have one length", types[j]),
                            )
                        })?;
                        Some((j, merged))
                    }
                };
            }
        }
        let rows = match nrows {
            None => Some(1),
            Some((_, d)) => d.size(),
        };
        Ok((RANGE_DTYPES[dtype_rank], rows))
    }
}

impl Op for RaggedRange {
    fn name(&self) -> String {
        "RaggedRange".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("ragged.range", inputs, 1..=3)?;
        let (dtype, nrows) = Self::plan(inputs)?;
        Ok(vec![TensorType::new(dtype, 1, vec![Dim::from_option(nrows), Dim::Ragged])?])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "ragged.range";
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        expect_arity(OP, &types, 1..=3)?;
        let (dtype, nrows) = Self::plan(&types)?;
        let nrows = nrows.ok_or_else(|| Error::shapes(OP, "vector operands must have one length"))?;
        let dense = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| dense_input(OP, i, "range bound", t)?.cast(dtype))
            .collect::<Result<Vec<_>>>()?;
        let zero = DenseTensor::zero(dtype);
        let one_step = DenseTensor::scalar(1i32).cast(dtype)?;
        let operands = match dense.as_slice() {
            [limits] => [&zero, limits, &one_step],
            [starts, limits] => [starts, limits, &one_step],
            [starts, limits, deltas] => [starts, limits, deltas],
            _ => return Err(Error::argument(OP, format!("takes 1 to 3 inputs, got {}", inputs.len()))),
        };
        one(match dtype {
            DType::I32 => ragged_ranges::<i32>(ctx, operands, nrows)?,
            DType::I64 => ragged_ranges::<i64>(ctx, operands, nrows)?,
            DType::F32 => ragged_ranges::<f32>(ctx, operands, nrows)?,
            _ => ragged_ranges::<f64>(ctx, operands, nrows)?,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// expand_dims, merge_dims, ones_like, zeros_like

impl Op for FilledLike {
    fn name(&self) -> String {
        let name = if self.ones { "OnesLike" } else { "ZerosLike" };
        match self.dtype {
            Some(d) => format!("{name}{{dtype={d}}}"),
            None => name.into(),
        }
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(self.op_name(), inputs, 1..=1)?;
        let dtype = self.dtype.unwrap_or(inputs[0].dtype());
        self.fill(dtype)?;
        Ok(vec![inputs[0].clone().with_dtype(dtype)])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs(self.op_name(), inputs)?;
        let dtype = self.dtype.unwrap_or(x.dtype());
        let flat = DenseTensor::full_in(ctx, x.flat_values().shape().to_vec(), &self.fill(dtype)?)?;
        one(x.with_flat_values(flat)?)
    }
    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Cheap }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        _outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        let _ = (graph, output_grads);
        // Constant in its input's values.
        Ok(vec![None; inputs.len()])
    }
}

// ---------------------------------------------------------------------------------------------
// one_hot

/// `one_hot(indices)` (`tf.one_hot` with axis -1): each index becomes a new innermost uniform dim
/// of size `depth` holding `on_value` at the index and `off_value` elsewhere; an index outside
/// `[0, depth)` gives `off_value` only. The result keeps the indices' partitions.
///
/// `dtype` is the values' dtype: given, else `on_value`'s (`off_value`'s) literal type, else
/// float32. `on_value` / `off_value` default to 1 / 0 (true / false for bool); strings need both.
#[derive(Debug, Clone, PartialEq)]
pub struct OneHot {
    /// The size of the new dim.
    pub depth: usize,
    /// The value at the index (`None`: one).
    pub on_value: Option<Literal>,
    /// The value elsewhere (`None`: zero).
    pub off_value: Option<Literal>,
    /// The values' dtype (`None`: from the values, else float32).
    pub dtype: Option<DType>,
}

const ONE_HOT: &str = "one_hot";

impl OneHot {
    /// `one_hot` with `depth`, float32 ones and zeros.
    pub fn new(depth: usize) -> Self {
        OneHot { depth, on_value: None, off_value: None, dtype: None }
    }

    /// The same op giving `on` / `off` (their dtype unless [`OneHot::with_dtype`] says otherwise).
    pub fn with_values(self, on: impl Into<Literal>, off: impl Into<Literal>) -> Self {
        OneHot { on_value: Some(on.into()), off_value: Some(off.into()), ..self }
    }

    /// The same op giving values of `dtype`.
    pub fn with_dtype(self, dtype: DType) -> Self {
        OneHot { dtype: Some(dtype), ..self }
    }

    /// From graph-file attributes: `depth` (required, >= 0), `on_value`, `off_value` (scalars),
    /// `dtype`.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["depth", "on_value", "off_value", "dtype"])?;
        let depth = attrs.int("depth")?;
        let depth =
            usize::try_from(depth).map_err(|_| Error::argument(ONE_HOT, format!("depth must be >= 0, got {depth}")))?;
        let dtype = attrs
            .str_opt("dtype")?
            .map(|name| {
                DType::from_name(name).ok_or_else(|| Error::argument(ONE_HOT, format!("unknown dtype `{name}`")))
            })
            .transpose()?;
        Ok(OneHot {
            depth,
            on_value: scalar_attr(attrs, "on_value")?,
            off_value: scalar_attr(attrs, "off_value")?,
            dtype,
        })
    }

    /// The values' dtype (see the type's doc).
    fn value_dtype(&self) -> DType {
        let of_literal = |lit: &Literal| match lit {
            Literal::Int(_) => Some(DType::I32),
            Literal::Float(_) => Some(DType::F32),
            Literal::Bool(_) => Some(DType::Bool),
            Literal::Str(_) => Some(DType::String),
            Literal::List(_) => None,
        };
        self.dtype
            .or_else(|| self.on_value.as_ref().and_then(of_literal))
            .or_else(|| self.off_value.as_ref().and_then(of_literal))
            .unwrap_or(DType::F32)
    }

    /// `[off, on]` as a 1-d tensor of the values' dtype (`type_mismatch` when a value is not of it).
    fn palette(&self, ctx: &ExecContext) -> Result<DenseTensor> {
        let dtype = self.value_dtype();
        let default = |on: bool| match dtype {
            DType::Bool => Ok(Literal::Bool(on)),
            DType::String => Err(Error::dtype(ONE_HOT, "string values need both on_value and off_value")),
            _ => Ok(Literal::Int(i128::from(on))),
        };
        let off = self.off_value.clone().map_or_else(|| default(false), Ok)?;
        let on = self.on_value.clone().map_or_else(|| default(true), Ok)?;
        let off = scalar_tensor(ONE_HOT, "off_value", &off, dtype)?.reshape(vec![1])?;
        let on = scalar_tensor(ONE_HOT, "on_value", &on, dtype)?.reshape(vec![1])?;
        DenseTensor::concat_rows_in(ctx, &[off, on])
    }
}

impl Op for OneHot {
    fn name(&self) -> String {
        format!(
            "OneHot{{depth={}, on_value={}, off_value={}, dtype={}}}",
            self.depth,
            show_option_literal(&self.on_value),
            show_option_literal(&self.off_value),
            self.value_dtype()
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(ONE_HOT, inputs, 1..=1)?;
        let indices = &inputs[0];
        if !matches!(indices.dtype(), DType::U8 | DType::I8 | DType::I32 | DType::I64) {
            return Err(Error::dtype(
                ONE_HOT,
                format!("indices must be uint8, int8, int32 or int64, got {}", indices.dtype()),
            ));
        }
        self.palette(ExecContext::detached())?;
        let mut dims = indices.dims().to_vec();
        dims.push(Dim::Known(self.depth));
        ragtime_core::limits::checked_rank(ONE_HOT, dims.len())?;
        Ok(vec![TensorType::new(self.value_dtype(), indices.ragged_rank(), dims)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [indices] = fixed_inputs::<1>(ONE_HOT, inputs)?;
        self.output_types(&[TensorType::of(indices)])?;
        let palette = self.palette(ctx)?;
        let values = indices.flat_values();
        let mut shape = values.shape().to_vec();
        shape.push(self.depth);
        ctx.checked_size(ONE_HOT, &shape, self.value_dtype().size_of().max(1))?;
        let ids = values.to_i64_vec(ONE_HOT, "input 0 (indices)")?;
        let depth = self.depth as i64;
        // Row 1 of the palette (on) where the position is the index, row 0 (off) elsewhere.
        let picks = ids.iter().flat_map(|&id| {
            (0..depth).map(move |d| {
                let row = usize::from(d == id);
                (0, row..row + 1)
            })
        });
        let flat = DenseTensor::gather_row_runs(ctx, ONE_HOT, &[&palette], picks)?;
        one(indices.with_flat_values(flat.reshape(shape)?)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// Dense and sparse conversions.
