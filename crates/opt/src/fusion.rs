//! Fusion: maximal convex groups of ops over one iteration space become one fused op.
//!
//! - `Kind::Rows`: elementwise ops and reductions over the innermost ragged axis of one partition
//!   class of any ragged rank `k` (`[n, *]`, `[n, *, *]`, ...: softmax, mean-centering,
//!   `reduce_mean(x * 2 + z)`) become a `RowKernel` (printed `RowReduce` when it is one
//!   reduction). Its rows are the innermost partition's rows: a ragged rank 2 tensor is a rank 1
//!   row kernel over its flattened inner rows, whose reductions keep the outer partitions. Items
//!   are scalars or the `[k]` vectors of uniform inner dims known in the types (`[n, *, 8]`:
//!   `RowKernel::over_items`), each column reduced on its own. A reduction over the next outer
//!   ragged axis of a member reduction's per-row results (a user's maximum of per-session sums)
//!   joins the group as an `OuterFold` of that reduction's output.
//! - `Kind::Elementwise`: the remaining elementwise ops over one iteration space (same type and
//!   partition class) become a `Composite`.
//!
//! Operands line up as `Full` (the space's own type and class), `Scalar` (rank 0; rank-0
//! constants are inlined into the scalar graph) or `PerRow` (one item per innermost row: a dense
//! `[n, 1]` value against a ragged rank 1 space, a `[n, *, 1]` one against ragged rank 2, `[n, 1,
//! 8]` against `[n, *, 8]`, ...; composites take per-row operands of scalar items only). Groups stay convex: a node joins a group only if none of its other
//! inputs depends on the group through a node outside it, so the fused op never needs its own
//! output. A node with several clients still fuses; every member read outside the group becomes
//! an output of the fused op.

use std::collections::HashMap;

use fixedbitset::FixedBitSet;
use ragtime_core::{DType, Dim, Result, TensorType};
use ragtime_fused::{
    op_ref, Composite, OperandKind, OuterFold, RowKernel, RowOutput, RowReduction, ScalarConst, ScalarGraphBuilder,
    ScalarRef,
};
use ragtime_graph::{ApplyId, FunctionGraph, OpRef, VarId};
use ragtime_ops::elemwise::Elemwise;
use ragtime_ops::reduce::Reduce;
use ragtime_runtime::InnerGraphBuilder;

use crate::partition::PartitionClasses;

/// Which fusion pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Row kernels around axis-1 reductions.
    Rows,
    /// Composites of elementwise ops.
    Elementwise,
}

/// The iteration space of a group: the output type's shape and the partition class.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Space {
    dims: Vec<Dim>,
    ragged_rank: usize,
    class: Option<VarId>,
    /// The axis a row kernel's rows run along (`Innermost` for composites' spaces).
    axis: RowsAxis,
}

/// The axis of a rows space that its row kernel's reductions fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum RowsAxis {
    /// The innermost ragged axis; items are the values of the uniform inner dims past it.
    Innermost,
    /// The last axis, uniform (its length known in the type) and past the ragged ones: the rows
    /// are the `[k]` vectors of a `[n, *, k]` or dense `[n, k]` value (features, classes).
    Trailing,
}

/// What a node would contribute to a group.
struct Candidate {
    space: Space,
    /// Inputs through which it may join a group (full operands, and per-row operands computed
    /// by a reduction).
    links: Vec<VarId>,
}

struct Group {
    /// The spaces every member lines up in (more than one only while no reduction is in the
    /// group: a map over `[n, *, k]` fits rows along `*` and along `k`); the first is built.
    spaces: Vec<Space>,
    members: Vec<ApplyId>,
    reductions: usize,
    /// Members computing per-row values from the group's reductions (`log(sum)` of a
    /// log-softmax, `rsqrt(variance)` of a layer norm), which only element-level members read.
    per_row: Vec<ApplyId>,
}

/// The values per item of a rows space (the innermost rows of a ragged tensor whose items are
/// scalars, width 1, or vectors of uniform inner dims known in the type, the product of those
/// dims), or `None` when row kernels do not iterate over it.
fn item_width(dims: &[Dim], ragged_rank: usize) -> Option<usize> {
    if ragged_rank == 0 || dims.len() <= ragged_rank {
        return None;
    }
    let mut width = 1usize;
    for d in &dims[ragged_rank + 1..] {
        match d {
            Dim::Known(k) if *k > 0 => width = width.checked_mul(*k)?,
            _ => return None,
        }
    }
    Some(width)
}

/// The length of the last axis when row kernels can run along it: every dim past the ragged
/// ones known (at least one of them, so the last axis is not ragged), `None` otherwise.
pub(crate) fn trailing_length(dims: &[Dim], ragged_rank: usize) -> Option<usize> {
    if dims.len() < ragged_rank + 2 {
        return None;
    }
    let mut last = None;
    for d in &dims[ragged_rank + 1..] {
        match d {
            Dim::Known(k) if *k > 0 => last = Some(*k),
            _ => return None,
        }
    }
    last
}

fn is_rows_space(space: &Space) -> bool {
    match space.axis {
        RowsAxis::Innermost => item_width(&space.dims, space.ragged_rank).is_some(),
        RowsAxis::Trailing => trailing_length(&space.dims, space.ragged_rank).is_some(),
    }
}

/// One item per innermost row of a rows space of ragged rank `k`: rank of the space, ragged rank
/// `k - 1`, dim `k` of 1 (a reduction over the innermost ragged axis with `keepdims`), then the
/// space's inner dims. Composites (`rows` false) take them only over scalar items.
fn is_per_row(ty: &TensorType, space: &Space, rows: bool) -> bool {
    let k = space.ragged_rank;
    if space.axis == RowsAxis::Trailing {
        // `[n, *, 1]` against `[n, *, k]`: the space's type with a last dim of 1.
        let last = space.dims.len() - 1;
        return rows
            && is_rows_space(space)
            && ty.ragged_rank() == k
            && ty.rank() == space.dims.len()
            && ty.dims()[..last] == space.dims[..last]
            && ty.dims()[last] == Dim::Known(1);
    }
    is_rows_space(space)
        && (rows || space.dims.len() == k + 1)
        && ty.ragged_rank() + 1 == k
        && ty.rank() == space.dims.len()
        && ty.dims()[k] == Dim::Known(1)
        && ty.dims()[k + 1..] == space.dims[k + 1..]
}

fn inlined_const(fg: &FunctionGraph, v: VarId) -> Option<ScalarConst> {
    ScalarConst::from_tensor(fg.var(v)?.constant.as_ref()?)
}

/// The operand kind of an input of type `ty` in `space`, if it lines up (`rows`: for a row
/// kernel).
fn operand_kind(ty: &TensorType, space: &Space, same_class: bool, rows: bool) -> Option<OperandKind> {
    if ty.dtype() == DType::String {
        return None;
    }
    if ty.rank() == 0 {
        return Some(OperandKind::Scalar);
    }
    if ty.dims() == space.dims && ty.ragged_rank() == space.ragged_rank && (space.class.is_none() || same_class) {
        return Some(OperandKind::Full);
    }
    if is_per_row(ty, space, rows) {
        return Some(OperandKind::PerRow);
    }
    None
}

/// Whether `reduce` folds exactly the innermost ragged axis of a value of type `ty`, named from
/// the front or from the back (past the inner dims).
fn reduces_innermost(reduce: &Reduce, ty: &TensorType) -> bool {
    reduce.axis.single().is_some_and(|a| {
        let a = if a < 0 { a + ty.rank() as i64 } else { a };
        a == ty.ragged_rank() as i64
    })
}

/// Whether `reduce` folds exactly the last axis of a value of type `ty`, past its ragged ones.
fn reduces_trailing(reduce: &Reduce, ty: &TensorType) -> bool {
    reduce.axis.single().is_some_and(|a| {
        let rank = ty.rank() as i64;
        let a = if a < 0 { a + rank } else { a };
        a == rank - 1 && a > ty.ragged_rank() as i64
    })
}

/// An outer fold: `node` reduces the innermost ragged axis of `x`, the per-row result of a
/// reduction over the innermost ragged axis of a value `y` of ragged rank 2 or more, with or
/// without `keepdims` (`reduce_max(reduce_sum(y, axis=2), axis=1)`). Gives `y`'s rows space,
/// whose group the fold may join as an output (`OuterFold`), and `x`.
fn outer_fold(fg: &FunctionGraph, node: ApplyId, classes: &mut PartitionClasses) -> Option<(Space, VarId)> {
    let apply = fg.node(node)?;
    let reduce = apply.op.as_any().downcast_ref::<Reduce>()?;
    let x = *apply.inputs.first()?;
    let x_ty = fg.var(x)?.ty.clone();
    let owner = fg.node(fg.var(x)?.owner?)?;
    let inner = owner.op.as_any().downcast_ref::<Reduce>()?;
    let y = *owner.inputs.first()?;
    let y_ty = fg.var(y)?.ty.clone();
    let nested = x_ty.ragged_rank() >= 1 && y_ty.ragged_rank() == x_ty.ragged_rank() + 1;
    if !nested || !reduces_innermost(reduce, &x_ty) || !reduces_innermost(inner, &y_ty) {
        return None;
    }
    let space = Space {
        dims: y_ty.dims().to_vec(),
        ragged_rank: y_ty.ragged_rank(),
        class: Some(classes.find(y)),
        axis: RowsAxis::Innermost,
    };
    Some((space, x))
}

/// What `node` would contribute to a group: one candidate per space it lines up in (a map over
/// `[n, *, k]` may join rows along `*` or along `k`), none when it joins no group.
fn candidates(fg: &FunctionGraph, node: ApplyId, classes: &mut PartitionClasses, kind: Kind) -> Vec<Candidate> {
    candidates_of(fg, node, classes, kind).unwrap_or_default()
}

fn candidates_of(
    fg: &FunctionGraph,
    node: ApplyId,
    classes: &mut PartitionClasses,
    kind: Kind,
) -> Option<Vec<Candidate>> {
    let apply = fg.node(node)?;
    let out = *apply.outputs.first()?;
    let out_ty = fg.var(out)?.ty.clone();
    if out_ty.dtype() == DType::String {
        return None;
    }
    if let Some(reduce) = apply.op.as_any().downcast_ref::<Reduce>() {
        let x = apply.inputs[0];
        let x_ty = &fg.var(x)?.ty;
        let rank = x_ty.ragged_rank();
        if kind != Kind::Rows || x_ty.dtype() == DType::String {
            return None;
        }
        let class = x_ty.is_ragged().then(|| classes.find(x));
        let axis = if reduces_innermost(reduce, x_ty) && item_width(x_ty.dims(), rank).is_some() {
            RowsAxis::Innermost
        } else if reduces_trailing(reduce, x_ty) && trailing_length(x_ty.dims(), rank).is_some() {
            RowsAxis::Trailing
        } else {
            return None;
        };
        let space = Space { dims: x_ty.dims().to_vec(), ragged_rank: rank, class, axis };
        return Some(vec![Candidate { space, links: vec![x] }]);
    }
    apply.op.as_any().downcast_ref::<Elemwise>()?;
    let class = out_ty.is_ragged().then(|| classes.find(out));
    let plain = |axis| Space { dims: out_ty.dims().to_vec(), ragged_rank: out_ty.ragged_rank(), class, axis };
    let spaces: Vec<Space> = match kind {
        Kind::Elementwise => vec![plain(RowsAxis::Innermost)],
        Kind::Rows => [RowsAxis::Innermost, RowsAxis::Trailing].into_iter().map(plain).filter(is_rows_space).collect(),
    };
    let mut found = Vec::with_capacity(spaces.len());
    'spaces: for space in spaces {
        let mut links = Vec::new();
        let mut full = false;
        for &v in &apply.inputs {
            if inlined_const(fg, v).is_some() {
                continue;
            }
            let ty = fg.var(v)?.ty.clone();
            let same_class = space.class.is_some_and(|c| classes.find(v) == c);
            match operand_kind(&ty, &space, same_class, kind == Kind::Rows) {
                Some(OperandKind::Full) => {
                    full = true;
                    links.push(v);
                }
                Some(OperandKind::PerRow) => links.push(v),
                Some(OperandKind::Scalar) => {}
                None => continue 'spaces,
            }
        }
        if full {
            found.push(Candidate { space, links });
        }
    }
    Some(found)
}

/// Runs one fusion pass; returns the number of fused ops built.
pub(crate) fn fuse(fg: &mut FunctionGraph, kind: Kind) -> Result<usize> {
    let mut classes = PartitionClasses::analyze(fg)?;
    let order = fg.toposort()?;
    let mut group_of: HashMap<ApplyId, usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    // For each variable, the groups it depends on.
    let mut reach: HashMap<VarId, FixedBitSet> = HashMap::new();
    // For each variable, the row groups whose members read it: a reduction of a variable that no
    // group computes joins one of these, so reductions of one input (logsumexp's two maxima,
    // mean and max of `x`) share one pass over each row.
    let mut readers: HashMap<VarId, Vec<usize>> = HashMap::new();
    for &node in &order {
        let Some(apply) = fg.node(node) else { continue };
        let inputs = apply.inputs.clone();
        let outputs = apply.outputs.clone();
        let mut reach_in = FixedBitSet::with_capacity(groups.len());
        for v in &inputs {
            if let Some(r) = reach.get(v) {
                reach_in.grow(r.len());
                reach_in.union_with(r);
            }
        }
        let owner_group = |v: VarId| fg.var(v).and_then(|x| x.owner).and_then(|o| group_of.get(&o).copied());
        let convex = |g: usize| {
            inputs.iter().all(|&u| owner_group(u) == Some(g) || !reach.get(&u).is_some_and(|r| r.contains(g)))
        };
        // A reduction over the next outer ragged axis of a member's per-row results joins that
        // member's group as an output; otherwise it is a row reduction of its own space.
        let fold = if kind == Kind::Rows { outer_fold(fg, node, &mut classes) } else { None };
        let mut chosen =
            fold.and_then(|(space, x)| owner_group(x).filter(|&g| groups[g].spaces.contains(&space) && convex(g)));
        let mut per_row = false;
        if chosen.is_none() && kind == Kind::Rows {
            chosen = per_row_group(fg, node, &groups, &owner_group).filter(|&g| convex(g));
            per_row = chosen.is_some();
        }
        let cands = if chosen.is_none() { candidates(fg, node, &mut classes, kind) } else { Vec::new() };
        if !cands.is_empty() {
            let is_reduce = fg.node(node).is_some_and(|a| a.op.as_any().is::<Reduce>());
            chosen = cands.iter().find_map(|c| {
                let siblings = c.links.iter().filter(|_| is_reduce).flat_map(|v| readers.get(v).into_iter().flatten());
                c.links
                    .iter()
                    .filter_map(|&v| owner_group(v))
                    .chain(siblings.copied())
                    .find(|&g| groups[g].spaces.contains(&c.space) && convex(g))
            });
            match chosen {
                // The group keeps the spaces this member lines up in too.
                Some(g) => groups[g].spaces.retain(|s| cands.iter().any(|c| c.space == *s)),
                None => {
                    groups.push(Group {
                        spaces: cands.iter().map(|c| c.space.clone()).collect(),
                        members: Vec::new(),
                        reductions: 0,
                        per_row: Vec::new(),
                    });
                    chosen = Some(groups.len() - 1);
                }
            }
        }
        if let Some(g) = chosen {
            groups[g].members.push(node);
            if per_row {
                groups[g].per_row.push(node);
            }
            if fg.node(node).is_some_and(|a| a.op.as_any().is::<Reduce>()) {
                groups[g].reductions += 1;
            }
            group_of.insert(node, g);
            if kind == Kind::Rows {
                for &v in &inputs {
                    readers.entry(v).or_default().push(g);
                }
            }
            reach_in.grow(groups.len());
            reach_in.insert(g);
        }
        for o in outputs {
            reach.insert(o, reach_in.clone());
        }
    }
    for group in &mut groups {
        without_per_row_outputs(fg, group);
    }
    let mut built = 0;
    for group in &groups {
        let wanted = match kind {
            Kind::Rows => group.reductions > 0 || is_trailing_row_map(fg, group, &group_of),
            Kind::Elementwise => !group.members.is_empty(),
        };
        if wanted && build(fg, group, kind)? {
            built += 1;
        }
    }
    Ok(built)
}

/// True for a group of maps that lines up only along a trailing uniform axis and reads a per-row
/// value computed outside it (`exp(logits - expand_dims(lse, -1))` over dense `[n, k]` logits, the
/// backward of a softmax cross-entropy): a row kernel without reductions, since composites take
/// per-row operands over ragged rows only.
fn is_trailing_row_map(fg: &FunctionGraph, group: &Group, group_of: &HashMap<ApplyId, usize>) -> bool {
    let [space] = group.spaces.as_slice() else { return false };
    // Rows of one value (a `[n, 1]` value is its own per-row value) are plain maps.
    let long_rows = trailing_length(&space.dims, space.ragged_rank).is_some_and(|k| k > 1);
    if space.axis != RowsAxis::Trailing || !long_rows || group.members.is_empty() {
        return false;
    }
    let me = group_of.get(&group.members[0]).copied();
    group.members.iter().filter_map(|&m| fg.node(m)).flat_map(|a| a.inputs.iter()).any(|&v| {
        let outside = fg.var(v).and_then(|x| x.owner).is_none_or(|o| group_of.get(&o).copied() != me);
        outside && fg.var(v).is_some_and(|x| operand_kind(&x.ty, space, false, true) == Some(OperandKind::PerRow))
    })
}

/// The row group a per-row elementwise node joins, if any: every input a constant, a scalar or a
/// per-row value of the group's rows space (at least one computed by the group: a reduction or
/// another such member), and every client an elementwise node (never a graph output), so that
/// only element-level members read it and the kernel computes it once per row. A member that a
/// node outside the group reads after all leaves the group again (`without_per_row_outputs`).
fn per_row_group(
    fg: &FunctionGraph,
    node: ApplyId,
    groups: &[Group],
    owner_group: &dyn Fn(VarId) -> Option<usize>,
) -> Option<usize> {
    let apply = fg.node(node)?;
    apply.op.as_any().downcast_ref::<Elemwise>()?;
    let out = *apply.outputs.first()?;
    if fg.var(out)?.ty.dtype() == DType::String {
        return None;
    }
    let clients_ok = fg.clients(out).iter().all(|c| match c {
        ragtime_graph::Client::Node { node, .. } => fg.node(*node).is_some_and(|a| a.op.as_any().is::<Elemwise>()),
        ragtime_graph::Client::Output(_) => false,
    });
    if !clients_ok {
        return None;
    }
    let g = apply.inputs.iter().find_map(|&v| owner_group(v).filter(|&g| groups[g].reductions > 0))?;
    let space = &groups[g].spaces[0];
    let lines_up = apply.inputs.iter().all(|&v| {
        inlined_const(fg, v).is_some()
            || fg
                .var(v)
                .is_some_and(|x| x.ty.dtype() != DType::String && (x.ty.rank() == 0 || is_per_row(&x.ty, space, true)))
    });
    lines_up.then_some(g)
}

/// Takes out of `group` its per-row members that a node outside the group reads, with every
/// member computed from them: the kernel returns per-row values of its reductions only, so such
/// a value is computed after the kernel, as without the per-row members (and so are the members
/// reading it, which could not be in the group then either).
fn without_per_row_outputs(fg: &FunctionGraph, group: &mut Group) {
    loop {
        let members: std::collections::HashSet<ApplyId> = group.members.iter().copied().collect();
        let read_outside = |m: ApplyId| {
            fg.node(m).is_some_and(|a| {
                a.outputs.iter().any(|&o| {
                    fg.clients(o).iter().any(|c| match c {
                        ragtime_graph::Client::Node { node, .. } => !members.contains(node),
                        ragtime_graph::Client::Output(_) => true,
                    })
                })
            })
        };
        let Some(&first) = group.per_row.iter().find(|&&m| read_outside(m)) else { return };
        // Members in topological order: each one reading a removed member goes too.
        let mut removed: std::collections::HashSet<ApplyId> = std::collections::HashSet::from([first]);
        let mut removed_vars: std::collections::HashSet<VarId> =
            fg.node(first).map(|a| a.outputs.iter().copied().collect()).unwrap_or_default();
        for &m in &group.members {
            let Some(a) = fg.node(m) else { continue };
            if a.inputs.iter().any(|v| removed_vars.contains(v)) {
                removed.insert(m);
                removed_vars.extend(a.outputs.iter().copied());
            }
        }
        let reductions_removed =
            removed.iter().filter(|&&m| fg.node(m).is_some_and(|a| a.op.as_any().is::<Reduce>())).count();
        group.reductions -= reductions_removed;
        group.members.retain(|m| !removed.contains(m));
        group.per_row.retain(|m| !removed.contains(m));
    }
}

/// Replaces a group by one fused op; `false` when that would make a cycle.
fn build(fg: &mut FunctionGraph, group: &Group, kind: Kind) -> Result<bool> {
    let space = &group.spaces[0];
    let members: std::collections::HashSet<ApplyId> = group.members.iter().copied().collect();
    let produced_inside =
        |fg: &FunctionGraph, v: VarId| fg.var(v).and_then(|x| x.owner).is_some_and(|o| members.contains(&o));
    // External operands, in first-use order; rank-0 constants are inlined.
    let mut externals: Vec<VarId> = Vec::new();
    for &m in &group.members {
        for &v in &fg.node(m).map(|a| a.inputs.clone()).unwrap_or_default() {
            if !produced_inside(fg, v) && inlined_const(fg, v).is_none() && !externals.contains(&v) {
                externals.push(v);
            }
        }
    }
    let mut kinds = Vec::with_capacity(externals.len());
    let mut types = Vec::with_capacity(externals.len());
    for &v in &externals {
        let ty =
            fg.var(v).map(|x| x.ty.clone()).ok_or_else(|| ragtime_core::Error::graph("a fused operand vanished"))?;
        types.push(ty.clone());
        // `candidate` checked each operand's partition class when the group was formed; earlier
        // groups may have replaced the variable since, so only its shape is looked at here.
        let operand = operand_kind(&ty, space, true, kind == Kind::Rows)
            .ok_or_else(|| ragtime_core::Error::graph(format!("fusion: operand of type {ty} does not line up")))?;
        kinds.push(operand);
    }
    let mut builder = ScalarGraphBuilder::new(Vec::new());
    let mut scalar_of: HashMap<VarId, ScalarRef> = HashMap::new();
    for &v in &externals {
        let dtype = fg.var(v).map(|x| x.ty.dtype()).unwrap_or(DType::Bool);
        let r = builder.input(dtype);
        scalar_of.insert(v, r);
    }
    // The inner graph: the members as they are, reading the fused op's inputs and the inlined
    // constants (as `Constant` variables).
    let mut inner = InnerGraphBuilder::new(types)?;
    let mut inner_of: HashMap<VarId, VarId> =
        externals.iter().enumerate().filter_map(|(i, &v)| Some((v, inner.input(i)?))).collect();
    let mut reductions: Vec<RowReduction> = Vec::new();
    // Reduction results come after the operands among the graph's inputs, one per distinct
    // reduction: `reduce_max(x)` asked for with and without `keepdims` is computed once.
    let mut reduce_inputs: Vec<ScalarRef> = Vec::new();
    let mut keepdims_of: HashMap<VarId, bool> = HashMap::new();
    // Outer folds by output variable (`output` holding the reduction index until the outputs are
    // numbered), with the `keepdims` of the per-row results they fold.
    let mut fold_of: HashMap<VarId, (OuterFold, bool)> = HashMap::new();
    for &m in &group.members {
        let Some(apply) = fg.node(m) else { continue };
        let (op, inputs, out): (OpRef, Vec<VarId>, VarId) = (apply.op.clone(), apply.inputs.clone(), apply.outputs[0]);
        let mut inner_inputs = Vec::with_capacity(inputs.len());
        let mut args = Vec::with_capacity(inputs.len());
        for &v in &inputs {
            let constant = fg.var(v).and_then(|x| x.constant.clone());
            match (inlined_const(fg, v).filter(|_| !produced_inside(fg, v)), constant) {
                (Some(c), Some(value)) => {
                    args.push(ScalarRef::Const(c));
                    inner_inputs.push(inner.constant(value));
                }
                _ => {
                    let arg = scalar_of.get(&v).copied().ok_or_else(|| {
                        ragtime_core::Error::graph("fusion: a member reads an outer fold of its own group")
                    })?;
                    args.push(arg);
                    inner_inputs.push(inner_of[&v]);
                }
            }
        }
        let inner_out = inner.apply(op.clone(), &inner_inputs)?;
        inner_of.insert(out, inner_out[0]);
        // A reduction of a member reduction's per-row results (an element-level reduction reads
        // a value of the space, never one of them): a fold over the outer rows.
        let folded = match args.first() {
            Some(ScalarRef::Input(i)) => i.checked_sub(externals.len()),
            _ => None,
        };
        if let (Some(reduce), Some(index)) = (op.as_any().downcast_ref::<Reduce>(), folded) {
            let per_row_keepdims = keepdims_of.get(&inputs[0]).copied().unwrap_or(false);
            let fold = OuterFold { output: index, kind: reduce.kind, keepdims: reduce.keepdims };
            fold_of.insert(out, (fold, per_row_keepdims));
        } else if let Some(reduce) = op.as_any().downcast_ref::<Reduce>() {
            let red = RowReduction { kind: reduce.kind, arg: args[0] };
            let k = reductions.iter().position(|r| *r == red).unwrap_or_else(|| {
                let dtype = fg.var(out).map_or(DType::Bool, |x| x.ty.dtype());
                reductions.push(red);
                reduce_inputs.push(builder.input(dtype));
                reductions.len() - 1
            });
            scalar_of.insert(out, reduce_inputs[k]);
            keepdims_of.insert(out, reduce.keepdims);
        } else if let Some(e) = op.as_any().downcast_ref::<Elemwise>() {
            let r = builder.node(e.scalar, args)?;
            scalar_of.insert(out, r);
        }
    }
    // Outputs: members read outside the group.
    let mut replaced: Vec<VarId> = Vec::new();
    for &m in &group.members {
        let out = fg.node(m).map(|a| a.outputs[0]);
        if let Some(out) = out {
            let outside = fg.clients(out).iter().any(|c| match c {
                ragtime_graph::Client::Node { node, .. } => !members.contains(node),
                ragtime_graph::Client::Output(_) => true,
            });
            if outside {
                replaced.push(out);
            }
        }
    }
    let inner_outputs: Vec<VarId> = replaced.iter().map(|v| inner_of[v]).collect();
    let inner = inner.finish(&inner_outputs)?;
    // A fold's output is first the per-row results it folds (its reduction, in their shape).
    let mut folds: Vec<OuterFold> = Vec::new();
    let mut scalar_outputs: Vec<ScalarRef> = Vec::with_capacity(replaced.len());
    for (j, v) in replaced.iter().enumerate() {
        match fold_of.get(v) {
            Some((fold, per_row_keepdims)) => {
                scalar_outputs.push(reduce_inputs[fold.output]);
                keepdims_of.insert(*v, *per_row_keepdims);
                folds.push(OuterFold { output: j, ..*fold });
            }
            None => scalar_outputs.push(scalar_of[v]),
        }
    }
    let op: OpRef = if reductions.is_empty() && space.axis == RowsAxis::Innermost {
        let graph = builder.finish(scalar_outputs)?;
        op_ref(Composite::new(graph, kinds, inner)?)
    } else {
        let outputs: Vec<RowOutput> = replaced
            .iter()
            .zip(&scalar_outputs)
            .map(|(v, r)| match r {
                ScalarRef::Input(i) if *i >= externals.len() => RowOutput::Reduction {
                    index: i - externals.len(),
                    keepdims: keepdims_of.get(v).copied().unwrap_or(false),
                },
                other => RowOutput::Elements(*other),
            })
            .collect();
        let elements = RowOutput::elements(&outputs);
        let graph = builder.finish(elements)?;
        let no_rows = || ragtime_core::Error::graph("fusion: a row kernel over a space without rows");
        let kernel = RowKernel::new(graph, kinds, reductions, outputs, inner)?;
        op_ref(match space.axis {
            RowsAxis::Innermost => {
                let width = item_width(&space.dims, space.ragged_rank).ok_or_else(no_rows)?;
                kernel.over_items(width)?.with_outer_folds(folds)?
            }
            RowsAxis::Trailing => {
                kernel.over_trailing_axis(trailing_length(&space.dims, space.ragged_rank).ok_or_else(no_rows)?)?
            }
        })
    };
    // Groups are convex one by one, but two groups can still feed each other through fused ops
    // built earlier; such a group stays unfused (correct, only slower).
    if externals_depend_on(fg, &externals, &replaced) {
        return Ok(false);
    }
    let new_outputs = fg.add_node(op, &externals)?;
    let pairs: Vec<(VarId, VarId)> = replaced.into_iter().zip(new_outputs).collect();
    fg.replace_all(&pairs, "fusion")?;
    Ok(true)
}

/// True when some external operand is computed from one of `replaced` (one walk over the
/// operands' ancestors).
fn externals_depend_on(fg: &FunctionGraph, externals: &[VarId], replaced: &[VarId]) -> bool {
    let targets: std::collections::HashSet<VarId> = replaced.iter().copied().collect();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<VarId> = externals.to_vec();
    while let Some(v) = stack.pop() {
        if targets.contains(&v) {
            return true;
        }
        if !seen.insert(v) {
            continue;
        }
        if let Some(node) = fg.var(v).and_then(|x| x.owner).and_then(|o| fg.node(o)) {
            stack.extend(node.inputs.iter().copied());
        }
    }
    false
}
