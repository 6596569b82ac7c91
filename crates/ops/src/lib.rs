//! ragtime-ops: the op library. Each op declares its type inference (`Op::infer`) and its reference
//! implementation (`Op::perform`) with TensorFlow's ragged semantics, and its vector-Jacobian
//! product (`Op::vjp`, in `grad`, with the backward walk); `registry` builds ops by their
//! graph-file names.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bincount;
pub mod broadcast;
pub mod cross;
pub mod elemwise;
pub mod gather;
pub mod grad;
pub mod index;
pub mod linalg;
pub mod reduce;
pub mod registry;
pub mod rows;
pub mod strings;
pub mod structure;
pub mod util;
pub mod with_flat_values;

pub use registry::{op_from_name, OP_NAMES};
