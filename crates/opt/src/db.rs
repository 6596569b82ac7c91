//! The rewrite database: every rewrite has a stable name, tags, a position in the pipeline and its
//! implementation, in one table ([`REWRITES`]). A node rewrite declares the op types it looks at
//! ([`Tracks`]), so the engine (`pipeline.rs`) offers it only those nodes; `OptimizeOptions`
//! switches rewrites off by name or tag, and [`OptimizeOptions::check`] refuses names that match
//! nothing.

use std::any::TypeId;

use ragtime_core::{Error, Result};
use ragtime_fused::{GatherReduce, RowPooling};
use ragtime_graph::{ApplyId, FunctionGraph, VarId};
use ragtime_ops::elemwise::Elemwise;
use ragtime_ops::reduce::{Reduce, Statistic};
use ragtime_ops::rows::Softmax;
use ragtime_ops::strings::{HashedNgrams, Join, Ngrams, ToHashBucketFast};
use ragtime_ops::structure::Concat;
use ragtime_ops::structure::Identity;

use crate::{
    canon, expand, fold, fusion, gather_reduce, hashed_bag, log_softmax, mean, merge, ngrams, pooling, unreduce,
};

/// How much the optimizer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Level {
    /// Every rewrite.
    #[default]
    Full,
    /// Only the rewrites tagged `fast_compile` (merge and dead-code elimination).
    FastCompile,
}

/// Which rewrites run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptimizeOptions {
    /// The level.
    pub level: Level,
    /// Rewrites excluded by name or tag (e.g. `fusion`, `canonicalize`, `local_mul_one`).
    pub excluding: Vec<String>,
    /// Rewrites included by name or tag even when the level leaves them out.
    pub including: Vec<String>,
}

impl OptimizeOptions {
    /// Fails on a name in `excluding` or `including` that is neither a rewrite nor a tag of
    /// [`REWRITES`], nor one of `stage_names` (stages after the optimizer, such as the backend's
    /// `jit`), suggesting the closest known names: a misspelt name must not silently change nothing.
    pub fn check(&self, stage_names: &[&str]) -> Result<()> {
        let known = known_names(stage_names);
        for (list, what) in [(&self.excluding, "excluding"), (&self.including, "including")] {
            if let Some(name) = list.iter().find(|n| !known.contains(&n.as_str())) {
                let mut close: Vec<(f64, &str)> = known
                    .iter()
                    .map(|k| (strsim::jaro_winkler(name, k).max(substring_score(name, k)), *k))
                    .filter(|(score, _)| *score >= 0.8)
                    .collect();
                close.sort_by(|a, b| b.0.total_cmp(&a.0));
                let hint = match close.first() {
                    Some((_, best)) => format!("did you mean `{best}`?"),
                    None => format!("the rewrites and tags are: {}", known.join(", ")),
                };
                return Err(Error::argument("compile", format!("{what}: no rewrite or tag is named `{name}`; {hint}")));
            }
        }
        Ok(())
    }
}

/// 0.9 when one name contains the other (`gather_reduce` in `local_gather_reduce`), else 0.
fn substring_score(a: &str, b: &str) -> f64 {
    if a.len() >= 3 && (b.contains(a) || a.contains(b)) {
        0.9
    } else {
        0.0
    }
}

/// Every rewrite name and tag, then `stage_names`, each once, in table order.
fn known_names<'a>(stage_names: &[&'a str]) -> Vec<&'a str> {
    let mut known: Vec<&str> = Vec::new();
    let all = REWRITES.iter().flat_map(|r| std::iter::once(r.name).chain(r.tags.iter().copied()));
    for name in all.chain(stage_names.iter().copied()) {
        if !known.contains(&name) {
            known.push(name);
        }
    }
    known
}

/// A node rewrite: looks at one node and, if its law applies, returns replacements for its
/// outputs (the graph may have gained nodes or constants for them).
pub(crate) type LocalRewrite = fn(&mut FunctionGraph, ApplyId) -> Result<Option<Vec<(VarId, VarId)>>>;

/// A whole-graph pass; returns how many times it applied.
pub(crate) type GlobalPass = fn(&mut FunctionGraph) -> Result<usize>;

/// The nodes a node rewrite looks at.
#[derive(Debug, Clone, Copy)]
pub enum Tracks {
    /// Every node (constant folding).
    AnyOp,
    /// Nodes whose op has one of these Rust types (op identity is by type: DESIGN.md decision 5).
    Ops(&'static [fn() -> TypeId]),
}

/// How a rewrite runs.
#[derive(Clone, Copy)]
pub enum Pass {
    /// A node rewrite, offered the nodes it tracks. Consecutive node rewrites at one position run
    /// together in one equilibrium group.
    Local(Tracks, LocalRewrite),
    /// A pass over the whole graph.
    Global(GlobalPass),
}

impl std::fmt::Debug for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pass::Local(tracks, _) => f.debug_tuple("Local").field(tracks).finish(),
            Pass::Global(_) => f.write_str("Global"),
        }
    }
}

/// A rewrite's entry in the database.
#[derive(Debug, Clone, Copy)]
pub struct RewriteInfo {
    /// Stable name, for reports and `excluding`.
    pub name: &'static str,
    /// Tags, for switching groups off.
    pub tags: &'static [&'static str],
    /// Position in the pipeline (lower runs first).
    pub position: u32,
    /// What it does, in one line.
    pub doc: &'static str,
    /// Its implementation.
    pub pass: Pass,
}

impl RewriteInfo {
    pub(crate) fn selected(&self, opts: &OptimizeOptions) -> bool {
        let named = |list: &[String]| list.iter().any(|x| x == self.name || self.tags.contains(&x.as_str()));
        if named(&opts.excluding) {
            return false;
        }
        match opts.level {
            Level::Full => !self.tags.contains(&OPT_IN) || named(&opts.including),
            Level::FastCompile => self.tags.contains(&"fast_compile") || named(&opts.including),
        }
    }
}

/// The tag of a rewrite no mode runs unless it is named in `including` (by name or by this tag):
/// one that measured slower on the workloads it was built for, kept for the cases where it pays.
pub const OPT_IN: &str = "opt_in";

/// The tag of a rewrite whose result agrees with the original graph within the conformance
/// tolerance rather than bit for bit (it computes in another precision or order).
pub const APPROXIMATE: &str = "approximate";

/// Every rewrite, in pipeline order. Node rewrites (tag `local`) run together in the
/// `canonicalize` equilibrium group.
pub const REWRITES: &[RewriteInfo] = &[
    RewriteInfo {
        name: "merge",
        pass: Pass::Global(merge::merge),
        tags: &["fast_compile", "fast_run", "merge"],
        position: 0,
        doc: "common subexpressions and equal constants become one",
    },
    RewriteInfo {
        name: "constant_folding",
        pass: Pass::Local(Tracks::AnyOp, fold::constant_folding),
        tags: &["fast_run", "canonicalize", "local"],
        position: 10,
        doc: "a node whose inputs are all constants becomes its value (results up to 2^16 elements)",
    },
    RewriteInfo {
        name: "local_useless_identity",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Identity>]), canon::useless_identity),
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "identity(x) -> x",
    },
    RewriteInfo {
        name: "local_useless_cast",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Elemwise>]), canon::useless_cast),
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "cast(x, dtype(x)) -> x",
    },
    RewriteInfo {
        name: "local_add_zero",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Elemwise>]), canon::add_zero),
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "x + 0 -> x (integers; floats only for -0.0), x - 0 -> x",
    },
    RewriteInfo {
        name: "local_mul_one",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Elemwise>]), canon::mul_one),
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "x * 1 -> x, x / 1 -> x (floats)",
    },
    RewriteInfo {
        name: "local_double_negation",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Elemwise>]), canon::double_negation),
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "-(-x) -> x, not(not x) -> x, ~(~x) -> x",
    },
    RewriteInfo {
        name: "local_reduce_size_one",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Reduce>]), canon::reduce_size_one),
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "a keepdims reduction over a size-1 uniform axis -> x",
    },
    RewriteInfo {
        name: "local_concat_one",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Concat>]), canon::concat_one),
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "concat of one input -> x",
    },
    RewriteInfo {
        name: "local_mean_from_sum",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Elemwise>]), mean::mean_from_sum),
        tags: &["fast_run", "canonicalize", "local", APPROXIMATE],
        position: 10,
        doc: "reduce_sum(x, 1) / cast(row_lengths(x)) (as [n] or [n, 1]) -> reduce_mean(x, 1) (the count is exact below 2^24 values per row for float32)",
    },
    RewriteInfo {
        name: "local_log_softmax",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Elemwise>]), log_softmax::log_softmax),
        tags: &["fast_run", "canonicalize", "local", "stabilize", APPROXIMATE],
        position: 10,
        doc: "log(softmax(x)) -> log_softmax(x): the cross-entropy of probabilities computed stably",
    },
    RewriteInfo {
        name: "merge_after_canonicalize",
        pass: Pass::Global(merge::merge),
        tags: &["fast_run", "merge"],
        position: 20,
        doc: "merge again: canonicalization exposes equal nodes",
    },
    RewriteInfo {
        name: "local_expand_softmax",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Softmax>]), expand::softmax),
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "softmax / log_softmax over the ragged axis of [n, *] floats -> max, exp, sum primitives that row fusion fuses",
    },
    RewriteInfo {
        name: "local_expand_row_statistics",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Statistic>]), expand::statistic),
        tags: &["fast_run", "fusion", "local", APPROXIMATE],
        position: 30,
        doc: "reduce_variance / reduce_std / reduce_logsumexp over the ragged axis of [n, *] floats -> mean, max, exp, sum primitives that row fusion fuses",
    },
    RewriteInfo {
        name: "local_lift_unreduce",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Elemwise>]), unreduce::lift),
        tags: &["fast_run", "fusion", "local", "gradient"],
        position: 30,
        doc: "f(unreduce(x, a), unreduce(x, b), scalar) -> unreduce(x, f(a, b, scalar)): elementwise work on the reduced values, spread once",
    },
    RewriteInfo {
        name: "local_unreduce_per_row",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Elemwise>]), unreduce::per_row),
        tags: &["fast_run", "fusion", "local", "gradient"],
        position: 30,
        doc: "f(y, unreduce(x, r)) over the last axis of [n, *] (or dense [n, k]) x, y with x's partitions -> f(y, [n, 1] column of r): a per-row operand row fusion takes",
    },
    RewriteInfo {
        name: "local_gather_reduce",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Reduce>]), gather_reduce::gather_reduce),
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "reduce_sum / reduce_mean over the ragged axis of gathered table rows (or their concat) -> GatherReduce",
    },
    RewriteInfo {
        name: "local_row_pooling",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Reduce>]), pooling::row_pooling),
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "reduce_sum(expand_dims(w, -1) * f) over the innermost ragged axis (then a sum / max / min / prod over the next outer one) -> RowPooling",
    },
    RewriteInfo {
        name: "local_join_adjacent",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Join>]), ngrams::join_adjacent),
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "join([x[:, :-1], x[:, 1:]], sep) over ragged string rows -> ngrams(x, 2, sep), written straight from x",
    },
    RewriteInfo {
        name: "local_pad_ngrams",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<Ngrams>, TypeId::of::<HashedNgrams>]), ngrams::pad_ngrams),
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "ngrams(concat([fill(stack([nrows(x), 1]), a), x, fill(..., b)], 1), w >= 2) -> ngrams(x) padded once with a and b, without the concat",
    },
    RewriteInfo {
        name: "local_hash_ngrams",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<ToHashBucketFast>]), ngrams::hash_ngrams),
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "to_hash_bucket_fast(ngrams(x)) of one width -> HashedNgrams, which hashes each n-gram without storing it",
    },
    RewriteInfo {
        name: "local_hashed_gather_reduce",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<GatherReduce>]), hashed_bag::hashed_gather_reduce),
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "GatherReduce of tables picked by to_hash_bucket_fast / HashedNgrams of one ragged token tensor -> HashedGatherReduce, which hashes each row's tokens and n-grams and adds their rows in one pass, without the bucket tensors",
    },
    RewriteInfo {
        name: "row_fusion",
        pass: Pass::Global(|fg| fusion::fuse(fg, fusion::Kind::Rows)),
        tags: &["fast_run", "fusion"],
        position: 40,
        doc: "row reductions over one partition with the maps around them -> RowKernel / RowReduce",
    },
    RewriteInfo {
        name: "elemwise_fusion",
        pass: Pass::Global(|fg| fusion::fuse(fg, fusion::Kind::Elementwise)),
        tags: &["fast_run", "fusion"],
        position: 41,
        doc: "convex groups of elementwise ops over one iteration space -> Composite",
    },
    RewriteInfo {
        name: "local_pooling_weights",
        pass: Pass::Local(Tracks::Ops(&[TypeId::of::<RowPooling>]), pooling::pooling_weights),
        // On W9 the one node takes less CPU time than the two it replaces on one thread and on
        // two (no per-element weights written and read back), since its pieces are balanced by
        // events and its scratch comes without a serial pass over the users.
        tags: &["fusion", "local"],
        position: 42,
        doc: "RowPooling of the weights a RowKernel alone computes -> the pooling with that kernel fused in, weights computed block by block into scratch",
    },
];
