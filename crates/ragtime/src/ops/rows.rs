//! Row functions of the DSL: `softmax`, `log_softmax` over the last axis, `cumsum` / `cumprod`
//! along an axis, `sort`, `argsort` and `top_k` within rows (TensorFlow's names and defaults).

use ragtime_core::{DType, Error};
use ragtime_ops::rows::{ArgExtreme, Argsort, Cumulative, Softmax, Sort, TopK};

use crate::Var;

/// Which way `sort` / `argsort` order a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Direction {
    /// Smallest first (TensorFlow's default).
    #[default]
    Ascending,
    /// Largest first.
    Descending,
}

/// `exclusive` / `reverse` options of `cumsum` / `cumprod` (TensorFlow's defaults: both false).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cumulate {
    /// Each position gets the combination of the elements before it.
    pub exclusive: bool,
    /// Accumulate from the end.
    pub reverse: bool,
}

/// `tf.nn.softmax` over the last axis, row by row.
#[track_caller]
pub fn softmax(x: &Var) -> Var {
    x.apply1(Softmax::new(false), &[])
}

/// `tf.nn.log_softmax` over the last axis, row by row.
#[track_caller]
pub fn log_softmax(x: &Var) -> Var {
    x.apply1(Softmax::new(true), &[])
}

/// `tf.math.cumsum` along `axis` (the innermost ragged axis or a uniform inner axis).
#[track_caller]
pub fn cumsum(x: &Var, axis: i64) -> Var {
    cumsum_with(x, axis, Cumulate::default())
}

/// `tf.math.cumsum` with `exclusive` / `reverse`.
#[track_caller]
pub fn cumsum_with(x: &Var, axis: i64, options: Cumulate) -> Var {
    x.apply1(Cumulative::new(false, axis, options.exclusive, options.reverse), &[])
}

/// `tf.math.cumprod` along `axis` (the innermost ragged axis or a uniform inner axis).
#[track_caller]
pub fn cumprod(x: &Var, axis: i64) -> Var {
    cumprod_with(x, axis, Cumulate::default())
}

/// `tf.math.cumprod` with `exclusive` / `reverse`.
#[track_caller]
pub fn cumprod_with(x: &Var, axis: i64, options: Cumulate) -> Var {
    x.apply1(Cumulative::new(true, axis, options.exclusive, options.reverse), &[])
}

/// `tf.sort` of each row (last axis); stable.
#[track_caller]
pub fn sort(x: &Var, direction: Direction) -> Var {
    x.apply1(Sort::new(direction == Direction::Descending), &[])
}

/// `tf.argsort` of each row (last axis): int32 positions; ties keep their order.
#[track_caller]
pub fn argsort(x: &Var, direction: Direction) -> Var {
    x.apply1(Argsort::new(direction == Direction::Descending, true), &[])
}

/// `tf.math.top_k` of each row: `(values, indices)`, largest first, a row shorter than `k`
/// giving a shorter row.
#[track_caller]
pub fn top_k(x: &Var, k: usize) -> (Var, Var) {
    let mut outs = x.graph().apply(TopK::new(k), &[x]).into_iter();
    // A `match`, not a closure: the error keeps the caller's location (`#[track_caller]`).
    let values = match outs.next() {
        Some(v) => v,
        None => Var::error(Error::graph("top_k gave no output")),
    };
    let indices = outs.next().unwrap_or_else(|| values.clone());
    (values, indices)
}

/// `tf.math.argmax` along `axis` (the innermost ragged axis, a uniform inner axis, or any axis
/// of a dense tensor): int64 positions of the first largest element; an empty row is an error.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let x = g.input("x", TensorType::ragged(DType::I32, 1));
/// let f = compile(&[&x], &[&x.argmax(1)]).unwrap();
/// let y = f.call(&[ragged![[3, 7, 7], [5]].unwrap()]).unwrap();
/// assert_eq!(y[0].to_vec::<i64>().unwrap(), vec![1, 0]);
/// ```
#[track_caller]
pub fn argmax(x: &Var, axis: i64) -> Var {
    x.apply1(ArgExtreme::new(false, axis, DType::I64), &[])
}

/// `tf.math.argmin` along `axis`: int64 positions of the first smallest element.
#[track_caller]
pub fn argmin(x: &Var, axis: i64) -> Var {
    x.apply1(ArgExtreme::new(true, axis, DType::I64), &[])
}

/// `tf.math.argmax` with `output_type` (int32 or int64).
#[track_caller]
pub fn argmax_with(x: &Var, axis: i64, output_type: DType) -> Var {
    x.apply1(ArgExtreme::new(false, axis, output_type), &[])
}

/// `tf.math.argmin` with `output_type` (int32 or int64).
#[track_caller]
pub fn argmin_with(x: &Var, axis: i64, output_type: DType) -> Var {
    x.apply1(ArgExtreme::new(true, axis, output_type), &[])
}

impl Var {
    /// `tf.math.argmax` along `axis`: int64 positions.
    #[track_caller]
    pub fn argmax(&self, axis: i64) -> Var {
        argmax(self, axis)
    }

    /// `tf.math.argmin` along `axis`: int64 positions.
    #[track_caller]
    pub fn argmin(&self, axis: i64) -> Var {
        argmin(self, axis)
    }

    /// `tf.nn.softmax` over the last axis, row by row.
    #[track_caller]
    pub fn softmax(&self) -> Var {
        softmax(self)
    }

    /// `tf.nn.log_softmax` over the last axis, row by row.
    #[track_caller]
    pub fn log_softmax(&self) -> Var {
        log_softmax(self)
    }

    /// `tf.math.cumsum` along `axis`.
    #[track_caller]
    pub fn cumsum(&self, axis: i64) -> Var {
        cumsum(self, axis)
    }

    /// `tf.math.cumprod` along `axis`.
    #[track_caller]
    pub fn cumprod(&self, axis: i64) -> Var {
        cumprod(self, axis)
    }

    /// `tf.sort` of each row.
    #[track_caller]
    pub fn sort(&self, direction: Direction) -> Var {
        sort(self, direction)
    }

    /// `tf.argsort` of each row.
    #[track_caller]
    pub fn argsort(&self, direction: Direction) -> Var {
        argsort(self, direction)
    }

    /// `tf.math.top_k` of each row: `(values, indices)`.
    #[track_caller]
    pub fn top_k(&self, k: usize) -> (Var, Var) {
        top_k(self, k)
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn row_functions_build_and_run() {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let (values, indices) = x.top_k(1);
        let f = compile(&[&x], &[&x.softmax(), &x.cumsum(1), &x.sort(super::Direction::Descending), &values, &indices])
            .unwrap();
        let out = f.call(&[ragged![[1.0, 3.0], []].unwrap()]).unwrap();
        assert_eq!(out[1].to_literal(), ragged![[1.0, 4.0], []].unwrap().to_literal());
        assert_eq!(out[2].to_literal(), ragged![[3.0, 1.0], []].unwrap().to_literal());
        assert_eq!(out[3].to_literal(), ragged![[3.0], []].unwrap().to_literal());
        assert_eq!(out[4].to_literal(), ragged![[1], []].unwrap().to_literal());
        let bad = x.cumsum(0);
        assert!(compile(&[&x], &[&bad]).is_err());
        assert!(crate::ops::add_n(&[]).ty().is_err());
    }
}
