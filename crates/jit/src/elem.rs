//! [`Elem`]: the element types kernels run on, with their Cranelift scalar and vector types.

use cranelift_codegen::ir::{types, Type};
use ragtime_core::DType;

use crate::vmath::Float;

/// The element type of a vector kernel (every input, constant and node has it), and of row
/// reductions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Elem {
    /// float32, `f32x4` vectors.
    F32,
    /// float64, `f64x2` vectors.
    F64,
    /// int32, `i32x4` vectors (wrapping arithmetic, as the reference).
    I32,
    /// int64, `i64x2` vectors (wrapping arithmetic, as the reference).
    I64,
}

impl Elem {
    /// The element type of `dtype`, if kernels exist for it.
    pub fn of(dtype: DType) -> Option<Elem> {
        Some(match dtype {
            DType::F32 => Elem::F32,
            DType::F64 => Elem::F64,
            DType::I32 => Elem::I32,
            DType::I64 => Elem::I64,
            _ => return None,
        })
    }

    /// The dtype of the elements.
    pub fn dtype(self) -> DType {
        match self {
            Elem::F32 => DType::F32,
            Elem::F64 => DType::F64,
            Elem::I32 => DType::I32,
            Elem::I64 => DType::I64,
        }
    }

    /// The float precision, for floats.
    pub fn float(self) -> Option<Float> {
        match self {
            Elem::F32 => Some(Float::F32),
            Elem::F64 => Some(Float::F64),
            _ => None,
        }
    }

    pub(crate) fn scalar_ty(self) -> Type {
        match self {
            Elem::F32 => types::F32,
            Elem::F64 => types::F64,
            Elem::I32 => types::I32,
            Elem::I64 => types::I64,
        }
    }

    pub(crate) fn vector_ty(self) -> Type {
        match self {
            Elem::F32 => types::F32X4,
            Elem::F64 => types::F64X2,
            Elem::I32 => types::I32X4,
            Elem::I64 => types::I64X2,
        }
    }

    /// Lanes of a 128-bit vector.
    pub(crate) fn lanes(self) -> i64 {
        match self {
            Elem::F32 | Elem::I32 => 4,
            Elem::F64 | Elem::I64 => 2,
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Elem::F32 | Elem::I32 => 4,
            Elem::F64 | Elem::I64 => 8,
        }
    }
}
