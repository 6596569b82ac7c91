//! `local_hashed_gather_reduce`: a `GatherReduce` whose indices all hash the same ragged tokens
//! (`to_hash_bucket_fast(x)`, or `HashedNgrams(x)` for its n-grams) becomes one
//! `HashedGatherReduce`, which hashes each row's features and adds their table rows in one pass
//! over the strings, without writing the bucket tensors.
//!
//! Law: `GatherReduce` adds, per row, the table rows of the first indices' buckets in order, then
//! the second's, ...; the buckets of a row are those its hash op computes from the row's tokens
//! (or n-grams) in order. `HashedGatherReduce` computes the same buckets from the same bytes and
//! adds the same rows in the same order from zero (the same f64 division for means), so the
//! result is bit-identical. Each hash node must have the `GatherReduce` as its only client, so
//! nothing is hashed twice.

use std::sync::LazyLock;

use ragtime_core::{DType, Result};
use ragtime_fused::{op_ref, GatherReduce, HashedFeature, HashedGatherReduce};
use ragtime_graph::{ApplyId, FunctionGraph, OpRef, VarId};
use ragtime_ops::strings::{HashedNgrams, ToHashBucketFast};
use ragtime_runtime::InnerGraphBuilder;

use crate::pattern::{any_of, op, var, Pattern};

type Rewrite = Result<Option<Vec<(VarId, VarId)>>>;

/// The buckets of the tokens `x` or of their n-grams, read only by their consumer.
static HASHED: LazyLock<Pattern> = LazyLock::new(|| {
    any_of([
        op::<ToHashBucketFast>().only_read_by_its_consumer().named("hash").inputs([var("x")]),
        op::<HashedNgrams>().only_read_by_its_consumer().named("hash").inputs([var("x")]),
    ])
});

/// The feature hashing `indices` (a node [`HASHED`] matches, only read by `consumer`), its hash
/// op and its tokens.
fn feature_of(fg: &FunctionGraph, indices: VarId, consumer: ApplyId) -> Option<(HashedFeature, OpRef, VarId)> {
    let m = HASHED.matches(fg, indices, Some(consumer))?;
    let hash = fg.node(m.node("hash"))?.op.clone();
    let any = hash.as_any();
    let feature = match (any.downcast_ref::<ToHashBucketFast>(), any.downcast_ref::<HashedNgrams>()) {
        (Some(tokens), _) => HashedFeature::Tokens(tokens.clone()),
        (_, Some(ngrams)) => HashedFeature::Ngrams(ngrams.clone()),
        _ => return None,
    };
    Some((feature, hash, m.var("x")))
}

/// The rewrite, on a `GatherReduce` node.
pub(crate) fn hashed_gather_reduce(fg: &mut FunctionGraph, node: ApplyId) -> Rewrite {
    let Some(apply) = fg.node(node) else { return Ok(None) };
    let Some(reduce) = apply.op.as_any().downcast_ref::<GatherReduce>() else { return Ok(None) };
    let (reduce, reduce_op, inputs, out) = (reduce.clone(), apply.op.clone(), apply.inputs.clone(), apply.outputs[0]);
    let mut tokens = None;
    let (mut features, mut hashes, mut tables) = (Vec::new(), Vec::new(), Vec::new());
    for pair in inputs.chunks_exact(2) {
        let Some((feature, hash, x)) = feature_of(fg, pair[1], node) else { return Ok(None) };
        if *tokens.get_or_insert(x) != x {
            return Ok(None);
        }
        features.push(feature);
        hashes.push(hash);
        tables.push(pair[0]);
    }
    let Some(x) = tokens else { return Ok(None) };
    // Ragged rows of tokens `[n, *]`, the rows the bag sums over.
    let Some(ty) = fg.var(x).map(|v| v.ty.clone()) else { return Ok(None) };
    if ty.dtype() != DType::String || ty.ragged_rank() != 1 || ty.rank() != 2 {
        return Ok(None);
    }
    // The inner graph: each feature's hash of the tokens, then the `GatherReduce`.
    let mut op_inputs = vec![x];
    op_inputs.extend(&tables);
    let types = op_inputs.iter().filter_map(|&v| fg.var(v).map(|t| t.ty.clone())).collect::<Vec<_>>();
    let mut inner = InnerGraphBuilder::new(types)?;
    let Some(tokens) = inner.input(0) else { return Ok(None) };
    let mut reduce_inputs = Vec::with_capacity(2 * tables.len());
    for (k, hash) in hashes.into_iter().enumerate() {
        let Some(table) = inner.input(k + 1) else { return Ok(None) };
        let buckets = inner.apply(hash, &[tokens])?[0];
        reduce_inputs.extend([table, buckets]);
    }
    let result = inner.apply(reduce_op, &reduce_inputs)?;
    let inner = inner.finish(&result)?;
    let Some(fused) = HashedGatherReduce::new(features, &reduce, inner) else { return Ok(None) };
    let new_out = fg.add_node(op_ref(fused), &op_inputs)?;
    Ok(Some(vec![(out, new_out[0])]))
}
