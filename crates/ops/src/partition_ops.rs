//! Partition ops: `identity`, the `tf.RaggedTensor.from_*` constructors that add ragged dimensions
//! (validating their row partitions), and the accessors that read partitions back (`row_splits`,
//! `row_lengths`, `value_rowids`, `nrows`, `flat_values`, `bounding_shape`, `row_starts`,
//! `row_limits`, `values`, `nested_row_splits`), `size`, `rank` and
//! `ragged.segment_ids_to_row_splits`.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Dim, Error, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties, OpRef};

use crate::util::{expect_int_vector, fixed_inputs, int_vector_input, normalize_axis, one, shared};

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    Some(match name {
        "identity" => shared(Identity::from_attrs(attrs)),
        "from_row_splits" => shared(FromRowSplits::from_attrs(attrs)),
        "from_row_lengths" => shared(FromRowLengths::from_attrs(attrs)),
        "from_value_rowids" => shared(FromValueRowids::from_attrs(attrs)),
        "from_nested_row_splits" => shared(FromNestedRowSplits::from_attrs(attrs)),
        "from_uniform_row_length" => shared(FromUniformRowLength::from_attrs(attrs)),
        "row_splits" => shared(RowSplits::from_attrs(attrs)),
        "row_lengths" => shared(RowLengths::from_attrs(attrs)),
        "value_rowids" => shared(ValueRowids::from_attrs(attrs)),
        "nrows" => shared(Nrows::from_attrs(attrs)),
        "flat_values" => shared(FlatValues::from_attrs(attrs)),
        "bounding_shape" => shared(BoundingShape::from_attrs(attrs)),
        "from_row_starts" => shared(FromRowBounds::from_attrs(false, attrs)),
        "from_row_limits" => shared(FromRowBounds::from_attrs(true, attrs)),
        "row_starts" => shared(RowBounds::from_attrs(false, attrs)),
        "row_limits" => shared(RowBounds::from_attrs(true, attrs)),
        "values" => shared(Values::from_attrs(attrs)),
        "nested_row_splits" => shared(NestedRowSplits::from_attrs(attrs)),
        "size" => shared(Size::from_attrs(attrs)),
        "rank" => shared(Rank::from_attrs(attrs)),
        "ragged.segment_ids_to_row_splits" => shared(SegmentIdsToRowSplits::from_attrs(attrs)),
        _ => return None,
    })
}

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
fn int64_vector(values: &[i64]) -> RaggedTensor {
    DenseTensor::vector(values.to_vec()).into()
}

/// Refuses a row count that would make a partition larger than [`DenseTensor::MAX_ELEMENTS`].
fn check_rows(op: &str, nrows: usize) -> Result<()> {
    DenseTensor::checked_len(op, &[nrows]).map(|_| ())
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
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("identity", inputs)?;
        one(x.clone())
    }
    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: true, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Free }
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
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_row_splits";
        let [values, splits] = fixed_inputs(OP, inputs)?;
        let splits = int_vector_input(OP, 1, "row splits", splits)?;
        one(RaggedTensor::from_row_splits(values.clone(), splits)
            .map_err(|e| at_input(e, OP, "input 1 (row splits)"))?)
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
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_row_lengths";
        let [values, lengths] = fixed_inputs(OP, inputs)?;
        let lengths = int_vector_input(OP, 1, "row lengths", lengths)?;
        one(RaggedTensor::from_row_lengths(values.clone(), &lengths)
            .map_err(|e| at_input(e, OP, "input 1 (row lengths)"))?)
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
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_value_rowids";
        let [values, rowids] = fixed_inputs(OP, inputs)?;
        let rowids = int_vector_input(OP, 1, "value row ids", rowids)?;
        // The largest row id sizes the splits: refuse absurd ids before allocating for them.
        let needed = rowids.iter().copied().max().map_or(0, |m| m.max(-1).saturating_add(1) as usize);
        check_rows(OP, needed.max(self.nrows.unwrap_or(0)))?;
        one(RaggedTensor::from_value_rowids(values.clone(), &rowids, self.nrows)
            .map_err(|e| at_input(e, OP, "input 1 (value row ids)"))?)
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
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_uniform_row_length";
        let [values] = fixed_inputs(OP, inputs)?;
        if values.rank() == 0 {
            return Err(Error::partition(OP, "input 0 (values) must have rank >= 1, got a scalar"));
        }
        let nrows = self.rows_for(values.nrows())?;
        check_rows(OP, nrows)?;
        let rows = RowPartition::from_uniform_row_length(self.uniform_row_length, nrows)?;
        one(values.with_outer_partitions(&[rows])?)
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

// ---------------------------------------------------------------------------------------------
// Accessors.

/// Fails unless `ty` (input 0 of `op`) has a ragged dimension.
fn expect_ragged(op: &str, ty: &TensorType) -> Result<()> {
    if ty.is_ragged() {
        return Ok(());
    }
    Err(Error::argument(op, format!("input 0 must be a ragged tensor, got the dense {ty}")))
}

/// Fails unless `ty` (input 0 of `op`) has an outer dimension.
fn expect_rows(op: &str, ty: &TensorType) -> Result<()> {
    if ty.rank() >= 1 {
        return Ok(());
    }
    Err(Error::argument(op, format!("input 0 must have rank >= 1, got the scalar {ty}")))
}

/// `row_splits(x)`: the outermost row splits (int64 `[nrows + 1]`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowSplits;

impl RowSplits {
    /// The op.
    pub fn new() -> Self {
        RowSplits
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(RowSplits)
    }
}

impl Op for RowSplits {
    fn name(&self) -> String {
        "RowSplits".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("row_splits", inputs, 1..=1)?;
        expect_ragged("row_splits", &inputs[0])?;
        let len = inputs[0].dims()[0].size().map(|n| n + 1);
        Ok(vec![TensorType::dense(DType::I64, &[len])])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("row_splits", inputs)?;
        one(int64_vector(x.row_splits()?))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `row_lengths(x)` with `axis` (default 1): `tf.RaggedTensor.row_lengths(axis)`. Axis 0 gives the
/// number of rows; a ragged axis gives the row lengths of that dimension (ragged for axis > 1);
/// a uniform axis gives its size, repeated over the dimensions above it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowLengths {
    axis: i64,
}

impl Default for RowLengths {
    fn default() -> Self {
        RowLengths { axis: 1 }
    }
}

impl RowLengths {
    /// The op for `axis` (negative counts from the end).
    pub fn new(axis: i64) -> Self {
        RowLengths { axis }
    }
    /// From graph-file attributes: `axis` (optional, default 1).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis"])?;
        Ok(RowLengths { axis: attrs.int_opt("axis")?.unwrap_or(1) })
    }
}

impl Op for RowLengths {
    fn name(&self) -> String {
        format!("RowLengths{{axis={}}}", self.axis)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "row_lengths";
        expect_arity(OP, inputs, 1..=1)?;
        let x = &inputs[0];
        let axis = normalize_axis(OP, self.axis, x.rank())?;
        if axis == 0 {
            return Ok(vec![TensorType::scalar(DType::I64)]);
        }
        // Lengths of dimension `axis` are indexed by the dimensions above it.
        let ragged_rank = (axis - 1).min(x.ragged_rank());
        Ok(vec![TensorType::new(DType::I64, ragged_rank, x.dims()[..axis].to_vec())?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "row_lengths";
        let [x] = fixed_inputs(OP, inputs)?;
        let axis = normalize_axis(OP, self.axis, x.rank())?;
        if axis == 0 {
            return one(DenseTensor::scalar(x.nrows() as i64).into());
        }
        if let Some(uniform) = axis.checked_sub(x.ragged_rank()).filter(|&j| j > 0) {
            // A uniform axis gets one length per item above it, even where the items are empty.
            DenseTensor::checked_len(OP, &x.flat_values().shape()[..uniform])?;
        }
        one(x.row_lengths(axis as i64)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `value_rowids(x)`: the row of every value of the outermost ragged dimension (int64).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValueRowids;

impl ValueRowids {
    /// The op.
    pub fn new() -> Self {
        ValueRowids
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(ValueRowids)
    }
}

impl Op for ValueRowids {
    fn name(&self) -> String {
        "ValueRowids".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("value_rowids", inputs, 1..=1)?;
        expect_ragged("value_rowids", &inputs[0])?;
        Ok(vec![TensorType::vector(DType::I64)])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("value_rowids", inputs)?;
        one(int64_vector(x.value_rowids()?))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `nrows(x)`: the number of rows (int64 scalar).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Nrows;

impl Nrows {
    /// The op.
    pub fn new() -> Self {
        Nrows
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Nrows)
    }
}

impl Op for Nrows {
    fn name(&self) -> String {
        "Nrows".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("nrows", inputs, 1..=1)?;
        expect_rows("nrows", &inputs[0])?;
        Ok(vec![TensorType::scalar(DType::I64)])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("nrows", inputs)?;
        if x.rank() == 0 {
            return Err(Error::argument("nrows", "input 0 must have rank >= 1, got a scalar"));
        }
        one(DenseTensor::scalar(x.nrows() as i64).into())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `flat_values(x)`: every value without any partition (`[nvals, inner...]`); a dense tensor is
/// its own flat values.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlatValues;

impl FlatValues {
    /// The op.
    pub fn new() -> Self {
        FlatValues
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(FlatValues)
    }
}

impl Op for FlatValues {
    fn name(&self) -> String {
        "FlatValues".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("flat_values", inputs, 1..=1)?;
        let x = &inputs[0];
        if !x.is_ragged() {
            return Ok(vec![x.clone()]);
        }
        let mut dims = vec![Dim::Unknown];
        dims.extend_from_slice(x.inner_dims());
        Ok(vec![TensorType::new(x.dtype(), 0, dims)?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("flat_values", inputs)?;
        one(x.flat_values().clone().into())
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

/// Which sizes `bounding_shape` gives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum BoundingAxes {
    /// Every dim: a vector of `rank` sizes.
    #[default]
    All,
    /// One dim: a scalar.
    One(i64),
    /// These dims, in order: a vector.
    List(Vec<i64>),
}

/// `bounding_shape(x)` (`RaggedTensor.bounding_shape(axis=, out_type=)`): the smallest dense shape
/// holding every row, or the sizes of the dims `axis` names; `out_type` int64 (default) or int32.
/// As in TensorFlow, an axis must lie in `0..rank` (a negative one is `index_out_of_range`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoundingShape {
    /// The dims whose sizes are given.
    pub axis: BoundingAxes,
    /// int64 or int32.
    pub out_type: DType,
}

impl Default for BoundingShape {
    fn default() -> Self {
        BoundingShape { axis: BoundingAxes::All, out_type: DType::I64 }
    }
}

impl BoundingShape {
    /// Every dim's size, int64.
    pub fn new() -> Self {
        Self::default()
    }
    /// The sizes of `axis`, as `out_type`.
    pub fn with(axis: BoundingAxes, out_type: DType) -> Self {
        BoundingShape { axis, out_type }
    }
    /// From graph-file attributes: `axis` (an integer, a list of integers, or null) and
    /// `out_type` (`int64` default, `int32`).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "out_type"])?;
        let axis = match attrs.get("axis") {
            None | Some(ragtime_graph::Attr::Null) => BoundingAxes::All,
            Some(ragtime_graph::Attr::Int(a)) => BoundingAxes::One(*a),
            Some(_) => BoundingAxes::List(attrs.ints_opt("axis")?.unwrap_or_default()),
        };
        Ok(BoundingShape { axis, out_type: crate::util::index_dtype_attr(attrs, "out_type", DType::I64)? })
    }
    /// The listed dims, checked against `rank` (`index_out_of_range` outside `0..rank`).
    fn dims(&self, rank: usize) -> Result<Vec<usize>> {
        let listed = match &self.axis {
            BoundingAxes::All => return Ok((0..rank).collect()),
            BoundingAxes::One(a) => std::slice::from_ref(a),
            BoundingAxes::List(list) => list.as_slice(),
        };
        listed
            .iter()
            .map(|&a| match usize::try_from(a) {
                Ok(d) if d < rank => Ok(d),
                _ => Err(Error::out_of_range_at(
                    "bounding_shape",
                    a,
                    0,
                    rank,
                    format!("attribute axis: the dims of a tensor of rank {rank} are 0..{rank}"),
                )),
            })
            .collect()
    }
}

impl Op for BoundingShape {
    fn name(&self) -> String {
        let axis = match &self.axis {
            BoundingAxes::All => "None".to_string(),
            BoundingAxes::One(a) => a.to_string(),
            BoundingAxes::List(list) => format!("{list:?}"),
        };
        format!("BoundingShape{{axis={axis}, out_type={}}}", self.out_type)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("bounding_shape", inputs, 1..=1)?;
        if !matches!(self.out_type, DType::I32 | DType::I64) {
            return Err(Error::argument(
                "bounding_shape",
                format!("out_type must be int32 or int64, got {}", self.out_type),
            ));
        }
        let dims = self.dims(inputs[0].rank())?;
        Ok(vec![match self.axis {
            BoundingAxes::One(_) => TensorType::scalar(self.out_type),
            _ => TensorType::dense(self.out_type, &[Some(dims.len())]),
        }])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("bounding_shape", inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let bounds = x.bounding_shape();
        let sizes: Vec<i64> = self.dims(x.rank())?.into_iter().map(|d| bounds[d] as i64).collect();
        let out = match self.axis {
            BoundingAxes::One(_) => DenseTensor::scalar(sizes[0]),
            _ => DenseTensor::vector(sizes),
        };
        // Sizes are below `DenseTensor::MAX_ELEMENTS` (2^31), so int32 holds them.
        one(out.cast(self.out_type)?.into())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
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
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.op_name();
        let [values, bounds] = fixed_inputs(op, inputs)?;
        let what = if self.limits { "row limits" } else { "row starts" };
        let bounds = int_vector_input(op, 1, what, bounds)?;
        if values.rank() == 0 {
            return Err(Error::partition(op, "input 0 (values) must have rank >= 1, got a scalar"));
        }
        let nvals = values.nrows() as i64;
        let mut splits = ragtime_core::limits::try_vec::<i64>(op, bounds.len() + 1)?;
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

/// `row_starts(x)` / `row_limits(x)` (`RaggedTensor.row_starts()` / `row_limits()`): where each
/// row of the outermost ragged dim starts / ends in the next level (int64 `[nrows]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowBounds {
    /// Row limits (ends) instead of row starts.
    pub limits: bool,
}

impl RowBounds {
    /// `row_starts` (`limits` false) or `row_limits`.
    pub fn new(limits: bool) -> Self {
        RowBounds { limits }
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(limits: bool, attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(RowBounds { limits })
    }
    fn op_name(&self) -> &'static str {
        if self.limits {
            "row_limits"
        } else {
            "row_starts"
        }
    }
}

impl Op for RowBounds {
    fn name(&self) -> String {
        if self.limits { "RowLimits" } else { "RowStarts" }.into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(self.op_name(), inputs, 1..=1)?;
        expect_ragged(self.op_name(), &inputs[0])?;
        Ok(vec![TensorType::dense(DType::I64, &[inputs[0].dims()[0].size()])])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs(self.op_name(), inputs)?;
        let splits = x.row_splits()?;
        one(int64_vector(if self.limits { &splits[1..] } else { &splits[..splits.len() - 1] }))
    }
    fn properties(&self) -> OpProperties {
        OpProperties { cost: Cost::Free, ..OpProperties::default() }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `values(x)` (`RaggedTensor.values`): the rows of the outermost ragged dim concatenated, one
/// ragged level less (dense for ragged rank 1). Refuses a dense tensor (`invalid_argument`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Values;

impl Values {
    /// The op.
    pub fn new() -> Self {
        Values
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Values)
    }
}

impl Op for Values {
    fn name(&self) -> String {
        "Values".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("values", inputs, 1..=1)?;
        let x = &inputs[0];
        expect_ragged("values", x)?;
        let mut dims = vec![Dim::Unknown];
        dims.extend_from_slice(&x.dims()[2..]);
        Ok(vec![TensorType::new(x.dtype(), x.ragged_rank() - 1, dims)?])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("values", inputs)?;
        if x.is_dense() {
            return Err(Error::argument("values", "input 0 must be a ragged tensor, got a dense one"));
        }
        one(RaggedTensor::new(x.flat_values().clone(), x.partitions()[1..].to_vec())?)
    }
    fn properties(&self) -> OpProperties {
        OpProperties { cost: Cost::Free, ..OpProperties::default() }
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

/// `nested_row_splits(x)` (`RaggedTensor.nested_row_splits`): one int64 splits vector per ragged
/// dim, outermost first (as many outputs as the ragged rank; a dense tensor has none).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NestedRowSplits;

impl NestedRowSplits {
    /// The op.
    pub fn new() -> Self {
        NestedRowSplits
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(NestedRowSplits)
    }
}

impl Op for NestedRowSplits {
    fn name(&self) -> String {
        "NestedRowSplits".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("nested_row_splits", inputs, 1..=1)?;
        let x = &inputs[0];
        let outer = x.dims().first().and_then(|d| d.size()).map(|n| n + 1);
        Ok((0..x.ragged_rank()).map(|k| TensorType::dense(DType::I64, &[if k == 0 { outer } else { None }])).collect())
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("nested_row_splits", inputs)?;
        Ok(x.partitions().iter().map(|p| int64_vector(p.row_splits())).collect())
    }
    fn properties(&self) -> OpProperties {
        OpProperties { cost: Cost::Free, ..OpProperties::default() }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `size(x)` (`tf.size`): the number of elements (scalar, `out_type` int32 by default, or int64).
/// A count that does not fit int32 is `invalid_value`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Size {
    /// int32 or int64.
    pub out_type: DType,
}

impl Size {
    /// `size` giving `out_type` (int32 or int64).
    pub fn new(out_type: DType) -> Self {
        Size { out_type }
    }
    /// From graph-file attributes: `out_type` (`int32` default, `int64`).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["out_type"])?;
        Ok(Size { out_type: crate::util::index_dtype_attr(attrs, "out_type", DType::I32)? })
    }
}

impl Op for Size {
    fn name(&self) -> String {
        format!("Size{{out_type={}}}", self.out_type)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("size", inputs, 1..=1)?;
        if !matches!(self.out_type, DType::I32 | DType::I64) {
            return Err(Error::argument("size", format!("out_type must be int32 or int64, got {}", self.out_type)));
        }
        Ok(vec![TensorType::scalar(self.out_type)])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("size", inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let n = x.flat_values().len();
        if self.out_type == DType::I32 {
            let n = i32::try_from(n)
                .map_err(|_| Error::value("size", format!("{n} elements do not fit the int32 out_type")))?;
            return one(DenseTensor::scalar(n).into());
        }
        one(DenseTensor::scalar(n as i64).into())
    }
    fn properties(&self) -> OpProperties {
        OpProperties { cost: Cost::Free, can_fail: self.out_type == DType::I32, ..OpProperties::default() }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `rank(x)` (`tf.rank`): the number of dimensions, ragged ones included (int32 scalar).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Rank;

impl Rank {
    /// The op.
    pub fn new() -> Self {
        Rank
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Rank)
    }
}

impl Op for Rank {
    fn name(&self) -> String {
        "Rank".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("rank", inputs, 1..=1)?;
        Ok(vec![TensorType::scalar(DType::I32)])
    }
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("rank", inputs)?;
        // The rank is at most `limits::MAX_RANK`.
        one(DenseTensor::scalar(x.rank() as i32).into())
    }
    fn properties(&self) -> OpProperties {
        OpProperties { cost: Cost::Free, ..OpProperties::default() }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
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
    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
        check_rows(op, nrows)?;
        let mut counts = ragtime_core::limits::try_vec::<i64>(op, nrows + 1)?;
        counts.resize(nrows + 1, 0);
        for &id in &ids {
            counts[id as usize + 1] += 1;
        }
        for r in 1..counts.len() {
            counts[r] += counts[r - 1];
        }
        one(DenseTensor::vector(counts).cast(out_type)?.into())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Test helpers shared by the unit tests of this module and of `structure`.
#[cfg(test)]
pub(crate) mod testing {
    use std::collections::BTreeMap;

    use ragtime_core::{DenseTensor, RaggedTensor, Result, TensorType};
    use ragtime_graph::{Attr, Attrs, OpRef};

    /// Graph-file attributes for `op`.
    pub fn attrs(op: &str, pairs: &[(&str, Attr)]) -> Attrs {
        Attrs::new(op, pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>())
    }

    /// The op called `name` in graph files, built through the registry.
    pub fn build(name: &str, pairs: &[(&str, Attr)]) -> OpRef {
        crate::registry::op_from_name(name, &attrs(name, pairs)).expect("valid op and attributes")
    }

    /// Infers and performs `name` on `inputs`; the inferred types must accept the computed values.
    pub fn run(name: &str, pairs: &[(&str, Attr)], inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = build(name, pairs);
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let out_types = op.output_types(&types)?;
        let out = op.perform(inputs)?;
        assert_eq!(out.len(), out_types.len(), "{name}: output count");
        for (t, v) in out_types.iter().zip(&out) {
            assert!(t.accepts(&TensorType::of(v)), "{name}: inferred {t} but computed {} = {v}", TensorType::of(v));
        }
        Ok(out)
    }

    /// Runs a one-output op and returns its value.
    pub fn run1(name: &str, pairs: &[(&str, Attr)], inputs: &[RaggedTensor]) -> Result<RaggedTensor> {
        Ok(run(name, pairs, inputs)?.remove(0))
    }

    /// Asserts equal dtype, structure and values.
    #[track_caller]
    pub fn assert_value(got: &RaggedTensor, want: &RaggedTensor) {
        assert!(got.equals(want), "expected {want}, got {got}");
    }

    /// A dense int64 vector.
    pub fn i64s(v: &[i64]) -> RaggedTensor {
        DenseTensor::vector(v.to_vec()).into()
    }

    /// A dense int32 vector.
    pub fn i32s(v: &[i32]) -> RaggedTensor {
        DenseTensor::vector(v.to_vec()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use ragtime_core::{ragged, ErrorKind, Literal};
    use ragtime_graph::Attr;

    #[test]
    fn from_row_splits_lengths_rowids() {
        // seed_walkthrough/from_row_splits, from_row_lengths, from_value_rowids(_nrows)
        let values = i32s(&[3, 1, 4, 1, 5, 9, 2]);
        let want = ragged![[3, 1, 4, 1], [], [5, 9], [2]].unwrap();
        assert_value(&run("from_row_splits", &[], &[values.clone(), i64s(&[0, 4, 4, 6, 7])]).unwrap()[0], &want);
        assert_value(&run("from_row_lengths", &[], &[values.clone(), i32s(&[4, 0, 2, 1])]).unwrap()[0], &want);
        let rowids = i64s(&[0, 0, 0, 0, 2, 2, 3]);
        assert_value(&run("from_value_rowids", &[], &[values.clone(), rowids.clone()]).unwrap()[0], &want);
        let out = run("from_value_rowids", &[("nrows", Attr::Int(6))], &[values, rowids]).unwrap();
        assert_value(&out[0], &ragged![[3, 1, 4, 1], [], [5, 9], [2], [], []].unwrap());
    }

    #[test]
    fn from_row_splits_of_ragged_values_adds_an_outer_dimension() {
        let values = ragged![[1, 2], [], [3]].unwrap();
        let out = run("from_row_splits", &[], &[values, i64s(&[0, 2, 3])]).unwrap();
        assert_value(&out[0], &ragged![[[1, 2], []], [[3]]].unwrap());
    }

    #[test]
    fn bad_partitions_are_invalid_row_partition() {
        // seed_walkthrough/bad_splits_*, bad_lengths_sum, bad_rowids_unsorted
        let values = i32s(&[1, 2, 3]);
        for splits in [&[0, 2, 1, 3][..], &[0, 2, 5], &[1, 2, 3], &[]] {
            let e = run("from_row_splits", &[], &[values.clone(), i64s(splits)]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidRowPartition, "splits {splits:?}: {e}");
        }
        let e = run("from_row_lengths", &[], &[values.clone(), i64s(&[1, 1])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
        let e = run("from_row_lengths", &[], &[values.clone(), i64s(&[4, -1])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
        let e = run("from_value_rowids", &[], &[values.clone(), i64s(&[1, 0, 2])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
        let e = run("from_value_rowids", &[("nrows", Attr::Int(2))], &[values.clone(), i64s(&[0, 1, 2])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
        let e = run("from_value_rowids", &[], &[values, i64s(&[0, 1, i64::MAX])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "a huge row id is refused before allocating: {e}");
    }

    #[test]
    fn splits_must_be_integer_vectors() {
        let op = build("from_row_splits", &[]);
        let values = TensorType::vector(DType::I32);
        let e = op.infer(&[values.clone(), TensorType::vector(DType::F32)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TypeMismatch);
        let e = op.infer(&[values, TensorType::dense(DType::I64, &[Some(2), Some(2)])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
        let e = op.infer(&[TensorType::scalar(DType::I32), TensorType::vector(DType::I64)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
        let e = op.infer(&[TensorType::vector(DType::I32)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn from_nested_row_splits_builds_every_level() {
        // seed_walkthrough/from_nested_row_splits
        let flat = i32s(&[10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
        let out = run("from_nested_row_splits", &[], &[flat, i64s(&[0, 1, 1, 5]), i64s(&[0, 3, 3, 5, 9, 10])]).unwrap();
        assert_value(&out[0], &ragged![[[10, 11, 12]], [], [[], [13, 14], [15, 16, 17, 18], [19]]].unwrap());
        let t = build("from_nested_row_splits", &[])
            .infer(&[
                TensorType::vector(DType::I32),
                TensorType::dense(DType::I64, &[Some(4)]),
                TensorType::vector(DType::I64),
            ])
            .unwrap();
        assert_eq!(t[0].to_string(), "int32[3, *, *]");
    }

    #[test]
    fn from_nested_row_splits_names_the_bad_level() {
        let flat = i32s(&[1, 2, 3]);
        let e = run("from_nested_row_splits", &[], &[flat, i64s(&[0, 1, 2]), i64s(&[0, 1, 2])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
        assert!(e.to_string().contains("input 2"), "message should name input 2: {e}");
    }

    #[test]
    fn lod_two_level() {
        // partitions/lod_two_level
        let flat: RaggedTensor = DenseTensor::from_vec(vec![7, 2], (1..=14).collect::<Vec<i32>>()).unwrap().into();
        let y = run("from_nested_row_splits", &[], &[flat, i64s(&[0, 2, 3]), i64s(&[0, 2, 4, 7])]).unwrap().remove(0);
        assert_eq!(y.ragged_rank(), 2);
        let l0 = run("row_lengths", &[("axis", Attr::Int(1))], std::slice::from_ref(&y)).unwrap().remove(0);
        assert_value(&l0, &i64s(&[2, 1]));
        let l1 = run("row_lengths", &[("axis", Attr::Int(2))], &[y]).unwrap().remove(0);
        let want = RaggedTensor::from_literal_typed(
            &Literal::from(vec![vec![2, 2], vec![3]]),
            Some(DType::I64),
            Some(1),
            None,
        )
        .unwrap();
        assert_value(&l1, &want);
    }

    #[test]
    fn from_uniform_row_length_groups_rows() {
        // seed_walkthrough/from_uniform_row_length
        let values = ragged![[10, 11, 12], [13, 14], [15, 16, 17, 18], [19]].unwrap();
        let out =
            run("from_uniform_row_length", &[("uniform_row_length", Attr::Int(2))], std::slice::from_ref(&values))
                .unwrap();
        assert_value(&out[0], &ragged![[[10, 11, 12], [13, 14]], [[15, 16, 17, 18], [19]]].unwrap());
        let e = run("from_uniform_row_length", &[("uniform_row_length", Attr::Int(3))], &[values]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
        let empty = run(
            "from_uniform_row_length",
            &[("uniform_row_length", Attr::Int(0)), ("nrows", Attr::Int(2))],
            &[i32s(&[])],
        )
        .unwrap();
        assert_eq!(empty[0].to_string(), "<Ragged int32 [[], []]>");
        let e = lookup(
            "from_uniform_row_length",
            &attrs("from_uniform_row_length", &[("uniform_row_length", Attr::Int(-1))]),
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    }

    #[test]
    fn partition_accessors() {
        // seed_walkthrough/partition_accessors
        let rt = ragged![[1, 2], [3, 4, 5], [6], [], [7]].unwrap();
        let get = |name: &str| run(name, &[], std::slice::from_ref(&rt)).unwrap().remove(0);
        assert_value(&get("row_splits"), &i64s(&[0, 2, 5, 6, 6, 7]));
        assert_value(&get("row_lengths"), &i64s(&[2, 3, 1, 0, 1]));
        assert_value(&get("value_rowids"), &i64s(&[0, 0, 1, 1, 1, 2, 4]));
        assert_value(&get("nrows"), &DenseTensor::scalar(5i64).into());
        assert_value(&get("flat_values"), &i32s(&[1, 2, 3, 4, 5, 6, 7]));
        assert_value(&get("bounding_shape"), &i64s(&[5, 3]));
    }

    #[test]
    fn accessors_on_strings_and_deeper_axes() {
        // seed_walkthrough/string_rank3_row_lengths and seed_walkthrough/bounding_shape
        let p = ragged![
            [["I", "have", "a", "cat"], ["His", "name", "is", "Mat"]],
            [["Do", "you", "want", "to", "come", "visit"], ["I'm", "free", "tomorrow"]]
        ]
        .unwrap();
        let y = run("row_lengths", &[("axis", Attr::Int(2))], std::slice::from_ref(&p)).unwrap().remove(0);
        assert_eq!(y.to_string(), "<Ragged int64 [[4, 4], [6, 3]]>");
        let y = run("row_lengths", &[("axis", Attr::Int(-1))], std::slice::from_ref(&p)).unwrap().remove(0);
        assert_eq!(y.to_string(), "<Ragged int64 [[4, 4], [6, 3]]>");
        let n = run("row_lengths", &[("axis", Attr::Int(0))], &[p]).unwrap().remove(0);
        assert_value(&n, &DenseTensor::scalar(2i64).into());
        let s = ragged![["Hi"], ["How", "are", "you"]].unwrap();
        assert_value(&run("bounding_shape", &[], &[s]).unwrap()[0], &i64s(&[2, 3]));
    }

    #[test]
    fn accessors_refuse_what_has_no_partition() {
        let dense = TensorType::dense(DType::I32, &[Some(2), Some(3)]);
        for name in ["row_splits", "value_rowids"] {
            let e = build(name, &[]).infer(std::slice::from_ref(&dense)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}");
        }
        let e = build("nrows", &[]).infer(&[TensorType::scalar(DType::I32)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e =
            build("row_lengths", &[("axis", Attr::Int(2))]).infer(&[TensorType::ragged(DType::I32, 1)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        // A dense tensor still has rows, flat values, a bounding shape and uniform row lengths.
        let x: RaggedTensor = DenseTensor::from_vec(vec![2, 3], vec![1, 2, 3, 4, 5, 6]).unwrap().into();
        assert_value(&run("row_lengths", &[], std::slice::from_ref(&x)).unwrap()[0], &i64s(&[3, 3]));
        assert_value(&run("nrows", &[], std::slice::from_ref(&x)).unwrap()[0], &DenseTensor::scalar(2i64).into());
        assert_value(&run("bounding_shape", &[], &[x]).unwrap()[0], &i64s(&[2, 3]));
    }

    #[test]
    fn flat_values_keep_inner_dims() {
        // seed_walkthrough/uniform_inner_dim
        let values: RaggedTensor =
            DenseTensor::from_vec(vec![6, 2], vec![1, 3, 0, 0, 1, 3, 5, 3, 3, 3, 1, 2]).unwrap().into();
        let y = run("from_row_splits", &[], &[values.clone(), i64s(&[0, 3, 4, 6])]).unwrap().remove(0);
        assert_eq!(TensorType::of(&y).to_string(), "int32[3, *, 2]");
        let fv = run("flat_values", &[], &[y]).unwrap().remove(0);
        assert_value(&fv, &values);
        let t = build("flat_values", &[]).infer(&[TensorType::ragged(DType::F32, 2).with_inner(&[Some(4)])]).unwrap();
        assert_eq!(t[0].to_string(), "float32[?, 4]");
    }

    #[test]
    fn identity_shares_the_value() {
        // seed_walkthrough/string_identity
        let s = ragged![["Let's", "build"], ["We", "can"]].unwrap();
        let out = run("identity", &[], std::slice::from_ref(&s)).unwrap();
        assert_value(&out[0], &s);
        assert!(out[0].partitions()[0].ptr_eq(&s.partitions()[0]));
    }

    #[test]
    fn names_carry_properties_and_unknown_attrs_are_refused() {
        assert_eq!(build("row_lengths", &[]).name(), "RowLengths{axis=1}");
        assert_eq!(build("from_value_rowids", &[("nrows", Attr::Int(6))]).name(), "FromValueRowids{nrows=6}");
        let e = lookup("nrows", &attrs("nrows", &[("axis", Attr::Int(0))])).unwrap().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(lookup("concat", &attrs("concat", &[])).is_none());
    }

    #[test]
    fn perform_refuses_wrong_input_counts() {
        let e = FromRowSplits::new().perform(&[i32s(&[1])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = FromNestedRowSplits::new().perform(&[]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }
}
