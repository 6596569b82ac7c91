//! Graph files (`ragged-conformance/1`): load cases and graphs from JSON, run them, and compare results
//! with TensorFlow's tolerance rules.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use ragtime_core::{dispatch_dtype, DType, Error, Literal, RaggedTensor, Result};
use ragtime_graph::{Attr, Attrs, Graph, VarId};
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
    raw: Value,
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

    /// Parses the text of a file.
    pub fn parse(text: &str) -> Result<CaseFile> {
        let doc: Value = serde_json::from_str(text).map_err(|e| Error::value("load", format!("not JSON: {e}")))?;
        if let Some(f) = doc.get("format").and_then(Value::as_str) {
            if f != FORMAT {
                return Err(Error::value("load", format!("unknown format `{f}` (expected `{FORMAT}`)")));
            }
        }
        let group = doc.get("group").and_then(Value::as_str).unwrap_or("").to_string();
        let cases = doc
            .get("cases")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::value("load", "no `cases` list"))?
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let name =
                    c.get("name").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| format!("{group}/{i}"));
                let note = c.get("note").and_then(Value::as_str).map(str::to_string);
                Case { name, note, raw: c.clone() }
            })
            .collect();
        Ok(CaseFile { group, cases })
    }
}

impl Case {
    /// What the case expects.
    pub fn expectation(&self) -> Result<Expectation> {
        if let Some(kind) = self.raw.get("expect_error").and_then(Value::as_str) {
            return Ok(Expectation::Error(kind.to_string()));
        }
        match self.raw.get("expect").and_then(Value::as_object) {
            Some(map) => Ok(Expectation::Values(
                map.iter().map(|(k, v)| Ok((k.clone(), parse_value(v)?))).collect::<Result<Vec<_>>>()?,
            )),
            None => Ok(Expectation::Nothing),
        }
    }

    /// Builds the graph (type inference runs here) and compiles it.
    pub fn build(&self, options: impl Into<CompileOptions>) -> Result<BuiltCase> {
        let mut graph = Graph::new();
        let mut names: HashMap<String, VarId> = HashMap::new();
        let mut inputs = Vec::new();
        let mut input_vars = Vec::new();
        if let Some(map) = self.raw.get("inputs").and_then(Value::as_object) {
            for (name, v) in map {
                let value = parse_value(v).map_err(|e| e.at_node(format!("input {name}")))?;
                let var = graph.input(name.clone(), ragtime_core::TensorType::of(&value))?;
                names.insert(name.clone(), var);
                inputs.push(value);
                input_vars.push(var);
            }
        }
        let nodes = self.raw.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
        for (k, node) in nodes.iter().enumerate() {
            let op_name =
                node.get("op").and_then(Value::as_str).ok_or_else(|| Error::graph(format!("node {k} has no `op`")))?;
            let attrs = Attrs::new(
                op_name,
                node.get("attrs")
                    .and_then(Value::as_object)
                    .map(|m| m.iter().map(|(k, v)| (k.clone(), parse_attr(v))).collect::<BTreeMap<_, _>>())
                    .unwrap_or_default(),
            );
            let op = ragtime_ops::op_from_name(op_name, &attrs)?;
            let mut args = Vec::new();
            for (i, input) in node.get("in").and_then(Value::as_array).cloned().unwrap_or_default().iter().enumerate() {
                let var = match input {
                    Value::String(n) => *names.get(n).ok_or_else(|| {
                        Error::graph(format!("node {k} ({op_name}): input {i} `{n}` is not defined before it"))
                    })?,
                    Value::Object(o) if o.contains_key("const") => graph.constant(parse_value(&o["const"])?),
                    other => {
                        return Err(Error::graph(format!(
                            "node {k} ({op_name}): input {i} is not a name or a const: {other}"
                        )))
                    }
                };
                args.push(var);
            }
            let outs = graph.apply(op, &args)?;
            let out_names: Vec<String> = match node.get("out") {
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                _ => return Err(Error::graph(format!("node {k} ({op_name}) has no `out`"))),
            };
            if out_names.len() != outs.len() {
                return Err(Error::graph(format!(
                    "node {k} ({op_name}) names {} outputs but the op has {}",
                    out_names.len(),
                    outs.len()
                )));
            }
            for (n, v) in out_names.into_iter().zip(outs) {
                graph.set_name(v, n.clone());
                names.insert(n, v);
            }
        }
        let output_names: Vec<String> = self
            .raw
            .get("outputs")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
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

/// Compares a result with an expected value by the conformance rules: same dtype, ragged rank,
/// partitions and flat shape; integers, booleans and strings exact; floats within
/// `1e-6 + 1e-5·|want|` (float32) or `1e-12 + 1e-9·|want|` (float64), NaN equal to NaN.
pub fn compare(want: &RaggedTensor, got: &RaggedTensor) -> std::result::Result<(), String> {
    if want.dtype() != got.dtype() {
        return Err(format!("dtype {} (expected {})", got.dtype(), want.dtype()));
    }
    if want.ragged_rank() != got.ragged_rank() {
        return Err(format!("ragged rank {} (expected {})", got.ragged_rank(), want.ragged_rank()));
    }
    if want.flat_values().shape() != got.flat_values().shape() {
        return Err(format!(
            "flat values of shape {:?} (expected {:?})",
            got.flat_values().shape(),
            want.flat_values().shape()
        ));
    }
    for (k, (a, b)) in want.partitions().iter().zip(got.partitions()).enumerate() {
        if !a.same(b) {
            return Err(format!(
                "row splits of ragged dim {} are {:?} (expected {:?})",
                k + 1,
                b.row_splits(),
                a.row_splits()
            ));
        }
    }
    let (w, g) = (want.flat_values(), got.flat_values());
    match want.dtype() {
        DType::F32 | DType::F64 => {
            let (wv, gv): (Vec<f64>, Vec<f64>) = match want.dtype() {
                DType::F32 => (
                    w.as_slice::<f32>().unwrap_or(&[]).iter().map(|&x| x as f64).collect(),
                    g.as_slice::<f32>().unwrap_or(&[]).iter().map(|&x| x as f64).collect(),
                ),
                _ => (w.as_slice::<f64>().unwrap_or(&[]).to_vec(), g.as_slice::<f64>().unwrap_or(&[]).to_vec()),
            };
            let (abs, rel) = if want.dtype() == DType::F32 { (1e-6, 1e-5) } else { (1e-12, 1e-9) };
            for (i, (&x, &y)) in wv.iter().zip(&gv).enumerate() {
                let ok = if x.is_nan() || y.is_nan() {
                    x.is_nan() && y.is_nan()
                } else if x.is_infinite() || y.is_infinite() {
                    x == y
                } else {
                    (x - y).abs() <= abs + rel * x.abs()
                };
                if !ok {
                    return Err(format!("flat value {i} is {y} (expected {x})"));
                }
            }
            Ok(())
        }
        _ => {
            // Exact comparison: report the first differing flat value.
            let first_difference: Option<(usize, String, String)> = dispatch_dtype!(want.dtype(),
            T => {
                let (a, b) = (w.as_slice::<T>().unwrap_or(&[]), g.as_slice::<T>().unwrap_or(&[]));
                a.iter().zip(b).position(|(x, y)| x != y).map(|i| (i, b[i].to_string(), a[i].to_string()))
            },
            string => {
                let (a, b) = (w.as_strings(), g.as_strings());
                let (a, b) = (a.map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default(), b.map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default());
                a.iter().zip(&b).position(|(x, y)| x != y).map(|i| (i, format!("{:?}", b[i].escape_ascii().to_string()), format!("{:?}", a[i].escape_ascii().to_string())))
            });
            match first_difference {
                None => Ok(()),
                Some((i, got, want)) => Err(format!("flat value {i} is {got} (expected {want})")),
            }
        }
    }
}

/// Parses a VALUE object of the format (`dtype`, `ragged_rank`, `value`, `inner_shape` / `shape`).
pub fn parse_value(v: &Value) -> Result<RaggedTensor> {
    const OP: &str = "value";
    let dtype_name =
        v.get("dtype").and_then(Value::as_str).ok_or_else(|| Error::value(OP, "a value needs a `dtype`"))?;
    let dtype =
        DType::from_name(dtype_name).ok_or_else(|| Error::value(OP, format!("unknown dtype `{dtype_name}`")))?;
    let ragged_rank = v.get("ragged_rank").and_then(Value::as_u64).unwrap_or(0) as usize;
    let hint_key = if ragged_rank == 0 { "shape" } else { "inner_shape" };
    let hint: Option<Vec<usize>> = match v.get(hint_key) {
        None => None,
        Some(dims) => Some(
            dims.as_array()
                .and_then(|a| a.iter().map(|d| d.as_u64().map(|x| x as usize)).collect::<Option<Vec<_>>>())
                .ok_or_else(|| Error::value(OP, format!("`{hint_key}` must list non-negative integers")))?,
        ),
    };
    let lit = json_to_literal(v.get("value").ok_or_else(|| Error::value(OP, "a value needs a `value`"))?, dtype)?;
    RaggedTensor::from_literal_typed(&lit, Some(dtype), Some(ragged_rank), hint.as_deref())
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
        Value::Object(o) if o.contains_key("hex") => {
            let hex = o["hex"].as_str().unwrap_or("");
            Literal::Str(decode_hex(hex).ok_or_else(|| Error::value("value", format!("bad hex string `{hex}`")))?)
        }
        other => return Err(Error::value("value", format!("{other} is not a tensor element"))),
    })
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
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

/// Runs every case of every `*.json` file in `paths` (files or folders), in name order.
pub fn run_conformance(paths: &[&Path], options: impl Into<CompileOptions>) -> Result<Report> {
    let options = options.into();
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
    let mut report = Report::default();
    for f in files {
        let file = CaseFile::load(&f)?;
        for case in &file.cases {
            // A panic is a bug to report, not a reason to stop checking the other cases.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case.check(options.clone())))
                .unwrap_or_else(|_| Outcome::Fail("panicked".to_string()));
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
    map.insert("value".into(), literal(&v.to_literal()));
    Value::Object(map)
}
