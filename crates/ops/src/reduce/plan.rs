//! The [`ReductionPlan`]: which elements fold into which result element, one [`ReductionStage`]
//! per reduced axis of a ragged input, with TensorFlow's ragged reduction rules; and the reduced
//! output type.

use std::borrow::Cow;

use ragtime_core::{DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};

use crate::reduce::axes::Axes;

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// One step of a [`ReductionPlan`]: output element `o` of the stage folds the stage's input
/// elements `members[offsets[o]..offsets[o + 1]]`, in order. The first stage reads the input's
/// flat values (row-major), each later stage the previous stage's outputs.
///
/// The fields are private: stages are built only by [`plan_reduction`], so `offsets` is never
/// empty, never decreases and ends at `members.len()`, and [`ReductionStage::group`] may slice.
#[derive(Debug, Clone)]
pub struct ReductionStage {
    /// `offsets[o]..offsets[o + 1]` are the members of output element `o` (one more entry than
    /// there are output elements).
    offsets: Vec<usize>,
    /// Indices into the stage's input, grouped by output element.
    members: Vec<usize>,
    /// The stage folds a ragged axis: an empty group of `reduce_max` / `reduce_min` gives the
    /// finite extreme rather than an infinity (module doc).
    ragged_axis: bool,
}

impl ReductionStage {
    /// Indices into the stage's input, grouped by output element.
    pub fn members(&self) -> &[usize] {
        &self.members
    }

    /// True when the stage folds a ragged axis (an empty group of `reduce_max` / `reduce_min`
    /// gives the finite extreme rather than an infinity).
    pub fn ragged_axis(&self) -> bool {
        self.ragged_axis
    }

    /// Number of output elements.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when the stage has no output elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The members of output element `o`.
    pub fn group(&self, o: usize) -> &[usize] {
        &self.members[self.offsets[o]..self.offsets[o + 1]]
    }

    /// Every one of `n` elements in a group of its own (an empty axis list).
    fn identity(n: usize) -> Self {
        ReductionStage { offsets: (0..=n).collect(), members: (0..n).collect(), ragged_axis: false }
    }
}

/// How a reduction folds a tensor: one or more [`ReductionStage`]s applied in order (several
/// when a ragged tensor is reduced over several axes, one axis per stage), and the structure of
/// the result. Built by [`plan_reduction`].
#[derive(Debug, Clone)]
pub struct ReductionPlan {
    /// Number of flat values of the input the plan was made for.
    input_len: usize,
    /// At least one stage.
    stages: Vec<ReductionStage>,
    /// The result's row partitions (the input's own, shared, for the dims that are kept).
    pub partitions: Vec<RowPartition>,
    /// Shape of the result's flat values (the full shape when the result is dense).
    pub flat_shape: Vec<usize>,
}

impl ReductionPlan {
    /// The stages, in the order they apply (never empty).
    pub fn stages(&self) -> &[ReductionStage] {
        &self.stages
    }

    /// Number of output elements.
    pub fn len(&self) -> usize {
        self.stages.last().map_or(self.input_len, ReductionStage::len)
    }

    /// True when the result has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fails unless `len` is the number of flat values the plan was made for (`op` is named).
    pub fn check_input(&self, op: &str, len: usize) -> Result<()> {
        if len == self.input_len {
            return Ok(());
        }
        Err(Error::shapes(op, format!("input 0 has {len} flat values, the reduction plan expects {}", self.input_len)))
    }

    /// Folds `data` (the input's flat values) through every stage: each group starts from
    /// `init(stage)` and takes its members with `step` ([`fold_group`]'s order). One value per
    /// output element.
    pub fn fold<T: Copy>(
        &self,
        op: &str,
        data: &[T],
        init: impl Fn(&ReductionStage) -> T,
        step: impl Fn(T, T) -> T,
    ) -> Result<Vec<T>> {
        self.check_input(op, data.len())?;
        let mut current = Cow::Borrowed(data);
        for stage in &self.stages {
            let folded = (0..stage.len())
                .map(|o| {
                    let group = stage.group(o);
                    fold_group(group.len(), &|k| current[group[k]], init(stage), &step)
                })
                .collect();
            current = Cow::Owned(folded);
        }
        Ok(current.into_owned())
    }

    /// How many input values fold into each output element (the divisor of `reduce_mean`).
    pub fn counts(&self) -> Vec<usize> {
        let mut counts: Option<Vec<usize>> = None;
        for stage in &self.stages {
            let group_count = |o: usize| match &counts {
                None => stage.group(o).len(),
                Some(inner) => stage.group(o).iter().map(|&m| inner[m]).sum(),
            };
            counts = Some((0..stage.len()).map(group_count).collect());
        }
        counts.unwrap_or_else(|| vec![1; self.input_len])
    }

    /// The plan as one stage over the input: output element `o` gathers every input value that
    /// folds into it through all the stages, in order. Reductions that are not folds of one
    /// binary op (variance, log-sum-exp) read their groups from it; an empty group of an inner
    /// stage contributes nothing.
    pub fn flattened(&self) -> ReductionStage {
        let Some((first, rest)) = self.stages.split_first() else {
            return ReductionStage::identity(self.input_len);
        };
        let mut flat = first.clone();
        for stage in rest {
            let mut offsets = Vec::with_capacity(stage.offsets.len());
            let mut members = Vec::with_capacity(flat.members.len());
            offsets.push(0);
            for o in 0..stage.len() {
                for &m in stage.group(o) {
                    members.extend_from_slice(flat.group(m));
                }
                offsets.push(members.len());
            }
            flat = ReductionStage { offsets, members, ragged_axis: stage.ragged_axis };
        }
        flat
    }

    /// Wraps the folded values (shape `flat_shape`) into the result tensor.
    pub fn finish(&self, flat: DenseTensor) -> Result<RaggedTensor> {
        if flat.shape() != self.flat_shape.as_slice() {
            return Err(Error::shapes(
                "reduce",
                format!("folded values of shape {:?}, expected {:?}", flat.shape(), self.flat_shape),
            ));
        }
        RaggedTensor::new(flat, self.partitions.clone())
    }
}

/// Groups of more members than this fold as two halves combined ([`fold_group`]).
pub const FOLD_BLOCK: usize = 1024;

/// Folds members `get(0)..get(n)`: in order from `init` when there are at most [`FOLD_BLOCK`],
/// else each half (split at a multiple of the block) folded the same way from `init`, then the
/// two combined with `step`. So a float32 sum of 2^24 values keeps an error of about log2(n / 1024)
/// roundings instead of one per value (in order, once the running sum passes 2^24 times a term,
/// further terms are lost entirely), as TensorFlow's tree reductions do; groups up to the block
/// give the same bits as an in-order fold. Every reduction folded with it (sum, product,
/// max, min, any, all) is associative up to rounding, and `init` is its identity.
pub fn fold_group<T: Copy>(n: usize, get: &impl Fn(usize) -> T, init: T, step: &impl Fn(T, T) -> T) -> T {
    fn range<T: Copy>(lo: usize, hi: usize, get: &impl Fn(usize) -> T, init: T, step: &impl Fn(T, T) -> T) -> T {
        if hi - lo <= FOLD_BLOCK {
            return (lo..hi).fold(init, |acc, k| step(acc, get(k)));
        }
        let mid = lo + ((hi - lo) / 2).next_multiple_of(FOLD_BLOCK);
        step(range(lo, mid, get, init, step), range(mid, hi, get, init, step))
    }
    range(0, n, get, init, step)
}

/// Folds a row of `acc.len()`-wide items (`items`, a whole number of them; `acc.len() >= 1`)
/// element by element into `acc` in [`fold_group`]'s order: element `s` of `acc` ends as
/// `fold_group(n, |k| items[k * inner + s], init, step)`, bit for bit, where `add(acc, item)` does
/// `acc[s] = step(acc[s], item[s])` for every `s`. Taking whole items lets the columns of a row
/// vectorize; rows of more than [`FOLD_BLOCK`] items fold their halves into separate
/// accumulators, combined with `add`.
pub fn fold_items<T: Copy>(acc: &mut [T], items: &[T], init: T, add: &impl Fn(&mut [T], &[T])) {
    let inner = acc.len();
    let n = items.len() / inner;
    if n <= FOLD_BLOCK {
        acc.fill(init);
        for item in items.chunks_exact(inner) {
            add(acc, item);
        }
        return;
    }
    let mid = (n / 2).next_multiple_of(FOLD_BLOCK) * inner;
    fold_items(acc, &items[..mid], init, add);
    // One accumulator per halving of a row of over FOLD_BLOCK items: small next to the row.
    let mut right = vec![init; inner];
    fold_items(&mut right, &items[mid..], init, add);
    add(acc, &right);
}

/// Resolved axes from the innermost outwards: the order in which a ragged tensor reduces them
/// (TensorFlow resolves negative axes before sorting, so the order is by true position).
fn innermost_first(mut axes: Vec<usize>) -> Vec<usize> {
    axes.sort_unstable_by(|a, b| b.cmp(a));
    axes
}

/// Which input elements fold into which result element when `x` is reduced along `axes` — the
/// one definition of TensorFlow's reduction grouping (module doc). An axis outside
/// `-rank..rank`, or one named twice, is `invalid_argument`, naming `op`.
pub fn plan_reduction(
    ctx: &ExecContext,
    op: &str,
    x: &RaggedTensor,
    axes: &Axes,
    keepdims: bool,
) -> Result<ReductionPlan> {
    let input_len = x.flat_values().len();
    let flat_shape = x.flat_values().shape();
    let Some(axes) = axes.resolve(op, x.rank())? else {
        // Every value into one group, folded as TensorFlow folds the dense flat values.
        let stage =
            ReductionStage { offsets: vec![0, input_len], members: (0..input_len).collect(), ragged_axis: false };
        let flat_shape = if keepdims { vec![1; x.rank()] } else { Vec::new() };
        return Ok(ReductionPlan { input_len, stages: vec![stage], partitions: Vec::new(), flat_shape });
    };
    if x.is_dense() {
        // TensorFlow's dense kernels fold every listed axis at once.
        let (stage, flat_shape) = plan_uniform_axes(ctx, op, flat_shape, &axes, keepdims)?;
        return Ok(ReductionPlan { input_len, stages: vec![stage], partitions: Vec::new(), flat_shape });
    }
    let mut partitions = x.partitions().to_vec();
    let mut flat_shape = flat_shape.to_vec();
    let mut stages = Vec::with_capacity(axes.len().max(1));
    for axis in innermost_first(axes) {
        let (stage, next_partitions, next_shape) = plan_axis(ctx, op, &partitions, &flat_shape, axis, keepdims)?;
        stages.push(stage);
        partitions = next_partitions;
        flat_shape = next_shape;
    }
    if stages.is_empty() {
        stages.push(ReductionStage::identity(input_len));
    }
    Ok(ReductionPlan { input_len, stages, partitions, flat_shape })
}

/// One stage folding resolved `axis` of a tensor with `partitions` and flat values of shape
/// `flat_shape`, and the structure of its result (partitions, flat shape).
fn plan_axis(
    ctx: &ExecContext,
    op: &str,
    partitions: &[RowPartition],
    flat_shape: &[usize],
    axis: usize,
    keepdims: bool,
) -> Result<(ReductionStage, Vec<RowPartition>, Vec<usize>)> {
    let rr = partitions.len();
    if rr == 0 || axis > rr {
        // A uniform axis: index `axis - rr` of the flat values (any axis of a dense tensor).
        let (stage, flat_shape) = plan_uniform_axes(ctx, op, flat_shape, &[axis - rr], keepdims)?;
        return Ok((stage, partitions.to_vec(), flat_shape));
    }
    plan_ragged_axis(ctx, op, partitions, flat_shape, axis, keepdims)
}

/// Folds dimensions `axes` (distinct, in `0..shape.len()`) of dense values of shape `shape` in
/// one stage, and gives the result's shape. Within a group the listed axes run with the first
/// one varying fastest (TensorFlow's `reduce_join` order); groups are the kept dims, row-major.
///
/// The number of groups (the result's size) is checked before anything is built: the values may
/// be empty while the kept dims are huge (`[0, 2^62]` summed over axis 0).
fn plan_uniform_axes(
    ctx: &ExecContext,
    op: &str,
    shape: &[usize],
    axes: &[usize],
    keepdims: bool,
) -> Result<(ReductionStage, Vec<usize>)> {
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    // Offsets of every combination of indices along `dims`, row-major (the last dim fastest).
    let offsets_along = |dims: &[usize]| {
        dims.iter().fold(vec![0usize], |acc, &d| {
            let (len, stride) = (shape[d], strides[d]);
            acc.iter().flat_map(|&base| (0..len).map(move |i| base + i * stride)).collect()
        })
    };
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let kept_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    ctx.checked_len(op, &kept_shape)?;
    let first_listed_fastest: Vec<usize> = axes.iter().rev().copied().collect();
    // Without values every group is empty (and the reduced dims may be huge): nothing to list.
    let empty = shape.contains(&0);
    let within_group = if empty { Vec::new() } else { offsets_along(&first_listed_fastest) };
    let group_starts = if kept_shape.contains(&0) { Vec::new() } else { offsets_along(&kept) };
    let members: Vec<usize> =
        group_starts.iter().flat_map(|&start| within_group.iter().map(move |&k| start + k)).collect();
    let offsets = (0..=group_starts.len()).map(|g| g * within_group.len()).collect();
    let out_shape = if keepdims {
        shape.iter().enumerate().map(|(d, &n)| if axes.contains(&d) { 1 } else { n }).collect()
    } else {
        kept.iter().map(|&d| shape[d]).collect()
    };
    Ok((ReductionStage { offsets, members, ragged_axis: false }, out_shape))
}

/// Folds ragged axis `axis` (`0 <= axis <= ragged rank`, ragged rank >= 1) of a tensor with
/// `parts` and flat values of shape `flat_shape`; gives the stage and the result's partitions
/// and flat shape.
fn plan_ragged_axis(
    ctx: &ExecContext,
    op: &str,
    parts: &[RowPartition],
    flat_shape: &[usize],
    axis: usize,
    keepdims: bool,
) -> Result<(ReductionStage, Vec<RowPartition>, Vec<usize>)> {
    // `segment[v]`: the result element that element `v` of the current dimension folds into.
    let (mut segment, mut nsegments): (Vec<usize>, usize) = if axis == 0 {
        // Across rows, by position within the row.
        let p = &parts[0];
        let splits = p.row_splits();
        let rowids = p.value_rowids();
        ((0..p.nvals()).map(|v| v - splits[rowids[v] as usize] as usize).collect(), p.max_row_length())
    } else {
        let p = &parts[axis - 1];
        (p.value_rowids().iter().map(|&r| r as usize).collect(), p.nrows())
    };
    let folded_rows = nsegments;
    // Ragged dims below the folded one: align the folded rows by position, each result row as
    // long as the longest row folded into it.
    let mut new_partitions = Vec::new();
    for q in &parts[axis.max(1)..] {
        let splits = q.row_splits();
        let row_len = |r: usize| (splits[r + 1] - splits[r]) as usize;
        let mut lengths = vec![0usize; nsegments];
        for (r, &o) in segment.iter().enumerate() {
            lengths[o] = lengths[o].max(row_len(r));
        }
        let mut out_splits = Vec::with_capacity(nsegments + 1);
        out_splits.push(0usize);
        for len in &lengths {
            out_splits.push(out_splits[out_splits.len() - 1] + len);
        }
        let mut next = Vec::with_capacity(q.nvals());
        for (r, &o) in segment.iter().enumerate() {
            next.extend((0..row_len(r)).map(|t| out_splits[o] + t));
        }
        nsegments = out_splits[nsegments];
        new_partitions.push(RowPartition::from_row_splits(out_splits.iter().map(|&s| s as i64).collect())?);
        segment = next;
    }
    // Group the flat values' rows (each `inner` elements) by segment, in input order.
    let inner_shape = &flat_shape[1..];
    let inner: usize = inner_shape.iter().product();
    // The result's size: the values may be empty while the inner dims are huge.
    let mut out_shape = vec![nsegments];
    out_shape.extend_from_slice(inner_shape);
    ctx.checked_len(op, &out_shape)?;
    let mut counts = vec![0usize; nsegments];
    for &o in &segment {
        counts[o] += 1;
    }
    let mut offsets = Vec::with_capacity(nsegments * inner + 1);
    let mut start = 0usize;
    for &count in &counts {
        for _ in 0..inner {
            offsets.push(start);
            start += count;
        }
    }
    offsets.push(start);
    let mut cursor = offsets[..offsets.len() - 1].to_vec();
    let mut members = vec![0usize; start];
    for (r, &o) in segment.iter().enumerate() {
        for s in 0..inner {
            let c = &mut cursor[o * inner + s];
            members[*c] = r * inner + s;
            *c += 1;
        }
    }

    let mut partitions = parts[..axis.saturating_sub(1)].to_vec();
    if keepdims {
        if new_partitions.is_empty() {
            // The folded dim was the innermost ragged one: a size-1 dim in the flat values.
            out_shape.insert(if axis == 0 { 0 } else { 1 }, 1);
        } else if axis == 0 {
            partitions.push(RowPartition::from_uniform_row_length(folded_rows, 1)?);
        } else {
            partitions.push(RowPartition::from_uniform_row_length(1, folded_rows)?);
        }
    }
    partitions.extend(new_partitions);
    Ok((ReductionStage { offsets, members, ragged_axis: true }, partitions, out_shape))
}

/// The type of `x` reduced along `axes`, keeping its dtype (callers set the result dtype). An
/// axis outside `-rank..rank`, or one named twice, is `invalid_argument`, naming `op`.
pub fn reduced_type(op: &str, x: &TensorType, axes: &Axes, keepdims: bool) -> Result<TensorType> {
    let Some(axes) = axes.resolve(op, x.rank())? else {
        let dims = if keepdims { vec![Dim::Known(1); x.rank()] } else { Vec::new() };
        return TensorType::new(x.dtype(), 0, dims);
    };
    // One axis at a time, as the ragged plan goes (for a dense tensor the order is immaterial).
    innermost_first(axes).into_iter().try_fold(x.clone(), |ty, axis| reduced_type_axis(&ty, axis, keepdims))
}

/// The type of `x` reduced along resolved axis `a`.
fn reduced_type_axis(x: &TensorType, a: usize, keepdims: bool) -> Result<TensorType> {
    let rr = x.ragged_rank();
    let dims = x.dims();
    let (ragged_rank, new_dims): (usize, Vec<Dim>) = if rr == 0 || a > rr {
        let mut d = dims.to_vec();
        if keepdims {
            d[a] = Dim::Known(1);
        } else {
            d.remove(a);
        }
        (rr, d)
    } else if a == 0 {
        // Rows fold by position: as many result rows as the longest row.
        let rest = &dims[2..];
        match (keepdims, rr) {
            (false, _) => (rr - 1, [Dim::Unknown].iter().chain(rest).copied().collect()),
            (true, 1) => (0, [Dim::Known(1), Dim::Unknown].iter().chain(rest).copied().collect()),
            (true, _) => (rr, [Dim::Known(1), Dim::Ragged].iter().chain(rest).copied().collect()),
        }
    } else if keepdims && a == rr {
        (rr - 1, dims[..a].iter().chain(&[Dim::Known(1)]).chain(&dims[a + 1..]).copied().collect())
    } else if keepdims {
        (rr, dims.to_vec())
    } else {
        (rr - 1, dims[..a].iter().chain(&dims[a + 1..]).copied().collect())
    };
    TensorType::new(x.dtype(), ragged_rank, new_dims)
}
