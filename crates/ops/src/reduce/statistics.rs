//! [`Statistic`]: reductions that are not a single fold (variance, standard deviation,
//! logsumexp, ...), computed in f64 per group.

use std::any::Any;

use ragtime_core::{dispatch_dtype, DType, DenseTensor, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Cost, Graph, Op, OpProperties, VarId};

use crate::elemwise::kernels::Kernels;
use crate::elemwise::scalar_op::ScalarOp;
use crate::reduce::defs::{Statistic, StatisticKind};
use crate::reduce::plan::{plan_reduction, reduced_type, ReductionStage};
use crate::util::one;
use ragtime_runtime::parallel;

// ---------------------------------------------------------------------------------------------
// Statistics: reductions that are not folds of one binary op
// ---------------------------------------------------------------------------------------------

impl Op for Statistic {
    fn name(&self) -> String {
        format!("{}{{axis={}, keepdims={}}}", self.kind.op_name(), self.axis, self.keepdims)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let name = self.kind.name();
        expect_arity(name, inputs, 1..=1)?;
        let out = self.kind.output_dtype(inputs[0].dtype())?;
        Ok(vec![reduced_type(name, &inputs[0], &self.axis, self.keepdims)?.with_dtype(out)])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let name = self.kind.name();
        let [x] = crate::util::fixed_inputs::<1>(name, inputs)?;
        let out_dtype = self.kind.output_dtype(x.dtype())?;
        let plan = plan_reduction(ctx, name, x, &self.axis, self.keepdims)?;
        let groups = plan.flattened();
        let values = x.flat_values();
        let flat: Vec<f64> = dispatch_dtype!(values.dtype(),
            T => statistic_typed::<T>(ctx, self.kind, &groups, values)?,
            string => return Err(Error::dtype(name, "takes a numeric tensor, got string")));
        one(plan.finish(DenseTensor::from_vec(plan.flat_shape.clone(), flat)?.cast(out_dtype)?)?)
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
        crate::grad::reduce::statistic_vjp(self, graph, inputs, outputs, output_grads)
    }
}

/// Each group's statistic, as float64 (exact for the integer Euclidean norm, which is a
/// truncated square root of a value of the input's dtype).
fn statistic_typed<T: Kernels>(
    ctx: &ExecContext,
    kind: StatisticKind,
    groups: &ReductionStage,
    values: &DenseTensor,
) -> Result<Vec<f64>> {
    let name = kind.name();
    let data = values
        .as_slice::<T>()
        .ok_or_else(|| Error::dtype(name, format!("expected {} values, got {}", T::DTYPE, values.dtype())))?;
    let mut out = ctx.try_vec::<f64>(name, groups.len())?;
    if T::DTYPE.is_float() {
        // Each group on its own (the exponentials and logarithms make this worth the call's
        // threads, e.g. the logsumexp of a softmax cross-entropy over many rows).
        out.resize(groups.len(), 0.0);
        parallel::fill_chunks(ctx, &mut out, 1, |first, chunk| {
            for (o, slot) in (first..).zip(chunk) {
                *slot = float_statistic(kind, groups.group(o).iter().map(|&m| data[m].to_f64()));
            }
        })?;
        return Ok(out);
    }
    // Integers: TensorFlow's arithmetic in the input's dtype, wrapping.
    let add = T::binary(ScalarOp::Add).ok_or_else(|| Error::dtype(name, format!("not defined on {}", T::DTYPE)))?;
    let mul =
        T::binary(ScalarOp::Multiply).ok_or_else(|| Error::dtype(name, format!("not defined on {}", T::DTYPE)))?;
    let zero = T::from_i64(0);
    // Wrapping integer addition and multiplication never fail.
    let sum = |members: &[usize], f: &dyn Fn(T) -> T| {
        members.iter().fold(zero, |acc, &m| add(acc, f(data[m])).unwrap_or(acc))
    };
    let square = |v: T| mul(v, v).unwrap_or(v);
    let single = T::DTYPE.true_division_type() == Some(DType::F32);
    for o in 0..groups.len() {
        let members = groups.group(o);
        out.push(match kind {
            StatisticKind::EuclideanNorm => {
                let s = sum(members, &square).to_f64();
                if s > 0.0 {
                    s.sqrt().trunc()
                } else {
                    0.0
                }
            }
            _ => {
                let (sum_sq, total, n) = (sum(members, &square).to_f64(), sum(members, &|v| v).to_f64(), members.len());
                // TensorFlow divides in the true-division type: float32 for 8/16-bit integers.
                let variance = if single {
                    let mean = total as f32 / n as f32;
                    f64::from(clip_negative(sum_sq as f32 / n as f32 - mean * mean))
                } else {
                    let mean = total / n as f64;
                    clip_negative(sum_sq / n as f64 - mean * mean)
                };
                if kind == StatisticKind::Std {
                    variance.sqrt()
                } else {
                    variance
                }
            }
        });
    }
    Ok(out)
}

/// The statistic `kind` of one group of float values (in f64).
fn float_statistic(kind: StatisticKind, group: impl Iterator<Item = f64> + Clone) -> f64 {
    match kind {
        StatisticKind::Variance | StatisticKind::Std => {
            let n = group.clone().count() as f64;
            let mean = group.clone().sum::<f64>() / n;
            let variance = group.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
            if kind == StatisticKind::Std {
                variance.sqrt()
            } else {
                variance
            }
        }
        StatisticKind::LogSumExp => {
            // NaN wins over everything (`maximum` propagates it).
            let max = group.clone().fold(f64::NEG_INFINITY, |m, v| if v.is_nan() || v > m { v } else { m });
            let shift = if max.is_finite() { max } else { 0.0 };
            group.map(|v| (v - shift).exp()).sum::<f64>().ln() + shift
        }
        StatisticKind::EuclideanNorm => group.map(|v| v * v).sum::<f64>().sqrt(),
    }
}

/// `max(v, 0)` keeping NaN (TensorFlow's clip of a variance that cancelled below zero).
fn clip_negative<F: PartialOrd + Default>(v: F) -> F {
    if v < F::default() {
        F::default()
    } else {
        v
    }
}
