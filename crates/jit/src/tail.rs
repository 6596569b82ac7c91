//! Lane-level helpers for row kernels: folding a vector accumulator across its lanes, and the
//! mask that keeps only the last `k` lanes of the vector that ends a row.
//!
//! Why: ragged rows are short (W4 averages 10 values), so the part of a row that does not fill a
//! whole vector is a large share of the work. Instead of a scalar loop, a row of at least one
//! vector handles that part with the one vector that ends exactly at the row's end, overlapping
//! elements already done: maximum and minimum are idempotent, sums and products replace the
//! overlapping lanes by the identity (this mask), and element outputs recompute the same values.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, Endianness, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// Vector bitcasts must name a lane order; every lane keeps its position.
fn little() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

/// `v` with its lanes permuted so that lane `i` holds lane `i ^ distance` (a butterfly step), as
/// a byte shuffle.
fn butterfly(b: &mut FunctionBuilder, v: Value, distance: u8) -> Value {
    let ty = b.func.dfg.value_type(v);
    let lane_bytes = ty.lane_bits() / 8;
    let mask: Vec<u8> = (0..16u8)
        .map(|byte| {
            let lane = byte / lane_bytes as u8;
            (lane ^ distance) * lane_bytes as u8 + byte % lane_bytes as u8
        })
        .collect();
    let bytes = b.ins().bitcast(types::I8X16, little(), v);
    let imm = b.func.dfg.immediates.push(ConstantData::from(mask));
    let shuffled = b.ins().shuffle(bytes, bytes, imm);
    b.ins().bitcast(ty, little(), shuffled)
}

/// Folds the lanes of the vector `v` with `combine` (log2(lanes) vector steps) and returns the
/// scalar result. The pairing order differs from a left-to-right fold, which reassociates sums
/// and products (allowed for JIT reductions, see the crate docs); max and min are exact.
pub(crate) fn fold_lanes(
    b: &mut FunctionBuilder,
    v: Value,
    combine: &dyn Fn(&mut FunctionBuilder, Value, Value) -> Value,
) -> Value {
    let lanes = b.func.dfg.value_type(v).lane_count();
    let mut acc = v;
    let mut distance = lanes / 2;
    while distance >= 1 {
        let other = butterfly(b, acc, distance as u8);
        acc = combine(b, acc, other);
        distance /= 2;
    }
    b.ins().extractlane(acc, 0)
}

/// A mask of the lane shape of `ty` (as `ty`, all ones or all zeros per lane) selecting the last
/// `keep` lanes, for `0 <= keep <= lanes` (an `i64` value).
pub(crate) fn last_lanes_mask(b: &mut FunctionBuilder, ty: Type, keep: Value) -> Value {
    let lanes = ty.lane_count();
    let ity = ty.as_int();
    let lane_ty = ity.lane_type();
    let bytes: Vec<u8> = (0..lanes)
        .flat_map(|i| {
            let i = u64::from(i);
            i.to_le_bytes()[..lane_ty.bytes() as usize].to_vec()
        })
        .collect();
    let handle = b.func.dfg.constants.insert(ConstantData::from(bytes));
    let index = b.ins().vconst(ity, handle);
    // Lane i is kept when i >= lanes - keep.
    let lanes_value = b.ins().iconst(types::I64, i64::from(lanes));
    let first = b.ins().isub(lanes_value, keep);
    let first = if lane_ty == types::I64 { first } else { b.ins().ireduce(lane_ty, first) };
    let first = b.ins().splat(ity, first);
    let mask = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, index, first);
    if ity == ty {
        mask
    } else {
        b.ins().bitcast(ty, little(), mask)
    }
}

/// `mask ? x : fill`, lane by lane (`mask` from [`last_lanes_mask`]).
pub(crate) fn select_lanes(b: &mut FunctionBuilder, mask: Value, x: Value, fill: Value) -> Value {
    b.ins().bitselect(mask, x, fill)
}
