//! The graph-building DSL: `Graph` (a builder) and `Var` (a symbolic tensor with operators and
//! TensorFlow-named methods). Errors are deferred: an ill-typed op yields a `Var` carrying the
//! error, so that operator chains never panic; `Var::check` reports it at once and `compile()`
//! reports every one. Each error records where the user's code built the op: every DSL method is
//! `#[track_caller]` down to [`Graph::apply`], which captures the caller's location.

use std::cell::RefCell;
use std::fmt;
use std::panic::Location;
use std::rc::Rc;

use ragtime_core::{DType, Error, Literal, RaggedTensor, Result, TensorType};
use ragtime_graph::{debugprint, Op, OpRef, PrintOptions, VarId};

use crate::{CompileOptions, Function, Mode, State};

/// A graph under construction. Cheap to clone (a shared handle).
#[derive(Clone, Default)]
pub struct Graph {
    inner: Rc<RefCell<ragtime_graph::Graph>>,
    /// The variables standing for states in this graph (one per state).
    states: Rc<RefCell<Vec<(VarId, State)>>>,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.borrow().fmt(f)
    }
}

/// A symbolic tensor: a variable of a [`Graph`] (or the error that prevented building it).
#[derive(Clone)]
pub struct Var {
    graph: Graph,
    id: std::result::Result<VarId, Error>,
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.id {
            Ok(id) => write!(f, "Var({})", self.graph.inner.borrow().var_label(*id)),
            Err(e) => write!(f, "Var(error: {e})"),
        }
    }
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// A graph input named `name` whose values must have type `ty`.
    #[track_caller]
    pub fn input(&self, name: &str, ty: TensorType) -> Var {
        let location = Location::caller();
        let id = self.inner.borrow_mut().input(name, ty).map_err(|e| e.built_at(location));
        Var { graph: self.clone(), id }
    }

    /// The variable standing for `state` in this graph (the same one on every call): a free
    /// variable named after the state, of its type, which compiled functions bind to the state's
    /// value on each call. The state's name must differ from the graph's inputs' names.
    #[track_caller]
    pub fn state(&self, state: &State) -> Var {
        if let Some((id, _)) = self.states.borrow().iter().find(|(_, s)| s.same(state)) {
            return Var { graph: self.clone(), id: Ok(*id) };
        }
        let location = Location::caller();
        let id = self.inner.borrow_mut().input(state.name(), state.ty().clone()).map_err(|e| e.built_at(location));
        if let Ok(id) = id {
            self.states.borrow_mut().push((id, state.clone()));
        }
        Var { graph: self.clone(), id }
    }

    /// A constant.
    pub fn constant(&self, value: RaggedTensor) -> Var {
        let id = self.inner.borrow_mut().constant(value);
        Var { graph: self.clone(), id: Ok(id) }
    }

    /// Applies any op to `inputs`, giving its outputs (one `Var` per output). This is how every
    /// DSL method is built, and how user-defined ops join a graph. An op that cannot apply to
    /// these inputs gives one `Var` carrying the error and the caller's source location.
    #[track_caller]
    pub fn apply(&self, op: impl Op, inputs: &[&Var]) -> Vec<Var> {
        self.apply_ref(std::sync::Arc::new(op), inputs)
    }

    #[track_caller]
    fn apply_ref(&self, op: OpRef, inputs: &[&Var]) -> Vec<Var> {
        let location = Location::caller();
        let fail = |e: Error| vec![Var { graph: self.clone(), id: Err(e) }];
        // Inputs carrying errors pass every one of them on (they keep the place they were built;
        // they may belong to throwaway graphs).
        if let Some(e) = Error::combine(inputs.iter().filter_map(|v| v.id.clone().err())) {
            return fail(e);
        }
        let mut ids = Vec::with_capacity(inputs.len());
        for v in inputs {
            if !Rc::ptr_eq(&v.graph.inner, &self.inner) {
                let e = Error::graph(format!("{}: an input belongs to another graph", op.name()));
                return fail(e.built_at(location));
            }
            ids.extend(v.id.clone());
        }
        let result = self.inner.borrow_mut().apply(op, &ids);
        match result {
            Ok(outs) => outs.into_iter().map(|id| Var { graph: self.clone(), id: Ok(id) }).collect(),
            Err(e) => fail(e.built_at(location)),
        }
    }

    /// Compiles the graph from `inputs` to `outputs` in the default mode.
    pub fn compile(&self, inputs: &[&Var], outputs: &[&Var]) -> Result<Function> {
        self.compile_with(inputs, outputs, Mode::default())
    }

    /// Compiles in a chosen [`Mode`], or with [`CompileOptions`] that also switch rewrites off
    /// or on by name or tag (`Mode::FastRun.into()`, `CompileOptions::from(mode).excluding("fusion")`).
    pub fn compile_with(
        &self,
        inputs: &[&Var],
        outputs: &[&Var],
        options: impl Into<CompileOptions>,
    ) -> Result<Function> {
        if let Some(e) = Error::combine(inputs.iter().chain(outputs).filter_map(|v| v.id.clone().err())) {
            return Err(e);
        }
        self.compile_with_updates(inputs, outputs, &[], options)
    }

    /// Compiles as [`Graph::compile_with`], with updates (Theano's `updates=`): after each call
    /// that succeeds, each `(state, new_value)` pair sets the state to `new_value` as computed
    /// by that call (from the states' values before it), all or none: a call that fails, or
    /// whose new values do not fit their states' types, changes no state. States the outputs or
    /// new values read are bound by the function, never passed to `call`.
    ///
    /// A new value of the form `s - c * scatter_add(s, ..)` (what [`crate::grad`] gives for a
    /// table read by `gather` / `embedding_lookup`, times a scalar learning rate) is applied in
    /// place: only the positions the gradient reaches are written, and the state's buffer is not
    /// copied unless a value returned earlier still shares it. Other new values replace the old
    /// one, whose buffer the next call reuses. Concurrent calls of a function with updates are
    /// serialized (see [`Function`]).
    ///
    /// ```
    /// use ragtime::prelude::*;
    ///
    /// // One SGD step per call on an embedding table: the mean of the looked-up rows is the
    /// // output, and the table moves against the gradient of its sum.
    /// let table = State::new("table", RaggedTensor::from(ndarray::array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]]))?;
    /// let g = Graph::new();
    /// let ids = g.input("ids", TensorType::ragged(DType::I64, 1));
    /// let e = g.state(&table);
    /// let bag = ragtime::ops::embedding_lookup(&e, &ids).reduce_mean(1);
    /// let cost = bag.reduce_sum(None);
    /// let de = ragtime::grad(&cost, &[&e])?.remove(0);
    /// let step = &e - &(&de * 0.5f32);
    /// let f = g.compile_with_updates(&[&ids], &[&cost], &[(&table, &step)], Mode::FastRun)?;
    /// assert_eq!(f.describe_updates(), ["table <- embedding-bag (mean) scatter-subtract in place"]);
    /// f.call(&[RaggedTensor::try_from(vec![vec![0i64, 2], vec![2]])?])?;
    /// // Row 0 got 1/2 of one bag's gradient, row 2 1/2 + 1, row 1 nothing.
    /// assert_eq!(table.get().to_vec::<f32>()?, [0.75, 1.75, 3.0, 4.0, 4.25, 5.25]);
    /// # Ok::<(), ragtime::Error>(())
    /// ```
    pub fn compile_with_updates(
        &self,
        inputs: &[&Var],
        outputs: &[&Var],
        updates: &[(&State, &Var)],
        options: impl Into<CompileOptions>,
    ) -> Result<Function> {
        let new_values: Vec<&Var> = updates.iter().map(|(_, v)| *v).collect();
        if let Some(e) =
            Error::combine(inputs.iter().chain(outputs).chain(&new_values).filter_map(|v| v.id.clone().err()))
        {
            return Err(e);
        }
        if inputs.iter().chain(outputs).chain(&new_values).any(|v| !v.graph.same_graph(self)) {
            return Err(Error::graph("compile: every input, output and new value must belong to this graph"));
        }
        let ids = |vars: &[&Var]| vars.iter().map(|v| v.id()).collect::<Result<Vec<_>>>();
        let (inputs, outputs) = (ids(inputs)?, ids(outputs)?);
        let updates = updates.iter().map(|(s, v)| Ok(((*s).clone(), v.id()?))).collect::<Result<Vec<_>>>()?;
        let states = self.states.borrow().clone();
        Function::with_state(&self.inner.borrow(), &inputs, &outputs, &states, &updates, options.into())
    }

    /// True when `other` is a handle to this same graph.
    pub(crate) fn same_graph(&self, other: &Graph) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }

    /// Runs `f` on the IR graph (to build nodes with `ragtime_ops` functions).
    pub(crate) fn with_ir<T>(&self, f: impl FnOnce(&mut ragtime_graph::Graph) -> T) -> T {
        f(&mut self.inner.borrow_mut())
    }

    /// The DSL variable of IR variable `id` of this graph.
    pub(crate) fn var_of(&self, id: VarId) -> Var {
        Var { graph: self.clone(), id: Ok(id) }
    }

    /// Prints the graph computing `outputs` (before any optimization), with types.
    pub fn debugprint(&self, outputs: &[&Var]) -> Result<String> {
        let ids = outputs.iter().map(|v| v.id()).collect::<Result<Vec<_>>>()?;
        Ok(debugprint(&self.inner.borrow(), &ids, PrintOptions { types: true, positions: false }))
    }
}

/// Compiles `outputs` as a function of `inputs` (all from one graph), in the default mode.
pub fn compile(inputs: &[&Var], outputs: &[&Var]) -> Result<Function> {
    let graph = inputs
        .first()
        .or(outputs.first())
        .map(|v| v.graph.clone())
        .ok_or_else(|| Error::graph("compile needs at least one input or output"))?;
    graph.compile(inputs, outputs)
}

impl Var {
    /// The graph variable, or the error that prevented building it.
    pub fn id(&self) -> Result<VarId> {
        self.id.clone()
    }

    /// A variable that only carries an error (reported by `compile()`), built at the caller's
    /// location. It belongs to a graph of its own, which is never compiled.
    #[track_caller]
    pub(crate) fn error(e: Error) -> Var {
        Var { graph: Graph::new(), id: Err(e.built_at(Location::caller())) }
    }

    /// Reports at once the error that prevented building this variable (or any variable it is
    /// computed from), with the place in the caller's code that built the failing op; `compile()`
    /// would report the same error later. Lets a graph builder stop at the first mistake:
    ///
    /// ```
    /// use ragtime::prelude::*;
    ///
    /// let g = Graph::new();
    /// let x = g.input("x", TensorType::ragged(DType::F32, 1));
    /// let words = g.input("words", TensorType::ragged(DType::String, 1));
    /// let (bad, line) = (&x + &words, line!());
    /// let e = bad.check().unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::TypeMismatch);
    /// assert_eq!(e.location().unwrap().line(), line);
    /// assert!(e.to_string().contains("(built at "), "{e}");
    /// assert!(x.check().is_ok());
    /// ```
    pub fn check(&self) -> Result<()> {
        self.id.as_ref().map(|_| ()).map_err(Clone::clone)
    }

    /// The graph this variable belongs to.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The static type, or the error that prevented building this variable.
    pub fn ty(&self) -> Result<TensorType> {
        let id = self.id()?;
        let g = self.graph.inner.borrow();
        g.var(id).map(|v| v.ty.clone()).ok_or_else(|| Error::graph("variable not found"))
    }

    /// The dtype (`None` if the variable could not be built).
    pub fn dtype(&self) -> Option<DType> {
        self.ty().ok().map(|t| t.dtype())
    }

    /// Names the variable (shown by `debugprint`).
    pub fn named(self, name: &str) -> Self {
        if let Ok(id) = self.id {
            self.graph.inner.borrow_mut().set_name(id, name);
        }
        self
    }

    /// Applies a one-output op to `self` followed by `others`.
    #[track_caller]
    pub fn apply1(&self, op: impl Op, others: &[&Var]) -> Var {
        let mut inputs = vec![self];
        inputs.extend_from_slice(others);
        // A `match`, not a closure: the error keeps the caller's location (`#[track_caller]`).
        match self.graph.apply(op, &inputs).into_iter().next() {
            Some(v) => v,
            None => Var::error(Error::graph("the op has no output")),
        }
    }

    /// A constant of this variable's dtype (TensorFlow converts Python scalars the same way).
    #[track_caller]
    pub fn scalar_like(&self, value: impl Into<Literal>) -> Var {
        let dtype = match self.ty() {
            Ok(t) => t.dtype(),
            Err(e) => return Var { graph: self.graph.clone(), id: Err(e) },
        };
        match RaggedTensor::from_literal_typed(&value.into(), Some(dtype), Some(0), None) {
            Ok(v) => self.graph.constant(v),
            Err(e) => Var { graph: self.graph.clone(), id: Err(e.built_at(Location::caller())) },
        }
    }
}
