//! State (Theano's shared variables): named tensors that live between calls, owned by the
//! compiled functions that read or update them and by the Rust code holding a [`State`] handle.
//!
//! A state enters a graph through [`crate::Graph::state`] as a free variable named after it (so
//! printouts show its name and graph files are untouched: the graph never stores its value); a
//! compiled function binds it on every call. Updates (`Graph::compile_with_updates`) replace a
//! state's value after a successful call, all or none, see `crate::updates`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ragtime_core::{Error, RaggedTensor, Result, TensorType};

/// Numbers states in creation order: the order their locks are taken in, so two functions
/// locking the same states never wait on each other in a cycle.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

struct Inner {
    id: u64,
    name: String,
    ty: TensorType,
    value: Mutex<RaggedTensor>,
}

/// A named tensor shared by compiled functions and Rust code (an `Arc`-backed handle: clones
/// are the same state). Its type is fixed at creation; [`State::set`] refuses values of another
/// type.
///
/// ```
/// use ragtime::prelude::*;
///
/// let w = State::new("w", ragged![[1.0f32, 2.0f32], [3.0f32]]?)?;
/// let g = Graph::new();
/// let x = g.input("x", TensorType::ragged(DType::F32, 1));
/// let wv = g.state(&w);
/// // Each call returns `x * w` and then adds `x` to `w`.
/// let f = g.compile_with_updates(&[&x], &[&(&x * &wv)], &[(&w, &(&wv + &x))], Mode::FastRun)?;
/// let x1 = ragged![[1.0f32, 1.0f32], [2.0f32]]?;
/// assert_eq!(f.call(std::slice::from_ref(&x1))?[0].to_string(), "<Ragged float32 [[1.0, 2.0], [6.0]]>");
/// assert_eq!(w.get().to_string(), "<Ragged float32 [[2.0, 3.0], [5.0]]>");
/// # Ok::<(), ragtime::Error>(())
/// ```
#[derive(Clone)]
pub struct State {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").field("name", &self.inner.name).field("type", &self.inner.ty).finish()
    }
}

impl State {
    /// A state named `name` (the name of its variable in graphs) holding `value`, typed exactly
    /// as the value (dtype, ragged rank, every known dim).
    pub fn new(name: impl Into<String>, value: RaggedTensor) -> Result<State> {
        let ty = TensorType::of(&value);
        State::with_type(name, ty, value)
    }

    /// A state of type `ty` (which may leave dims unknown, so later values can change size)
    /// holding `value`, which must have that type.
    pub fn with_type(name: impl Into<String>, ty: TensorType, value: RaggedTensor) -> Result<State> {
        let name = name.into();
        ty.validate().map_err(|e| e.at_node(format!("state {name}")))?;
        ty.check(&value, &format!("the value of state `{name}`"))?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Ok(State { inner: Arc::new(Inner { id, name, ty, value: Mutex::new(value) }) })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Its type: every value it holds meets it.
    pub fn ty(&self) -> &TensorType {
        &self.inner.ty
    }

    /// Its current value (a cheap clone sharing the buffers). Waits while a call updating it
    /// runs, so it never sees a half-applied step. Holding the returned value makes the next
    /// in-place update copy the buffer once instead of writing into memory the caller still reads.
    pub fn get(&self) -> RaggedTensor {
        self.lock().clone()
    }

    /// Replaces its value; a value of another type is refused and changes nothing.
    pub fn set(&self, value: RaggedTensor) -> Result<()> {
        self.inner.ty.check(&value, &format!("the new value of state `{}`", self.inner.name))?;
        *self.lock() = value;
        Ok(())
    }

    /// True when both handles are the same state.
    pub fn same(&self, other: &State) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub(crate) fn id(&self) -> u64 {
        self.inner.id
    }

    /// The value's lock. A call that panicked while holding it (only a bug could) left the
    /// previous value or a complete new one, never a partial one (updates are committed by
    /// moves after every check), so a poisoned lock is taken over.
    pub(crate) fn lock(&self) -> MutexGuard<'_, RaggedTensor> {
        self.inner.value.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The locks of several states, taken in creation order (each once), held for one call.
pub(crate) struct Locked<'a> {
    states: Vec<&'a State>,
    guards: Vec<MutexGuard<'a, RaggedTensor>>,
}

impl<'a> Locked<'a> {
    /// Locks `states` (duplicates allowed) in creation order.
    pub(crate) fn new(states: impl IntoIterator<Item = &'a State>) -> Locked<'a> {
        let mut states: Vec<&State> = states.into_iter().collect();
        states.sort_by_key(|s| s.id());
        states.dedup_by_key(|s| s.id());
        let guards = states.iter().map(|s| s.lock()).collect();
        Locked { states, guards }
    }

    /// The locked value of `state`.
    pub(crate) fn value(&mut self, state: &State) -> Result<&mut RaggedTensor> {
        let at = self
            .states
            .iter()
            .position(|s| s.same(state))
            .ok_or_else(|| Error::graph(format!("state `{}` is not locked by this call", state.name())))?;
        Ok(&mut self.guards[at])
    }
}
