//! The elementwise op family: one op type, [`Elemwise`], for every scalar function of the
//! conformance vocabulary ([`ScalarOp`]), its scalar kernels written once, generically
//! ([`Kernels`]), and `add_n`. `scalar_op` is the op table, `kernels` the scalar algorithms,
//! `defs` the [`Elemwise`] type, `op` the graph ops that apply them over broadcast operands.

pub(crate) mod defs;
pub(crate) mod kernels;
pub(crate) mod op;
pub(crate) mod scalar_op;

#[cfg(test)]
mod tests;

pub use defs::Elemwise;
pub use kernels::{comparison, BinaryKernel, Fault, IeeeExtremes, Kernels, UnaryKernel};
pub use op::{apply_aligned, AddN};
pub use scalar_op::{ScalarOp, NAMED_SCALAR_OPS};

use std::sync::Arc;

use ragtime_core::Result;
use ragtime_graph::{Attrs, OpRef};

/// The elementwise op called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    if name == "add_n" {
        return Some(AddN::from_attrs(attrs).map(|op| Arc::new(op) as OpRef));
    }
    if name != "cast" && ScalarOp::from_name(name).is_none() {
        return None;
    }
    Some(Elemwise::from_name_and_attrs(name, attrs).map(|op| Arc::new(op) as OpRef))
}
