//! The optimizer's engine: runs the selected rewrites of the database in pipeline order, node
//! rewrites in equilibrium groups dispatched by op type, and reports what each did.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::time::{Duration, Instant};

use ragtime_core::{Error, Result};
use ragtime_graph::{ApplyId, FunctionGraph};

use crate::db::{LocalRewrite, OptimizeOptions, Pass, RewriteInfo, Tracks, APPROXIMATE, REWRITES};

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

/// The equilibrium group: sweeps the nodes in topological order, offering each node the selected
/// local rewrites that track its op type (in table order), until a sweep changes nothing. Each
/// sweep is linear in the graph; the number of sweeps is bounded (every rewrite removes or
/// replaces a node, so the graph cannot ping-pong).
const MAX_SWEEPS: usize = 16;

/// One selected node rewrite of an equilibrium group.
struct GroupRule {
    name: &'static str,
    rewrite: LocalRewrite,
    /// Not tagged [`APPROXIMATE`]: its result is bit-identical.
    exact: bool,
}

/// Which rules of a group each op type is offered to, in table order: built once per group, so a
/// node is tried only by the rules that look at its op type.
struct Dispatch {
    /// Per tracked op type: its rules and the rules that track every op.
    by_type: HashMap<TypeId, Vec<usize>>,
    /// The rules that track every op (all an untracked op type gets).
    any_op: Vec<usize>,
}

impl Dispatch {
    fn new(tracks: &[Tracks]) -> Self {
        let any_op: Vec<usize> = (0..tracks.len()).filter(|&k| matches!(tracks[k], Tracks::AnyOp)).collect();
        let mut by_type: HashMap<TypeId, Vec<usize>> = HashMap::new();
        for (k, t) in tracks.iter().enumerate() {
            if let Tracks::Ops(types) = t {
                for ty in types.iter() {
                    by_type.entry(ty()).or_insert_with(|| any_op.clone()).push(k);
                }
            }
        }
        for rules in by_type.values_mut() {
            rules.sort_unstable();
            rules.dedup();
        }
        Dispatch { by_type, any_op }
    }

    fn rules(&self, ty: TypeId) -> &[usize] {
        self.by_type.get(&ty).unwrap_or(&self.any_op)
    }
}

/// Runs an equilibrium group, calling `on_stage` after every application with the rule's name,
/// so `Mode::Debug` can name the one rule that changed a result.
fn run_local(
    fg: &mut FunctionGraph,
    rules: &[GroupRule],
    dispatch: &Dispatch,
    stats: &mut [RewriteStat],
    on_stage: &mut dyn FnMut(&'static str, bool, &FunctionGraph),
) -> Result<()> {
    for _ in 0..MAX_SWEEPS {
        let mut changed = false;
        for node in fg.toposort()? {
            let Some(apply) = fg.node(node) else { continue };
            for &k in dispatch.rules(Any::type_id(apply.op.as_any())) {
                let rule = &rules[k];
                if fg.node(node).is_none() {
                    break;
                }
                // Nodes already bypassed wait for dead-code elimination.
                let outputs = fg.node(node).map(|a| a.outputs.clone()).unwrap_or_default();
                if outputs.iter().all(|&o| fg.clients(o).is_empty()) {
                    break;
                }
                let start = Instant::now();
                let result = (rule.rewrite)(fg, node).map_err(|e| rewrite_error(rule.name, fg, node, e))?;
                if let Some(pairs) = result {
                    fg.replace_all(&pairs, rule.name).map_err(|e| rewrite_error(rule.name, fg, node, e))?;
                    stats[k].applied += 1;
                    changed = true;
                    stats[k].time += start.elapsed();
                    on_stage(rule.name, rule.exact, fg);
                } else {
                    stats[k].time += start.elapsed();
                }
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

/// [`optimize`], calling `on_stage(name, exact, graph)` after each stage that changed the graph (a
/// whole-graph pass that applied, or one application of a node rewrite), so `Mode::Debug` can
/// check every stage against the one before it and name the rule that changed a result: bit for
/// bit when `exact`, else within the conformance tolerance (a rewrite tagged [`APPROXIMATE`]).
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
        match info.pass {
            Pass::Local(..) => {
                // The whole run of local rewrites at this position forms one equilibrium group.
                let group: Vec<&RewriteInfo> = selected[i..]
                    .iter()
                    .take_while(|r| r.position == info.position && matches!(r.pass, Pass::Local(..)))
                    .copied()
                    .collect();
                let (rules, tracks): (Vec<GroupRule>, Vec<Tracks>) = group
                    .iter()
                    .filter_map(|r| match r.pass {
                        Pass::Local(tracks, rewrite) => {
                            let exact = !r.tags.contains(&APPROXIMATE);
                            Some((GroupRule { name: r.name, rewrite, exact }, tracks))
                        }
                        Pass::Global(_) => None,
                    })
                    .unzip();
                let mut stats: Vec<RewriteStat> =
                    rules.iter().map(|r| RewriteStat { name: r.name, applied: 0, time: Duration::ZERO }).collect();
                run_local(fg, &rules, &Dispatch::new(&tracks), &mut stats, on_stage)?;
                i += group.len();
                report.stats.extend(stats);
            }
            Pass::Global(pass) => {
                let t = Instant::now();
                let applied = pass(fg)?;
                report.dead_removed += fg.remove_dead();
                report.stats.push(RewriteStat { name: info.name, applied, time: t.elapsed() });
                if applied > 0 {
                    on_stage(info.name, !info.tags.contains(&APPROXIMATE), fg);
                }
                i += 1;
            }
        }
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
