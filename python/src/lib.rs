//! The Python extension module `ragtime._ragtime` (PyO3): the DSL, compiled functions, graph
//! files and values; the Python package `ragtime` (python/ragtime) wraps it with TensorFlow-named
//! functions and the numpy / pyarrow / TensorFlow / torch / Awkward conversions.
#![forbid(unsafe_code)]

pub mod cases;
pub mod cli;
pub mod errors;
pub mod function;
pub mod graph;
pub mod save;
pub mod tensor;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _ragtime(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<graph::PyGraph>()?;
    m.add_class::<graph::PyVar>()?;
    m.add_class::<graph::PyTensorType>()?;
    m.add_class::<function::PyFunction>()?;
    m.add_class::<tensor::PyRagged>()?;
    m.add_class::<cases::PyCase>()?;
    m.add_class::<cases::PyBuiltCase>()?;
    m.add_function(wrap_pyfunction!(graph::ragged, m)?)?;
    m.add_function(wrap_pyfunction!(graph::dense, m)?)?;
    m.add_function(wrap_pyfunction!(graph::apply, m)?)?;
    m.add_function(wrap_pyfunction!(graph::op_attributes, m)?)?;
    m.add_function(wrap_pyfunction!(graph::grad, m)?)?;
    m.add_function(wrap_pyfunction!(function::compile, m)?)?;
    m.add_function(wrap_pyfunction!(function::retain_freed_memory, m)?)?;
    m.add_function(wrap_pyfunction!(cases::load, m)?)?;
    m.add_function(wrap_pyfunction!(save::save, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(cases::compare, m)?)?;
    m.add("OP_NAMES", ragtime_ops::OP_NAMES.to_vec())?;
    Ok(())
}
