//! The structure op that gradients build, as a value: [`FilledLike`] (`ones_like`, `zeros_like`)
//! with its constructors, apart from its semantics (`impl Op` in `fill`).

use ragtime_core::{DType, DenseTensor, Error, Literal, Result};
use ragtime_graph::Attrs;

use crate::util::scalar_tensor;

/// `ones_like(x)` / `zeros_like(x)` (`tf.ones_like` / `tf.zeros_like`): `x`'s structure (its
/// partitions shared) filled with one / zero of `dtype` (default `x`'s): `true` / `false` for
/// bool, `""` for the zeros of strings; ones of strings are `type_mismatch`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FilledLike {
    /// Ones instead of zeros.
    pub ones: bool,
    /// The result's dtype (`None`: the input's).
    pub dtype: Option<DType>,
}

impl FilledLike {
    /// `ones_like` (`ones`) or `zeros_like`, giving `dtype` (`None`: the input's).
    pub fn new(ones: bool, dtype: Option<DType>) -> Self {
        FilledLike { ones, dtype }
    }
    /// From graph-file attributes: `dtype` (optional).
    pub fn from_attrs(ones: bool, attrs: &Attrs) -> Result<Self> {
        attrs.only(&["dtype"])?;
        let op = if ones { "ones_like" } else { "zeros_like" };
        let dtype = attrs
            .str_opt("dtype")?
            .map(|name| DType::from_name(name).ok_or_else(|| Error::argument(op, format!("unknown dtype `{name}`"))))
            .transpose()?;
        Ok(FilledLike { ones, dtype })
    }
    pub(crate) fn op_name(&self) -> &'static str {
        if self.ones {
            "ones_like"
        } else {
            "zeros_like"
        }
    }
    /// The fill value as a 0-d tensor of `dtype`.
    pub(crate) fn fill(&self, dtype: DType) -> Result<DenseTensor> {
        let lit = match dtype {
            DType::Bool => Literal::Bool(self.ones),
            DType::String if self.ones => {
                return Err(Error::dtype(self.op_name(), "strings have no one"));
            }
            DType::String => Literal::Str(Vec::new()),
            _ => Literal::Int(i128::from(self.ones)),
        };
        scalar_tensor(self.op_name(), "the fill value", &lit, dtype)
    }
}
