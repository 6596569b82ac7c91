//! The inputs of each op: its input profile (what kinds of operands it takes) and random inputs
//! for a profile.

use ragtime_core::{dispatch_dtype, DType, DenseTensor, Element, RaggedTensor, RowPartition};

use crate::rng::{Rng, FAR_INTS};
use crate::values::{
    column_for, corrupt, edge, int_vector, lengths_for, maybe_ragged, random_dense, random_dtype, random_shape,
    random_value, random_value_of, rowids_for, same_nrows, same_structure, small_ints, splits_for,
};

/// How inputs are laid out for an op, from its signature in the conformance README.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Profile {
    /// One tensor (elementwise unary, reductions, structure, accessors, ...), mostly of the
    /// dtypes the op accepts when given.
    Unary(Option<&'static [DType]>),
    /// One tensor that is mostly a string tensor.
    StringUnary,
    /// Two operands that broadcast, mostly of the dtypes the op accepts when given.
    Binary(Option<&'static [DType]>),
    /// `where(cond, x, y)`.
    Where,
    /// One or more operands of one dtype (concat, stack, strings.join).
    Variadic,
    /// `values, splits | lengths | rowids`.
    PartitionOf(PartitionKind),
    /// `flat_values, splits_0, splits_1, ...`.
    NestedSplits,
    /// `tensor [, lengths]`.
    FromTensor,
    /// `params, indices`.
    Gather,
    /// `data, mask`.
    BooleanMask,
    /// `data, segment_ids` (sorted for `segment_*`).
    Segment { sorted: bool },
    /// `dims, value`.
    Fill,
    /// `limits`, or `starts, limits [, deltas]`.
    Range,
    /// `indices, values, dense_shape`.
    FromSparse,
    /// `x, w`: `w` mostly a dense matrix whose rows match `x`'s last dim.
    MatMul,
    /// `x, values [, same]`: `values` mostly dense with one row per flat value of `x`.
    WithFlatValues,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PartitionKind {
    Splits,
    Lengths,
    Rowids,
    Starts,
    Limits,
}

const INTEGERS: &[DType] =
    &[DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32, DType::U64];

pub(crate) fn profile(name: &str) -> Profile {
    match name {
        "add" | "subtract" | "multiply" | "divide" | "floordiv" | "floormod" | "pow" | "maximum" | "minimum"
        | "equal" | "not_equal" | "less" | "less_equal" | "greater" | "greater_equal" => Profile::Binary(None),
        "logical_and" | "logical_or" | "logical_xor" => Profile::Binary(Some(&[DType::Bool])),
        "bitwise_and" | "bitwise_or" | "bitwise_xor" => Profile::Binary(Some(INTEGERS)),
        "logical_not" | "reduce_all" | "reduce_any" => Profile::Unary(Some(&[DType::Bool])),
        "bitwise_invert" => Profile::Unary(Some(INTEGERS)),
        "sqrt" | "exp" | "log" | "sin" | "cos" | "tanh" | "sigmoid" | "floor" | "ceil" => {
            Profile::Unary(Some(&[DType::F32, DType::F64]))
        }
        "where" => Profile::Where,
        "concat" | "stack" | "strings.join" => Profile::Variadic,
        "from_row_splits" => Profile::PartitionOf(PartitionKind::Splits),
        "from_row_lengths" => Profile::PartitionOf(PartitionKind::Lengths),
        "from_value_rowids" => Profile::PartitionOf(PartitionKind::Rowids),
        "from_nested_row_splits" => Profile::NestedSplits,
        "from_tensor" => Profile::FromTensor,
        "gather" | "embedding_lookup" | "gather_nd" => Profile::Gather,
        "ragged.cross" | "ragged.cross_hashed" => Profile::Variadic,
        "ragged.with_flat_values" => Profile::WithFlatValues,
        "bincount" => Profile::Binary(Some(&[DType::I32, DType::I64])),
        "strings.unicode_encode" => Profile::Unary(Some(&[DType::I32])),
        "strings.as_string" => Profile::Unary(None),
        "boolean_mask" => Profile::BooleanMask,
        "segment_sum" | "segment_mean" | "segment_max" | "segment_min" => Profile::Segment { sorted: true },
        "unsorted_segment_sum"
        | "unsorted_segment_max"
        | "unsorted_segment_min"
        | "unsorted_segment_prod"
        | "unsorted_segment_mean"
        | "unsorted_segment_sqrt_n" => Profile::Segment { sorted: false },
        "from_row_starts" => Profile::PartitionOf(PartitionKind::Starts),
        "from_row_limits" => Profile::PartitionOf(PartitionKind::Limits),
        "matmul" => Profile::MatMul,
        "one_hot" => Profile::Unary(Some(&[DType::I32, DType::I64, DType::U8, DType::I8])),
        "ragged.segment_ids_to_row_splits" => Profile::Unary(Some(&[DType::I32, DType::I64])),
        "reduce_logsumexp" => Profile::Unary(Some(&[DType::F32, DType::F64])),
        "fill" => Profile::Fill,
        "ragged.range" => Profile::Range,
        "from_sparse" => Profile::FromSparse,
        _ if name.starts_with("strings.") => Profile::StringUnary,
        _ => Profile::Unary(None),
    }
}

/// A second operand for a binary op on `x`: same structure, a broadcastable column, another
/// structure, or anything.
fn partner(rng: &mut Rng, x: &RaggedTensor) -> RaggedTensor {
    let dtype = if rng.chance(0.8) { x.dtype() } else { random_dtype(rng) };
    match rng.below(12) {
        0..=3 => same_structure(rng, x, dtype),
        4 | 5 => column_for(rng, x, dtype),
        6 | 7 => broadcastable_for(rng, x, dtype),
        8 => same_nrows(rng, x, dtype),
        9 => x.clone(),
        _ => random_value_of(rng, dtype),
    }
}

/// An operand that broadcasts against `x` in a less obvious way: `x`'s structure with the last
/// ragged dimension of uniform length 1 (what `keepdims` leaves) and some inner dims 1, or a
/// lower-rank operand aligned from the right (`x`'s inner shape, with a leading 1 or not).
fn broadcastable_for(rng: &mut Rng, x: &RaggedTensor, dtype: DType) -> RaggedTensor {
    let inner: Vec<usize> =
        x.flat_values().shape().get(1..).unwrap_or(&[]).iter().map(|&d| if rng.chance(0.4) { 1 } else { d }).collect();
    match x.partitions().split_last() {
        Some((last, outer)) if rng.chance(0.6) => {
            let mut partitions = outer.to_vec();
            partitions.push(RowPartition::from_uniform_row_length(1, last.nrows()).expect("rows of one value"));
            let mut shape = vec![last.nrows()];
            shape.extend(inner);
            RaggedTensor::new(random_dense(rng, dtype, shape), partitions).expect("partitions chain up")
        }
        _ => {
            let mut shape = inner;
            if rng.chance(0.5) {
                shape.insert(0, 1);
            }
            random_dense(rng, dtype, shape).into()
        }
    }
}

/// Inputs shaped for the op's profile (most of the time valid or nearly valid, so that the sweep
/// reaches the kernels and not only the argument checks).
pub(crate) fn inputs_for(rng: &mut Rng, profile: Profile) -> Vec<RaggedTensor> {
    rng.extreme_int32 = matches!(profile, Profile::Unary(_) | Profile::Binary(_) | Profile::Where | Profile::Variadic);
    match profile {
        Profile::Unary(preferred) => {
            let dtype = match preferred {
                Some(dtypes) if rng.chance(0.75) => *rng.pick(dtypes),
                _ => random_dtype(rng),
            };
            vec![random_value_of(rng, dtype)]
        }
        Profile::StringUnary => {
            let dtype = if rng.chance(0.85) { DType::String } else { random_dtype(rng) };
            vec![random_value_of(rng, dtype)]
        }
        Profile::Binary(preferred) => {
            let x = match preferred {
                Some(dtypes) if rng.chance(0.75) => {
                    let dtype = *rng.pick(dtypes);
                    random_value_of(rng, dtype)
                }
                _ => random_value(rng),
            };
            let y = partner(rng, &x);
            if rng.chance(0.5) {
                vec![x, y]
            } else {
                vec![y, x]
            }
        }
        Profile::Where => {
            let cond_dtype = if rng.chance(0.85) { DType::Bool } else { random_dtype(rng) };
            let cond = random_value_of(rng, cond_dtype);
            let x = partner(rng, &cond);
            let y = partner(rng, &x);
            let y = if rng.chance(0.8) { y.cast(x.dtype()).unwrap_or(y) } else { y };
            vec![cond, x, y]
        }
        Profile::Variadic => {
            let x = if rng.chance(0.5) { random_value_of(rng, DType::String) } else { random_value(rng) };
            let count = rng.below(4) + 1;
            let mut inputs = vec![x.clone()];
            for _ in 1..count {
                let dtype = if rng.chance(0.9) { x.dtype() } else { random_dtype(rng) };
                inputs.push(match rng.below(6) {
                    0..=2 => same_structure(rng, &x, dtype),
                    3 => same_nrows(rng, &x, dtype),
                    4 => column_for(rng, &x, dtype),
                    _ => random_value_of(rng, dtype),
                });
            }
            inputs
        }
        Profile::PartitionOf(kind) => {
            let values = random_value(rng);
            let n = values.nrows();
            let v = match kind {
                PartitionKind::Splits => splits_for(rng, n),
                PartitionKind::Lengths => lengths_for(rng, n),
                PartitionKind::Rowids => rowids_for(rng, n),
                PartitionKind::Starts => {
                    let mut splits = splits_for(rng, n);
                    splits.pop();
                    splits
                }
                PartitionKind::Limits => {
                    let mut splits = splits_for(rng, n);
                    if !splits.is_empty() {
                        splits.remove(0);
                    }
                    splits
                }
            };
            vec![values, int_vector(rng, v)]
        }
        Profile::NestedSplits => {
            let x = random_value(rng);
            let mut inputs = vec![x.flat_values().clone().into()];
            for splits in x.nested_row_splits() {
                let mut splits = splits;
                corrupt(rng, &mut splits);
                inputs.push(int_vector(rng, splits));
            }
            inputs
        }
        Profile::FromTensor => {
            let t = if rng.chance(0.8) {
                let dtype = random_dtype(rng);
                let rank = rng.below(2) + 2;
                let shape = random_shape(rng, rank);
                random_dense(rng, dtype, shape).into()
            } else {
                random_value(rng)
            };
            if rng.chance(0.5) {
                let n = t.nrows();
                let width = t.flat_values().shape().get(1).copied().unwrap_or(0);
                let lengths = small_ints(rng, n, width + 1);
                vec![t, int_vector(rng, lengths)]
            } else {
                vec![t]
            }
        }
        Profile::Gather => {
            let params = random_value(rng);
            let len = rng.below(6);
            let ix = small_ints(rng, len, params.nrows());
            let indices = int_vector(rng, ix);
            let indices = maybe_ragged(rng, indices);
            vec![params, indices]
        }
        Profile::BooleanMask => {
            let data = random_value(rng);
            let mask = match rng.below(4) {
                0 | 1 => same_structure(rng, &data, DType::Bool),
                2 => random_dense(rng, DType::Bool, vec![data.nrows()]).into(),
                _ => random_value_of(rng, DType::Bool),
            };
            vec![data, mask]
        }
        Profile::Segment { sorted } => {
            let data = random_value(rng);
            let n = data.nrows();
            let mut ids = small_ints(rng, n, 4);
            if sorted && rng.chance(0.8) {
                ids.sort_unstable();
            }
            corrupt(rng, &mut ids);
            vec![data, int_vector(rng, ids)]
        }
        Profile::Fill => {
            let len = rng.below(4);
            let dims = small_ints(rng, len, 4);
            let value = if rng.chance(0.8) {
                let dtype = random_dtype(rng);
                random_dense(rng, dtype, vec![]).into()
            } else {
                random_value(rng)
            };
            vec![int_vector(rng, dims), value]
        }
        Profile::Range => {
            let count = rng.below(3) + 1;
            let dtype = if rng.chance(0.7) { *rng.pick(&[DType::I32, DType::I64]) } else { random_dtype(rng) };
            let n = rng.below(4);
            (0..count)
                .map(|k| {
                    let shape = if rng.chance(0.4) { vec![] } else { vec![n] };
                    let len: usize = shape.iter().product();
                    // Deltas (the third input) are mostly non-zero and of either sign.
                    let v: Vec<i64> = (0..len)
                        .map(|_| match rng.below(20) {
                            // Only bounds so far out that a small delta cannot bring the count
                            // back under the allocation cap.
                            0 => *rng.pick(FAR_INTS),
                            _ if k == 2 => *rng.pick(&[1, 2, -1, -2, 0, 3]),
                            _ => rng.range(-3, 6),
                        })
                        .collect();
                    // Float ranges also meet NaN, infinities and tiny deltas.
                    let odd_floats = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e-30, 0.25, 1e30];
                    dispatch_dtype!(dtype,
                        T => {
                            let items = v.into_iter().map(|v| match T::DTYPE.is_float() && rng.chance(0.1) {
                                true => T::from_f64(*rng.pick(&odd_floats)),
                                false => edge(rng, T::from_int_literal(i128::from(v)).unwrap_or_else(T::lowest)),
                            });
                            DenseTensor::from_vec(shape, items.collect()).expect("shape fits")
                        },
                        string => random_dense(rng, DType::String, shape))
                    .into()
                })
                .collect()
        }
        Profile::MatMul => matmul_inputs(rng),
        Profile::WithFlatValues => {
            let x = random_value(rng);
            let dtype = random_dtype(rng);
            // Mostly another tensor's flat values laid out like x's (same number of rows).
            let values = if rng.chance(0.7) {
                RaggedTensor::from(same_structure(rng, &x, dtype).flat_values().clone())
            } else {
                random_value(rng)
            };
            let mut inputs = vec![x.clone(), values];
            if rng.chance(0.3) {
                inputs.push(if rng.chance(0.7) { same_structure(rng, &x, dtype) } else { random_value(rng) });
            }
            inputs
        }
        Profile::FromSparse => {
            let x = random_value(rng);
            match x.to_sparse() {
                Ok((indices, values, dense_shape)) if rng.chance(0.7) => {
                    let mut parts = [indices, values, dense_shape];
                    // Now and then one part is replaced by random numbers of the same shape.
                    if rng.chance(0.3) {
                        let k = rng.below(3);
                        let shape = parts[k].shape().to_vec();
                        parts[k] = if k == 1 {
                            random_dense(rng, parts[1].dtype(), shape)
                        } else {
                            let n = shape.iter().product();
                            let numbers = (0..n).map(|_| rng.range(-1, 4)).collect();
                            DenseTensor::from_vec(shape, numbers).expect("shape fits")
                        };
                    }
                    parts.into_iter().map(RaggedTensor::from).collect()
                }
                _ => {
                    let n = rng.below(4);
                    let rank = rng.below(3) + 1;
                    let idx: Vec<i64> = (0..n * rank).map(|_| rng.range(-1, 3)).collect();
                    let indices = DenseTensor::from_vec(vec![n, rank], idx).expect("shape fits");
                    let dtype = random_dtype(rng);
                    let values = random_dense(rng, dtype, vec![n]);
                    let shape: Vec<i64> = (0..rank).map(|_| rng.range(0, 4)).collect();
                    vec![indices.into(), values.into(), int_vector(rng, shape)]
                }
            }
        }
    }
}

/// `x, w` for `matmul`: mostly a `w` of `x`'s dtype whose rows match `x`'s last dim.
fn matmul_inputs(rng: &mut Rng) -> Vec<RaggedTensor> {
    let x = random_value(rng);
    let d = x.flat_values().shape().last().copied().unwrap_or(1);
    let d = if rng.chance(0.85) { d } else { rng.below(4) };
    let k = rng.below(4);
    let dtype = if rng.chance(0.9) { x.dtype() } else { random_dtype(rng) };
    let w = if rng.chance(0.9) { random_dense(rng, dtype, vec![d, k]).into() } else { random_value_of(rng, dtype) };
    vec![x, w]
}

/// Inputs of a random arity (0..=4) with no regard for the op's signature.
pub(crate) fn wild_inputs(rng: &mut Rng) -> Vec<RaggedTensor> {
    rng.extreme_int32 = false;
    let n = rng.below(5);
    let mut inputs: Vec<RaggedTensor> = Vec::with_capacity(n);
    for _ in 0..n {
        let v = match inputs.first() {
            Some(x) if rng.chance(0.5) => partner(rng, x),
            _ if rng.chance(0.2) => {
                let len = rng.below(5);
                let v = small_ints(rng, len, 4);
                int_vector(rng, v)
            }
            _ => random_value(rng),
        };
        inputs.push(v);
    }
    inputs
}

// ---------------------------------------------------------------------------------------------
// Random attributes.
