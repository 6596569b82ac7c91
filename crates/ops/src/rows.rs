//! Row ops: `softmax`, `log_softmax`, `cumsum`, `cumprod`, `sort`, `argsort` and `top_k`, with the
//! definitions of the vocabulary part 2 for ragged tensors: TensorFlow's dense op applied to each
//! innermost ragged row (*row by row*), or along a uniform inner axis of the flat values (*flat
//! values*), the results put back under the same partitions.
//!
//! Every op here runs along *lines* (`Lines`): the 1-d sequences of flat elements the op
//! combines (one per innermost row and inner position, or one per position of the other
//! axes), so one kernel per op serves ragged and dense tensors alike.

use std::any::Any;
use std::cmp::Ordering;

use ragtime_core::{
    dispatch_dtype, limits, DType, DenseTensor, Dim, Element, Error, RaggedTensor, Result, RowPartition, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties, OpRef};

use crate::elemwise::{Kernels, ScalarOp};
use crate::util::{fixed_inputs, normalize_axis, one, shared};

/// The 1-d sequences of flat elements an op runs along: line `i` holds the elements
/// `starts[i] + j * stride` for `j` in `0..lens[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Lines {
    starts: Vec<usize>,
    lens: Vec<usize>,
    stride: usize,
}

/// `axis` of an op over lines of `ty` (cumulative ops, `argmax` / `argmin`), normalized: any axis
/// of a dense tensor; of a ragged one the innermost ragged axis or a uniform inner axis.
fn line_axis(op: &str, axis: i64, ty: &TensorType) -> Result<usize> {
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
    fn last_axis(op: &str, x: &RaggedTensor) -> Result<Lines> {
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
    fn along(op: &str, x: &RaggedTensor, axis: usize) -> Result<Lines> {
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

    fn iter(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.starts.iter().copied().zip(self.lens.iter().copied())
    }
}

/// The values of `x` as a slice of `T` (the caller dispatched on the dtype).
fn slice_of<'a, T: Element>(op: &str, x: &'a RaggedTensor) -> Result<&'a [T]> {
    x.flat_slice::<T>().ok_or_else(|| Error::dtype(op, format!("expected {} values, got {}", T::DTYPE, x.dtype())))
}

/// A total order on numbers: NaN above everything (and equal to NaN), `-0.0 == 0.0`.
fn total<T: PartialOrd>(a: &T, b: &T) -> Ordering {
    #[allow(clippy::eq_op)]
    a.partial_cmp(b).unwrap_or_else(|| (a != a).cmp(&(b != b)))
}

fn expect_one_input(op: &str, inputs: &[TensorType]) -> Result<()> {
    expect_arity(op, inputs, 1..=1)?;
    if inputs[0].rank() == 0 {
        return Err(Error::shapes(op, "takes a tensor of rank 1 or more, got a scalar"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// softmax, log_softmax

/// `tf.nn.softmax` / `tf.nn.log_softmax` over the last axis (`axis` -1 only), row by row: with
/// the row's maximum subtracted first; a row holding NaN or +inf is all NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Softmax {
    /// `log_softmax` instead of `softmax`.
    pub log: bool,
}

impl Softmax {
    /// `softmax` (`log` false) or `log_softmax`.
    pub fn new(log: bool) -> Self {
        Softmax { log }
    }

    fn op_name(&self) -> &'static str {
        if self.log {
            "log_softmax"
        } else {
            "softmax"
        }
    }

    /// From a graph file's node: `axis` may only be -1.
    pub fn from_attrs(log: bool, attrs: &Attrs) -> Result<Self> {
        let op = Softmax { log };
        attrs.only(&["axis"])?;
        if let Some(axis) = attrs.int_opt("axis")? {
            if axis != -1 {
                return Err(Error::argument(op.op_name(), format!("only axis -1 is supported, got {axis}")));
            }
        }
        Ok(op)
    }
}

/// The float arithmetic the softmax kernel needs.
trait Real: Element + std::ops::Sub<Output = Self> + std::ops::Div<Output = Self> + std::ops::Add<Output = Self> {
    const ZERO: Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
}

macro_rules! real {
    ($($t:ty),*) => {$(
        impl Real for $t {
            const ZERO: Self = 0.0;
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
        }
    )*};
}
real!(f32, f64);

fn softmax_lines<T: Real + Kernels>(log: bool, data: &[T], lines: &Lines, out: &mut [T]) -> Result<()> {
    let max = T::binary(ScalarOp::Maximum).ok_or_else(|| Error::dtype("softmax", "no maximum kernel"))?;
    let stride = lines.stride;
    for (start, len) in lines.iter() {
        if len == 0 {
            continue;
        }
        let at = |j: usize| start + j * stride;
        let mut m = data[at(0)];
        for j in 1..len {
            // `maximum` propagates NaN, so a row holding NaN gives NaN everywhere.
            m = max(m, data[at(j)]).unwrap_or(m);
        }
        let mut sum = T::ZERO;
        for j in 0..len {
            let e = (data[at(j)] - m).exp();
            out[at(j)] = e;
            sum = sum + e;
        }
        if log {
            let ls = sum.ln();
            for j in 0..len {
                out[at(j)] = (data[at(j)] - m) - ls;
            }
        } else {
            for j in 0..len {
                out[at(j)] = out[at(j)] / sum;
            }
        }
    }
    Ok(())
}

impl Op for Softmax {
    fn name(&self) -> String {
        if self.log {
            "LogSoftmax".to_string()
        } else {
            "Softmax".to_string()
        }
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_one_input(self.op_name(), inputs)?;
        if !inputs[0].dtype().is_float() {
            return Err(Error::dtype(self.op_name(), format!("takes float tensors, got {}", inputs[0].dtype())));
        }
        Ok(vec![inputs[0].clone()])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let name = self.op_name();
        let [x] = fixed_inputs::<1>(name, inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let lines = Lines::last_axis(name, x)?;
        let shape = x.flat_values().shape().to_vec();
        let flat = match x.dtype() {
            DType::F32 => {
                let data = slice_of::<f32>(name, x)?;
                let mut out = data.to_vec();
                softmax_lines(self.log, data, &lines, &mut out)?;
                DenseTensor::from_vec(shape, out)?
            }
            DType::F64 => {
                let data = slice_of::<f64>(name, x)?;
                let mut out = data.to_vec();
                softmax_lines(self.log, data, &lines, &mut out)?;
                DenseTensor::from_vec(shape, out)?
            }
            other => return Err(Error::dtype(name, format!("takes float tensors, got {other}"))),
        };
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
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::reduce::softmax_vjp(self, graph, inputs, outputs, output_grads)
    }
}

// ---------------------------------------------------------------------------------------------
// cumsum, cumprod

/// `tf.math.cumsum` / `tf.math.cumprod` along `axis`: the innermost ragged axis (row by row) or a
/// uniform inner axis (flat values); any axis of a dense tensor. Integers wrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cumulative {
    /// `cumprod` instead of `cumsum`.
    pub product: bool,
    /// The axis (negative counts from the end).
    pub axis: i64,
    /// Each position gets the combination of the elements before it (not including it).
    pub exclusive: bool,
    /// Accumulate from the end of the line.
    pub reverse: bool,
}

impl Cumulative {
    /// `cumsum` (`product` false) or `cumprod` along `axis`.
    pub fn new(product: bool, axis: i64, exclusive: bool, reverse: bool) -> Self {
        Cumulative { product, axis, exclusive, reverse }
    }

    fn op_name(&self) -> &'static str {
        if self.product {
            "cumprod"
        } else {
            "cumsum"
        }
    }

    /// From a graph file's node: `axis` (required), `exclusive`, `reverse` (false).
    pub fn from_attrs(product: bool, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "exclusive", "reverse"])?;
        Ok(Cumulative {
            product,
            axis: attrs.int("axis")?,
            exclusive: attrs.bool_opt("exclusive")?.unwrap_or(false),
            reverse: attrs.bool_opt("reverse")?.unwrap_or(false),
        })
    }

    /// The axis, normalized and checked against the type ([`line_axis`]).
    fn checked_axis(&self, ty: &TensorType) -> Result<usize> {
        line_axis(self.op_name(), self.axis, ty)
    }
}

fn cumulative_lines<T: Kernels>(op: &Cumulative, data: &[T], lines: &Lines) -> Result<Vec<T>> {
    let name = op.op_name();
    let (scalar, identity) = if op.product { (ScalarOp::Multiply, 1) } else { (ScalarOp::Add, 0) };
    let k = T::binary(scalar).ok_or_else(|| Error::dtype(name, format!("not defined on {}", T::DTYPE)))?;
    let identity = T::from_int_literal(identity).ok_or_else(|| Error::dtype(name, "no identity"))?;
    let mut out = data.to_vec();
    for (start, len) in lines.iter() {
        let mut acc = identity;
        for step in 0..len {
            let j = if op.reverse { len - 1 - step } else { step };
            let at = start + j * lines.stride;
            let v = data[at];
            let next = k(acc, v).map_err(|_| Error::argument(name, "the kernel failed"))?;
            out[at] = if op.exclusive { acc } else { next };
            acc = next;
        }
    }
    Ok(out)
}

impl Op for Cumulative {
    fn name(&self) -> String {
        format!(
            "{}{{axis={}{}{}}}",
            if self.product { "Cumprod" } else { "Cumsum" },
            self.axis,
            if self.exclusive { ", exclusive" } else { "" },
            if self.reverse { ", reverse" } else { "" }
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_one_input(self.op_name(), inputs)?;
        let x = &inputs[0];
        if !x.dtype().is_numeric() {
            return Err(Error::dtype(self.op_name(), format!("takes integer or float tensors, got {}", x.dtype())));
        }
        self.checked_axis(x)?;
        Ok(vec![x.clone()])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let name = self.op_name();
        let [x] = fixed_inputs::<1>(name, inputs)?;
        let ty = TensorType::of(x);
        self.output_types(std::slice::from_ref(&ty))?;
        let lines = Lines::along(name, x, self.checked_axis(&ty)?)?;
        let shape = x.flat_values().shape().to_vec();
        let flat = dispatch_dtype!(x.dtype(),
            T => DenseTensor::from_vec(shape, cumulative_lines::<T>(self, slice_of::<T>(name, x)?, &lines)?)?,
            string => return Err(Error::dtype(name, "takes integer or float tensors, got string")));
        one(x.with_flat_values(flat)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Cheap }
    }

    fn vjp(
        &self,
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
        crate::grad::reduce::cumulative_vjp(self, graph, inputs, outputs, output_grads)
    }
}

// ---------------------------------------------------------------------------------------------
// sort, argsort, top_k

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

fn expect_sortable(op: &str, ty: &TensorType) -> Result<()> {
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

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        _outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
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

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>("argsort", inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let lines = Lines::last_axis("argsort", x)?;
        let shape = x.flat_values().shape().to_vec();
        let mut out: Vec<i32> = limits::try_vec("argsort", x.flat_values().len())?;
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

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
        let mut indices: Vec<i32> = limits::try_vec("top_k", total_kept)?;
        let values = dispatch_dtype!(x.dtype(),
            T => {
                let data = slice_of::<T>("top_k", x)?;
                let mut values: Vec<T> = limits::try_vec("top_k", total_kept)?;
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
        graph: &mut ragtime_graph::Graph,
        inputs: &[ragtime_graph::VarId],
        outputs: &[ragtime_graph::VarId],
        output_grads: &[Option<ragtime_graph::VarId>],
    ) -> Result<Vec<Option<ragtime_graph::VarId>>> {
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

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let name = self.op_name();
        let [x] = fixed_inputs::<1>(name, inputs)?;
        let ty = TensorType::of(x);
        self.output_types(std::slice::from_ref(&ty))?;
        let axis = self.checked_axis(&ty)?;
        let lines = Lines::along(name, x, axis)?;
        let found = dispatch_dtype!(x.dtype(),
            T => arg_extreme_lines(slice_of::<T>(name, x)?, &lines, self.min),
            string => return Err(Error::dtype(name, "takes integer or float tensors, got string")));
        let mut positions: Vec<i64> = limits::try_vec(name, found.len())?;
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
        let flat = DenseTensor::from_vec(shape, positions)?.cast(self.output_type)?;
        one(RaggedTensor::new(flat, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: true, cost: Cost::Cheap }
    }
}

/// The row op called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    Some(match name {
        "softmax" => shared(Softmax::from_attrs(false, attrs)),
        "log_softmax" => shared(Softmax::from_attrs(true, attrs)),
        "cumsum" => shared(Cumulative::from_attrs(false, attrs)),
        "cumprod" => shared(Cumulative::from_attrs(true, attrs)),
        "sort" => shared(Sort::from_attrs(attrs)),
        "argsort" => shared(Argsort::from_attrs(attrs)),
        "top_k" => shared(TopK::from_attrs(attrs)),
        "argmax" => shared(ArgExtreme::from_attrs(false, attrs)),
        "argmin" => shared(ArgExtreme::from_attrs(true, attrs)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtime_core::{ragged, ErrorKind, Literal};
    use ragtime_graph::Attr;
    use std::collections::BTreeMap;

    fn run(op: &dyn Op, x: RaggedTensor) -> Result<Vec<RaggedTensor>> {
        let inferred = op.infer(&[TensorType::of(&x)])?;
        let out = op.perform(std::slice::from_ref(&x))?;
        for (t, v) in inferred.iter().zip(&out) {
            assert!(t.accepts(&TensorType::of(v)), "infer said {t}, perform gave {}", TensorType::of(v));
        }
        Ok(out)
    }

    fn lit(v: &RaggedTensor) -> Literal {
        v.to_literal()
    }

    fn attrs(op: &str, pairs: &[(&str, Attr)]) -> Attrs {
        Attrs::new(op, pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>())
    }

    #[test]
    fn softmax_keeps_empty_rows_and_refuses_other_axes_and_integers() {
        let x = ragged![[0.0, 0.0], [], [5.0]].unwrap();
        let y = run(&Softmax::new(false), x.clone()).unwrap().remove(0);
        assert_eq!(lit(&y), lit(&ragged![[0.5, 0.5], [], [1.0]].unwrap()));
        assert!(y.partitions()[0].ptr_eq(&x.partitions()[0]));
        let l = run(&Softmax::new(true), x).unwrap().remove(0);
        assert_eq!(l.flat_slice::<f32>(), Some(&[-(2.0f32.ln()), -(2.0f32.ln()), 0.0][..]));
        let e = Softmax::from_attrs(false, &attrs("softmax", &[("axis", Attr::Int(0))])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = run(&Softmax::new(true), ragged![[1, 2]].unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TypeMismatch);
        assert!(e.to_string().contains("log_softmax"), "{e}");
        let zero = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0]).unwrap();
        assert_eq!(run(&Softmax::new(false), zero).unwrap()[0].nrows(), 0);
        let scalar = RaggedTensor::dense(DenseTensor::scalar(1.0f32));
        assert_eq!(run(&Softmax::new(false), scalar).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn cumulative_ops_refuse_outer_ragged_axes() {
        let x = ragged![[[1, 2], [3]], [[4]]].unwrap();
        let e = run(&Cumulative::new(false, 1, false, false), x.clone()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("cumsum") && e.to_string().contains("axis 1"), "{e}");
        let y = run(&Cumulative::new(true, -1, true, true), x).unwrap().remove(0);
        assert_eq!(lit(&y), lit(&ragged![[[2, 1], [1]], [[1]]].unwrap()));
        let e = run(&Cumulative::new(false, 3, false, false), ragged![[1, 2]].unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(Cumulative::from_attrs(false, &attrs("cumsum", &[])).is_err(), "axis is required");
        let s = ragged![["a"]].unwrap();
        assert_eq!(run(&Cumulative::new(false, 1, false, false), s).unwrap_err().kind(), ErrorKind::TypeMismatch);
        let dense = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap());
        let y = run(&Cumulative::new(false, 0, false, false), dense).unwrap().remove(0);
        assert_eq!(y.flat_slice::<i32>(), Some(&[1, 2, 4, 6][..]));
    }

    #[test]
    fn sorting_is_stable_and_total_with_nan() {
        let x = ragged![[2.0f32, f32::NAN, -1.0, 2.0], [], [0.0]].unwrap();
        let y = run(&Sort::new(false), x.clone()).unwrap().remove(0);
        let v = y.flat_slice::<f32>().unwrap();
        assert_eq!(&v[..3], &[-1.0, 2.0, 2.0]);
        assert!(v[3].is_nan());
        let i = run(&Argsort::new(true, false), x).unwrap().remove(0);
        assert_eq!(i.dtype(), DType::I32);
        assert_eq!(i.flat_slice::<i32>(), Some(&[1, 0, 3, 2, 0][..]));
        assert_eq!(run(&Sort::new(false), ragged![[true]].unwrap()).unwrap_err().kind(), ErrorKind::TypeMismatch);
        let e = Sort::from_attrs(&attrs("sort", &[("direction", Attr::Str("UP".into()))])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn top_k_shortens_rows_and_checks_k_against_uniform_dims() {
        let x = ragged![[[3, 1, 3], []], [[5]]].unwrap();
        let out = run(&TopK::new(2), x).unwrap();
        assert_eq!(lit(&out[0]), lit(&ragged![[[3, 3], []], [[5]]].unwrap()));
        assert_eq!(lit(&out[1]), lit(&ragged![[[0, 2], []], [[0]]].unwrap()));
        let dense = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 2], vec![1.0f64, 2.0, 4.0, 3.0]).unwrap());
        let out = run(&TopK::new(1), dense.clone()).unwrap();
        assert_eq!(out[0].flat_values().shape(), &[2, 1]);
        assert_eq!(out[1].flat_slice::<i32>(), Some(&[1, 0][..]));
        assert_eq!(run(&TopK::new(3), dense).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let e = TopK::from_attrs(&attrs("top_k", &[("k", Attr::Int(-1))])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let zero = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i64>::new()), vec![0]).unwrap();
        let out = run(&TopK::new(2), zero).unwrap();
        assert_eq!(out[0].nrows(), 0);
        assert_eq!(out[1].nrows(), 0);
    }
}
