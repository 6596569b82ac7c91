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
    Node { node: ApplyId, input: usize },
    /// Output `index` of the function (a graph-output marker).
    Output(usize),
}

/// A self-contained graph with designated inputs and outputs.
///
/// Architecture invariants (checked by [`FunctionGraph::verify`]): every node's inputs are inputs
/// of the function, constants, or outputs of nodes of this graph; the graph is acyclic; each
/// node's output types are what its op infers from its input types; `clients` lists exactly the
/// uses of each variable, including output markers. Every rewrite goes through
/// [`FunctionGraph::replace`], which keeps these true.
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

    /// Makes every client of `old` read `new` instead (the one rewrite primitive). `new`'s type must
    /// be accepted by `old`'s type; nodes left without clients are removed.
    pub fn replace(&mut self, old: VarId, new: VarId, reason: &str) -> Result<()> {
        let (old_ty, new_ty) = match (self.graph.var(old), self.graph.var(new)) {
            (Some(a), Some(b)) => (a.ty.clone(), b.ty.clone()),
            _ => return Err(Error::graph(format!("replace ({reason}): a variable is not in this graph"))),
        };
        if !old_ty.accepts(&new_ty) {
            return Err(Error::graph(format!(
                "replace ({reason}): {} of type {old_ty} cannot be replaced by {} of type {new_ty}",
                self.graph.var_label(old),
                self.graph.var_label(new)
            )));
        }
        for client in self.clients(old).to_vec() {
            match client {
                Client::Node { node, input } => self.graph.applies[node].inputs[input] = new,
                Client::Output(i) => self.outputs[i] = new,
            }
        }
        self.prune();
        self.rebuild_clients();
        Ok(())
    }

    /// Adds a node to this graph (for rewrites that build replacements); types are inferred.
    pub fn add_node(&mut self, op: crate::OpRef, inputs: &[VarId]) -> Result<Vec<VarId>> {
        let outs = self.graph.apply(op, inputs)?;
        self.rebuild_clients();
        Ok(outs)
    }

    /// Removes nodes whose outputs nobody reads, and constants nobody reads.
    fn prune(&mut self) {
        loop {
            self.rebuild_clients();
            let dead: Vec<ApplyId> = self
                .graph
                .applies
                .iter()
                .filter(|(_, a)| a.outputs.iter().all(|&o| self.clients(o).is_empty()))
                .map(|(id, _)| id)
                .collect();
            if dead.is_empty() {
                break;
            }
            for id in dead {
                if let Some(a) = self.graph.applies.remove(id) {
                    for o in a.outputs {
                        self.graph.vars.remove(o);
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
        }
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
            if types.len() == apply.inputs.len() {
                match apply.op.infer(&types) {
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
