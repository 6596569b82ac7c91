//! Canonicalization: node rewrites that remove useless ops. Each carries its law; float laws
//! hold in IEEE arithmetic for every value, NaN, infinities and signed zeros included (so
//! `x * 0 -> 0` and `x - x -> 0` are deliberately absent).

use ragtime_core::{DType, Result};
use ragtime_fused::ScalarConst;
use ragtime_graph::{ApplyId, FunctionGraph, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_ops::structure::Concat;
use ragtime_ops::structure::Identity;

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// The scalar op, inputs and output of an elementwise node.
fn elemwise(fg: &FunctionGraph, node: ApplyId) -> Option<(ScalarOp, Vec<VarId>, VarId)> {
    let apply = fg.node(node)?;
    let op = apply.op.as_any().downcast_ref::<Elemwise>()?;
    Some((op.scalar, apply.inputs.clone(), *apply.outputs.first()?))
}

/// The value of a rank-0 constant.
fn scalar_const(fg: &FunctionGraph, v: VarId) -> Option<ScalarConst> {
    ScalarConst::from_tensor(fg.var(v)?.constant.as_ref()?)
}

/// `out` may be replaced by `x` only when `x` has exactly `out`'s type (no broadcast, no cast).
fn bypass(fg: &FunctionGraph, out: VarId, x: VarId) -> Rewrite {
    match (fg.var(out), fg.var(x)) {
        (Some(o), Some(i)) if o.ty == i.ty => Ok(Some(vec![(out, x)])),
        _ => Ok(None),
    }
}

/// Law: `identity(x) = x`.
pub(crate) fn useless_identity(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    if !apply.op.as_any().is::<Identity>() {
        return Ok(None);
    }
    let (out, x) = (apply.outputs[0], apply.inputs[0]);
    bypass(fg, out, x)
}

/// Law: `cast(x, dtype(x)) = x`.
pub(crate) fn useless_cast(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    match elemwise(fg, node) {
        Some((ScalarOp::Cast(to), inputs, out)) if fg.var(inputs[0]).is_some_and(|v| v.ty.dtype() == to) => {
            bypass(fg, out, inputs[0])
        }
        _ => Ok(None),
    }
}

/// Is `c` the additive identity of its dtype? For floats only `-0.0` is (`-0.0 + 0.0` is `+0.0`).
fn is_add_identity(c: ScalarConst) -> bool {
    let v = c.as_f64();
    if c.dtype().is_float() {
        v == 0.0 && v.is_sign_negative()
    } else {
        v == 0.0 && c.dtype() != DType::Bool
    }
}

/// Laws: `x + 0 = 0 + x = x` for integers, `x + (-0.0) = x` for floats; `x - 0 = x` for
/// integers and floats (`-0.0 - 0.0` is `-0.0`).
pub(crate) fn add_zero(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some((op, inputs, out)) = elemwise(fg, node) else { return Ok(None) };
    let konst = |v: VarId| scalar_const(fg, v);
    match (op, inputs.as_slice()) {
        (ScalarOp::Add, &[x, c]) | (ScalarOp::Add, &[c, x]) if konst(c).is_some_and(is_add_identity) => {
            bypass(fg, out, x)
        }
        (ScalarOp::Subtract, &[x, c])
            if konst(c)
                .is_some_and(|k| k.as_f64() == 0.0 && !k.as_f64().is_sign_negative() && k.dtype() != DType::Bool) =>
        {
            bypass(fg, out, x)
        }
        _ => Ok(None),
    }
}

/// Laws: `x * 1 = 1 * x = x` (exact for every float, NaN and -0.0 included, and for
/// integers); `x / 1 = x` for floats (integer division changes the dtype, which `bypass` refuses).
pub(crate) fn mul_one(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some((op, inputs, out)) = elemwise(fg, node) else { return Ok(None) };
    let one = |v: VarId| scalar_const(fg, v).is_some_and(|k| k.as_f64() == 1.0 && k.dtype() != DType::Bool);
    match (op, inputs.as_slice()) {
        (ScalarOp::Multiply, &[x, c]) | (ScalarOp::Multiply, &[c, x]) if one(c) => bypass(fg, out, x),
        (ScalarOp::Divide, &[x, c]) if one(c) => bypass(fg, out, x),
        _ => Ok(None),
    }
}

/// Laws: `-(-x) = x` (integers wrap both ways; floats flip the sign bit twice),
/// `not(not(x)) = x`, `~(~x) = x`.
pub(crate) fn double_negation(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some((op, inputs, out)) = elemwise(fg, node) else { return Ok(None) };
    if !matches!(op, ScalarOp::Negative | ScalarOp::LogicalNot | ScalarOp::BitwiseInvert) {
        return Ok(None);
    }
    let Some(inner) = fg.var(inputs[0]).and_then(|v| v.owner) else { return Ok(None) };
    match elemwise(fg, inner) {
        Some((inner_op, inner_inputs, _)) if inner_op == op => bypass(fg, out, inner_inputs[0]),
        _ => Ok(None),
    }
}

/// Law: a reduction with `keepdims` over one uniform axis of size 1 folds each value with the
/// identity alone, which gives the value back for max, min, prod, all and any, and for integer
/// sums (a float sum would turn `-0.0` into `+0.0`; a mean changes integer dtypes).
pub(crate) fn reduce_size_one(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    let Some(reduce) = apply.op.as_any().downcast_ref::<Reduce>() else { return Ok(None) };
    let (x, out) = (apply.inputs[0], apply.outputs[0]);
    let Some(ty) = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    let Some(axis) = reduce.axis.single() else { return Ok(None) };
    let rank = ty.rank() as i64;
    let axis = if axis < 0 { axis + rank } else { axis };
    let size_one = (0..rank).contains(&axis)
        && (ty.ragged_rank() == 0 || axis as usize > ty.ragged_rank())
        && ty.dims().get(axis as usize) == Some(&ragtime_core::Dim::Known(1));
    let exact = match reduce.kind {
        ReduceKind::Max | ReduceKind::Min | ReduceKind::Prod | ReduceKind::All | ReduceKind::Any => true,
        ReduceKind::Sum => !ty.dtype().is_float(),
        ReduceKind::Mean => false,
    };
    if reduce.keepdims && size_one && exact {
        bypass(fg, out, x)
    } else {
        Ok(None)
    }
}

/// Law: `concat([x]) = x`.
pub(crate) fn concat_one(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    if !apply.op.as_any().is::<Concat>() || apply.inputs.len() != 1 {
        return Ok(None);
    }
    let (out, x) = (apply.outputs[0], apply.inputs[0]);
    bypass(fg, out, x)
}
