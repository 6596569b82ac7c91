//! The user's graph: `Variable`s and `Apply` nodes in slotmap arenas; `make_node` infers types as nodes are built.

use std::fmt;

use ragtime_core::{Error, RaggedTensor, Result, TensorType};
use slotmap::SlotMap;

use crate::OpRef;

slotmap::new_key_type! {
    /// A typed reference to a [`Variable`] of a [`Graph`].
    pub struct VarId;
    /// A typed reference to an [`Apply`] node of a [`Graph`].
    pub struct ApplyId;
}

/// A value flowing through the graph (Theano's Variable): its type, the node that computes it
/// (`owner`, output `index`), an optional name, and data if it is a Constant.
#[derive(Debug, Clone)]
pub struct Variable {
    /// The constraints its values meet.
    pub ty: TensorType,
    /// The node computing it; `None` for graph inputs and constants.
    pub owner: Option<ApplyId>,
    /// Which output of `owner` it is.
    pub index: usize,
    /// A name for printing and graph files.
    pub name: Option<String>,
    /// The value of a Constant (rewrites may fold it).
    pub constant: Option<RaggedTensor>,
}

impl Variable {
    /// True for a Constant.
    pub fn is_constant(&self) -> bool {
        self.constant.is_some()
    }
}

/// One application of an op to input variables, producing output variables (Theano's Apply).
#[derive(Debug, Clone)]
pub struct Apply {
    /// The op applied.
    pub op: OpRef,
    /// Its inputs, in order.
    pub inputs: Vec<VarId>,
    /// Its outputs, in order (each has `owner == this node` and its position as `index`).
    pub outputs: Vec<VarId>,
}

/// A graph under construction: arenas of variables and nodes. Nodes only point to variables created
/// before them, so a `Graph` built through this API is acyclic by construction.
#[derive(Clone, Default)]
pub struct Graph {
    pub(crate) vars: SlotMap<VarId, Variable>,
    pub(crate) applies: SlotMap<ApplyId, Apply>,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph").field("variables", &self.vars.len()).field("nodes", &self.applies.len()).finish()
    }
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// A free variable (a graph input) of type `ty`; fails if `ty` breaks the `TensorType` invariant
    /// or another input of this graph has the same name (graph files, Parquet inputs and SQL
    /// arguments bind inputs by name).
    pub fn input(&mut self, name: impl Into<String>, ty: TensorType) -> Result<VarId> {
        let name = name.into();
        ty.validate().map_err(|e| e.at_node(format!("input {name}")))?;
        let inputs = self.vars.values().filter(|v| v.owner.is_none() && v.constant.is_none());
        if let Some((k, _)) = inputs.enumerate().find(|(_, v)| v.name.as_deref() == Some(name.as_str())) {
            return Err(Error::graph(format!(
                "input `{name}` is declared twice: input {k} of this graph already has that name (inputs bind by \
                 name in graph files, Parquet inputs and SQL functions: give each its own)"
            )));
        }
        Ok(self.vars.insert(Variable { ty, owner: None, index: 0, name: Some(name), constant: None }))
    }

    /// A Constant holding `value`, typed exactly as the value.
    pub fn constant(&mut self, value: RaggedTensor) -> VarId {
        let ty = TensorType::of(&value);
        self.vars.insert(Variable { ty, owner: None, index: 0, name: None, constant: Some(value) })
    }

    /// Applies `op` to `inputs` (Theano's `make_node`): infers the output types, refusing bad input
    /// types before anything runs, and returns the new node.
    pub fn make_node(&mut self, op: OpRef, inputs: &[VarId]) -> Result<ApplyId> {
        let mut types = Vec::with_capacity(inputs.len());
        for (i, &v) in inputs.iter().enumerate() {
            let var = self
                .vars
                .get(v)
                .ok_or_else(|| Error::graph(format!("input {i} of {} is not a variable of this graph", op.name())))?;
            types.push(var.ty.clone());
        }
        let out_types = op.output_types(&types).map_err(|e| e.at_node(op.name()))?;
        let node = self.applies.insert(Apply { op, inputs: inputs.to_vec(), outputs: Vec::new() });
        let outputs = out_types
            .into_iter()
            .enumerate()
            .map(|(index, ty)| self.vars.insert(Variable { ty, owner: Some(node), index, name: None, constant: None }))
            .collect();
        self.applies[node].outputs = outputs;
        Ok(node)
    }

    /// Applies `op` and returns its output variables.
    pub fn apply(&mut self, op: OpRef, inputs: &[VarId]) -> Result<Vec<VarId>> {
        let node = self.make_node(op, inputs)?;
        Ok(self.applies[node].outputs.clone())
    }

    /// Names a variable (shown by `debugprint`).
    pub fn set_name(&mut self, var: VarId, name: impl Into<String>) {
        if let Some(v) = self.vars.get_mut(var) {
            v.name = Some(name.into());
        }
    }

    /// The variable `id`, if it belongs to this graph.
    pub fn var(&self, id: VarId) -> Option<&Variable> {
        self.vars.get(id)
    }

    /// The node `id`, if it belongs to this graph.
    pub fn node(&self, id: ApplyId) -> Option<&Apply> {
        self.applies.get(id)
    }

    /// Every variable.
    pub fn variables(&self) -> impl Iterator<Item = (VarId, &Variable)> {
        self.vars.iter()
    }

    /// Every node.
    pub fn nodes(&self) -> impl Iterator<Item = (ApplyId, &Apply)> {
        self.applies.iter()
    }

    /// A short label for a node: the op name, with `.k` for output k of a multi-output op.
    pub fn var_label(&self, id: VarId) -> String {
        let Some(v) = self.vars.get(id) else { return "?".into() };
        match v.owner.and_then(|o| self.applies.get(o)) {
            Some(a) if a.outputs.len() > 1 => format!("{}.{}", a.op.name(), v.index),
            Some(a) => a.op.name(),
            None => match (&v.name, &v.constant) {
                (Some(n), _) => n.clone(),
                (None, Some(c)) => constant_label(c),
                (None, None) => "<input>".into(),
            },
        }
    }
}

/// How a constant shows in printouts: its value when small, its type otherwise.
pub fn constant_label(c: &RaggedTensor) -> String {
    if c.flat_values().len() <= 8 {
        format!("Constant{{{}}}", c.values_display())
    } else {
        format!("Constant{{{}}}", TensorType::of(c))
    }
}
