//! [`Elemwise`] as a value (a [`ScalarOp`] applied elementwise) with its constructors, apart from its
//! semantics (`impl Op` in `op`), so that gradient code can build it.

use ragtime_core::{DType, Error, Result};
use ragtime_graph::Attrs;

use crate::elemwise::scalar_op::ScalarOp;

/// An elementwise op: applies [`ScalarOp`] to broadcast operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Elemwise {
    /// The scalar function.
    pub scalar: ScalarOp,
}

impl Elemwise {
    /// The elementwise op of `scalar`.
    pub fn new(scalar: ScalarOp) -> Self {
        Elemwise { scalar }
    }

    /// From a graph file's node: the op named by `attrs.op()`, `cast` reading its `dtype`
    /// attribute (a TensorFlow dtype name).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        Self::from_name_and_attrs(attrs.op(), attrs)
    }

    pub(crate) fn from_name_and_attrs(name: &str, attrs: &Attrs) -> Result<Self> {
        if name == "cast" {
            attrs.only(&["dtype"])?;
            let dtype = attrs.str("dtype")?;
            let to =
                DType::from_name(dtype).ok_or_else(|| Error::argument("cast", format!("unknown dtype `{dtype}`")))?;
            return Ok(Elemwise::new(ScalarOp::Cast(to)));
        }
        let scalar = ScalarOp::from_name(name)
            .ok_or_else(|| Error::argument(name, format!("`{name}` is not an elementwise op")))?;
        attrs.only(&[])?;
        Ok(Elemwise::new(scalar))
    }
}
