//! `bincount` (TensorFlow's `tf.math.bincount`): counts of non-negative integers over all values or
//! per row, optionally weighted.

use ragtime_core::DType;
use ragtime_ops::bincount::Bincount;

use crate::Var;

/// How [`bincount_with`] counts; the defaults are TensorFlow's (every value, int32 counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BincountOptions {
    op: Bincount,
}

impl BincountOptions {
    /// TensorFlow's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// One row of bins per row of the input (`axis=-1`): bag-of-words counts of ragged rows.
    pub fn per_row(mut self) -> Self {
        self.op.per_row = true;
        self
    }

    /// At least `n` bins.
    pub fn minlength(mut self, n: usize) -> Self {
        self.op.minlength = Some(n);
        self
    }

    /// At most `n` bins (larger values are not counted).
    pub fn maxlength(mut self, n: usize) -> Self {
        self.op.maxlength = Some(n);
        self
    }

    /// The counts' dtype without weights: int32 (the default), int64, float32 or float64.
    pub fn dtype(mut self, dtype: DType) -> Self {
        self.op.dtype = dtype;
        self
    }

    /// 1 where a value occurs, instead of its count.
    pub fn binary_output(mut self) -> Self {
        self.op.binary_output = true;
        self
    }
}

/// `tf.math.bincount(arr)`: how often each value `0..=max(arr)` occurs among all of `arr`'s values
/// (int32 or int64), as an int32 vector.
///
/// ```
/// use ragtime::prelude::*;
/// use ragtime::ops::BincountOptions;
///
/// let g = Graph::new();
/// let words = g.input("words", TensorType::ragged(DType::I64, 1));
/// let bags = words.bincount_with(None, BincountOptions::new().per_row().minlength(4));
/// let f = compile(&[&words], &[&bags])?;
/// let out = f.call(&[ragged![[1i64, 3, 1], [], [0]]?])?;
/// assert_eq!(out[0].to_nested::<Vec<Vec<i32>>>()?, vec![vec![0, 2, 0, 1], vec![0, 0, 0, 0], vec![1, 0, 0, 0]]);
/// # Ok::<(), ragtime::Error>(())
/// ```
#[track_caller]
pub fn bincount(arr: &Var) -> Var {
    bincount_with(arr, None, BincountOptions::new())
}

/// `tf.math.bincount(arr, weights, ...)` with the given options: with `weights` (of `arr`'s
/// structure), each bin holds the sum of the weights of its value, in their dtype.
#[track_caller]
pub fn bincount_with(arr: &Var, weights: Option<&Var>, options: BincountOptions) -> Var {
    match weights {
        Some(w) => arr.apply1(options.op, &[w]),
        None => arr.apply1(options.op, &[]),
    }
}

impl Var {
    /// `tf.math.bincount(self)` (see [`bincount`]).
    #[track_caller]
    pub fn bincount(&self) -> Var {
        bincount(self)
    }

    /// `tf.math.bincount(self, weights, ...)` (see [`bincount_with`]).
    #[track_caller]
    pub fn bincount_with(&self, weights: Option<&Var>, options: BincountOptions) -> Var {
        bincount_with(self, weights, options)
    }
}
