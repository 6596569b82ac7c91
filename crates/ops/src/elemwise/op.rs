//! The [`Elemwise`] and [`AddN`] ops: TensorFlow's dtype rules, broadcasting with
//! [`crate::broadcast`], and the loops that apply a [`ScalarOp`]'s kernel to dense values.

use std::any::Any;

use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, Error, ExecContext, RaggedTensor, Result, StringBuilder,
    TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Cost, Graph, Op, OpProperties, VarId};

use crate::broadcast::{broadcast_types, broadcast_values};
use crate::elemwise::defs::Elemwise;
use crate::elemwise::kernels::{comparison, Fault, Kernels};
use crate::elemwise::scalar_op::ScalarOp;
use crate::util::one;
use ragtime_runtime::parallel;

impl Op for Elemwise {
    fn name(&self) -> String {
        format!("Elemwise{{{}}}", self.scalar)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.scalar;
        let arity = op.arity();
        expect_arity(op.name(), inputs, arity..=arity)?;
        let dtypes: Vec<DType> = inputs.iter().map(|t| t.dtype()).collect();
        let out = op.output_dtype(&dtypes)?;
        let shape = if arity == 1 { inputs[0].clone() } else { broadcast_types(op.name(), inputs)? };
        Ok(vec![shape.with_dtype(out)])
    }

    fn keeps_uniform_rows(&self) -> bool {
        // A unary op keeps its input's partitions; `broadcast_types` types uniform partitions
        // exactly where `broadcast_values` builds or reuses them.
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.scalar;
        let dtypes: Vec<DType> = inputs.iter().map(RaggedTensor::dtype).collect();
        let out = op.output_dtype(&dtypes)?;
        if let [x] = inputs {
            let flat = unary_values(op, x.flat_values())?;
            return one(x.with_flat_values(flat)?);
        }
        let b = broadcast_values(ctx, op.name(), inputs)?;
        let locate = |element: usize| ragtime_core::describe_element(&b.partitions, &b.flat_shape, element);
        let flat = apply_aligned(ctx, op, &b.operands, b.flat_shape.clone(), out, &locate)?;
        one(b.finish(flat)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties {
            elementwise: true,
            keeps_partitions_of: (self.scalar.arity() == 1).then_some(0),
            can_fail: self.scalar.can_fault(),
            cost: self.scalar.cost(),
        }
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        crate::grad::elemwise::elemwise_vjp(self, graph, inputs, outputs, output_grads)
    }
}

/// `tf.math.add_n`: the sum of one or more tensors of one dtype and one shape (no broadcasting:
/// ragged operands need the same row partitions), added with the `add` kernel left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AddN;

impl AddN {
    /// The op.
    pub fn new() -> Self {
        AddN
    }

    /// From a graph file's node (no attributes).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(AddN)
    }
}

impl Op for AddN {
    fn name(&self) -> String {
        "AddN".to_string()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("add_n", inputs, 1..=usize::MAX)?;
        let first = &inputs[0];
        if !first.dtype().is_numeric() {
            return Err(Error::dtype("add_n", format!("takes integer or float tensors, got {}", first.dtype())));
        }
        let mut dims = first.dims().to_vec();
        for (i, t) in inputs.iter().enumerate().skip(1) {
            if t.dtype() != first.dtype() {
                return Err(Error::dtype(
                    "add_n",
                    format!("input {i} is {} but input 0 is {}", t.dtype(), first.dtype()),
                ));
            }
            let mismatch = || Error::shapes("add_n", format!("input {i} has type {t} but input 0 has type {first}"));
            if t.ragged_rank() != first.ragged_rank() || t.rank() != first.rank() {
                return Err(mismatch());
            }
            for (d, b) in dims.iter_mut().zip(t.dims()) {
                match (*d, *b) {
                    (Dim::Known(x), Dim::Known(y)) if x != y => return Err(mismatch()),
                    (Dim::Unknown, Dim::Known(y)) => *d = Dim::Known(y),
                    _ => {}
                }
            }
        }
        Ok(vec![TensorType::new(first.dtype(), first.ragged_rank(), dims)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let first = &inputs[0];
        let mut sum = first.flat_values().clone();
        for (i, x) in inputs.iter().enumerate().skip(1) {
            if !x.same_structure(first) || x.flat_values().shape() != first.flat_values().shape() {
                return Err(Error::shapes(
                    "add_n",
                    format!(
                        "input {i} does not have the row partitions and shape of input 0 (add_n does not broadcast)"
                    ),
                ));
            }
            let shape = sum.shape().to_vec();
            sum = apply_aligned(ctx, ScalarOp::Add, &[sum, x.flat_values().clone()], shape, first.dtype(), &|e| {
                format!("element {e}")
            })?;
        }
        one(first.with_flat_values(sum)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Cheap }
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        _outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        crate::grad::elemwise::add_n_vjp(graph, inputs, output_grads)
    }
}

/// The row-major elements of `t`, which holds `T` (the caller dispatched on its dtype).
fn elements<T: Element>(op: ScalarOp, t: &DenseTensor) -> Result<&[T]> {
    t.as_slice::<T>().ok_or_else(|| Error::dtype(op.name(), format!("expected {} values, got {}", T::DTYPE, t.dtype())))
}

fn no_kernel(op: ScalarOp, dtype: DType) -> Error {
    Error::dtype(op.name(), format!("not defined on {dtype}"))
}

/// A unary op on flat values (the structure is unchanged).
fn unary_values(op: ScalarOp, x: &DenseTensor) -> Result<DenseTensor> {
    if let ScalarOp::Cast(to) = op {
        return x.cast(to).map_err(|e| Error::dtype("cast", e.to_string()));
    }
    if op.is_predicate() {
        return dispatch_dtype!(x.dtype(),
            T => {
                let k = T::predicate(op).ok_or_else(|| no_kernel(op, x.dtype()))?;
                let data: Vec<bool> = elements::<T>(op, x)?.iter().map(|&v| k(v)).collect();
                DenseTensor::from_vec(x.shape().to_vec(), data)
            },
            string => Err(no_kernel(op, DType::String)));
    }
    dispatch_dtype!(x.dtype(),
        T => {
            let k = T::unary(op).ok_or_else(|| no_kernel(op, x.dtype()))?;
            let data: Vec<T> = elements::<T>(op, x)?.iter().map(|&v| k(v)).collect();
            DenseTensor::from_vec(x.shape().to_vec(), data)
        },
        string => Err(no_kernel(op, DType::String)))
}

/// Applies `op` to operands already aligned element by element (each of `shape`), giving values of
/// dtype `out` (the op's [`ScalarOp::output_dtype`]): the one evaluation of the scalar layer, shared
/// by [`Elemwise`] and the fused ops. A kernel fault (integer division by zero, a negative integer
/// exponent) is `invalid_argument`, placed by `locate(flat element index)`.
pub fn apply_aligned(
    ctx: &ExecContext,
    op: ScalarOp,
    operands: &[DenseTensor],
    shape: Vec<usize>,
    out: DType,
    locate: &dyn Fn(usize) -> String,
) -> Result<DenseTensor> {
    match (op, operands) {
        (_, [x]) => unary_values(op, x),
        (ScalarOp::Where, _) => select(ctx, op, operands, shape),
        (op, [x, y]) if op.is_comparison() => compare(op, x, y, shape),
        (ScalarOp::Divide | ScalarOp::DivideNoNan, [x, y]) if x.dtype() != out => {
            // True division of integers: convert both operands to the float result type.
            combine(ctx, op, &x.cast(out)?, &y.cast(out)?, shape, locate)
        }
        (_, [x, y]) => combine(ctx, op, x, y, shape, locate),
        _ => Err(Error::argument(op.name(), format!("takes {} inputs, got {}", op.arity(), operands.len()))),
    }
}

/// A same-type binary kernel over aligned operands; a kernel fault names the offending row.
fn combine(
    ctx: &ExecContext,
    op: ScalarOp,
    x: &DenseTensor,
    y: &DenseTensor,
    shape: Vec<usize>,
    locate: &dyn Fn(usize) -> String,
) -> Result<DenseTensor> {
    dispatch_dtype!(x.dtype(),
    T => {
        let k = T::binary(op).ok_or_else(|| no_kernel(op, x.dtype()))?;
        let (xs, ys) = (elements::<T>(op, x)?, elements::<T>(op, y)?);
        // Not charged here: the result is charged as the op's output, as before the split.
        let mut data: Vec<T> = vec![T::default(); xs.len()];
        // The first fault in element order, whichever thread meets it: the error a sequential
        // loop reports.
        let first_fault = std::sync::Mutex::new(None::<(usize, Fault, T)>);
        parallel::fill_chunks(ctx, &mut data, 1, |first, chunk| {
            let operands = xs[first..].iter().zip(&ys[first..]);
            for (e, (slot, (&a, &c))) in (first..).zip(chunk.iter_mut().zip(operands)) {
                match k(a, c) {
                    Ok(v) => *slot = v,
                    Err(fault) => {
                        if let Ok(mut seen) = first_fault.lock() {
                            if seen.is_none_or(|(at, _, _)| e < at) {
                                *seen = Some((e, fault, c));
                            }
                        }
                        return;
                    }
                }
            }
        })?;
        let fault = first_fault.into_inner().map_err(|_| Error::graph(format!("{}: a thread panicked", op.name())))?;
        if let Some((e, fault, c)) = fault {
            return Err(fault_error(op, fault, c, &locate(e)));
        }
        DenseTensor::from_vec(shape, data)
    },
    string => match (op, x.as_strings(), y.as_strings()) {
        (ScalarOp::Add, Some(xs), Some(ys)) => {
            let mut out = StringBuilder::in_call(ctx, xs.len(), xs.byte_len() + ys.byte_len());
            for (a, c) in xs.iter().zip(ys.iter()) {
                out.extend(a);
                out.extend(c);
                out.end_string();
            }
            Ok(DenseTensor::String(out.finish(shape)?))
        }
        _ => Err(no_kernel(op, DType::String)),
    })
}

fn fault_error<T: Element>(op: ScalarOp, fault: Fault, rhs: T, at: &str) -> Error {
    let what = match fault {
        Fault::DivisionByZero => "integer division by zero".to_string(),
        Fault::NegativeExponent => format!("integer to the negative power {rhs}"),
    };
    Error::argument(op.name(), format!("{what} at {at}"))
}

fn compare(op: ScalarOp, x: &DenseTensor, y: &DenseTensor, shape: Vec<usize>) -> Result<DenseTensor> {
    let data: Vec<bool> = dispatch_dtype!(x.dtype(),
    T => {
        let k = comparison::<T>(op).ok_or_else(|| no_kernel(op, x.dtype()))?;
        elements::<T>(op, x)?.iter().zip(elements::<T>(op, y)?).map(|(a, c)| k(a, c)).collect()
    },
    string => {
        let k = comparison::<[u8]>(op).ok_or_else(|| no_kernel(op, DType::String))?;
        match (x.as_strings(), y.as_strings()) {
            (Some(xs), Some(ys)) => xs.iter().zip(ys.iter()).map(|(a, c)| k(a, c)).collect(),
            _ => return Err(Error::dtype(op.name(), "expected two string operands")),
        }
    });
    DenseTensor::from_vec(shape, data)
}

fn select(ctx: &ExecContext, op: ScalarOp, operands: &[DenseTensor], shape: Vec<usize>) -> Result<DenseTensor> {
    let [cond, x, y] = operands else {
        return Err(Error::argument(op.name(), format!("takes 3 inputs, got {}", operands.len())));
    };
    let cond = elements::<bool>(op, cond)?;
    dispatch_dtype!(x.dtype(),
    T => {
        let (xs, ys) = (elements::<T>(op, x)?, elements::<T>(op, y)?);
        let data: Vec<T> = cond.iter().zip(xs.iter().zip(ys)).map(|(&c, (&a, &b))| if c { a } else { b }).collect();
        DenseTensor::from_vec(shape, data)
    },
    string => {
        let (Some(xs), Some(ys)) = (x.as_strings(), y.as_strings()) else {
            return Err(Error::dtype(op.name(), "expected two string operands"));
        };
        let mut out = StringBuilder::in_call(ctx, cond.len(), xs.byte_len().max(ys.byte_len()));
        for (i, &c) in cond.iter().enumerate() {
            out.push(if c { xs.get(i) } else { ys.get(i) });
        }
        Ok(DenseTensor::String(out.finish(shape)?))
    })
}
