//! ragtime errors as Python exceptions: `RagtimeError`, with one subclass per `ragtime::ErrorKind`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use ragtime::{Error, ErrorKind};

create_exception!(ragtime, RagtimeError, PyException, "Every error ragtime reports; `kind` names its class.");
create_exception!(ragtime, InvalidRowPartitionError, RagtimeError, "Row splits that are not a partition.");
create_exception!(ragtime, IncompatibleShapesError, RagtimeError, "Shapes that cannot be combined.");
create_exception!(ragtime, TypeMismatchError, RagtimeError, "A dtype an op does not accept.");
create_exception!(ragtime, InvalidIndexError, RagtimeError, "An index an op refuses by design.");
create_exception!(ragtime, IndexOutOfRangeError, RagtimeError, "An index outside its dimension.");
create_exception!(ragtime, InvalidValueError, RagtimeError, "A malformed value or literal.");
create_exception!(ragtime, InvalidArgumentError, RagtimeError, "An attribute or argument outside what the op accepts.");
create_exception!(ragtime, InvalidGraphError, RagtimeError, "A malformed graph.");
create_exception!(ragtime, ResourceExhaustedError, RagtimeError, "A request over a limit or the call's memory budget.");

/// The Python exception of a ragtime error: the subclass of its kind, the Rust message, and the
/// kind's conformance name as the `kind` attribute.
pub fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    let err = match e.kind() {
        ErrorKind::InvalidRowPartition => InvalidRowPartitionError::new_err(message),
        ErrorKind::IncompatibleShapes => IncompatibleShapesError::new_err(message),
        ErrorKind::TypeMismatch => TypeMismatchError::new_err(message),
        ErrorKind::InvalidIndex => InvalidIndexError::new_err(message),
        ErrorKind::IndexOutOfRange => IndexOutOfRangeError::new_err(message),
        ErrorKind::InvalidValue => InvalidValueError::new_err(message),
        ErrorKind::InvalidArgument => InvalidArgumentError::new_err(message),
        ErrorKind::InvalidGraph => InvalidGraphError::new_err(message),
        ErrorKind::ResourceExhausted => ResourceExhaustedError::new_err(message),
        // `ErrorKind` is non-exhaustive: a kind added later is still a `RagtimeError`.
        _ => RagtimeError::new_err(message),
    };
    Python::attach(|py| {
        // Setting an attribute on a fresh exception instance cannot fail in practice; if it
        // did, the exception is still raised, without `kind`.
        let _ = err.value(py).setattr("kind", e.kind().as_str());
    });
    err
}

/// `Result` of ragtime into `PyResult`.
pub trait IntoPy<T> {
    /// Maps the error with [`to_py`].
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for ragtime::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// Registers the exception classes in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("RagtimeError", py.get_type::<RagtimeError>())?;
    m.add("InvalidRowPartitionError", py.get_type::<InvalidRowPartitionError>())?;
    m.add("IncompatibleShapesError", py.get_type::<IncompatibleShapesError>())?;
    m.add("TypeMismatchError", py.get_type::<TypeMismatchError>())?;
    m.add("InvalidIndexError", py.get_type::<InvalidIndexError>())?;
    m.add("IndexOutOfRangeError", py.get_type::<IndexOutOfRangeError>())?;
    m.add("InvalidValueError", py.get_type::<InvalidValueError>())?;
    m.add("InvalidArgumentError", py.get_type::<InvalidArgumentError>())?;
    m.add("InvalidGraphError", py.get_type::<InvalidGraphError>())?;
    m.add("ResourceExhaustedError", py.get_type::<ResourceExhaustedError>())?;
    Ok(())
}
