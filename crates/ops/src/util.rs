//! Small helpers shared by the ops: axis normalization, single outputs, the registry's op
//! wrapping, type checks for `Op::infer`, input checks for `Op::perform`, and scalar attributes.

use std::sync::Arc;

use ragtime_core::{dispatch_dtype, DType, DenseTensor, Element, Error, Literal, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attr, Attrs, Op, OpRef};

/// Resolves a possibly negative `axis` against `rank` (`-1` is the last axis).
pub fn normalize_axis(op: &str, axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        return Err(Error::argument(op, format!("axis {axis} is out of range for a tensor of rank {rank}")));
    }
    Ok(a as usize)
}

/// Wraps one output value, the common case of `Op::perform`.
pub fn one(value: RaggedTensor) -> Result<Vec<RaggedTensor>> {
    Ok(vec![value])
}

/// Wraps a freshly built op for the registry (the common tail of every module's `lookup`).
pub(crate) fn shared<O: Op>(op: Result<O>) -> Result<OpRef> {
    op.map(|o| Arc::new(o) as OpRef)
}

// ---------------------------------------------------------------------------------------------
// Type checks, for `Op::infer`.

/// Fails unless input `index` of `op` has one of the accepted dtypes.
pub fn expect_dtype(op: &str, index: usize, ty: &TensorType, accepted: &[DType], what: &str) -> Result<()> {
    if accepted.contains(&ty.dtype()) {
        return Ok(());
    }
    Err(Error::dtype(op, format!("input {index} must be {what}, got {}", ty.dtype())))
}

/// Fails unless input `index` of `op` is an integer tensor (indices, splits, lengths).
pub fn expect_integer(op: &str, index: usize, ty: &TensorType) -> Result<()> {
    if ty.dtype().is_integer() {
        return Ok(());
    }
    Err(Error::dtype(op, format!("input {index} must be an integer tensor, got {}", ty.dtype())))
}

/// Fails unless input `index` of `op` is a dense tensor of rank `rank`.
pub fn expect_dense_rank(op: &str, index: usize, ty: &TensorType, rank: usize) -> Result<()> {
    if ty.ragged_rank() == 0 && ty.rank() == rank {
        return Ok(());
    }
    Err(Error::shapes(op, format!("input {index} must be a dense tensor of rank {rank}, got {ty}")))
}

/// Fails unless input `index` of `op` is a dense integer vector (splits, lengths, row ids, dims).
pub fn expect_int_vector(op: &str, index: usize, ty: &TensorType) -> Result<()> {
    expect_integer(op, index, ty)?;
    expect_dense_rank(op, index, ty, 1)
}

// ---------------------------------------------------------------------------------------------
// Input checks, for `Op::perform` (public API too: bad inputs must give errors, not panics).

/// The inputs of `op` as an array of exactly `N` values, or an `invalid_argument` error.
pub fn fixed_inputs<'a, const N: usize>(op: &str, inputs: &'a [RaggedTensor]) -> Result<&'a [RaggedTensor; N]> {
    inputs.try_into().map_err(|_| Error::argument(op, format!("takes {N} inputs, got {}", inputs.len())))
}

/// Input `index` of `op` as a dense tensor, or an `incompatible_shapes` error naming it as `what`.
pub fn dense_input<'a>(op: &str, index: usize, what: &str, value: &'a RaggedTensor) -> Result<&'a DenseTensor> {
    value.as_dense().ok_or_else(|| {
        Error::shapes(
            op,
            format!("input {index} ({what}) must be a dense tensor, got ragged rank {}", value.ragged_rank()),
        )
    })
}

/// Input `index` of `op` as an integer vector (splits, lengths, row ids, dims), widened to i64.
pub fn int_vector_input(op: &str, index: usize, what: &str, value: &RaggedTensor) -> Result<Vec<i64>> {
    let dense = dense_input(op, index, what, value)?;
    if dense.rank() != 1 {
        return Err(Error::shapes(
            op,
            format!("input {index} ({what}) must be a vector, got shape {:?}", dense.shape()),
        ));
    }
    dense.to_i64_vec(op, &format!("input {index} ({what})"))
}

// ---------------------------------------------------------------------------------------------
// Scalar attributes (`default_value`, `padding`): a graph-file attribute, kept as a literal in the
// op, checked against the input's dtype by `infer` and turned into a typed scalar by `perform`.

/// The scalar attribute `name` of `attrs` as a literal (`None` when absent); lists are refused.
pub fn scalar_attr(attrs: &Attrs, name: &str) -> Result<Option<Literal>> {
    Ok(match attrs.get(name) {
        None => None,
        Some(Attr::Int(v)) => Some(Literal::Int(i128::from(*v))),
        Some(Attr::Float(v)) => Some(Literal::Float(*v)),
        Some(Attr::Bool(v)) => Some(Literal::Bool(*v)),
        Some(Attr::Str(v)) => Some(Literal::Str(v.as_bytes().to_vec())),
        Some(other) => {
            return Err(Error::argument(attrs.op(), format!("attribute `{name}` must be a scalar, got {other:?}")))
        }
    })
}

/// Attribute `name` of `attrs` as a literal: a scalar or a nested list of scalars (`None` when
/// absent), for values given as tensors (`to_tensor`'s `default_value`, `from_tensor`'s `padding`).
pub fn literal_attr(attrs: &Attrs, name: &str) -> Result<Option<Literal>> {
    fn convert(op: &str, name: &str, attr: &Attr) -> Result<Literal> {
        Ok(match attr {
            Attr::Int(v) => Literal::Int(i128::from(*v)),
            Attr::Float(v) => Literal::Float(*v),
            Attr::Bool(v) => Literal::Bool(*v),
            Attr::Str(v) => Literal::Str(v.as_bytes().to_vec()),
            Attr::List(items) => Literal::List(items.iter().map(|a| convert(op, name, a)).collect::<Result<_>>()?),
            Attr::Null => return Err(Error::argument(op, format!("attribute `{name}` holds a null"))),
        })
    }
    attrs.get(name).map(|attr| convert(attrs.op(), name, attr)).transpose()
}

/// The literal `lit` (a scalar or nested list, named `what`) as a dense tensor of `dtype`: each
/// scalar checked as [`check_scalar_literal`] (`type_mismatch`), ragged nesting refused
/// (`incompatible_shapes`).
pub fn literal_tensor(op: &str, what: &str, lit: &Literal, dtype: DType) -> Result<DenseTensor> {
    fn check_leaves(op: &str, what: &str, lit: &Literal, dtype: DType) -> Result<()> {
        match lit {
            Literal::List(items) => items.iter().try_for_each(|item| check_leaves(op, what, item, dtype)),
            scalar => check_scalar_literal(op, what, scalar, dtype),
        }
    }
    check_leaves(op, what, lit, dtype)?;
    let value = RaggedTensor::from_literal_typed(lit, Some(dtype), Some(0), None)
        .map_err(|e| Error::shapes(op, format!("{what} is not a dense tensor: {e}")))?;
    Ok(value.flat_values().clone())
}

/// Fails (`type_mismatch`) unless the scalar literal `lit` (named `what`) is a value of `dtype`:
/// integers for numeric dtypes (in range), floats for float dtypes, booleans for bool, strings
/// for string.
pub fn check_scalar_literal(op: &str, what: &str, lit: &Literal, dtype: DType) -> Result<()> {
    let fits = match lit {
        Literal::Int(v) => {
            dtype.is_numeric() && dispatch_dtype!(dtype, T => T::from_int_literal(*v).is_some(), string => false)
        }
        Literal::Float(_) => dtype.is_float(),
        Literal::Bool(_) => dtype == DType::Bool,
        Literal::Str(_) => dtype == DType::String,
        Literal::List(_) => false,
    };
    if fits {
        return Ok(());
    }
    Err(Error::dtype(op, format!("{what} {} is not a {dtype} scalar", show_literal(lit))))
}

/// The scalar literal `lit` as a 0-d tensor of `dtype` (checked as [`check_scalar_literal`]).
pub fn scalar_tensor(op: &str, what: &str, lit: &Literal, dtype: DType) -> Result<DenseTensor> {
    check_scalar_literal(op, what, lit, dtype)?;
    Ok(RaggedTensor::from_literal_typed(lit, Some(dtype), Some(0), None)?.flat_values().clone())
}

/// A literal as written in op names and messages (`0`, `1.5`, `""`, `true`).
pub fn show_literal(lit: &Literal) -> String {
    match lit {
        Literal::Int(v) => v.to_string(),
        Literal::Float(v) => format!("{v:?}"),
        Literal::Bool(v) => v.to_string(),
        Literal::Str(s) => format!("{:?}", String::from_utf8_lossy(s)),
        Literal::List(_) => format!("{lit:?}"),
    }
}

/// Sizes or positions computed as int64, as a tensor of `shape` in the index dtype `out_type`
/// (int32 or int64): an int32 `out_type` that cannot hold a value is `invalid_value` naming it,
/// never a silent wrap (TensorFlow's int32 outputs are the caller's choice, not a size limit).
pub fn index_tensor(op: &str, what: &str, shape: Vec<usize>, values: Vec<i64>, out_type: DType) -> Result<DenseTensor> {
    if out_type == DType::I32 {
        if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| i32::try_from(**v).is_err()) {
            return Err(Error::value(op, format!("{what}[{i}] = {v} does not fit the int32 out_type: ask for int64")));
        }
    }
    DenseTensor::from_vec(shape, values)?.cast(out_type)
}

/// Attribute `name` naming an index dtype (`out_type`, `output_type`): `"int32"` or `"int64"`,
/// `default` when absent; anything else is `invalid_argument`.
pub fn index_dtype_attr(attrs: &Attrs, name: &str, default: DType) -> Result<DType> {
    match attrs.str_opt(name)? {
        None => Ok(default),
        Some("int32") => Ok(DType::I32),
        Some("int64") => Ok(DType::I64),
        Some(other) => Err(Error::argument(
            attrs.op(),
            format!("attribute `{name}` must be \"int32\" or \"int64\", got `{other}`"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtime_core::ErrorKind;

    #[test]
    fn index_tensors_refuse_what_int32_cannot_hold() {
        let big = i64::from(i32::MAX) + 1;
        let wide = index_tensor("bounding_shape", "size", vec![2], vec![3, big], DType::I64).unwrap();
        assert_eq!(wide.as_slice::<i64>().unwrap(), &[3, big]);
        let narrow = index_tensor("bounding_shape", "size", vec![], vec![7], DType::I32).unwrap();
        assert_eq!(narrow.as_slice::<i32>().unwrap(), &[7]);
        let e = index_tensor("bounding_shape", "size", vec![2], vec![3, big], DType::I32).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue, "{e}");
        assert!(e.to_string().contains("size[1] = 2147483648") && e.to_string().contains("int64"), "{e}");
        let e = index_tensor("argmax", "position", vec![1], vec![-big - 1], DType::I32).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue, "{e}");
    }
}
