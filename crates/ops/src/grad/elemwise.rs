//! VJPs of the elementwise family (`Elemwise`, `AddN`): the local derivative of each scalar op,
//! with TensorFlow's rules at kinks, times the output gradient, summed back over broadcast
//! dimensions by [`crate::broadcast::sum_to_operand`].

use ragtime_core::Result;
use ragtime_graph::{Graph, VarId};

use crate::broadcast::sum_to_operand;
use crate::elemwise::defs::Elemwise;
use crate::elemwise::scalar_op::ScalarOp;
use crate::grad::nodes::{binary, scalar, scale, select, single, ty, unary, zeros_like};

use ScalarOp::*;

/// The VJP of an elementwise op.
pub fn elemwise_vjp(
    op: &Elemwise,
    graph: &mut Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    let Some(g) = single(output_grads) else { return Ok(vec![None; inputs.len()]) };
    let y = outputs[0];
    let partials = match (op.scalar, inputs) {
        (_, [x]) => vec![unary_partial(op.scalar, graph, *x, y, g)?],
        (Where, [_, _, _]) => {
            let cond = inputs[0];
            let zero = zeros_like(graph, g)?;
            vec![None, Some(select(graph, cond, g, zero)?), Some(select(graph, cond, zero, g)?)]
        }
        (_, [a, b]) => binary_partials(op.scalar, graph, *a, *b, y, g)?,
        _ => vec![None; inputs.len()],
    };
    // Each partial has the output's (broadcast) shape: sum it back to its operand's.
    let mut grads = Vec::with_capacity(inputs.len());
    for (&input, partial) in inputs.iter().zip(partials) {
        let input_ty = ty(graph, input)?;
        grads.push(match partial {
            Some(p) if input_ty.dtype().is_float() => Some(sum_to_operand(graph, p, &input_ty)?),
            _ => None,
        });
    }
    Ok(grads)
}

/// `g * dy/dx` for a unary op (`None`: constant almost everywhere, or not differentiable in `x`).
fn unary_partial(op: ScalarOp, graph: &mut Graph, x: VarId, y: VarId, g: VarId) -> Result<Option<VarId>> {
    let dtype = ty(graph, x)?.dtype();
    if !dtype.is_float() {
        return Ok(None);
    }
    let mul = |graph: &mut Graph, a: VarId, b: VarId| binary(graph, Multiply, a, b);
    let one = |graph: &mut Graph| scalar(graph, dtype, 1.0);
    let d = match op {
        Negative => unary(graph, Negative, g)?,
        Abs => {
            // sign(0) = 0: no gradient at the kink (TensorFlow).
            let s = unary(graph, Sign, x)?;
            mul(graph, g, s)?
        }
        Square => {
            let two_x = scale(graph, x, 2.0)?;
            mul(graph, g, two_x)?
        }
        Sqrt => {
            // g / (2 sqrt(x)) = g * 0.5 / y
            let half_g = scale(graph, g, 0.5)?;
            binary(graph, Divide, half_g, y)?
        }
        Rsqrt => {
            // -0.5 * g * y^3
            let y2 = mul(graph, y, y)?;
            let y3 = mul(graph, y2, y)?;
            let gy3 = mul(graph, g, y3)?;
            scale(graph, gy3, -0.5)?
        }
        Exp => mul(graph, g, y)?,
        Expm1 => {
            let one = one(graph)?;
            let e = binary(graph, Add, y, one)?;
            mul(graph, g, e)?
        }
        Log => binary(graph, Divide, g, x)?,
        Log1p => {
            let one = one(graph)?;
            let xp1 = binary(graph, Add, x, one)?;
            binary(graph, Divide, g, xp1)?
        }
        Sin => {
            let c = unary(graph, Cos, x)?;
            mul(graph, g, c)?
        }
        Cos => {
            let s = unary(graph, Sin, x)?;
            let gs = mul(graph, g, s)?;
            unary(graph, Negative, gs)?
        }
        Tan => {
            // g * (1 + y^2)
            let one = one(graph)?;
            let y2 = mul(graph, y, y)?;
            let d = binary(graph, Add, one, y2)?;
            mul(graph, g, d)?
        }
        Tanh => {
            let one = one(graph)?;
            let y2 = mul(graph, y, y)?;
            let d = binary(graph, Subtract, one, y2)?;
            mul(graph, g, d)?
        }
        Sigmoid => {
            let one = one(graph)?;
            let c = binary(graph, Subtract, one, y)?;
            let d = mul(graph, y, c)?;
            mul(graph, g, d)?
        }
        Softplus => {
            let s = unary(graph, Sigmoid, x)?;
            mul(graph, g, s)?
        }
        LogSigmoid => {
            // d/dx ln(sigmoid(x)) = sigmoid(-x)
            let nx = unary(graph, Negative, x)?;
            let s = unary(graph, Sigmoid, nx)?;
            mul(graph, g, s)?
        }
        Softsign => {
            // g / (1 + |x|)^2
            let one = one(graph)?;
            let ax = unary(graph, Abs, x)?;
            let d = binary(graph, Add, one, ax)?;
            let d2 = mul(graph, d, d)?;
            binary(graph, Divide, g, d2)?
        }
        Reciprocal => {
            // -g * y^2
            let y2 = mul(graph, y, y)?;
            let gy2 = mul(graph, g, y2)?;
            unary(graph, Negative, gy2)?
        }
        Erf | Erfc => {
            // ± g * 2/sqrt(pi) * exp(-x^2)
            let x2 = mul(graph, x, x)?;
            let nx2 = unary(graph, Negative, x2)?;
            let e = unary(graph, Exp, nx2)?;
            let k = if op == Erf { std::f64::consts::FRAC_2_SQRT_PI } else { -std::f64::consts::FRAC_2_SQRT_PI };
            let ge = mul(graph, g, e)?;
            scale(graph, ge, k)?
        }
        Sinh => {
            let c = unary(graph, Cosh, x)?;
            mul(graph, g, c)?
        }
        Cosh => {
            let s = unary(graph, Sinh, x)?;
            mul(graph, g, s)?
        }
        Asin | Acos => {
            // ± g / sqrt(1 - x^2)
            let one = one(graph)?;
            let x2 = mul(graph, x, x)?;
            let d = binary(graph, Subtract, one, x2)?;
            let r = unary(graph, Rsqrt, d)?;
            let gr = mul(graph, g, r)?;
            if op == Asin {
                gr
            } else {
                unary(graph, Negative, gr)?
            }
        }
        Atan | Atanh => {
            // g / (1 + x^2), g / (1 - x^2)
            let one = one(graph)?;
            let x2 = mul(graph, x, x)?;
            let d = binary(graph, if op == Atan { Add } else { Subtract }, one, x2)?;
            binary(graph, Divide, g, d)?
        }
        Asinh | Acosh => {
            // g / sqrt(x^2 + 1), g / sqrt(x^2 - 1)
            let one = one(graph)?;
            let x2 = mul(graph, x, x)?;
            let d = binary(graph, if op == Asinh { Add } else { Subtract }, x2, one)?;
            let r = unary(graph, Rsqrt, d)?;
            mul(graph, g, r)?
        }
        Cast(to) if to.is_float() => return Ok(Some(if to == dtype { g } else { unary(graph, Cast(dtype), g)? })),
        // Constant almost everywhere (TensorFlow gives zeros), or a bool / integer result.
        _ => return Ok(None),
    };
    Ok(Some(d))
}

/// `g * dy/da` and `g * dy/db` for a binary op, in the output's shape.
fn binary_partials(
    op: ScalarOp,
    graph: &mut Graph,
    a: VarId,
    b: VarId,
    y: VarId,
    g: VarId,
) -> Result<Vec<Option<VarId>>> {
    let dtype = ty(graph, y)?.dtype();
    if !dtype.is_float() {
        return Ok(vec![None, None]);
    }
    let mul = |graph: &mut Graph, p: VarId, q: VarId| binary(graph, Multiply, p, q);
    let pair = |da: VarId, db: VarId| Ok(vec![Some(da), Some(db)]);
    match op {
        Add => pair(g, g),
        Subtract => {
            let ng = unary(graph, Negative, g)?;
            pair(g, ng)
        }
        Multiply => {
            let da = mul(graph, g, b)?;
            let db = mul(graph, g, a)?;
            pair(da, db)
        }
        Divide => {
            // d/da = g / b, d/db = -g * y / b
            let da = binary(graph, Divide, g, b)?;
            let gy = mul(graph, da, y)?;
            let db = unary(graph, Negative, gy)?;
            pair(da, db)
        }
        Maximum | Minimum => {
            // TensorFlow: `a` takes the gradient where a >= b (maximum) or a <= b (minimum).
            let cmp = if op == Maximum { GreaterEqual } else { LessEqual };
            let takes_a = binary(graph, cmp, a, b)?;
            let zero = zeros_like(graph, g)?;
            let da = select(graph, takes_a, g, zero)?;
            let db = select(graph, takes_a, zero, g)?;
            pair(da, db)
        }
        SquaredDifference => {
            let diff = binary(graph, Subtract, a, b)?;
            let two_diff = scale(graph, diff, 2.0)?;
            let da = mul(graph, g, two_diff)?;
            let db = unary(graph, Negative, da)?;
            pair(da, db)
        }
        Pow => {
            // d/da = g * b * a^(b - 1); d/db = g * y * log(a) where a > 0, else 0 (TensorFlow).
            let one = scalar(graph, dtype, 1.0)?;
            let bm1 = binary(graph, Subtract, b, one)?;
            let p = binary(graph, Pow, a, bm1)?;
            let bp = mul(graph, b, p)?;
            let da = mul(graph, g, bp)?;
            let zero = scalar(graph, dtype, 0.0)?;
            let positive = binary(graph, Greater, a, zero)?;
            let safe_a = select(graph, positive, a, one)?;
            let log_a = unary(graph, Log, safe_a)?;
            let zeros = zeros_like(graph, log_a)?;
            let log_a = select(graph, positive, log_a, zeros)?;
            let gy = mul(graph, g, y)?;
            let db = mul(graph, gy, log_a)?;
            pair(da, db)
        }
        Atan2 => {
            // atan2(a, b): d/da = g * b / (a^2 + b^2), d/db = -g * a / (a^2 + b^2)
            let a2 = mul(graph, a, a)?;
            let b2 = mul(graph, b, b)?;
            let r2 = binary(graph, Add, a2, b2)?;
            let gr = binary(graph, Divide, g, r2)?;
            let da = mul(graph, gr, b)?;
            let ga = mul(graph, gr, a)?;
            let db = unary(graph, Negative, ga)?;
            pair(da, db)
        }
        FloorMod => {
            // a - floor(a / b) * b: d/da = g, d/db = -g * floor(a / b)
            let q = binary(graph, Divide, a, b)?;
            let fq = unary(graph, Floor, q)?;
            let gq = mul(graph, g, fq)?;
            let db = unary(graph, Negative, gq)?;
            pair(g, db)
        }
        Xdivy | Xlogy => {
            // 0 wherever a == 0 (both partials, as in TensorFlow); else a / b or a * log(b).
            let zero = scalar(graph, dtype, 0.0)?;
            let a_zero = binary(graph, Equal, a, zero)?;
            let (da, db) = if op == Xdivy {
                let da = binary(graph, Divide, g, b)?;
                let ga = mul(graph, da, a)?;
                let gab = binary(graph, Divide, ga, b)?;
                (da, unary(graph, Negative, gab)?)
            } else {
                let log_b = unary(graph, Log, b)?;
                let da = mul(graph, g, log_b)?;
                let ga = mul(graph, g, a)?;
                (da, binary(graph, Divide, ga, b)?)
            };
            let zeros = zeros_like(graph, g)?;
            let da = select(graph, a_zero, zeros, da)?;
            let db = select(graph, a_zero, zeros, db)?;
            pair(da, db)
        }
        DivideNoNan => {
            // d/da = divide_no_nan(g, b), d/db = divide_no_nan(divide_no_nan(-a, b), b) * g
            let da = binary(graph, DivideNoNan, g, b)?;
            let na = unary(graph, Negative, a)?;
            let q = binary(graph, DivideNoNan, na, b)?;
            let q = binary(graph, DivideNoNan, q, b)?;
            let db = mul(graph, q, g)?;
            pair(da, db)
        }
        // Constant almost everywhere (`floordiv`, `truncatediv`, ...) or not float.
        _ => Ok(vec![None, None]),
    }
}

/// The VJP of `add_n`: every operand gets the output gradient.
pub fn add_n_vjp(graph: &mut Graph, inputs: &[VarId], output_grads: &[Option<VarId>]) -> Result<Vec<Option<VarId>>> {
    let Some(g) = single(output_grads) else { return Ok(vec![None; inputs.len()]) };
    inputs.iter().map(|&x| Ok(ty(graph, x)?.dtype().is_float().then_some(g))).collect()
}
