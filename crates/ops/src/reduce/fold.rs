//! [`Reduce`] (`reduce_sum`, `reduce_mean`, `reduce_max`, `reduce_min`, `reduce_prod`, `reduce_all`,
//! `reduce_any`) and the group folds that implement it.

use std::any::Any;

use ragtime_core::{dispatch_dtype, DenseTensor, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Graph, Op, VarId};

use crate::elemwise::kernels::Kernels;
use crate::reduce::defs::{Reduce, ReduceKind};
use crate::reduce::plan::{fold_group, fold_items, plan_reduction, reduced_type, ReductionPlan};
use crate::util::one;

// ---------------------------------------------------------------------------------------------
// The op
// ---------------------------------------------------------------------------------------------

impl Op for Reduce {
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
        let [x] = inputs else {
            return Err(Error::argument(name, format!("takes 1 input, got {}", inputs.len())));
        };
        self.kind.output_dtype(x.dtype())?;
        let values = x.flat_values();
        // Fast path: the rows of a ragged rank 1 tensor without inner dims are contiguous.
        if x.ragged_rank() == 1 && values.rank() == 1 && matches!(self.axis.single(), Some(1 | -1)) {
            let flat = fold_rows(ctx, self.kind, values, x.partitions()[0].row_splits(), self.keepdims)?;
            return one(RaggedTensor::dense(flat));
        }
        // Fast path: ragged rank 1 with uniform inner dims folded along axis 1: each row is a
        // contiguous block of `inner`-wide items, folded column by column in row order (the
        // plan's grouping, without building it).
        if x.ragged_rank() == 1 && values.rank() >= 2 && self.axis.resolve(name, x.rank())?.as_deref() == Some(&[1]) {
            let inner_shape = &values.shape()[1..];
            let splits = x.partitions()[0].row_splits();
            let mut shape = vec![splits.len() - 1];
            if self.keepdims {
                shape.push(1);
            }
            shape.extend_from_slice(inner_shape);
            ctx.checked_len(name, &shape)?;
            let inner = inner_shape.iter().product();
            let groups = Groups::Rows { splits, inner, ragged: true };
            return one(RaggedTensor::dense(fold(ctx, self.kind, &groups, values, shape)?));
        }
        let plan = plan_reduction(ctx, name, x, &self.axis, self.keepdims)?;
        let flat = fold(ctx, self.kind, &Groups::Plan(&plan), values, plan.flat_shape.clone())?;
        one(plan.finish(flat)?)
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
        crate::grad::reduce::reduce_vjp(self, graph, inputs, outputs, output_grads)
    }
}

/// Folds each row `splits[r]..splits[r + 1]` of the 1-d `values` with `kind` (an empty row gives
/// the ragged-axis identity): the reduction of a ragged rank 1 tensor along axis 1, shared by
/// [`Reduce`] and the fused row kernels so both compute bit-identical results. The result has
/// shape `[nrows]`, or `[nrows, 1]` with `keepdims`. `splits` must be non-decreasing and within
/// `values` (a validated partition's, or a slice of one rebased to start at 0).
pub fn fold_rows(
    ctx: &ExecContext,
    kind: ReduceKind,
    values: &DenseTensor,
    splits: &[i64],
    keepdims: bool,
) -> Result<DenseTensor> {
    fold_rows_of(ctx, kind, values, splits, keepdims, true)
}

/// [`fold_rows`] for rows that are the vectors of a uniform axis (`reduce_max(x, axis=-1)` of
/// `[n, k]`, seen as rows of `k`): the same folds from the identity of a uniform axis (`-inf` for
/// a float maximum, where a ragged axis starts from the lowest finite value), as [`Reduce`] folds
/// that axis.
pub fn fold_uniform_rows(
    ctx: &ExecContext,
    kind: ReduceKind,
    values: &DenseTensor,
    splits: &[i64],
    keepdims: bool,
) -> Result<DenseTensor> {
    fold_rows_of(ctx, kind, values, splits, keepdims, false)
}

fn fold_rows_of(
    ctx: &ExecContext,
    kind: ReduceKind,
    values: &DenseTensor,
    splits: &[i64],
    keepdims: bool,
    ragged: bool,
) -> Result<DenseTensor> {
    let nrows = splits.len().saturating_sub(1);
    let shape = if keepdims { vec![nrows, 1] } else { vec![nrows] };
    fold(ctx, kind, &Groups::Rows { splits, inner: 1, ragged }, values, shape)
}

/// The groups to fold: contiguous rows (a ragged axis), or a plan's stages.
pub(crate) enum Groups<'a> {
    /// Items `splits[r]..splits[r + 1]` of `inner` elements each: group `r * inner + s` folds
    /// element `s` of each item of row `r`, in [`fold_group`]'s order (as the plan would), from
    /// the identity of a ragged axis (`ragged`) or of a uniform one.
    Rows { splits: &'a [i64], inner: usize, ragged: bool },
    /// The groups of `plan`, stage after stage.
    Plan(&'a ReductionPlan),
}

impl Groups<'_> {
    /// Folds each group of `data`, starting from `init(ragged_axis)` and adding members with
    /// `step`.
    fn fold<T: Copy + Send + 'static>(
        &self,
        ctx: &ExecContext,
        op: &str,
        data: &[T],
        init: impl Fn(bool) -> T,
        step: impl Fn(T, T) -> T,
    ) -> Result<Vec<T>> {
        match *self {
            Groups::Rows { splits, inner: 1, ragged } => Ok(splits
                .windows(2)
                .map(|w| {
                    let row = &data[w[0] as usize..w[1] as usize];
                    fold_group(row.len(), &|k| row[k], init(ragged), &step)
                })
                .collect()),
            // Items without elements: nothing to fold (and no chunks to walk).
            Groups::Rows { inner: 0, .. } => Ok(Vec::new()),
            Groups::Rows { splits, inner, ragged } => {
                let mut out = ctx.try_vec(op, (splits.len() - 1) * inner)?;
                let add = |acc: &mut [T], item: &[T]| {
                    for (a, &v) in acc.iter_mut().zip(item) {
                        *a = step(*a, v);
                    }
                };
                for w in splits.windows(2) {
                    let start = out.len();
                    out.resize(start + inner, init(ragged));
                    let row = &data[w[0] as usize * inner..w[1] as usize * inner];
                    fold_items(&mut out[start..], row, init(ragged), &add);
                }
                Ok(out)
            }
            Groups::Plan(plan) => plan.fold(op, data, |stage| init(stage.ragged_axis()), step),
        }
    }

    /// The number of input values in each group.
    fn counts(&self) -> Vec<usize> {
        match *self {
            Groups::Rows { splits, inner, .. } => {
                splits.windows(2).flat_map(|w| std::iter::repeat_n((w[1] - w[0]) as usize, inner)).collect()
            }
            Groups::Plan(plan) => plan.counts(),
        }
    }
}

/// The float types of the row-sum fast paths, with the one definition of their sums and means
/// that every path shares (the generic fold, `row_sums`, `fused::GatherReduce`): sums start at
/// zero and add items in [`fold_group`]'s order (in order for rows of up to `FOLD_BLOCK` items);
/// a mean divides the sum in f64, as `fold_typed` does.
pub trait RowSum: Copy + Send + std::ops::AddAssign + 'static {
    /// The sum of no values.
    const ZERO: Self;
    /// `sum / n`, computed in f64 and rounded back.
    fn mean(sum: Self, n: usize) -> Self;
}

impl RowSum for f32 {
    const ZERO: Self = 0.0;
    fn mean(sum: Self, n: usize) -> Self {
        (f64::from(sum) / n as f64) as f32
    }
}

impl RowSum for f64 {
    const ZERO: Self = 0.0;
    fn mean(sum: Self, n: usize) -> Self {
        sum / n as f64
    }
}

/// `acc += item`, element by element: the step of every float row sum.
#[inline]
pub fn add_item<T: RowSum>(acc: &mut [T], item: &[T]) {
    for (a, &v) in acc.iter_mut().zip(item) {
        *a += v;
    }
}

/// Sums (or averages) rows of `inner`-wide float items: [`Groups::Rows`] for `f32` / `f64` sums
/// and means, with the addition inlined so the columns vectorize. Bit-identical to the generic
/// fold (same start, same order, same adds).
fn row_sums<T: RowSum>(
    ctx: &ExecContext,
    op: &str,
    splits: &[i64],
    inner: usize,
    data: &[T],
    mean: bool,
) -> Result<Vec<T>> {
    let mut out: Vec<T> = ctx.try_vec(op, (splits.len() - 1) * inner)?;
    for w in splits.windows(2) {
        let start = out.len();
        out.resize(start + inner, T::ZERO);
        let acc = &mut out[start..];
        fold_items(acc, &data[w[0] as usize * inner..w[1] as usize * inner], T::ZERO, &add_item);
        if mean {
            let n = (w[1] - w[0]) as usize;
            for a in acc.iter_mut() {
                *a = T::mean(*a, n);
            }
        }
    }
    Ok(out)
}

/// Folds `values` group by group into a tensor of `shape`.
pub(crate) fn fold(
    ctx: &ExecContext,
    kind: ReduceKind,
    groups: &Groups<'_>,
    values: &DenseTensor,
    shape: Vec<usize>,
) -> Result<DenseTensor> {
    dispatch_dtype!(values.dtype(),
        T => fold_typed::<T>(ctx, kind, groups, values, shape),
        string => Err(Error::dtype(kind.name(), "takes a numeric or bool tensor, got string")))
}

fn fold_typed<T: Kernels>(
    ctx: &ExecContext,
    kind: ReduceKind,
    groups: &Groups<'_>,
    values: &DenseTensor,
    shape: Vec<usize>,
) -> Result<DenseTensor> {
    let data = values
        .as_slice::<T>()
        .ok_or_else(|| Error::dtype(kind.name(), format!("expected {} values, got {}", T::DTYPE, values.dtype())))?;
    if let (&Groups::Rows { splits, inner, .. }, ReduceKind::Sum | ReduceKind::Mean) = (groups, kind) {
        if inner > 1 {
            let mean = kind == ReduceKind::Mean;
            if let Some(data) = values.as_slice::<f32>() {
                return DenseTensor::from_vec(shape, row_sums(ctx, kind.name(), splits, inner, data, mean)?);
            }
            if let Some(data) = values.as_slice::<f64>() {
                return DenseTensor::from_vec(shape, row_sums(ctx, kind.name(), splits, inner, data, mean)?);
            }
        }
    }
    let combine =
        T::binary(kind.combine()).ok_or_else(|| Error::dtype(kind.name(), format!("not defined on {}", T::DTYPE)))?;
    // Addition, multiplication, maximum, minimum and logical and / or never fault.
    let folded = groups.fold(
        ctx,
        kind.name(),
        data,
        |ragged_axis| kind.identity::<T>(ragged_axis),
        |acc, v| combine(acc, v).unwrap_or(acc),
    )?;
    match kind {
        ReduceKind::Mean => {
            // The sum over every reduced axis divided by the number of values folded into it.
            // Integers divide in their true-division float type (float32 for 8/16-bit, as TF).
            let means: Vec<f64> =
                folded.into_iter().zip(groups.counts()).map(|(sum, n)| sum.to_f64() / n as f64).collect();
            let out = T::DTYPE.true_division_type().unwrap_or(T::DTYPE);
            DenseTensor::from_vec(shape, means)?.cast(out)
        }
        _ => DenseTensor::from_vec(shape, folded),
    }
}
