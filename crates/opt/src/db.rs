//! The rewrite database and the pipeline: every rewrite has a stable name, tags and a position;
//! `OptimizeOptions` switches rewrites off by name or tag; node rewrites run in an equilibrium
//! group to a fixed point under a budget.

use std::time::{Duration, Instant};

use ragtime_core::{Error, Result};
use ragtime_graph::{ApplyId, FunctionGraph, VarId};

use crate::{canon, expand, fold, fusion, gather_reduce, merge, ngrams, pooling};

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

/// A rewrite's entry in the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RewriteInfo {
    /// Stable name, for reports and `excluding`.
    pub name: &'static str,
    /// Tags, for switching groups off.
    pub tags: &'static [&'static str],
    /// Position in the pipeline (lower runs first).
    pub position: u32,
    /// What it does, in one line.
    pub doc: &'static str,
}

impl RewriteInfo {
    fn selected(&self, opts: &OptimizeOptions) -> bool {
        let named = |list: &[String]| list.iter().any(|x| x == self.name || self.tags.contains(&x.as_str()));
        if named(&opts.excluding) {
            return false;
        }
        match opts.level {
            Level::Full => true,
            Level::FastCompile => self.tags.contains(&"fast_compile") || named(&opts.including),
        }
    }
}

/// Every rewrite, in pipeline order. Node rewrites (tag `local`) run together in the
/// `canonicalize` equilibrium group.
pub const REWRITES: &[RewriteInfo] = &[
    RewriteInfo {
        name: "merge",
        tags: &["fast_compile", "fast_run", "merge"],
        position: 0,
        doc: "common subexpressions and equal constants become one",
    },
    RewriteInfo {
        name: "constant_folding",
        tags: &["fast_run", "canonicalize", "local"],
        position: 10,
        doc: "a node whose inputs are all constants becomes its value (results up to 2^16 elements)",
    },
    RewriteInfo {
        name: "local_useless_identity",
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "identity(x) -> x",
    },
    RewriteInfo {
        name: "local_useless_cast",
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "cast(x, dtype(x)) -> x",
    },
    RewriteInfo {
        name: "local_add_zero",
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "x + 0 -> x (integers; floats only for -0.0), x - 0 -> x",
    },
    RewriteInfo {
        name: "local_mul_one",
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "x * 1 -> x, x / 1 -> x (floats)",
    },
    RewriteInfo {
        name: "local_double_negation",
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "-(-x) -> x, not(not x) -> x, ~(~x) -> x",
    },
    RewriteInfo {
        name: "local_reduce_size_one",
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "a keepdims reduction over a size-1 uniform axis -> x",
    },
    RewriteInfo {
        name: "local_concat_one",
        tags: &["fast_run", "canonicalize", "local", "useless"],
        position: 10,
        doc: "concat of one input -> x",
    },
    RewriteInfo {
        name: "merge_after_canonicalize",
        tags: &["fast_run", "merge"],
        position: 20,
        doc: "merge again: canonicalization exposes equal nodes",
    },
    RewriteInfo {
        name: "local_expand_softmax",
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "softmax / log_softmax over the ragged axis of [n, *] floats -> max, exp, sum primitives that row fusion fuses",
    },
    RewriteInfo {
        name: "local_expand_row_statistics",
        tags: &["fast_run", "fusion", "local", APPROXIMATE],
        position: 30,
        doc: "reduce_variance / reduce_std / reduce_logsumexp over the ragged axis of [n, *] floats -> mean, max, exp, sum primitives that row fusion fuses",
    },
    RewriteInfo {
        name: "local_gather_reduce",
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "reduce_sum / reduce_mean over the ragged axis of gathered table rows (or their concat) -> GatherReduce",
    },
    RewriteInfo {
        name: "local_row_pooling",
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "reduce_sum(expand_dims(w, -1) * f) over the innermost ragged axis (then a sum / max / min / prod over the next outer one) -> RowPooling",
    },
    RewriteInfo {
        name: "local_join_adjacent",
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "join([x[:, :-1], x[:, 1:]], sep) over ragged string rows -> ngrams(x, 2, sep), written straight from x",
    },
    RewriteInfo {
        name: "local_pad_ngrams",
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "ngrams(concat([fill(stack([nrows(x), 1]), a), x, fill(..., b)], 1), w >= 2) -> ngrams(x) padded once with a and b, without the concat",
    },
    RewriteInfo {
        name: "local_hash_ngrams",
        tags: &["fast_run", "fusion", "local"],
        position: 30,
        doc: "to_hash_bucket_fast(ngrams(x)) of one width -> HashedNgrams, which hashes each n-gram without storing it",
    },
    RewriteInfo {
        name: "row_fusion",
        tags: &["fast_run", "fusion"],
        position: 40,
        doc: "row reductions over one partition with the maps around them -> RowKernel / RowReduce",
    },
    RewriteInfo {
        name: "elemwise_fusion",
        tags: &["fast_run", "fusion"],
        position: 41,
        doc: "convex groups of elementwise ops over one iteration space -> Composite",
    },
];

/// How often one rewrite applied and the time it took.
#[derive(Debug, Clone, PartialEq)]
pub struct RewriteStat {
    /// The rewrite's name.
    pub name: &'static str,
    /// Applications.
    pub applied: usize,
    /// Time spent in it.
    pub time: Duration,
}

/// What the optimizer did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RewriteReport {
    /// Per rewrite that ran, in pipeline order.
    pub stats: Vec<RewriteStat>,
    /// Nodes before and after.
    pub nodes_before: usize,
    /// Nodes after.
    pub nodes_after: usize,
    /// Distinct row-partition classes among the graph's ragged variables after partition analysis
    /// (one structure check per class remains at run time).
    pub partition_classes: usize,
    /// Nodes removed by dead-code elimination.
    pub dead_removed: usize,
    /// Total time.
    pub time: Duration,
}

impl std::fmt::Display for RewriteReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "nodes: {} -> {} in {:?}", self.nodes_before, self.nodes_after, self.time)?;
        for s in &self.stats {
            writeln!(f, "  {:<28} applied {:>5}  {:>10.1?}", s.name, s.applied, s.time)?;
        }
        write!(f, "  dead nodes removed: {}; partition classes: {}", self.dead_removed, self.partition_classes)
    }
}

/// A node rewrite: looks at one node and, if its law applies, returns replacements for its
/// outputs (the graph may have gained nodes or constants for them).
pub(crate) type LocalRewrite = fn(&mut FunctionGraph, ApplyId) -> Result<Option<Vec<(VarId, VarId)>>>;

fn local_rewrite(name: &str) -> Option<LocalRewrite> {
    Some(match name {
        "constant_folding" => fold::constant_folding,
        "local_useless_identity" => canon::useless_identity,
        "local_useless_cast" => canon::useless_cast,
        "local_add_zero" => canon::add_zero,
        "local_mul_one" => canon::mul_one,
        "local_double_negation" => canon::double_negation,
        "local_reduce_size_one" => canon::reduce_size_one,
        "local_concat_one" => canon::concat_one,
        "local_gather_reduce" => gather_reduce::gather_reduce,
        "local_row_pooling" => pooling::row_pooling,
        "local_join_adjacent" => ngrams::join_adjacent,
        "local_pad_ngrams" => ngrams::pad_ngrams,
        "local_hash_ngrams" => ngrams::hash_ngrams,
        "local_expand_softmax" => expand::softmax,
        "local_expand_row_statistics" => expand::statistic,
        _ => return None,
    })
}

/// The equilibrium group: sweeps the nodes in topological order, applying every selected local
/// rewrite, until a sweep changes nothing. Each sweep is linear in the graph; the number of
/// sweeps is bounded (every rewrite removes or replaces a node, so the graph cannot ping-pong).
const MAX_SWEEPS: usize = 16;

fn run_local(
    fg: &mut FunctionGraph,
    rewrites: &[(&'static str, LocalRewrite)],
    stats: &mut [RewriteStat],
) -> Result<()> {
    for _ in 0..MAX_SWEEPS {
        let mut changed = false;
        for node in fg.toposort()? {
            for (k, (name, rewrite)) in rewrites.iter().enumerate() {
                if fg.node(node).is_none() {
                    break;
                }
                // Nodes already bypassed wait for dead-code elimination.
                let outputs = fg.node(node).map(|a| a.outputs.clone()).unwrap_or_default();
                if outputs.iter().all(|&o| fg.clients(o).is_empty()) {
                    break;
                }
                let start = Instant::now();
                let result = rewrite(fg, node).map_err(|e| rewrite_error(name, fg, node, e))?;
                if let Some(pairs) = result {
                    fg.replace_all(&pairs, name).map_err(|e| rewrite_error(name, fg, node, e))?;
                    stats[k].applied += 1;
                    changed = true;
                }
                stats[k].time += start.elapsed();
            }
        }
        fg.remove_dead();
        if !changed {
            break;
        }
    }
    Ok(())
}

fn rewrite_error(name: &str, fg: &FunctionGraph, node: ApplyId, e: Error) -> Error {
    Error::graph(format!("rewrite `{name}` failed at {}: {e}", fg.describe_node(node)))
}

/// Optimizes `fg` in place with the selected rewrites; the graph computes the same values
/// afterwards (see each rewrite's law) and passes the verifier.
pub fn optimize(fg: &mut FunctionGraph, opts: &OptimizeOptions) -> Result<RewriteReport> {
    optimize_staged(fg, opts, &mut |_, _, _| {})
}

/// The tag of a rewrite whose result agrees with the original graph within the conformance
/// tolerance rather than bit for bit (it computes in another precision or order).
pub const APPROXIMATE: &str = "approximate";

/// [`optimize`], calling `on_stage(name, exact, graph)` after each pipeline stage that changed the
/// graph (a rewrite, or the `canonicalize` equilibrium group), so `Mode::Debug` can check every
/// stage against the one before it: bit for bit when `exact`, else within the conformance
/// tolerance (a stage that applied a rewrite tagged [`APPROXIMATE`]).
pub fn optimize_staged(
    fg: &mut FunctionGraph,
    opts: &OptimizeOptions,
    on_stage: &mut dyn FnMut(&'static str, bool, &FunctionGraph),
) -> Result<RewriteReport> {
    let start = Instant::now();
    let mut report = RewriteReport { nodes_before: fg.node_count(), ..Default::default() };
    let selected: Vec<&RewriteInfo> = REWRITES.iter().filter(|r| r.selected(opts)).collect();
    let mut i = 0;
    while i < selected.len() {
        let info = selected[i];
        if let Some(first) = local_rewrite(info.name) {
            // The whole run of local rewrites at this position forms one equilibrium group.
            let mut group = vec![(info.name, first)];
            while let Some(next) = selected.get(i + group.len()).filter(|r| r.position == info.position) {
                match local_rewrite(next.name) {
                    Some(rw) => group.push((next.name, rw)),
                    None => break,
                }
            }
            let mut stats: Vec<RewriteStat> =
                group.iter().map(|(name, _)| RewriteStat { name, applied: 0, time: Duration::ZERO }).collect();
            run_local(fg, &group, &mut stats)?;
            if stats.iter().any(|s| s.applied > 0) {
                let approximate =
                    stats.iter().zip(&selected[i..]).any(|(s, r)| s.applied > 0 && r.tags.contains(&APPROXIMATE));
                on_stage("canonicalize", !approximate, fg);
            }
            i += group.len();
            report.stats.extend(stats);
            continue;
        }
        let t = Instant::now();
        let applied = match info.name {
            "merge" | "merge_after_canonicalize" => merge::merge(fg)?,
            "row_fusion" => fusion::fuse(fg, fusion::Kind::Rows)?,
            "elemwise_fusion" => fusion::fuse(fg, fusion::Kind::Elementwise)?,
            other => return Err(Error::graph(format!("rewrite `{other}` is listed but has no implementation"))),
        };
        report.dead_removed += fg.remove_dead();
        report.stats.push(RewriteStat { name: info.name, applied, time: t.elapsed() });
        if applied > 0 {
            on_stage(info.name, !info.tags.contains(&APPROXIMATE), fg);
        }
        i += 1;
    }
    report.dead_removed += fg.remove_dead();
    report.partition_classes = crate::partition::PartitionClasses::analyze(fg)?.class_count();
    report.nodes_after = fg.node_count();
    report.time = start.elapsed();
    if cfg!(debug_assertions) {
        let problems = fg.verify();
        if !problems.is_empty() {
            return Err(Error::graph(format!("the optimized graph breaks invariants: {}", problems.join("; "))));
        }
    }
    Ok(report)
}
