//! Updates (Theano's `function(..., updates=...)`): after a call of a compiled function has
//! computed everything, each `(state, new_value)` pair replaces the state's value, all or none.
//!
//! Two forms, chosen when compiling:
//! - **replace**: the graph computes the new value as one more output, which is moved into the
//!   state (the old value's buffer goes back to the kernels' pool, so a dense step such as
//!   `W - lr * dW` reuses the previous step's memory);
//! - **scatter-subtract in place**: a new value of the form `s - c * scatter_add(s, positions,
//!   u)` (or `s - scatter_add(..)`, `c` a scalar), which is what `grad` builds for a table read
//!   by `gather` / `embedding_lookup`, is not computed: the graph outputs `c`, the positions and
//!   the updates, and the state's own buffer is changed where the positions point (`s[p] -= c *
//!   u` for each update in turn; equal to the graph's value up to the rounding of the sum of
//!   duplicates). When the positions are `gather(flat_positions(s), ids)` (the gradient of
//!   `gather(s, ids)` for a dense table), the graph outputs the row ids instead and whole rows
//!   are updated: an SGD step on a large embedding table touches only the rows a feature read
//!   and copies nothing (the buffer is copied once only when something else still holds it,
//!   e.g. a value returned by `State::get`).
//! - **embedding bag**: when those rows are moreover the gradient of a bag's sum or mean, the
//!   graph outputs the bags' gradient and the update walks each bag's ids. Ids that are a
//!   concatenation along the bags' axis are output part by part (nothing concatenates them), and
//!   a bags' gradient `a @ transpose(w)` (what `grad` builds through `matmul`) is output as `a`
//!   and `w`, the product computed bag by bag inside the update (no `[bags, dim]` tensor).
//!
//! All or none: every update is checked (types, positions in range, sizes) and every buffer
//! made writable before the first state changes; the changes themselves cannot fail.
//!
//! An in-place update runs on the function's threads: the state's rows are split into
//! contiguous ranges, one per thread, and each thread walks every update in order and applies
//! those that land in its range. Rows are disjoint between threads and each row receives its
//! updates in the same order as on one thread, so the result is the same bit for bit.

use std::borrow::Cow;

use ragtime_core::{DType, DenseTensor, Element, Error, ExecContext, RaggedTensor, Result, RowPartition, TensorType};
use ragtime_graph::{Graph, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::gather::Gather;
use ragtime_ops::grad::{FlatPositions, ScatterAdd, Transpose, Unreduce};
use ragtime_ops::linalg::MatMul;
use ragtime_ops::structure::{Concat, ExpandDims, RowLengths};
use ragtime_runtime::parallel;

use crate::state::{Locked, State};

const UPDATE: &str = "update";

/// How a state's new value is obtained from a call's extra outputs (indices into them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Output `value` is the new value.
    Replace { value: usize },
    /// `s[positions[k]] -= scale * updates[k]` over the flat values.
    ScatterSub { scale: Option<usize>, positions: usize, updates: usize },
    /// Row `ids[j]` of a dense table minus `scale` times row `j` of `rows`.
    RowScatterSub { scale: Option<usize>, ids: usize, rows: usize },
    /// Each row `ids[b][j]` of a dense table minus `scale` times the bag's gradient row `b`
    /// (divided by the bag's size when `mean`): the gradient of an embedding bag, applied bag by
    /// bag. The ids are outputs `ids..ids + id_parts`, concatenated along the bags' axis.
    BagScatterSub { scale: Option<usize>, ids: usize, id_parts: usize, grads: BagGrads, mean: bool },
}

/// Where an embedding-bag update finds the bags' gradient (indices into the extra outputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BagGrads {
    /// Output `rows` holds one gradient row per bag.
    Rows(usize),
    /// Row `b` is row `b` of output `a` times the transpose of output `w` (`[dim, k]`).
    Product { a: usize, w: usize },
}

/// One `(state, new value)` pair of a compiled function.
#[derive(Debug, Clone)]
pub(crate) struct Update {
    pub(crate) state: State,
    pub(crate) form: Form,
}

impl Update {
    /// The form's name, for printouts (`debugprint` of a function lists its updates).
    pub(crate) fn describe(&self) -> String {
        let form = match self.form {
            Form::Replace { .. } => "replace",
            Form::ScatterSub { .. } => "scatter-subtract in place",
            Form::RowScatterSub { .. } => "row scatter-subtract in place",
            Form::BagScatterSub { mean: false, .. } => "embedding-bag (sum) scatter-subtract in place",
            Form::BagScatterSub { mean: true, .. } => "embedding-bag (mean) scatter-subtract in place",
        };
        let detail = match self.form {
            Form::BagScatterSub { id_parts, grads, .. } => {
                let ids = if id_parts > 1 { format!(", ids in {id_parts} parts") } else { String::new() };
                let product =
                    if matches!(grads, BagGrads::Product { .. }) { ", gradient a @ wᵀ per bag" } else { "" };
                format!("{ids}{product}")
            }
            _ => String::new(),
        };
        format!("{} <- {form}{detail}", self.state.name())
    }
}

/// The node computing `v`: its op and inputs.
fn owner(graph: &Graph, v: VarId) -> Option<(&ragtime_graph::Apply, usize)> {
    let var = graph.var(v)?;
    Some((graph.node(var.owner?)?, var.index))
}

fn is_scalar_op(graph: &Graph, v: VarId, scalar: ScalarOp) -> Option<Vec<VarId>> {
    let (apply, _) = owner(graph, v)?;
    let e = apply.op.as_any().downcast_ref::<Elemwise>()?;
    (e.scalar == scalar).then(|| apply.inputs.clone())
}

/// The pieces of an in-place form, as graph variables: `(scale, form, index var, update var)`
/// where `form` says whether the index var holds flat positions (`false`) or row ids (`true`).
pub(crate) struct InPlace {
    pub(crate) scale: Option<VarId>,
    pub(crate) rows: bool,
    pub(crate) index: VarId,
    pub(crate) values: VarId,
    /// `Some(mean)` when `values` is a bag gradient: then it is the bags' gradient `g`.
    pub(crate) bag: Option<bool>,
}

/// `v` is `unreduce(gather(s, ids), g)` over axis 1 of ragged `[bags, (n), ...]` rows: `g`.
fn spread_over_bags(graph: &Graph, v: VarId, state_var: VarId, ids: VarId) -> Option<VarId> {
    let (apply, _) = owner(graph, v)?;
    let unreduce = apply.op.as_any().downcast_ref::<Unreduce>()?;
    let [x, g] = apply.inputs[..] else { return None };
    let xt = &graph.var(x)?.ty;
    let axis = unreduce.axis.single()?;
    let on_bags = axis == 1 || axis == 1 - xt.rank() as i64;
    let (gather, _) = owner(graph, x)?;
    gather.op.as_any().downcast_ref::<Gather>()?;
    let ids_ty = &graph.var(ids)?.ty;
    let bags = ids_ty.ragged_rank() == 1 && ids_ty.rank() == 2 && xt.ragged_rank() == 1;
    (on_bags && !unreduce.keepdims && bags && gather.inputs[..] == [state_var, ids]).then_some(g)
}

/// `v` is the bags' sizes as `grad` divides a bag mean's gradient by them: the row lengths of
/// `x` cast to floats, as a `[bags]` vector or a `[bags, 1, ..]` column.
fn bag_sizes(graph: &Graph, v: VarId, x: VarId) -> bool {
    let sizes = || -> Option<()> {
        let mut v = v;
        while let Some((apply, _)) = owner(graph, v).filter(|(a, _)| a.op.as_any().is::<ExpandDims>()) {
            let expand = apply.op.as_any().downcast_ref::<ExpandDims>()?;
            (expand.axis == -1).then_some(())?;
            v = apply.inputs[0];
        }
        let [lengths] = is_scalar_op(graph, v, ScalarOp::Cast(graph.var(v)?.ty.dtype()))?[..] else { return None };
        let (apply, _) = owner(graph, lengths)?;
        let op = apply.op.as_any().downcast_ref::<RowLengths>()?;
        (*op == RowLengths::new(1) && apply.inputs[..] == [x]).then_some(())
    };
    sizes().is_some()
}

/// The bags' gradient `g` when `values` is the gradient of `reduce_sum` (`unreduce(x, g)`) or
/// `reduce_mean` (`unreduce(x, g / bag sizes)`) of `x = gather(s, ids)`, with whether it is a mean.
fn bag_gradient(graph: &Graph, values: VarId, state_var: VarId, ids: VarId) -> Option<(VarId, bool)> {
    let g = spread_over_bags(graph, values, state_var, ids)?;
    let x = graph.node(graph.var(values)?.owner?)?.inputs[0];
    match is_scalar_op(graph, g, ScalarOp::Divide).as_deref() {
        Some(&[share, sizes]) if bag_sizes(graph, sizes, x) => Some((share, true)),
        _ => Some((g, false)),
    }
}

/// The parts of bag ids `ids`: the inputs of a concat along the bags' axis of ragged `[bags,
/// (n)]` integer ids, else `ids` itself.
fn id_parts(graph: &Graph, ids: VarId) -> Vec<VarId> {
    let parts = || -> Option<Vec<VarId>> {
        let (apply, _) = owner(graph, ids)?;
        let concat = apply.op.as_any().downcast_ref::<Concat>()?;
        let bag_ids = |v: &VarId| {
            graph.var(*v).is_some_and(|x| x.ty.ragged_rank() == 1 && x.ty.rank() == 2 && x.ty.dtype().is_integer())
        };
        let axis = concat.axis();
        ((axis == 1 || axis == -1) && apply.inputs.iter().all(bag_ids)).then(|| apply.inputs.clone())
    };
    parts().unwrap_or_else(|| vec![ids])
}

/// `(a, w)` when the bags' gradient `g` is `matmul(a, transpose(w))` of dense matrices `a`
/// (`[bags, k]`) and `w` (`[dim, k]`) of the state's dtype.
fn bag_product(graph: &Graph, g: VarId, dtype: DType) -> Option<(VarId, VarId)> {
    let (product, _) = owner(graph, g)?;
    product.op.as_any().downcast_ref::<MatMul>()?;
    let [a, wt] = product.inputs[..] else { return None };
    let (transpose, _) = owner(graph, wt)?;
    transpose.op.as_any().downcast_ref::<Transpose>()?;
    let [w] = transpose.inputs[..] else { return None };
    let matrix =
        |v: VarId| graph.var(v).is_some_and(|x| !x.ty.is_ragged() && x.ty.rank() == 2 && x.ty.dtype() == dtype);
    (matrix(a) && matrix(w)).then_some((a, w))
}

/// Recognizes `new = s - c * scatter_add(s, positions, u)` (either operand order of the
/// product, or no product) where `s` is the state's variable, `c` a scalar and `u` of the
/// state's dtype.
pub(crate) fn in_place(graph: &Graph, state_var: VarId, new: VarId) -> Option<InPlace> {
    let [s, subtrahend] = is_scalar_op(graph, new, ScalarOp::Subtract)?[..] else { return None };
    if s != state_var {
        return None;
    }
    let state_ty = &graph.var(state_var)?.ty;
    let scatter_of = |v: VarId| -> Option<[VarId; 2]> {
        let (apply, _) = owner(graph, v)?;
        apply.op.as_any().downcast_ref::<ScatterAdd>()?;
        let [like, positions, updates] = apply.inputs[..] else { return None };
        let same_dtype = graph.var(updates)?.ty.dtype() == state_ty.dtype();
        (like == state_var && same_dtype).then_some([positions, updates])
    };
    let (scale, [positions, values]) = match scatter_of(subtrahend) {
        Some(parts) => (None, parts),
        None => {
            let [a, b] = is_scalar_op(graph, subtrahend, ScalarOp::Multiply)?[..] else { return None };
            let scalar = |v: VarId| graph.var(v).is_some_and(|x| x.ty.rank() == 0 && x.ty.dtype() == state_ty.dtype());
            match (scatter_of(a), scatter_of(b)) {
                (Some(parts), _) if scalar(b) => (Some(b), parts),
                (_, Some(parts)) if scalar(a) => (Some(a), parts),
                _ => return None,
            }
        }
    };
    // `gather(flat_positions(s), ids)` on a dense table: whole rows, named by `ids`.
    let rows = owner(graph, positions).and_then(|(apply, _)| {
        apply.op.as_any().downcast_ref::<Gather>()?;
        let [table_positions, ids] = apply.inputs[..] else { return None };
        let (fp, _) = owner(graph, table_positions)?;
        let flat = fp.op.as_any().downcast_ref::<FlatPositions>()?;
        let dense_table = state_ty.ragged_rank() == 0 && state_ty.rank() >= 1;
        (flat.fill.is_none() && fp.inputs[..] == [state_var] && dense_table).then_some(ids)
    });
    Some(match rows {
        Some(ids) => match bag_gradient(graph, values, state_var, ids) {
            Some((g, mean)) => InPlace { scale, rows: true, index: ids, values: g, bag: Some(mean) },
            None => InPlace { scale, rows: true, index: ids, values, bag: None },
        },
        None => InPlace { scale, rows: false, index: positions, values, bag: None },
    })
}

/// An update checked against the call's outputs and the state's current value, ready to commit.
enum Pending<'a> {
    Replace(RaggedTensor),
    /// Rows (or single values, `width` 1) of the state minus `scale` times update rows.
    Scatter {
        scale: f64,
        width: usize,
        targets: Targets<'a>,
    },
}

/// The checked targets and update values of an in-place update (indices checked in range).
enum Targets<'a> {
    /// Target `targets[j]` (negative: none) minus row `j` of `values`.
    Each { targets: Cow<'a, [i64]>, values: RaggedTensor },
    /// Every id of bag `b` (over each part of the ids: `(ids, row splits)`) minus the bag's
    /// gradient row, divided by the bag's size when `mean`.
    Bags { parts: Vec<(Cow<'a, [i64]>, RowPartition)>, mean: bool, grads: CheckedBagGrads },
}

/// The bags' gradient rows, or the two matrices whose product they are (`a @ wᵀ`, `k` wide).
enum CheckedBagGrads {
    Rows(RaggedTensor),
    Product { a: RaggedTensor, w: RaggedTensor, k: usize },
}

/// The scale of an in-place form: the scalar output, as float64 (exact for both dtypes).
fn scale_of(outputs: &[RaggedTensor], scale: Option<usize>, dtype: DType) -> Result<f64> {
    let Some(at) = scale else { return Ok(1.0) };
    let c = output(outputs, at)?;
    let c = c.flat_values().cast(DType::F64)?;
    match (c.as_slice::<f64>(), dtype.is_float()) {
        (Some([v]), true) => Ok(*v),
        _ => Err(Error::shapes(UPDATE, "the scale of an in-place update must be one float")),
    }
}

fn output(outputs: &[RaggedTensor], at: usize) -> Result<&RaggedTensor> {
    outputs.get(at).ok_or_else(|| Error::graph("an update's output is missing"))
}

/// The flat indices of `index` (int32 or int64), read in place when int64.
fn indices<'a>(index: &'a RaggedTensor, what: &str) -> Result<Cow<'a, [i64]>> {
    Ok(match index.flat_slice::<i64>() {
        Some(v) => Cow::Borrowed(v),
        None => Cow::Owned(index.flat_values().to_i64_vec(UPDATE, what)?),
    })
}

/// Refuses `values` of another dtype than the state's.
fn same_dtype(state: &State, values: &RaggedTensor) -> Result<()> {
    let dtype = state.ty().dtype();
    if values.dtype() != dtype {
        return Err(Error::dtype(
            UPDATE,
            format!("state `{}` is {dtype}, its updates {}", state.name(), values.dtype()),
        ));
    }
    Ok(())
}

/// Refuses `values` that do not hold `rows` rows of `width` values.
fn expect_rows(state: &State, values: &RaggedTensor, rows: usize, width: usize, what: &str) -> Result<()> {
    let len = values.flat_values().len();
    if Some(len) != rows.checked_mul(width) {
        return Err(Error::shapes(
            UPDATE,
            format!("state `{}`: {len} {what} for {rows} rows of {width} values each", state.name()),
        ));
    }
    Ok(())
}

/// Refuses a position out of `0..targets` (negative ones are allowed unless `rows`:
/// `scatter_add` drops them, rows never are negative).
fn check_in_range(state: &State, ids: &[i64], targets: usize, rows: bool) -> Result<()> {
    let refused = |p: i64| if p < 0 { rows } else { p as u64 >= targets as u64 };
    match ids.iter().position(|&p| refused(p)) {
        Some(k) => Err(Error::out_of_range_at(
            UPDATE,
            ids[k],
            0,
            targets,
            format!("position {k} of the update of state `{}`", state.name()),
        )),
        None => Ok(()),
    }
}

/// Checks one update against `current` (the state's value) and the call's extra outputs.
fn prepare<'a>(update: &Update, current: &RaggedTensor, outputs: &'a [RaggedTensor]) -> Result<Pending<'a>> {
    let state = &update.state;
    let dtype = state.ty().dtype();
    let flat_len = current.flat_values().len();
    let nrows = current.flat_values().shape().first().copied().unwrap_or(0);
    let row_width = flat_len.checked_div(nrows).unwrap_or(0);
    let (scale, width, targets) = match update.form {
        Form::Replace { value } => {
            let value = output(outputs, value)?.clone();
            state.ty().check(&value, &format!("the new value of state `{}`", state.name()))?;
            return Ok(Pending::Replace(value));
        }
        Form::ScatterSub { scale, positions, updates }
        | Form::RowScatterSub { scale, ids: positions, rows: updates } => {
            let rows = matches!(update.form, Form::RowScatterSub { .. });
            let (targets, width) = if rows { (nrows, row_width) } else { (flat_len, 1) };
            let values = output(outputs, updates)?.clone();
            same_dtype(state, &values)?;
            let ids = indices(output(outputs, positions)?, "the positions of an update")?;
            expect_rows(state, &values, ids.len(), width, "update values")?;
            check_in_range(state, &ids, targets, rows)?;
            (scale, width, Targets::Each { targets: ids, values })
        }
        Form::BagScatterSub { scale, ids, id_parts, grads, mean } => {
            let mut parts = Vec::with_capacity(id_parts);
            for at in ids..ids + id_parts {
                let index = output(outputs, at)?;
                let [bags] = index.partitions() else {
                    return Err(Error::shapes(UPDATE, "the ids of an embedding bag must be ragged [bags, (n)]"));
                };
                if parts
                    .first()
                    .is_some_and(|(_, first): &(Cow<'_, [i64]>, RowPartition)| first.nrows() != bags.nrows())
                {
                    return Err(Error::shapes(UPDATE, "the parts of an embedding bag's ids have different bags"));
                }
                let ids = indices(index, "the ids of an embedding bag")?;
                check_in_range(state, &ids, nrows, true)?;
                parts.push((ids, bags.clone()));
            }
            let bags = parts.first().map_or(0, |(_, b)| b.nrows());
            let grads = match grads {
                BagGrads::Rows(at) => {
                    let values = output(outputs, at)?.clone();
                    same_dtype(state, &values)?;
                    expect_rows(state, &values, bags, row_width, "gradient values")?;
                    CheckedBagGrads::Rows(values)
                }
                BagGrads::Product { a, w } => {
                    let (a, w) = (output(outputs, a)?.clone(), output(outputs, w)?.clone());
                    same_dtype(state, &a)?;
                    same_dtype(state, &w)?;
                    let k = w.flat_values().shape().get(1).copied().unwrap_or(0);
                    expect_rows(state, &w, row_width, k, "weights")?;
                    expect_rows(state, &a, bags, k, "gradient factors")?;
                    CheckedBagGrads::Product { a, w, k }
                }
            };
            (scale, row_width, Targets::Bags { parts, mean, grads })
        }
    };
    Ok(Pending::Scatter { scale: scale_of(outputs, scale, dtype)?, width, targets })
}

/// `value`'s flat buffer, owned for writing: its own memory when nothing else holds it, else a
/// copy (the only allocation an in-place update can make, done before anything changes). On
/// failure the value comes back unchanged with the error.
fn writable<T: Element>(value: RaggedTensor) -> std::result::Result<Vec<T>, Box<(RaggedTensor, Error)>> {
    let partitions = value.partitions().to_vec();
    let shared = match value.into_flat_values().try_into_buffer::<T>() {
        Ok(v) => return Ok(v),
        Err(shared) => shared,
    };
    let copy = match shared.as_slice::<T>() {
        Some(data) => ExecContext::detached().try_vec::<T>(UPDATE, data.len()).map(|mut v| {
            v.extend_from_slice(data);
            v
        }),
        None => Err(Error::dtype(UPDATE, "a state changed its dtype")),
    };
    copy.map_err(|e| match RaggedTensor::new(shared, partitions) {
        Ok(back) => Box::new((back, e)),
        Err(broken) => Box::new((RaggedTensor::dense(DenseTensor::scalar(0u8)), broken)),
    })
}

/// The float element types of in-place updates.
trait UpdateFloat:
    Element
    + Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn of(v: f64) -> Self;
}

impl UpdateFloat for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
}

impl UpdateFloat for f64 {
    fn of(v: f64) -> Self {
        v
    }
}

/// One in-place update's arguments, over a state's flat buffer of rows `width` wide.
struct ScatterSub<'a, T> {
    width: usize,
    scale: T,
    how: How<'a, T>,
}

/// The update's targets and values as slices (see [`Targets`]).
enum How<'a, T> {
    /// `buf[t * width + i] -= scale * values[j * width + i]` for each target `t = targets[j]`.
    Each { targets: &'a [i64], values: &'a [T] },
    /// Each id of bag `b` in every part `(ids, row splits)` minus `scale` times the bag's
    /// gradient row (divided by the bag's size first when `mean`, as the graph computes `(g /
    /// n) * scale`).
    Bags { parts: Vec<(&'a [i64], &'a [i64])>, mean: bool, grads: BagRows<'a, T> },
}

/// The bags' gradient rows: given, or row `b` of `a` (`k` wide) times `wᵀ`, held as `wt` (`[k,
/// width]`, so each bag's row is `k` contiguous multiply-adds over the width, which vectorize).
enum BagRows<'a, T> {
    Rows(&'a [T]),
    Product { a: &'a [T], wt: Vec<T>, k: usize },
}

/// Fewest targets per thread: below this, a thread's walk over every target costs more than the
/// updates it takes off the others.
const MIN_TARGETS_PER_THREAD: usize = parallel::MIN_ITEMS_PER_THREAD;

impl<'a, T: UpdateFloat + Send + Sync> ScatterSub<'a, T> {
    /// The update of `targets` for a buffer of `T`, or `None` when a value is not of `T`.
    fn of(scale: f64, width: usize, targets: &'a Targets<'_>) -> Option<Self> {
        let slice = |v: &'a RaggedTensor| v.flat_slice::<T>();
        let how = match targets {
            Targets::Each { targets, values } => How::Each { targets, values: slice(values)? },
            Targets::Bags { parts, mean, grads } => How::Bags {
                parts: parts.iter().map(|(ids, bags)| (&ids[..], bags.row_splits())).collect(),
                mean: *mean,
                grads: match grads {
                    CheckedBagGrads::Rows(g) => BagRows::Rows(slice(g)?),
                    CheckedBagGrads::Product { a, w, k } => {
                        let (w, k) = (slice(w)?, *k);
                        let wt = (0..k).flat_map(|c| w.iter().skip(c).step_by(k.max(1)).copied()).collect();
                        BagRows::Product { a: slice(a)?, wt, k }
                    }
                },
            },
        };
        Some(ScatterSub { width, scale: T::of(scale), how })
    }

    /// Applies the update to `buf` on up to `threads` threads, each owning a contiguous range of
    /// rows (the same result as on one thread, bit for bit: see the module docs).
    fn run(&self, buf: &mut [T], threads: usize) -> Result<()> {
        let width = self.width.max(1);
        let targets = match &self.how {
            How::Each { targets, .. } => targets.len(),
            How::Bags { parts, .. } => parts.iter().map(|(ids, _)| ids.len()).sum(),
        };
        let threads = threads.min(targets / MIN_TARGETS_PER_THREAD).max(1);
        let ctx = ExecContext::detached().clone().with_threads(threads);
        parallel::fill_chunks(&ctx, buf, width, |first_row, rows| self.rows(first_row, rows))
    }

    /// The update restricted to rows `first_row..` held in `rows`.
    fn rows(&self, first_row: usize, rows: &mut [T]) {
        let width = self.width.max(1);
        let owned = first_row as i64..(first_row + rows.len() / width) as i64;
        let start_of = |t: i64| (t - owned.start) as usize * width;
        match &self.how {
            How::Each { targets, values } => {
                for (&t, src) in targets.iter().zip(values.chunks_exact(width)) {
                    if owned.contains(&t) {
                        let at = start_of(t);
                        for (e, &u) in rows[at..at + width].iter_mut().zip(src) {
                            *e = *e - self.scale * u;
                        }
                    }
                }
            }
            How::Bags { parts, mean, grads } => {
                let bags = parts.first().map_or(0, |(_, splits)| splits.len().saturating_sub(1));
                let mut g: Vec<T> = vec![T::of(0.0); width];
                let mut scaled: Vec<T> = Vec::with_capacity(width);
                for b in 0..bags {
                    if let Some(ahead) = b.checked_add(PREFETCH_BAGS_AHEAD).filter(|&a| a < bags) {
                        prefetch_bag(ahead, parts, &owned, width, rows);
                    }
                    // One walk over the bag's ids: its scaled gradient row is computed at the
                    // first id this range owns (most bags have none in a small range).
                    let mut ready = false;
                    for (ids, splits) in parts {
                        for &t in &ids[splits[b] as usize..splits[b + 1] as usize] {
                            if !owned.contains(&t) {
                                continue;
                            }
                            if !ready {
                                self.bag_row(b, parts, *mean, grads, &mut g, &mut scaled);
                                ready = true;
                            }
                            let at = start_of(t);
                            for (e, &u) in rows[at..at + width].iter_mut().zip(&scaled) {
                                *e = *e - u;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Bag `b`'s gradient row times the scale (divided by the bag's size first when `mean`) into
    /// `scaled`, with `g` as scratch for a row computed as a product.
    fn bag_row(
        &self,
        b: usize,
        parts: &[(&[i64], &[i64])],
        mean: bool,
        grads: &BagRows<'_, T>,
        g: &mut [T],
        scaled: &mut Vec<T>,
    ) {
        let width = self.width.max(1);
        let row = match grads {
            BagRows::Rows(values) => &values[b * width..(b + 1) * width],
            BagRows::Product { a, wt, k } => {
                // g[i] = sum over c of a[b, c] * w[i, c], adding in the order of c.
                g.iter_mut().for_each(|x| *x = T::of(0.0));
                let a = a.get(b * k..(b + 1) * k).unwrap_or(&[]);
                for (&x, column) in a.iter().zip(wt.chunks_exact(width)) {
                    for (gi, &y) in g.iter_mut().zip(column) {
                        *gi = *gi + x * y;
                    }
                }
                &g[..]
            }
        };
        let n = T::of(parts.iter().map(|(_, splits)| (splits[b + 1] - splits[b]) as usize).sum::<usize>() as f64);
        // `scale * (g / n)` once per bag: the same operations on the same operands as for each
        // member in turn.
        scaled.clear();
        scaled.extend(row.iter().map(|&v| self.scale * if mean { v / n } else { v }));
    }
}

/// How many bags ahead of the one it updates the embedding-bag update asks for the table rows
/// it will read and write (`prefetcht0`, see `ragtime_jit::prefetch_slice`): the rows are
/// scattered over a table much larger than the caches, and the loop over a bag's rows is short,
/// so without it the update waits on one or two misses at a time.
const PREFETCH_BAGS_AHEAD: usize = 4;

/// Asks for the rows of bag `b` that `owned` holds (`rows` holds rows `owned`, `width` each).
fn prefetch_bag<T>(b: usize, parts: &[(&[i64], &[i64])], owned: &std::ops::Range<i64>, width: usize, rows: &[T]) {
    for (ids, splits) in parts {
        for &t in &ids[splits[b] as usize..splits[b + 1] as usize] {
            if owned.contains(&t) {
                let at = (t - owned.start) as usize * width;
                if let Some(row) = rows.get(at..at + width) {
                    ragtime_jit::prefetch_slice(row);
                }
            }
        }
    }
}

/// The layout of a value taken out of its state: `buf` goes back in it.
struct Layout {
    shape: Vec<usize>,
    partitions: Vec<ragtime_core::RowPartition>,
}

impl Layout {
    fn of(value: &RaggedTensor) -> Layout {
        Layout { shape: value.flat_values().shape().to_vec(), partitions: value.partitions().to_vec() }
    }

    fn rebuilt<T: Element>(self, buf: Vec<T>) -> Result<RaggedTensor> {
        RaggedTensor::new(DenseTensor::from_vec(self.shape, buf)?, self.partitions)
    }
}

/// Applies `updates` to their (locked) states from `outputs`, the call's extra outputs, with
/// in-place updates on up to `threads` threads: all or none.
pub(crate) fn apply(
    updates: &[Update],
    outputs: &[RaggedTensor],
    locked: &mut Locked<'_>,
    threads: usize,
) -> Result<()> {
    let mut pending = Vec::with_capacity(updates.len());
    for u in updates {
        pending.push(prepare(u, locked.value(&u.state)?, outputs)?);
    }
    // The threads start (or fail to) before anything changes; the pool is shared afterwards.
    if threads > 1 && pending.iter().any(|p| matches!(p, Pending::Scatter { .. })) {
        parallel::pool(threads)?;
    }
    // Take each in-place target out of its state so that its buffer has one owner, then make
    // it writable; on failure every taken value goes back as it was.
    let mut taken: Vec<(usize, Layout, Buffer)> = Vec::new();
    for (k, (u, p)) in updates.iter().zip(&pending).enumerate() {
        if !matches!(p, Pending::Scatter { .. }) {
            continue;
        }
        let slot = locked.value(&u.state)?;
        let value = std::mem::replace(slot, RaggedTensor::dense(DenseTensor::scalar(0u8)));
        let layout = Layout::of(&value);
        let buffer = match value.dtype() {
            DType::F32 => writable::<f32>(value).map(Buffer::F32),
            DType::F64 => writable::<f64>(value).map(Buffer::F64),
            other => Err(Box::new((
                value,
                Error::dtype(UPDATE, format!("an in-place update needs a float state, not {other}")),
            ))),
        };
        match buffer {
            Ok(b) => taken.push((k, layout, b)),
            Err(failed) => {
                let (value, e) = *failed;
                *locked.value(&u.state)? = value;
                for (k, layout, b) in taken {
                    *locked.value(&updates[k].state)? = match b {
                        Buffer::F32(b) => layout.rebuilt(b)?,
                        Buffer::F64(b) => layout.rebuilt(b)?,
                    };
                }
                return Err(e);
            }
        }
    }
    // Commit: nothing below fails except on a broken internal invariant.
    let mut taken = taken.into_iter();
    for (u, p) in updates.iter().zip(pending) {
        let slot = locked.value(&u.state)?;
        match p {
            Pending::Replace(value) => ragtime_core::pool::recycle(std::mem::replace(slot, value)),
            Pending::Scatter { scale, width, targets } => {
                let Some((_, layout, buffer)) = taken.next() else {
                    return Err(Error::graph("update: an in-place buffer went missing"));
                };
                let mixed = || Error::graph("update: the values' dtype was checked against the state's");
                *slot = match buffer {
                    Buffer::F32(mut b) => {
                        ScatterSub::<f32>::of(scale, width, &targets).ok_or_else(mixed)?.run(&mut b, threads)?;
                        layout.rebuilt(b)?
                    }
                    Buffer::F64(mut b) => {
                        ScatterSub::<f64>::of(scale, width, &targets).ok_or_else(mixed)?.run(&mut b, threads)?;
                        layout.rebuilt(b)?
                    }
                };
            }
        }
    }
    Ok(())
}

enum Buffer {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Refuses an update whose new value can never have the state's type.
pub(crate) fn check_type(state: &State, new: &TensorType) -> Result<()> {
    let ty = state.ty();
    if ty.dtype() == new.dtype() && ty.ragged_rank() == new.ragged_rank() && ty.rank() == new.rank() {
        return Ok(());
    }
    Err(Error::dtype(UPDATE, format!("state `{}` has type {ty}; its new value would be {new}", state.name())))
}

/// What a function with state computes: the graph's inputs (the caller's, then the bound
/// states'), its outputs (the caller's, then what the updates need), the bound states and the
/// updates.
pub(crate) struct Plan {
    pub(crate) inputs: Vec<VarId>,
    pub(crate) outputs: Vec<VarId>,
    pub(crate) states: Vec<State>,
    pub(crate) updates: Vec<Update>,
}

/// The free variables `roots` depend on.
fn free_vars(graph: &Graph, roots: &[VarId]) -> std::collections::HashSet<VarId> {
    let mut seen = std::collections::HashSet::new();
    let mut free = std::collections::HashSet::new();
    let mut stack = roots.to_vec();
    while let Some(v) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        match owner(graph, v) {
            Some((apply, _)) => stack.extend(apply.inputs.iter().copied()),
            None => {
                free.insert(v);
            }
        }
    }
    free
}

/// Plans a function with states: which states it binds and how each update is applied.
pub(crate) fn plan(
    graph: &Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    bound: &[(VarId, State)],
    new_values: &[(State, VarId)],
) -> Result<Plan> {
    if let Some((_, s)) = bound.iter().find(|(v, _)| inputs.contains(v)) {
        return Err(Error::graph(format!(
            "state `{}` is listed among the inputs: a compiled function binds its states itself",
            s.name()
        )));
    }
    let mut all_outputs = outputs.to_vec();
    let mut updates = Vec::with_capacity(new_values.len());
    for (k, (state, new)) in new_values.iter().enumerate() {
        if new_values[..k].iter().any(|(s, _)| s.same(state)) {
            return Err(Error::graph(format!("state `{}` has two updates", state.name())));
        }
        let new_ty = &graph.var(*new).ok_or_else(|| Error::graph("an update's value is not in the graph"))?.ty;
        check_type(state, new_ty)?;
        let state_var = bound.iter().find(|(_, s)| s.same(state)).map(|&(v, _)| v);
        let mut extra = |v: VarId| {
            all_outputs.push(v);
            all_outputs.len() - 1 - outputs.len()
        };
        let form = match state_var.and_then(|sv| in_place(graph, sv, *new)) {
            Some(p) => {
                let scale = p.scale.map(&mut extra);
                match (p.rows, p.bag) {
                    (true, Some(mean)) => {
                        let parts = id_parts(graph, p.index);
                        let ids = parts.iter().map(|&v| extra(v)).min().unwrap_or(0);
                        let id_parts = parts.len();
                        let grads = match bag_product(graph, p.values, state.ty().dtype()) {
                            Some((a, w)) => BagGrads::Product { a: extra(a), w: extra(w) },
                            None => BagGrads::Rows(extra(p.values)),
                        };
                        Form::BagScatterSub { scale, ids, id_parts, grads, mean }
                    }
                    (true, None) => Form::RowScatterSub { scale, ids: extra(p.index), rows: extra(p.values) },
                    (false, _) => Form::ScatterSub { scale, positions: extra(p.index), updates: extra(p.values) },
                }
            }
            None => Form::Replace { value: extra(*new) },
        };
        updates.push(Update { state: state.clone(), form });
    }
    let reached = free_vars(graph, &all_outputs);
    let mut all_inputs = inputs.to_vec();
    let mut states = Vec::new();
    for (v, s) in bound {
        if reached.contains(v) {
            all_inputs.push(*v);
            states.push(s.clone());
        }
    }
    Ok(Plan { inputs: all_inputs, outputs: all_outputs, states, updates })
}
