//! `compile()` and `Function`: a graph cloned into a `FunctionGraph` and run on data.

use std::fmt;

use ragtime_core::{Error, RaggedTensor, Result, TensorType};
use ragtime_graph::{debugprint_function, FunctionGraph, Graph, Interpreter, PrintOptions, VarId};

/// How a graph is compiled and run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// No rewrites; the reference interpreter runs each op's `perform`.
    #[default]
    FastCompile,
    /// As `FastCompile`, plus the graph verifier at compile time and a check of every computed
    /// value against its inferred type on every call: for debugging ops and graphs.
    Debug,
}

/// A compiled graph: call it on values. `Function` is `Send + Sync`; calls share nothing mutable.
#[derive(Clone)]
pub struct Function {
    fg: FunctionGraph,
    interpreter: Interpreter,
    input_types: Vec<TensorType>,
    input_names: Vec<String>,
    mode: Mode,
    /// Bytes one call may allocate for data-sized buffers (`None`: the process default,
    /// `ragtime_core::limits::default_call_budget`).
    memory_budget: Option<usize>,
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function").field("inputs", &self.input_names).field("mode", &self.mode).finish()
    }
}

impl Function {
    /// Compiles the part of `graph` computing `outputs` from `inputs`.
    pub fn from_graph(graph: &Graph, inputs: &[VarId], outputs: &[VarId], mode: Mode) -> Result<Self> {
        let fg = FunctionGraph::new(graph, inputs, outputs)?;
        // The verifier is cheap next to running a graph: debug builds always run it.
        if mode == Mode::Debug || cfg!(debug_assertions) {
            let problems = fg.verify();
            if !problems.is_empty() {
                return Err(Error::graph(format!("the verifier found: {}", problems.join("; "))));
            }
        }
        let interpreter = Interpreter::new(&fg)?;
        let (input_types, input_names) = fg
            .inputs()
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let var = fg.var(v).ok_or_else(|| Error::graph("an input vanished"))?;
                Ok((var.ty.clone(), var.name.clone().unwrap_or_else(|| format!("input{i}"))))
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        Ok(Function { fg, interpreter, input_types, input_names, mode, memory_budget: None })
    }

    /// Runs the function. Every input is checked against its type before any data is touched;
    /// errors name the input or the node that failed.
    pub fn call(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        if inputs.len() != self.input_types.len() {
            return Err(Error::argument(
                "call",
                format!(
                    "the function takes {} inputs ({}), got {}",
                    self.input_types.len(),
                    self.input_names.join(", "),
                    inputs.len()
                ),
            ));
        }
        for (i, (value, ty)) in inputs.iter().zip(&self.input_types).enumerate() {
            ty.check(value, &format!("input {i} (\"{}\")", self.input_names[i]))?;
        }
        let budget = self.memory_budget.unwrap_or_else(ragtime_core::limits::default_call_budget);
        let _budget = ragtime_core::limits::enter_budget(budget);
        let outputs = self.interpreter.run(&self.fg, inputs)?;
        if self.mode == Mode::Debug {
            for (k, (&v, value)) in self.fg.outputs().iter().zip(&outputs).enumerate() {
                if let Some(var) = self.fg.var(v) {
                    var.ty.check(value, &format!("output {k}"))?;
                }
            }
        }
        Ok(outputs)
    }

    /// The optimized graph, in PyTensor's `debugprint` format with each node's position in the
    /// evaluation order.
    pub fn debugprint(&self) -> String {
        debugprint_function(&self.fg, PrintOptions { types: false, positions: true })
    }

    /// `debugprint` with each variable's type.
    pub fn debugprint_types(&self) -> String {
        debugprint_function(&self.fg, PrintOptions { types: true, positions: true })
    }

    /// The function's graph.
    pub fn fgraph(&self) -> &FunctionGraph {
        &self.fg
    }

    /// The input types, in call order.
    pub fn input_types(&self) -> &[TensorType] {
        &self.input_types
    }

    /// The same function with a per-call memory budget of `bytes`: an op whose output or scratch
    /// would take the call past it is refused (`invalid_argument`) before allocating. Without one,
    /// calls use the process default (`ragtime_core::limits::set_default_call_budget`, 4 GiB).
    pub fn with_memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = Some(bytes);
        self
    }

    /// The mode it was compiled in.
    pub fn mode(&self) -> Mode {
        self.mode
    }
}

#[cfg(test)]
mod tests {
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn function_is_send_and_sync() {
        assert_send_sync::<super::Function>();
    }
}
