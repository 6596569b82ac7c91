//! Row ops: ops that compute along the innermost rows (lines) of a tensor: [`Softmax`],
//! [`Cumulative`], [`Sort`], [`Argsort`], [`TopK`], [`ArgExtreme`], over the line walk of
//! `lines`; `defs` declares the two that gradients build.

pub(crate) mod arg_extreme;
pub(crate) mod cumulative;
pub(crate) mod defs;
pub(crate) mod lines;
pub(crate) mod softmax;
pub(crate) mod sort;

#[cfg(test)]
mod tests;

pub use arg_extreme::ArgExtreme;
pub use defs::{Cumulative, Softmax};

pub use sort::{Argsort, Sort, TopK};

use ragtime_core::Result;
use ragtime_graph::{Attrs, OpRef};

use crate::util::shared;

/// The row op called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    Some(match name {
        "softmax" => shared(Softmax::from_attrs(false, attrs)),
        "log_softmax" => shared(Softmax::from_attrs(true, attrs)),
        "cumsum" => shared(Cumulative::from_attrs(false, attrs)),
        "cumprod" => shared(Cumulative::from_attrs(true, attrs)),
        "sort" => shared(Sort::from_attrs(attrs)),
        "argsort" => shared(Argsort::from_attrs(attrs)),
        "top_k" => shared(TopK::from_attrs(attrs)),
        "argmax" => shared(ArgExtreme::from_attrs(false, attrs)),
        "argmin" => shared(ArgExtreme::from_attrs(true, attrs)),
        _ => return None,
    })
}
