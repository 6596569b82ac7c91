//! Compiled functions in Python: `rt.compile` and `Function.__call__`, which converts the inputs
//! while holding the GIL and runs the compiled graph with the GIL released.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use ragtime::{CompileOptions, Function, Mode, RaggedTensor};

use crate::errors::IntoPy;
use crate::graph::{var_list, PyGraph, PyTensorType};
use crate::tensor::{tensor_of, PyRagged};

/// A compiled function: call it with one value per input, positionally or by input name.
#[pyclass(frozen, name = "Function", module = "ragtime")]
#[derive(Debug)]
pub struct PyFunction {
    /// The Rust function.
    pub function: Function,
    /// Whether `compile` was given one output variable rather than a list (the call then
    /// returns one value, as in Theano).
    pub single_output: bool,
}

/// Compile options from the Python keywords.
pub fn options_of(
    mode: &str,
    excluding: Vec<String>,
    including: Vec<String>,
    threads: Option<usize>,
) -> PyResult<CompileOptions> {
    let mode = Mode::from_name(mode).ok_or_else(|| {
        PyValueError::new_err(format!("unknown mode `{mode}` (expected fast_run, fast_compile or debug)"))
    })?;
    let mut options = CompileOptions::from(mode);
    for name in excluding {
        options = options.excluding(name);
    }
    for name in including {
        options = options.including(name);
    }
    if let Some(n) = threads {
        options = options.threads(n);
    }
    Ok(options)
}

/// Compiles `outputs` (one variable or a list) as a function of `inputs` (a list of graph
/// inputs). `mode` is `fast_run` (default), `fast_compile` or `debug`; `excluding` / `including`
/// switch rewrites off or on by name or tag; `threads` caps the threads of one call.
/// `retain_freed_memory()`: asks the process's allocator (glibc) to keep freed memory for reuse
/// instead of returning large blocks to the kernel, so that calls on large data in a loop reuse
/// the pages the last call freed instead of faulting in and zeroing fresh ones (tens of
/// milliseconds per call on 10 million values). Process-wide, so never applied on its own: an
/// application opts in, as `ragtime bench` does. Returns whether it was applied (glibc only).
#[pyfunction]
pub fn retain_freed_memory() -> bool {
    ragtime::ir::jit::retain_freed_memory()
}

#[pyfunction]
#[pyo3(signature = (inputs, outputs, mode="fast_run", excluding=Vec::new(), including=Vec::new(), threads=None))]
pub fn compile(
    inputs: &Bound<'_, PyAny>,
    outputs: &Bound<'_, PyAny>,
    mode: &str,
    excluding: Vec<String>,
    including: Vec<String>,
    threads: Option<usize>,
) -> PyResult<PyFunction> {
    let options = options_of(mode, excluding, including, threads)?;
    let single_output = outputs.cast::<crate::graph::PyVar>().is_ok();
    let (ins, outs) = (var_list(inputs)?, var_list(outputs)?);
    let graph: &Py<PyGraph> = match ins.first().or(outs.first()) {
        Some(v) => &v.graph,
        None => return Err(PyValueError::new_err("compile needs at least one input or output")),
    };
    if ins.iter().chain(&outs).any(|v| !v.graph.is(graph)) {
        return Err(crate::errors::to_py(ragtime::Error::graph("compile: the variables belong to different graphs")));
    }
    let ids = |vars: &[PyRef<'_, crate::graph::PyVar>]| vars.iter().map(|v| v.id).collect::<Vec<_>>();
    let function = Function::from_graph(&graph.get().lock(), &ids(&ins), &ids(&outs), options).py_err()?;
    Ok(PyFunction { function, single_output })
}

impl PyFunction {
    /// The call's inputs in order, from positional and keyword arguments.
    fn inputs(&self, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<RaggedTensor>> {
        let names = self.function.input_names();
        let types = self.function.input_types();
        let mut slots: Vec<Option<Bound<'_, PyAny>>> = vec![None; names.len()];
        if args.len() > names.len() {
            return Err(PyTypeError::new_err(format!(
                "the function takes {} inputs ({}), {} were given",
                names.len(),
                names.join(", "),
                args.len()
            )));
        }
        for (slot, arg) in slots.iter_mut().zip(args.iter()) {
            *slot = Some(arg);
        }
        if let Some(kwargs) = kwargs {
            for (k, v) in kwargs.iter() {
                let k: String = k.extract()?;
                let i = names.iter().position(|n| *n == k).ok_or_else(|| {
                    PyTypeError::new_err(format!("no input named `{k}` (inputs: {})", names.join(", ")))
                })?;
                if slots[i].replace(v).is_some() {
                    return Err(PyTypeError::new_err(format!("input `{k}` given twice")));
                }
            }
        }
        slots
            .into_iter()
            .enumerate()
            .map(|(i, slot)| match slot {
                Some(obj) => tensor_of(&obj, Some(types[i].dtype())),
                None => Err(PyTypeError::new_err(format!("missing input `{}`", names[i]))),
            })
            .collect()
    }
}

#[pymethods]
impl PyFunction {
    /// Runs the function (the GIL is released while it runs): one `RaggedTensor`, or a list when
    /// compiled with a list of outputs.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inputs = self.inputs(args, kwargs)?;
        let outputs = py.detach(|| self.function.call(&inputs)).py_err()?;
        let mut values = outputs.into_iter().map(|value| Bound::new(py, PyRagged { value }));
        if self.single_output {
            if let Some(v) = values.next() {
                return Ok(v?.into_any());
            }
        }
        Ok(pyo3::types::PyList::new(py, values.collect::<PyResult<Vec<_>>>()?)?.into_any())
    }

    /// Seconds per call when Rust calls the function `repeat` times in a loop on these inputs
    /// (converted once; the GIL released): the baseline the bindings' per-call overhead is
    /// measured against. `repeat` is keyword-only.
    #[pyo3(signature = (*args, repeat=1000, **kwargs))]
    fn time_calls(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        repeat: usize,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<f64> {
        let inputs = self.inputs(args, kwargs)?;
        let repeat = repeat.max(1);
        py.detach(|| {
            let start = std::time::Instant::now();
            for _ in 0..repeat {
                self.function.call(&inputs)?;
            }
            Ok(start.elapsed().as_secs_f64() / repeat as f64)
        })
        .py_err()
    }

    /// The optimized graph as text (Theano's `debugprint`).
    #[pyo3(signature = (types=false))]
    fn debugprint(&self, types: bool) -> String {
        if types {
            self.function.debugprint_types()
        } else {
            self.function.debugprint()
        }
    }

    /// The input names, in call order.
    #[getter]
    fn input_names(&self) -> Vec<String> {
        self.function.input_names().to_vec()
    }

    /// The input types, in call order.
    #[getter]
    fn input_types(&self) -> Vec<PyTensorType> {
        self.function.input_types().iter().map(|ty| PyTensorType { ty: ty.clone() }).collect()
    }

    /// The output types.
    #[getter]
    fn output_types(&self) -> Vec<PyTensorType> {
        self.function.output_types().into_iter().map(|ty| PyTensorType { ty }).collect()
    }

    /// The mode it was compiled in.
    #[getter]
    fn mode(&self) -> &'static str {
        self.function.mode().name()
    }

    /// How many fused loops run as JIT-compiled machine code.
    #[getter]
    fn jit_kernels(&self) -> usize {
        self.function.jit_kernels()
    }

    fn __repr__(&self) -> String {
        format!(
            "<Function ({}) -> {} outputs, mode {}>",
            self.function.input_names().join(", "),
            self.function.num_outputs(),
            self.function.mode().name()
        )
    }
}
