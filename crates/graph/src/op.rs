//! The `Op` trait (type inference + reference implementation) and `Attrs`, the attribute values of graph files.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use ragtime_core::{Error, ExecContext, RaggedTensor, Result, TensorType};

use crate::{FunctionGraph, Graph, VarId};

/// How expensive an op is per element, for rewrites that weigh recomputation against memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Cost {
    /// Reads its inputs' structure only (accessors, identity).
    Free,
    /// A few instructions per element (arithmetic, comparisons, casts).
    #[default]
    Cheap,
    /// A transcendental function or a division per element (`exp`, `tanh`, `pow`).
    Expensive,
}

/// What the passes may assume of an op, read instead of hard-coded op lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpProperties {
    /// One output whose element `k` depends only on element `k` of the (broadcast) inputs.
    pub elementwise: bool,
    /// Output 0 keeps the row partitions of this input when both have the same ragged rank and
    /// rank (so partition analysis may equate their structures).
    pub keeps_partitions_of: Option<usize>,
    /// Whether values its types accept can still make it fail at run time (integer division by
    /// zero, an index out of range). Rewrites must not drop or duplicate such nodes carelessly.
    pub can_fail: bool,
    /// Cost class per element.
    pub cost: Cost,
}

/// Equality between ops of any type: two ops are the same op when they have the same Rust type
/// and compare equal. Implemented for every `Op + PartialEq`; `dyn Op` compares through it.
pub trait OpEq {
    /// True when `other` is the same op as `self`.
    fn op_eq(&self, other: &dyn Op) -> bool;
}

impl<T: Op + PartialEq> OpEq for T {
    fn op_eq(&self, other: &dyn Op) -> bool {
        other.as_any().downcast_ref::<T>().is_some_and(|o| o == self)
    }
}

impl PartialEq for dyn Op {
    fn eq(&self, other: &dyn Op) -> bool {
        self.op_eq(other)
    }
}

/// An operation: the function an [`crate::Apply`] node applies to its inputs.
///
/// Each op declares type inference ([`Op::infer`]) and evaluation ([`Op::perform`]) separately.
/// Architecture invariant: two ops are the same op exactly when they are equal as values
/// ([`OpEq`]: same Rust type, equal properties); merging and rewrite dispatch key on that, never on
/// the printed [`Op::name`], which is for people.
pub trait Op: OpEq + fmt::Debug + Send + Sync + 'static {
    /// The op's name with its properties, e.g. `Elemwise{add}` or `ReduceSum{axis=1}`.
    fn name(&self) -> String;

    /// Checks the input types and returns the output types; rejects whatever can be rejected
    /// before any data is seen (wrong arity, dtypes, ranks, ragged ranks, known dims).
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>>;

    /// The reference implementation: computes the outputs from input values. It is the oracle for
    /// constant folding, the debug mode and the differential tests. It must not panic on any
    /// value whose type [`Op::infer`] accepted, and must leave its inputs untouched.
    ///
    /// `ctx` is the call's run-time settings: data-sized buffers are allocated through it (its
    /// limits and memory budget), parallel helpers take its thread count. Outside a call (tests,
    /// constant folding) pass a context of its own, e.g. [`ExecContext::detached`].
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>>;

    /// For rewrites that look inside a specific op type.
    fn as_any(&self) -> &dyn Any;

    /// The subgraph a fused op stands for (its definition: the ops it replaced, see
    /// `ragtime_runtime::InnerGraph`), drawn by `debugprint` under `Inner graphs:`; `None` for other ops.
    fn inner_graph(&self) -> Option<&FunctionGraph> {
        None
    }

    /// What rewrites may assume of this op (defaults: not elementwise, cannot fail, cheap).
    fn properties(&self) -> OpProperties {
        OpProperties::default()
    }

    /// True when [`Op::infer`] handles [`Dim::UniformRows`](ragtime_core::Dim::UniformRows):
    /// it reads them in its inputs where they matter, and its outputs claim one only where
    /// [`Op::perform`] builds a partition with that uniform row length. Default `false`: such an
    /// op sees and gives only [`Dim::Ragged`](ragtime_core::Dim::Ragged) (see [`Op::output_types`]).
    fn keeps_uniform_rows(&self) -> bool {
        false
    }

    /// The vector-Jacobian product (Theano's `L_op`): given the node's `inputs` and `outputs`
    /// in `graph` and the gradient of the cost with respect to each output (`None`: the cost
    /// does not depend on that output), builds nodes computing the gradient with respect to
    /// each input and returns one entry per input: `None` for an input no gradient flows to
    /// (an integer, bool or string input, or an op constant almost everywhere such as `floor`).
    /// A gradient has its input's dtype, shape and row partitions. It builds graph nodes,
    /// never values. The backward walk (`ragtime_ops::grad`) calls it only when a gradient
    /// must pass through the node, so the default, an error naming the op, is raised only then.
    fn vjp(
        &self,
        graph: &mut Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        output_grads: &[Option<VarId>],
    ) -> Result<Vec<Option<VarId>>> {
        let _ = (graph, inputs, outputs, output_grads);
        Err(Error::argument(self.name(), "has no gradient: a gradient cannot flow back through this op"))
    }

    /// The output types as the graph records them: [`Op::infer`], with uniform row lengths
    /// widened to ragged in the inputs and outputs of an op that does not declare
    /// [`Op::keeps_uniform_rows`]. Forgetting to declare it costs precision, never correctness:
    /// a ragged type accepts a uniform partition. Graphs, rewrites and fused ops call this, not
    /// `infer`; ops do not override it.
    fn output_types(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        if self.keeps_uniform_rows() || !inputs.iter().any(TensorType::has_uniform_rows) {
            let out = self.infer(inputs)?;
            return Ok(if self.keeps_uniform_rows() {
                out
            } else {
                out.into_iter().map(TensorType::widened).collect()
            });
        }
        let widened: Vec<TensorType> = inputs.iter().cloned().map(TensorType::widened).collect();
        Ok(self.infer(&widened)?.into_iter().map(TensorType::widened).collect())
    }
}

/// A shared op.
pub type OpRef = Arc<dyn Op>;

/// Checks the number of inputs; the first check of most [`Op::infer`]s.
pub fn expect_arity(op: &str, inputs: &[TensorType], range: std::ops::RangeInclusive<usize>) -> Result<()> {
    if range.contains(&inputs.len()) {
        return Ok(());
    }
    let want = if range.start() == range.end() {
        format!("{}", range.start())
    } else if *range.end() == usize::MAX {
        format!("at least {}", range.start())
    } else {
        format!("{} to {}", range.start(), range.end())
    };
    Err(Error::argument(op, format!("takes {want} inputs, got {}", inputs.len())))
}

/// An attribute value, as written in graph files (JSON-like).
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    List(Vec<Attr>),
}

/// The attribute name of [`Attrs::schema_probe`] (no graph file can use it: not an identifier).
const SCHEMA_PROBE: &str = "?schema";
/// How [`Attrs::only`] answers a schema probe.
const SCHEMA_ANSWER: &str = "known attributes: ";

/// The attributes of one node of a graph file, by name; getters give typed values or a clear error.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attrs {
    op: String,
    map: BTreeMap<String, Attr>,
}

impl Attrs {
    /// Attributes for op `op` (named in errors).
    pub fn new(op: impl Into<String>, map: BTreeMap<String, Attr>) -> Self {
        Attrs { op: op.into(), map }
    }
    /// The op these attributes belong to.
    pub fn op(&self) -> &str {
        &self.op
    }
    /// The raw attribute, if present and not null.
    pub fn get(&self, name: &str) -> Option<&Attr> {
        self.map.get(name).filter(|a| **a != Attr::Null)
    }
    /// True when the attribute is present and not null.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    fn bad(&self, name: &str, want: &str) -> Error {
        Error::argument(self.op.clone(), format!("attribute `{name}` must be {want}, got {:?}", self.map.get(name)))
    }
    /// An optional integer.
    pub fn int_opt(&self, name: &str) -> Result<Option<i64>> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Int(v)) => Ok(Some(*v)),
            Some(_) => Err(self.bad(name, "an integer")),
        }
    }
    /// A required integer.
    pub fn int(&self, name: &str) -> Result<i64> {
        self.int_opt(name)?.ok_or_else(|| self.bad(name, "an integer"))
    }
    /// An optional boolean.
    pub fn bool_opt(&self, name: &str) -> Result<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Bool(v)) => Ok(Some(*v)),
            Some(_) => Err(self.bad(name, "a boolean")),
        }
    }
    /// An optional string.
    pub fn str_opt(&self, name: &str) -> Result<Option<&str>> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Str(v)) => Ok(Some(v)),
            Some(_) => Err(self.bad(name, "a string")),
        }
    }
    /// A required string.
    pub fn str(&self, name: &str) -> Result<&str> {
        self.str_opt(name)?.ok_or_else(|| self.bad(name, "a string"))
    }
    /// An optional list of integers (a single integer counts as a list of one).
    pub fn ints_opt(&self, name: &str) -> Result<Option<Vec<i64>>> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Int(v)) => Ok(Some(vec![*v])),
            Some(Attr::List(items)) => items
                .iter()
                .map(|a| match a {
                    Attr::Int(v) => Ok(*v),
                    _ => Err(self.bad(name, "a list of integers")),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(_) => Err(self.bad(name, "a list of integers")),
        }
    }
    /// An optional list of integers or nulls (unknown dims), e.g. a target shape.
    pub fn dims_opt(&self, name: &str) -> Result<Option<Vec<Option<i64>>>> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::List(items)) => items
                .iter()
                .map(|a| match a {
                    Attr::Int(v) => Ok(Some(*v)),
                    Attr::Null => Ok(None),
                    _ => Err(self.bad(name, "a list of integers or nulls")),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(_) => Err(self.bad(name, "a list of integers or nulls")),
        }
    }
    /// Attributes that ask an op for the attributes it knows instead of configuring it: the op's
    /// `from_attrs` fails at its [`Attrs::only`] with an error that [`Attrs::known_in`] reads. How
    /// `docs/graph-files.md` is checked against the registry.
    pub fn schema_probe(op: impl Into<String>) -> Self {
        Attrs::new(op, BTreeMap::from([(SCHEMA_PROBE.to_string(), Attr::Null)]))
    }

    /// The attribute names an op declared when built from [`Attrs::schema_probe`], read from the
    /// error its [`Attrs::only`] gave; `None` for any other error.
    pub fn known_in(error: &Error) -> Option<Vec<String>> {
        let Error::InvalidArgument { reason, .. } = error.root() else { return None };
        let list = reason.strip_prefix(SCHEMA_ANSWER)?;
        Some(list.split(", ").filter(|s| !s.is_empty()).map(str::to_string).collect())
    }

    /// Fails on attributes the op does not know (a typo must not be silently ignored).
    pub fn only(&self, known: &[&str]) -> Result<()> {
        if self.map.contains_key(SCHEMA_PROBE) {
            return Err(Error::argument(self.op.clone(), format!("{SCHEMA_ANSWER}{}", known.join(", "))));
        }
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => {
                Err(Error::argument(self.op.clone(), format!("unknown attribute `{k}` (known: {})", known.join(", "))))
            }
            None => Ok(()),
        }
    }
}
