//! Symbolic gradients in the DSL: [`grad`] and [`grad_with`] build the gradient of a cost as
//! more nodes of the cost's graph (Theano's `T.grad`), which `compile()` then optimizes and
//! compiles like any other graph. The backward walk and the ops' vector-Jacobian products live
//! in `ragtime_ops::grad`.

use std::panic::Location;

use ragtime_core::{Error, Result};

use crate::Var;

/// The gradient of the float scalar `cost` with respect to each of `wrt` (float variables of
/// the cost's graph): one variable per `wrt`, with its dtype, shape and row partitions. A
/// variable the cost does not depend on gets zeros; no gradient flows through integer, bool or
/// string values or through ops constant almost everywhere (`floor`, `round`, `sign`,
/// comparisons). An op on the way that has no gradient is an error naming it.
///
/// ```
/// use ragtime::prelude::*;
///
/// let g = Graph::new();
/// let x = g.input("x", TensorType::ragged(DType::F64, 1));
/// let cost = x.square().reduce_sum(None);
/// let dx = ragtime::grad(&cost, &[&x]).unwrap().remove(0);
/// let f = compile(&[&x], &[&dx]).unwrap();
/// let out = f.call(&[ragged![[1.0f64, 2.0f64], [], [3.0f64]].unwrap()]).unwrap();
/// assert_eq!(out[0].to_nested::<Vec<Vec<f64>>>().unwrap(), vec![vec![2.0, 4.0], vec![], vec![6.0]]);
/// ```
#[track_caller]
pub fn grad(cost: &Var, wrt: &[&Var]) -> Result<Vec<Var>> {
    grad_with(cost, wrt, &[])
}

/// [`grad`] with the gradients of some intermediate variables given (Theano's `known_grads`,
/// TensorFlow's `output_gradients`): each `(var, g)` adds `g`, of `var`'s type, to the gradient
/// flowing back into `var` from the cost.
#[track_caller]
pub fn grad_with(cost: &Var, wrt: &[&Var], known_grads: &[(&Var, &Var)]) -> Result<Vec<Var>> {
    let location = Location::caller();
    let graph = cost.graph();
    let mut all = vec![cost];
    all.extend_from_slice(wrt);
    all.extend(known_grads.iter().flat_map(|(v, g)| [*v, *g]));
    if let Some(e) = Error::combine(all.iter().filter_map(|v| v.check().err())) {
        return Err(e);
    }
    if all.iter().any(|v| !v.graph().same_graph(graph)) {
        return Err(Error::graph("grad: every variable must belong to the cost's graph").built_at(location));
    }
    let ids = |vars: &[&Var]| vars.iter().map(|v| v.id()).collect::<Result<Vec<_>>>();
    let (cost_id, wrt_ids) = (cost.id()?, ids(wrt)?);
    let known = known_grads.iter().map(|(v, g)| Ok((v.id()?, g.id()?))).collect::<Result<Vec<_>>>()?;
    let grads = graph
        .with_ir(|ir| ragtime_ops::grad::grad_with(ir, cost_id, &wrt_ids, &known))
        .map_err(|e| e.built_at(location))?;
    Ok(grads.into_iter().map(|id| graph.var_of(id)).collect())
}
