//! [`RowPooling`]: `reduce_sum(expand_dims(w, -1) * f, axis=k)` over the innermost ragged axis `k`
//! of per-element weights `w` and `width`-wide vectors `f` on the same partitions (a weighted sum
//! of each innermost row's vectors: attention pooling), optionally followed by a reduction of the
//! pooled vectors over the next outer ragged axis (`reduce_max(p, axis=k-1)`: the maximum over a
//! user's sessions). One pass over `w` and `f`; the products and the per-row vectors of the
//! optional outer reduction are never stored.
//!
//! Law: the unfused ops compute `m[e, j] = w[e] * f[e, j]`, then per row and column the sum of `m`
//! from zero in row order (`reduce::row_sums`), then per outer row and column the fold of those
//! sums with the reduction's combining kernel from the ragged-axis identity. The fast path makes
//! exactly those multiplications, additions and combinations in the same order (the columns of a
//! row are independent, so they vectorize without reassociating), so results are bit-identical.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Cost, FunctionGraph, Op, OpProperties};
use ragtime_runtime::{parallel, InnerGraph};

use ragtime_ops::elemwise::IeeeExtremes;
use ragtime_ops::reduce::ReduceKind;
use ragtime_ops::reduce::RowSum;

/// The fused weighted row sum (and optional outer reduction) of the module docs. Inputs: `w`
/// (ragged rank `k >= 1`, scalar items) and `f` (the same partitions, items of `width` values).
#[derive(Debug, Clone, PartialEq)]
pub struct RowPooling {
    width: usize,
    outer: Option<ReduceKind>,
    inner: InnerGraph,
}

/// The float types the fast path runs on.
trait PoolFloat:
    RowSum
    + IeeeExtremes
    + ragtime_core::Element
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + Send
    + Sync
{
}
impl PoolFloat for f32 {}
impl PoolFloat for f64 {}

/// The operands of one call, checked: what the loops may index without further checks.
struct Operands<'a, T> {
    w: &'a [T],
    f: &'a [T],
    /// Innermost row splits (into `w`'s values).
    rows: &'a [i64],
    /// With an outer reduction: the splits of the next outer partition (into the innermost rows).
    outer: Option<&'a [i64]>,
}

/// Adds row `r`'s weighted vectors into `acc` (`N` columns), in row order.
#[inline]
fn pool_row<T: PoolFloat, const N: usize>(ops: &Operands<'_, T>, r: usize, acc: &mut [T; N]) {
    let (e0, e1) = (ops.rows[r] as usize, ops.rows[r + 1] as usize);
    for (&w, item) in ops.w[e0..e1].iter().zip(ops.f[e0 * N..e1 * N].chunks_exact(N)) {
        for (a, &v) in acc.iter_mut().zip(item) {
            *a += w * v;
        }
    }
}

/// The same for any width (a slice accumulator).
fn pool_row_any<T: PoolFloat>(ops: &Operands<'_, T>, r: usize, acc: &mut [T]) {
    let n = acc.len();
    let (e0, e1) = (ops.rows[r] as usize, ops.rows[r + 1] as usize);
    for (&w, item) in ops.w[e0..e1].iter().zip(ops.f[e0 * n..e1 * n].chunks_exact(n)) {
        for (a, &v) in acc.iter_mut().zip(item) {
            *a += w * v;
        }
    }
}

/// Fills `chunk` (items `first..`, `N` values each) with innermost rows' pooled vectors.
fn fill<T: PoolFloat, const N: usize>(ops: &Operands<'_, T>, first: usize, chunk: &mut [T]) {
    for (r, out) in (first..).zip(chunk.chunks_exact_mut(N)) {
        let mut acc = [T::ZERO; N];
        pool_row(ops, r, &mut acc);
        out.copy_from_slice(&acc);
    }
}

/// Fills `chunk` (outer rows `first..`, `N` values each) with the fold, by `step` from `identity`,
/// of the pooled vectors of each outer row's rows (`splits`).
fn fill_outer<T: PoolFloat, const N: usize, S: Fn(T, T) -> T>(
    ops: &Operands<'_, T>,
    (splits, identity, step): (&[i64], T, S),
    first: usize,
    chunk: &mut [T],
) {
    for (u, out) in (first..).zip(chunk.chunks_exact_mut(N)) {
        let mut best = [identity; N];
        for r in splits[u] as usize..splits[u + 1] as usize {
            let mut acc = [T::ZERO; N];
            pool_row(ops, r, &mut acc);
            for (b, a) in best.iter_mut().zip(acc) {
                *b = step(*b, a);
            }
        }
        out.copy_from_slice(&best);
    }
}

/// An outer fold: the outer partition's splits, the identity, the combining step.
type OuterFold<'a, T> = (&'a [i64], T, &'a dyn Fn(T, T) -> T);

/// [`fill`] and [`fill_outer`] for any width.
fn fill_any<T: PoolFloat>(
    ops: &Operands<'_, T>,
    outer: Option<OuterFold<'_, T>>,
    width: usize,
    first: usize,
    chunk: &mut [T],
) {
    let Some((splits, identity, step)) = outer else {
        for (r, out) in (first..).zip(chunk.chunks_exact_mut(width)) {
            out.fill(T::ZERO);
            pool_row_any(ops, r, out);
        }
        return;
    };
    let mut acc = vec![T::ZERO; width];
    for (u, out) in (first..).zip(chunk.chunks_exact_mut(width)) {
        out.fill(identity);
        for r in splits[u] as usize..splits[u + 1] as usize {
            acc.fill(T::ZERO);
            pool_row_any(ops, r, &mut acc);
            for (b, &a) in out.iter_mut().zip(&acc) {
                *b = step(*b, a);
            }
        }
    }
}

/// Fills `out` on the call's threads: pooled vectors, or with `outer` their fold per outer row by
/// `Reduce`'s scalar steps (`+`, `*` and the IEEE extremes of the `Maximum` / `Minimum` kernels),
/// monomorphized per width and step so the loops inline them.
fn fill_all<T: PoolFloat>(
    ctx: &ExecContext,
    ops: &Operands<'_, T>,
    outer: Option<ReduceKind>,
    width: usize,
    out: &mut [T],
) -> Result<()> {
    let (Some(kind), Some(splits)) = (outer, ops.outer) else {
        return parallel::fill_chunks(ctx, out, width, |first, chunk| match width {
            4 => fill::<T, 4>(ops, first, chunk),
            8 => fill::<T, 8>(ops, first, chunk),
            16 => fill::<T, 16>(ops, first, chunk),
            _ => fill_any(ops, None, width, first, chunk),
        });
    };
    let identity = kind.identity::<T>(true);
    macro_rules! folded {
        ($step:expr) => {
            parallel::fill_chunks(ctx, out, width, |first, chunk| match width {
                4 => fill_outer::<T, 4, _>(ops, (splits, identity, $step), first, chunk),
                8 => fill_outer::<T, 8, _>(ops, (splits, identity, $step), first, chunk),
                16 => fill_outer::<T, 16, _>(ops, (splits, identity, $step), first, chunk),
                _ => fill_any(ops, Some((splits, identity, &$step)), width, first, chunk),
            })
        };
    }
    match kind {
        ReduceKind::Sum => folded!(|a: T, b: T| a + b),
        ReduceKind::Prod => folded!(|a: T, b: T| a * b),
        ReduceKind::Max => folded!(|a: T, b: T| a.ieee_maximum(b)),
        ReduceKind::Min => folded!(|a: T, b: T| a.ieee_minimum(b)),
        other => Err(Error::graph(format!("row pooling: no outer {}", other.name()))),
    }
}

impl RowPooling {
    /// The fused op for vectors of `width` values, with an optional outer reduction (sum, max,
    /// min or prod: the ones that fold without a count), standing for the ops of `inner`.
    pub fn new(width: usize, outer: Option<ReduceKind>, inner: InnerGraph) -> Result<Self> {
        if width == 0 {
            return Err(Error::graph("row pooling: vectors of width 0"));
        }
        if let Some(kind) = outer {
            if !matches!(kind, ReduceKind::Sum | ReduceKind::Max | ReduceKind::Min | ReduceKind::Prod) {
                return Err(Error::graph(format!("row pooling: no outer {}", kind.name())));
            }
        }
        super::kernels::check_inner("row pooling", &inner, 2)?;
        Ok(RowPooling { width, outer, inner })
    }

    /// The vectors' width.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The outer reduction, if any.
    pub fn outer(&self) -> Option<ReduceKind> {
        self.outer
    }

    /// `None` when the operands are not shaped as the fusion assumed (the inner graph then runs).
    fn fast<T: PoolFloat>(
        &self,
        ctx: &ExecContext,
        w: &RaggedTensor,
        f: &RaggedTensor,
    ) -> Option<Result<RaggedTensor>> {
        let k = w.ragged_rank();
        let total = w.flat_values().len();
        let shaped = k >= 1
            && w.flat_values().shape().len() == 1
            && f.same_structure(w)
            && f.flat_values().shape() == [total, self.width]
            && (self.outer.is_none() || k >= 2);
        if !shaped {
            return None;
        }
        let partitions = w.partitions();
        // What the result keeps: every partition above the reduced ragged axes.
        let kept = &partitions[..k - 1 - usize::from(self.outer.is_some())];
        let ops = Operands {
            w: w.flat_slice::<T>()?,
            f: f.flat_slice::<T>()?,
            rows: partitions[k - 1].row_splits(),
            outer: self.outer.map(|_| partitions[k - 2].row_splits()),
        };
        let items = match ops.outer {
            Some(splits) => splits.len() - 1,
            None => ops.rows.len() - 1,
        };
        let width = self.width;
        let run = || -> Result<RaggedTensor> {
            let len = items.checked_mul(width).ok_or_else(|| Error::graph("row pooling: output too large"))?;
            let mut out: Vec<T> = ctx.try_vec("reduce_sum", len)?;
            out.resize(len, T::ZERO);
            fill_all(ctx, &ops, self.outer, width, &mut out)?;
            let flat = DenseTensor::from_vec(vec![items, width], out)?;
            if kept.is_empty() {
                Ok(RaggedTensor::dense(flat))
            } else {
                RaggedTensor::new(flat, kept.to_vec())
            }
        };
        Some(run())
    }
}

impl Op for RowPooling {
    fn name(&self) -> String {
        match self.outer {
            Some(kind) => {
                format!("RowPooling{{sum(w * f) per row, then {} per outer row, width={}}}", kind.name(), self.width)
            }
            None => format!("RowPooling{{sum(w * f) per row, width={}}}", self.width),
        }
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        self.inner.infer(inputs)
    }

    fn keeps_uniform_rows(&self) -> bool {
        // The fast path keeps the outer partitions, as the original reductions do.
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let fast = match inputs {
            [w, f] if w.dtype() == f.dtype() => match w.dtype() {
                DType::F32 => self.fast::<f32>(ctx, w, f),
                DType::F64 => self.fast::<f64>(ctx, w, f),
                _ => None,
            },
            _ => None,
        };
        match fast {
            Some(result) => Ok(vec![result?]),
            None => self.inner.run(ctx, inputs),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn inner_graph(&self) -> Option<&FunctionGraph> {
        Some(self.inner.graph())
    }

    fn properties(&self) -> OpProperties {
        // Operands that do not line up fail, as the multiplication it replaces does.
        OpProperties { can_fail: true, cost: Cost::Cheap, ..OpProperties::default() }
    }
}
