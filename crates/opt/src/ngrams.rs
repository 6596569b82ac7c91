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

use std::sync::{Arc, LazyLock};

use ragtime_core::{DType, Result};
use ragtime_graph::{ApplyId, Client, FunctionGraph, OpRef, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::index::{GetItem, KeyItem};
use ragtime_ops::strings::{HashedNgrams, Join, Ngrams, ToHashBucketFast};
use ragtime_ops::structure::{
    Concat, ExpandDims, Fill, FilledLike, FromRowLengths, FromUniformRowLength, Nrows, RowLengths, Size, Stack,
};

use crate::pattern::{any_of, int, int_vector, op, string, var, Pattern};

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// Is `get` the slice `[:, start:stop]` of the ragged axis with the default step?
fn ragged_slice(get: &GetItem, start: Option<i64>, stop: Option<i64>) -> bool {
    let unit = |step: Option<i64>| matches!(step, None | Some(1));
    // `0:` is `:` at the start of a row.
    let start_of = |s: Option<i64>| if s == Some(0) { None } else { s };
    match get.key.items() {
        [KeyItem::Slice { start: None, stop: None, step: outer }, KeyItem::Slice { start: s, stop: e, step }] => {
            unit(*outer) && unit(*step) && start_of(*s) == start_of(start) && *e == stop
        }
        _ => false,
    }
}

/// `join([x[:, :-1], x[:, 1:]], sep)`.
static ADJACENT_JOIN: LazyLock<Pattern> = LazyLock::new(|| {
    op::<Join>().inputs([
        op::<GetItem>().when(|g| ragged_slice(g, None, Some(-1))).inputs([var("x")]),
        op::<GetItem>().when(|g| ragged_slice(g, Some(1), None)).inputs([var("x")]),
    ])
});

/// The rewrite, on a `strings.join` node.
pub(crate) fn join_adjacent(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(m) = ADJACENT_JOIN.matches_node(fg, node) else { return Ok(None) };
    let Some(join) = fg.node(node).and_then(|a| a.op.as_any().downcast_ref::<Join>()) else { return Ok(None) };
    let (separator, out, x) = (join.separator().to_owned(), fg.node(node).map(|a| a.outputs[0]), m.var("x"));
    let (Some(out), Some(ty)) = (out, fg.var(x).map(|v| v.ty.clone())) else { return Ok(None) };
    // Ragged rows of tokens `[n, *]`: the slices cut the ragged axis, and n-grams run along it.
    if ty.dtype() != DType::String || ty.ragged_rank() != 1 || ty.rank() != 2 {
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

/// The number of rows of `x`, as `nrows(x)` (any out type, or cast to an integer) or as the size of
/// `row_lengths(x)`.
fn row_count() -> Pattern {
    let nrows = || op::<Nrows>().inputs([var("x")]);
    any_of([
        nrows(),
        op::<Elemwise>().when(|e| matches!(e.scalar, ScalarOp::Cast(d) if d.is_integer())).inputs([nrows()]),
        op::<Size>().inputs([op::<RowLengths>().when(|r| *r == RowLengths::new(1)).inputs([var("x")])]),
    ])
}

/// One string `s` (captured as `name`) per row of `x`, as a column that `concat(.., axis=1)` puts
/// before or after each row: a dense `[n, 1]` column (`fill(stack([nrows(x), 1]), s)`, or with the
/// dims as `concat([expand_dims(nrows(x), 0), [1]])`), or a ragged `[n, (1)]` one
/// (`from_uniform_row_length(fill([nrows(x)], s), 1)`, or
/// `from_row_lengths(fill([nrows(x)], s), ones_like(row_lengths(x)))`).
fn row_marker(name: &'static str) -> Pattern {
    let axis0 = |axis: i64| axis == 0;
    let column_dims = any_of([
        op::<Stack>().when(move |s| axis0(s.axis())).inputs([row_count(), int(1)]),
        op::<Concat>()
            .when(move |c| axis0(c.axis()))
            .inputs([op::<ExpandDims>().when(|e| e.axis == 0).inputs([row_count()]), int_vector(&[1])]),
    ]);
    let vector_dims = any_of([
        op::<Stack>().when(move |s| axis0(s.axis())).inputs([row_count()]),
        op::<ExpandDims>().when(|e| e.axis == 0).inputs([row_count()]),
    ]);
    let per_row = || op::<Fill>().inputs([vector_dims.clone(), string(name)]);
    let ones = op::<FilledLike>()
        .when(|f| f.ones && f.dtype.is_none_or(|d| d.is_integer()))
        .inputs([op::<RowLengths>().when(|r| *r == RowLengths::new(1)).inputs([var("x")])]);
    any_of([
        op::<Fill>().inputs([column_dims, string(name)]),
        op::<FromUniformRowLength>().when(|f| *f == FromUniformRowLength::new(1, None)).inputs([per_row()]),
        op::<FromRowLengths>().inputs([per_row(), ones]),
    ])
}

/// `concat([marker a, x, marker b], axis=1)`: the tokens of `x` with a marker on each side.
static PADDED_TOKENS: LazyLock<Pattern> = LazyLock::new(|| {
    op::<Concat>().when(|c| matches!(c.axis(), 1 | -1)).inputs([row_marker("a"), var("x"), row_marker("b")])
});

/// `local_pad_ngrams`, on a `strings.ngrams` node (or a `HashedNgrams` one, whose n-grams it pads
/// the same way): n-grams of width `w >= 2` of
/// `concat([fill(stack([nrows(x), 1]), a), x, fill(stack([nrows(x), 1]), b)], axis=1)` (or with
/// the markers spelt another way: [`row_marker`]) are the
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
    let Some(m) = PADDED_TOKENS.matches(fg, padded, Some(node)) else { return Ok(None) };
    let (x, a, b) = (m.var("x"), m.string("a").to_owned(), m.string("b").to_owned());
    let Some(ty) = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    if width < 2 || ty.dtype() != DType::String || ty.ragged_rank() != 1 || ty.rank() != 2 {
        return Ok(None);
    }
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
