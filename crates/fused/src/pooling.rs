//! [`RowPooling`]: `reduce_sum(expand_dims(w, -1) * f, axis=k)` over the innermost ragged axis `k`
//! of per-element weights `w` and `width`-wide vectors `f` on the same partitions (a weighted sum
//! of each innermost row's vectors: attention pooling), optionally followed by a reduction of the
//! pooled vectors over the next outer ragged axis (`reduce_max(p, axis=k-1)`: the maximum over a
//! user's sessions). One pass over `w` and `f`; the products and the per-row vectors of the
//! optional outer reduction are never stored. The weights may come from a [`RowKernel`] fused in
//! ([`RowPooling::with_weights`], W9's softmax): a fast path then computes them block by block into
//! a small scratch buffer that the pooling reads while it is in cache
//! ([`RowPooling::pool_computed`], which the JIT drives with the kernel's machine code), so no
//! per-element weight is stored either.
//!
//! Law: the unfused ops compute `m[e, j] = w[e] * f[e, j]`, then per row and column the sum of `m`
//! from zero in `reduce::fold_items`' order (in row order for rows of up to `FOLD_BLOCK` elements,
//! pairwise halves beyond), then per outer row and column the fold of those
//! sums with the reduction's combining kernel from the ragged-axis identity. The fast path makes
//! exactly those multiplications, additions and combinations in the same order (the columns of a
//! row are independent, so they vectorize without reassociating), so results are bit-identical.

use std::any::Any;
use std::sync::Mutex;

use ragtime_core::{DType, DenseTensor, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Cost, FunctionGraph, Op, OpProperties};
use ragtime_ops::elemwise::IeeeExtremes;
use ragtime_ops::reduce::{ReduceKind, RowSum, FOLD_BLOCK};
use ragtime_runtime::{parallel, InnerGraph};

use crate::kernels::RowKernel;
use crate::operands::RowOutput;

/// Weights computed at a time into scratch when a row kernel computes them (about 16 KB of
/// float32: the block's weights stay in the L1 cache while the pooling reads them).
const WEIGHT_BLOCK: usize = 4096;

/// The fused weighted row sum (and optional outer reduction) of the module docs. Inputs: `w`
/// (ragged rank `k >= 1`, scalar items) and `f` (the same partitions, items of `width` values);
/// with a weights kernel, that kernel's operands in place of `w`.
#[derive(Debug, Clone, PartialEq)]
pub struct RowPooling {
    width: usize,
    outer: Option<ReduceKind>,
    /// The row kernel computing `w` from the op's first inputs, when fused in.
    weights: Option<RowKernel>,
    inner: InnerGraph,
}

/// Computes the weights of innermost rows `r0..r1` into `out` (`out[0]` the first element of row
/// `r0`); `false` when an op faulted (the fused op's reference then runs and reports it).
pub type ComputeWeights<'a, T> = &'a (dyn Fn(usize, usize, &mut [T]) -> bool + Sync);

/// [`fill_block`] as a function pointer: `fill_block::<T>` itself, or the same code compiled for a
/// wider instruction set (the JIT hands its AVX2 instance to [`RowPooling::pool_computed`]; the
/// same operations in the same order, so the same bits).
pub type FillBlock<T> = fn(&PoolBlock<'_, T>, Option<ReduceKind>, usize, usize, &mut [T]);

/// Where the weights come from.
enum Weights<'a, T> {
    /// A tensor's flat values.
    Given(&'a [T]),
    /// A function computing them block by block, and the fill reading each block.
    Computed(ComputeWeights<'a, T>, FillBlock<T>),
}

/// The float types the fast path runs on.
pub trait PoolFloat:
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

/// The operands of one call (or of one block of its computed weights), checked: what the loops may
/// index without further checks. Only this module builds one; [`fill_block`] reads it.
#[derive(Debug, Clone, Copy)]
pub struct PoolBlock<'a, T> {
    /// The weights of flat elements `w_first..` (all of them, or a block's in scratch).
    w: &'a [T],
    w_first: usize,
    f: &'a [T],
    /// Innermost row splits (into `w`'s values).
    rows: &'a [i64],
    /// With an outer reduction: the splits of the next outer partition (into the innermost rows).
    outer: Option<&'a [i64]>,
}

/// Adds row `r`'s weighted vectors into `acc` (`N` columns, zeros), in row order ([`pool_long`]'s
/// for a row of more than [`FOLD_BLOCK`] elements).
#[inline(always)]
fn pool_row<T: PoolFloat, const N: usize>(ops: &PoolBlock<'_, T>, r: usize, acc: &mut [T; N]) {
    let (e0, e1) = (ops.rows[r] as usize, ops.rows[r + 1] as usize);
    if e1 - e0 > FOLD_BLOCK {
        return pool_long(ops, (e0, e1), acc);
    }
    for (&w, item) in ops.w[e0 - ops.w_first..e1 - ops.w_first].iter().zip(ops.f[e0 * N..e1 * N].chunks_exact(N)) {
        for (a, &v) in acc.iter_mut().zip(item) {
            *a += w * v;
        }
    }
}

/// The same for any width (a slice accumulator).
fn pool_row_any<T: PoolFloat>(ops: &PoolBlock<'_, T>, r: usize, acc: &mut [T]) {
    pool_long(ops, (ops.rows[r] as usize, ops.rows[r + 1] as usize), acc);
}

/// Adds the weighted vectors of elements `e0..e1` into `acc` (zeros) as `reduce::row_sums` folds
/// the products' items ([`fold_items`]): in order up to [`FOLD_BLOCK`] elements, else each half
/// from zero, then the halves added.
fn pool_long<T: PoolFloat>(ops: &PoolBlock<'_, T>, (e0, e1): (usize, usize), acc: &mut [T]) {
    let n = acc.len();
    if e1 - e0 > FOLD_BLOCK {
        let mid = e0 + ((e1 - e0) / 2).next_multiple_of(FOLD_BLOCK);
        pool_long(ops, (e0, mid), acc);
        let mut right = vec![T::ZERO; n];
        pool_long(ops, (mid, e1), &mut right);
        for (a, &b) in acc.iter_mut().zip(&right) {
            *a += b;
        }
        return;
    }
    for (&w, item) in ops.w[e0 - ops.w_first..e1 - ops.w_first].iter().zip(ops.f[e0 * n..e1 * n].chunks_exact(n)) {
        for (a, &v) in acc.iter_mut().zip(item) {
            *a += w * v;
        }
    }
}

/// Fills `chunk` (items `first..`, `N` values each) with innermost rows' pooled vectors.
#[inline(always)]
fn fill<T: PoolFloat, const N: usize>(ops: &PoolBlock<'_, T>, first: usize, chunk: &mut [T]) {
    for (r, out) in (first..).zip(chunk.chunks_exact_mut(N)) {
        let mut acc = [T::ZERO; N];
        pool_row(ops, r, &mut acc);
        out.copy_from_slice(&acc);
    }
}

/// Fills `chunk` (outer rows `first..`, `N` values each) with the fold, by `step` from `identity`,
/// of the pooled vectors of each outer row's rows (`splits`).
#[inline(always)]
fn fill_outer<T: PoolFloat, const N: usize, S: Fn(T, T) -> T>(
    ops: &PoolBlock<'_, T>,
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
    ops: &PoolBlock<'_, T>,
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

/// Fills `chunk` (items `first..`: innermost rows, or outer rows with `outer`) from `ops`: pooled
/// vectors, or their fold per outer row by `Reduce`'s scalar steps (`+`, `*` and the IEEE
/// extremes of the `Maximum` / `Minimum` kernels), monomorphized per width and step so the loops
/// inline them. Public so that a caller can compile it for a wider instruction set (a
/// [`FillBlock`]: the JIT's AVX2 instance); it inlines its loops for that reason.
#[inline(always)]
pub fn fill_block<T: PoolFloat>(
    ops: &PoolBlock<'_, T>,
    outer: Option<ReduceKind>,
    width: usize,
    first: usize,
    chunk: &mut [T],
) {
    let (Some(kind), Some(splits)) = (outer, ops.outer) else {
        return match width {
            4 => fill::<T, 4>(ops, first, chunk),
            8 => fill::<T, 8>(ops, first, chunk),
            16 => fill::<T, 16>(ops, first, chunk),
            _ => fill_any(ops, None, width, first, chunk),
        };
    };
    let identity = kind.identity::<T>(true);
    macro_rules! folded {
        ($step:expr) => {
            match width {
                4 => fill_outer::<T, 4, _>(ops, (splits, identity, $step), first, chunk),
                8 => fill_outer::<T, 8, _>(ops, (splits, identity, $step), first, chunk),
                16 => fill_outer::<T, 16, _>(ops, (splits, identity, $step), first, chunk),
                _ => fill_any(ops, Some((splits, identity, &$step)), width, first, chunk),
            }
        };
    }
    match kind {
        ReduceKind::Prod => folded!(|a: T, b: T| a * b),
        ReduceKind::Max => folded!(|a: T, b: T| a.ieee_maximum(b)),
        ReduceKind::Min => folded!(|a: T, b: T| a.ieee_minimum(b)),
        // `RowPooling::new` admits sum, max, min and prod only.
        _ => folded!(|a: T, b: T| a + b),
    }
}

/// [`fill_block`] with weights computed block by block into `scratch` (blocks of whole items of
/// at most [`WEIGHT_BLOCK`] weights, or one larger item); `false` when `compute` faulted.
fn fill_computed<T: PoolFloat>(
    ops: &PoolBlock<'_, T>,
    (outer, width): (Option<ReduceKind>, usize),
    (compute, fill): (ComputeWeights<'_, T>, FillBlock<T>),
    scratch: &mut [T],
    first: usize,
    chunk: &mut [T],
) -> bool {
    // The first innermost row of item `u`, and its first element.
    let row_of = |u: usize| ops.outer.map_or(u, |s| s[u] as usize);
    let element_of = |u: usize| ops.rows[row_of(u)] as usize;
    let end = first + chunk.len() / width;
    let mut u0 = first;
    while u0 < end {
        let mut u1 = u0 + 1;
        while u1 < end && element_of(u1 + 1) - element_of(u0) <= WEIGHT_BLOCK {
            u1 += 1;
        }
        let (e0, e1) = (element_of(u0), element_of(u1));
        let Some(block) = scratch.get_mut(..e1 - e0) else { return false };
        if !compute(row_of(u0), row_of(u1), block) {
            return false;
        }
        let block_ops = PoolBlock { w: block, w_first: e0, ..*ops };
        fill(&block_ops, outer, width, u0, &mut chunk[(u0 - first) * width..(u1 - first) * width]);
        u0 = u1;
    }
    true
}

/// Fills `out` on the call's threads, in pieces of about equal work (the items' elements, rows
/// and the items themselves: W9's users hold 0 to 48 events); `false` when computed weights
/// faulted.
fn fill_all<T: PoolFloat>(
    ctx: &ExecContext,
    ops: &PoolBlock<'_, T>,
    (outer, width): (Option<ReduceKind>, usize),
    weights: Weights<'_, T>,
    out: &mut [T],
) -> Result<bool> {
    let row_of = |u: usize| ops.outer.map_or(u, |s| s[u] as usize);
    let work = |u: usize| {
        let r = row_of(u);
        ops.rows[r] as usize + r + u
    };
    let Weights::Computed(compute, fill) = weights else {
        parallel::fill_balanced(ctx, out, width, work, |first, chunk| fill_block(ops, outer, width, first, chunk))?;
        return Ok(true);
    };
    // Scratch for the weights of a block, reused by the pieces that follow: a piece takes a free
    // buffer, or makes one (charged to the call's budget) when none is free or the free one is
    // smaller than its largest item; so no serial pass over the items before the threads start.
    let element_of = |u: usize| ops.rows[row_of(u)] as usize;
    let buffers = Mutex::new(Vec::<Vec<T>>::new());
    let outcome = Mutex::new(Ok(true));
    parallel::fill_balanced(ctx, out, width, work, |first, chunk| {
        let end = first + chunk.len() / width;
        let largest = (first..end).map(|u| element_of(u + 1) - element_of(u)).max().unwrap_or(0);
        let need = largest.max(WEIGHT_BLOCK.min(element_of(end) - element_of(first)));
        let free = buffers.lock().ok().and_then(|mut b| b.pop()).filter(|b| b.len() >= need);
        let done = match free {
            Some(scratch) => Ok(scratch),
            None => ctx.try_filled("row_pooling", need, T::ZERO),
        }
        .map(|mut scratch| {
            let completed = fill_computed(ops, (outer, width), (compute, fill), &mut scratch, first, chunk);
            if let Ok(mut b) = buffers.lock() {
                b.push(scratch);
            }
            completed
        });
        if !matches!(done, Ok(true)) {
            if let Ok(mut first_failure) = outcome.lock() {
                if matches!(*first_failure, Ok(true)) {
                    *first_failure = done;
                }
            }
        }
    })?;
    outcome.into_inner().map_err(|_| Error::graph("row pooling: a piece panicked"))?
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
        Ok(RowPooling { width, outer, weights: None, inner })
    }

    /// The same pooling with its weights computed by `kernel` (a row kernel over scalar items whose
    /// only output is the weights, no outer folds) from the op's first inputs, `f` the last:
    /// `inner` stands for both (the kernel's ops, then the pooling's).
    pub fn with_weights(self, kernel: RowKernel, inner: InnerGraph) -> Result<Self> {
        let elements_only = matches!(kernel.outputs(), [RowOutput::Elements(_)]);
        if !elements_only || kernel.item_width() != 1 || !kernel.outer_folds().is_empty() {
            return Err(Error::graph("row pooling: a weights kernel must return one element output over scalar items"));
        }
        super::kernels::check_inner("row pooling", &inner, kernel.operands().len() + 1)?;
        Ok(RowPooling { weights: Some(kernel), inner, ..self })
    }

    /// The row kernel computing the weights, when fused in (its operands are the op's first
    /// inputs).
    pub fn weights(&self) -> Option<&RowKernel> {
        self.weights.as_ref()
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
        let weights = Weights::Given(w.flat_slice::<T>()?);
        self.pool(ctx, w, f, weights)
            .map(|r| r.and_then(|done| done.ok_or_else(|| Error::graph("row pooling: given weights cannot fault"))))
    }

    /// The pooling of `f` weighted by what `compute` writes, block by block, for the elements of
    /// `structure` (the weights kernel's iteration space, whose partitions and scalar items the
    /// weights have; [`RowPooling::with_weights`]). `None` when the operands are not shaped as the
    /// fusion assumed; `Some(Ok(None))` when `compute` faulted. Either way the caller runs the
    /// reference, which reports what the unfused ops report. The output comes from
    /// `ctx.try_vec`, so from the buffers callers recycled when one fits (its pages are mapped,
    /// so a call in a loop pays no page faults for its output). `fill` pools each block
    /// (`fill_block::<T>`, or an instance of it compiled for a wider instruction set).
    pub fn pool_computed<T: PoolFloat>(
        &self,
        ctx: &ExecContext,
        (structure, f): (&RaggedTensor, &RaggedTensor),
        compute: ComputeWeights<'_, T>,
        fill: FillBlock<T>,
    ) -> Option<Result<Option<RaggedTensor>>> {
        self.pool(ctx, structure, f, Weights::Computed(compute, fill))
    }

    /// The fast path over weights shaped as `w` (the tensor, or the weights kernel's space).
    fn pool<T: PoolFloat>(
        &self,
        ctx: &ExecContext,
        w: &RaggedTensor,
        f: &RaggedTensor,
        weights: Weights<'_, T>,
    ) -> Option<Result<Option<RaggedTensor>>> {
        let k = w.ragged_rank();
        let total = w.flat_values().len();
        let shaped = k >= 1
            && w.flat_values().shape().len() == 1
            && f.same_structure(w)
            && f.flat_values().shape() == [total, self.width]
            && (self.outer.is_none() || k >= 2);
        if !shaped || matches!(weights, Weights::Given(given) if given.len() != total) {
            return None;
        }
        let partitions = w.partitions();
        // What the result keeps: every partition above the reduced ragged axes.
        let kept = &partitions[..k - 1 - usize::from(self.outer.is_some())];
        let ops = PoolBlock {
            w: match weights {
                Weights::Given(given) => given,
                Weights::Computed(..) => &[],
            },
            w_first: 0,
            f: f.flat_slice::<T>()?,
            rows: partitions[k - 1].row_splits(),
            outer: self.outer.map(|_| partitions[k - 2].row_splits()),
        };
        let items = match ops.outer {
            Some(splits) => splits.len() - 1,
            None => ops.rows.len() - 1,
        };
        let width = self.width;
        let run = || -> Result<Option<RaggedTensor>> {
            let len = items.checked_mul(width).ok_or_else(|| Error::graph("row pooling: output too large"))?;
            let mut out = ctx.try_vec("reduce_sum", len)?;
            out.resize(len, T::ZERO);
            if !fill_all(ctx, &ops, (self.outer, width), weights, &mut out)? {
                return Ok(None);
            }
            let flat = DenseTensor::from_vec(vec![items, width], out)?;
            if kept.is_empty() {
                Ok(Some(RaggedTensor::dense(flat)))
            } else {
                RaggedTensor::new(flat, kept.to_vec()).map(Some)
            }
        };
        Some(run())
    }
}

impl Op for RowPooling {
    fn name(&self) -> String {
        let w = match &self.weights {
            Some(kernel) => format!("w = {}; ", kernel.name()),
            None => String::new(),
        };
        match self.outer {
            Some(kind) => {
                format!("RowPooling{{{w}sum(w * f) per row, then {} per outer row, width={}}}", kind.name(), self.width)
            }
            None => format!("RowPooling{{{w}sum(w * f) per row, width={}}}", self.width),
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
        if self.weights.is_some() {
            // The kernel's fast path writes the weights, the pooling's reads them (the JIT
            // computes them block by block instead: `pool_computed`).
            return self.inner.run(ctx, inputs);
        }
        let fast = match inputs {
            [w, f] if w.dtype() == f.dtype() => match w.dtype() {
                DType::F32 => self.fast::<f32>(ctx, w, f),
                DType::F64 => self.fast::<f64>(ctx, w, f),
                _ => None,
            },
            _ => None,
        };
        self.inner.fast_or_run(ctx, inputs, fast)
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
