//! `debugprint`: PyTensor's text format for graphs (`Add [id A]`, a tree drawn with `├─ └─ │`).

use std::collections::HashMap;
use std::fmt::Write;

use crate::{ApplyId, FunctionGraph, Graph, VarId};

/// What `debugprint` shows besides the tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// Show each variable's type, as `<float32[?, *]>`.
    pub types: bool,
    /// Show each node's position in the evaluation order (compiled functions).
    pub positions: bool,
}

/// PyTensor-style labels: A..Z, BA..BZ, ...
fn id_label(mut n: usize) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'A' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// Prints one graph (the function's, or one inner graph); ids continue from `first_id`, so the
/// ids of inner graphs do not repeat the outer graph's.
struct Printer<'g> {
    graph: &'g Graph,
    opts: PrintOptions,
    positions: HashMap<ApplyId, usize>,
    first_id: usize,
    ids: HashMap<VarId, String>,
    expanded: std::collections::HashSet<ApplyId>,
    /// The fused nodes met, titled as they print, with their inner graphs.
    inner: Vec<(String, &'g FunctionGraph)>,
    out: String,
}

impl<'g> Printer<'g> {
    fn new(graph: &'g Graph, opts: PrintOptions, positions: HashMap<ApplyId, usize>, first_id: usize) -> Self {
        Printer {
            graph,
            opts,
            positions,
            first_id,
            ids: HashMap::new(),
            expanded: Default::default(),
            inner: Vec::new(),
            out: String::new(),
        }
    }

    /// The first id after those this printer gave.
    fn next_id(&self) -> usize {
        self.first_id + self.ids.len()
    }

    fn id(&mut self, v: VarId) -> String {
        // Outputs of one node share the node's id, as in PyTensor.
        let key = match self.graph.var(v).and_then(|x| x.owner) {
            Some(owner) => self.graph.node(owner).and_then(|a| a.outputs.first().copied()).unwrap_or(v),
            None => v,
        };
        let next = self.next_id();
        self.ids.entry(key).or_insert_with(|| id_label(next)).clone()
    }

    /// Prints the tree under `root` in pre-order with an explicit stack (no recursion, so a chain
    /// of any length cannot overflow the stack). Past [`MAX_INDENT`] levels the tree stops
    /// indenting, so the output stays linear in the number of nodes.
    fn tree(&mut self, root: VarId, prefix: &str, connector: &str, child_prefix: &str) {
        let mut stack = vec![(root, prefix.to_string(), connector, child_prefix.to_string(), 0usize)];
        while let Some((v, prefix, connector, child_prefix, depth)) = stack.pop() {
            let Some(inputs) = self.line(v, &prefix, connector) else { continue };
            let indent = depth < MAX_INDENT;
            for (k, &input) in inputs.iter().enumerate().rev() {
                let last = k + 1 == inputs.len();
                let (conn, next) = if last { ("└─ ", "   ") } else { ("├─ ", "│  ") };
                let grandchild = if indent { format!("{child_prefix}{next}") } else { child_prefix.clone() };
                stack.push((input, child_prefix.clone(), conn, grandchild, depth + 1));
            }
        }
    }

    /// Writes the line of `v`; gives the inputs to print below it when its node is expanded here.
    fn line(&mut self, v: VarId, prefix: &str, connector: &str) -> Option<Vec<VarId>> {
        let id = self.id(v);
        let label = self.graph.var_label(v);
        let var = self.graph.var(v);
        let mut line = format!("{prefix}{connector}{label} [id {id}]");
        let owner = var.and_then(|x| x.owner);
        if let (Some(owner), true) = (owner, self.opts.positions) {
            if let Some(p) = self.positions.get(&owner) {
                let _ = write!(line, " {p}");
            }
        }
        if let Some(var) = var {
            if self.opts.types {
                let _ = write!(line, " <{}>", var.ty);
            }
            if let (Some(name), Some(_)) = (&var.name, owner) {
                let _ = write!(line, " '{name}'");
            }
        }
        let Some(owner) = owner else {
            self.out.push_str(&line);
            self.out.push('\n');
            return None;
        };
        if !self.expanded.insert(owner) {
            self.out.push_str(&line);
            self.out.push_str(" ···\n");
            return None;
        }
        self.out.push_str(&line);
        self.out.push('\n');
        let apply = self.graph.node(owner)?;
        if let Some(inner) = apply.op.inner_graph() {
            self.inner.push((format!("{} [id {id}]", apply.op.name()), inner));
        }
        Some(apply.inputs.clone())
    }
}

/// How many levels the tree indents; deeper nodes are drawn at that indentation.
pub const MAX_INDENT: usize = 100;

fn print(graph: &Graph, outputs: &[VarId], positions: HashMap<ApplyId, usize>, opts: PrintOptions) -> String {
    let mut p = Printer::new(graph, opts, positions, 0);
    for &o in outputs {
        p.tree(o, "", "", " ");
    }
    let (mut out, mut next_id, mut queue) = (p.out, p.first_id + p.ids.len(), p.inner);
    // Each fused node's inner graph, under its title, one output a root (`←`, as PyTensor
    // draws a Composite's inner graph); inner graphs met there follow.
    let mut k = 0;
    while k < queue.len() {
        if k == 0 {
            out.push_str("\nInner graphs:\n");
        }
        let (title, inner) = (queue[k].0.clone(), queue[k].1);
        let _ = writeln!(out, "\n{title}");
        let mut q = Printer::new(inner.graph(), opts, HashMap::new(), next_id);
        for &o in inner.outputs() {
            q.tree(o, " ", "← ", "    ");
        }
        next_id = q.next_id();
        out.push_str(&q.out);
        queue.extend(q.inner);
        k += 1;
    }
    out
}

/// Prints the subgraph of `graph` that computes `outputs`.
pub fn debugprint(graph: &Graph, outputs: &[VarId], opts: PrintOptions) -> String {
    print(graph, outputs, HashMap::new(), opts)
}

/// Prints a function graph; with `opts.positions`, each node shows its position in the
/// evaluation order.
pub fn debugprint_function(fg: &FunctionGraph, opts: PrintOptions) -> String {
    let positions = if opts.positions {
        fg.toposort().unwrap_or_default().into_iter().enumerate().map(|(i, n)| (n, i)).collect()
    } else {
        HashMap::new()
    };
    print(fg.graph(), fg.outputs(), positions, opts)
}

#[cfg(test)]
mod tests {
    use super::id_label;

    #[test]
    fn labels_count_in_base_26() {
        assert_eq!(id_label(0), "A");
        assert_eq!(id_label(25), "Z");
        assert_eq!(id_label(26), "BA");
        assert_eq!(id_label(27), "BB");
    }
}
