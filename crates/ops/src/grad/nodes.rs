//! Node builders shared by the VJPs: applying an op, scalar functions, constants, zeros, and
//! reading a variable's type or a node's one output gradient.

use std::sync::Arc;

use ragtime_core::{DType, DenseTensor, Error, RaggedTensor, Result, TensorType};
use ragtime_graph::{Graph, Op, VarId};

use crate::elemwise::defs::Elemwise;
use crate::elemwise::scalar_op::ScalarOp;
use crate::structure::defs::FilledLike;

pub(crate) const GRAD: &str = "grad";

/// The static type of `var`.
pub(crate) fn ty(graph: &Graph, var: VarId) -> Result<TensorType> {
    graph.var(var).map(|v| v.ty.clone()).ok_or_else(|| Error::graph("grad: a variable is not in the graph"))
}

/// Applies a one-output op.
pub(crate) fn apply1(graph: &mut Graph, op: impl Op, inputs: &[VarId]) -> Result<VarId> {
    let outs = graph.apply(Arc::new(op), inputs)?;
    outs.into_iter().next().ok_or_else(|| Error::graph("grad: an op built no output"))
}

/// `op(x)`.
pub(crate) fn unary(graph: &mut Graph, op: ScalarOp, x: VarId) -> Result<VarId> {
    apply1(graph, Elemwise::new(op), &[x])
}

/// `op(a, b)`, broadcasting.
pub(crate) fn binary(graph: &mut Graph, op: ScalarOp, a: VarId, b: VarId) -> Result<VarId> {
    apply1(graph, Elemwise::new(op), &[a, b])
}

/// `where(cond, a, b)`.
pub(crate) fn select(graph: &mut Graph, cond: VarId, a: VarId, b: VarId) -> Result<VarId> {
    apply1(graph, Elemwise::new(ScalarOp::Where), &[cond, a, b])
}

/// A float scalar constant.
pub(crate) fn scalar(graph: &mut Graph, dtype: DType, v: f64) -> Result<VarId> {
    let value = match dtype {
        DType::F32 => DenseTensor::scalar(v as f32),
        DType::F64 => DenseTensor::scalar(v),
        other => return Err(Error::dtype(GRAD, format!("gradients are float32 or float64, not {other}"))),
    };
    Ok(graph.constant(RaggedTensor::dense(value)))
}

/// `x * k` for a float constant `k` of `x`'s dtype.
pub(crate) fn scale(graph: &mut Graph, x: VarId, k: f64) -> Result<VarId> {
    let c = scalar(graph, ty(graph, x)?.dtype(), k)?;
    binary(graph, ScalarOp::Multiply, x, c)
}

/// Zeros of `x`'s type and partitions.
pub(crate) fn zeros_like(graph: &mut Graph, x: VarId) -> Result<VarId> {
    apply1(graph, FilledLike::new(false, None), &[x])
}

/// The one output gradient of a one-output op (`None`: nothing flows).
pub(crate) fn single(output_grads: &[Option<VarId>]) -> Option<VarId> {
    output_grads.first().copied().flatten()
}
