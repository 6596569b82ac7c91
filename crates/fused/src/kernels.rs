//! The fused op types and their chunked reference evaluation: [`Composite`] maps over every
//! element of one iteration space; [`RowKernel`] makes several passes over each innermost row of a
//! ragged tensor (row reductions, then maps that read their results), whose items are scalars or
//! `[k]` vectors of uniform inner dimensions known when the graph is built (reduced column by
//! column), and whose per-row results may be folded over the next outer ragged axis
//! ([`OuterFold`]).

use std::any::Any;
use std::cell::RefCell;

use ragtime_core::{DenseTensor, Error, ExecContext, RaggedTensor, Result};
use ragtime_graph::{Cost, FunctionGraph, Op, OpProperties};
use ragtime_runtime::InnerGraph;

use super::scalar_graph::{Chunk, ScalarGraph, ScalarRef};
use crate::operands::{Layout, OperandKind, RowOutput};
use crate::trailing::TrailingView;
use ragtime_ops::reduce::{fold_rows, fold_uniform_rows, Reduce, ReduceKind};

/// About this many elements are evaluated at a time: small enough that a chunk's intermediates
/// stay in the L1/L2 cache, large enough to amortize the per-node dispatch.
const CHUNK: usize = 4096;

/// The row of each element of rows `r0..r1` (absolute row numbers).
fn element_rows(splits: &[i64], r0: usize, r1: usize, e0: usize, e1: usize) -> Vec<usize> {
    let mut rows = Vec::with_capacity(e1 - e0);
    let mut r = r0;
    for e in e0..e1 {
        while r + 1 < splits.len() && (splits[r + 1] as usize) <= e {
            r += 1;
        }
        rows.push(r);
    }
    debug_assert!(rows.last().is_none_or(|&x| x < r1));
    rows
}

/// The first row containing flat element `e` (or the row count if past the end).
fn row_of(splits: &[i64], e: usize) -> usize {
    splits.partition_point(|&s| (s as usize) <= e).saturating_sub(1)
}

fn max_cost(graph: &ScalarGraph) -> Cost {
    graph.nodes().iter().map(|n| n.op.cost()).max().unwrap_or(Cost::Free)
}

/// Refuses an inner graph that does not have one input per operand of the fused op `what`.
pub(super) fn check_inner(what: &str, inner: &InnerGraph, operands: usize) -> Result<()> {
    let inputs = inner.graph().inputs().len();
    if inputs != operands {
        return Err(Error::graph(format!(
            "{what}: the inner graph has {inputs} inputs but the op has {operands} operands"
        )));
    }
    Ok(())
}

/// A fused group of elementwise ops over one iteration space: one pass over the elements, no
/// intermediate arrays, broadcasts read in place.
///
/// The fields are private: [`Composite::new`] checks that the scalar graph has one input per
/// operand, so the fast paths (and the JIT) can index operands by graph input.
#[derive(Debug, Clone, PartialEq)]
pub struct Composite {
    graph: ScalarGraph,
    operands: Vec<OperandKind>,
    inner: InnerGraph,
}

impl Composite {
    /// The fused op computing `graph` (input `i` is the op's input `i`, lined up with the
    /// iteration space as `operands[i]` says), standing for the ops of `inner`.
    pub fn new(graph: ScalarGraph, operands: Vec<OperandKind>, inner: InnerGraph) -> Result<Self> {
        if graph.inputs().len() != operands.len() {
            return Err(Error::graph(format!(
                "composite: the scalar graph has {} inputs but the op has {} operands",
                graph.inputs().len(),
                operands.len()
            )));
        }
        check_inner("composite", &inner, operands.len())?;
        Ok(Composite { graph, operands, inner })
    }

    /// The scalar computation; input `i` is the op's input `i`.
    pub fn graph(&self) -> &ScalarGraph {
        &self.graph
    }

    /// How each input lines up with the iteration space.
    pub fn operands(&self) -> &[OperandKind] {
        &self.operands
    }

    /// The ops it replaced (types and general semantics).
    pub fn inner(&self) -> &InnerGraph {
        &self.inner
    }

    fn fast(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Option<Vec<RaggedTensor>>> {
        let Some(layout) = Layout::new(&self.operands, inputs, false)? else { return Ok(None) };
        let reference = layout.reference;
        let total = reference.flat_values().len();
        let splits = layout.row_splits();
        let per_row = self.operands.contains(&OperandKind::PerRow);
        if per_row && layout.item_width != 1 {
            // The chunks repeat per-row values element by element; the original ops broadcast
            // items.
            return Ok(None);
        }
        let mut parts: Vec<Vec<DenseTensor>> = vec![Vec::new(); self.graph.outputs().len()];
        let mut e0 = 0;
        loop {
            let e1 = (e0 + CHUNK).min(total);
            let rows = match (per_row, splits) {
                (true, Some(s)) => element_rows(s, row_of(s, e0), s.len() - 1, e0, e1),
                _ => Vec::new(),
            };
            let fetch = |i: usize| layout.column(ctx, &self.operands, i, e0, e1, &rows);
            let mut chunk = Chunk::new(&self.graph, e1 - e0, &fetch);
            self.graph.eval_chunk(ctx, self.graph.outputs(), &mut chunk, &|e| layout.locate(e0 + e))?;
            for (part, &out) in parts.iter_mut().zip(self.graph.outputs()) {
                part.push(chunk.value(out)?);
            }
            if e1 >= total {
                break;
            }
            e0 = e1;
        }
        let flat_shape = reference.flat_values().shape().to_vec();
        parts
            .into_iter()
            .map(|p| {
                let flat = DenseTensor::concat_rows_in(ctx, &p)?.reshape(flat_shape.clone())?;
                RaggedTensor::new(flat, reference.partitions().to_vec())
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
}

impl Op for Composite {
    fn name(&self) -> String {
        let text = self.graph.expression();
        if text.len() <= 80 {
            format!("Composite{{{text}}}")
        } else {
            format!("Composite{{{} ops, {} outputs}}", self.graph.nodes().len(), self.graph.outputs().len())
        }
    }

    fn infer(&self, inputs: &[ragtime_core::TensorType]) -> Result<Vec<ragtime_core::TensorType>> {
        self.inner.infer(inputs)
    }

    fn keeps_uniform_rows(&self) -> bool {
        // The original ops' types were recorded through `output_types`; the fast paths keep the
        // partitions of the iteration space, as the original ops do.
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        match self.fast(ctx, inputs)? {
            Some(outputs) => Ok(outputs),
            None => self.inner.run(ctx, inputs),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn inner_graph(&self) -> Option<&FunctionGraph> {
        Some(self.inner.graph())
    }

    fn properties(&self) -> OpProperties {
        OpProperties {
            elementwise: true,
            keeps_partitions_of: self.operands.iter().position(|k| *k == OperandKind::Full),
            can_fail: self.graph.can_fault(),
            cost: max_cost(&self.graph),
        }
    }
}

/// One row reduction of a [`RowKernel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RowReduction {
    /// What it computes.
    pub kind: ReduceKind,
    /// The value reduced (an element-level value of the kernel's graph; it may read earlier
    /// reductions).
    pub arg: ScalarRef,
}

/// A reduction over the next outer ragged axis of a [`RowKernel`]'s per-row results
/// (`reduce_max(reduce_sum(x, axis=2), axis=1)` over `[users, *, *]`: the maximum over each user's
/// sessions of the per-session sums): output `output` of the kernel, a reduction's per-row results
/// (`[n, *]` under the outer partitions, `[n, *, 1]` with `keepdims`), is replaced by their fold
/// over their innermost ragged axis. The fold is the `Reduce` op's own, run on the per-row results the kernel wrote (one
/// item per innermost row, never the elements), so it gives the unfused graph's bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OuterFold {
    /// The output folded (a [`RowOutput::Reduction`]), which the fold replaces.
    pub output: usize,
    /// What the fold computes.
    pub kind: ReduceKind,
    /// Keep a size-1 dimension where the folded axis was.
    pub keepdims: bool,
}

/// Row reductions over one partition with the elementwise maps before, between and after them
/// (softmax, mean-centering, `x / reduce_sum(x)`), run as passes over each row while it is in
/// cache. Graph inputs: the op's inputs first, then one per reduction (its per-row result).
///
/// The fields are private: [`RowKernel::new`] checks how the parts fit together, so the fast
/// paths (and the JIT) can index operands, reductions and outputs without further checks.
#[derive(Debug, Clone, PartialEq)]
pub struct RowKernel {
    graph: ScalarGraph,
    operands: Vec<OperandKind>,
    reductions: Vec<RowReduction>,
    outputs: Vec<RowOutput>,
    /// Values per item: 1 for scalar items, `k` for the `[k]` items of `[.., *, k]` values (the
    /// product of the uniform inner dims), each column folded on its own.
    item_width: usize,
    /// Outputs folded over the next outer ragged axis after the rows are done.
    folds: Vec<OuterFold>,
    /// `Some(k)`: the rows are the trailing uniform axis of `k` values (`[n, *, k]` or dense
    /// `[n, k]` reduced over its last axis), not the innermost ragged one (see [`TrailingView`]).
    trailing: Option<usize>,
    inner: InnerGraph,
}

impl RowKernel {
    /// The row kernel computing `graph` over `operands`, with `reductions` in pass order,
    /// returning `outputs`, standing for the ops of `inner`. Checks that the graph has one
    /// input per operand and then one per reduction; that reduction `k` reads only the
    /// reductions before it; that the graph's outputs are the element outputs, in order; and that
    /// every reduction output names a reduction.
    pub fn new(
        graph: ScalarGraph,
        operands: Vec<OperandKind>,
        reductions: Vec<RowReduction>,
        outputs: Vec<RowOutput>,
        inner: InnerGraph,
    ) -> Result<Self> {
        let fail = |what: String| Err(Error::graph(format!("row kernel: {what}")));
        let n_ops = operands.len();
        if graph.inputs().len() != n_ops + reductions.len() {
            return fail(format!(
                "the scalar graph has {} inputs, expected {n_ops} operands + {} reductions",
                graph.inputs().len(),
                reductions.len()
            ));
        }
        // The highest reduction each value reads (through any path), if any.
        let mut reads: Vec<Option<usize>> = Vec::with_capacity(graph.nodes().len());
        let read_of = |reads: &[Option<usize>], r: ScalarRef| match r {
            ScalarRef::Input(i) => i.checked_sub(n_ops),
            ScalarRef::Node(j) => reads.get(j).copied().flatten(),
            ScalarRef::Const(_) => None,
        };
        for node in graph.nodes() {
            let highest = node.args.iter().filter_map(|&a| read_of(&reads, a)).max();
            reads.push(highest);
        }
        for (k, red) in reductions.iter().enumerate() {
            graph.check_ref(red.arg)?;
            if let Some(later) = read_of(&reads, red.arg).filter(|&r| r >= k) {
                return fail(format!("reduction r{k} reads reduction r{later}, which is not computed before it"));
            }
        }
        for out in &outputs {
            if let RowOutput::Reduction { index: k, .. } = *out {
                if k >= reductions.len() {
                    return fail(format!("output of reduction r{k}, but there are {} reductions", reductions.len()));
                }
            }
        }
        if graph.outputs() != RowOutput::elements(&outputs).as_slice() {
            return fail("the scalar graph's outputs are not the kernel's element outputs".to_string());
        }
        check_inner("row kernel", &inner, operands.len())?;
        Ok(RowKernel { graph, operands, reductions, outputs, item_width: 1, folds: Vec::new(), trailing: None, inner })
    }

    /// The same kernel over items of `width` values (`[.., *, k]` spaces, `width` the product of
    /// the uniform inner dims; at least 1): every full operand, per-row operand, element output
    /// and reduction result holds `width` values per item, and reductions fold each column on its
    /// own, in item order.
    pub fn over_items(mut self, width: usize) -> Result<Self> {
        if width == 0 {
            return Err(Error::graph("row kernel: items of no values"));
        }
        self.item_width = width;
        Ok(self)
    }

    /// The same kernel over rows of the trailing uniform axis of `length` values (at least 1) of
    /// its full operands, which hold scalars: per-row operands and reduction results hold one
    /// value per such row (`[n, *, 1]` with `keepdims`). No item width or outer folds go with it.
    pub fn over_trailing_axis(mut self, length: usize) -> Result<Self> {
        if length == 0 || self.item_width != 1 || !self.folds.is_empty() {
            return Err(Error::graph("row kernel: trailing rows need scalars of one row, unfolded, of some values"));
        }
        self.trailing = Some(length);
        Ok(self)
    }

    /// The length of the trailing axis the rows run along, if they do (see
    /// [`RowKernel::over_trailing_axis`]).
    pub fn trailing_length(&self) -> Option<usize> {
        self.trailing
    }

    /// The same kernel with `folds`: each names a different output, a reduction's per-row
    /// results, which their fold over the next outer ragged axis replaces.
    pub fn with_outer_folds(mut self, folds: Vec<OuterFold>) -> Result<Self> {
        if self.trailing.is_some() && !folds.is_empty() {
            return Err(Error::graph("row kernel: trailing rows have no outer folds"));
        }
        for (j, fold) in folds.iter().enumerate() {
            if !matches!(self.outputs.get(fold.output), Some(RowOutput::Reduction { .. })) {
                return Err(Error::graph(format!(
                    "row kernel: output {} is not a per-row reduction, so it has no outer fold",
                    fold.output
                )));
            }
            if folds[..j].iter().any(|f| f.output == fold.output) {
                return Err(Error::graph(format!("row kernel: output {} is folded twice", fold.output)));
            }
        }
        self.folds = folds;
        Ok(self)
    }

    /// `rows` run on the operands as the kernel's rows see them: as they are, or, for rows of a
    /// trailing axis, seen as a ragged rank 1 tensor of those rows (`TrailingView`), the results
    /// given back their shapes. `None` (from `rows`, or operands that do not have the shapes the
    /// kernel's kinds need) leaves the call to the inner graph. The fast path and the JIT call it.
    pub fn on_rows(
        &self,
        inputs: &[RaggedTensor],
        rows: impl FnOnce(&[RaggedTensor]) -> Result<Option<Vec<RaggedTensor>>>,
    ) -> Result<Option<Vec<RaggedTensor>>> {
        let Some(length) = self.trailing else { return rows(inputs) };
        let Some(view) = TrailingView::new(&self.operands, inputs, length)? else { return Ok(None) };
        match rows(&view.inputs)? {
            Some(outputs) => view.restore(&self.outputs, outputs).map(Some),
            None => Ok(None),
        }
    }

    /// The outputs folded over the next outer ragged axis.
    pub fn outer_folds(&self) -> &[OuterFold] {
        &self.folds
    }

    /// Replaces each folded output of `outputs` (the kernel's results, per-row values in place of
    /// the folds) by its fold over its innermost ragged axis, with the `Reduce` op the fusion
    /// took in (the same kernels, so the unfused graph's bits). The fast paths and the JIT call it.
    pub fn fold_outer(&self, ctx: &ExecContext, mut outputs: Vec<RaggedTensor>) -> Result<Vec<RaggedTensor>> {
        for fold in &self.folds {
            let per_row =
                outputs.get(fold.output).ok_or_else(|| Error::graph("row kernel: a folded output is missing"))?;
            let axis = per_row.ragged_rank();
            if axis == 0 {
                return Err(Error::graph("row kernel: an outer fold over per-row results without a ragged axis"));
            }
            let reduce = Reduce::new(fold.kind, Some(axis as i64), fold.keepdims);
            let folded = ragtime_graph::Op::perform(&reduce, ctx, std::slice::from_ref(per_row))?;
            outputs[fold.output] =
                folded.into_iter().next().ok_or_else(|| Error::graph("an outer fold gave nothing"))?;
        }
        Ok(outputs)
    }

    /// Values per item (see [`RowKernel::over_items`]).
    pub fn item_width(&self) -> usize {
        self.item_width
    }

    /// The scalar computation.
    pub fn graph(&self) -> &ScalarGraph {
        &self.graph
    }

    /// How each op input lines up with the rows.
    pub fn operands(&self) -> &[OperandKind] {
        &self.operands
    }

    /// The reductions, in pass order; reduction `k` reads only reductions before it.
    pub fn reductions(&self) -> &[RowReduction] {
        &self.reductions
    }

    /// What the op returns.
    pub fn outputs(&self) -> &[RowOutput] {
        &self.outputs
    }

    /// The ops it replaced (types and general semantics).
    pub fn inner(&self) -> &InnerGraph {
        &self.inner
    }

    fn input_name(&self, i: usize) -> String {
        match i.checked_sub(self.operands.len()) {
            Some(k) => format!("r{k}"),
            None => format!("i{i}"),
        }
    }

    /// `RowReduce{...}` for a lone reduction, `RowKernel{...}` otherwise.
    fn title(&self) -> String {
        let names = |i: usize| self.input_name(i);
        let args: Vec<ScalarRef> = self.reductions.iter().map(|r| r.arg).collect();
        let arg_texts = self.graph.expressions(&args, &names);
        if let ([red], [RowOutput::Reduction { index: 0, keepdims }], []) =
            (self.reductions.as_slice(), self.outputs.as_slice(), self.folds.as_slice())
        {
            let width = match (self.item_width, self.trailing) {
                (_, Some(k)) => format!(", axis=-1 of {k}"),
                (1, None) => String::new(),
                (w, None) => format!(", width={w}"),
            };
            return format!("RowReduce{{{}({}), keepdims={keepdims}{width}}}", red.kind.name(), arg_texts[0]);
        }
        let mut parts: Vec<String> = self
            .reductions
            .iter()
            .zip(&arg_texts)
            .enumerate()
            .map(|(k, (r, t))| format!("r{k} = {}({t})", r.kind.name()))
            .collect();
        let outs = RowOutput::elements(&self.outputs);
        for t in self.graph.expressions(&outs, &names) {
            parts.push(format!("out = {t}"));
        }
        for fold in &self.folds {
            if let Some(RowOutput::Reduction { index, .. }) = self.outputs.get(fold.output) {
                parts.push(format!("out = {}(r{index}) over outer rows", fold.kind.name()));
            }
        }
        if self.item_width > 1 {
            parts.push(format!("width={}", self.item_width));
        }
        if let Some(k) = self.trailing {
            parts.push(format!("axis=-1 of {k}"));
        }
        let text = parts.join("; ");
        if text.len() <= 120 {
            format!("RowKernel{{{text}}}")
        } else {
            let folds = match (self.folds.len(), self.trailing) {
                (_, Some(k)) => format!(", axis=-1 of {k}"),
                (0, None) => String::new(),
                (n, None) => format!(", {n} folded over outer rows"),
            };
            format!("RowKernel{{{} reductions, {} outputs{folds}}}", self.reductions.len(), self.outputs.len())
        }
    }

    fn fast(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Option<Vec<RaggedTensor>>> {
        let Some(layout) = Layout::new(&self.operands, inputs, true)? else { return Ok(None) };
        let reference = layout.reference;
        if self.item_width != 1 || reference.flat_values().shape().len() != 1 {
            // Items of several values (or an inner dim of 1): the chunks fold scalars, so the
            // inner graph runs (the JIT lowers these kernels).
            return Ok(None);
        }
        let splits = layout.row_splits().ok_or_else(|| Error::graph("a row kernel over a dense space"))?;
        let nrows = splits.len() - 1;
        let n_ops = self.operands.len();
        let mut element_parts: Vec<Vec<DenseTensor>> = vec![Vec::new(); self.outputs.len()];
        let mut reduction_parts: Vec<Vec<DenseTensor>> = vec![Vec::new(); self.reductions.len()];
        // The element outputs every chunk computes after its reductions.
        let wanted = RowOutput::elements(&self.outputs);
        let mut r0 = 0;
        loop {
            // Whole rows, about CHUNK values (one long row makes a chunk of its own).
            let e0 = splits[r0] as usize;
            let mut r1 = r0;
            while r1 < nrows && (r1 == r0 || (splits[r1 + 1] as usize) - e0 <= CHUNK) {
                r1 += 1;
            }
            let e1 = splits[r1] as usize;
            let local: Vec<i64> = splits[r0..=r1].iter().map(|&s| s - e0 as i64).collect();
            let rows = element_rows(splits, r0, r1, e0, e1);
            let local_rows: Vec<usize> = rows.iter().map(|r| r - r0).collect();
            let reduced: RefCell<Vec<Option<DenseTensor>>> = RefCell::new(vec![None; self.reductions.len()]);
            let fetch = |i: usize| -> Result<DenseTensor> {
                if i < n_ops {
                    return layout.column(ctx, &self.operands, i, e0, e1, &rows);
                }
                let k = i - n_ops;
                let column = reduced.borrow().get(k).cloned().flatten();
                column
                    .ok_or_else(|| Error::graph(format!("row reduction r{k} read before it was computed")))?
                    .take_rows_in(ctx, &local_rows)
            };
            let mut chunk = Chunk::new(&self.graph, e1 - e0, &fetch);
            let locate = |e: usize| layout.locate(e0 + e);
            for (k, red) in self.reductions.iter().enumerate() {
                self.graph.eval_chunk(ctx, &[red.arg], &mut chunk, &locate)?;
                let values = chunk.value(red.arg)?;
                let folded = match self.trailing {
                    // Rows of a uniform axis fold from its identity (`-inf` for a float maximum).
                    Some(_) => fold_uniform_rows(ctx, red.kind, &values, &local, false)?,
                    None => fold_rows(ctx, red.kind, &values, &local, false)?,
                };
                reduction_parts[k].push(folded.clone());
                reduced.borrow_mut()[k] = Some(folded);
            }

            self.graph.eval_chunk(ctx, &wanted, &mut chunk, &locate)?;
            for (part, out) in element_parts.iter_mut().zip(&self.outputs) {
                if let RowOutput::Elements(r) = out {
                    part.push(chunk.value(*r)?);
                }
            }
            if r1 >= nrows {
                break;
            }
            r0 = r1;
        }
        let mut results = Vec::with_capacity(self.outputs.len());
        for (out, parts) in self.outputs.iter().zip(element_parts) {
            results.push(match *out {
                RowOutput::Elements(_) => {
                    RaggedTensor::new(DenseTensor::concat_rows_in(ctx, &parts)?, reference.partitions().to_vec())?
                }
                RowOutput::Reduction { index: k, keepdims } => {
                    let parts = reduction_parts.get(k).ok_or_else(|| Error::graph(format!("no row reduction r{k}")))?;
                    layout.per_row_output(DenseTensor::concat_rows_in(ctx, parts)?.reshape(vec![nrows])?, keepdims)?
                }
            });
        }
        Ok(Some(results))
    }
}

impl Op for RowKernel {
    fn name(&self) -> String {
        self.title()
    }

    fn infer(&self, inputs: &[ragtime_core::TensorType]) -> Result<Vec<ragtime_core::TensorType>> {
        self.inner.infer(inputs)
    }

    fn keeps_uniform_rows(&self) -> bool {
        // The original ops' types were recorded through `output_types`; the fast paths keep the
        // partitions of the iteration space, as the original ops do.
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        match self.on_rows(inputs, |rows| self.fast(ctx, rows))? {
            Some(outputs) => self.fold_outer(ctx, outputs),
            None => self.inner.run(ctx, inputs),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn inner_graph(&self) -> Option<&FunctionGraph> {
        Some(self.inner.graph())
    }

    fn properties(&self) -> OpProperties {
        OpProperties {
            elementwise: false,
            keeps_partitions_of: None,
            can_fail: self.graph.can_fault(),
            cost: max_cost(&self.graph),
        }
    }
}
