//! Graph files (`ragged-conformance/1`): load cases and graphs from JSON, run them, and compare results
//! with TensorFlow's tolerance rules.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

use ragtime_core::{DType, Error, Literal, RaggedTensor, Result};
use ragtime_graph::{Attr, Attrs, Graph, VarId};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::{CompileOptions, Function};

const FORMAT: &str = "ragged-conformance/1";

/// A file of cases (also ragtime's graph file format).
#[derive(Debug, Clone)]
pub struct CaseFile {
    /// The group name.
    pub group: String,
    /// The cases, in file order.
    pub cases: Vec<Case>,
}

/// One graph with its inputs, and optionally what running it must give.
#[derive(Debug, Clone)]
pub struct Case {
    /// `group/name`.
    pub name: String,
    /// A remark.
    pub note: Option<String>,
    doc: CaseDoc,
}

/// What a case expects.
#[derive(Debug, Clone)]
pub enum Expectation {
    /// These output values.
    Values(Vec<(String, RaggedTensor)>),
    /// An error of this kind (`invalid_row_partition`, ...), at build or run time.
    Error(String),
    /// Nothing (a plain graph file).
    Nothing,
}

/// A case's graph, built and compiled, with its input values.
#[derive(Debug)]
pub struct BuiltCase {
    /// The IR graph as loaded.
    pub graph: Graph,
    /// The compiled function.
    pub function: Function,
    /// Input values in call order.
    pub inputs: Vec<RaggedTensor>,
    /// Output names in result order.
    pub output_names: Vec<String>,
    /// The output variables of `graph`.
    pub outputs: Vec<VarId>,
}

impl BuiltCase {
    /// The graph as the file describes it, before any optimization, with types.
    pub fn user_debugprint(&self) -> String {
        ragtime_graph::debugprint(
            &self.graph,
            &self.outputs,
            ragtime_graph::PrintOptions { types: true, positions: false },
        )
    }
}

/// The outcome of checking one case.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Matched the expectation.
    Pass,
    /// Did not; the text says what differed.
    Fail(String),
}

impl CaseFile {
    /// Reads and parses a file.
    pub fn load(path: &Path) -> Result<CaseFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::value("load", format!("cannot read {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| Error::value("load", format!("{}: {e}", path.display())))
    }

    /// Parses the text of a file, strictly: every object is decoded into its typed form
    /// (unknown fields, wrong JSON types and duplicate keys are refused), and an error names the
    /// case, the node and the field.
    pub fn parse(text: &str) -> Result<CaseFile> {
        let doc: FileDoc = serde_json::from_str(text).map_err(|e| Error::value("load", format!("{e}")))?;
        if let Some(f) = &doc.format {
            if f != FORMAT {
                return Err(Error::value("load", format!("unknown format `{f}` (expected `{FORMAT}`)")));
            }
        }
        let group = doc.group.unwrap_or_default();
        let mut seen = HashSet::new();
        let mut cases = Vec::with_capacity(doc.cases.len());
        for (i, raw) in doc.cases.iter().enumerate() {
            let doc = CaseDoc::decode(raw.get(), i)?;
            let mut name = doc.name.clone().unwrap_or_else(|| format!("{group}/{i}"));
            // A name an earlier case already uses gets ` #2`, ` #3`, ... so every case keeps a
            // distinct name (TensorFlow-generated files repeat a few names for different cases).
            if seen.contains(&name) {
                let base = name.clone();
                name = (2..).map(|k| format!("{base} #{k}")).find(|n| !seen.contains(n)).unwrap_or(base);
            }
            seen.insert(name.clone());
            cases.push(Case { name, note: doc.note.clone(), doc });
        }
        Ok(CaseFile { group, cases })
    }
}

// ---------------------------------------------------------------------------------------------
// The typed form of a file. Each level is decoded on its own (cases and nodes are kept as raw
// JSON by their parent), so an error can name the case and the node it is in.
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // `generated_by`, `source`, `description`: informational, checked for type only.
struct FileDoc {
    format: Option<String>,
    group: Option<String>,
    generated_by: Option<String>,
    source: Option<String>,
    description: Option<String>,
    cases: Vec<Box<RawValue>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFields {
    name: Option<String>,
    note: Option<String>,
    #[serde(default)]
    inputs: UniqueMap<ValueDoc>,
    #[serde(default)]
    nodes: Vec<Box<RawValue>>,
    outputs: Vec<String>,
    expect: Option<UniqueMap<ValueDoc>>,
    expect_error: Option<String>,
}

/// A decoded case: its fields, with every node decoded.
#[derive(Debug, Clone)]
struct CaseDoc {
    name: Option<String>,
    note: Option<String>,
    inputs: Vec<(String, ValueDoc)>,
    nodes: Vec<NodeDoc>,
    outputs: Vec<String>,
    expect: Option<Vec<(String, ValueDoc)>>,
    expect_error: Option<String>,
}

impl CaseDoc {
    /// Decodes case number `i` from its JSON text.
    fn decode(text: &str, i: usize) -> Result<CaseDoc> {
        // The name, if it can be read at all, makes the messages of the other fields clearer.
        let name = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_string));
        let at = match &name {
            Some(n) => format!("case {i} (`{n}`)"),
            None => format!("case {i}"),
        };
        let f: CaseFields =
            serde_json::from_str(text).map_err(|e| Error::value("load", format!("{at}: {}", strip_position(&e))))?;
        if f.expect.is_some() && f.expect_error.is_some() {
            return Err(Error::value("load", format!("{at}: give `expect` or `expect_error`, not both")));
        }
        let nodes = f
            .nodes
            .iter()
            .enumerate()
            .map(|(k, raw)| {
                serde_json::from_str::<NodeDoc>(raw.get()).map_err(|e| {
                    let op = serde_json::from_str::<Value>(raw.get())
                        .ok()
                        .and_then(|v| v.get("op").and_then(Value::as_str).map(|o| format!(" ({o})")))
                        .unwrap_or_default();
                    Error::value("load", format!("{at}, node {k}{op}: {}", strip_position(&e)))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(CaseDoc {
            name: f.name,
            note: f.note,
            inputs: f.inputs.0,
            nodes,
            outputs: f.outputs,
            expect: f.expect.map(|m| m.0),
            expect_error: f.expect_error,
        })
    }
}

/// serde_json's message without its ` at line L column C` (positions inside one case's text
/// mislead: the case and node are named instead).
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(k) => text[..k].to_string(),
        None => text,
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeDoc {
    op: String,
    #[serde(rename = "in", default)]
    inputs: Vec<InputDoc>,
    out: OneOrMany,
    #[serde(default)]
    attrs: UniqueMap<Value>,
}

/// A node input: the name of a variable defined before, or `{"const": VALUE}`.
#[derive(Debug, Clone)]
enum InputDoc {
    Name(String),
    Const(ValueDoc),
}

impl<'de> Deserialize<'de> for InputDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct ConstDoc {
            #[serde(rename = "const")]
            value: ValueDoc,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = InputDoc;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a variable name or {\"const\": VALUE}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<InputDoc, E> {
                Ok(InputDoc::Name(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> std::result::Result<InputDoc, A::Error> {
                let c = ConstDoc::deserialize(de::value::MapAccessDeserializer::new(m))?;
                Ok(InputDoc::Const(c.value))
            }
        }
        d.deserialize_any(V)
    }
}

/// `"out": "y"` or `"out": ["a", "b"]`.
#[derive(Debug, Clone)]
struct OneOrMany(Vec<String>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an output name or a list of output names")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<OneOrMany, E> {
                Ok(OneOrMany(vec![v.to_string()]))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<OneOrMany, A::Error> {
                let mut names = Vec::new();
                while let Some(n) = seq.next_element::<String>()? {
                    names.push(n);
                }
                Ok(OneOrMany(names))
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON object whose keys must be distinct (serde_json's own maps keep the last of two equal
/// keys silently), in key order (the order inputs are passed in).
#[derive(Debug, Clone)]
struct UniqueMap<T>(Vec<(String, T)>);

impl<T> Default for UniqueMap<T> {
    fn default() -> Self {
        UniqueMap(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for UniqueMap<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = UniqueMap<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<UniqueMap<T>, A::Error> {
                let mut items: Vec<(String, T)> = Vec::new();
                let mut seen = HashSet::new();
                while let Some(k) = m.next_key::<String>()? {
                    if !seen.insert(k.clone()) {
                        return Err(de::Error::custom(format!("duplicate key `{k}`")));
                    }
                    let v = m.next_value::<T>().map_err(|e| de::Error::custom(format!("`{k}`: {e}")))?;
                    items.push((k, v));
                }
                items.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(UniqueMap(items))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// A VALUE object: `dtype`, `ragged_rank` (a non-negative integer, at most the rank limit),
/// `value`, `shape` (dense) or `inner_shape` (ragged), and optionally `uniform_row_lengths`:
/// one entry per ragged dimension, outermost first, a row length for a uniform partition (as
/// `from_uniform_row_length` builds, typed [`ragtime_core::Dim::UniformRows`]) or `null`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ValueDoc {
    dtype: String,
    #[serde(default)]
    ragged_rank: u64,
    value: Value,
    shape: Option<Vec<u64>>,
    inner_shape: Option<Vec<u64>>,
    uniform_row_lengths: Option<Vec<Option<u64>>>,
}

impl Case {
    /// What the case expects.
    pub fn expectation(&self) -> Result<Expectation> {
        if let Some(kind) = &self.doc.expect_error {
            return Ok(Expectation::Error(kind.clone()));
        }
        match &self.doc.expect {
            Some(map) => Ok(Expectation::Values(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), v.decode().map_err(|e| e.at_node(format!("expected output {k}")))?)))
                    .collect::<Result<Vec<_>>>()?,
            )),
            None => Ok(Expectation::Nothing),
        }
    }

    /// Builds the graph (type inference runs here) and compiles it.
    pub fn build(&self, options: impl Into<CompileOptions>) -> Result<BuiltCase> {
        self.build_typed(options.into(), false)
    }

    /// Builds the graph as [`Case::build`] does, but with each input's number of rows (its first
    /// dim) left unknown, so the function runs on data of any length, such as the record batches
    /// of a Parquet file (`ragtime run --input`): the file's input values only give each input's
    /// dtype, ragged rank and inner dims. The returned `inputs` are still the file's values.
    pub fn build_any_rows(&self, options: impl Into<CompileOptions>) -> Result<BuiltCase> {
        self.build_typed(options.into(), true)
    }

    /// Graph files are untrusted input: unless `options` sets limits, the function runs under
    /// [`Limits::untrusted`](ragtime_core::limits::Limits::untrusted).
    fn build_typed(&self, mut options: CompileOptions, any_rows: bool) -> Result<BuiltCase> {
        let limits = options.limits.unwrap_or_else(ragtime_core::limits::Limits::untrusted);
        options.limits = Some(limits);
        let mut graph = Graph::new();
        let mut names: HashMap<String, VarId> = HashMap::new();
        let mut inputs = Vec::new();
        let mut input_vars = Vec::new();
        for (name, v) in &self.doc.inputs {
            let value = v.decode().map_err(|e| e.at_node(format!("input {name}")))?;
            // The file's own values are held to the case's limits too (2^27 values per partition
            // untrusted), not only what its ops compute.
            limits.check_value("input", &value).map_err(|e| e.at_node(format!("input {name}")))?;
            let mut ty = ragtime_core::TensorType::of(&value);
            if any_rows && ty.rank() > 0 {
                ty = ty.with_dim(0, ragtime_core::Dim::Unknown)?;
            }
            let var = graph.input(name.clone(), ty)?;
            names.insert(name.clone(), var);
            inputs.push(value);
            input_vars.push(var);
        }
        for (k, node) in self.doc.nodes.iter().enumerate() {
            let op_name = node.op.as_str();
            let at = |e: Error| e.at_node(format!("node {k} ({op_name})"));
            let attrs = Attrs::new(
                op_name,
                node.attrs.0.iter().map(|(k, v)| (k.clone(), parse_attr(v))).collect::<BTreeMap<_, _>>(),
            );
            if op_name == "grad" {
                let outs = grad_node(&mut graph, &names, &input_vars, node, &attrs).map_err(at)?;
                name_outputs(&mut graph, &mut names, node, k, op_name, outs)?;
                continue;
            }
            let op = ragtime_ops::op_from_name(op_name, &attrs).map_err(at)?;
            let mut args = Vec::with_capacity(node.inputs.len());
            for (i, input) in node.inputs.iter().enumerate() {
                let var = match input {
                    InputDoc::Name(n) => *names.get(n).ok_or_else(|| {
                        Error::graph(format!("node {k} ({op_name}): input {i} `{n}` is not defined before it"))
                    })?,
                    InputDoc::Const(v) => graph.constant(
                        v.decode().map_err(|e| e.at_node(format!("node {k} ({op_name}), input {i} (const)")))?,
                    ),
                };
                args.push(var);
            }
            let outs = graph.apply(op, &args).map_err(at)?;
            name_outputs(&mut graph, &mut names, node, k, op_name, outs)?;
        }
        let output_names = self.doc.outputs.clone();
        let mut listed = HashSet::new();
        if let Some(dup) = output_names.iter().find(|n| !listed.insert(n.as_str())) {
            return Err(Error::graph(format!("output `{dup}` is listed twice in `outputs`")));
        }
        let outputs = output_names
            .iter()
            .map(|n| names.get(n).copied().ok_or_else(|| Error::graph(format!("output `{n}` is not defined"))))
            .collect::<Result<Vec<_>>>()?;
        let function = Function::from_graph(&graph, &input_vars, &outputs, options)?;
        Ok(BuiltCase { graph, function, inputs, output_names, outputs })
    }

    /// Builds and runs the case, giving each output by name.
    pub fn run(&self, options: impl Into<CompileOptions>) -> Result<Vec<(String, RaggedTensor)>> {
        let built = self.build(options)?;
        let values = built.function.call(&built.inputs)?;
        Ok(built.output_names.into_iter().zip(values).collect())
    }

    /// Runs the case and compares with its expectation.
    pub fn check(&self, options: impl Into<CompileOptions>) -> Outcome {
        let expectation = match self.expectation() {
            Ok(e) => e,
            Err(e) => return Outcome::Fail(format!("cannot read the expected values: {e}")),
        };
        let result = self.run(options);
        match (expectation, result) {
            (Expectation::Error(kind), Err(e)) if e.kind().as_str() == kind => Outcome::Pass,
            (Expectation::Error(kind), Err(e)) => {
                Outcome::Fail(format!("expected a {kind} error, got a {} error: {e}", e.kind()))
            }
            (Expectation::Error(kind), Ok(got)) => Outcome::Fail(format!(
                "expected a {kind} error, got values: {}",
                got.iter().map(|(n, v)| format!("{n} = {v}")).collect::<Vec<_>>().join(", ")
            )),
            (_, Err(e)) => Outcome::Fail(format!("unexpected {} error: {e}", e.kind())),
            (Expectation::Nothing, Ok(_)) => Outcome::Pass,
            (Expectation::Values(want), Ok(got)) => {
                let mut problems = Vec::new();
                for (name, w) in &want {
                    match got.iter().find(|(n, _)| n == name) {
                        None => problems.push(format!("output `{name}` missing")),
                        Some((_, g)) => {
                            if let Err(d) = compare(w, g) {
                                problems.push(format!("output `{name}`: {d}\n    expected {w}\n    got      {g}"));
                            }
                        }
                    }
                }
                if problems.is_empty() {
                    Outcome::Pass
                } else {
                    Outcome::Fail(problems.join("\n  "))
                }
            }
        }
    }
}

/// Names a node's outputs as the file says (`out`), refusing a count that differs from the
/// node's or a name defined before.
fn name_outputs(
    graph: &mut Graph,
    names: &mut HashMap<String, VarId>,
    node: &NodeDoc,
    k: usize,
    op_name: &str,
    outs: Vec<VarId>,
) -> Result<()> {
    let out_names = &node.out.0;
    if out_names.len() != outs.len() {
        return Err(Error::graph(format!(
            "node {k} ({op_name}) names {} outputs but the op has {}",
            out_names.len(),
            outs.len()
        )));
    }
    for (n, v) in out_names.iter().zip(outs) {
        if names.contains_key(n) {
            return Err(Error::graph(format!(
                "node {k} ({op_name}): output `{n}` is already defined (by an input or an earlier node)"
            )));
        }
        graph.set_name(v, n.clone());
        names.insert(n.clone(), v);
    }
    Ok(())
}

/// The `grad` node (`tests/grad/README.md`): `in` is the cost, `attrs.wrt` names graph inputs;
/// one output per `wrt` name, the gradient of the cost with respect to it. A `wrt` name that is
/// not a graph input is `invalid_graph`; a cost that is not a float scalar, or a `wrt` input
/// that is not a float, is `type_mismatch`.
fn grad_node(
    graph: &mut Graph,
    names: &HashMap<String, VarId>,
    input_vars: &[VarId],
    node: &NodeDoc,
    attrs: &Attrs,
) -> Result<Vec<VarId>> {
    attrs.only(&["wrt"])?;
    let [InputDoc::Name(cost)] = node.inputs.as_slice() else {
        return Err(Error::graph("grad: `in` must name one variable, the cost"));
    };
    let cost =
        *names.get(cost).ok_or_else(|| Error::graph(format!("grad: the cost `{cost}` is not defined before it")))?;
    let wrt_names = match attrs.get("wrt") {
        Some(Attr::List(items)) => items
            .iter()
            .map(|a| match a {
                Attr::Str(n) => Ok(n.as_str()),
                other => Err(Error::argument("grad", format!("`wrt` must list input names, got {other:?}"))),
            })
            .collect::<Result<Vec<_>>>()?,
        Some(Attr::Str(n)) => vec![n.as_str()],
        other => return Err(Error::argument("grad", format!("`wrt` must list input names, got {other:?}"))),
    };
    let wrt = wrt_names
        .iter()
        .map(|n| match names.get(*n) {
            Some(v) if input_vars.contains(v) => Ok(*v),
            _ => Err(Error::graph(format!("grad: `wrt` name `{n}` is not a graph input"))),
        })
        .collect::<Result<Vec<_>>>()?;
    ragtime_ops::grad::grad(graph, cost, &wrt)
}

pub use ragtime_core::compare::compare;

/// Parses a VALUE object of the format (`dtype`, `ragged_rank`, `value`, `inner_shape` / `shape`),
/// strictly (unknown fields, wrong JSON types and a ragged rank past the limit are refused).
pub fn parse_value(v: &Value) -> Result<RaggedTensor> {
    ValueDoc::deserialize(v).map_err(|e| Error::value("value", e.to_string()))?.decode()
}

impl ValueDoc {
    fn decode(&self) -> Result<RaggedTensor> {
        const OP: &str = "value";
        let dtype =
            DType::from_name(&self.dtype).ok_or_else(|| Error::value(OP, format!("unknown dtype `{}`", self.dtype)))?;
        // Checked before anything is built: an empty list may claim any ragged rank.
        let ragged_rank = usize::try_from(self.ragged_rank)
            .ok()
            .filter(|&r| r < ragtime_core::limits::MAX_RANK)
            .ok_or_else(|| {
                Error::value(
                    OP,
                    format!(
                        "ragged_rank {} exceeds the rank limit {}",
                        self.ragged_rank,
                        ragtime_core::limits::MAX_RANK
                    ),
                )
            })?;
        let hint = match (ragged_rank, &self.shape, &self.inner_shape) {
            (0, Some(_), None) | (1.., None, Some(_)) | (_, None, None) => {
                self.shape.as_ref().or(self.inner_shape.as_ref())
            }
            (0, _, Some(_)) => {
                return Err(Error::value(OP, "a dense value (ragged_rank 0) gives `shape`, not `inner_shape`"))
            }
            _ => return Err(Error::value(OP, "a ragged value gives `inner_shape`, not `shape`")),
        };
        let hint: Option<Vec<usize>> = match hint {
            None => None,
            Some(dims) => {
                ragtime_core::limits::checked_rank(OP, dims.len())?;
                Some(
                    dims.iter()
                        .map(|&d| {
                            usize::try_from(d).map_err(|_| Error::value(OP, format!("dimension {d} is too large")))
                        })
                        .collect::<Result<_>>()?,
                )
            }
        };
        let lit = json_to_literal(&self.value, dtype)?;
        let mut value = RaggedTensor::from_literal_typed(&lit, Some(dtype), Some(ragged_rank), hint.as_deref())?;
        if let Some(lengths) = &self.uniform_row_lengths {
            if lengths.len() != ragged_rank {
                return Err(Error::value(
                    OP,
                    format!("`uniform_row_lengths` has {} entries for ragged rank {ragged_rank}", lengths.len()),
                ));
            }
            for (k, length) in lengths.iter().enumerate() {
                if let Some(n) = length {
                    let n =
                        usize::try_from(*n).map_err(|_| Error::value(OP, format!("row length {n} is too large")))?;
                    value = value.with_uniform_rows(k, n)?;
                }
            }
        }
        Ok(value)
    }
}

fn json_to_literal(v: &Value, dtype: DType) -> Result<Literal> {
    Ok(match v {
        Value::Array(items) => Literal::List(items.iter().map(|i| json_to_literal(i, dtype)).collect::<Result<_>>()?),
        Value::Bool(b) => Literal::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) if !dtype.is_float() => Literal::Int(i as i128),
            (_, Some(u), _) if !dtype.is_float() => Literal::Int(u as i128),
            (_, _, Some(f)) => Literal::Float(f),
            _ => return Err(Error::value("value", format!("unreadable number {n}"))),
        },
        Value::String(s) if dtype.is_float() => Literal::Float(match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => return Err(Error::value("value", format!("`{other}` is not a float"))),
        }),
        Value::String(s) => Literal::Str(s.as_bytes().to_vec()),
        Value::Object(o) if o.len() == 1 && o.contains_key("hex") && dtype == DType::String => {
            let hex = o["hex"]
                .as_str()
                .ok_or_else(|| Error::value("value", format!("`hex` must be a string, got {}", o["hex"])))?;
            Literal::Str(decode_hex(hex).ok_or_else(|| Error::value("value", format!("bad hex string `{hex}`")))?)
        }
        other => return Err(Error::value("value", format!("{other} is not a tensor element"))),
    })
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

fn parse_attr(v: &Value) -> Attr {
    match v {
        Value::Null => Attr::Null,
        Value::Bool(b) => Attr::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Attr::Int(i),
            None => Attr::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Attr::Str(s.clone()),
        Value::Array(a) => Attr::List(a.iter().map(parse_attr).collect()),
        Value::Object(_) => Attr::Str(v.to_string()),
    }
}

/// The result of running every case of some files.
#[derive(Debug, Default)]
pub struct Report {
    /// Cases that passed.
    pub passed: usize,
    /// `(case name, what differed)` for each failure.
    pub failures: Vec<(String, String)>,
}

/// True when the case named `name` is the one a user asked for with `wanted`: the full name
/// (`seed_walkthrough/add_scalar`) or a suffix of it after a `/` (`add_scalar`).
pub fn case_name_matches(name: &str, wanted: &str) -> bool {
    name == wanted || name.strip_suffix(wanted).is_some_and(|rest| rest.ends_with('/'))
}

/// Every `*.json` file of `paths` (files, or folders of them), each folder in name order.
pub fn case_files(paths: &[&Path]) -> Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(p)
                .map_err(|e| Error::value("conformance", format!("cannot list {}: {e}", p.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            entries.sort();
            files.extend(entries);
        } else {
            files.push(p.to_path_buf());
        }
    }
    Ok(files)
}

/// Runs every case of every `*.json` file in `paths` (files or folders), in name order.
pub fn run_conformance(paths: &[&Path], options: impl Into<CompileOptions>) -> Result<Report> {
    run_conformance_with(paths, options, |_, _| {})
}

/// [`run_conformance`], calling `on_case(name, outcome)` as soon as each case is checked, so a
/// caller can report progressively (what was printed survives even if the process dies later).
/// A file that cannot be read or parsed counts as one failure (named by its path), and the
/// other files are still checked.
pub fn run_conformance_with(
    paths: &[&Path],
    options: impl Into<CompileOptions>,
    on_case: impl FnMut(&str, &Outcome),
) -> Result<Report> {
    run_conformance_where(paths, options, |_| true, on_case)
}

/// [`run_conformance_with`] over only the cases whose name `keep` accepts (files that cannot be
/// loaded are still reported).
pub fn run_conformance_where(
    paths: &[&Path],
    options: impl Into<CompileOptions>,
    keep: impl Fn(&str) -> bool,
    mut on_case: impl FnMut(&str, &Outcome),
) -> Result<Report> {
    let options = options.into();
    let mut report = Report::default();
    for f in case_files(paths)? {
        let file = match CaseFile::load(&f) {
            Ok(file) => file,
            Err(e) => {
                let (name, outcome) = (f.display().to_string(), Outcome::Fail(format!("cannot load: {e}")));
                on_case(&name, &outcome);
                if let Outcome::Fail(why) = outcome {
                    report.failures.push((name, why));
                }
                continue;
            }
        };
        for case in file.cases.iter().filter(|c| keep(&c.name)) {
            // A panic is a bug to report, not a reason to stop checking the other cases.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case.check(options.clone())))
                .unwrap_or_else(|_| Outcome::Fail("panicked".to_string()));
            on_case(&case.name, &outcome);
            match outcome {
                Outcome::Pass => report.passed += 1,
                Outcome::Fail(why) => report.failures.push((case.name.clone(), why)),
            }
        }
    }
    Ok(report)
}

/// A value in the graph-file format (`{"dtype", "ragged_rank", "value", ...}`), the inverse of
/// [`parse_value`]; non-finite floats are the strings `"nan"`, `"inf"`, `"-inf"`.
pub fn value_to_json(v: &RaggedTensor) -> Value {
    fn literal(l: &Literal) -> Value {
        match l {
            Literal::List(items) => Value::Array(items.iter().map(literal).collect()),
            Literal::Bool(b) => Value::Bool(*b),
            Literal::Int(i) => i64::try_from(*i)
                .map(Value::from)
                .or_else(|_| u64::try_from(*i).map(Value::from))
                .unwrap_or_else(|_| Value::String(i.to_string())),
            Literal::Float(f) if f.is_nan() => Value::String("nan".into()),
            Literal::Float(f) if f.is_infinite() => Value::String(if *f > 0.0 { "inf" } else { "-inf" }.into()),
            Literal::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Literal::Str(bytes) => match std::str::from_utf8(bytes) {
                Ok(s) => Value::String(s.to_string()),
                Err(_) => serde_json::json!({ "hex": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>() }),
            },
        }
    }
    let mut map = serde_json::Map::new();
    map.insert("dtype".into(), Value::String(v.dtype().to_string()));
    map.insert("ragged_rank".into(), Value::from(v.ragged_rank()));
    if v.is_dense() {
        map.insert("shape".into(), Value::from(v.flat_values().shape().to_vec()));
    } else if v.flat_values().rank() > 1 {
        map.insert("inner_shape".into(), Value::from(v.flat_values().shape()[1..].to_vec()));
    }
    if v.partitions().iter().any(|p| p.uniform_row_length().is_some()) {
        let lengths = v.partitions().iter().map(|p| p.uniform_row_length().map_or(Value::Null, Value::from));
        map.insert("uniform_row_lengths".into(), Value::Array(lengths.collect()));
    }
    map.insert("value".into(), literal(&v.to_literal()));
    Value::Object(map)
}
