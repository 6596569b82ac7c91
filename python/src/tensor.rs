//! `ragtime.RaggedTensor` in Python: values from nested lists and from Arrow arrays (the Arrow C
//! data interface, which is also how numpy buffers come in and go out without copies), back to
//! Arrow, lists and text.

use arrow_array::{make_array, Array};
use arrow_data::ArrayData;
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};
use ragtime::{DType, DenseTensor, Error, Literal, RaggedTensor, RowPartition};
use ragtime_arrow::{OffsetWidth, ToArrow};

use crate::errors::{to_py, IntoPy};

/// A ragged (or dense) tensor value: flat values plus nested row partitions, as TensorFlow's
/// `tf.RaggedTensor`. Immutable; its buffers may be shared with numpy and pyarrow arrays.
#[pyclass(frozen, skip_from_py_object, name = "RaggedTensor", module = "ragtime")]
#[derive(Debug, Clone)]
pub struct PyRagged {
    /// The Rust value.
    pub value: RaggedTensor,
}

/// The dtype called `name` (`float32`, `int64`, `string`, ...), or a `TypeMismatchError`.
pub fn dtype_named(name: &str) -> PyResult<DType> {
    DType::from_name(name).ok_or_else(|| to_py(ragtime::Error::value("dtype", format!("unknown dtype `{name}`"))))
}

/// A Python scalar or (nested) list as a ragtime literal. numpy arrays and scalars come in
/// through their `tolist()`.
pub fn literal_of(obj: &Bound<'_, PyAny>) -> PyResult<Literal> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Literal::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Literal::Int(obj.extract()?));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Literal::Float(obj.extract()?));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Literal::Str(s.to_cow()?.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Literal::Str(b.as_bytes().to_vec()));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return Ok(Literal::List(obj.try_iter()?.map(|item| literal_of(&item?)).collect::<PyResult<_>>()?));
    }
    if obj.hasattr("tolist")? {
        let items = obj.call_method0("tolist")?;
        if !items.is(obj) {
            return literal_of(&items);
        }
    }
    Err(PyTypeError::new_err(format!(
        "cannot make a ragtime value of a {} (give a number, a string, a nested list, a numpy or pyarrow array)",
        obj.get_type().name()?
    )))
}

/// A value from a Python literal with an optional dtype and ragged rank (TensorFlow's
/// `tf.ragged.constant` rules: the default ragged rank is the nesting depth less one).
pub fn tensor_of_literal(
    obj: &Bound<'_, PyAny>,
    dtype: Option<DType>,
    ragged_rank: Option<usize>,
    inner_shape: Option<&[usize]>,
) -> PyResult<RaggedTensor> {
    let lit = literal_of(obj)?;
    RaggedTensor::from_literal_typed(&lit, dtype, ragged_rank, inner_shape).py_err()
}

/// A value from anything that exports the Arrow C data interface (`__arrow_c_array__`: pyarrow
/// arrays, Polars and nanoarrow arrays): its buffers are adopted, not copied (`ragtime-arrow`).
/// A chunked array (`__arrow_c_stream__`: pyarrow's `ChunkedArray`) has its chunks joined first
/// (`ragtime._interop.join_chunks`: one chunk is shared, several are copied into one buffer, since
/// a value holds its flat values and each row-splits vector in one buffer).
pub fn tensor_of_arrow(obj: &Bound<'_, PyAny>) -> PyResult<RaggedTensor> {
    if !obj.hasattr("__arrow_c_array__")? && obj.hasattr("__arrow_c_stream__")? {
        let joined = obj.py().import("ragtime._interop")?.call_method1("join_chunks", (obj,))?;
        return tensor_of_arrow(&joined);
    }
    let data = ArrayData::from_pyarrow_bound(obj)?;
    ragtime_arrow::from_arrow("value", make_array(data)).py_err()
}

/// True when `obj` exports the Arrow C data interface, as an array or as a stream of chunks.
pub fn is_arrow(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.hasattr("__arrow_c_array__")? || obj.hasattr("__arrow_c_stream__")?)
}

/// A value from what a Python caller passes: a `RaggedTensor`, an Arrow array or chunked array, a
/// torch tensor, an Awkward array, a TensorFlow tensor, a numpy array or a literal (converted with
/// `dtype` when given).
pub fn tensor_of(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<RaggedTensor> {
    if let Ok(t) = obj.cast::<PyRagged>() {
        return Ok(t.get().value.clone());
    }
    if is_arrow(obj)? {
        return tensor_of_arrow(obj);
    }
    if let Some(convert) = foreign_conversion(obj)? {
        let value = obj.py().import("ragtime.interop")?.call_method1(convert, (obj,))?;
        return Ok(value.cast::<PyRagged>()?.get().value.clone());
    }
    if is_numpy(obj)? {
        // numpy arrays reach Arrow without a copy (`ragtime._interop.numpy_to_arrow`), and
        // ragtime adopts Arrow's buffers: the tensor reads the numpy array's memory.
        let array = obj.py().import("ragtime._interop")?.call_method1("numpy_to_arrow", (obj,))?;
        return tensor_of_arrow(&array);
    }
    tensor_of_literal(obj, dtype, None, None)
}

/// The `ragtime.interop` function that converts `obj`, for the libraries whose values are taken
/// as they are (by the module their type comes from): torch tensors, Awkward arrays, TensorFlow
/// tensors.
fn foreign_conversion(obj: &Bound<'_, PyAny>) -> PyResult<Option<&'static str>> {
    let module = obj.get_type().module()?;
    let module = module.to_cow()?;
    Ok(match module.split('.').next() {
        Some("torch") => Some("from_torch"),
        Some("awkward") => Some("from_awkward"),
        Some("tensorflow") => Some("from_tf"),
        _ => None,
    })
}

/// True when `obj` is a numpy array.
fn is_numpy(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ty = obj.get_type();
    Ok(ty.module()?.to_cow()? == "numpy" && ty.name()?.to_cow()? == "ndarray")
}

/// A dense tensor from what a Python caller passes, or an `InvalidValueError` naming `what`.
fn dense_of(obj: &Bound<'_, PyAny>, dtype: Option<DType>, what: &str) -> PyResult<DenseTensor> {
    let mut t = tensor_of(obj, dtype)?;
    if let Some(dtype) = dtype.filter(|&d| d != t.dtype()) {
        // int32 splits (TensorFlow's other row-splits dtype) are widened: a copy.
        t = t.cast(dtype).py_err()?;
    }
    match t.as_dense() {
        Some(d) => Ok(d.clone()),
        None => Err(to_py(Error::value("from_nested_row_splits", format!("{what} must be dense, got {t}")))),
    }
}

/// `value` as a pyarrow array (LargeList/LargeUtf8 by default: buffers shared, not copied).
pub fn arrow_of<'py>(py: Python<'py>, value: &RaggedTensor, large: bool) -> PyResult<Bound<'py, PyAny>> {
    let width = if large { OffsetWidth::I64 } else { OffsetWidth::I32 };
    let array = ToArrow::new().offsets(width).convert(value).py_err()?;
    array.to_data().to_pyarrow(py)
}

#[pymethods]
impl PyRagged {
    /// A value from a nested list (or a number, or a numpy array through `tolist()`).
    #[staticmethod]
    #[pyo3(signature = (value, dtype=None, ragged_rank=None, inner_shape=None))]
    fn from_list(
        value: &Bound<'_, PyAny>,
        dtype: Option<&str>,
        ragged_rank: Option<usize>,
        inner_shape: Option<Vec<usize>>,
    ) -> PyResult<Self> {
        let dtype = dtype.map(dtype_named).transpose()?;
        Ok(Self { value: tensor_of_literal(value, dtype, ragged_rank, inner_shape.as_deref())? })
    }

    /// A ragged value from flat values and one row-splits vector per ragged dimension
    /// (outermost first); numpy and Arrow buffers are shared, not copied. The splits are checked
    /// as TensorFlow checks them (`InvalidRowPartitionError`).
    #[staticmethod]
    fn from_nested_row_splits(flat_values: &Bound<'_, PyAny>, nested_row_splits: &Bound<'_, PyAny>) -> PyResult<Self> {
        let flat = dense_of(flat_values, None, "the flat values")?;
        let mut partitions = Vec::new();
        for splits in nested_row_splits.try_iter()? {
            let splits = dense_of(&splits?, Some(DType::I64), "row splits")?;
            let shared = match (splits.shape().len(), splits.as_shared::<i64>()) {
                (1, Some(s)) => s.clone(),
                _ => {
                    let e = Error::value("from_nested_row_splits", "row splits must be a 1-D int64 vector");
                    return Err(to_py(e));
                }
            };
            partitions.push(RowPartition::from_shared_row_splits(shared).py_err()?);
        }
        Ok(Self { value: RaggedTensor::new(flat, partitions).py_err()? })
    }

    /// A ragged value of rank 2 (or more, with multi-dimensional values) from `values` and
    /// its row splits.
    #[staticmethod]
    fn from_row_splits(values: &Bound<'_, PyAny>, row_splits: &Bound<'_, PyAny>) -> PyResult<Self> {
        let values = tensor_of(values, None)?;
        let splits = dense_of(row_splits, Some(DType::I64), "row splits")?;
        let shared = match (splits.shape().len(), splits.as_shared::<i64>()) {
            (1, Some(s)) => s.clone(),
            _ => return Err(to_py(Error::value("from_row_splits", "row splits must be a 1-D int64 vector"))),
        };
        let partition = RowPartition::from_shared_row_splits(shared).py_err()?;
        Ok(Self { value: values.with_outer_partitions(&[partition]).py_err()? })
    }

    /// The flat values as a numpy array: it views ragtime's buffer (no copy) for numbers;
    /// booleans and strings are copied (Arrow packs booleans in bits, numpy has no string
    /// buffer layout).
    #[getter]
    fn flat_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let flat = self.value.flat_values();
        let array = arrow_of(py, &RaggedTensor::dense(flat.clone()), true)?;
        let shape = flat.shape().to_vec();
        py.import("ragtime._interop")?.call_method1("arrow_to_numpy", (array, shape))
    }

    /// The row splits of each ragged dimension, outermost first, as int64 numpy arrays viewing
    /// ragtime's buffers (no copy).
    #[getter]
    fn nested_row_splits<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let interop = py.import("ragtime._interop")?;
        self.value
            .partitions()
            .iter()
            .map(|p| {
                let splits = p.shared_row_splits().clone();
                let dense = DenseTensor::from_shared(&[splits.len()], splits).py_err()?;
                let array = arrow_of(py, &RaggedTensor::dense(dense), true)?;
                interop.call_method1("arrow_to_numpy", (array, vec![p.nrows() + 1]))
            })
            .collect()
    }

    /// A value from an Arrow array (`__arrow_c_array__`), sharing its buffers, or a chunked array
    /// (`__arrow_c_stream__`; several chunks are joined into new buffers).
    #[staticmethod]
    fn from_arrow(array: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self { value: tensor_of_arrow(array)? })
    }

    /// The value as a pyarrow array: `large=True` gives `LargeList` / `LargeString` sharing
    /// ragtime's buffers; `large=False` gives `List` / `String` (i32 offsets, a copy of them).
    #[pyo3(signature = (large=true))]
    fn to_arrow<'py>(&self, py: Python<'py>, large: bool) -> PyResult<Bound<'py, PyAny>> {
        arrow_of(py, &self.value, large)
    }

    /// The Arrow PyCapsule protocol: `pyarrow.array(t)` and other Arrow libraries read the value
    /// without copying it.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let array = arrow_of(py, &self.value, true)?;
        array.call_method1("__arrow_c_array__", (requested_schema,))
    }

    /// The flat values as a (dense) `RaggedTensor`, sharing memory.
    #[getter]
    fn flat_values_tensor(&self) -> Self {
        Self { value: RaggedTensor::dense(self.value.flat_values().clone()) }
    }

    /// The dtype's name (`float32`, `string`, ...).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.value.dtype().name()
    }

    /// The number of ragged dimensions (0 for a dense tensor).
    #[getter]
    fn ragged_rank(&self) -> usize {
        self.value.ragged_rank()
    }

    /// The number of dimensions.
    #[getter]
    fn rank(&self) -> usize {
        self.value.rank()
    }

    /// The shape, `None` for a ragged dimension.
    #[getter]
    fn shape(&self) -> Vec<Option<usize>> {
        self.value.shape()
    }

    /// The number of rows (the first dimension).
    fn nrows(&self) -> usize {
        self.value.nrows()
    }

    /// The row splits of each ragged dimension, outermost first, as lists.
    fn nested_row_splits_list(&self) -> Vec<Vec<i64>> {
        self.value.nested_row_splits()
    }

    /// The value as nested Python lists (strings as `str`, non-UTF-8 bytes as `bytes`).
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        literal_to_py(py, &self.value.to_literal())
    }

    /// True when both values have the same dtype, structure and values.
    fn equals(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.value.equals(&tensor_of(other, Some(self.value.dtype()))?))
    }

    fn __len__(&self) -> usize {
        self.value.nrows()
    }

    fn __repr__(&self) -> String {
        self.value.to_string()
    }

    fn __str__(&self) -> String {
        self.value.to_string()
    }
}

/// A literal as Python objects.
fn literal_to_py<'py>(py: Python<'py>, lit: &Literal) -> PyResult<Bound<'py, PyAny>> {
    Ok(match lit {
        Literal::List(items) => {
            PyList::new(py, items.iter().map(|l| literal_to_py(py, l)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
        Literal::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Literal::Int(i) => i.into_pyobject(py)?.into_any(),
        Literal::Float(f) => PyFloat::new(py, *f).into_any(),
        Literal::Str(bytes) => match std::str::from_utf8(bytes) {
            Ok(s) => PyString::new(py, s).into_any(),
            Err(_) => PyBytes::new(py, bytes).into_any(),
        },
    })
}
