//! `rt.save`: a Python graph written as a graph file (`ragged-conformance/1`, docs/graph-files.md)
//! that `rt.load`, `ragtime run` and `ragtime::case::CaseFile` read back. An IR op does not know its
//! graph-file name and attributes, so each `Graph` records them as the DSL builds its nodes
//! (`Recorded`); constants and input names come from the IR graph itself.

use std::collections::{BTreeMap, HashMap, HashSet};

use pyo3::prelude::*;
use ragtime::case::value_to_json;
use ragtime::ir::{self, ApplyId, Attr, VarId};
use ragtime::{Error, TensorType};
use serde_json::{json, Value};

use crate::errors::{to_py, IntoPy};
use crate::graph::{var_list, PyGraph, PyVar};
use crate::tensor::tensor_of;

/// How the DSL built the nodes of one graph, in the terms of graph files.
#[derive(Debug, Default)]
pub struct Recorded {
    /// The graph-file op name and attributes of each node made by `rt.apply` (and the operators).
    ops: HashMap<ApplyId, (String, BTreeMap<String, Attr>)>,
    /// The gradient variables of `rt.grad`: written as one `grad` node, not as the nodes it expanded to.
    grads: HashMap<VarId, GradNode>,
}

/// One call of `rt.grad`.
#[derive(Debug, Clone)]
struct GradNode {
    cost: VarId,
    wrt: Vec<VarId>,
    outputs: Vec<VarId>,
}

impl Recorded {
    /// Notes that `node` is the op `op` with `attrs`.
    pub fn op(&mut self, node: ApplyId, op: &str, attrs: &BTreeMap<String, Attr>) {
        self.ops.insert(node, (op.to_string(), attrs.clone()));
    }

    /// Notes that `outputs` are the gradients of `cost` with respect to `wrt`.
    pub fn grad(&mut self, cost: VarId, wrt: &[VarId], outputs: &[VarId]) {
        let node = GradNode { cost, wrt: wrt.to_vec(), outputs: outputs.to_vec() };
        for &out in outputs {
            self.grads.insert(out, node.clone());
        }
    }
}

/// What writes a variable into the file.
enum Source {
    Input,
    Constant,
    Op(ApplyId),
    Grad(GradNode),
}

/// The fields of one case of a graph file.
struct CaseParts {
    /// Each input's name and value (JSON).
    inputs: Vec<(String, Value)>,
    /// The nodes, each after the variables it reads.
    nodes: Vec<Value>,
    /// The output names.
    outputs: Vec<String>,
}

/// The case (one graph) for `outputs` as functions of `inputs`, each input given `values[i]` (the
/// format types an input by its value).
fn case_parts(
    graph: &ir::Graph,
    recorded: &Recorded,
    inputs: &[VarId],
    values: Vec<ragtime::RaggedTensor>,
    outputs: &[VarId],
) -> ragtime::Result<CaseParts> {
    let var = |id: VarId| graph.var(id).ok_or_else(|| Error::graph("save: a variable is not in its graph"));
    let source = |id: VarId| -> ragtime::Result<Source> {
        if let Some(g) = recorded.grads.get(&id) {
            return Ok(Source::Grad(g.clone()));
        }
        let v = var(id)?;
        match v.owner {
            _ if v.is_constant() => Ok(Source::Constant),
            None => Ok(Source::Input),
            Some(node) if recorded.ops.contains_key(&node) => Ok(Source::Op(node)),
            Some(_) => Err(Error::graph(format!(
                "save: `{}` was not built by an op of the vocabulary, so no graph file can say how to compute it",
                graph.var_label(id)
            ))),
        }
    };

    // Names: each input's own, then a variable's `.named()` name when it is free, else `tN`.
    let mut names: HashMap<VarId, String> = HashMap::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut input_json = Vec::new();
    for (&id, value) in inputs.iter().zip(values) {
        let v = var(id)?;
        let name = match (&v.name, source(id)?) {
            (Some(name), Source::Input) => name.clone(),
            _ => return Err(Error::graph(format!("save: `{}` is not a graph input", graph.var_label(id)))),
        };
        if !v.ty.accepts(&TensorType::of(&value)) {
            return Err(Error::dtype(
                "save",
                format!("the value of input `{name}` is {}, not a {}", TensorType::of(&value), v.ty),
            ));
        }
        if !taken.insert(name.clone()) {
            return Err(Error::graph(format!("save: input `{name}` is listed twice")));
        }
        names.insert(id, name.clone());
        input_json.push((name, value_to_json(&value)));
    }

    // The nodes the outputs need, each after its inputs (a depth-first walk: a node is written
    // once everything it reads is defined).
    let mut order: Vec<Source> = Vec::new();
    let mut defined: HashSet<VarId> = HashSet::new();
    let mut stack: Vec<(VarId, bool)> = outputs.iter().rev().map(|&o| (o, false)).collect();
    while let Some((id, ready)) = stack.pop() {
        if defined.contains(&id) {
            continue;
        }
        let src = source(id)?;
        let (reads, defines): (Vec<VarId>, Vec<VarId>) = match &src {
            Source::Input if !names.contains_key(&id) => {
                return Err(Error::graph(format!(
                    "save: the outputs read graph input `{}`, which is not among the inputs given",
                    graph.var_label(id)
                )))
            }
            Source::Input | Source::Constant => (vec![], vec![id]),
            Source::Op(node) => {
                let apply = graph.node(*node).ok_or_else(|| Error::graph("save: a node is not in its graph"))?;
                (apply.inputs.clone(), apply.outputs.clone())
            }
            Source::Grad(g) => (std::iter::once(g.cost).chain(g.wrt.iter().copied()).collect(), g.outputs.clone()),
        };
        if ready {
            defined.extend(defines);
            if matches!(src, Source::Op(_) | Source::Grad(_)) {
                order.push(src);
            }
        } else {
            stack.push((id, true));
            stack.extend(reads.into_iter().rev().filter(|r| !defined.contains(r)).map(|r| (r, false)));
        }
    }

    // Names of the other variables: their `.named()` name when it is free, else `tN`.
    for (id, v) in graph.variables() {
        if let (Some(name), false) = (&v.name, v.is_constant()) {
            if defined.contains(&id) && !names.contains_key(&id) && taken.insert(name.clone()) {
                names.insert(id, name.clone());
            }
        }
    }
    let mut fresh = 0usize;
    let mut fresh_name = || loop {
        let candidate = format!("t{fresh}");
        fresh += 1;
        if taken.insert(candidate.clone()) {
            break candidate;
        }
    };
    for src in &order {
        let outs = match src {
            Source::Op(node) => graph.node(*node).map(|n| n.outputs.clone()).unwrap_or_default(),
            Source::Grad(g) => g.outputs.clone(),
            Source::Input | Source::Constant => vec![],
        };
        for out in outs {
            names.entry(out).or_insert_with(&mut fresh_name);
        }
    }
    // A variable read by a node: its name, or the constant written inline.
    let reference = |id: VarId| -> ragtime::Result<Value> {
        match &var(id)?.constant {
            Some(c) => Ok(json!({ "const": value_to_json(c) })),
            None => names
                .get(&id)
                .map(|n| Value::String(n.clone()))
                .ok_or_else(|| Error::graph("save: a variable has no name")),
        }
    };
    let out_names = |ids: &[VarId]| -> ragtime::Result<Vec<Value>> { ids.iter().map(|&o| reference(o)).collect() };

    let mut nodes = Vec::new();
    for src in &order {
        match src {
            Source::Input | Source::Constant => {}
            Source::Op(node) => {
                let apply = graph.node(*node).ok_or_else(|| Error::graph("save: a node is not in its graph"))?;
                let (op, attrs) = &recorded.ops[node];
                let ins = apply.inputs.iter().map(|&i| reference(i)).collect::<ragtime::Result<Vec<_>>>()?;
                let mut entry = json!({ "op": op, "in": ins, "out": one_or_many(out_names(&apply.outputs)?) });
                if !attrs.is_empty() {
                    let attrs = attrs
                        .iter()
                        .map(|(k, a)| Ok((k.clone(), attr_json(op, k, a)?)))
                        .collect::<ragtime::Result<serde_json::Map<_, _>>>()?;
                    entry["attrs"] = Value::Object(attrs);
                }
                nodes.push(entry);
            }
            Source::Grad(g) => {
                if let Some(&w) = g.wrt.iter().find(|w| !inputs.contains(w)) {
                    return Err(Error::graph(format!(
                        "save: a graph file's `grad` node differentiates with respect to graph inputs only, not `{}`",
                        graph.var_label(w)
                    )));
                }
                let wrt = g.wrt.iter().map(|&w| reference(w)).collect::<ragtime::Result<Vec<_>>>()?;
                let outs = out_names(&g.outputs)?;
                nodes.push(json!({ "op": "grad", "in": [reference(g.cost)?], "out": outs, "attrs": { "wrt": wrt } }));
            }
        }
    }

    // Outputs are names: a constant output gets an `identity` node; one listed twice is refused
    // (the format lists each name once).
    let mut output_names: Vec<String> = Vec::new();
    for &id in outputs {
        let name = match reference(id)? {
            Value::String(name) => name,
            constant => {
                let name = fresh_name();
                nodes.push(json!({ "op": "identity", "in": [constant], "out": name }));
                name
            }
        };
        if output_names.contains(&name) {
            return Err(Error::graph(format!("save: output `{name}` is listed twice")));
        }
        output_names.push(name);
    }
    Ok(CaseParts { inputs: input_json, nodes, outputs: output_names })
}

/// `"out": "y"` for one output, `["a", "b"]` for several.
fn one_or_many(mut outs: Vec<Value>) -> Value {
    if outs.len() == 1 {
        outs.remove(0)
    } else {
        Value::Array(outs)
    }
}

/// An attribute as JSON (the inverse of the loader's reading of attributes).
fn attr_json(op: &str, key: &str, a: &Attr) -> ragtime::Result<Value> {
    Ok(match a {
        Attr::Null => Value::Null,
        Attr::Bool(b) => Value::Bool(*b),
        Attr::Int(i) => Value::from(*i),
        Attr::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| Error::argument(op, format!("attribute `{key}` is {f}, which JSON cannot hold")))?,
        Attr::Str(s) => Value::String(s.clone()),
        Attr::List(items) => Value::Array(items.iter().map(|a| attr_json(op, key, a)).collect::<ragtime::Result<_>>()?),
    })
}

/// Writes the graph computing `outputs` from `inputs` to the graph file `path` (JSON,
/// `ragged-conformance/1`), one case named `name` (`group/name`; the group is the part before
/// the `/`). `values` gives each input's value, in order (a list) or by input name (a dict): a
/// graph file types its inputs by their values, and `ragtime run` runs the graph on them.
#[pyfunction]
#[pyo3(signature = (path, inputs, outputs, values, name="python/graph", note=None))]
pub fn save(
    path: std::path::PathBuf,
    inputs: &Bound<'_, PyAny>,
    outputs: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    name: &str,
    note: Option<&str>,
) -> PyResult<()> {
    let (ins, outs) = (var_list(inputs)?, var_list(outputs)?);
    let graph: &Py<PyGraph> = match outs.first() {
        Some(v) => &v.graph,
        None => return Err(to_py(Error::graph("save: no outputs given"))),
    };
    if ins.iter().chain(&outs).any(|v: &PyRef<'_, PyVar>| !v.graph.is(graph)) {
        return Err(to_py(Error::graph("save: the variables belong to different graphs")));
    }
    let types = ins.iter().map(|v| v.ty()).collect::<PyResult<Vec<_>>>()?;
    let by_name = values.cast::<pyo3::types::PyDict>().ok();
    if by_name.is_none() && values.len()? != ins.len() {
        let e = Error::value("save", format!("{} values given for {} inputs", values.len()?, ins.len()));
        return Err(to_py(e));
    }
    let mut given = Vec::with_capacity(ins.len());
    for (i, (v, ty)) in ins.iter().zip(&types).enumerate() {
        let obj = match by_name {
            Some(d) => {
                let input_name = graph.get().lock().var(v.id).and_then(|x| x.name.clone()).unwrap_or_default();
                d.get_item(&input_name)?
                    .ok_or_else(|| to_py(Error::value("save", format!("no value for input `{input_name}`"))))?
            }
            None => values.get_item(i)?,
        };
        given.push(tensor_of(&obj, Some(ty.dtype()))?);
    }
    let ids = |vars: &[PyRef<'_, PyVar>]| vars.iter().map(|v| v.id).collect::<Vec<_>>();
    let parts = {
        let g = graph.get().lock();
        let recorded = graph.get().recorded();
        case_parts(&g, &recorded, &ids(&ins), given, &ids(&outs)).py_err()?
    };
    let group = name.split_once('/').map_or(name, |(g, _)| g);
    let mut case = json!({
        "name": name,
        "inputs": Value::Object(parts.inputs.into_iter().collect()),
        "nodes": parts.nodes,
        "outputs": parts.outputs,
    });
    if let Some(note) = note {
        case["note"] = Value::String(note.to_string());
    }
    let file = json!({
        "format": "ragged-conformance/1",
        "group": group,
        "generated_by": "ragtime (Python) rt.save",
        "cases": [case],
    });
    let text = serde_json::to_string_pretty(&file).map_err(|e| to_py(Error::value("save", e.to_string())))?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("save: cannot write {}: {e}", path.display())))
}
