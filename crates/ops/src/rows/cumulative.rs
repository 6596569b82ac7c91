//! [`Cumulative`]: `cumsum` and `cumprod`, exclusive or reversed.

use std::any::Any;

use ragtime_core::{dispatch_dtype, DenseTensor, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Cost, Graph, Op, OpProperties, VarId};

use crate::elemwise::kernels::Kernels;
use crate::elemwise::scalar_op::ScalarOp;
use crate::rows::defs::Cumulative;
use crate::rows::lines::{expect_one_input, slice_of, Lines};
use crate::util::{fixed_inputs, one};

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

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
        graph: &mut Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        crate::grad::reduce::cumulative_vjp(self, graph, inputs, outputs, output_grads)
    }
}

// ---------------------------------------------------------------------------------------------
// sort, argsort, top_k
