//! Dense and sparse conversions: [`ToTensor`], [`FromTensor`], [`ToSparse`], [`FromSparse`].

use std::any::Any;

use ragtime_core::{DType, Dim, Error, ExecContext, Literal, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{expect_arity, Attrs, Graph, Op, VarId};

use crate::structure::concat::merge_dim;
use crate::util::{
    dense_input, expect_dense_rank, expect_int_vector, expect_integer, fixed_inputs, int_vector_input, literal_attr,
    literal_tensor, one, show_literal,
};

/// An optional scalar attribute as written in op names (`None` when absent).
pub(crate) fn show_option_literal(lit: &Option<Literal>) -> String {
    lit.as_ref().map_or_else(|| "None".into(), show_literal)
}

/// Fails (`incompatible_shapes`) unless a default of shape `default` broadcasts to the inner dims
/// `inner` (aligned from the right; unknown dims accept anything).
fn check_default_broadcasts(default: &[usize], inner: &[Dim]) -> Result<()> {
    let fits = default.len() <= inner.len()
        && default.iter().rev().zip(inner.iter().rev()).all(|(&d, dim)| d == 1 || dim.size().is_none_or(|n| n == d));
    if fits {
        return Ok(());
    }
    Err(Error::shapes(
        "to_tensor",
        format!("default_value of shape {default:?} does not broadcast to the inner dims {inner:?}"),
    ))
}

/// `to_tensor(x)`: `tf.RaggedTensor.to_tensor`, a dense tensor padded with `default_value` (zero or
/// the empty string when absent; a scalar, or a tensor that broadcasts to the uniform inner shape,
/// else `incompatible_shapes`); `shape` (one entry per dimension, `None` = bounding size)
/// truncates or pads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToTensor {
    default_value: Option<Literal>,
    shape: Option<Vec<Option<usize>>>,
}

impl ToTensor {
    /// The conversion with an optional default (a scalar or a nested list that broadcasts to the
    /// inner shape) and an optional target shape.
    pub fn new(default_value: Option<Literal>, shape: Option<Vec<Option<usize>>>) -> Self {
        ToTensor { default_value, shape }
    }
    /// From graph-file attributes: `default_value` (a scalar), `shape` (a list of sizes, with
    /// `null` or -1 for the bounding size); both optional.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["default_value", "shape"])?;
        let shape = attrs
            .dims_opt("shape")?
            .map(|dims| {
                dims.into_iter()
                    .map(|d| match d {
                        None | Some(-1) => Ok(None),
                        Some(n) => usize::try_from(n).map(Some).map_err(|_| {
                            Error::argument("to_tensor", format!("shape sizes must be >= 0 or null, got {n}"))
                        }),
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .transpose()?;
        Ok(ToTensor::new(literal_attr(attrs, "default_value")?, shape))
    }

    fn check_shape(&self, rank: usize) -> Result<()> {
        match &self.shape {
            Some(s) if s.len() != rank => Err(Error::shapes(
                "to_tensor",
                format!("target shape has {} dimensions, the tensor has rank {rank}", s.len()),
            )),
            _ => Ok(()),
        }
    }
}

impl Op for ToTensor {
    fn name(&self) -> String {
        let shape = match &self.shape {
            None => "None".to_string(),
            Some(s) => {
                let dims: Vec<String> = s.iter().map(|d| d.map_or("?".into(), |n| n.to_string())).collect();
                format!("[{}]", dims.join(", "))
            }
        };
        format!("ToTensor{{default_value={}, shape={shape}}}", show_option_literal(&self.default_value))
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("to_tensor", inputs, 1..=1)?;
        let x = &inputs[0];
        if let Some(lit) = &self.default_value {
            let default = literal_tensor("to_tensor", "default_value", lit, x.dtype())?;
            check_default_broadcasts(default.shape(), x.inner_dims())?;
        }
        self.check_shape(x.rank())?;
        let dims: Vec<Option<usize>> = match &self.shape {
            Some(s) => {
                // Uniform inner dims cannot be reshaped (the same check `RaggedTensor::to_tensor` makes).
                let inner = s.iter().zip(x.dims()).enumerate().skip(x.ragged_rank() + 1);
                if let Some((d, (t, n))) =
                    inner.filter_map(|(d, (t, n))| Some((d, (t.as_ref()?, n.size()?)))).find(|(_, (t, n))| **t != *n)
                {
                    return Err(Error::shapes(
                        "to_tensor",
                        format!("target shape {s:?} gives uniform dimension {d} size {t}, the values have {n}"),
                    ));
                }
                s.iter().zip(x.dims()).map(|(target, d)| target.or(d.size())).collect()
            }
            None => x.dims().iter().map(|d| d.size()).collect(),
        };
        Ok(vec![TensorType::dense(x.dtype(), &dims)])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("to_tensor", inputs)?;
        self.check_shape(x.rank())?;
        let default = match &self.default_value {
            Some(lit) => Some(literal_tensor("to_tensor", "default_value", lit, x.dtype())?),
            None => None,
        };
        one(x.to_tensor(default.as_ref(), self.shape.as_deref())?.into())
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
        // Padding comes from no input element: position -1, which the scatter-add drops.
        let twin = ToTensor::new(Some(Literal::Int(-1)), self.shape.clone());
        crate::grad::structure::movement_vjp(std::sync::Arc::new(twin), graph, inputs, output_grads)
    }
}

/// `from_tensor(tensor[, lengths])`: `tf.RaggedTensor.from_tensor` with `ragged_rank` (1 by
/// default; dims `1..=ragged_rank` become ragged). Each innermost ragged row keeps its first
/// `lengths[i]` items, or drops its trailing items equal to `padding` (a value of the item shape,
/// `tensor.shape[ragged_rank + 1..]`; another shape is `incompatible_shapes`), or keeps everything;
/// the outer ragged dims stay full (uniform). `lengths` and `padding` together are refused, and so
/// are `lengths` with `ragged_rank` above 1.
#[derive(Debug, Clone, PartialEq)]
pub struct FromTensor {
    padding: Option<Literal>,
    ragged_rank: usize,
}

impl Default for FromTensor {
    fn default() -> Self {
        FromTensor { padding: None, ragged_rank: 1 }
    }
}

impl FromTensor {
    /// The conversion with an optional padding value (a scalar or a nested list of the item
    /// shape), ragged rank 1.
    pub fn new(padding: Option<Literal>) -> Self {
        FromTensor { padding, ragged_rank: 1 }
    }
    /// The same conversion making `ragged_rank` dims ragged (at least 1).
    pub fn with_ragged_rank(self, ragged_rank: usize) -> Self {
        FromTensor { ragged_rank, ..self }
    }
    /// From graph-file attributes: `padding` (optional scalar or list), `ragged_rank` (>= 1, 1
    /// by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["padding", "ragged_rank"])?;
        let ragged_rank = attrs.int_opt("ragged_rank")?.unwrap_or(1);
        let ragged_rank = usize::try_from(ragged_rank).ok().filter(|&k| k >= 1).ok_or_else(|| {
            Error::argument("from_tensor", format!("ragged_rank must be at least 1, got {ragged_rank}"))
        })?;
        Ok(FromTensor { padding: literal_attr(attrs, "padding")?, ragged_rank })
    }
}

impl Op for FromTensor {
    fn name(&self) -> String {
        format!("FromTensor{{padding={}, ragged_rank={}}}", show_option_literal(&self.padding), self.ragged_rank)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_tensor";
        expect_arity(OP, inputs, 1..=2)?;
        let t = &inputs[0];
        let k = self.ragged_rank;
        if k == 0 {
            return Err(Error::argument(OP, "ragged_rank must be at least 1"));
        }
        if t.is_ragged() || t.rank() < k + 1 {
            return Err(Error::shapes(OP, format!("input 0 must be a dense tensor of rank >= {}, got {t}", k + 1)));
        }
        if let Some(lengths) = inputs.get(1) {
            expect_int_vector(OP, 1, lengths)?;
            if self.padding.is_some() {
                return Err(Error::argument(OP, "give row lengths or padding, not both"));
            }
            if k > 1 {
                return Err(Error::argument(OP, "row lengths are only taken with ragged_rank 1"));
            }
            if let (Dim::Known(n), Dim::Known(m)) = (t.dims()[0], lengths.dims()[0]) {
                if n != m {
                    return Err(Error::shapes(OP, format!("input 1 has {m} row lengths for a tensor of {n} rows")));
                }
            }
        }
        if let Some(lit) = &self.padding {
            let padding = literal_tensor(OP, "padding", lit, t.dtype())?;
            let item = &t.dims()[k + 1..];
            let fits = padding.rank() == item.len()
                && padding.shape().iter().zip(item).all(|(&p, d)| d.size().is_none_or(|n| n == p));
            if !fits {
                return Err(Error::shapes(
                    OP,
                    format!("padding of shape {:?} does not have the item shape {item:?}", padding.shape()),
                ));
            }
        }
        let mut dims = vec![t.dims()[0]];
        dims.extend(std::iter::repeat_n(Dim::Ragged, k));
        dims.extend_from_slice(&t.dims()[k + 1..]);
        Ok(vec![TensorType::new(t.dtype(), k, dims)?])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_tensor";
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let (tensor, rest) = inputs.split_first().ok_or_else(|| Error::argument(OP, "takes 1 or 2 inputs, got 0"))?;
        let tensor = dense_input(OP, 0, "tensor", tensor)?;
        let lengths = match rest {
            [] => None,
            [lengths] => Some(int_vector_input(OP, 1, "row lengths", lengths)?),
            _ => return Err(Error::argument(OP, format!("takes 1 or 2 inputs, got {}", inputs.len()))),
        };
        let padding = match &self.padding {
            Some(lit) => Some(literal_tensor(OP, "padding", lit, tensor.dtype())?),
            None => None,
        };
        // The outer ragged dims are full: fold them into the rows of the innermost one, convert
        // those, then put the outer dims back as uniform partitions.
        let k = self.ragged_rank;
        let shape = tensor.shape();
        let outer = &shape[..k];
        let rows = ctx.checked_len(OP, outer)?;
        let mut folded = vec![rows];
        folded.extend_from_slice(&shape[k..]);
        let inner = RaggedTensor::from_tensor(&tensor.reshape(folded)?, lengths.as_deref(), padding.as_ref())?;
        let mut partitions = Vec::with_capacity(k);
        let mut nrows = shape[0];
        for &len in &outer[1..] {
            partitions.push(RowPartition::from_uniform_row_length(len, nrows)?);
            nrows *= len;
        }
        one(inner.with_outer_partitions(&partitions)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        if self.padding.is_some() {
            // The rows' lengths depend on the values (trailing padding is cut), so positions
            // cannot stand in for the values. The forward's own row lengths say which items were
            // kept: the VJP is that of the same conversion given those lengths (TensorFlow's too:
            // the cut items get no gradient).
            let [tensor] = inputs else {
                return Err(Error::argument("from_tensor", "`lengths` and `padding` together are refused"));
            };
            if self.ragged_rank != 1 {
                return Err(Error::argument(
                    "from_tensor",
                    "has no gradient with `padding` and ragged_rank above 1; give row lengths instead",
                ));
            }
            let lengths = crate::grad::nodes::apply1(
                graph,
                crate::structure::read_partitions::RowLengths::new(1),
                &[outputs[0]],
            )?;
            let twin = std::sync::Arc::new(FromTensor { padding: None, ragged_rank: 1 });
            let grads = crate::grad::structure::movement_vjp(twin, graph, &[*tensor, lengths], output_grads)?;
            return Ok(vec![grads[0]]);
        }
        crate::grad::structure::same_movement_vjp(self, graph, inputs, output_grads)
    }
}

/// `to_sparse(x)`: `tf.RaggedTensor.to_sparse`, three outputs: `indices` (int64 `[n, rank]`),
/// `values` (`[n]`) and `dense_shape` (int64 `[rank]`, the bounding shape).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToSparse;

impl ToSparse {
    /// The op.
    pub fn new() -> Self {
        ToSparse
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(ToSparse)
    }
}

impl Op for ToSparse {
    fn name(&self) -> String {
        "ToSparse".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("to_sparse", inputs, 1..=1)?;
        let x = &inputs[0];
        let rank = x.rank();
        Ok(vec![
            TensorType::dense(DType::I64, &[None, Some(rank)]),
            TensorType::dense(x.dtype(), &[None]),
            TensorType::dense(DType::I64, &[Some(rank)]),
        ])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("to_sparse", inputs)?;
        let (indices, values, dense_shape) = x.to_sparse()?;
        Ok(vec![indices.into(), values.into(), dense_shape.into()])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    // `values` holds `x`'s elements in row-major order, moved, never changed.
    crate::grad::structure::movement_vjp_method!();
}

/// `from_sparse(indices, values, dense_shape)`: `tf.RaggedTensor.from_sparse` for a rank-2 sparse
/// tensor whose indices are in row-major order, each row's columns being `0, 1, 2, ...`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FromSparse;

impl FromSparse {
    /// The op.
    pub fn new() -> Self {
        FromSparse
    }
    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(FromSparse)
    }
}

impl Op for FromSparse {
    fn name(&self) -> String {
        "FromSparse".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        const OP: &str = "from_sparse";
        expect_arity(OP, inputs, 3..=3)?;
        let (indices, values, dense_shape) = (&inputs[0], &inputs[1], &inputs[2]);
        expect_integer(OP, 0, indices)?;
        expect_dense_rank(OP, 0, indices, 2)?;
        expect_dense_rank(OP, 1, values, 1)?;
        expect_int_vector(OP, 2, dense_shape)?;
        if matches!(indices.dims()[1], Dim::Known(k) if k != 2)
            || matches!(dense_shape.dims()[0], Dim::Known(k) if k != 2)
        {
            return Err(Error::shapes(
                OP,
                format!("only rank-2 sparse tensors convert: indices {indices}, dense_shape {dense_shape}"),
            ));
        }
        if merge_dim(indices.dims()[0], values.dims()[0]).is_none() {
            return Err(Error::shapes(OP, format!("input 0 (indices) is {indices} but input 1 (values) is {values}")));
        }
        Ok(vec![TensorType::new(values.dtype(), 1, vec![Dim::Unknown, Dim::Ragged])?])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        const OP: &str = "from_sparse";
        let [indices, values, dense_shape] = fixed_inputs(OP, inputs)?;
        let indices = dense_input(OP, 0, "indices", indices)?;
        let values = dense_input(OP, 1, "values", values)?;
        let dense_shape = dense_input(OP, 2, "dense_shape", dense_shape)?;
        one(RaggedTensor::from_sparse(indices, values, dense_shape)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    // Each value lands in one element of the result, chosen by the indices only.
    crate::grad::structure::movement_vjp_method!();
}
