//! [`RowPooling`]: `reduce_sum(expand_dims(w, -1) * f, axis=k)` over the innermost ragged axis `k`
//! of per-element weights `w` and `width`-wide vectors `f` on the same partitions (a weighted sum
//! of each innermost row's vectors: attention pooling), optionally followed by a reduction of the
//! pooled vectors over the next outer ragged axis (`reduce_max(p, axis=k-1)`: the maximum over a
//! user's sessions). One pass over `w` and `f`; the products and the per-row vectors of the
//! optional outer reduction are never stored. The weights may also be `softmax(s)` over each
//! innermost row ([`PoolWeights::Softmax`]), computed inside the pass from logits `s` that are an
//! input or an elementwise [`Composite`] of the inputs (W9's `softmax(d * 2)`), so neither the
//! logits nor the weights are stored: W9 is one node.
//!
//! Law: the unfused ops compute `m[e, j] = w[e] * f[e, j]`, then per row and column the sum of `m`
//! from zero in row order (`reduce::row_sums`), then per outer row and column the fold of those
//! sums with the reduction's combining kernel from the ragged-axis identity. The fast path makes
//! exactly those multiplications, additions and combinations in the same order (the columns of a
//! row are independent, so they vectorize without reassociating), so results are bit-identical.
//! Softmax weights are the `Softmax` op's (`rows::softmax`): the row's maximum by `maximum` from
//! its first value, `e = exp(s - max)` with `ragtime_vmath`'s `exp`, their sum from zero in row
//! order, `w = e / sum`; the logits are the composite's own chunked evaluation. Bit-identical too.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Error, RaggedTensor, Result, TensorType};
use ragtime_graph::{Cost, Op, OpProperties};

use super::kernels::Composite;
use super::original::OriginalOps;
use crate::elemwise::kernels::IeeeExtremes;
use crate::reduce::defs::ReduceKind;
use crate::reduce::fold::RowSum;

/// The fused weighted row sum (and optional outer reduction) of the module docs. Inputs: the
/// weights' operands (see [`PoolWeights`]; ragged rank `k >= 1`, scalar items), then `f` (the same
/// partitions, items of `width` values).
#[derive(Debug, Clone, PartialEq)]
pub struct RowPooling {
    width: usize,
    outer: Option<ReduceKind>,
    weights: PoolWeights,
    accelerated: Accelerated,
    /// The replaced ops, over `[w, f]` (`[s, f]` for softmax weights: the logits, however computed).
    original: OriginalOps,
}

/// Where the per-element weights of a [`RowPooling`] come from.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolWeights {
    /// Input 0 holds them.
    Given,
    /// `softmax(s)` over each innermost row (`tf.nn.softmax` on the last axis) of logits `s`:
    /// input 0 when `logits` is `None`, else computed element by element by the composite from
    /// the inputs before `f` (its operands).
    Softmax {
        /// The elementwise computation of the logits, if they are not an input.
        logits: Option<Composite>,
    },
}

/// The float types the fast path runs on.
trait PoolFloat:
    RowSum
    + IeeeExtremes
    + ragtime_core::Element
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + ExpSub
    + Send
    + Sync
{
}
impl PoolFloat for f32 {}
impl PoolFloat for f64 {}

/// The operands of one call, checked: what the loops may index without further checks.
struct Operands<'a, T> {
    /// The weights (given) or the logits (softmax of an input); empty when a composite computes
    /// the logits.
    w: &'a [T],
    f: &'a [T],
    /// Innermost row splits (into `w`'s values).
    rows: &'a [i64],
    /// With an outer reduction: the splits of the next outer partition (into the innermost rows).
    outer: Option<&'a [i64]>,
}

/// Adds row `r`'s vectors weighted by `w` (the row's weights) into `acc` (`acc.len()` columns), in
/// row order: `acc[j] += w[e] * f[e, j]`.
#[inline(always)]
fn add_weighted<T: PoolFloat>(w: &[T], f: &[T], acc: &mut [T]) {
    let n = acc.len();
    for (&w, item) in w.iter().zip(f.chunks_exact(n)) {
        for (a, &v) in acc.iter_mut().zip(item) {
            *a += w * v;
        }
    }
}

/// How one thread pools rows: `pool(r, acc)` adds row `r`'s weighted vectors into `acc`.
trait Pool<T> {
    fn pool(&mut self, r: usize, acc: &mut [T]) -> Result<()>;
}

/// Given weights.
struct GivenPool<'a, 'b, T>(&'b Operands<'a, T>);

impl<T: PoolFloat> Pool<T> for GivenPool<'_, '_, T> {
    #[inline(always)]
    fn pool(&mut self, r: usize, acc: &mut [T]) -> Result<()> {
        let ops = self.0;
        let (e0, e1) = (ops.rows[r] as usize, ops.rows[r + 1] as usize);
        add_weighted(&ops.w[e0..e1], &ops.f[e0 * acc.len()..e1 * acc.len()], acc);
        Ok(())
    }
}

/// A vectorized float32 `out[i] = exp(a[i] - b[i])` with the bits of `ragtime_vmath`'s `exp` of
/// the float32 difference (the JIT's bulk AVX2 function); it returns `false`, leaving `out`
/// untouched, when the CPU cannot run it. The JIT hands it to the poolings it runs
/// ([`RowPooling::with_compiled`]).
pub type BulkExpF32 = fn(&[f32], &[f32], &mut [f32]) -> bool;

/// Compiled evaluation of the logits composite over a range of elements (the JIT's kernel of the
/// composite), which a [`RowPooling`] calls instead of the composite's chunked reference.
pub trait LogitsKernel: Send + Sync + std::fmt::Debug {
    /// Writes the composite's output at elements `e0..e1` of its operand columns (full operands
    /// flat, scalars rank 0, as [`Layout::columns`](super::Layout)) into `out`
    /// (`e1 - e0` values); `false` when it cannot (the chunked reference then runs), having
    /// written nothing that is used.
    fn eval(&self, columns: &[DenseTensor], e0: usize, e1: usize, out: LogitsOut<'_>) -> bool;
}

/// Where a [`LogitsKernel`] writes: the logits' float type.
#[derive(Debug)]
pub enum LogitsOut<'a> {
    /// float32 logits.
    F32(&'a mut [f32]),
    /// float64 logits.
    F64(&'a mut [f64]),
}

/// The compiled code a [`RowPooling`] may call instead of its plain loops: the bulk `exp` and
/// the logits' kernel. Each computes the plain code's bits, so two poolings that differ only in
/// it compute the same thing: they compare equal.
#[derive(Clone, Default)]
pub struct Accelerated {
    exp: Option<BulkExpF32>,
    logits: Option<std::sync::Arc<dyn LogitsKernel>>,
}

impl PartialEq for Accelerated {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Accelerated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accelerated").field("exp", &self.exp.is_some()).field("logits", &self.logits).finish()
    }
}

/// `out[i] = exp(a[i] - b[i])`: the bulk function when there is one and it runs, else the
/// difference and `ragtime_vmath`'s plain `exp` value by value (the same bits).
trait ExpSub: Sized {
    fn exp_sub(a: &[Self], b: &[Self], out: &mut [Self], bulk: Option<BulkExpF32>);
    /// `out` as the [`LogitsOut`] of its type.
    fn logits_out(out: &mut [Self]) -> LogitsOut<'_>;
}

impl ExpSub for f32 {
    fn exp_sub(a: &[f32], b: &[f32], out: &mut [f32], bulk: Option<BulkExpF32>) {
        if !bulk.is_some_and(|exp| exp(a, b, out)) {
            for ((o, &x), &m) in out.iter_mut().zip(a).zip(b) {
                *o = ragtime_vmath::PlainMath::exp(x - m);
            }
        }
    }

    fn logits_out(out: &mut [f32]) -> LogitsOut<'_> {
        LogitsOut::F32(out)
    }
}

impl ExpSub for f64 {
    fn exp_sub(a: &[f64], b: &[f64], out: &mut [f64], _: Option<BulkExpF32>) {
        for ((o, &x), &m) in out.iter_mut().zip(a).zip(b) {
            *o = ragtime_vmath::PlainMath::exp(x - m);
        }
    }

    fn logits_out(out: &mut [f64]) -> LogitsOut<'_> {
        LogitsOut::F64(out)
    }
}

/// Where the logits of a softmax pooling come from: an input's values, or a composite evaluated
/// over the elements asked for (the composite's own chunk evaluation).
struct Logits<'a, T> {
    input: &'a [T],
    computed: Option<(&'a Composite, &'a super::kernels::Layout<'a>)>,
    kernel: Option<&'a dyn LogitsKernel>,
    /// The last range a composite computed.
    block: Vec<T>,
}

impl<T: PoolFloat> Logits<'_, T> {
    /// The logits of elements `e0..e1`.
    fn range(&mut self, e0: usize, e1: usize) -> Result<&[T]> {
        let Some((composite, layout)) = self.computed else { return Ok(&self.input[e0..e1]) };
        if e0 == e1 {
            return Ok(&[]);
        }
        if let Some(kernel) = self.kernel {
            self.block.clear();
            self.block.resize(e1 - e0, T::ZERO);
            if kernel.eval(&layout.columns, e0, e1, T::logits_out(&mut self.block)) {
                return Ok(&self.block);
            }
        }
        let columns = composite.eval_elements(layout, layout.row_splits(), e0, e1)?;
        let values = columns.first().and_then(|c| c.as_slice::<T>());
        let values = values.ok_or_else(|| Error::graph("row pooling: logits of another dtype"))?;
        self.block.clear();
        self.block.extend_from_slice(values);
        Ok(&self.block)
    }
}

/// The weights of consecutive rows are computed together, about this many values at a time:
/// one `exp` call per block, and everything stays in the L1 cache.
const WEIGHT_BLOCK: usize = 2048;

/// Softmax weights of each row's logits, computed a block of rows at a time.
struct SoftmaxPool<'a, 'b, T> {
    ops: &'b Operands<'a, T>,
    logits: Logits<'b, T>,
    bulk: Option<BulkExpF32>,
    /// The rows whose weights `weights` holds, from element `start`.
    rows: std::ops::Range<usize>,
    start: usize,
    weights: Vec<T>,
    /// Each element's row maximum, then its row sum.
    spread: Vec<T>,
}

impl<T: PoolFloat> SoftmaxPool<'_, '_, T> {
    /// Computes the weights of rows `r0..` up to about [`WEIGHT_BLOCK`] values (at least one row)
    /// as the `Softmax` op does (see the module docs). The per-row maxima and sums are spread over
    /// the row's elements, so the subtraction with the `exp` and the division run over the whole
    /// block as vectors.
    fn compute_block(&mut self, r0: usize) -> Result<()> {
        let splits = self.ops.rows;
        let nrows = splits.len() - 1;
        let b0 = splits[r0] as usize;
        let mut r1 = r0 + 1;
        while r1 < nrows && splits[r1 + 1] as usize - b0 <= WEIGHT_BLOCK {
            r1 += 1;
        }
        let b1 = splits[r1] as usize;
        let s = self.logits.range(b0, b1)?;
        let (weights, spread) = (&mut self.weights, &mut self.spread);
        spread.clear();
        for r in r0..r1 {
            let row = &s[splits[r] as usize - b0..splits[r + 1] as usize - b0];
            let Some((&first, rest)) = row.split_first() else { continue };
            let max = rest.iter().fold(first, |m, &x| m.ieee_maximum(x));
            spread.resize(spread.len() + row.len(), max);
        }
        weights.clear();
        weights.resize(s.len(), T::ZERO);
        T::exp_sub(s, spread, weights, self.bulk);
        for r in r0..r1 {
            let (a, b) = (splits[r] as usize - b0, splits[r + 1] as usize - b0);
            let mut sum = T::ZERO;
            for &e in &weights[a..b] {
                sum += e;
            }
            spread[a..b].fill(sum);
        }
        for (w, &sum) in weights.iter_mut().zip(spread.iter()) {
            *w = *w / sum;
        }
        self.rows = r0..r1;
        self.start = b0;
        Ok(())
    }
}

impl<T: PoolFloat> Pool<T> for SoftmaxPool<'_, '_, T> {
    #[inline(always)]
    fn pool(&mut self, r: usize, acc: &mut [T]) -> Result<()> {
        if !self.rows.contains(&r) {
            self.compute_block(r)?;
        }
        let (e0, e1) = (self.ops.rows[r] as usize, self.ops.rows[r + 1] as usize);
        add_weighted(&self.weights[e0 - self.start..e1 - self.start], &self.ops.f[e0 * acc.len()..e1 * acc.len()], acc);
        Ok(())
    }
}

/// Fills `chunk` (items `first..`, `N` values each) with innermost rows' pooled vectors.
fn fill<T: PoolFloat, const N: usize>(pool: &mut impl Pool<T>, first: usize, chunk: &mut [T]) -> Result<()> {
    for (r, out) in (first..).zip(chunk.chunks_exact_mut(N)) {
        let mut acc = [T::ZERO; N];
        pool.pool(r, &mut acc)?;
        out.copy_from_slice(&acc);
    }
    Ok(())
}

/// Fills `chunk` (outer rows `first..`, `N` values each) with the fold, by `step` from `identity`,
/// of the pooled vectors of each outer row's rows (`splits`).
fn fill_outer<T: PoolFloat, const N: usize, S: Fn(T, T) -> T>(
    pool: &mut impl Pool<T>,
    (splits, identity, step): (&[i64], T, S),
    first: usize,
    chunk: &mut [T],
) -> Result<()> {
    for (u, out) in (first..).zip(chunk.chunks_exact_mut(N)) {
        let mut best = [identity; N];
        for r in splits[u] as usize..splits[u + 1] as usize {
            let mut acc = [T::ZERO; N];
            pool.pool(r, &mut acc)?;
            for (b, a) in best.iter_mut().zip(acc) {
                *b = step(*b, a);
            }
        }
        out.copy_from_slice(&best);
    }
    Ok(())
}

/// An outer fold: the outer partition's splits, the identity, the combining step.
type OuterFold<'a, T> = (&'a [i64], T, &'a dyn Fn(T, T) -> T);

/// [`fill`] and [`fill_outer`] for any width.
fn fill_any<T: PoolFloat>(
    pool: &mut impl Pool<T>,
    outer: Option<OuterFold<'_, T>>,
    width: usize,
    first: usize,
    chunk: &mut [T],
) -> Result<()> {
    let Some((splits, identity, step)) = outer else {
        for (r, out) in (first..).zip(chunk.chunks_exact_mut(width)) {
            out.fill(T::ZERO);
            pool.pool(r, out)?;
        }
        return Ok(());
    };
    let mut acc = vec![T::ZERO; width];
    for (u, out) in (first..).zip(chunk.chunks_exact_mut(width)) {
        out.fill(identity);
        for r in splits[u] as usize..splits[u + 1] as usize {
            acc.fill(T::ZERO);
            pool.pool(r, &mut acc)?;
            for (b, &a) in out.iter_mut().zip(&acc) {
                *b = step(*b, a);
            }
        }
    }
    Ok(())
}

/// Fills `out` on the call's threads (chunks of about equal work: elements plus items, over the
/// innermost `rows_splits`), each chunk of items with its own pooler from `new_pool`:
/// pooled vectors, or with `outer` their fold per outer row by `Reduce`'s scalar steps (`+`, `*`
/// and the IEEE extremes of the `Maximum` / `Minimum` kernels), monomorphized per width and step
/// so the loops inline them. The first error of any chunk is returned.
fn fill_all<T: PoolFloat, P: Pool<T>>(
    new_pool: impl Fn() -> P + Sync,
    rows_splits: &[i64],
    (outer, splits): (Option<ReduceKind>, Option<&[i64]>),
    width: usize,
    out: &mut [T],
) -> Result<()> {
    let failed = std::sync::Mutex::new(None);
    let record = |r: Result<()>| {
        if let Err(e) = r {
            if let Ok(mut slot) = failed.lock() {
                slot.get_or_insert(e);
            }
        }
    };
    // The work of the items before item `i`: their elements and the items themselves.
    let rows = rows_splits;
    let (Some(kind), Some(splits)) = (outer, splits) else {
        let work = |i: usize| rows[i] as usize + i;
        crate::parallel::fill_balanced(out, width, work, |first, chunk| {
            let pool = &mut new_pool();
            record(match width {
                4 => fill::<T, 4>(pool, first, chunk),
                8 => fill::<T, 8>(pool, first, chunk),
                16 => fill::<T, 16>(pool, first, chunk),
                _ => fill_any(pool, None, width, first, chunk),
            })
        })?;
        return failed.into_inner().ok().flatten().map_or(Ok(()), Err);
    };
    let identity = kind.identity::<T>(true);
    let work = |u: usize| rows[splits[u] as usize] as usize + u;
    macro_rules! folded {
        ($step:expr) => {
            crate::parallel::fill_balanced(out, width, work, |first, chunk| {
                let pool = &mut new_pool();
                record(match width {
                    4 => fill_outer::<T, 4, _>(pool, (splits, identity, $step), first, chunk),
                    8 => fill_outer::<T, 8, _>(pool, (splits, identity, $step), first, chunk),
                    16 => fill_outer::<T, 16, _>(pool, (splits, identity, $step), first, chunk),
                    _ => fill_any(pool, Some((splits, identity, &$step)), width, first, chunk),
                })
            })
        };
    }
    match kind {
        ReduceKind::Sum => folded!(|a: T, b: T| a + b),
        ReduceKind::Prod => folded!(|a: T, b: T| a * b),
        ReduceKind::Max => folded!(|a: T, b: T| a.ieee_maximum(b)),
        ReduceKind::Min => folded!(|a: T, b: T| a.ieee_minimum(b)),
        other => Err(Error::graph(format!("row pooling: no outer {}", other.name()))),
    }?;
    failed.into_inner().ok().flatten().map_or(Ok(()), Err)
}

impl RowPooling {
    /// The fused op for vectors of `width` values, with an optional outer reduction (sum, max,
    /// min or prod: the ones that fold without a count), with weights from `weights`, standing
    /// for the ops of `original` (over `[w, f]`, or `[s, f]` for softmax weights).
    pub fn new(width: usize, outer: Option<ReduceKind>, weights: PoolWeights, original: OriginalOps) -> Result<Self> {
        if width == 0 {
            return Err(Error::graph("row pooling: vectors of width 0"));
        }
        if let Some(kind) = outer {
            if !matches!(kind, ReduceKind::Sum | ReduceKind::Max | ReduceKind::Min | ReduceKind::Prod) {
                return Err(Error::graph(format!("row pooling: no outer {}", kind.name())));
            }
        }
        if let PoolWeights::Softmax { logits: Some(c) } = &weights {
            if c.graph().outputs().len() != 1 {
                return Err(Error::graph("row pooling: the logits composite must have one output"));
            }
        }
        Ok(RowPooling { width, outer, weights, accelerated: Accelerated::default(), original })
    }

    /// The vectors' width.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The outer reduction, if any.
    pub fn outer(&self) -> Option<ReduceKind> {
        self.outer
    }

    /// Where the weights come from.
    pub fn weights(&self) -> &PoolWeights {
        &self.weights
    }

    /// The same op with its softmax logits computed by `logits` from the op's leading inputs
    /// (`None` unless the weights are the softmax of an input and `logits` has one output).
    pub fn with_logits(&self, logits: Composite) -> Option<RowPooling> {
        let one_output = logits.graph().outputs().len() == 1;
        matches!(self.weights, PoolWeights::Softmax { logits: None }).then_some(()).filter(|()| one_output)?;
        Some(RowPooling { weights: PoolWeights::Softmax { logits: Some(logits) }, ..self.clone() })
    }

    /// The same op computing float32 softmax weights' `exp(s - max)` with `exp` (same bits,
    /// vectorized) and its logits composite with `logits` (same bits, compiled).
    pub fn with_compiled(&self, exp: Option<BulkExpF32>, logits: Option<std::sync::Arc<dyn LogitsKernel>>) -> Self {
        RowPooling { accelerated: Accelerated { exp, logits }, ..self.clone() }
    }

    /// `None` when the operands are not shaped as the fusion assumed (the original ops then run).
    fn fast<T: PoolFloat>(&self, inputs: &[RaggedTensor]) -> Option<Result<RaggedTensor>> {
        let (f, leading) = inputs.split_last()?;
        let layout = match &self.weights {
            PoolWeights::Softmax { logits: Some(c) } => Some(c.layout(leading).ok()??),
            _ => None,
        };
        // The tensor whose values the weights are computed at (the composite's iteration space).
        let w = match &layout {
            Some(l) => l.reference,
            None => match leading {
                [w] => w,
                _ => return None,
            },
        };
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
            w: if layout.is_some() { &[] } else { w.flat_slice::<T>()? },
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
            let mut out: Vec<T> = ragtime_core::limits::try_vec("reduce_sum", len)?;
            out.resize(len, T::ZERO);
            let outer = (self.outer, ops.outer);
            match (&self.weights, &layout) {
                (PoolWeights::Given, _) => fill_all(|| GivenPool(&ops), ops.rows, outer, width, &mut out)?,
                (PoolWeights::Softmax { logits }, layout) => {
                    let computed = logits.as_ref().zip(layout.as_ref());
                    let new_pool = || SoftmaxPool {
                        ops: &ops,
                        logits: Logits {
                            input: ops.w,
                            computed,
                            kernel: self.accelerated.logits.as_deref(),
                            block: Vec::new(),
                        },
                        bulk: self.accelerated.exp,
                        rows: 0..0,
                        start: 0,
                        weights: Vec::new(),
                        spread: Vec::new(),
                    };
                    fill_all(new_pool, ops.rows, outer, width, &mut out)?
                }
            }
            let flat = DenseTensor::from_vec(vec![items, width], out)?;
            if kept.is_empty() {
                Ok(RaggedTensor::dense(flat))
            } else {
                RaggedTensor::new(flat, kept.to_vec())
            }
        };
        Some(run())
    }

    /// The replaced ops on `inputs`: the logits composite first, if any.
    fn run_original(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        match (&self.weights, inputs.split_last()) {
            (PoolWeights::Softmax { logits: Some(c) }, Some((f, leading))) => {
                let s = one_output(c.perform(leading)?)?;
                self.original.run(&[s, f.clone()])
            }
            _ => self.original.run(inputs),
        }
    }
}

fn one_output<T>(mut outputs: Vec<T>) -> Result<T> {
    match outputs.len() {
        1 => outputs.pop().ok_or_else(|| Error::graph("row pooling: no logits")),
        n => Err(Error::graph(format!("row pooling: {n} logit outputs"))),
    }
}

impl Op for RowPooling {
    fn name(&self) -> String {
        let weights = match &self.weights {
            PoolWeights::Given => String::new(),
            PoolWeights::Softmax { logits: None } => "w = softmax(s) per row, ".to_string(),
            PoolWeights::Softmax { logits: Some(c) } => match c.graph().expression() {
                e if e.len() <= 40 => format!("w = softmax({e}) per row, "),
                _ => "w = softmax(logits) per row, ".to_string(),
            },
        };
        match self.outer {
            Some(kind) => format!(
                "RowPooling{{{weights}sum(w * f) per row, then {} per outer row, width={}}}",
                kind.name(),
                self.width
            ),
            None => format!("RowPooling{{{weights}sum(w * f) per row, width={}}}", self.width),
        }
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        match (&self.weights, inputs.split_last()) {
            (PoolWeights::Softmax { logits: Some(c) }, Some((f, leading))) => {
                let s = one_output(c.infer(leading)?)?;
                self.original.infer(&[s, f.clone()])
            }
            _ => self.original.infer(inputs),
        }
    }

    fn keeps_uniform_rows(&self) -> bool {
        // The fast path keeps the outer partitions, as the original reductions do.
        true
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let dtype = inputs.last().map(RaggedTensor::dtype);
        let fast = match dtype {
            Some(DType::F32) => self.fast::<f32>(inputs),
            Some(DType::F64) => self.fast::<f64>(inputs),
            _ => None,
        };
        match fast {
            Some(result) => Ok(vec![result?]),
            None => self.run_original(inputs),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn inner_graph(&self) -> Option<String> {
        match &self.weights {
            PoolWeights::Softmax { logits: Some(c) } => c.inner_graph(),
            _ => None,
        }
    }

    fn properties(&self) -> OpProperties {
        // Operands that do not line up fail, as the multiplication it replaces does.
        OpProperties { can_fail: true, cost: Cost::Cheap, ..OpProperties::default() }
    }
}
