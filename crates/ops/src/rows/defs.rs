//! The row ops that gradients build, as values: [`Softmax`] and [`Cumulative`] with their
//! constructors, apart from their semantics (`impl Op` in `softmax` and `cumulative`).

use ragtime_core::{Error, Result, TensorType};
use ragtime_graph::Attrs;

use crate::rows::lines::line_axis;

/// `tf.nn.softmax` / `tf.nn.log_softmax` over the last axis (`axis` -1 only), row by row: with
/// the row's maximum subtracted first; a row holding NaN or +inf is all NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Softmax {
    /// `log_softmax` instead of `softmax`.
    pub log: bool,
}

impl Softmax {
    /// `softmax` (`log` false) or `log_softmax`.
    pub fn new(log: bool) -> Self {
        Softmax { log }
    }

    pub(crate) fn op_name(&self) -> &'static str {
        if self.log {
            "log_softmax"
        } else {
            "softmax"
        }
    }

    /// From a graph file's node: `axis` may only be -1.
    pub fn from_attrs(log: bool, attrs: &Attrs) -> Result<Self> {
        let op = Softmax { log };
        attrs.only(&["axis"])?;
        if let Some(axis) = attrs.int_opt("axis")? {
            if axis != -1 {
                return Err(Error::argument(op.op_name(), format!("only axis -1 is supported, got {axis}")));
            }
        }
        Ok(op)
    }
}

/// `tf.math.cumsum` / `tf.math.cumprod` along `axis`: the innermost ragged axis (row by row) or a
/// uniform inner axis (flat values); any axis of a dense tensor. Integers wrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cumulative {
    /// `cumprod` instead of `cumsum`.
    pub product: bool,
    /// The axis (negative counts from the end).
    pub axis: i64,
    /// Each position gets the combination of the elements before it (not including it).
    pub exclusive: bool,
    /// Accumulate from the end of the line.
    pub reverse: bool,
}

impl Cumulative {
    /// `cumsum` (`product` false) or `cumprod` along `axis`.
    pub fn new(product: bool, axis: i64, exclusive: bool, reverse: bool) -> Self {
        Cumulative { product, axis, exclusive, reverse }
    }

    pub(crate) fn op_name(&self) -> &'static str {
        if self.product {
            "cumprod"
        } else {
            "cumsum"
        }
    }

    /// From a graph file's node: `axis` (required), `exclusive`, `reverse` (false).
    pub fn from_attrs(product: bool, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "exclusive", "reverse"])?;
        Ok(Cumulative {
            product,
            axis: attrs.int("axis")?,
            exclusive: attrs.bool_opt("exclusive")?.unwrap_or(false),
            reverse: attrs.bool_opt("reverse")?.unwrap_or(false),
        })
    }

    /// The axis, normalized and checked against the type ([`line_axis`]).
    pub(crate) fn checked_axis(&self, ty: &TensorType) -> Result<usize> {
        line_axis(self.op_name(), self.axis, ty)
    }
}
