//! Row partition accessors: [`RowSplits`], [`RowLengths`], [`Nrows`], [`FlatValues`],
//! [`BoundingShape`], [`Values`], [`Size`], [`Rank`] and the rest.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties};

use crate::structure::build_partitions::int64_vector;
use crate::util::{fixed_inputs, normalize_axis, one};

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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "row_lengths";
        let [x] = fixed_inputs(OP, inputs)?;
        let axis = normalize_axis(OP, self.axis, x.rank())?;
        if axis == 0 {
            return one(DenseTensor::scalar(x.nrows() as i64).into());
        }
        if let Some(uniform) = axis.checked_sub(x.ragged_rank()).filter(|&j| j > 0) {
            // A uniform axis gets one length per item above it, even where the items are empty.
            ctx.checked_len(OP, &x.flat_values().shape()[..uniform])?;
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("flat_values", inputs)?;
        one(x.flat_values().clone().into())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("bounding_shape", inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let bounds = x.bounding_shape();
        let sizes = self
            .dims(x.rank())?
            .into_iter()
            .map(|d| i64::try_from(bounds[d]).map_err(|_| Error::value("bounding_shape", "a size past int64")))
            .collect::<Result<Vec<i64>>>()?;
        let shape = match self.axis {
            BoundingAxes::One(_) => vec![],
            _ => vec![sizes.len()],
        };
        one(crate::util::index_tensor("bounding_shape", "size", shape, sizes, self.out_type)?.into())
    }
    fn as_any(&self) -> &dyn Any {
        self
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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

    crate::grad::structure::movement_vjp_method!();
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
