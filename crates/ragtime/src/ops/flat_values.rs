//! `map_flat_values` and `with_flat_values` (TensorFlow's `tf.ragged.map_flat_values` and
//! `RaggedTensor.with_flat_values`): a function of the flat values, with the ragged partitions put
//! back, as graph nodes the optimizer fuses like any others.

use ragtime_ops::with_flat_values::WithFlatValues;

use crate::Var;

/// `tf.ragged.map_flat_values(f, *inputs)`: calls `f` with each ragged input replaced by its flat
/// values (dense inputs are passed as they are) and gives `f`'s result the partitions of the first
/// ragged input. Every ragged input must have the same partitions (checked when the function runs)
/// and `f` must keep the number of flat values (its result's first dimension); its inner
/// dimensions are free. Without a ragged input, `f`'s result is returned as it is.
///
/// ```
/// use ragtime::prelude::*;
///
/// let g = Graph::new();
/// let x = g.input("x", TensorType::ragged(DType::F32, 1));
/// let w = g.input("w", TensorType::ragged(DType::F32, 1));
/// let y = ragtime::ops::map_flat_values(&[&x, &w], |v| (&v[0] * &v[1]).tanh());
/// let f = compile(&[&x, &w], &[&y])?;
/// let out = f.call(&[ragged![[0.0, 1.0], [2.0]]?, ragged![[1.0, 0.5], [0.0]]?])?;
/// assert_eq!(out[0].to_nested::<Vec<Vec<f32>>>()?, vec![vec![0.0, 0.5f32.tanh()], vec![0.0]]);
/// # Ok::<(), ragtime::Error>(())
/// ```
#[track_caller]
pub fn map_flat_values(inputs: &[&Var], f: impl FnOnce(&[Var]) -> Var) -> Var {
    let mut ragged = Vec::new();
    for (i, v) in inputs.iter().enumerate() {
        match v.ty() {
            Ok(t) if t.is_ragged() => ragged.push(i),
            Ok(_) => {}
            Err(e) => return Var::error(e),
        }
    }
    let flat: Vec<Var> = inputs
        .iter()
        .enumerate()
        .map(|(i, v)| if ragged.contains(&i) { v.flat_values() } else { (*v).clone() })
        .collect();
    let out = f(&flat);
    let Some((&first, rest)) = ragged.split_first() else { return out };
    let mut others: Vec<&Var> = vec![&out];
    others.extend(rest.iter().map(|&i| inputs[i]));
    inputs[first].apply1(WithFlatValues::new(), &others)
}

impl Var {
    /// `tf.ragged.map_flat_values(f, self)`: `f` applied to the flat values, with `self`'s
    /// partitions put back (see [`map_flat_values`]).
    ///
    /// ```
    /// use ragtime::prelude::*;
    ///
    /// let g = Graph::new();
    /// let x = g.input("x", TensorType::ragged(DType::F32, 1));
    /// let y = x.map_flat_values(|v| v * 2.0 + 1.0);
    /// let f = compile(&[&x], &[&y])?;
    /// let out = f.call(&[ragged![[1.0, 2.0], [], [3.0]]?])?;
    /// assert_eq!(out[0].to_nested::<Vec<Vec<f32>>>()?, vec![vec![3.0, 5.0], vec![], vec![7.0]]);
    /// # Ok::<(), ragtime::Error>(())
    /// ```
    #[track_caller]
    pub fn map_flat_values(&self, f: impl FnOnce(&Var) -> Var) -> Var {
        map_flat_values(&[self], |v| f(&v[0]))
    }

    /// `RaggedTensor.with_flat_values(values)`: `self`'s partitions over `values`, which must have
    /// one row per flat value of `self`.
    #[track_caller]
    pub fn with_flat_values(&self, values: &Var) -> Var {
        self.apply1(WithFlatValues::new(), &[values])
    }
}
