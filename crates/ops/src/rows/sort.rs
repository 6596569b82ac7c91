//! [`Sort`], [`Argsort`] and [`TopK`]: ordering values along the last axis.

use std::any::Any;

use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, Error, ExecContext, RaggedTensor, Result, RowPartition,
    TensorType,
};
use ragtime_graph::{Attrs, Cost, Graph, Op, OpProperties, VarId};

use crate::rows::lines::{expect_one_input, slice_of, total, Lines};
use crate::util::{fixed_inputs, one};

/// The sort direction of `sort` / `argsort`.
fn direction(op: &str, attrs: &Attrs) -> Result<bool> {
    match attrs.str_opt("direction")? {
        None | Some("ASCENDING") => Ok(false),
        Some("DESCENDING") => Ok(true),
        Some(other) => Err(Error::argument(op, format!("direction must be ASCENDING or DESCENDING, got `{other}`"))),
    }
}

fn last_axis_only(op: &str, attrs: &Attrs) -> Result<()> {
    match attrs.int_opt("axis")? {
        None | Some(-1) => Ok(()),
        Some(axis) => Err(Error::argument(op, format!("only axis -1 is supported, got {axis}"))),
    }
}

pub(crate) fn expect_sortable(op: &str, ty: &TensorType) -> Result<()> {
    if ty.dtype().is_numeric() {
        return Ok(());
    }
    Err(Error::dtype(op, format!("takes integer or float tensors, got {}", ty.dtype())))
}

/// The stable order of the positions `0..len` of a line: ascending, or descending with ties in
/// their original order (as TensorFlow sorts).
fn line_order<T: Element>(data: &[T], start: usize, len: usize, stride: usize, descending: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let at = |j: usize| &data[start + j * stride];
    if descending {
        order.sort_by(|&a, &b| total(at(b), at(a)));
    } else {
        order.sort_by(|&a, &b| total(at(a), at(b)));
    }
    order
}

/// `tf.sort` over the last axis, row by row (flat values with uniform inner dims); stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sort {
    /// Largest first.
    pub descending: bool,
}

impl Sort {
    /// The op.
    pub fn new(descending: bool) -> Self {
        Sort { descending }
    }

    /// From a graph file's node: `axis` (-1 only), `direction`.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "direction"])?;
        last_axis_only("sort", attrs)?;
        Ok(Sort { descending: direction("sort", attrs)? })
    }
}

impl Op for Sort {
    fn name(&self) -> String {
        format!("Sort{{{}}}", if self.descending { "DESCENDING" } else { "ASCENDING" })
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_one_input("sort", inputs)?;
        expect_sortable("sort", &inputs[0])?;
        Ok(vec![inputs[0].clone()])
    }

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>("sort", inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let lines = Lines::last_axis("sort", x)?;
        let shape = x.flat_values().shape().to_vec();
        let flat = dispatch_dtype!(x.dtype(),
            T => {
                let data = slice_of::<T>("sort", x)?;
                let mut out = data.to_vec();
                for (start, len) in lines.iter() {
                    for (j, src) in line_order(data, start, len, lines.stride, self.descending).into_iter().enumerate() {
                        out[start + j * lines.stride] = data[start + src * lines.stride];
                    }
                }
                DenseTensor::from_vec(shape, out)?
            },
            string => return Err(Error::dtype("sort", "takes integer or float tensors, got string")));
        one(x.with_flat_values(flat)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Expensive }
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        _outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        let (Some(g), [x]) = (output_grads.first().copied().flatten(), inputs) else {
            return Ok(vec![None; inputs.len()]);
        };
        if !graph.var(*x).is_some_and(|v| v.ty.dtype().is_float()) {
            return Ok(vec![None]);
        }
        let order = graph.apply(std::sync::Arc::new(Argsort::new(self.descending, true)), &[*x])?[0];
        Ok(vec![Some(crate::grad::structure::picked_by_value_vjp(graph, *x, order, g)?)])
    }
}

/// `tf.argsort` over the last axis, row by row: int32 positions within each row. TensorFlow
/// sorts stably whatever `stable` says, and so does this op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Argsort {
    /// Largest first.
    pub descending: bool,
    /// The `stable` attribute, kept for printing; ties keep their order either way.
    pub stable: bool,
}

impl Argsort {
    /// The op.
    pub fn new(descending: bool, stable: bool) -> Self {
        Argsort { descending, stable }
    }

    /// From a graph file's node: `axis` (-1 only), `direction`, `stable`.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "direction", "stable"])?;
        last_axis_only("argsort", attrs)?;
        Ok(Argsort { descending: direction("argsort", attrs)?, stable: attrs.bool_opt("stable")?.unwrap_or(false) })
    }
}

impl Op for Argsort {
    fn name(&self) -> String {
        format!(
            "Argsort{{{}{}}}",
            if self.descending { "DESCENDING" } else { "ASCENDING" },
            if self.stable { ", stable" } else { "" }
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_one_input("argsort", inputs)?;
        expect_sortable("argsort", &inputs[0])?;
        Ok(vec![inputs[0].clone().with_dtype(DType::I32)])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>("argsort", inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let lines = Lines::last_axis("argsort", x)?;
        let shape = x.flat_values().shape().to_vec();
        let mut out: Vec<i32> = ctx.try_vec("argsort", x.flat_values().len())?;
        out.resize(x.flat_values().len(), 0);
        dispatch_dtype!(x.dtype(),
            T => {
                let data = slice_of::<T>("argsort", x)?;
                for (start, len) in lines.iter() {
                    for (j, src) in line_order(data, start, len, lines.stride, self.descending).into_iter().enumerate() {
                        out[start + j * lines.stride] = i32::try_from(src).map_err(|_| {
                            Error::argument("argsort", format!("a row of {len} elements does not fit int32 positions"))
                        })?;
                    }
                }
            },
            string => return Err(Error::dtype("argsort", "takes integer or float tensors, got string")));
        one(x.with_flat_values(DenseTensor::from_vec(shape, out)?)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Expensive }
    }
}

/// `tf.math.top_k(row, min(k, len(row)))` row by row: outputs `values` and `indices` (int32),
/// largest first, ties lower index first; a row shorter than `k` gives a shorter row. With
/// uniform inner dims (and for dense tensors) it runs over the last dim, which must hold `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TopK {
    /// How many elements each row keeps.
    pub k: usize,
}

impl TopK {
    /// The op.
    pub fn new(k: usize) -> Self {
        TopK { k }
    }

    /// From a graph file's node: `k` (required, not negative).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["k"])?;
        let k = attrs.int("k")?;
        let k = usize::try_from(k).map_err(|_| Error::argument("top_k", format!("k must not be negative, got {k}")))?;
        Ok(TopK { k })
    }

    /// True when the op runs over the ragged innermost rows (no uniform dim holds the last axis).
    fn over_rows(ty: &TensorType) -> bool {
        ty.ragged_rank() > 0 && ty.rank() == ty.ragged_rank() + 1
    }
}

impl Op for TopK {
    fn name(&self) -> String {
        format!("TopK{{k={}}}", self.k)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_one_input("top_k", inputs)?;
        let x = &inputs[0];
        expect_sortable("top_k", x)?;
        let mut values = x.clone();
        if !Self::over_rows(x) {
            let last = values.dims().len() - 1;
            if let Dim::Known(n) = values.dims()[last] {
                if n < self.k {
                    return Err(Error::argument(
                        "top_k",
                        format!("k = {} is larger than the last dimension ({n}) of {x}", self.k),
                    ));
                }
            }
            values = values.with_dim(last, Dim::Known(self.k))?;
        }
        let indices = values.clone().with_dtype(DType::I32);
        Ok(vec![values, indices])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>("top_k", inputs)?;
        let ty = TensorType::of(x);
        self.output_types(std::slice::from_ref(&ty))?;
        let lines = Lines::last_axis("top_k", x)?;
        let over_rows = Self::over_rows(&ty);
        let kept: Vec<usize> = lines.lens.iter().map(|&len| len.min(self.k)).collect();
        let total_kept = kept
            .iter()
            .try_fold(0usize, |acc, &n| acc.checked_add(n))
            .ok_or_else(|| Error::argument("top_k", "the result is too large"))?;
        let mut indices: Vec<i32> = ctx.try_vec("top_k", total_kept)?;
        let values = dispatch_dtype!(x.dtype(),
            T => {
                let data = slice_of::<T>("top_k", x)?;
                let mut values: Vec<T> = ctx.try_vec("top_k", total_kept)?;
                for ((start, len), &keep) in lines.iter().zip(&kept) {
                    for src in line_order(data, start, len, lines.stride, true).into_iter().take(keep) {
                        values.push(data[start + src * lines.stride]);
                        indices.push(i32::try_from(src).map_err(|_| {
                            Error::argument("top_k", format!("a row of {len} elements does not fit int32 positions"))
                        })?);
                    }
                }
                let mut shape = x.flat_values().shape().to_vec();
                if over_rows {
                    shape[0] = total_kept;
                } else {
                    let last = shape.len() - 1;
                    shape[last] = self.k;
                }
                (DenseTensor::from_vec(shape.clone(), values)?, shape)
            },
            string => return Err(Error::dtype("top_k", "takes integer or float tensors, got string")));
        let (values, shape) = values;
        let indices = DenseTensor::from_vec(shape, indices)?;
        if over_rows {
            let lengths: Vec<i64> = kept.iter().map(|&n| n as i64).collect();
            let mut partitions = x.partitions()[..x.ragged_rank() - 1].to_vec();
            partitions.push(RowPartition::from_row_lengths(&lengths)?);
            return Ok(vec![RaggedTensor::new(values, partitions.clone())?, RaggedTensor::new(indices, partitions)?]);
        }
        if x.ragged_rank() == 0 {
            return Ok(vec![RaggedTensor::dense(values), RaggedTensor::dense(indices)]);
        }
        Ok(vec![x.with_flat_values(values)?, x.with_flat_values(indices)?])
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: false, cost: Cost::Expensive }
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        let (Some(g), [x, ..]) = (output_grads.first().copied().flatten(), inputs) else {
            return Ok(vec![None; inputs.len()]);
        };
        let mut grads = vec![None; inputs.len()];
        grads[0] = Some(crate::grad::structure::picked_by_value_vjp(graph, *x, outputs[1], g)?);
        Ok(grads)
    }
}

// ---------------------------------------------------------------------------------------------
// argmax, argmin
