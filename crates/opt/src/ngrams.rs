//! N-gram rewrites.
//!
//! `local_join_adjacent`: joining a ragged string tensor's rows without their last token with the
//! same rows without their first token (`join([x[:, :-1], x[:, 1:]], sep)`, the usual way to
//! write bigrams) becomes one `strings.ngrams` of width 2, which writes each bigram straight from
//! `x` instead of copying `x` twice into the two slices first.
//!
//! Law: for a row of `n` tokens both slices have `max(n - 1, 0)` tokens, and element `k` of the
//! join is `x[k] + sep + x[k + 1]`; `ngrams(x, 2, sep)` (unpadded) has `max(n - 2 + 1, 0)` n-grams
//! of the same bytes, with the same outer partition. When `x` has no tokens at all both give
//! only empty rows. The result is byte-identical.
//!
//! `local_pad_ngrams` (see [`pad_ngrams`]): n-grams of tokens with a marker concatenated on each
//! side become padded n-grams of the tokens, without the concat.
//!
//! `local_hash_ngrams`: `to_hash_bucket_fast(ngrams(x))` (hashed n-gram features) becomes one
//! `HashedNgrams`, which hashes each n-gram from a small per-thread buffer instead of storing
//! every n-gram string first. Law: it hashes the same bytes with the same function, so the
//! buckets are identical. The n-grams must have no other reader (else they would be built twice).

use std::sync::Arc;

use ragtime_core::{DType, Result};
use ragtime_graph::{ApplyId, Client, FunctionGraph, OpRef, VarId};
use ragtime_ops::index::{GetItem, KeyItem};
use ragtime_ops::strings::{HashedNgrams, Join, Ngrams, ToHashBucketFast};
use ragtime_ops::structure::Nrows;
use ragtime_ops::structure::{Concat, Fill, Stack};

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// Which slice of the ragged axis `v` is, when it is `x[:, a:b]` with the default step: `(x, a, b)`.
fn ragged_slice(fg: &FunctionGraph, v: VarId) -> Option<(VarId, Option<i64>, Option<i64>)> {
    let apply = fg.node(fg.var(v)?.owner?)?;
    let get = apply.op.as_any().downcast_ref::<GetItem>()?;
    let unit = |step: Option<i64>| matches!(step, None | Some(1));
    match get.key.items() {
        [KeyItem::Slice { start: None, stop: None, step: outer }, KeyItem::Slice { start, stop, step }]
            if unit(*outer) && unit(*step) =>
        {
            Some((apply.inputs[0], *start, *stop))
        }
        _ => None,
    }
}

/// The rewrite, on a `strings.join` node.
pub(crate) fn join_adjacent(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    let Some(join) = apply.op.as_any().downcast_ref::<Join>() else { return Ok(None) };
    let (separator, out) = (join.separator().to_owned(), apply.outputs[0]);
    let [left, right] = apply.inputs[..] else { return Ok(None) };
    let (Some((x, None, Some(-1))), Some((y, Some(1), None))) = (ragged_slice(fg, left), ragged_slice(fg, right))
    else {
        return Ok(None);
    };
    let Some(ty) = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    // Ragged rows of tokens `[n, *]`: the slices cut the ragged axis, and n-grams run along it.
    if x != y || ty.dtype() != DType::String || ty.ragged_rank() != 1 || ty.rank() != 2 {
        return Ok(None);
    }
    let op: OpRef = Arc::new(Ngrams::new(&[2])?.with_separator(&separator));
    let grams = fg.add_node(op, &[x])?;
    Ok(Some(vec![(out, grams[0])]))
}

/// The rewrite, on a `strings.to_hash_bucket_fast` node.
pub(crate) fn hash_ngrams(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    let Some(hash) = apply.op.as_any().downcast_ref::<ToHashBucketFast>() else { return Ok(None) };
    let (hash, grams, out) = (hash.clone(), apply.inputs[0], apply.outputs[0]);
    if !matches!(fg.clients(grams), [Client::Node { node: n, .. }] if *n == node) {
        return Ok(None);
    }
    let Some(producer) = fg.var(grams).and_then(|v| v.owner).and_then(|id| fg.node(id)) else { return Ok(None) };
    let Some(ngrams) = producer.op.as_any().downcast_ref::<Ngrams>() else { return Ok(None) };
    let x = producer.inputs[0];
    let Some(fused) = HashedNgrams::new(ngrams.clone(), hash) else { return Ok(None) };
    let op: OpRef = Arc::new(fused);
    let buckets = fg.add_node(op, &[x])?;
    Ok(Some(vec![(out, buckets[0])]))
}

/// The constant scalar string `v` holds, if it is one.
fn constant_string(fg: &FunctionGraph, v: VarId) -> Option<String> {
    let dense = fg.var(v)?.constant.as_ref()?.as_dense()?;
    let col = dense.as_strings().filter(|_| dense.rank() == 0)?;
    String::from_utf8(col.get(0).to_vec()).ok()
}

/// When `v` is `fill(stack([nrows(x), 1]), s)` (one string `s` per row of `x`, as a `[n, 1]`
/// column): `s`.
fn row_marker(fg: &FunctionGraph, v: VarId, x: VarId) -> Option<String> {
    let producer = |v: VarId| fg.var(v).and_then(|var| var.owner).and_then(|id| fg.node(id));
    let fill = producer(v)?;
    if !fill.op.as_any().is::<Fill>() {
        return None;
    }
    let (dims, value) = (fill.inputs[0], fill.inputs[1]);
    let stack = producer(dims)?;
    let [n, one] = stack.inputs[..] else { return None };
    let stacked_rows = stack.op.as_any().downcast_ref::<Stack>().is_some_and(|s| s.axis() == 0);
    let counts_rows = producer(n).is_some_and(|a| a.op.as_any().is::<Nrows>() && a.inputs[0] == x);
    let is_one = fg
        .var(one)
        .and_then(|var| var.constant.as_ref())
        .and_then(ragtime_ops::fused::ScalarConst::from_tensor)
        .is_some_and(|c| !c.dtype().is_float() && c.as_f64() == 1.0);
    (stacked_rows && counts_rows && is_one).then(|| constant_string(fg, value))?
}

/// `local_pad_ngrams`, on a `strings.ngrams` node (or a `HashedNgrams` one, whose n-grams it pads
/// the same way): n-grams of width `w >= 2` of
/// `concat([fill(stack([nrows(x), 1]), a), x, fill(stack([nrows(x), 1]), b)], axis=1)` are the
/// n-grams of `x` padded once with `a` before and `b` after each row, padding rows even when `x`
/// has no tokens at all (the concat always has some). Law: both see the row `[a, x..., b]`, so
/// the n-grams (count `max(n + 2 - w + 1, 0)`, and bytes) are the same; the concat of pads is not
/// built.
pub(crate) fn pad_ngrams(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    let hashed = apply.op.as_any().downcast_ref::<HashedNgrams>();
    let Some(ngrams) = hashed.map(HashedNgrams::ngrams).or_else(|| apply.op.as_any().downcast_ref::<Ngrams>()) else {
        return Ok(None);
    };
    let hash = hashed.map(|h| h.hash().clone());
    let ([width], None, false, false) =
        (ngrams.widths(), ngrams.pad_values(), ngrams.preserve_short_sequences(), ngrams.pads_without_tokens())
    else {
        return Ok(None);
    };
    let (width, separator, padded, out) = (*width, ngrams.separator().to_owned(), apply.inputs[0], apply.outputs[0]);
    let Some(concat) = fg.var(padded).and_then(|v| v.owner).and_then(|id| fg.node(id)) else { return Ok(None) };
    let along_rows = concat.op.as_any().downcast_ref::<Concat>().is_some_and(|c| matches!(c.axis(), 1 | -1));
    let [before, x, after] = concat.inputs[..] else { return Ok(None) };
    let Some(ty) = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    if width < 2 || !along_rows || ty.dtype() != DType::String || ty.ragged_rank() != 1 || ty.rank() != 2 {
        return Ok(None);
    }
    let (Some(a), Some(b)) = (row_marker(fg, before, x), row_marker(fg, after, x)) else { return Ok(None) };
    let op =
        Ngrams::new(&[width])?.with_separator(&separator).with_padding(&a, &b, Some(1))?.with_padding_without_tokens();
    let op: OpRef = match hash {
        Some(hash) => match HashedNgrams::new(op, hash) {
            Some(fused) => Arc::new(fused),
            None => return Ok(None),
        },
        None => Arc::new(op),
    };
    let grams = fg.add_node(op, &[x])?;
    Ok(Some(vec![(out, grams[0])]))
}
