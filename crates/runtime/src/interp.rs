//! The executor: a `FunctionGraph` compiled once into a schedule of steps over numbered value
//! slots, then run many times, each step calling its node's `perform` (fused JIT kernels are
//! nodes like any other).

use std::collections::HashMap;
use std::sync::Arc;

use ragtime_core::{Error, ExecContext, RaggedTensor, Result, TensorType};

use ragtime_graph::{Client, FunctionGraph, OpRef, VarId};

/// Where a step reads an argument.
#[derive(Debug, Clone, Copy)]
struct Arg {
    slot: usize,
    /// This is the value's last read and it is not a function output: the step takes the value
    /// out of its slot instead of cloning it, so its buffers are released as soon as the op is
    /// done with them (and an op holds the only reference to a dead intermediate).
    last_use: bool,
}

/// One node of the schedule.
#[derive(Debug, Clone)]
struct Step {
    op: OpRef,
    args: Vec<Arg>,
    outputs: Vec<usize>,
    /// The outputs' inferred types (checked when `check_types` is on).
    types: Vec<TensorType>,
    /// How errors name the node: its op, then its named outputs (`Tile{..} -> y`).
    label: Arc<str>,
}

/// A function graph compiled into a schedule, ready to run many times. Calls share nothing
/// mutable: each run has its own slots.
#[derive(Debug, Clone)]
pub struct Interpreter {
    slots: usize,
    inputs: Vec<usize>,
    constants: Vec<(usize, RaggedTensor)>,
    steps: Vec<Step>,
    outputs: Vec<usize>,
    /// Check every computed value against its inferred type.
    check_types: bool,
}

impl Interpreter {
    /// Compiles the schedule of `fg`: topological order, one slot per variable, and the last
    /// read of every intermediate.
    pub fn new(fg: &FunctionGraph) -> Result<Self> {
        let order = fg.toposort()?;
        let g = fg.graph();
        let mut slot_of: HashMap<VarId, usize> = HashMap::new();
        let mut slot = |v: VarId| {
            let next = slot_of.len();
            *slot_of.entry(v).or_insert(next)
        };
        let inputs: Vec<usize> = fg.inputs().iter().map(|&v| slot(v)).collect();
        let constants: Vec<(usize, RaggedTensor)> = g
            .variables()
            .filter_map(|(id, v)| v.constant.clone().map(|c| (id, c)))
            .map(|(id, c)| (slot(id), c))
            .collect();
        let position: HashMap<_, usize> = order.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let mut steps = Vec::with_capacity(order.len());
        for (at, &node) in order.iter().enumerate() {
            let apply = g.node(node).ok_or_else(|| Error::graph("a planned node is gone"))?;
            let mut args: Vec<Arg> = Vec::with_capacity(apply.inputs.len());
            for (k, &v) in apply.inputs.iter().enumerate() {
                let clients = fg.clients(v);
                let is_output = clients.iter().any(|c| matches!(c, Client::Output(_)));
                let last_reader = clients
                    .iter()
                    .filter_map(|c| match c {
                        Client::Node { node, .. } => position.get(node).copied(),
                        Client::Output(_) => None,
                    })
                    .max();
                // The last argument position of this node that reads `v` takes it.
                let later_here = apply.inputs[k + 1..].contains(&v);
                let last_use = !is_output
                    && last_reader == Some(at)
                    && !later_here
                    && g.var(v).is_some_and(|x| x.constant.is_none());
                args.push(Arg { slot: slot(v), last_use });
            }
            let outputs: Vec<usize> = apply.outputs.iter().map(|&o| slot(o)).collect();
            let types = apply.outputs.iter().filter_map(|&o| g.var(o).map(|x| x.ty.clone())).collect();
            let names: Vec<&str> = apply.outputs.iter().filter_map(|&o| g.var(o)?.name.as_deref()).collect();
            let label =
                if names.is_empty() { apply.op.name() } else { format!("{} -> {}", apply.op.name(), names.join(", ")) };
            steps.push(Step { op: apply.op.clone(), args, outputs, types, label: label.into() });
        }
        let outputs = fg.outputs().iter().map(|&v| slot(v)).collect();
        Ok(Interpreter { slots: slot_of.len(), inputs, constants, steps, outputs, check_types: cfg!(debug_assertions) })
    }

    /// Checks (or not) every computed value against its node's inferred type; on by default in
    /// debug builds, and in `Mode::Debug`.
    pub fn checking_types(mut self, on: bool) -> Self {
        self.check_types = on;
        self
    }

    /// The output types for inputs of types `inputs`: each node's type inference
    /// ([`ragtime_graph::Op::output_types`]) in schedule order, constants typed by their values. How a
    /// fused op's inner graph infers its types; errors name the node that refused.
    pub fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        if inputs.len() != self.inputs.len() {
            return Err(Error::graph(format!("expected {} input types, got {}", self.inputs.len(), inputs.len())));
        }
        let mut types: Vec<Option<TensorType>> = vec![None; self.slots];
        for (&s, ty) in self.inputs.iter().zip(inputs) {
            types[s] = Some(ty.clone());
        }
        for (s, c) in &self.constants {
            types[*s] = Some(TensorType::of(c));
        }
        let missing = || Error::graph("a node's input type was not inferred");
        for step in &self.steps {
            let args =
                step.args.iter().map(|a| types[a.slot].clone().ok_or_else(missing)).collect::<Result<Vec<_>>>()?;
            let outs = step.op.output_types(&args).map_err(|e| e.at_node(&*step.label))?;
            if outs.len() != step.outputs.len() {
                return Err(Error::graph(format!(
                    "{} infers {} outputs, expected {}",
                    step.op.name(),
                    outs.len(),
                    step.outputs.len()
                )));
            }
            for (&s, ty) in step.outputs.iter().zip(outs) {
                types[s] = Some(ty);
            }
        }
        self.outputs.iter().map(|&s| types[s].clone().ok_or_else(missing)).collect()
    }

    /// Runs the schedule on `inputs` (already checked against the input types by the caller)
    /// under the call's context `ctx`; `fg` is the graph it was compiled from. Each op runs with
    /// `ctx` naming its node, every value it computes is checked against `ctx`'s limits, and
    /// errors are wrapped with the node that raised them (the one place that names nodes). Run
    /// inside a node (a fused op's inner graph), the context names that node, then the inner one.
    pub fn run(&self, fg: &FunctionGraph, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        if inputs.len() != self.inputs.len() || fg.inputs().len() != self.inputs.len() {
            return Err(Error::argument(
                "call",
                format!("expected {} inputs, got {}", self.inputs.len(), inputs.len()),
            ));
        }
        let mut values: Vec<Option<RaggedTensor>> = vec![None; self.slots];
        for (&s, value) in self.inputs.iter().zip(inputs) {
            values[s] = Some(value.clone());
        }
        for (s, c) in &self.constants {
            values[*s] = Some(c.clone());
        }
        let missing = || Error::graph("a node's input was not computed");
        // Per-node wall times of an outermost run, when asked (see [`node_times_wanted`]).
        let mut times = (ctx.node().is_none() && node_times_wanted()).then(|| Vec::with_capacity(self.steps.len()));
        for step in &self.steps {
            let started = times.as_ref().map(|_| std::time::Instant::now());
            let args = step
                .args
                .iter()
                .map(|a| if a.last_use { values[a.slot].take() } else { values[a.slot].clone() }.ok_or_else(missing))
                .collect::<Result<Vec<_>>>()?;
            let node_ctx = match ctx.node() {
                None => ctx.at_node(&step.label),
                Some(outer) => ctx.at_node(&Arc::from(format!("{outer} / {}", step.label))),
            };
            let outs = step.op.perform(&node_ctx, &args).map_err(|e| e.at_node(&*step.label))?;
            drop(args);
            if outs.len() != step.outputs.len() {
                return Err(Error::graph(format!(
                    "{} returned {} outputs, expected {}",
                    step.op.name(),
                    outs.len(),
                    step.outputs.len()
                )));
            }
            for ((&s, value), ty) in step.outputs.iter().zip(outs).zip(&step.types) {
                // Values built by context-free constructors are bounded by the machine only.
                ctx.limits().check_value("output", &value).map_err(|e| e.at_node(&*step.label))?;
                // Every op is checked against its own type inference when asked.
                if self.check_types {
                    ty.check(&value, "output").map_err(|e| {
                        Error::graph(format!("{} computed a value that breaks its inferred type: {e}", step.op.name()))
                    })?;
                }
                values[s] = Some(value);
            }
            if let (Some(times), Some(started)) = (times.as_mut(), started) {
                times.push(started.elapsed());
            }
        }
        if let Some(times) = times {
            print_node_times(&self.steps, &times);
        }
        // An output's value is moved out at its last mention (a slot may be several outputs).
        (0..self.outputs.len())
            .map(|k| {
                let s = self.outputs[k];
                let value = if self.outputs[k + 1..].contains(&s) { values[s].clone() } else { values[s].take() };
                value.ok_or_else(|| Error::graph("an output was not computed"))
            })
            .collect()
    }
}

/// Whether `RAGTIME_NODE_TIMES=1` asks every outermost run to print its nodes' wall times (a
/// profiling aid: which node of a function takes the time, on how many threads).
pub fn node_times_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var_os("RAGTIME_NODE_TIMES").is_some_and(|v| v == "1"))
}

/// One line per node on stderr: `node-time <microseconds> <step> <label>`, the whole run's
/// lines printed at once.
fn print_node_times(steps: &[Step], times: &[std::time::Duration]) {
    let mut text = String::new();
    for (k, (step, t)) in steps.iter().zip(times).enumerate() {
        text.push_str(&format!("node-time {:>9.1} {k:>3} {}\n", t.as_secs_f64() * 1e6, step.label));
    }
    eprint!("{text}");
}
