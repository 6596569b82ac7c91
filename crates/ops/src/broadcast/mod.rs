//! TensorFlow's ragged broadcasting (`tf.ragged` elementwise ops), in one place: the result type of
//! broadcast operands ([`broadcast_types`]) and their values aligned element by element
//! ([`broadcast_values`]).
//!
//! The rules are those of TensorFlow's `DynamicRaggedShape` broadcasting:
//!
//! 1. Shapes are aligned from the right; a lower-rank operand gets leading dimensions of size 1.
//! 2. The outer dimension and every uniform dimension broadcast as in NumPy: sizes must be equal,
//!    or one of them is 1 and is repeated. Uniform sizes must agree among themselves even at a
//!    dimension where another operand is ragged (and even when it has no rows to compare with).
//! 3. A uniform dimension of size 1 broadcasts against a ragged dimension (it is repeated across
//!    each row). A uniform dimension of another size `n` only matches a ragged dimension whose
//!    rows all have `n` values.
//! 4. Two ragged dimensions must have the same row lengths (after the outer dimensions were
//!    broadcast); a ragged row of length 1 is *not* repeated.
//! 5. The result has as many ragged dimensions as the most ragged operand once it is padded to
//!    the result's rank (a dense operand adds none); the dimensions after those are uniform
//!    and live in the result's flat values.
//!
//! A row partition built with a uniform row length (`RowPartition::from_uniform_row_length`,
//! e.g. the size-1 dimension that `keepdims` leaves) counts as a uniform dimension, as in
//! TensorFlow, so `x - reduce_max(x, axis, keepdims=true)` broadcasts.
//!
//! Architecture invariant: when every operand has the same structure (same partitions, same flat
//! shape) nothing is copied and the result reuses operand 0's partitions (O(1) when the
//! partitions share their `Arc`). Otherwise each output partition is an input's partition
//! (same `Arc`) whenever its rows are that input's rows.

use ragtime_core::{
    dispatch_dtype, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType,
};
use ragtime_graph::{Graph, VarId};

/// Operands broadcast to one common shape.
#[derive(Debug, Clone)]
pub struct Broadcast {
    /// The result's row partitions (outermost first), reused (same Arc) from an input whenever possible.
    pub partitions: Vec<RowPartition>,
    /// Shape of the result's flat values ([nvals, inner...], or the full shape when the result is dense).
    pub flat_shape: Vec<usize>,
    /// Each input's flat values, broadcast to `flat_shape` and aligned element by element.
    pub operands: Vec<DenseTensor>,
}

impl Broadcast {
    /// Wraps the computed flat values (shape `flat_shape`) into the result tensor.
    pub fn finish(&self, flat: DenseTensor) -> Result<RaggedTensor> {
        if flat.shape() != self.flat_shape.as_slice() {
            return Err(Error::shapes(
                "broadcast",
                format!("computed flat values of shape {:?}, expected {:?}", flat.shape(), self.flat_shape),
            ));
        }
        RaggedTensor::new(flat, self.partitions.clone())
    }
}

/// The number of ragged dimensions of the broadcast result of operands with these
/// `(rank, ragged_rank)`: each ragged operand counts its ragged dims plus the leading dims it is
/// padded with; dense operands count none (TensorFlow's `_get_broadcast_num_row_partitions`).
fn broadcast_ragged_rank(shapes: impl Iterator<Item = (usize, usize)> + Clone) -> usize {
    let rank = shapes.clone().map(|(r, _)| r).max().unwrap_or(0);
    shapes.filter(|&(_, rr)| rr > 0).map(|(r, rr)| rr + (rank - r)).max().unwrap_or(0)
}

/// Broadcasts runtime values (any mix of dense and ragged, any dtypes: dtype is not checked here).
///
/// A failure where a dense operand of rank 1 has as many values as a ragged operand has rows
/// (`x - x.reduce_mean(1)`: a per-row result lines up with the last dimension, not the rows)
/// says so and suggests `keepdims`.
pub fn broadcast_values(ctx: &ExecContext, op: &str, inputs: &[RaggedTensor]) -> Result<Broadcast> {
    broadcast_values_aligned(ctx, op, inputs).map_err(|e| keepdims_hint(e, inputs))
}

/// Adds the `keepdims` hint to a shape error between a per-row dense vector and a ragged operand.
fn keepdims_hint(e: Error, inputs: &[RaggedTensor]) -> Error {
    let Error::IncompatibleShapes { op, reason } = e else { return e };
    let per_row = inputs.iter().position(|d| d.is_dense() && d.rank() == 1);
    let ragged = inputs.iter().position(|r| !r.is_dense() && r.rank() >= 2);
    match (per_row, ragged) {
        (Some(d), Some(r)) if inputs[d].nrows() == inputs[r].nrows() && inputs[r].nrows() != 1 => Error::shapes(
            op,
            format!(
                "{reason}; input {d} is a dense vector with one value per row of input {r}, but broadcasting lines \
                 it up with the last dimension, not the rows: did you mean keepdims=true in the reduction that made \
                 it (`x.reduce_mean(keepdims(1))`)?"
            ),
        ),
        _ => Error::IncompatibleShapes { op, reason },
    }
}

fn broadcast_values_aligned(ctx: &ExecContext, op: &str, inputs: &[RaggedTensor]) -> Result<Broadcast> {
    let first = inputs.first().ok_or_else(|| Error::argument(op, "nothing to broadcast"))?;
    // Same splits are not enough when a uniform row length differs (possible with no rows): the
    // general path then builds the partition of the broadcast length that the type promises.
    let same_uniform = |x: &RaggedTensor| {
        x.partitions().iter().zip(first.partitions()).all(|(p, q)| p.uniform_row_length() == q.uniform_row_length())
    };
    let same_shape = |x: &RaggedTensor| {
        x.same_structure(first) && x.flat_values().shape() == first.flat_values().shape() && same_uniform(x)
    };
    let rank = inputs.iter().map(RaggedTensor::rank).max().unwrap_or(0);
    if rank == 0 || inputs[1..].iter().all(same_shape) {
        // Nothing to align: the operands are the inputs' own flat values.
        return Ok(Broadcast {
            partitions: first.partitions().to_vec(),
            flat_shape: first.flat_values().shape().to_vec(),
            operands: inputs.iter().map(|x| x.flat_values().clone()).collect(),
        });
    }
    if let Some(dense) = dense::broadcast_dense(ctx, op, inputs) {
        return dense;
    }
    broadcast_general(ctx, op, inputs)
}

/// The general path: every operand aligned by an index per result element, dimension by
/// dimension (ragged layers, uniform layers, the outer dimension), with TensorFlow's errors.
fn broadcast_general(ctx: &ExecContext, op: &str, inputs: &[RaggedTensor]) -> Result<Broadcast> {
    let rank = inputs.iter().map(RaggedTensor::rank).max().unwrap_or(0);
    let ragged_rank = broadcast_ragged_rank(inputs.iter().map(|x| (x.rank(), x.ragged_rank())));
    let mut sources: Vec<Source<'_>> =
        inputs.iter().map(|x| Source { x, pad: rank - x.rank(), gather: Gather::Same }).collect();

    // Dimension 0: NumPy rules on the number of rows.
    let mut count = 1usize;
    let mut count_owner = 0usize;
    for (i, s) in sources.iter().enumerate() {
        let n = s.outer_size();
        if n != 1 {
            if count == 1 {
                count = n;
                count_owner = i;
            } else if n != count {
                return Err(Error::shapes(
                    op,
                    format!("dimension 0: input {i} has {n} rows but input {count_owner} has {count}"),
                ));
            }
        }
    }
    for s in &mut sources {
        if s.outer_size() != count {
            s.gather = Gather::Zero;
        }
    }
    let outer_count = count;

    let mut partitions = Vec::with_capacity(ragged_rank);
    let mut inner_dims = Vec::new();
    for dim in 1..rank {
        let layers: Vec<Layer<'_>> = sources.iter().map(|s| s.layer(dim)).collect();
        let target = target_layer(op, dim, &sources, &layers, count)?;
        if dim <= ragged_rank {
            partitions.push(match &target {
                Target::Ragged(p) => p.clone(),
                Target::Uniform(len) => reusable_uniform(&sources, &layers, *len, count)
                    .map_or_else(|| RowPartition::from_uniform_row_length(*len, count), Ok)?,
            });
        } else {
            match target {
                Target::Uniform(len) => inner_dims.push(len),
                // Rule 5 makes this impossible: every ragged layer lies within `ragged_rank`.
                Target::Ragged(_) => {
                    return Err(Error::shapes(op, format!("dimension {dim} is ragged past the result's ragged rank")))
                }
            }
        }
        if let Target::Uniform(len) = &target {
            // The gathers below build an index per result element: refuse a size past the limits first.
            ctx.checked_len(op, &[count, *len])?;
        }
        for (s, layer) in sources.iter_mut().zip(&layers) {
            s.gather = next_gather(&s.gather, layer, &target, count);
        }
        count = match &target {
            Target::Ragged(p) => p.nvals(),
            Target::Uniform(len) => count
                .checked_mul(*len)
                .ok_or_else(|| Error::shapes(op, format!("the broadcast shape is too large at dimension {dim}")))?,
        };
    }

    let flat_shape = if ragged_rank == 0 {
        std::iter::once(outer_count).chain(inner_dims).collect::<Vec<_>>()
    } else {
        // After the last partition, `count` tracked the uniform inner dims too; recompute the
        // number of values from the last partition.
        let nvals = partitions.last().map_or(outer_count, RowPartition::nvals);
        std::iter::once(nvals).chain(inner_dims).collect::<Vec<_>>()
    };
    let operands = sources.iter().map(|s| s.operand(ctx, &flat_shape)).collect::<Result<Vec<_>>>()?;
    Ok(Broadcast { partitions, flat_shape, operands })
}

/// One operand, seen as padded to the result's rank.
struct Source<'a> {
    x: &'a RaggedTensor,
    /// Number of leading size-1 dimensions added.
    pad: usize,
    /// Which element of this operand each result element (at the current dimension) reads.
    gather: Gather,
}

/// Maps the elements of the result at one dimension to the operand's elements at that dimension.
#[derive(Debug, Clone)]
enum Gather {
    /// Element `t` reads element `t`: nothing was broadcast so far.
    Same,
    /// Every element reads element 0 (an operand of size-1 dims only, e.g. a scalar).
    Zero,
    /// Element `t` reads element `index[t]`.
    Index(Vec<usize>),
}

impl Gather {
    fn source_row(&self, t: usize) -> usize {
        match self {
            Gather::Same => t,
            Gather::Zero => 0,
            Gather::Index(ix) => ix[t],
        }
    }
}

/// How an operand splits the elements of one dimension into the next.
enum Layer<'a> {
    /// Every row has `len` values; `partition` is the operand's partition if it has one.
    Uniform { len: usize, partition: Option<&'a RowPartition> },
    /// Rows of their own lengths.
    Ragged(&'a RowPartition),
}

/// The result's split of one dimension into the next.
enum Target {
    Uniform(usize),
    Ragged(RowPartition),
}

impl Target {
    fn row_len(&self, t: usize) -> usize {
        match self {
            Target::Uniform(len) => *len,
            Target::Ragged(p) => split_len(p.row_splits(), t),
        }
    }
}

fn split_len(splits: &[i64], row: usize) -> usize {
    (splits[row + 1] - splits[row]) as usize
}

impl<'a> Source<'a> {
    /// Size of dimension 0 of the padded operand.
    fn outer_size(&self) -> usize {
        if self.pad > 0 {
            1
        } else {
            self.x.nrows()
        }
    }

    /// The split of dimension `dim - 1` into dimension `dim` (`1 <= dim < rank`).
    fn layer(&self, dim: usize) -> Layer<'a> {
        let x = self.x;
        if dim < self.pad {
            return Layer::Uniform { len: 1, partition: None };
        }
        if dim == self.pad {
            return Layer::Uniform { len: x.nrows(), partition: None };
        }
        let own = dim - self.pad;
        let rr = x.ragged_rank();
        if own <= rr {
            let p = &x.partitions()[own - 1];
            return match p.uniform_row_length() {
                Some(len) => Layer::Uniform { len, partition: Some(p) },
                None => Layer::Ragged(p),
            };
        }
        Layer::Uniform { len: x.flat_values().shape()[own - rr], partition: None }
    }

    /// The operand's flat values broadcast to `flat_shape`.
    fn operand(&self, ctx: &ExecContext, flat_shape: &[usize]) -> Result<DenseTensor> {
        let flat = self.x.flat_values();
        match &self.gather {
            Gather::Same if flat.shape() == flat_shape => Ok(flat.clone()),
            Gather::Same => flat.reshape(flat_shape.to_vec()),
            Gather::Zero => fill_with_first(ctx, flat, flat_shape),
            Gather::Index(ix) => {
                let taken = flat.take_rows_flat_in(ctx, ix)?;
                if flat_shape.len() == 1 {
                    Ok(taken)
                } else {
                    taken.reshape(flat_shape.to_vec())
                }
            }
        }
    }
}

/// A tensor of `shape` filled with the first element of `value` (which has at least one).
fn fill_with_first(ctx: &ExecContext, value: &DenseTensor, shape: &[usize]) -> Result<DenseTensor> {
    let n: usize = shape.iter().product();
    dispatch_dtype!(value.dtype(),
        T => {
            let v = value.as_slice::<T>().and_then(|s| s.first().copied()).unwrap_or_default();
            DenseTensor::from_vec(shape.to_vec(), vec![v; n])
        },
        string => DenseTensor::full_in(ctx, shape.to_vec(), &value.take_rows_flat_in(ctx, &[0])?))
}

/// The result's split of dimension `dim - 1` (which has `count` elements) into `dim`, checking
/// that every operand's split agrees with it.
fn target_layer(op: &str, dim: usize, sources: &[Source<'_>], layers: &[Layer<'_>], count: usize) -> Result<Target> {
    // The reference is a ragged operand, preferably one not broadcast so far (its partition is
    // then the result's, shared).
    let reference = layers
        .iter()
        .enumerate()
        .filter_map(|(i, layer)| match layer {
            Layer::Ragged(p) => Some((i, *p)),
            Layer::Uniform { .. } => None,
        })
        .min_by_key(|&(i, _)| !matches!(sources[i].gather, Gather::Same));
    // The uniform layers must agree among themselves (NumPy rules), even when there are no rows
    // to compare them with a ragged layer: `broadcast_types` refuses such shapes as well.
    let uniform_len = common_uniform_len(op, dim, layers)?;
    let Some((r, p)) = reference else {
        return Ok(Target::Uniform(uniform_len));
    };
    let target = match sources[r].gather {
        Gather::Same => p.clone(),
        ref g => {
            let splits = p.row_splits();
            let mut out = Vec::with_capacity(count + 1);
            out.push(0i64);
            let mut total = 0i64;
            for t in 0..count {
                let row = g.source_row(t);
                total += splits[row + 1] - splits[row];
                out.push(total);
            }
            RowPartition::from_row_splits(out)?
        }
    };
    let target_splits = target.row_splits();
    for (i, layer) in layers.iter().enumerate() {
        if i == r {
            continue;
        }
        if let Layer::Uniform { len, .. } = *layer {
            if len != 1 && !matches!(sources[i].gather, Gather::Same) {
                return Err(broadcast_uniform_against_ragged(op, dim, i, len, r));
            }
        }
        let mismatch = match *layer {
            Layer::Uniform { len: 1, .. } => None,
            Layer::Uniform { len, .. } => (0..count).find(|&t| split_len(target_splits, t) != len).map(|t| (t, len)),
            Layer::Ragged(q) => match sources[i].gather {
                Gather::Same if q.same(&target) => None,
                ref g => {
                    let qs = q.row_splits();
                    (0..count)
                        .map(|t| (t, split_len(qs, g.source_row(t))))
                        .find(|&(t, len)| split_len(target_splits, t) != len)
                }
            },
        };
        if let Some((t, len)) = mismatch {
            return Err(Error::shapes(
                op,
                format!(
                    "dimension {dim}: row {t} has {len} values in input {i} but {} in input {r}",
                    split_len(target_splits, t)
                ),
            ));
        }
    }
    Ok(Target::Ragged(target))
}

/// TensorFlow 2.21 refuses a uniform dimension of size `len` (not 1) against a ragged dimension when
/// its operand was broadcast along an earlier dimension, whatever the row lengths: a dense `[k]` or
/// `[1, k]` against `[n, (r)]` (`[[1, 2, 3], [4, 5, 6]] - [1, 2, 3]`, and the keepdims slip
/// `x - reduce_mean(x, 1)` on square data), while a dense `[n, k]` against rows of `k` values and any
/// size-1 dimension broadcast. ("Last row partition does not match flat_values" in TensorFlow.)
fn broadcast_uniform_against_ragged(op: &str, dim: usize, input: usize, len: usize, ragged: usize) -> Error {
    Error::shapes(
        op,
        format!(
            "dimension {dim}: input {input} has size {len} there and was broadcast along an earlier dimension, \
             which TensorFlow refuses against the ragged dimension {dim} of input {ragged} whatever the row \
             lengths (a dense [nrows, k] operand matches rows of k values; a size-1 dimension broadcasts)"
        ),
    )
}

/// The common size of the uniform layers (1 when there are none): NumPy rules, a size 1 repeats.
fn common_uniform_len(op: &str, dim: usize, layers: &[Layer<'_>]) -> Result<usize> {
    let mut len = 1usize;
    let mut owner = 0usize;
    for (i, layer) in layers.iter().enumerate() {
        if let Layer::Uniform { len: l, .. } = *layer {
            if l != 1 {
                if len == 1 {
                    len = l;
                    owner = i;
                } else if l != len {
                    return Err(Error::shapes(
                        op,
                        format!("dimension {dim}: input {i} has size {l} but input {owner} has size {len}"),
                    ));
                }
            }
        }
    }
    Ok(len)
}

/// An input's uniform partition that is exactly the result's split at this dimension.
fn reusable_uniform(sources: &[Source<'_>], layers: &[Layer<'_>], len: usize, count: usize) -> Option<RowPartition> {
    sources.iter().zip(layers).find_map(|(s, layer)| match (&s.gather, layer) {
        (Gather::Same, Layer::Uniform { len: l, partition: Some(p) }) if *l == len && p.nrows() == count => {
            Some((*p).clone())
        }
        _ => None,
    })
}

/// The operand's gather one dimension down, once the result's split `target` is known.
fn next_gather(gather: &Gather, layer: &Layer<'_>, target: &Target, count: usize) -> Gather {
    // Where row `r` of the operand starts, and whether its single value is repeated.
    let (start, broadcast): (Box<dyn Fn(usize) -> usize + '_>, bool) = match *layer {
        Layer::Uniform { len: 1, .. } => {
            if matches!(target, Target::Uniform(1)) {
                return gather.clone();
            }
            (Box::new(|r| r), true)
        }
        Layer::Uniform { len, .. } => {
            if matches!(gather, Gather::Same) {
                return Gather::Same;
            }
            (Box::new(move |r| r * len), false)
        }
        Layer::Ragged(p) => {
            if matches!(gather, Gather::Same) {
                return Gather::Same;
            }
            let splits = p.row_splits();
            (Box::new(move |r| splits[r] as usize), false)
        }
    };
    if matches!(gather, Gather::Zero) && broadcast {
        return Gather::Zero;
    }
    if let (Gather::Same, Target::Ragged(p)) = (gather, target) {
        // Broadcasting a size-1 dim across the result's own rows: each value reads its row.
        return Gather::Index(p.value_rowids().iter().map(|&r| r as usize).collect());
    }
    let mut index = Vec::new();
    for t in 0..count {
        let s = start(gather.source_row(t));
        let n = target.row_len(t);
        if broadcast {
            index.extend(std::iter::repeat_n(s, n));
        } else {
            index.extend(s..s + n);
        }
    }
    Gather::Index(index)
}

/// The broadcast result type's dims and ragged rank (dtype taken from input 0; callers set it).
/// Known dims that cannot broadcast are `incompatible_shapes` at build time.
///
/// A uniform partition ([`Dim::UniformRows`]) broadcasts as a uniform dim of its row length
/// (rule 2, as [`broadcast_values`] treats it). A result partition dim is uniform exactly when
/// no operand is ragged there and the common size is known: [`broadcast_values`] then builds
/// (or reuses) a partition with that uniform row length.
pub fn broadcast_types(op: &str, inputs: &[TensorType]) -> Result<TensorType> {
    let first = inputs.first().ok_or_else(|| Error::argument(op, "nothing to broadcast"))?;
    let rank = inputs.iter().map(TensorType::rank).max().unwrap_or(0);
    let ragged_rank = broadcast_ragged_rank(inputs.iter().map(|t| (t.rank(), t.ragged_rank())));
    let mut dims = Vec::with_capacity(rank);
    for d in 0..rank {
        // Combined uniform size (`None` unknown): 1 means "no constraint yet".
        let mut acc: Option<usize> = Some(1);
        let mut owner = 0usize;
        let mut ragged = false;
        for (i, t) in inputs.iter().enumerate() {
            let pad = rank - t.rank();
            let size = match if d < pad { Dim::Known(1) } else { t.dims()[d - pad] } {
                Dim::Ragged => {
                    ragged = true;
                    continue;
                }
                Dim::Known(n) | Dim::UniformRows(n) => Some(n),
                Dim::Unknown => None,
            };
            match (acc, size) {
                (_, Some(1)) => {}
                (Some(1), _) | (None, Some(_)) => {
                    acc = size;
                    owner = i;
                }
                (_, None) => {}
                (Some(a), Some(b)) if a == b => {}
                (Some(a), Some(b)) => {
                    return Err(Error::shapes(
                        op,
                        format!(
                            "dimension {d}: input {i} has size {b} but input {owner} has size {a} ({} vs {})",
                            t, inputs[owner]
                        ),
                    ))
                }
            }
        }
        dims.push(match acc {
            _ if d == 0 || d > ragged_rank => Dim::from_option(acc),
            Some(n) if !ragged => Dim::UniformRows(n),
            _ => Dim::Ragged,
        });
    }
    TensorType::new(first.dtype(), ragged_rank, dims)
}

/// Where an operand of type `operand` was repeated to reach the broadcast result type `out`
/// (rule 1 and rules 2-3 above, from the types): the number of leading dimensions it lacked, and
/// the result axes where it had size 1 (a known `1` or a uniform partition of length 1) and the
/// result does not. A dimension whose size is not known statically is taken as not repeated.
pub fn broadcast_axes(operand: &TensorType, out: &TensorType) -> Result<(usize, Vec<usize>)> {
    let lead = out.rank().checked_sub(operand.rank()).ok_or_else(|| {
        Error::shapes("broadcast", format!("an operand of type {operand} has a higher rank than the result {out}"))
    })?;
    let is_one = |d: &Dim| matches!(d, Dim::Known(1) | Dim::UniformRows(1));
    let repeated = operand
        .dims()
        .iter()
        .zip(&out.dims()[lead..])
        .enumerate()
        .filter(|(_, (o, r))| is_one(o) && !is_one(r))
        .map(|(i, _)| lead + i)
        .collect();
    Ok((lead, repeated))
}

/// The backward of broadcasting, used by every VJP of a broadcasting op: sums `grad` (a
/// gradient of the broadcast result's shape, a variable of `graph`) over every dimension along
/// which an operand of type `operand` was repeated ([`broadcast_axes`]: scalars, `[nrows, 1]`
/// columns against ragged rows, `keepdims` reductions, per-feature vectors over uniform inner
/// dims, `[nrows, 1, 1]` against ragged rank 2), so the result has the operand's shape. The
/// size-1 axes are summed with `keepdims`, then the missing leading ones are summed away.
pub fn sum_to_operand(graph: &mut Graph, grad: VarId, operand: &TensorType) -> Result<VarId> {
    use crate::reduce::defs::Reduce;
    use crate::reduce::defs::ReduceKind;
    let grad_ty =
        graph.var(grad).map(|v| v.ty.clone()).ok_or_else(|| Error::graph("sum_to_operand: unknown variable"))?;
    let (lead, repeated) = broadcast_axes(operand, &grad_ty)?;
    let mut sum = grad;
    let apply = |graph: &mut Graph, x, axes: Vec<i64>, keepdims| -> Result<VarId> {
        let op = Reduce::with_axes(ReduceKind::Sum, axes, keepdims);
        Ok(graph.apply(std::sync::Arc::new(op), &[x])?[0])
    };
    if !repeated.is_empty() {
        sum = apply(graph, sum, repeated.iter().map(|&a| a as i64).collect(), true)?;
    }
    if lead > 0 {
        sum = apply(graph, sum, (0..lead as i64).collect(), false)?;
    }
    Ok(sum)
}

mod dense;
#[cfg(test)]
mod tests;
