//! Row partition constructors: [`Identity`], `from_row_splits` and the other `from_*` ops, and
//! [`SegmentIdsToRowSplits`], each checking its partition like TensorFlow.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties};

use crate::util::{expect_int_vector, fixed_inputs, int_vector_input, one};

/// Names the input a partition error came from (core constructors only name the op).
fn at_input(e: Error, op: &str, what: &str) -> Error {
    match e {
        Error::InvalidRowPartition { reason, .. } => Error::partition(op, format!("{what}: {reason}")),
        other => other,
    }
}

/// The type of `values` under one more (outer) ragged dimension of `nrows` rows.
fn with_outer_type(op: &str, values: &TensorType, nrows: Dim) -> Result<TensorType> {
    if values.rank() == 0 {
        return Err(Error::partition(op, format!("input 0 (values) must have rank >= 1, got {values}")));
    }
    let mut dims = vec![nrows, Dim::Ragged];
    dims.extend_from_slice(&values.dims()[1..]);
    TensorType::new(values.dtype(), values.ragged_rank() + 1, dims)
}

/// The number of rows described by a splits vector of type `splits`, input `index` of `op` (one
/// less than its length).
fn rows_of_splits(op: &str, index: usize, splits: &TensorType) -> Result<Dim> {
    match splits.dims()[0] {
        Dim::Known(0) => {
            Err(Error::partition(op, format!("input {index} (row splits) must have at least one element")))
        }
        Dim::Known(n) => Ok(Dim::Known(n - 1)),
        _ => Ok(Dim::Unknown),
    }
}

/// A vector of int64 values as a graph value.
pub(crate) fn int64_vector(values: &[i64]) -> RaggedTensor {
    DenseTensor::vector(values.to_vec()).into()
}

/// Refuses a row count whose splits (and the index vectors built for them) pass the call's limits.
fn check_rows(ctx: &ExecContext, op: &str, nrows: usize) -> Result<()> {
    ctx.checked_len(op, &[nrows]).map(|_| ())
}

// ---------------------------------------------------------------------------------------------

/// `identity`: its input, unchanged (buffers shared).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Identity;

impl Identity {
    /// The identity op.
    pub fn new() -> Self {
        Identity
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Identity)
    }
}

impl Op for Identity {
    fn name(&self) -> String {
        "Identity".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("identity", inputs, 1..=1)?;
        Ok(vec![inputs[0].clone()])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("identity", inputs)?;
        one(x.clone())
    }
    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: true, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Free }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

/// `from_row_splits(values, splits)`: `tf.RaggedTensor.from_row_splits`, adding an outer ragged
/// dimension to `values` (dense or ragged). Splits may be int32 or int64.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FromRowSplits;

impl FromRowSplits {
    /// The op.
    pub fn new() -> Self {
        FromRowSplits
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(FromRowSplits)
    }
}

impl Op for FromRowSplits {
    fn name(&self) -> String {
        "FromRowSplits".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_row_splits";
        expect_arity(OP, inputs, 2..=2)?;
        expect_int_vector(OP, 1, &inputs[1])?;
        Ok(vec![with_outer_type(OP, &inputs[0], rows_of_splits(OP, 1, &inputs[1])?)?])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_row_splits";
        let [values, splits] = fixed_inputs(OP, inputs)?;
        let splits = int_vector_input(OP, 1, "row splits", splits)?;
        one(RaggedTensor::from_row_splits(values.clone(), splits)
            .map_err(|e| at_input(e, OP, "input 1 (row splits)"))?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

/// `from_row_lengths(values, lengths)`: `tf.RaggedTensor.from_row_lengths`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FromRowLengths;

impl FromRowLengths {
    /// The op.
    pub fn new() -> Self {
        FromRowLengths
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(FromRowLengths)
    }
}

impl Op for FromRowLengths {
    fn name(&self) -> String {
        "FromRowLengths".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_row_lengths";
        expect_arity(OP, inputs, 2..=2)?;
        expect_int_vector(OP, 1, &inputs[1])?;
        Ok(vec![with_outer_type(OP, &inputs[0], inputs[1].dims()[0])?])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_row_lengths";
        let [values, lengths] = fixed_inputs(OP, inputs)?;
        let lengths = int_vector_input(OP, 1, "row lengths", lengths)?;
        one(RaggedTensor::from_row_lengths(values.clone(), &lengths)
            .map_err(|e| at_input(e, OP, "input 1 (row lengths)"))?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

/// `from_value_rowids(values, rowids)`: `tf.RaggedTensor.from_value_rowids`; `nrows` (optional)
/// adds trailing empty rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FromValueRowids {
    nrows: Option<usize>,
}

impl FromValueRowids {
    /// The op; `nrows` fixes the number of rows (at least one more than the largest row id).
    pub fn new(nrows: Option<usize>) -> Self {
        FromValueRowids { nrows }
    }
    /// From graph-file attributes: `nrows` (optional, non-negative).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["nrows"])?;
        let nrows = match attrs.int_opt("nrows")? {
            Some(n) if n < 0 => {
                return Err(Error::partition("from_value_rowids", format!("nrows must be >= 0, got {n}")))
            }
            n => n.map(|n| n as usize),
        };
        Ok(FromValueRowids { nrows })
    }
}

impl Op for FromValueRowids {
    fn name(&self) -> String {
        match self.nrows {
            Some(n) => format!("FromValueRowids{{nrows={n}}}"),
            None => "FromValueRowids{nrows=None}".into(),
        }
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_value_rowids";
        expect_arity(OP, inputs, 2..=2)?;
        expect_int_vector(OP, 1, &inputs[1])?;
        if let (Some(&Dim::Known(nvals)), Dim::Known(nids)) = (inputs[0].dims().first(), inputs[1].dims()[0]) {
            if nvals != nids {
                return Err(Error::partition(OP, format!("{nids} row ids for {nvals} values")));
            }
        }
        Ok(vec![with_outer_type(OP, &inputs[0], Dim::from_option(self.nrows))?])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_value_rowids";
        let [values, rowids] = fixed_inputs(OP, inputs)?;
        let rowids = int_vector_input(OP, 1, "value row ids", rowids)?;
        // The largest row id sizes the splits: refuse absurd ids before allocating for them.
        let needed = rowids.iter().copied().max().map_or(0, |m| m.max(-1).saturating_add(1) as usize);
        check_rows(ctx, OP, needed.max(self.nrows.unwrap_or(0)))?;
        one(RaggedTensor::from_value_rowids(values.clone(), &rowids, self.nrows)
            .map_err(|e| at_input(e, OP, "input 1 (value row ids)"))?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

/// `from_nested_row_splits(flat_values, splits_0, splits_1, ...)`: all ragged dimensions at once,
/// outermost splits first (= PaddlePaddle's LoD offsets). `flat_values` may itself be ragged.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FromNestedRowSplits;

impl FromNestedRowSplits {
    /// The op.
    pub fn new() -> Self {
        FromNestedRowSplits
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(FromNestedRowSplits)
    }
}

impl Op for FromNestedRowSplits {
    fn name(&self) -> String {
        "FromNestedRowSplits".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_nested_row_splits";
        expect_arity(OP, inputs, 1..=usize::MAX)?;
        let mut result = inputs[0].clone();
        for (i, splits) in inputs.iter().enumerate().skip(1).rev() {
            expect_int_vector(OP, i, splits)?;
            result = with_outer_type(OP, &result, rows_of_splits(OP, i, splits)?)?;
        }
        Ok(vec![result])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_nested_row_splits";
        let (flat, nested) =
            inputs.split_first().ok_or_else(|| Error::argument(OP, "takes at least 1 input, got 0"))?;
        let mut result = flat.clone();
        for (i, splits) in nested.iter().enumerate().rev() {
            let what = format!("input {} (row splits {i})", i + 1);
            let splits = int_vector_input(OP, i + 1, &format!("row splits {i}"), splits)?;
            result = RaggedTensor::from_row_splits(result, splits).map_err(|e| at_input(e, OP, &what))?;
        }
        one(result)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

/// `from_uniform_row_length(values)`: `tf.RaggedTensor.from_uniform_row_length`, grouping the
/// rows of `values` into rows of `uniform_row_length` each; `nrows` is needed only when the
/// length is 0 (otherwise it is the number of values divided by the length).
#[derive(Debug, Clone, PartialEq)]
pub struct FromUniformRowLength {
    uniform_row_length: usize,
    nrows: Option<usize>,
}

impl FromUniformRowLength {
    /// The op.
    pub fn new(uniform_row_length: usize, nrows: Option<usize>) -> Self {
        FromUniformRowLength { uniform_row_length, nrows }
    }
    /// From graph-file attributes: `uniform_row_length` (required, >= 0), `nrows` (optional, >= 0).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        const OP: &str = "from_uniform_row_length";
        attrs.only(&["uniform_row_length", "nrows"])?;
        let non_negative = |name: &str, v: i64| {
            // A negative length or row count describes no partition (TensorFlow: invalid partition).
            usize::try_from(v).map_err(|_| Error::partition(OP, format!("{name} must be >= 0, got {v}")))
        };
        let length = non_negative("uniform_row_length", attrs.int("uniform_row_length")?)?;
        let nrows = attrs.int_opt("nrows")?.map(|n| non_negative("nrows", n)).transpose()?;
        Ok(Self::new(length, nrows))
    }

    /// The number of rows for `nvals` values, checking that they split evenly.
    fn rows_for(&self, nvals: usize) -> Result<usize> {
        const OP: &str = "from_uniform_row_length";
        let length = self.uniform_row_length;
        let nrows = match self.nrows {
            Some(n) => n,
            None if length == 0 => 0,
            None => nvals / length,
        };
        if length.checked_mul(nrows) != Some(nvals) {
            return Err(Error::partition(
                OP,
                format!("{nvals} values do not make {nrows} rows of uniform length {length}"),
            ));
        }
        Ok(nrows)
    }
}

impl Op for FromUniformRowLength {
    fn name(&self) -> String {
        match self.nrows {
            Some(n) => format!("FromUniformRowLength{{uniform_row_length={}, nrows={n}}}", self.uniform_row_length),
            None => format!("FromUniformRowLength{{uniform_row_length={}, nrows=None}}", self.uniform_row_length),
        }
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_uniform_row_length";
        expect_arity(OP, inputs, 1..=1)?;
        let nrows = match inputs[0].dims().first() {
            Some(&Dim::Known(nvals)) => Dim::Known(self.rows_for(nvals)?),
            _ => Dim::from_option(self.nrows),
        };
        Ok(vec![with_outer_type(OP, &inputs[0], nrows)?.with_dim(1, Dim::UniformRows(self.uniform_row_length))?])
    }
    fn keeps_uniform_rows(&self) -> bool {
        // The new partition is uniform; the values' own partitions are kept as they are.
        true
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_uniform_row_length";
        let [values] = fixed_inputs(OP, inputs)?;
        if values.rank() == 0 {
            return Err(Error::partition(OP, "input 0 (values) must have rank >= 1, got a scalar"));
        }
        let nrows = self.rows_for(values.nrows())?;
        check_rows(ctx, OP, nrows)?;
        let rows = RowPartition::from_uniform_row_length(self.uniform_row_length, nrows)?;
        one(values.with_outer_partitions(&[rows])?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

// ---------------------------------------------------------------------------------------------
// Part 2: row starts / limits, values, nested splits, size, rank, segment ids.

/// `from_row_starts(values, starts)` / `from_row_limits(values, limits)`
/// (`tf.RaggedTensor.from_row_starts` / `from_row_limits`): the splits are `starts + [nvals]` or
/// `[0] + limits`, validated like any row splits (`invalid_row_partition`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FromRowBounds {
    /// The input holds row limits (ends) instead of row starts.
    pub limits: bool,
}

impl FromRowBounds {
    /// `from_row_starts` (`limits` false) or `from_row_limits`.
    pub fn new(limits: bool) -> Self {
        FromRowBounds { limits }
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(limits: bool, attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(FromRowBounds { limits })
    }
    fn op_name(&self) -> &'static str {
        if self.limits {
            "from_row_limits"
        } else {
            "from_row_starts"
        }
    }
}

impl Op for FromRowBounds {
    fn name(&self) -> String {
        if self.limits { "FromRowLimits" } else { "FromRowStarts" }.into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.op_name();
        expect_arity(op, inputs, 2..=2)?;
        expect_int_vector(op, 1, &inputs[1])?;
        Ok(vec![with_outer_type(op, &inputs[0], inputs[1].dims()[0])?])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.op_name();
        let [values, bounds] = fixed_inputs(op, inputs)?;
        let what = if self.limits { "row limits" } else { "row starts" };
        let bounds = int_vector_input(op, 1, what, bounds)?;
        if values.rank() == 0 {
            return Err(Error::partition(op, "input 0 (values) must have rank >= 1, got a scalar"));
        }
        let nvals = values.nrows() as i64;
        let mut splits = ctx.try_vec::<i64>(op, bounds.len() + 1)?;
        if self.limits {
            splits.push(0);
            splits.extend_from_slice(&bounds);
            if let Some(&last) = bounds.last() {
                if last != nvals {
                    return Err(Error::partition(
                        op,
                        format!("input 1 (row limits) ends at {last}, but input 0 (values) has {nvals} rows"),
                    ));
                }
            }
        } else {
            splits.extend_from_slice(&bounds);
            if let Some(&first) = bounds.first() {
                if first != 0 {
                    return Err(Error::partition(op, format!("input 1 (row starts) must start at 0, got {first}")));
                }
            }
            splits.push(nvals);
        }
        if bounds.is_empty() && nvals != 0 {
            return Err(Error::partition(op, format!("no rows for the {nvals} rows of input 0 (values)")));
        }
        if bounds.is_empty() {
            splits = vec![0];
        }
        one(RaggedTensor::from_row_splits(values.clone(), splits)
            .map_err(|e| at_input(e, op, &format!("input 1 ({what})")))?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

/// `ragged.segment_ids_to_row_splits(segment_ids)` (`tf.ragged.segment_ids_to_row_splits`):
/// `[0] + cumsum(bincount(ids, minlength=num_segments))`, in `out_type` (the ids' dtype unless
/// given). A negative id is `invalid_row_partition`; ids at or past `num_segments` count too (as
/// `bincount` does). Like TensorFlow, the ids are not checked to be sorted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SegmentIdsToRowSplits {
    /// The least number of segments (rows).
    pub num_segments: Option<usize>,
    /// int32 or int64 (`None`: the ids' dtype).
    pub out_type: Option<DType>,
}

const SEGMENT_IDS_TO_ROW_SPLITS: &str = "ragged.segment_ids_to_row_splits";

impl SegmentIdsToRowSplits {
    /// The op with `num_segments` (at least `max id + 1` rows) and the ids' dtype.
    pub fn new(num_segments: Option<usize>) -> Self {
        SegmentIdsToRowSplits { num_segments, out_type: None }
    }
    /// From graph-file attributes: `num_segments` (optional, >= 0), `out_type` (optional).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["num_segments", "out_type"])?;
        let num_segments = attrs
            .int_opt("num_segments")?
            .map(|n| {
                usize::try_from(n).map_err(|_| {
                    Error::argument(SEGMENT_IDS_TO_ROW_SPLITS, format!("num_segments must be >= 0, got {n}"))
                })
            })
            .transpose()?;
        let out_type = match attrs.str_opt("out_type")? {
            None => None,
            Some(_) => Some(crate::util::index_dtype_attr(attrs, "out_type", DType::I64)?),
        };
        Ok(SegmentIdsToRowSplits { num_segments, out_type })
    }
}

impl Op for SegmentIdsToRowSplits {
    fn name(&self) -> String {
        let show = |v: Option<String>| v.unwrap_or_else(|| "None".into());
        format!(
            "SegmentIdsToRowSplits{{num_segments={}, out_type={}}}",
            show(self.num_segments.map(|n| n.to_string())),
            show(self.out_type.map(|t| t.to_string()))
        )
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = SEGMENT_IDS_TO_ROW_SPLITS;
        expect_arity(op, inputs, 1..=1)?;
        crate::util::expect_dtype(op, 0, &inputs[0], &[DType::I32, DType::I64], "int32 or int64 (segment ids)")?;
        crate::util::expect_dense_rank(op, 0, &inputs[0], 1)?;
        Ok(vec![TensorType::vector(self.out_type.unwrap_or(inputs[0].dtype()))])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = SEGMENT_IDS_TO_ROW_SPLITS;
        let [ids] = fixed_inputs(op, inputs)?;
        let out_type = self.output_types(&[TensorType::of(ids)])?.remove(0).dtype();
        let ids = int_vector_input(op, 0, "segment ids", ids)?;
        let mut nrows = self.num_segments.unwrap_or(0);
        for (i, &id) in ids.iter().enumerate() {
            let id = usize::try_from(id)
                .map_err(|_| Error::partition(op, format!("segment_ids[{i}] = {id} is negative")))?;
            nrows = nrows.max(id.saturating_add(1));
        }
        check_rows(ctx, op, nrows)?;
        let mut counts = ctx.try_vec::<i64>(op, nrows + 1)?;
        counts.resize(nrows + 1, 0);
        for &id in &ids {
            counts[id as usize + 1] += 1;
        }
        for r in 1..counts.len() {
            counts[r] += counts[r - 1];
        }
        let len = counts.len();
        one(crate::util::index_tensor(op, "row_splits", vec![len], counts, out_type)?.into())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
