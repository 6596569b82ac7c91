//! Memory you can predict: what one call of a [`Function`](crate::Function) will allocate for
//! given input sizes, before the call: an estimate and, where every op's output size follows from
//! its inputs' sizes, an upper bound. Sizes flow through the graph by the ops' output-size rules:
//!
//! - elementwise ops (`OpProperties::elementwise`): the broadcast of their inputs' shapes (exact);
//! - ops keeping an input's partitions (`OpProperties::keeps_partitions_of`): that input's rows and
//!   values, the output type's inner dims (exact);
//! - reductions over all axes, an inner axis, or the innermost ragged axis: one value per
//!   remaining row (exact);
//! - an output whose type fixes every dim: that shape (exact);
//! - an embedding bag of hashed features (`HashedGatherReduce`, W7's one node): one table row per
//!   row of the tokens (exact: it allocates nothing else but per-thread scratch);
//! - anything else (gathers, n-grams, string assembly, structure ops whose size is in the data): an
//!   estimate that keeps the largest input's rows, and no bound.
//!
//! The estimate walks the optimized graph (what runs), adding each node's new buffers (outputs that
//! reuse an input's partitions add only their values); the upper bound walks the unoptimized graph
//! (fusion only removes intermediates) as if nothing were freed, plus each node's scratch bound: the
//! row ids and row lengths its inputs' partitions may cache (8 bytes each, once per partition),
//! operands broadcast to the output's size through an index vector, index vectors of
//! `INDEX_BYTES_PER_ELEMENT` per element for every other op, [`SCRATCH_PER_THREAD`] per thread, and
//! [`CALL_OVERHEAD`] once.

use std::collections::{HashMap, HashSet};

use ragtime_core::limits::INDEX_BYTES_PER_ELEMENT;
use ragtime_core::{DType, Dim, Error, RaggedTensor, Result, TensorType};
use ragtime_fused::HashedGatherReduce;
use ragtime_graph::{FunctionGraph, Op, VarId};
use ragtime_ops::reduce::{Axes, Reduce, Statistic};

/// Scratch an op may take per worker thread (chunk bookkeeping, per-thread partial results).
pub const SCRATCH_PER_THREAD: usize = 64 << 10;

/// Bytes one call allocates whatever its graph (the interpreter's value slots, the call's context).
pub const CALL_OVERHEAD: usize = 1 << 20;

/// The size of one value: the rows of each partition, the flat values' shape and the bytes of a
/// string column. Build it from a value ([`ValueSize::of`]) or from counts ([`ValueSize::dense`],
/// [`ValueSize::ragged`]) when the data is not at hand yet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValueSize {
    /// The number of rows of each partition, outermost first (empty for a dense value).
    pub partition_rows: Vec<usize>,
    /// The flat values' shape: `[values of the last partition, inner dims...]`.
    pub flat_shape: Vec<usize>,
    /// The bytes of a string column's strings (0 for other dtypes).
    pub string_bytes: usize,
}

impl ValueSize {
    /// The size of `value`.
    pub fn of(value: &RaggedTensor) -> ValueSize {
        ValueSize {
            partition_rows: value.partitions().iter().map(|p| p.nrows()).collect(),
            flat_shape: value.flat_values().shape().to_vec(),
            string_bytes: value.flat_strings().map_or(0, |s| s.byte_len()),
        }
    }

    /// A dense value of `shape`.
    pub fn dense(shape: &[usize]) -> ValueSize {
        ValueSize { flat_shape: shape.to_vec(), ..ValueSize::default() }
    }

    /// A ragged value with `partition_rows` rows per partition (outermost first) over flat values
    /// of `flat_shape`.
    pub fn ragged(partition_rows: &[usize], flat_shape: &[usize]) -> ValueSize {
        ValueSize { partition_rows: partition_rows.to_vec(), flat_shape: flat_shape.to_vec(), string_bytes: 0 }
    }

    /// The same value with `bytes` bytes of strings.
    pub fn with_string_bytes(mut self, bytes: usize) -> ValueSize {
        self.string_bytes = bytes;
        self
    }

    /// The flat elements.
    pub fn elements(&self) -> usize {
        self.flat_shape.iter().copied().fold(1, usize::saturating_mul)
    }

    /// The rows at each level: the partitions' rows, then the flat rows.
    fn levels(&self) -> Vec<usize> {
        let mut levels = self.partition_rows.clone();
        levels.push(self.flat_shape.first().copied().unwrap_or(1));
        levels
    }

    /// The bytes of the flat values of `dtype` (strings: 8 per offset plus their bytes).
    fn value_bytes(&self, dtype: DType) -> usize {
        let n = self.elements();
        match dtype {
            DType::String => n.saturating_add(1).saturating_mul(8).saturating_add(self.string_bytes),
            _ => n.saturating_mul(dtype.size_of()),
        }
    }

    /// The bytes of the row splits (8 per row plus one, per partition).
    fn partition_bytes(&self) -> usize {
        self.partition_rows.iter().map(|&r| r.saturating_add(1).saturating_mul(8)).fold(0, usize::saturating_add)
    }

    /// The bytes of every buffer of a value of `dtype` of this size.
    pub fn bytes(&self, dtype: DType) -> usize {
        self.value_bytes(dtype).saturating_add(self.partition_bytes())
    }

    /// The bytes its partitions may cache when read (row ids per value, row lengths per row).
    fn cache_bytes(&self) -> usize {
        let levels = self.levels();
        levels
            .iter()
            .skip(1)
            .chain(&levels[..levels.len() - 1])
            .fold(0usize, |s, &n| s.saturating_add(n.saturating_mul(8)))
    }
}

/// What a call is predicted to allocate ([`Function::estimate_memory`](crate::Function::estimate_memory)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// The expected peak bytes allocated during the call: the buffers of the optimized graph's
    /// outputs and intermediates.
    pub estimate: usize,
    /// The most bytes the call can allocate at once, when every op's output size follows from its
    /// inputs' sizes; `None` when one depends on the data (see `unbounded`).
    pub upper_bound: Option<usize>,
    /// The bytes of the function's outputs (as the estimate sizes them).
    pub outputs: usize,
    /// The nodes whose output size depends on the data, which leave the bound open.
    pub unbounded: Vec<String>,
}

/// How an op's output size follows from its inputs'.
enum Rule {
    /// Elementwise: the broadcast of the inputs.
    Broadcast,
    /// The partitions and values of input `i`, inner dims from the type.
    SameRows(usize),
    /// A reduction of input 0 over axis `axis` (or every axis: `None`).
    Reduction(Option<usize>),
    /// An embedding bag: one table row per row of input `rows`, the rows of input `table`.
    Bag { rows: usize, table: usize },
    /// Only the type is known: the largest input's rows.
    TypeOnly,
}

fn rule_of(op: &dyn Op, inputs: &[&TensorType]) -> Rule {
    let props = op.properties();
    if props.elementwise {
        return Rule::Broadcast;
    }
    if let Some(i) = props.keeps_partitions_of.filter(|&i| i < inputs.len()) {
        return Rule::SameRows(i);
    }
    let any = op.as_any();
    if any.is::<HashedGatherReduce>() && inputs.len() >= 2 {
        return Rule::Bag { rows: 0, table: 1 };
    }
    let axes = match (any.downcast_ref::<Reduce>(), any.downcast_ref::<Statistic>()) {
        (Some(r), _) => Some(&r.axis),
        (_, Some(s)) => Some(&s.axis),
        _ => None,
    };
    let (Some(axes), Some(x)) = (axes, inputs.first()) else { return Rule::TypeOnly };
    match axes {
        Axes::All => Rule::Reduction(None),
        Axes::List(list) => {
            let rank = x.rank() as i64;
            match list.as_slice() {
                [a] => {
                    let a = if *a < 0 { a + rank } else { *a };
                    // The innermost ragged axis or an inner axis: one value per remaining row.
                    // Reducing an outer axis gives the longest row's size: data.
                    match usize::try_from(a) {
                        Ok(a) if a >= 1 && a >= x.ragged_rank() && a < x.rank() => Rule::Reduction(Some(a)),
                        _ => Rule::TypeOnly,
                    }
                }
                _ => Rule::TypeOnly,
            }
        }
    }
}

/// The output of type `ty` whose levels (rows at dims `0..=ragged_rank`) are `levels`, its inner
/// dims taken from the type where known, else from `inner` aligned from the right (1 past it);
/// the flag says whether every inner dim was known.
fn shaped(ty: &TensorType, levels: &[usize], inner: &[usize]) -> (ValueSize, bool) {
    let rr = ty.ragged_rank();
    let partition_rows = levels[..rr.min(levels.len().saturating_sub(1))].to_vec();
    let flat_rows = levels.get(rr).or(levels.last()).copied().unwrap_or(1);
    let want = ty.inner_dims();
    let mut exact = true;
    let mut shape = Vec::with_capacity(want.len() + 1);
    if ty.rank() > 0 {
        shape.push(flat_rows);
    }
    for (k, d) in want.iter().enumerate() {
        shape.push(match d {
            Dim::Known(n) | Dim::UniformRows(n) => *n,
            _ => {
                let from_right = want.len() - k;
                match inner.len().checked_sub(from_right) {
                    Some(j) => inner[j],
                    None => {
                        exact = false;
                        1
                    }
                }
            }
        });
    }
    (ValueSize { partition_rows, flat_shape: shape, string_bytes: 0 }, exact)
}

/// The sizes of one node's outputs, whether they are bounded, and the bytes they add (outputs
/// reusing an input's partitions add only their values).
fn node_outputs(op: &dyn Op, inputs: &[(&TensorType, &ValueSize)], outputs: &[&TensorType]) -> NodeSizes {
    let types: Vec<&TensorType> = inputs.iter().map(|(t, _)| *t).collect();
    let rule = rule_of(op, &types);
    let lead = |rr: usize| {
        inputs
            .iter()
            .filter(|(t, _)| t.ragged_rank() >= rr)
            .max_by_key(|(_, s)| s.elements())
            .or_else(|| inputs.iter().max_by_key(|(_, s)| s.elements()))
            .map(|(_, s)| (*s).clone())
            .unwrap_or_default()
    };
    let mut node =
        NodeSizes { sizes: Vec::with_capacity(outputs.len()), shares: Vec::new(), bounded: true, added: 0, scratch: 0 };
    for ty in outputs {
        let rr = ty.ragged_rank();
        let (size, exact, shares) = match rule {
            Rule::Broadcast => {
                let same: Vec<&ValueSize> =
                    inputs.iter().filter(|(t, _)| t.ragged_rank() == rr).map(|(_, s)| *s).collect();
                let src = if same.is_empty() { inputs.iter().map(|(_, s)| *s).collect() } else { same };
                // Right-aligned maximum of the flat shapes: the broadcast shape.
                let rank = src.iter().map(|s| s.flat_shape.len()).max().unwrap_or(0);
                let mut shape = vec![1usize; rank];
                for s in &src {
                    for (k, &d) in s.flat_shape.iter().enumerate() {
                        let at = rank - s.flat_shape.len() + k;
                        shape[at] = shape[at].max(d);
                    }
                }
                let rows = src.iter().max_by_key(|s| s.partition_rows.len()).map(|s| s.partition_rows.clone());
                let strings = src.iter().map(|s| s.string_bytes).max().unwrap_or(0);
                let size =
                    ValueSize { partition_rows: rows.unwrap_or_default(), flat_shape: shape, string_bytes: strings };
                (size, ty.dtype() != DType::String, rr > 0)
            }
            Rule::SameRows(i) => {
                let src = inputs[i].1;
                let (mut size, exact) = shaped(ty, &src.levels(), src.flat_shape.get(1..).unwrap_or(&[]));
                size.string_bytes = src.string_bytes;
                let same_rank = rr == inputs[i].0.ragged_rank();
                (size, exact && ty.dtype() != DType::String, same_rank && rr > 0)
            }
            Rule::Reduction(axis) => {
                let x = inputs[0].1;
                let levels = x.levels();
                let (size, exact) = match axis {
                    None => shaped(ty, &[1], &[]),
                    // An inner axis: the same rows, that dim gone (or 1).
                    Some(a) if a > inputs[0].0.ragged_rank() => {
                        let mut inner = x.flat_shape.get(1..).unwrap_or(&[]).to_vec();
                        let at = a - inputs[0].0.ragged_rank() - 1;
                        if at < inner.len() {
                            inner.remove(at);
                        }
                        shaped(ty, &levels, &inner)
                    }
                    // The innermost ragged axis: one value per row of the level above.
                    Some(_) => shaped(ty, &levels[..levels.len() - 1], x.flat_shape.get(1..).unwrap_or(&[])),
                };
                (size, exact, false)
            }
            Rule::Bag { rows, table } => {
                let levels = inputs[rows].1.levels();
                let row = inputs[table].1.flat_shape.get(1..).unwrap_or(&[]);
                let (size, exact) = shaped(ty, &levels[..1], row);
                (size, exact, false)
            }
            Rule::TypeOnly => {
                let src = lead(rr);
                let fixed = ty.rank() > 0 && ty.dims().iter().all(|d| matches!(d, Dim::Known(_)));
                let (mut size, _) = shaped(ty, &src.levels(), src.flat_shape.get(1..).unwrap_or(&[]));
                if fixed {
                    size = ValueSize::dense(
                        &ty.dims().iter().map(|d| if let Dim::Known(n) = d { *n } else { 1 }).collect::<Vec<_>>(),
                    );
                }
                if ty.dtype() == DType::String {
                    size.string_bytes = src.string_bytes;
                }
                (size, (fixed || ty.rank() == 0) && ty.dtype() != DType::String, false)
            }
        };
        let n = size.elements();
        match rule {
            // An input smaller than the output may be broadcast into a buffer of the output's
            // size, through an index vector.
            Rule::Broadcast => {
                for (t, s) in inputs {
                    if s.elements() < n {
                        let per = t.dtype().size_of().saturating_add(INDEX_BYTES_PER_ELEMENT);
                        node.scratch = node.scratch.saturating_add(n.saturating_mul(per));
                    }
                }
            }
            // Row ids and source positions per element of the largest operand or the output.
            _ => {
                let most = inputs.iter().map(|(_, s)| s.elements()).max().unwrap_or(0).max(n);
                node.scratch = node.scratch.saturating_add(most.saturating_mul(INDEX_BYTES_PER_ELEMENT));
            }
        }
        node.bounded &= exact;
        let bytes = if shares { size.value_bytes(ty.dtype()) } else { size.bytes(ty.dtype()) };
        node.added = node.added.saturating_add(bytes);
        node.sizes.push(size);
        node.shares.push(shares);
    }
    node
}

/// What [`node_outputs`] finds for one node.
struct NodeSizes {
    /// Each output's size.
    sizes: Vec<ValueSize>,
    /// Whether each output keeps an input's partitions (the first input with its ragged rank).
    shares: Vec<bool>,
    /// Whether every output's size is exact (so the bound holds).
    bounded: bool,
    /// The bytes of the new buffers of the outputs.
    added: usize,
    /// Scratch beyond the outputs (broadcast operands).
    scratch: usize,
}

/// Walks `fg` from `inputs`' sizes: (bytes its nodes add, their scratch bounds, the outputs' bytes,
/// the nodes without a bound).
fn walk(fg: &FunctionGraph, inputs: &[ValueSize], threads: usize) -> Result<(usize, usize, usize, Vec<String>)> {
    // Each value's size and the id of its partitions (shared partitions cache row ids once).
    let mut sizes: HashMap<VarId, ValueSize> = HashMap::new();
    let mut structure: HashMap<VarId, usize> = HashMap::new();
    let mut cached: HashSet<usize> = HashSet::new();
    for (k, (&v, size)) in fg.inputs().iter().zip(inputs).enumerate() {
        sizes.insert(v, size.clone());
        structure.insert(v, k);
    }
    let mut next_structure = inputs.len();
    let var = |v: VarId| fg.var(v).ok_or_else(|| Error::graph("estimate_memory: a variable vanished"));
    let (mut added, mut scratch, mut unbounded) = (0usize, 0usize, Vec::new());
    for id in fg.toposort()? {
        let node = fg.node(id).ok_or_else(|| Error::graph("estimate_memory: a node vanished"))?;
        let mut ins = Vec::with_capacity(node.inputs.len());
        for &v in &node.inputs {
            let variable = var(v)?;
            if let std::collections::hash_map::Entry::Vacant(slot) = sizes.entry(v) {
                // A constant (its buffers exist before the call) or a value no rule reached.
                slot.insert(variable.constant.as_ref().map(ValueSize::of).unwrap_or_default());
                structure.insert(v, next_structure);
                next_structure += 1;
            }
            ins.push(v);
        }
        let in_pairs: Vec<(&TensorType, &ValueSize)> =
            ins.iter().map(|v| Ok((&var(*v)?.ty, &sizes[v]))).collect::<Result<_>>()?;
        let out_types: Vec<&TensorType> = node.outputs.iter().map(|&v| Ok(&var(v)?.ty)).collect::<Result<_>>()?;
        let sized = node_outputs(&*node.op, &in_pairs, &out_types);
        // Row ids and row lengths an input's partitions may cache, once per partition set.
        let mut node_scratch = threads.saturating_mul(SCRATCH_PER_THREAD).saturating_add(sized.scratch);
        for (v, (_, s)) in ins.iter().zip(&in_pairs) {
            if cached.insert(structure[v]) {
                node_scratch = node_scratch.saturating_add(s.cache_bytes());
            }
        }
        if !sized.bounded {
            unbounded.push(fg.describe_node(id));
        }
        added = added.saturating_add(sized.added);
        scratch = scratch.saturating_add(node_scratch);
        for ((&v, size), shares) in node.outputs.iter().zip(sized.sizes).zip(sized.shares) {
            // A shared structure is the first input's of the same ragged rank (the lead).
            let rr = var(v)?.ty.ragged_rank();
            let lead = ins.iter().find(|i| fg.var(**i).is_some_and(|x| x.ty.ragged_rank() == rr));
            let id = match (shares, lead) {
                (true, Some(l)) => structure[l],
                _ => {
                    next_structure += 1;
                    next_structure
                }
            };
            sizes.insert(v, size);
            structure.insert(v, id);
        }
    }
    let mut outputs = 0usize;
    for v in fg.outputs() {
        let dtype = var(*v)?.ty.dtype();
        outputs = outputs.saturating_add(sizes.get(v).map_or(0, |s| s.bytes(dtype)));
    }
    Ok((added, scratch, outputs, unbounded))
}

/// The estimate and bound for `inputs` (graph inputs in order, states' values included): the
/// optimized graph `run` gives the estimate, the unoptimized `unoptimized` the bound.
pub(crate) fn estimate(
    run: &FunctionGraph,
    unoptimized: &FunctionGraph,
    inputs: &[ValueSize],
    threads: usize,
) -> Result<MemoryEstimate> {
    if inputs.len() != run.inputs().len() {
        return Err(Error::argument(
            "estimate_memory",
            format!("the function takes {} inputs, got {} sizes", run.inputs().len(), inputs.len()),
        ));
    }
    let (added, _, outputs, _) = walk(run, inputs, threads)?;
    let (all, scratch, _, unbounded) = walk(unoptimized, inputs, threads)?;
    let upper_bound =
        unbounded.is_empty().then(|| all.saturating_add(scratch).saturating_add(CALL_OVERHEAD).max(added));
    let estimate = upper_bound.map_or(added, |b| added.min(b));
    Ok(MemoryEstimate { estimate, upper_bound, outputs, unbounded })
}
