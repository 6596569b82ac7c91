//! `matmul` of a ragged (or dense) tensor by a dense matrix: the linear layer applied to every
//! item of a ragged sequence (`tf.ragged.map_flat_values(tf.matmul, x, w)`; `tf.matmul` for
//! dense `x`).

use std::any::Any;

use ndarray::{ArrayView2, Ix2};
use ragtime_core::{DType, DenseTensor, Dim, Element, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Attrs, Cost, Graph, Op, OpProperties, OpRef, VarId};

use crate::elemwise::kernels::Kernels;
use crate::elemwise::scalar_op::ScalarOp;
use crate::grad::nodes::{apply1, single, ty};
use crate::grad::ops::{ContractRows, Transpose};
use crate::util::{dense_input, fixed_inputs, one, shared};

const MATMUL: &str = "matmul";

/// `matmul(x, w)`: `x` of shape `[B, (r)..., D]` (any ragged rank; its last dim uniform, the
/// rows of `D` values) times the dense matrix `w` of shape `[D, K]`, giving `[B, (r)..., K]`
/// under `x`'s partitions. Dense `x` needs rank 2 or more (leading dims are batch dims, as
/// `tf.matmul` broadcasts them). Both operands have one numeric dtype; integer products and
/// sums wrap. Float matrices go through ndarray's `dot` (matrixmultiply's blocked kernels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MatMul;

impl MatMul {
    /// The op.
    pub fn new() -> Self {
        MatMul
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(MatMul)
    }
}

impl Op for MatMul {
    fn name(&self) -> String {
        "MatMul".into()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(MATMUL, inputs, 2..=2)?;
        let (x, w) = (&inputs[0], &inputs[1]);
        if !x.dtype().is_numeric() {
            return Err(Error::dtype(MATMUL, format!("input 0 (x) must be numeric, got {}", x.dtype())));
        }
        if w.dtype() != x.dtype() {
            return Err(Error::dtype(MATMUL, format!("input 1 (w) is {} but input 0 (x) is {}", w.dtype(), x.dtype())));
        }
        if w.ragged_rank() != 0 || w.rank() != 2 {
            return Err(Error::shapes(MATMUL, format!("input 1 (w) must be a dense matrix [D, K], got {w}")));
        }
        let min_rank = if x.ragged_rank() == 0 { 2 } else { x.ragged_rank() + 2 };
        if x.rank() < min_rank {
            return Err(Error::shapes(
                MATMUL,
                format!(
                    "input 0 (x, {x}) must end in a uniform dim of D values (rank >= {min_rank} for ragged rank {})",
                    x.ragged_rank()
                ),
            ));
        }
        let last = x.rank() - 1;
        if let (Dim::Known(d), Dim::Known(wd)) = (x.dims()[last], w.dims()[0]) {
            if d != wd {
                return Err(Error::shapes(
                    MATMUL,
                    format!("input 0 (x) has rows of {d} values but input 1 (w) has {wd} rows"),
                ));
            }
        }
        Ok(vec![x.clone().with_dim(last, w.dims()[1])?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let [x, w] = fixed_inputs::<2>(MATMUL, inputs)?;
        let w = dense_input(MATMUL, 1, "w", w)?;
        let values = x.flat_values();
        let shape = values.shape();
        let (d, k) = (w.shape()[0], w.shape()[1]);
        let inner = shape[shape.len() - 1];
        if inner != d {
            return Err(Error::shapes(
                MATMUL,
                format!("input 0 (x) has rows of {inner} values but input 1 (w) has {d} rows"),
            ));
        }
        let rows = values.len().checked_div(d).unwrap_or_else(|| shape[..shape.len() - 1].iter().product());
        // `infer` made sure the flat values have a last dim (rank >= 2 for a ragged x).
        let mut out_shape = shape.to_vec();
        let last = out_shape.len() - 1;
        out_shape[last] = k;
        ctx.checked_len(MATMUL, &out_shape)?;
        let product = match values.dtype() {
            DType::F32 => float_product::<f32>(values, w, rows, out_shape)?,
            DType::F64 => float_product::<f64>(values, w, rows, out_shape)?,
            dtype => ragtime_core::dispatch_dtype!(dtype,
                T => wrapping_product::<T>(ctx, values, w, rows, out_shape)?,
                string => return Err(Error::dtype(MATMUL, "input 0 (x) must be numeric, got string"))),
        };
        one(x.with_flat_values(product)?)
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
        matmul_vjp(graph, inputs, output_grads)
    }
}

/// The operands as slices of `T` (the caller dispatched on the dtype).
fn slices<'a, T: Element>(x: &'a DenseTensor, w: &'a DenseTensor) -> Result<(&'a [T], &'a [T])> {
    let x = x.as_slice::<T>().ok_or_else(|| Error::dtype(MATMUL, format!("input 0 (x) is not {}", T::DTYPE)))?;
    let w = w.as_slice::<T>().ok_or_else(|| Error::dtype(MATMUL, format!("input 1 (w) is not {}", T::DTYPE)))?;
    Ok((x, w))
}

/// `[rows, D] · [D, K]` for floats, with ndarray's `dot`.
fn float_product<T: Element + ndarray::LinalgScalar>(
    x: &DenseTensor,
    w: &DenseTensor,
    rows: usize,
    out_shape: Vec<usize>,
) -> Result<DenseTensor> {
    let (d, k) = (w.shape()[0], w.shape()[1]);
    let (xs, ws) = slices::<T>(x, w)?;
    let a = ArrayView2::from_shape((rows, d), xs).map_err(|e| Error::shapes(MATMUL, e.to_string()))?;
    let b = ArrayView2::from_shape((d, k), ws).map_err(|e| Error::shapes(MATMUL, e.to_string()))?;
    let product: ndarray::Array<T, Ix2> = a.dot(&b);
    DenseTensor::from_vec(out_shape, product.into_raw_vec_and_offset().0)
}

/// `[rows, D] · [D, K]` for integers, with wrapping products and sums (as TensorFlow's kernels).
fn wrapping_product<T: Kernels>(
    ctx: &ExecContext,
    x: &DenseTensor,
    w: &DenseTensor,
    rows: usize,
    out_shape: Vec<usize>,
) -> Result<DenseTensor> {
    let (d, k) = (w.shape()[0], w.shape()[1]);
    let (xs, ws) = slices::<T>(x, w)?;
    let kernel = |op| T::binary(op).ok_or_else(|| Error::dtype(MATMUL, format!("not defined on {}", T::DTYPE)));
    let (add, mul) = (kernel(ScalarOp::Add)?, kernel(ScalarOp::Multiply)?);
    let zero = T::from_i64(0);
    let mut out = ctx.try_vec::<T>(MATMUL, rows * k)?;
    out.resize(rows * k, zero);
    if k > 0 {
        for (row, acc) in out.chunks_exact_mut(k).enumerate() {
            for (j, &a) in xs[row * d..(row + 1) * d].iter().enumerate() {
                for (o, &b) in acc.iter_mut().zip(&ws[j * k..(j + 1) * k]) {
                    // Wrapping integer products and sums never fail.
                    let p = mul(a, b).unwrap_or(zero);
                    *o = add(*o, p).unwrap_or(*o);
                }
            }
        }
    }
    DenseTensor::from_vec(out_shape, out)
}

/// The VJP of `matmul(x, w)` (`x` of any ragged rank, `w` a dense `[D, K]`): `g wᵀ` for `x`
/// (it keeps `g`'s partitions, which are `x`'s) and `xᵀ g` over every row for `w`.
fn matmul_vjp(graph: &mut Graph, inputs: &[VarId], output_grads: &[Option<VarId>]) -> Result<Vec<Option<VarId>>> {
    let (Some(g), [x, w]) = (single(output_grads), inputs) else { return Ok(vec![None; inputs.len()]) };
    if !ty(graph, *x)?.dtype().is_float() {
        return Ok(vec![None, None]);
    }
    let wt = apply1(graph, Transpose, &[*w])?;
    let dx = apply1(graph, MatMul::new(), &[g, wt])?;
    let dw = apply1(graph, ContractRows, &[*x, g])?;
    Ok(vec![Some(dx), Some(dw)])
}

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    Some(match name {
        MATMUL => shared(MatMul::from_attrs(attrs)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtime_core::limits::Limits;
    use ragtime_core::ErrorKind;
    use ragtime_core::ExecContext;

    fn matrix<T: Element>(rows: usize, cols: usize, data: Vec<T>) -> RaggedTensor {
        RaggedTensor::dense(DenseTensor::from_vec(vec![rows, cols], data).unwrap())
    }

    #[test]
    fn float_and_integer_products_agree_with_the_definition() {
        let ctx = &ExecContext::new(Limits::untrusted());
        // Each row of x times w: [1, 2] · [[1, 0, 2], [3, 1, -1]] = [7, 2, 0].
        let items = DenseTensor::from_vec(vec![3, 2], vec![1.0f32, 2.0, 0.5, -1.0, 2.0, 0.0]).unwrap();
        let x = RaggedTensor::from_row_splits(items, vec![0, 1, 1, 3]).unwrap();
        let w = matrix(2, 3, vec![1.0f32, 0.0, 2.0, 3.0, 1.0, -1.0]);
        let y = MatMul.perform(ctx, &[x.clone(), w]).unwrap().remove(0);
        assert_eq!(y.flat_values().shape(), &[3, 3]);
        assert_eq!(y.flat_slice::<f32>(), Some(&[7.0, 2.0, 0.0, -2.5, -1.0, 2.0, 2.0, 0.0, 4.0][..]));
        assert!(y.partitions()[0].ptr_eq(&x.partitions()[0]));
        // Integers wrap instead of overflowing.
        let x = RaggedTensor::dense(DenseTensor::from_vec(vec![1, 2], vec![i8::MAX, 1]).unwrap());
        let y = MatMul.perform(ctx, &[x, matrix(2, 1, vec![2i8, 3])]).unwrap().remove(0);
        assert_eq!(y.flat_slice::<i8>(), Some(&[i8::MAX.wrapping_mul(2).wrapping_add(3)][..]));
    }

    #[test]
    fn mismatched_operands_are_refused() {
        let x = TensorType::ragged(DType::F32, 1).with_inner(&[Some(3)]);
        let w = TensorType::dense(DType::F32, &[Some(2), Some(2)]);
        assert_eq!(MatMul.infer(&[x.clone(), w]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
        let w64 = TensorType::dense(DType::F64, &[Some(3), Some(2)]);
        assert_eq!(MatMul.infer(&[x, w64]).unwrap_err().kind(), ErrorKind::TypeMismatch);
        let no_inner = TensorType::ragged(DType::F32, 1);
        let w = TensorType::dense(DType::F32, &[Some(1), Some(2)]);
        assert_eq!(MatMul.infer(&[no_inner, w]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
        let s = TensorType::ragged(DType::String, 1).with_inner(&[Some(1)]);
        let ws = TensorType::dense(DType::String, &[Some(1), Some(1)]);
        assert_eq!(MatMul.infer(&[s, ws]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }
}
