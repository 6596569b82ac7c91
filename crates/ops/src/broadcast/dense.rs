//! Dense operands broadcast by NumPy's rules with strided block copies: the fast path of
//! [`super::broadcast_values`] when no operand is ragged (a bias `[k]` against `[n, k]`, a column
//! `[n, 1]` against `[n, k]`, the shapes of every dense gradient graph), which needs no index per
//! result element. Shapes that do not broadcast are left to the general path, which names the
//! dimension and the inputs in its error.

use ragtime_core::{dispatch_dtype, DType, DenseTensor, ExecContext, RaggedTensor, Result};

use super::Broadcast;

/// The operands broadcast to their common shape, or `None` when an operand is ragged or a string
/// tensor, or the shapes do not broadcast (the general path handles those, with its errors).
pub(super) fn broadcast_dense(ctx: &ExecContext, op: &str, inputs: &[RaggedTensor]) -> Option<Result<Broadcast>> {
    if inputs.iter().any(|x| !x.is_dense() || x.dtype() == DType::String) {
        return None;
    }
    let shape = common_shape(inputs.iter().map(|x| x.flat_values().shape()))?;
    let operands = inputs
        .iter()
        .map(|x| {
            let flat = x.flat_values();
            if flat.shape() == shape.as_slice() {
                Ok(flat.clone())
            } else {
                expand(ctx, op, flat, &shape)
            }
        })
        .collect::<Result<Vec<_>>>();
    Some(operands.map(|operands| Broadcast { partitions: Vec::new(), flat_shape: shape, operands }))
}

/// NumPy's broadcast shape (aligned from the right; equal sizes, or 1 against any size), or
/// `None` when two sizes differ and neither is 1.
fn common_shape<'a>(shapes: impl Iterator<Item = &'a [usize]> + Clone) -> Option<Vec<usize>> {
    let rank = shapes.clone().map(<[usize]>::len).max().unwrap_or(0);
    let mut shape = vec![1usize; rank];
    for s in shapes {
        for (target, &n) in shape[rank - s.len()..].iter_mut().zip(s) {
            if *target == 1 {
                *target = n;
            } else if n != 1 && n != *target {
                return None;
            }
        }
    }
    Some(shape)
}

/// `value` (whose shape broadcasts to `shape`) repeated along its size-1 dimensions, in a buffer
/// the call's limits and budget allow.
fn expand(ctx: &ExecContext, op: &str, value: &DenseTensor, shape: &[usize]) -> Result<DenseTensor> {
    let padded: Vec<usize> =
        std::iter::repeat_n(1, shape.len() - value.shape().len()).chain(value.shape().iter().copied()).collect();
    dispatch_dtype!(value.dtype(),
        T => {
            ctx.checked_size(op, shape, std::mem::size_of::<T>())?;
            let mut out: Vec<T> = ctx.try_vec(op, shape.iter().product())?;
            let src = value.as_slice::<T>().unwrap_or(&[]);
            expand_into(src, &padded, shape, &mut out);
            DenseTensor::from_vec(shape.to_vec(), out)
        },
        // Excluded by `broadcast_dense`.
        string => Err(ragtime_core::Error::dtype(op, "strings are broadcast by the general path")))
}

/// Appends `src` (row-major, of shape `from`) broadcast to `to` (same rank; each size of `from` is
/// 1 or equal) to `out`.
fn expand_into<T: Copy>(src: &[T], from: &[usize], to: &[usize], out: &mut Vec<T>) {
    let dims = collapse(from, to);
    if to.contains(&0) {
        return;
    }
    expand_dims(src, &dims, out);
}

/// One dimension of a broadcast after merging neighbours: its size in the result, and whether the
/// source repeats one block along it (`true`) or has as many blocks (`false`).
type Run = (usize, bool);

/// The dimensions of `to` with the size-1 ones dropped and neighbours that are both repeated or
/// both copied merged, so a bias `[k]` over `[n, k]` is one repeat of one contiguous block and a
/// column `[n, 1]` over `[n, k]` is `n` blocks each repeated `k` times, whatever the rank.
fn collapse(from: &[usize], to: &[usize]) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (&f, &t) in from.iter().zip(to) {
        if t == 1 {
            continue;
        }
        let repeated = f == 1;
        match runs.last_mut() {
            Some((size, r)) if *r == repeated => *size *= t,
            _ => runs.push((t, repeated)),
        }
    }
    runs
}

/// Appends `src` broadcast along `runs` (outermost first). A repeated run copies its first block
/// by doubling (about log2(n) copies for `n` repeats); a repeated innermost run writes one value
/// `n` times; a copied innermost run is one slice copy.
fn expand_dims<T: Copy>(src: &[T], runs: &[Run], out: &mut Vec<T>) {
    let Some((&(size, repeated), inner)) = runs.split_first() else {
        out.extend_from_slice(&src[..1]);
        return;
    };
    // Source values per block of this run: the copied runs inside it.
    let block: usize = inner.iter().filter(|(_, r)| !r).map(|(n, _)| n).product();
    match (repeated, inner.is_empty()) {
        (false, true) => out.extend_from_slice(&src[..size]),
        (true, true) => out.extend(std::iter::repeat_n(src[0], size)),
        (false, false) => {
            for k in 0..size {
                expand_dims(&src[k * block..(k + 1) * block], inner, out);
            }
        }
        (true, false) => {
            let start = out.len();
            expand_dims(&src[..block], inner, out);
            let len = out.len() - start;
            let mut copies = 1;
            while copies < size {
                let more = copies.min(size - copies);
                out.extend_from_within(start..start + more * len);
                copies += more;
            }
        }
    }
}
