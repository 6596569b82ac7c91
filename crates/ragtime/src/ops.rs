//! TensorFlow-named free functions and `Var` methods (being written).
/// placeholder
pub fn keepdims(axis: i64) -> i64 { axis }
