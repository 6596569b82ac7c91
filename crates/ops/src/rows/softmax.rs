//! [`Softmax`]: `softmax` and `log_softmax` along the last axis.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Element, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Cost, Graph, Op, OpProperties, VarId};

use crate::elemwise::kernels::Kernels;
use crate::elemwise::scalar_op::ScalarOp;
use crate::rows::defs::Softmax;
use crate::rows::lines::{expect_one_input, slice_of, Lines};
use crate::util::{fixed_inputs, one};

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
            // The math of the expanded, fused form (`ragtime_vmath`), so `local_expand_softmax`
            // is bit-identical.
            fn exp(self) -> Self {
                ragtime_vmath::PlainMath::exp(self)
            }
            fn ln(self) -> Self {
                ragtime_vmath::PlainMath::ln(self)
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

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
        graph: &mut Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        crate::grad::reduce::softmax_vjp(self, graph, inputs, outputs, output_grads)
    }
}

// ---------------------------------------------------------------------------------------------
// cumsum, cumprod
