//! `FunctionGraph`: the clone of a user graph for chosen inputs and outputs that `compile()` owns and rewrites,
//! with clients, topological order, a type-checked `replace`, and the invariant verifier.

use std::collections::HashMap;

use petgraph::graph::{DiGraph, NodeIndex};
use ragtime_core::{Error, Result};
use slotmap::SecondaryMap;

use crate::{Apply, ApplyId, Graph, VarId, Variable};

/// Who reads a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    /// Input `input` of node `node`.
    Node {
        /// The node reading the variable.
        node: ApplyId,
        /// Which of its inputs the variable is.
        input: usize,
    },
    /// Output `index` of the function (a graph-output marker).
    Output(usize),
}

/// A self-contained graph with designated inputs and outputs.
///
/// Architecture invariants (checked by [`FunctionGraph::verify`]): every node's inputs are inputs
/// of the function, constants, or outputs of nodes of this graph; the graph is acyclic; each
/// node's output types are what its op infers from its input types; `clients` lists exactly the
/// uses of each variable, including output markers. Every rewrite goes through
/// [`FunctionGraph::replace_all`], which keeps these true; dead nodes stay until
/// [`FunctionGraph::remove_dead`].
#[derive(Debug, Clone)]
pub struct FunctionGraph {
    graph: Graph,
    inputs: Vec<VarId>,
    outputs: Vec<VarId>,
    clients: SecondaryMap<VarId, Vec<Client>>,
}

impl FunctionGraph {
    /// Clones the part of `graph` that computes `outputs` from `inputs`. Fails if an output depends
    /// on a free variable that is not among `inputs`.
    pub fn new(graph: &Graph, inputs: &[VarId], outputs: &[VarId]) -> Result<Self> {
        let mut fg = FunctionGraph {
            graph: Graph::default(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            clients: SecondaryMap::new(),
        };
        let mut map: HashMap<VarId, VarId> = HashMap::new();
        for (i, &v) in inputs.iter().enumerate() {
            let var = graph.var(v).ok_or_else(|| Error::graph(format!("input {i} is not a variable of the graph")))?;
            if var.owner.is_some() || var.is_constant() {
                return Err(Error::graph(format!(
                    "input {i} ({}) is computed by the graph or constant; inputs must be free variables",
                    graph.var_label(v)
                )));
            }
            if map.contains_key(&v) {
                return Err(Error::graph(format!("input {i} ({}) is given twice", graph.var_label(v))));
            }
            let new = fg.graph.vars.insert(var.clone());
            map.insert(v, new);
            fg.inputs.push(new);
        }
        // Iterative post-order walk from the outputs, cloning each node after its inputs.
        for (i, &out) in outputs.iter().enumerate() {
            graph.var(out).ok_or_else(|| Error::graph(format!("output {i} is not a variable of the graph")))?;
            let mut stack = vec![(out, false)];
            while let Some((v, expanded)) = stack.pop() {
                if map.contains_key(&v) {
                    continue;
                }
                let var = graph.var(v).ok_or_else(|| Error::graph("a node reads a variable of another graph"))?;
                match var.owner {
                    None if var.is_constant() => {
                        let new = fg.graph.vars.insert(var.clone());
                        map.insert(v, new);
                    }
                    None => {
                        return Err(Error::graph(format!(
                            "output {i} depends on `{}`, which is not an input of the function",
                            graph.var_label(v)
                        )))
                    }
                    Some(owner) => {
                        let apply =
                            graph.node(owner).ok_or_else(|| Error::graph("a variable's owner is not in the graph"))?;
                        if expanded {
                            fg.clone_node(graph, apply, &mut map)?;
                        } else {
                            stack.push((v, true));
                            stack.extend(apply.inputs.iter().filter(|x| !map.contains_key(x)).map(|&x| (x, false)));
                        }
                    }
                }
            }
            fg.outputs.push(map[&out]);
        }
        fg.rebuild_clients();
        Ok(fg)
    }

    fn clone_node(&mut self, graph: &Graph, apply: &Apply, map: &mut HashMap<VarId, VarId>) -> Result<()> {
        if apply.outputs.iter().all(|o| map.contains_key(o)) {
            return Ok(());
        }
        let inputs = apply.inputs.iter().map(|x| map[x]).collect();
        let node = self.graph.applies.insert(Apply { op: apply.op.clone(), inputs, outputs: Vec::new() });
        let mut outs = Vec::with_capacity(apply.outputs.len());
        for &o in &apply.outputs {
            let mut var: Variable =
                graph.var(o).cloned().ok_or_else(|| Error::graph("a node's output is not in the graph"))?;
            var.owner = Some(node);
            let new = self.graph.vars.insert(var);
            map.insert(o, new);
            outs.push(new);
        }
        self.graph.applies[node].outputs = outs;
        Ok(())
    }

    fn rebuild_clients(&mut self) {
        self.clients = SecondaryMap::new();
        for (id, _) in self.graph.vars.iter() {
            self.clients.insert(id, Vec::new());
        }
        for (node, apply) in self.graph.applies.iter() {
            for (input, &v) in apply.inputs.iter().enumerate() {
                if let Some(c) = self.clients.get_mut(v) {
                    c.push(Client::Node { node, input });
                }
            }
        }
        for (i, &v) in self.outputs.iter().enumerate() {
            if let Some(c) = self.clients.get_mut(v) {
                c.push(Client::Output(i));
            }
        }
    }

    /// The arenas (read-only: rewrites go through [`FunctionGraph::replace`]).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
    /// The function's inputs, in call order.
    pub fn inputs(&self) -> &[VarId] {
        &self.inputs
    }
    /// The function's outputs, in result order.
    pub fn outputs(&self) -> &[VarId] {
        &self.outputs
    }
    /// Who reads `var` (nodes and output markers).
    pub fn clients(&self, var: VarId) -> &[Client] {
        self.clients.get(var).map(Vec::as_slice).unwrap_or(&[])
    }
    /// The variable `id`.
    pub fn var(&self, id: VarId) -> Option<&Variable> {
        self.graph.var(id)
    }
    /// The node `id`.
    pub fn node(&self, id: ApplyId) -> Option<&Apply> {
        self.graph.node(id)
    }

    /// The nodes in a topological order (every node after the nodes computing its inputs); ties
    /// keep creation order so printouts are stable. Fails on a cycle.
    pub fn toposort(&self) -> Result<Vec<ApplyId>> {
        let mut pg: DiGraph<ApplyId, ()> = DiGraph::new();
        let mut index: HashMap<ApplyId, NodeIndex> = HashMap::new();
        for (id, _) in self.graph.applies.iter() {
            index.insert(id, pg.add_node(id));
        }
        for (id, apply) in self.graph.applies.iter() {
            for &v in &apply.inputs {
                if let Some(owner) = self.graph.var(v).and_then(|x| x.owner) {
                    if let (Some(&a), Some(&b)) = (index.get(&owner), index.get(&id)) {
                        pg.add_edge(a, b, ());
                    }
                }
            }
        }
        petgraph::algo::toposort(&pg, None).map(|order| order.into_iter().map(|n| pg[n]).collect()).map_err(|cycle| {
            Error::graph(format!("the graph has a cycle through {}", self.node_label(pg[cycle.node_id()])))
        })
    }

    fn node_label(&self, id: ApplyId) -> String {
        self.graph.node(id).map(|a| a.op.name()).unwrap_or_else(|| "?".into())
    }

    /// A node as errors name it: its op, its output variables' names when the user gave any, and
    /// which function outputs it computes.
    pub fn describe_node(&self, id: ApplyId) -> String {
        let Some(apply) = self.graph.node(id) else { return "a removed node".into() };
        let mut text = apply.op.name();
        let names: Vec<String> =
            apply.outputs.iter().filter_map(|&o| self.graph.var(o).and_then(|v| v.name.clone())).collect();
        if !names.is_empty() {
            text.push_str(&format!(" (computing `{}`)", names.join("`, `")));
        }
        let outs: Vec<String> = apply
            .outputs
            .iter()
            .flat_map(|&o| self.clients(o))
            .filter_map(|c| match c {
                Client::Output(i) => Some(i.to_string()),
                Client::Node { .. } => None,
            })
            .collect();
        if !outs.is_empty() {
            text.push_str(&format!(" (function output {})", outs.join(", ")));
        }
        text
    }

    /// Makes every client of `old` read `new` instead; see [`FunctionGraph::replace_all`].
    pub fn replace(&mut self, old: VarId, new: VarId, reason: &str) -> Result<()> {
        self.replace_all(&[(old, new)], reason)
    }

    /// Makes every client of each `old` read its `new` instead: the one rewrite primitive.
    ///
    /// Transactional: every pair is checked first (both variables present, `new`'s type accepted
    /// by `old`'s, no cycle: `new` must not be computed from `old`), and nothing changes unless
    /// all pass. Clients are updated incrementally. Nodes left without clients stay until
    /// [`FunctionGraph::remove_dead`], so replacements built for later pairs survive.
    pub fn replace_all(&mut self, pairs: &[(VarId, VarId)], reason: &str) -> Result<()> {
        for &(old, new) in pairs {
            let (old_ty, new_ty) = match (self.graph.var(old), self.graph.var(new)) {
                (Some(a), Some(b)) => (&a.ty, &b.ty),
                _ => return Err(Error::graph(format!("replace ({reason}): a variable is not in this graph"))),
            };
            if !old_ty.accepts(new_ty) {
                return Err(Error::graph(format!(
                    "replace ({reason}): {} of type {old_ty} cannot be replaced by {} of type {new_ty}",
                    self.graph.var_label(old),
                    self.graph.var_label(new)
                )));
            }
            if old != new && self.depends_on(new, old) {
                return Err(Error::graph(format!(
                    "replace ({reason}): {} is computed from {}, so the replacement would make a cycle",
                    self.graph.var_label(new),
                    self.graph.var_label(old)
                )));
            }
        }
        for &(old, new) in pairs {
            if old == new {
                continue;
            }
            let moved = std::mem::take(&mut self.clients[old]);
            for &client in &moved {
                match client {
                    Client::Node { node, input } => self.graph.applies[node].inputs[input] = new,
                    Client::Output(i) => self.outputs[i] = new,
                }
            }
            self.clients[new].extend(moved);
        }
        Ok(())
    }

    /// True when `var` is `ancestor` or is computed (transitively) from it.
    pub fn depends_on(&self, var: VarId, ancestor: VarId) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![var];
        while let Some(v) = stack.pop() {
            if v == ancestor {
                return true;
            }
            if !seen.insert(v) {
                continue;
            }
            if let Some(node) = self.graph.var(v).and_then(|x| x.owner).and_then(|o| self.graph.node(o)) {
                stack.extend(node.inputs.iter().copied());
            }
        }
        false
    }

    /// Adds a node to this graph (for rewrites that build replacements); types are inferred and
    /// clients updated. Its inputs must be variables of this graph.
    pub fn add_node(&mut self, op: crate::OpRef, inputs: &[VarId]) -> Result<Vec<VarId>> {
        let node = self.graph.make_node(op, inputs)?;
        let apply = &self.graph.applies[node];
        for (input, &v) in apply.inputs.iter().enumerate() {
            if let Some(c) = self.clients.entry(v) {
                c.or_default().push(Client::Node { node, input });
            }
        }
        let outputs = apply.outputs.clone();
        for &o in &outputs {
            self.clients.insert(o, Vec::new());
        }
        Ok(outputs)
    }

    /// Adds a Constant holding `value`.
    pub fn add_constant(&mut self, value: ragtime_core::RaggedTensor) -> VarId {
        let v = self.graph.constant(value);
        self.clients.insert(v, Vec::new());
        v
    }

    /// Dead-code elimination: removes every node none of whose outputs is read (transitively),
    /// and constants nobody reads. Returns the number of nodes removed.
    pub fn remove_dead(&mut self) -> usize {
        let mut work: Vec<ApplyId> = self.graph.applies.keys().collect();
        let mut removed = 0;
        while let Some(id) = work.pop() {
            let Some(apply) = self.graph.applies.get(id) else { continue };
            if !apply.outputs.iter().all(|&o| self.clients(o).is_empty()) {
                continue;
            }
            let Some(apply) = self.graph.applies.remove(id) else { continue };
            removed += 1;
            for o in apply.outputs {
                self.graph.vars.remove(o);
                self.clients.remove(o);
            }
            for (input, v) in apply.inputs.into_iter().enumerate() {
                if let Some(list) = self.clients.get_mut(v) {
                    list.retain(|c| *c != Client::Node { node: id, input });
                    if list.is_empty() {
                        if let Some(owner) = self.graph.var(v).and_then(|x| x.owner) {
                            work.push(owner);
                        }
                    }
                }
            }
        }
        let unused: Vec<VarId> = self
            .graph
            .vars
            .iter()
            .filter(|(id, v)| v.owner.is_none() && v.is_constant() && self.clients(*id).is_empty())
            .map(|(id, _)| id)
            .collect();
        for id in unused {
            self.graph.vars.remove(id);
            self.clients.remove(id);
        }
        removed
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.graph.applies.len()
    }

    /// Checks every invariant and returns every violation found (empty when the graph is sound).
    pub fn verify(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let g = &self.graph;
        for &i in &self.inputs {
            match g.var(i) {
                Some(v) if v.owner.is_none() && !v.is_constant() => {}
                Some(_) => problems.push(format!("input {} is computed or constant", g.var_label(i))),
                None => problems.push("an input is not in the graph".into()),
            }
        }
        for (k, &o) in self.outputs.iter().enumerate() {
            if g.var(o).is_none() {
                problems.push(format!("output {k} is not in the graph"));
            }
        }
        for (id, apply) in g.applies.iter() {
            let label = apply.op.name();
            let mut types = Vec::new();
            for (k, &v) in apply.inputs.iter().enumerate() {
                match g.var(v) {
                    None => problems.push(format!("{label}: input {k} is not in the graph")),
                    Some(var) => {
                        if var.owner.is_none() && !var.is_constant() && !self.inputs.contains(&v) {
                            problems
                                .push(format!("{label}: input {k} is a free variable that is not a function input"));
                        }
                        types.push(var.ty.clone());
                    }
                }
            }
            for (k, &o) in apply.outputs.iter().enumerate() {
                match g.var(o) {
                    Some(var) if var.owner == Some(id) && var.index == k => {}
                    _ => problems.push(format!("{label}: output {k} does not point back to its node")),
                }
            }
            if let Some(inner) = apply.op.inner_graph() {
                problems.extend(inner.verify().into_iter().map(|p| format!("{label}: inner graph: {p}")));
            }
            if types.len() == apply.inputs.len() {
                match apply.op.output_types(&types) {
                    Ok(inferred) => {
                        let actual: Vec<_> =
                            apply.outputs.iter().filter_map(|&o| g.var(o).map(|v| v.ty.clone())).collect();
                        if inferred != actual {
                            problems
                                .push(format!("{label}: output types {actual:?} differ from inferred {inferred:?}"));
                        }
                    }
                    Err(e) => problems.push(format!("{label}: its input types are refused: {e}")),
                }
            }
        }
        let mut expected: SecondaryMap<VarId, Vec<Client>> = SecondaryMap::new();
        for (node, apply) in g.applies.iter() {
            for (input, &v) in apply.inputs.iter().enumerate() {
                if let Some(list) = expected.entry(v) {
                    list.or_default().push(Client::Node { node, input });
                }
            }
        }
        for (i, &v) in self.outputs.iter().enumerate() {
            if let Some(list) = expected.entry(v) {
                list.or_default().push(Client::Output(i));
            }
        }
        for (id, _) in g.vars.iter() {
            let mut want = expected.get(id).cloned().unwrap_or_default();
            let mut have = self.clients(id).to_vec();
            want.sort_by_key(|c| format!("{c:?}"));
            have.sort_by_key(|c| format!("{c:?}"));
            if want != have {
                problems.push(format!("clients of {} are stale", g.var_label(id)));
            }
        }
        if let Err(e) = self.toposort() {
            problems.push(e.to_string());
        }
        problems
    }
}
