//! The DSL in Python: `Graph`, `Var` (with operators) and `apply`, which builds any op of the
//! vocabulary by its graph-file name and attributes through the same registry graph files use
//! (`ragtime_ops::op_from_name`), so Python graphs and graph files build identical nodes.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard};

use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use ragtime::ir::{self, Attr, Attrs, PrintOptions, VarId};
use ragtime::{DType, Dim, Error, TensorType};

use crate::errors::IntoPy;
use crate::save::Recorded;
use crate::tensor::{dtype_named, tensor_of};

/// A graph under construction. Variables made from it (`input`, ops on them) belong to it.
#[pyclass(frozen, name = "Graph", module = "ragtime")]
#[derive(Debug, Default)]
pub struct PyGraph {
    inner: Mutex<ir::Graph>,
    /// The graph-file form of the nodes built, for `rt.save` (locked after `inner` when both are).
    recorded: Mutex<Recorded>,
}

impl PyGraph {
    /// The IR graph, locked (a poisoned lock only means another thread panicked mid-build; the
    /// graph itself is still consistent, since every IR change is one call).
    pub fn lock(&self) -> MutexGuard<'_, ir::Graph> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How the DSL built the graph's nodes, in graph-file terms (poisoning as for `lock`).
    pub fn recorded(&self) -> MutexGuard<'_, Recorded> {
        self.recorded.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A symbolic tensor: a variable of a [`PyGraph`].
#[pyclass(frozen, name = "Var", module = "ragtime")]
#[derive(Debug)]
pub struct PyVar {
    /// The graph it belongs to.
    pub graph: Py<PyGraph>,
    /// Its id in that graph.
    pub id: VarId,
}

/// The static type of an input: `ragged(dtype, ragged_rank, inner_shape)` or `dense(dtype, shape)`.
#[pyclass(frozen, skip_from_py_object, name = "TensorType", module = "ragtime")]
#[derive(Debug, Clone)]
pub struct PyTensorType {
    /// The Rust type.
    pub ty: TensorType,
}

#[pymethods]
impl PyTensorType {
    /// The dtype's name.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.ty.dtype().name()
    }

    /// The number of ragged dimensions.
    #[getter]
    fn ragged_rank(&self) -> usize {
        self.ty.ragged_rank()
    }

    fn __repr__(&self) -> String {
        self.ty.to_string()
    }
}

/// A ragged type: `ragged_rank` ragged dimensions after an outer dimension of unknown size, then
/// the uniform `inner_shape` of the flat values (`None` for a size known only at run time).
#[pyfunction]
#[pyo3(signature = (dtype, ragged_rank=1, inner_shape=None))]
pub fn ragged(dtype: &str, ragged_rank: usize, inner_shape: Option<Vec<Option<usize>>>) -> PyResult<PyTensorType> {
    let dtype = dtype_named(dtype)?;
    let mut dims = vec![Dim::Unknown];
    dims.extend(std::iter::repeat_n(Dim::Ragged, ragged_rank));
    dims.extend(inner_shape.unwrap_or_default().into_iter().map(|d| d.map_or(Dim::Unknown, Dim::Known)));
    Ok(PyTensorType { ty: TensorType::new(dtype, ragged_rank, dims).py_err()? })
}

/// A dense type of `shape` (`None` for a size known only at run time; `[]` for a scalar).
#[pyfunction]
#[pyo3(signature = (dtype, shape))]
pub fn dense(dtype: &str, shape: Vec<Option<usize>>) -> PyResult<PyTensorType> {
    Ok(PyTensorType { ty: TensorType::dense(dtype_named(dtype)?, &shape) })
}

#[pymethods]
impl PyGraph {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// A graph input named `name` of type `ty` (`rt.ragged(...)` or `rt.dense(...)`).
    fn input(slf: &Bound<'_, Self>, name: &str, ty: &PyTensorType) -> PyResult<PyVar> {
        let id = slf.get().lock().input(name, ty.ty.clone()).py_err()?;
        Ok(PyVar { graph: slf.clone().unbind(), id })
    }

    /// A constant: a `RaggedTensor`, an Arrow array, or a literal (with `dtype` when given).
    #[pyo3(signature = (value, dtype=None))]
    fn constant(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>, dtype: Option<&str>) -> PyResult<PyVar> {
        let dtype = dtype.map(dtype_named).transpose()?;
        let value = tensor_of(value, dtype)?;
        let id = slf.get().lock().constant(value);
        Ok(PyVar { graph: slf.clone().unbind(), id })
    }

    /// The graph computing `outputs`, before any optimization, with types.
    fn debugprint(&self, outputs: &Bound<'_, PyAny>) -> PyResult<String> {
        let ids = var_list(outputs)?.iter().map(|v| v.id).collect::<Vec<_>>();
        Ok(ir::debugprint(&self.lock(), &ids, PrintOptions { types: true, positions: false }))
    }

    fn __repr__(&self) -> String {
        let g = self.lock();
        format!("<Graph: {} variables, {} nodes>", g.variables().count(), g.nodes().count())
    }
}

impl PyVar {
    /// A handle to the same variable.
    pub fn clone_ref(&self, py: Python<'_>) -> PyVar {
        PyVar { graph: self.graph.clone_ref(py), id: self.id }
    }

    /// Its static type.
    pub fn ty(&self) -> PyResult<TensorType> {
        let g = self.graph.get().lock();
        g.var(self.id).map(|v| v.ty.clone()).ok_or_else(|| PyValueError::new_err("variable not found"))
    }
}

#[pymethods]
impl PyVar {
    /// The static type.
    #[getter]
    fn r#type(&self) -> PyResult<PyTensorType> {
        Ok(PyTensorType { ty: self.ty()? })
    }

    /// The dtype's name.
    #[getter]
    fn dtype(&self) -> PyResult<&'static str> {
        Ok(self.ty()?.dtype().name())
    }

    /// The graph this variable belongs to.
    #[getter]
    fn graph(&self, py: Python<'_>) -> Py<PyGraph> {
        self.graph.clone_ref(py)
    }

    /// Names the variable (shown by `debugprint`); returns it.
    fn named<'py>(slf: &Bound<'py, Self>, name: &str) -> Bound<'py, Self> {
        let v = slf.get();
        v.graph.get().lock().set_name(v.id, name);
        slf.clone()
    }

    fn __repr__(&self) -> PyResult<String> {
        let g = self.graph.get().lock();
        let ty = g.var(self.id).map(|v| v.ty.to_string()).unwrap_or_default();
        Ok(format!("<Var {} : {}>", g.var_label(self.id), ty))
    }

    fn __add__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("add", slf.as_any(), other)
    }
    fn __radd__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("add", other, slf.as_any())
    }
    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("subtract", slf.as_any(), other)
    }
    fn __rsub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("subtract", other, slf.as_any())
    }
    fn __mul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("multiply", slf.as_any(), other)
    }
    fn __rmul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("multiply", other, slf.as_any())
    }
    fn __truediv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("divide", slf.as_any(), other)
    }
    fn __rtruediv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("divide", other, slf.as_any())
    }
    fn __floordiv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("floordiv", slf.as_any(), other)
    }
    fn __rfloordiv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("floordiv", other, slf.as_any())
    }
    fn __mod__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("floormod", slf.as_any(), other)
    }
    fn __rmod__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("floormod", other, slf.as_any())
    }
    fn __pow__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, _modulo: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("pow", slf.as_any(), other)
    }
    fn __rpow__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, _modulo: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("pow", other, slf.as_any())
    }
    fn __neg__(slf: &Bound<'_, Self>) -> PyResult<PyVar> {
        unary("negative", slf.as_any())
    }
    fn __abs__(slf: &Bound<'_, Self>) -> PyResult<PyVar> {
        unary("abs", slf.as_any())
    }
    fn __invert__(slf: &Bound<'_, Self>) -> PyResult<PyVar> {
        unary("logical_not", slf.as_any())
    }
    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("logical_and", slf.as_any(), other)
    }
    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("logical_or", slf.as_any(), other)
    }
    fn __xor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyVar> {
        binary("logical_xor", slf.as_any(), other)
    }

    /// `<`, `<=`, `>`, `>=` build comparisons as TensorFlow's tensors do; `==` and `!=` keep
    /// Python's identity meaning (use `rt.equal` / `rt.not_equal`), so variables stay hashable.
    fn __richcmp__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let name = match op {
            CompareOp::Lt => "less",
            CompareOp::Le => "less_equal",
            CompareOp::Gt => "greater",
            CompareOp::Ge => "greater_equal",
            CompareOp::Eq => return Ok(PyBool::new(py, slf.as_any().is(other)).to_owned().into_any().unbind()),
            CompareOp::Ne => return Ok(PyBool::new(py, !slf.as_any().is(other)).to_owned().into_any().unbind()),
        };
        Ok(Bound::new(py, binary(name, slf.as_any(), other)?)?.into_any().unbind())
    }

    fn __hash__(&self) -> u64 {
        // Consistent with `==` (identity): equal objects have the same graph and id.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (self.graph.as_ptr() as usize, self.id).hash(&mut hasher);
        hasher.finish()
    }
}

fn unary(op: &str, x: &Bound<'_, PyAny>) -> PyResult<PyVar> {
    one_output(op, apply_op(op, std::slice::from_ref(x), &BTreeMap::new(), None)?)
}

fn binary(op: &str, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyVar> {
    one_output(op, apply_op(op, &[a.clone(), b.clone()], &BTreeMap::new(), None)?)
}

fn one_output(op: &str, mut outs: Vec<PyVar>) -> PyResult<PyVar> {
    match outs.len() {
        1 => Ok(outs.remove(0)),
        n => Err(PyValueError::new_err(format!("{op} has {n} outputs, not one"))),
    }
}

/// The variables of `obj`: one `Var` or a list / tuple of them.
pub fn var_list<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<PyRef<'py, PyVar>>> {
    if let Ok(v) = obj.cast::<PyVar>() {
        return Ok(vec![v.borrow()]);
    }
    obj.try_iter()?.map(|item| Ok(item?.cast_into::<PyVar>()?.borrow())).collect()
}

/// A Python attribute value as a graph-file attribute.
fn attr_of(obj: &Bound<'_, PyAny>) -> PyResult<Attr> {
    if obj.is_none() {
        return Ok(Attr::Null);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Attr::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Attr::Int(obj.extract()?));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Attr::Float(obj.extract()?));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Attr::Str(s.to_cow()?.into_owned()));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return Ok(Attr::List(obj.try_iter()?.map(|item| attr_of(&item?)).collect::<PyResult<_>>()?));
    }
    Err(PyTypeError::new_err(format!(
        "an op attribute must be None, a bool, an int, a float, a str or a list of them, not {}",
        obj.get_type().name()?
    )))
}

/// Applies the op called `op` with `attrs` to `inputs` (variables of one graph, or constants:
/// a Python number takes the dtype of the first variable input, as TensorFlow converts it).
fn apply_op(
    op: &str,
    inputs: &[Bound<'_, PyAny>],
    attrs: &BTreeMap<String, Attr>,
    graph: Option<&Bound<'_, PyGraph>>,
) -> PyResult<Vec<PyVar>> {
    let py = match inputs.first() {
        Some(x) => x.py(),
        None => match graph {
            Some(g) => g.py(),
            None => return Err(PyValueError::new_err(format!("{op}: no inputs, and no graph= given"))),
        },
    };
    let first_var = inputs.iter().find_map(|x| x.cast::<PyVar>().ok());
    let graph: Py<PyGraph> = match (graph, &first_var) {
        (Some(g), _) => g.clone().unbind(),
        (None, Some(v)) => v.get().graph.clone_ref(py),
        (None, None) => {
            return Err(PyValueError::new_err(format!("{op}: no input is a graph variable; pass graph=")));
        }
    };
    let like: Option<DType> = first_var.map(|v| v.get().ty()).transpose()?.map(|t| t.dtype());
    let ir_op = ragtime_ops::op_from_name(op, &Attrs::new(op, attrs.clone())).py_err()?;
    let mut ids = Vec::with_capacity(inputs.len());
    for (i, x) in inputs.iter().enumerate() {
        match x.cast::<PyVar>() {
            Ok(v) => {
                if !v.get().graph.is(&graph) {
                    let e = Error::graph(format!("{op}: input {i} belongs to another graph"));
                    return Err(crate::errors::to_py(e));
                }
                ids.push(v.get().id);
            }
            Err(_) => {
                let value = tensor_of(x, like)?;
                ids.push(graph.get().lock().constant(value));
            }
        }
    }
    let outs = {
        let mut g = graph.get().lock();
        let outs = g.apply(ir_op, &ids).py_err()?;
        if let Some(node) = outs.first().and_then(|&o| g.var(o)).and_then(|v| v.owner) {
            graph.get().recorded().op(node, op, attrs);
        }
        outs
    };
    Ok(outs.into_iter().map(|id| PyVar { graph: graph.clone_ref(py), id }).collect())
}

/// Applies any op of the vocabulary by its graph-file name (`rt.OP_NAMES`), with its
/// attributes as keywords; gives the list of its outputs.
#[pyfunction]
#[pyo3(signature = (op, inputs, graph=None, **attrs))]
pub fn apply(
    op: &str,
    inputs: &Bound<'_, PyAny>,
    graph: Option<&Bound<'_, PyGraph>>,
    attrs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<PyVar>> {
    let inputs = inputs.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    let mut map = BTreeMap::new();
    if let Some(attrs) = attrs {
        for (k, v) in attrs.iter() {
            map.insert(k.extract::<String>()?, attr_of(&v)?);
        }
    }
    apply_op(op, &inputs, &map, graph)
}

/// The attributes op `op` accepts in graph files (and as keywords of `rt.apply`).
#[pyfunction]
pub fn op_attributes(op: &str) -> PyResult<Vec<String>> {
    ragtime_ops::registry::op_attributes(op).py_err()
}

/// The gradients of the scalar `cost` with respect to each of `wrt` (graph inputs), as new
/// variables of the same graph (`tests/grad/README.md` semantics).
#[pyfunction]
pub fn grad(cost: &Bound<'_, PyVar>, wrt: &Bound<'_, PyAny>) -> PyResult<Vec<PyVar>> {
    let py = cost.py();
    let cost = cost.get();
    let wrt = var_list(wrt)?;
    if let Some(other) = wrt.iter().find(|v| !v.graph.is(&cost.graph)) {
        let e = Error::graph(format!("grad: `wrt` variable {:?} belongs to another graph", other.id));
        return Err(crate::errors::to_py(e));
    }
    let ids = wrt.iter().map(|v| v.id).collect::<Vec<_>>();
    let grads = ragtime_ops::grad::grad(&mut cost.graph.get().lock(), cost.id, &ids).py_err()?;
    cost.graph.get().recorded().grad(cost.id, &ids, &grads);
    Ok(grads.into_iter().map(|id| PyVar { graph: cost.graph.clone_ref(py), id }).collect())
}
