//! Graph files in Python: `rt.load(path)` gives the cases of a `ragged-conformance/1` file, each
//! built into a compiled `Function` with its input values and expectation, so the conformance
//! suites run through the bindings.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use ragtime::case::{CaseFile, Expectation};

use crate::errors::IntoPy;
use crate::function::{options_of, PyFunction};
use crate::tensor::PyRagged;

/// One case of a graph file: a graph with its inputs, and what running it must give.
#[pyclass(frozen, name = "Case", module = "ragtime")]
#[derive(Debug)]
pub struct PyCase {
    case: ragtime::case::Case,
}

/// A case built: the compiled function, its input values and its output names.
#[pyclass(frozen, name = "BuiltCase", module = "ragtime")]
#[derive(Debug)]
pub struct PyBuiltCase {
    /// The compiled function (returns a list of outputs).
    #[pyo3(get)]
    function: Py<PyFunction>,
    /// The input values in call order.
    #[pyo3(get)]
    inputs: Vec<Py<PyRagged>>,
    /// The output names in result order.
    #[pyo3(get)]
    output_names: Vec<String>,
    /// The graph as the file describes it, before optimization, with types.
    #[pyo3(get)]
    user_debugprint: String,
}

#[pymethods]
impl PyCase {
    /// `group/name`.
    #[getter]
    fn name(&self) -> &str {
        &self.case.name
    }

    /// The case's remark.
    #[getter]
    fn note(&self) -> Option<&str> {
        self.case.note.as_deref()
    }

    /// What the case expects: a dict of output values, the error kind's name (a `str`, such as
    /// `"invalid_row_partition"`), or `None`.
    fn expectation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.case.expectation().py_err()? {
            Expectation::Values(values) => {
                let d = PyDict::new(py);
                for (name, value) in values {
                    d.set_item(name, PyRagged { value })?;
                }
                d.into_any()
            }
            Expectation::Error(kind) => kind.into_pyobject(py)?.into_any(),
            Expectation::Nothing => py.None().into_bound(py),
        })
    }

    /// Builds the graph through the op registry and compiles it (errors raise the exception of
    /// their kind).
    #[pyo3(signature = (mode="fast_run", excluding=Vec::new(), including=Vec::new(), threads=None))]
    fn build(
        &self,
        py: Python<'_>,
        mode: &str,
        excluding: Vec<String>,
        including: Vec<String>,
        threads: Option<usize>,
    ) -> PyResult<PyBuiltCase> {
        let built = self.case.build(options_of(mode, excluding, including, threads)?).py_err()?;
        let user_debugprint = built.user_debugprint();
        Ok(PyBuiltCase {
            function: Py::new(py, PyFunction { function: built.function, single_output: false })?,
            inputs: built.inputs.into_iter().map(|value| Py::new(py, PyRagged { value })).collect::<PyResult<_>>()?,
            output_names: built.output_names,
            user_debugprint,
        })
    }

    fn __repr__(&self) -> String {
        format!("<Case {}>", self.case.name)
    }
}

/// The cases of a graph file (`ragged-conformance/1`).
#[pyfunction]
pub fn load(path: PathBuf) -> PyResult<Vec<PyCase>> {
    let file = CaseFile::load(&path).py_err()?;
    Ok(file.cases.into_iter().map(|case| PyCase { case }).collect())
}

/// Compares `got` with `want` by the conformance rules (same dtype and structure; floats within
/// the float32 / float64 tolerance, NaN equal to NaN): `None` when they agree, else what differs.
#[pyfunction]
pub fn compare(want: &PyRagged, got: &PyRagged) -> Option<String> {
    ragtime::case::compare(&want.value, &got.value).err()
}
