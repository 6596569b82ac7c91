//! Patterns: the left-hand side of a rewrite stated once, as a tree of op types (with a test on
//! their attributes), constants and named captures, with alternatives for the equivalent
//! spellings of one value (PyTensor's `PatternNodeRewriter`, in Rust).
//!
//! A pattern matches a variable of a [`FunctionGraph`]: [`op`] the output of a node whose op has
//! a given Rust type, [`var`] any variable (a name captured twice must bind the same variable,
//! which is how a rule says "the same `x`" in two places), [`int`] / [`string`] rank-0 constants,
//! [`any_of`] the first alternative that matches. Alternatives do not backtrack into siblings: an
//! alternative that matched is kept even if a later input of the same node then fails, so list
//! the more specific spellings first.

use std::any::{Any, TypeId};
use std::sync::Arc;

use ragtime_fused::ScalarConst;
use ragtime_graph::{ApplyId, Client, FunctionGraph, Op, VarId};

/// A test on a matched op's attributes.
type OpTest = Arc<dyn Fn(&dyn Any) -> bool + Send + Sync>;

/// What a pattern matches; see the module documentation.
#[derive(Clone)]
pub(crate) struct Pattern(Kind);

#[derive(Clone)]
enum Kind {
    Var(&'static str),
    Int(i64),
    String(&'static str),
    IntVector(Vec<i64>),
    AnyOf(Vec<Pattern>),
    Bind(&'static str, Box<Pattern>),
    Node { op: TypeId, test: Option<OpTest>, name: Option<&'static str>, inputs: Option<Vec<Pattern>>, sole: bool },
}

/// A pattern for the output of a node whose op is a `T`; refine it with [`NodePattern::when`],
/// [`NodePattern::named`], [`NodePattern::only_read_by_its_consumer`], then give its inputs.
pub(crate) struct NodePattern<T> {
    test: Option<OpTest>,
    name: Option<&'static str>,
    sole: bool,
    _op: std::marker::PhantomData<fn() -> T>,
}

/// The output of a node whose op is a `T`.
pub(crate) fn op<T: Op + 'static>() -> NodePattern<T> {
    NodePattern { test: None, name: None, sole: false, _op: std::marker::PhantomData }
}

impl<T: Op + 'static> NodePattern<T> {
    /// Only when `test` holds for the op's attributes.
    pub(crate) fn when(mut self, test: impl Fn(&T) -> bool + Send + Sync + 'static) -> Self {
        self.test = Some(Arc::new(move |any: &dyn Any| any.downcast_ref::<T>().is_some_and(&test)));
        self
    }

    /// Captures the node under `name` ([`Match::node`]).
    pub(crate) fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// Only when the output is read by nothing but the node that consumes it in the pattern (or,
    /// at the root, by nothing but the caller's node): a rewrite that removes the node then
    /// computes nothing twice.
    pub(crate) fn only_read_by_its_consumer(mut self) -> Self {
        self.sole = true;
        self
    }

    /// With exactly these inputs.
    pub(crate) fn inputs<const N: usize>(self, inputs: [Pattern; N]) -> Pattern {
        self.build(Some(inputs.into()))
    }

    /// With any inputs.
    pub(crate) fn any_inputs(self) -> Pattern {
        self.build(None)
    }

    fn build(self, inputs: Option<Vec<Pattern>>) -> Pattern {
        Pattern(Kind::Node { op: TypeId::of::<T>(), test: self.test, name: self.name, inputs, sole: self.sole })
    }
}

/// Any variable, captured under `name`.
pub(crate) fn var(name: &'static str) -> Pattern {
    Pattern(Kind::Var(name))
}

/// A rank-0 integer constant (any integer dtype) equal to `value`.
pub(crate) fn int(value: i64) -> Pattern {
    Pattern(Kind::Int(value))
}

/// A rank-1 integer constant (any integer dtype) equal to `values`.
pub(crate) fn int_vector(values: &[i64]) -> Pattern {
    Pattern(Kind::IntVector(values.to_vec()))
}

/// A rank-0 string constant, captured under `name` ([`Match::string`]).
pub(crate) fn string(name: &'static str) -> Pattern {
    Pattern(Kind::String(name))
}

/// The first of `alternatives` that matches.
pub(crate) fn any_of<const N: usize>(alternatives: [Pattern; N]) -> Pattern {
    Pattern(Kind::AnyOf(alternatives.into()))
}

/// What a pattern bound.
#[derive(Debug, Clone, Default)]
pub(crate) struct Match {
    vars: Vec<(&'static str, VarId)>,
    nodes: Vec<(&'static str, ApplyId)>,
    strings: Vec<(&'static str, String)>,
}

impl Match {
    /// The variable captured as `name`. Panics when the pattern has no such capture, which is a
    /// mistake in the rule, not in the graph.
    pub(crate) fn var(&self, name: &str) -> VarId {
        self.vars.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap_or_else(|| missing("variable", name))
    }

    /// The node captured as `name` (see [`Match::var`]).
    pub(crate) fn node(&self, name: &str) -> ApplyId {
        self.nodes.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap_or_else(|| missing("node", name))
    }

    /// The string constant captured as `name` (see [`Match::var`]).
    pub(crate) fn string(&self, name: &str) -> &str {
        self.strings
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s.as_str())
            .unwrap_or_else(|| missing("string", name))
    }

    /// The op of the node captured as `name`.
    pub(crate) fn op<'g, T: Op + 'static>(&self, fg: &'g FunctionGraph, name: &str) -> Option<&'g T> {
        fg.node(self.node(name))?.op.as_any().downcast_ref::<T>()
    }
}

fn missing(what: &str, name: &str) -> ! {
    panic!("pattern has no {what} capture named `{name}`")
}

impl Pattern {
    /// Also captures the matched variable under `name` ([`Match::var`]).
    pub(crate) fn named_var(self, name: &'static str) -> Pattern {
        Pattern(Kind::Bind(name, Box::new(self)))
    }

    /// Matches `v`, read by the node `consumer` (which `only_read_by_its_consumer` at the root
    /// refers to).
    pub(crate) fn matches(&self, fg: &FunctionGraph, v: VarId, consumer: Option<ApplyId>) -> Option<Match> {
        let mut m = Match::default();
        self.bind(fg, v, consumer, &mut m).then_some(m)
    }

    /// Matches the first output of `node` (the root of a rule's left-hand side).
    pub(crate) fn matches_node(&self, fg: &FunctionGraph, node: ApplyId) -> Option<Match> {
        let out = *fg.node(node)?.outputs.first()?;
        self.matches(fg, out, None)
    }

    fn bind(&self, fg: &FunctionGraph, v: VarId, consumer: Option<ApplyId>, m: &mut Match) -> bool {
        match &self.0 {
            Kind::Var(name) => match m.vars.iter().find(|(n, _)| n == name) {
                Some(&(_, bound)) => bound == v,
                None => {
                    m.vars.push((name, v));
                    true
                }
            },
            Kind::Int(want) => {
                scalar_const(fg, v).is_some_and(|c| c.dtype().is_integer() && c.as_f64() == *want as f64)
            }
            Kind::IntVector(want) => int_vector_const(fg, v).is_some_and(|got| got == *want),
            Kind::String(name) => match string_const(fg, v) {
                Some(s) => {
                    m.strings.push((name, s));
                    true
                }
                None => false,
            },
            Kind::Bind(name, inner) => {
                m.vars.push((name, v));
                inner.bind(fg, v, consumer, m)
            }
            Kind::AnyOf(alternatives) => alternatives.iter().any(|alt| {
                let saved = m.clone();
                alt.bind(fg, v, consumer, m) || {
                    *m = saved;
                    false
                }
            }),
            Kind::Node { op, test, name, inputs, sole } => {
                let Some(owner) = fg.var(v).and_then(|var| var.owner) else { return false };
                let Some(apply) = fg.node(owner) else { return false };
                let any = apply.op.as_any();
                if Any::type_id(any) != *op || !test.as_ref().is_none_or(|t| t(any)) {
                    return false;
                }
                if *sole && !only_read_by(fg, v, consumer) {
                    return false;
                }
                if let Some(name) = name {
                    m.nodes.push((name, owner));
                }
                match inputs {
                    None => true,
                    Some(pats) => {
                        pats.len() == apply.inputs.len()
                            && pats.iter().zip(&apply.inputs).all(|(p, &input)| p.bind(fg, input, Some(owner), m))
                    }
                }
            }
        }
    }
}

/// True when `v`'s only reader is `consumer` (one input of it, or several inputs of that one
/// node); with no consumer, when nothing reads `v` but one node.
fn only_read_by(fg: &FunctionGraph, v: VarId, consumer: Option<ApplyId>) -> bool {
    let clients = fg.clients(v);
    let first = match clients.first() {
        Some(Client::Node { node, .. }) => *node,
        _ => return false,
    };
    consumer.is_none_or(|c| c == first)
        && clients.iter().all(|client| matches!(client, Client::Node { node, .. } if *node == first))
}

/// The value of a rank-0 numeric constant.
pub(crate) fn scalar_const(fg: &FunctionGraph, v: VarId) -> Option<ScalarConst> {
    ScalarConst::from_tensor(fg.var(v)?.constant.as_ref()?)
}

/// The value of a rank-0 string constant (UTF-8).
pub(crate) fn string_const(fg: &FunctionGraph, v: VarId) -> Option<String> {
    let dense = fg.var(v)?.constant.as_ref()?.as_dense()?;
    let col = dense.as_strings().filter(|_| dense.rank() == 0)?;
    String::from_utf8(col.get(0).to_vec()).ok()
}

/// The values of a rank-1 integer constant.
fn int_vector_const(fg: &FunctionGraph, v: VarId) -> Option<Vec<i64>> {
    let dense = fg.var(v)?.constant.as_ref()?.as_dense()?;
    (dense.rank() == 1 && dense.dtype().is_integer()).then(|| dense.to_i64_vec("pattern", "constant").ok())?
}
