//! The ops only gradients need: spreading a reduction's result back over its groups
//! (`Unreduce`), the products of the other members of a group (`ProdOthers`), the flat positions of a tensor (`FlatPositions`), the scatter-add that
//! transposes every data-movement op (`ScatterAdd`), and the 2-d `Transpose` of `matmul`'s VJP.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Dim, Element, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Cost, Graph, Op, OpProperties, VarId};

use crate::grad::nodes::{apply1, single};
use crate::reduce::axes::Axes;
use crate::reduce::defs::{Reduce, ReduceKind};
use crate::reduce::plan::plan_reduction;
use crate::reduce::plan::reduced_type;
use crate::util::{fixed_inputs, one};
use ragtime_runtime::parallel;

/// A float tensor's flat values as float64 (exact for both float dtypes).
fn values_f64(op: &str, index: usize, value: &RaggedTensor) -> Result<Vec<f64>> {
    if !value.dtype().is_float() {
        return Err(Error::dtype(op, format!("input {index} must be a float tensor, got {}", value.dtype())));
    }
    let cast = value.flat_values().cast(DType::F64)?;
    cast.as_slice::<f64>()
        .map(<[f64]>::to_vec)
        .ok_or_else(|| Error::dtype(op, format!("input {index}: expected float64 values after the cast")))
}

/// `like` with `values` (float64, in `like`'s flat order) as flat values of dtype `dtype`.
fn like_with(like: &RaggedTensor, values: Vec<f64>, dtype: DType) -> Result<RaggedTensor> {
    let flat = DenseTensor::from_vec(like.flat_values().shape().to_vec(), values)?.cast(dtype)?;
    like.with_flat_values(flat)
}

fn expect_float(op: &str, index: usize, ty: &TensorType) -> Result<()> {
    if ty.dtype().is_float() {
        return Ok(());
    }
    Err(Error::dtype(op, format!("input {index} must be a float tensor, got {}", ty.dtype())))
}

/// `unreduce(x, r)`: the transpose of `reduce_sum(x, axis, keepdims)`. `r` has the reduction's
/// result type; the output has `x`'s type and row partitions, each element holding the element
/// of `r` that it folds into (TensorFlow's grouping, from [`plan_reduction`]). The backward of
/// every reduction spreads its result gradient with it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unreduce {
    /// The reduced axes.
    pub axis: Axes,
    /// Whether the reduction kept its reduced dims.
    pub keepdims: bool,
}

const UNREDUCE: &str = "unreduce";

impl Op for Unreduce {
    fn name(&self) -> String {
        format!("Unreduce{{axis={}, keepdims={}}}", self.axis, self.keepdims)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(UNREDUCE, inputs, 2..=2)?;
        let (x, r) = (&inputs[0], &inputs[1]);
        expect_float(UNREDUCE, 1, r)?;
        let want = reduced_type(UNREDUCE, x, &self.axis, self.keepdims)?;
        if want.rank() != r.rank() || want.ragged_rank() != r.ragged_rank() {
            return Err(Error::shapes(UNREDUCE, format!("input 1 must have the reduction's type {want}, got {r}")));
        }
        Ok(vec![x.clone().with_dtype(r.dtype())])
    }

    fn keeps_uniform_rows(&self) -> bool {
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x, r] = fixed_inputs::<2>(UNREDUCE, inputs)?;
        let plan = plan_reduction(ctx, UNREDUCE, x, &self.axis, self.keepdims)?;
        let groups = plan.flattened();
        let reduced = values_f64(UNREDUCE, 1, r)?;
        if reduced.len() != groups.len() {
            return Err(Error::shapes(
                UNREDUCE,
                format!("input 1 has {} values, the reduction of input 0 has {}", reduced.len(), groups.len()),
            ));
        }
        let mut out = ctx.try_vec::<f64>(UNREDUCE, x.flat_values().len())?;
        out.resize(x.flat_values().len(), 0.0);
        for (o, &v) in reduced.iter().enumerate() {
            for &m in groups.group(o) {
                out[m] = v;
            }
        }
        one(like_with(x, out, r.dtype())?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { keeps_partitions_of: Some(0), ..OpProperties::default() }
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        _outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        unreduce_vjp(self, graph, inputs, output_grads)
    }
}

/// `prod_others(x)` for a reduction over `axis`: each element of `x` replaced by the product of
/// the other elements of its group (prefix times suffix products, no division), so `reduce_prod`'s
/// gradient is exact where an element is zero, as TensorFlow's is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProdOthers {
    /// The reduced axes.
    pub axis: Axes,
    /// Whether the reduction kept its reduced dims (it does not change the groups).
    pub keepdims: bool,
}

const PROD_OTHERS: &str = "prod_others";

impl Op for ProdOthers {
    fn name(&self) -> String {
        format!("ProdOthers{{axis={}, keepdims={}}}", self.axis, self.keepdims)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(PROD_OTHERS, inputs, 1..=1)?;
        expect_float(PROD_OTHERS, 0, &inputs[0])?;
        reduced_type(PROD_OTHERS, &inputs[0], &self.axis, self.keepdims)?;
        Ok(vec![inputs[0].clone()])
    }

    fn keeps_uniform_rows(&self) -> bool {
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(PROD_OTHERS, inputs)?;
        let plan = plan_reduction(ctx, PROD_OTHERS, x, &self.axis, self.keepdims)?;
        let groups = plan.flattened();
        let values = values_f64(PROD_OTHERS, 0, x)?;
        let mut out = ctx.try_vec::<f64>(PROD_OTHERS, values.len())?;
        out.resize(values.len(), 0.0);
        for o in 0..groups.len() {
            let members = groups.group(o);
            // out[m] = (product before m) * (product after m), in group order.
            let mut before = 1.0;
            for &m in members {
                out[m] = before;
                before *= values[m];
            }
            let mut after = 1.0;
            for &m in members.iter().rev() {
                out[m] *= after;
                after *= values[m];
            }
        }
        one(like_with(x, out, x.dtype())?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { keeps_partitions_of: Some(0), ..OpProperties::default() }
    }
}

/// `flat_positions(x)`: an int64 tensor of `x`'s shape and row partitions whose flat values
/// are `0, 1, 2, ...` (each element's position among `x`'s flat values), or all `fill` when
/// it is set. Running a data-movement op on positions instead of values tells where each
/// output element came from, which is what its VJP scatters back along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlatPositions {
    /// Every element holds this instead of its position (`-1`: "from no input element").
    pub fill: Option<i64>,
}

const FLAT_POSITIONS: &str = "flat_positions";

impl Op for FlatPositions {
    fn name(&self) -> String {
        match self.fill {
            Some(v) => format!("FlatPositions{{fill={v}}}"),
            None => "FlatPositions".to_string(),
        }
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(FLAT_POSITIONS, inputs, 1..=1)?;
        Ok(vec![inputs[0].clone().with_dtype(DType::I64)])
    }

    fn keeps_uniform_rows(&self) -> bool {
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(FLAT_POSITIONS, inputs)?;
        let n = x.flat_values().len();
        let mut out = ctx.try_vec::<i64>(FLAT_POSITIONS, n)?;
        match self.fill {
            Some(v) => out.resize(n, v),
            None => out.extend(0..n as i64),
        }
        let flat = DenseTensor::from_vec(x.flat_values().shape().to_vec(), out)?;
        one(x.with_flat_values(flat)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { keeps_partitions_of: Some(0), cost: Cost::Free, ..OpProperties::default() }
    }

    fn vjp(&self, _: &mut Graph, _: &[VarId], _: &[VarId], _: &[Option<VarId>]) -> Result<Vec<Option<VarId>>> {
        Ok(vec![None])
    }
}

/// `scatter_add(like, positions, updates)`: a tensor of `like`'s shape and row partitions and
/// `updates`' float dtype, zero except that each update is added at its position among the flat
/// values (`positions` and `updates` have as many flat values; a negative position is dropped).
/// The transpose of a data-movement op, hence the VJP of gather, `embedding_lookup`, slicing,
/// masking, tiling, concatenation and the other structure ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ScatterAdd;

const SCATTER_ADD: &str = "scatter_add";

impl Op for ScatterAdd {
    fn name(&self) -> String {
        "ScatterAdd".to_string()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(SCATTER_ADD, inputs, 3..=3)?;
        if inputs[1].dtype() != DType::I64 {
            return Err(Error::dtype(
                SCATTER_ADD,
                format!("input 1 (positions) must be int64, got {}", inputs[1].dtype()),
            ));
        }
        expect_float(SCATTER_ADD, 2, &inputs[2])?;
        Ok(vec![inputs[0].clone().with_dtype(inputs[2].dtype())])
    }

    fn keeps_uniform_rows(&self) -> bool {
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [like, positions, updates] = fixed_inputs::<3>(SCATTER_ADD, inputs)?;
        let positions = positions
            .flat_slice::<i64>()
            .ok_or_else(|| Error::dtype(SCATTER_ADD, "input 1 (positions) must be int64"))?;
        let updates = values_f64(SCATTER_ADD, 2, updates)?;
        if positions.len() != updates.len() {
            return Err(Error::shapes(
                SCATTER_ADD,
                format!("{} positions for {} updates: they must have one structure", positions.len(), updates.len()),
            ));
        }
        let n = like.flat_values().len();
        let mut out = ctx.try_vec::<f64>(SCATTER_ADD, n)?;
        out.resize(n, 0.0);
        for (k, (&p, &u)) in positions.iter().zip(&updates).enumerate() {
            if p < 0 {
                continue;
            }
            let slot = out.get_mut(p as usize).ok_or_else(|| {
                Error::index(
                    SCATTER_ADD,
                    format!("position {p} of update {k} is outside the {n} flat values of input 0"),
                )
            })?;
            *slot += u;
        }
        one(like_with(like, out, inputs[2].dtype())?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { keeps_partitions_of: Some(0), can_fail: true, ..OpProperties::default() }
    }
}

/// The transpose of a dense matrix (`[a, b]` → `[b, a]`), for `matmul`'s VJP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Transpose;

const TRANSPOSE: &str = "transpose";

impl Op for Transpose {
    fn name(&self) -> String {
        "Transpose".to_string()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(TRANSPOSE, inputs, 1..=1)?;
        crate::util::expect_dense_rank(TRANSPOSE, 0, &inputs[0], 2)?;
        let dims: Vec<Dim> = inputs[0].dims().iter().rev().cloned().collect();
        Ok(vec![TensorType::new(inputs[0].dtype(), 0, dims)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(TRANSPOSE, inputs)?;
        let values = crate::util::dense_input(TRANSPOSE, 0, "x", x)?;
        let &[a, b] = values.shape() else {
            return Err(Error::shapes(TRANSPOSE, format!("input 0 must be a matrix, got shape {:?}", values.shape())));
        };
        // Row j of the result is column j of the input: one gather of single elements.
        let order: Vec<usize> = (0..b).flat_map(|j| (0..a).map(move |i| i * b + j)).collect();
        let flat = values.take_rows_flat_in(ctx, &order)?.reshape(vec![b, a])?;
        one(RaggedTensor::dense(flat))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn vjp(
        &self,
        graph: &mut Graph,
        _inputs: &[VarId],
        _outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        match output_grads {
            [Some(g)] => Ok(vec![Some(graph.apply(std::sync::Arc::new(Transpose), &[*g])?[0])]),
            _ => Ok(vec![None]),
        }
    }
}

/// `contract_rows(x, g)`: `xᵀ g` with `x` and `g` seen as matrices of their last dims, `[rows,
/// D]` and `[rows, K]` (every other dim, ragged or not, flattened into rows; both have the same
/// rows): the `[D, K]` gradient of `matmul`'s dense weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ContractRows;

const CONTRACT_ROWS: &str = "contract_rows";

impl Op for ContractRows {
    fn name(&self) -> String {
        "ContractRows".to_string()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(CONTRACT_ROWS, inputs, 2..=2)?;
        let (x, g) = (&inputs[0], &inputs[1]);
        expect_float(CONTRACT_ROWS, 0, x)?;
        if g.dtype() != x.dtype() {
            return Err(Error::dtype(CONTRACT_ROWS, format!("input 1 is {} but input 0 is {}", g.dtype(), x.dtype())));
        }
        // The last dim must be uniform: an inner dim of a ragged tensor, any dim of a dense one.
        let uniform_last = |t: &TensorType| t.rank() > 0 && t.rank() > t.ragged_rank() + usize::from(t.is_ragged());
        let last = |t: &TensorType| t.dims().last().cloned().filter(|_| uniform_last(t));
        match (last(x), last(g)) {
            (Some(d), Some(k)) => Ok(vec![TensorType::new(x.dtype(), 0, vec![d, k])?]),
            _ => Err(Error::shapes(CONTRACT_ROWS, format!("both inputs must end in a uniform dim, got {x} and {g}"))),
        }
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x, g] = fixed_inputs::<2>(CONTRACT_ROWS, inputs)?;
        for (index, v) in [x, g].into_iter().enumerate() {
            if !v.dtype().is_float() {
                return Err(Error::dtype(
                    CONTRACT_ROWS,
                    format!("input {index} must be a float tensor, got {}", v.dtype()),
                ));
            }
        }
        let width = |v: &RaggedTensor| v.flat_values().shape().last().copied().unwrap_or(1);
        let (d, k) = (width(x), width(g));
        let (nx, ng) = (x.flat_values().len(), g.flat_values().len());
        let rows = nx.checked_div(d).unwrap_or(0);
        if ng.checked_div(k).unwrap_or(0) != rows || nx != rows * d || ng != rows * k {
            return Err(Error::shapes(
                CONTRACT_ROWS,
                format!("input 0 has {nx} values in rows of {d}, input 1 {ng} in rows of {k}: not the same rows"),
            ));
        }
        let len = ctx.checked_len(CONTRACT_ROWS, &[d, k])?;
        let mut out = ctx.try_vec::<f64>(CONTRACT_ROWS, len)?;
        out.resize(len, 0.0);
        // The operands are read where they are (a float64 copy of `x` would be a fresh buffer
        // twice its size each call); the products are summed in float64 either way.
        match (x.flat_slice::<f32>(), g.flat_slice::<f32>(), x.flat_slice::<f64>(), g.flat_slice::<f64>()) {
            (Some(xs), Some(gs), _, _) => contract_blocks(ctx, xs, gs, d, k, &mut out)?,
            (_, _, Some(xs), Some(gs)) => contract_blocks(ctx, xs, gs, d, k, &mut out)?,
            _ => {
                let (xs, gs) = (values_f64(CONTRACT_ROWS, 0, x)?, values_f64(CONTRACT_ROWS, 1, g)?);
                contract_blocks(ctx, &xs, &gs, d, k, &mut out)?
            }
        }
        let flat = DenseTensor::from_vec(vec![d, k], out)?.cast(x.dtype())?;
        one(RaggedTensor::dense(flat))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Rows per block of [`contract_blocks`]: the blocks, not the threads, fix the order of the sums.
const CONTRACT_BLOCK_ROWS: usize = 4096;

/// `out[i, j] = sum over rows r of x[r, i] * g[r, j]` in float64: each block of
/// [`CONTRACT_BLOCK_ROWS`] rows summed on its own (blocks on the call's threads), then the blocks'
/// sums added in order, so the result is the same on any number of threads.
fn contract_blocks<T: Element>(
    ctx: &ExecContext,
    xs: &[T],
    gs: &[T],
    d: usize,
    k: usize,
    out: &mut [f64],
) -> Result<()> {
    let (d, k) = (d.max(1), k.max(1));
    let rows = (xs.len() / d).min(gs.len() / k);
    let blocks = rows.div_ceil(CONTRACT_BLOCK_ROWS);
    if blocks <= 1 {
        contract_rows_into(xs, gs, d, k, out);
        return Ok(());
    }
    let len = out.len();
    let mut partial = ctx.try_vec::<f64>(CONTRACT_ROWS, blocks * len)?;
    partial.resize(blocks * len, 0.0);
    let work = |b: usize| (b * CONTRACT_BLOCK_ROWS).min(rows) * len;
    parallel::fill_balanced(ctx, &mut partial, len, work, |first, sums| {
        for (b, sum) in (first..).zip(sums.chunks_exact_mut(len)) {
            let r = b * CONTRACT_BLOCK_ROWS..((b + 1) * CONTRACT_BLOCK_ROWS).min(rows);
            contract_rows_into(&xs[r.start * d..r.end * d], &gs[r.start * k..r.end * k], d, k, sum);
        }
    })?;
    for sum in partial.chunks_exact(len) {
        for (o, &p) in out.iter_mut().zip(sum) {
            *o += p;
        }
    }
    Ok(())
}

/// `out[i, j] += x[r, i] * g[r, j]` over the rows `r` of `xs` (`d` wide) and `gs` (`k` wide), in
/// float64, rows in order: for the narrow `g` of a gradient (`k` of 1, 2 or 4, W8's logits),
/// [`contract_columns`], else [`contract_rows_plain`] (the same additions in the same order either
/// way, so the same bits).
fn contract_rows_into<T: Element>(xs: &[T], gs: &[T], d: usize, k: usize, out: &mut [f64]) {
    match k {
        1 => contract_columns::<T, 1>(xs, gs, d, out),
        2 => contract_columns::<T, 2>(xs, gs, d, out),
        4 => contract_columns::<T, 4>(xs, gs, d, out),
        _ => contract_rows_plain(xs, gs, d, k, out, 0..d),
    }
}

/// Columns of `x` whose `k` sums each [`contract_columns`] keeps in registers over all the rows.
const CONTRACT_COLUMNS: usize = 4;

/// [`contract_rows_into`] for `K`-wide rows of `g`: `x`'s columns taken [`CONTRACT_COLUMNS`] at a
/// time, their `CONTRACT_COLUMNS * K` sums held in registers over all the rows (the plain loop
/// loads and stores every sum once per row: W8's `[32, 4]` gradient of `W` waited on 128 of them
/// a row). Each sum still gets its products added row after row, so the bits are the plain loop's.
fn contract_columns<T: Element, const K: usize>(xs: &[T], gs: &[T], d: usize, out: &mut [f64]) {
    let d = d.max(1);
    let mut i = 0;
    while i + CONTRACT_COLUMNS <= d {
        let mut acc = [[0f64; K]; CONTRACT_COLUMNS];
        for (c, a) in acc.iter_mut().enumerate() {
            a.copy_from_slice(&out[(i + c) * K..(i + c + 1) * K]);
        }
        for (xr, gr) in xs.chunks_exact(d).zip(gs.chunks_exact(K)) {
            let g: [f64; K] = std::array::from_fn(|j| gr[j].to_f64());
            for (a, &xv) in acc.iter_mut().zip(&xr[i..i + CONTRACT_COLUMNS]) {
                let xv = xv.to_f64();
                for (o, &gv) in a.iter_mut().zip(&g) {
                    *o += xv * gv;
                }
            }
        }
        for (c, a) in acc.iter().enumerate() {
            out[(i + c) * K..(i + c + 1) * K].copy_from_slice(a);
        }
        i += CONTRACT_COLUMNS;
    }
    if i < d {
        contract_rows_plain(xs, gs, d, K, out, i..d);
    }
}

/// `out[i, j] += x[r, i] * g[r, j]` for the columns `i` in `columns`, over the rows `r` in order.
fn contract_rows_plain<T: Element>(
    xs: &[T],
    gs: &[T],
    d: usize,
    k: usize,
    out: &mut [f64],
    columns: std::ops::Range<usize>,
) {
    for (xr, gr) in xs.chunks_exact(d.max(1)).zip(gs.chunks_exact(k.max(1))) {
        for (i, &xv) in columns.clone().zip(&xr[columns.clone()]) {
            let xv = xv.to_f64();
            for (o, &gv) in out[i * k..(i + 1) * k].iter_mut().zip(gr) {
                *o += xv * gv.to_f64();
            }
        }
    }
}

/// The VJP of [`Unreduce`] (linear in its second input): the reduction's sum.
pub fn unreduce_vjp(
    op: &Unreduce,
    graph: &mut Graph,
    inputs: &[VarId],
    output_grads: &[Option<VarId>],
) -> Result<Vec<Option<VarId>>> {
    let Some(g) = single(output_grads) else { return Ok(vec![None; inputs.len()]) };
    let sum = apply1(graph, Reduce::with_axes(ReduceKind::Sum, op.axis.clone(), op.keepdims), &[g])?;
    Ok(vec![None, Some(sum)])
}

#[cfg(test)]
mod tests {
    use ragtime_core::limits::Limits;
    use ragtime_core::ExecContext;
    use ragtime_core::{ragged, ErrorKind};

    use super::*;

    fn f64s(t: &RaggedTensor) -> Vec<f64> {
        t.flat_values().as_slice::<f64>().unwrap().to_vec()
    }

    fn run(op: &dyn Op, inputs: &[RaggedTensor]) -> Result<RaggedTensor> {
        let ctx = &ExecContext::new(Limits::untrusted());
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let inferred = op.infer(&types)?;
        let out = op.perform(ctx, inputs)?.remove(0);
        assert!(inferred[0].accepts(&TensorType::of(&out)), "infer {} perform {}", inferred[0], TensorType::of(&out));
        Ok(out)
    }

    fn x() -> RaggedTensor {
        ragged![[1.0f64, 2.0f64], [], [3.0f64, 4.0f64, 5.0f64]].unwrap()
    }

    /// Many rows: blocks summed on the call's threads give the same bits on one, two and three
    /// threads, within float64 rounding of a plain loop over the rows.
    /// The column-blocked sums of narrow `g`s are the plain loop's bits, for every width of `x`
    /// around the column block (remainder columns included) and each `k` (blocked or not), f32
    /// and f64, starting from zeros or from sums already there.
    #[test]
    fn contracting_columns_in_registers_gives_the_plain_loop_bits() {
        let value = |n: usize, salt: usize| -> Vec<f64> {
            (0..n).map(|i| (((i * 7919 + salt * 104729) % 2003) as f64 / 97.0 - 10.0) * 1.000_000_1).collect()
        };
        for d in [1, 3, 4, 5, 8, 9, 32] {
            for k in [1, 2, 3, 4, 5] {
                let rows = 301;
                let (x64, g64, start) = (value(rows * d, d), value(rows * k, k + 11), value(d * k, 3));
                let (x32, g32): (Vec<f32>, Vec<f32>) =
                    (x64.iter().map(|&v| v as f32).collect(), g64.iter().map(|&v| v as f32).collect());
                for from in [vec![0.0; d * k], start.clone()] {
                    let (mut plain, mut got) = (from.clone(), from.clone());
                    contract_rows_plain(&x64, &g64, d, k, &mut plain, 0..d);
                    contract_rows_into(&x64, &g64, d, k, &mut got);
                    assert_eq!(bits(&got), bits(&plain), "f64, d {d}, k {k}");
                    let (mut plain, mut got) = (from.clone(), from);
                    contract_rows_plain(&x32, &g32, d, k, &mut plain, 0..d);
                    contract_rows_into(&x32, &g32, d, k, &mut got);
                    assert_eq!(bits(&got), bits(&plain), "f32, d {d}, k {k}");
                }
                // The plain loop is `out[i, j] += x[r, i] * g[r, j]` row by row.
                let mut want = vec![0.0; d * k];
                for r in 0..rows {
                    for i in 0..d {
                        for j in 0..k {
                            want[i * k + j] += x64[r * d + i] * g64[r * k + j];
                        }
                    }
                }
                let mut got = vec![0.0; d * k];
                contract_rows_into(&x64, &g64, d, k, &mut got);
                assert_eq!(bits(&got), bits(&want), "f64 against the straightforward loop, d {d}, k {k}");
            }
        }
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn contract_rows_in_blocks_is_the_same_on_any_thread_count() {
        let (rows, d, k) = (5 * CONTRACT_BLOCK_ROWS + 17, 8, 3);
        let xs: Vec<f32> = (0..rows * d).map(|v| ((v * 37) % 101) as f32 / 50.0 - 1.0).collect();
        let gs: Vec<f32> = (0..rows * k).map(|v| ((v * 11) % 23) as f32 / 7.0 - 1.5).collect();
        let x = RaggedTensor::dense(DenseTensor::from_vec(vec![rows, d], xs.clone()).unwrap());
        let g = RaggedTensor::dense(DenseTensor::from_vec(vec![rows, k], gs.clone()).unwrap());
        let on = |threads: usize| {
            let ctx = ExecContext::new(Limits::untrusted()).with_threads(threads);
            ContractRows.perform(&ctx, &[x.clone(), g.clone()]).unwrap().remove(0).to_vec::<f32>().unwrap()
        };
        let one = on(1);
        assert_eq!(one, on(2));
        assert_eq!(one, on(3));
        for i in 0..d {
            for j in 0..k {
                let want: f64 = (0..rows).map(|r| f64::from(xs[r * d + i]) * f64::from(gs[r * k + j])).sum();
                assert!((f64::from(one[i * k + j]) - want).abs() <= 1e-6 * want.abs().max(1.0), "[{i}, {j}]");
            }
        }
    }

    #[test]
    fn unreduce_spreads_each_result_over_its_group_and_keeps_the_partitions() {
        let sums = RaggedTensor::dense(DenseTensor::vector(vec![10.0f64, 20.0, 30.0]));
        let out = run(&Unreduce { axis: Axes::from(1), keepdims: false }, &[x(), sums]).unwrap();
        assert_eq!(f64s(&out), [10.0, 10.0, 30.0, 30.0, 30.0]);
        assert_eq!(out.partitions()[0].row_splits(), x().partitions()[0].row_splits());
        let columns = RaggedTensor::dense(DenseTensor::vector(vec![1.0f64, 2.0, 3.0]));
        let out = run(&Unreduce { axis: Axes::from(0), keepdims: false }, &[x(), columns]).unwrap();
        assert_eq!(f64s(&out), [1.0, 2.0, 1.0, 2.0, 3.0]);
        let wrong = RaggedTensor::dense(DenseTensor::vector(vec![1.0f64, 2.0]));
        let e = run(&Unreduce { axis: Axes::from(1), keepdims: false }, &[x(), wrong]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn scatter_add_adds_at_positions_drops_negatives_and_refuses_bad_positions() {
        let positions = ragged![[0i64, 0], [-1, 4]].unwrap();
        let updates = ragged![[1.0f64, 2.0f64], [5.0f64, 7.0f64]].unwrap();
        let out = run(&ScatterAdd, &[x(), positions, updates.clone()]).unwrap();
        assert_eq!(f64s(&out), [3.0, 0.0, 0.0, 0.0, 7.0]);
        assert_eq!(out.partitions()[0].row_splits(), x().partitions()[0].row_splits());
        let outside = ragged![[0i64, 5], [1, 2]].unwrap();
        assert_eq!(run(&ScatterAdd, &[x(), outside, updates.clone()]).unwrap_err().kind(), ErrorKind::InvalidIndex);
        let short = ragged![[0i64], [1, 2]].unwrap();
        assert_eq!(run(&ScatterAdd, &[x(), short, updates]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn flat_positions_number_the_flat_values() {
        assert_eq!(run(&FlatPositions { fill: None }, &[x()]).unwrap().flat_slice::<i64>().unwrap(), [0, 1, 2, 3, 4]);
        assert_eq!(run(&FlatPositions { fill: Some(-1) }, &[x()]).unwrap().flat_slice::<i64>().unwrap(), [-1; 5]);
    }

    #[test]
    fn prod_others_is_exact_at_zeros() {
        let x = ragged![[2.0f64, 0.0f64, 3.0f64], [0.0f64, 0.0f64], [4.0f64]].unwrap();
        let out = run(&ProdOthers { axis: Axes::from(1), keepdims: false }, &[x]).unwrap();
        assert_eq!(f64s(&out), [0.0, 6.0, 0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn transpose_and_contract_rows() {
        let m = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 3], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap());
        let t = run(&Transpose, std::slice::from_ref(&m)).unwrap();
        assert_eq!(t.flat_values().shape(), [3, 2]);
        assert_eq!(f64s(&t), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        // [[1, 2, 3], [4, 5, 6]]ᵀ · [[1], [1]] = [[5], [7], [9]]
        let g = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 1], vec![1.0f64, 1.0]).unwrap());
        assert_eq!(f64s(&run(&ContractRows, &[m, g]).unwrap()), [5.0, 7.0, 9.0]);
        // The last dim of a ragged rank 1 tensor without inner dims is ragged: refused.
        assert_eq!(run(&ContractRows, &[x(), x()]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    }
}
