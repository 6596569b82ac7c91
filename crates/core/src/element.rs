//! [`Element`]: the Rust element types of numeric and boolean dense tensors, with their
//! conversions (C / TensorFlow `cast` rules) and bounds.

use crate::{DType, DenseArray, DenseTensor};

/// A Rust element type of a numeric or boolean [`DenseTensor`].
///
/// Conversions follow C / TensorFlow `cast` rules (`as` casts: floats truncate toward zero and
/// saturate, integers wrap).
pub trait Element:
    Copy + Default + PartialEq + PartialOrd + std::fmt::Debug + std::fmt::Display + Send + Sync + 'static
{
    /// The dtype this Rust type stands for.
    const DTYPE: DType;
    /// The array of `t` if `t` holds this element type.
    fn array(t: &DenseTensor) -> Option<&DenseArray<Self>>;
    /// Wraps an array into a [`DenseTensor`].
    fn wrap(a: DenseArray<Self>) -> DenseTensor;
    /// The array of `t` by value if `t` holds this element type, else `t` back.
    fn unwrap_array(t: DenseTensor) -> std::result::Result<DenseArray<Self>, DenseTensor>;
    /// `self as f64` (`true` is 1).
    fn to_f64(self) -> f64;
    /// `v as Self` (non-zero is `true`).
    fn from_f64(v: f64) -> Self;
    /// `self as i64` (`true` is 1).
    fn to_i64(self) -> i64;
    /// `v as Self`, wrapping (non-zero is `true`).
    fn from_i64(v: i64) -> Self;
    /// The exact value of an integer literal, if it fits this type (floats take the nearest value).
    fn from_int_literal(v: i128) -> Option<Self>;
    /// The smallest value of the type (`-inf` for floats): `reduce_max`'s result on an empty row.
    fn lowest() -> Self;
    /// The largest value of the type (`+inf` for floats): `reduce_min`'s result on an empty row.
    fn highest() -> Self;
}

/// Implements [`Element`] for numeric types. Integers and floats differ only in how an integer
/// literal converts and in their extreme values, which the `integers:` / `floats:` arms supply.
macro_rules! impl_element_number {
    (integers: $($t:ty => $variant:ident),*) => {$(
        impl_element_number!($t, $variant, |v| <$t>::try_from(v).ok(), <$t>::MIN, <$t>::MAX);
    )*};
    (floats: $($t:ty => $variant:ident),*) => {$(
        impl_element_number!($t, $variant, |v| Some(v as $t), <$t>::NEG_INFINITY, <$t>::INFINITY);
    )*};
    ($t:ty, $variant:ident, |$v:ident| $from_int_literal:expr, $lowest:expr, $highest:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn array(t: &DenseTensor) -> Option<&DenseArray<Self>> {
                match t {
                    DenseTensor::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn wrap(a: DenseArray<Self>) -> DenseTensor {
                DenseTensor::$variant(a)
            }
            fn unwrap_array(t: DenseTensor) -> std::result::Result<DenseArray<Self>, DenseTensor> {
                match t {
                    DenseTensor::$variant(a) => Ok(a),
                    other => Err(other),
                }
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn from_int_literal($v: i128) -> Option<Self> {
                $from_int_literal
            }
            fn lowest() -> Self {
                $lowest
            }
            fn highest() -> Self {
                $highest
            }
        }
    };
}
impl_element_number!(integers: i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);
impl_element_number!(floats: f32 => F32, f64 => F64);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn array(t: &DenseTensor) -> Option<&DenseArray<Self>> {
        match t {
            DenseTensor::Bool(a) => Some(a),
            _ => None,
        }
    }
    fn wrap(a: DenseArray<Self>) -> DenseTensor {
        DenseTensor::Bool(a)
    }
    fn unwrap_array(t: DenseTensor) -> std::result::Result<DenseArray<Self>, DenseTensor> {
        match t {
            DenseTensor::Bool(a) => Ok(a),
            other => Err(other),
        }
    }
    fn to_f64(self) -> f64 {
        u8::from(self) as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_i64(self) -> i64 {
        i64::from(self)
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn from_int_literal(v: i128) -> Option<Self> {
        match v {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn lowest() -> Self {
        false
    }
    fn highest() -> Self {
        true
    }
}
