//! Test helpers shared by the unit tests of the structure family: building ops by name through
//! the registry and running them.

use ragtime_core::limits::Limits;
use std::collections::BTreeMap;

use ragtime_core::{DenseTensor, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attr, Attrs, OpRef};

/// Graph-file attributes for `op`.
pub fn attrs(op: &str, pairs: &[(&str, Attr)]) -> Attrs {
    Attrs::new(op, pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>())
}

/// The op called `name` in graph files, built through the registry.
pub fn build(name: &str, pairs: &[(&str, Attr)]) -> OpRef {
    crate::registry::op_from_name(name, &attrs(name, pairs)).expect("valid op and attributes")
}

/// Infers and performs `name` on `inputs`; the inferred types must accept the computed values.
pub fn run(name: &str, pairs: &[(&str, Attr)], inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
    run_in(&ExecContext::new(Limits::untrusted()), name, pairs, inputs)
}

/// [`run`] under the call context `ctx` (its threads, limits and budget).
pub fn run_in(
    ctx: &ExecContext,
    name: &str,
    pairs: &[(&str, Attr)],
    inputs: &[RaggedTensor],
) -> Result<Vec<RaggedTensor>> {
    let op = build(name, pairs);
    let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    let out_types = op.output_types(&types)?;
    let out = op.perform(ctx, inputs)?;
    assert_eq!(out.len(), out_types.len(), "{name}: output count");
    for (t, v) in out_types.iter().zip(&out) {
        assert!(t.accepts(&TensorType::of(v)), "{name}: inferred {t} but computed {} = {v}", TensorType::of(v));
    }
    Ok(out)
}

/// Runs a one-output op and returns its value.
pub fn run1(name: &str, pairs: &[(&str, Attr)], inputs: &[RaggedTensor]) -> Result<RaggedTensor> {
    Ok(run(name, pairs, inputs)?.remove(0))
}

/// Asserts equal dtype, structure and values.
#[track_caller]
pub fn assert_value(got: &RaggedTensor, want: &RaggedTensor) {
    assert!(got.equals(want), "expected {want}, got {got}");
}

/// A dense int64 vector.
pub fn i64s(v: &[i64]) -> RaggedTensor {
    DenseTensor::vector(v.to_vec()).into()
}

/// A dense int32 vector.
pub fn i32s(v: &[i32]) -> RaggedTensor {
    DenseTensor::vector(v.to_vec()).into()
}
