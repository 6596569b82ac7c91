//! Element types (`DType`) and the one place where code is dispatched over them (`dispatch_dtype!`).

use std::fmt;

/// The element type of a tensor. Names follow TensorFlow (`int32`, `float32`, `string`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`.
    Bool,
    /// `int8`.
    I8,
    /// `int16`.
    I16,
    /// `int32` (the default of integer literals).
    I32,
    /// `int64` (row splits, indices).
    I64,
    /// `uint8`.
    U8,
    /// `uint16`.
    U16,
    /// `uint32`.
    U32,
    /// `uint64`.
    U64,
    /// `float32` (the default of float literals).
    F32,
    /// `float64`.
    F64,
    /// Byte strings, stored as one byte buffer plus offsets.
    String,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 12] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::String,
    ];

    /// TensorFlow's name of the dtype (`int32`, `float64`, `string`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::String => "string",
        }
    }

    /// Parses TensorFlow's name of a dtype.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Signed or unsigned integer.
    pub fn is_integer(self) -> bool {
        self.is_signed_integer() || self.is_unsigned_integer()
    }
    /// `int8` .. `int64`.
    pub fn is_signed_integer(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }
    /// `uint8` .. `uint64`.
    pub fn is_unsigned_integer(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }
    /// `float32` or `float64`.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    /// The float type of a true division (or a mean) of this type, as TensorFlow's `truediv`:
    /// 8- and 16-bit integers give float32, wider integers float64, floats stay; `None` for bool
    /// and strings.
    pub fn true_division_type(self) -> Option<DType> {
        match self {
            DType::I8 | DType::I16 | DType::U8 | DType::U16 => Some(DType::F32),
            DType::I32 | DType::I64 | DType::U32 | DType::U64 => Some(DType::F64),
            DType::F32 | DType::F64 => Some(self),
            DType::Bool | DType::String => None,
        }
    }

    /// Integer or float (not bool, not string).
    pub fn is_numeric(self) -> bool {
        self.is_integer() || self.is_float()
    }

    /// Bytes per element in memory; for strings, the 8-byte offset of each string (their bytes
    /// are counted separately, see [`crate::limits`]).
    pub fn size_of(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::String => 8,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs `$body` with the type alias `$T` bound to the Rust element type of a non-string `$dtype`,
/// or runs `$string` for [`DType::String`]. This is the one dtype dispatch of the code base:
/// generic kernels are written once over [`crate::Element`] and instantiated here.
///
/// ```
/// use ragtime_core::{dispatch_dtype, DType};
/// let size = dispatch_dtype!(DType::I16, T => std::mem::size_of::<T>(), string => 0);
/// assert_eq!(size, 2);
/// ```
#[macro_export]
macro_rules! dispatch_dtype {
    ($dtype:expr, $T:ident => $body:expr, string => $string:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                #[allow(unused)]
                type $T = bool;
                $body
            }
            $crate::DType::I8 => {
                #[allow(unused)]
                type $T = i8;
                $body
            }
            $crate::DType::I16 => {
                #[allow(unused)]
                type $T = i16;
                $body
            }
            $crate::DType::I32 => {
                #[allow(unused)]
                type $T = i32;
                $body
            }
            $crate::DType::I64 => {
                #[allow(unused)]
                type $T = i64;
                $body
            }
            $crate::DType::U8 => {
                #[allow(unused)]
                type $T = u8;
                $body
            }
            $crate::DType::U16 => {
                #[allow(unused)]
                type $T = u16;
                $body
            }
            $crate::DType::U32 => {
                #[allow(unused)]
                type $T = u32;
                $body
            }
            $crate::DType::U64 => {
                #[allow(unused)]
                type $T = u64;
                $body
            }
            $crate::DType::F32 => {
                #[allow(unused)]
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                #[allow(unused)]
                type $T = f64;
                $body
            }
            $crate::DType::String => $string,
        }
    };
}
