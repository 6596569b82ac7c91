//! Random values: dense and ragged tensors of every dtype, partitions, and the related operands
//! (same structure, same rows, broadcastable) ops need.

use ragtime_core::{dispatch_dtype, DType, DenseTensor, Element, RaggedTensor, RowPartition, StringTensor};

use crate::rng::{Rng, EXTREME_INTS};

/// Strings with the usual suspects: empty, spaces, non-ASCII, NUL, invalid UTF-8.
pub(crate) const STRINGS: &[&[u8]] = &[
    b"",
    b"a",
    b"b",
    b"ab",
    b"a b",
    b" ",
    b"  a  b ",
    b"a,b,,c",
    "h\u{e9}llo".as_bytes(),
    "\u{65e5}\u{672c}\u{8a9e}".as_bytes(),
    "\u{1f600}!".as_bytes(),
    b"UPPER lower",
    b"x\0y",
    b"\xff\xfe",
    b"\xc3",
    b"<s>",
];

/// An extreme value `v` of `T`, unless it is a legitimate size close to the allocation cap
/// (`DenseTensor::MAX_ELEMENTS`, 2^31) and the op may read sizes from data: `int32`'s extremes
/// as a segment id, a range limit or a row id rightly ask for gigabytes. Those become -1 or 2^20.
pub(crate) fn edge<T: Element>(rng: &Rng, v: T) -> T {
    let magnitude = v.to_f64().abs();
    if rng.extreme_int32 || !(f64::from(1 << 20)..=f64::from(1u32 << 31)).contains(&magnitude) {
        v
    } else if v.to_f64() < 0.0 {
        T::from_i64(-1)
    } else {
        T::from_i64(1 << 20)
    }
}

/// Random elements of `T`, biased to edge values (extremes, zero, one, minus one, NaN, infinities).
fn random_elements<T: Element>(rng: &mut Rng, n: usize) -> Vec<T> {
    let specials: [f64; 9] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.5, -2.5, 1e30, -1e-30, 3.75];
    (0..n)
        .map(|_| match rng.below(10) {
            0 => edge(rng, T::lowest()),
            1 => edge(rng, T::highest()),
            2 => T::default(),
            3 if T::DTYPE.is_float() => T::from_f64(*rng.pick(&specials)),
            _ => T::from_i64(rng.range(-4, 6)),
        })
        .collect()
}

/// A dense tensor of `dtype` and `shape` with random elements.
pub(crate) fn random_dense(rng: &mut Rng, dtype: DType, shape: Vec<usize>) -> DenseTensor {
    let n: usize = shape.iter().product();
    dispatch_dtype!(dtype,
    T => DenseTensor::from_vec(shape, random_elements::<T>(rng, n)).expect("n elements fit the shape"),
    string => {
        let strings: Vec<&[u8]> = (0..n).map(|_| *rng.pick(STRINGS)).collect();
        DenseTensor::String(StringTensor::from_strings(&strings, shape).expect("n strings fit the shape"))
    })
}

pub(crate) fn random_dtype(rng: &mut Rng) -> DType {
    *rng.pick(&DType::ALL)
}

/// A small shape: `rank` dims of 0..=4 (mostly non-zero).
pub(crate) fn random_shape(rng: &mut Rng, rank: usize) -> Vec<usize> {
    (0..rank).map(|_| if rng.chance(0.15) { 0 } else { rng.below(4) + 1 }).collect()
}

/// A partition of `nrows` rows of 0..=3 values each, sometimes built with a uniform row length.
fn random_partition(rng: &mut Rng, nrows: usize) -> RowPartition {
    if rng.chance(0.15) {
        return RowPartition::from_uniform_row_length(rng.below(4), nrows).expect("small uniform partition");
    }
    let lengths: Vec<i64> = (0..nrows).map(|_| if rng.chance(0.25) { 0 } else { rng.range(1, 3) }).collect();
    RowPartition::from_row_lengths(&lengths).expect("non-negative lengths")
}

/// A random value of `dtype`: dense of rank 0..=3, or ragged of ragged rank 1..=3 with 0..=2 inner dims.
pub(crate) fn random_value_of(rng: &mut Rng, dtype: DType) -> RaggedTensor {
    let ragged_rank = *rng.pick(&[0, 0, 0, 1, 1, 1, 2, 2, 3]);
    if ragged_rank == 0 {
        let rank = *rng.pick(&[0, 1, 1, 1, 2, 2, 3]);
        let shape = random_shape(rng, rank);
        return random_dense(rng, dtype, shape).into();
    }
    let nrows = if rng.chance(0.1) { 0 } else { rng.below(4) + 1 };
    let mut partitions = Vec::with_capacity(ragged_rank);
    let mut rows = nrows;
    for _ in 0..ragged_rank {
        let p = random_partition(rng, rows);
        rows = p.nvals();
        partitions.push(p);
    }
    let inner_rank = *rng.pick(&[0, 0, 0, 1, 1, 2]);
    let mut shape = vec![rows];
    shape.extend(random_shape(rng, inner_rank));
    RaggedTensor::new(random_dense(rng, dtype, shape), partitions).expect("partitions chain up")
}

pub(crate) fn random_value(rng: &mut Rng) -> RaggedTensor {
    let dtype = random_dtype(rng);
    random_value_of(rng, dtype)
}

/// A value with the structure of `x` (its partitions, shared or rebuilt equal, and its flat shape)
/// and new elements of `dtype`.
pub(crate) fn same_structure(rng: &mut Rng, x: &RaggedTensor, dtype: DType) -> RaggedTensor {
    let flat = random_dense(rng, dtype, x.flat_values().shape().to_vec());
    let partitions =
        if rng.chance(0.5) { x.partitions().to_vec() } else { x.partitions().iter().map(rebuilt).collect() };
    RaggedTensor::new(flat, partitions).expect("same structure as a valid value")
}

/// An equal partition (uniform if `p` is) that does not share its buffers, so that `ptr_eq`
/// fails and values are compared.
pub(crate) fn rebuilt(p: &RowPartition) -> RowPartition {
    match p.uniform_row_length() {
        Some(len) => RowPartition::from_uniform_row_length(len, p.nrows()),
        None => RowPartition::from_row_splits(p.row_splits().to_vec()),
    }
    .expect("the encoding of a valid partition")
}

/// A value with as many rows as `x` but its own ragged structure (a likely mismatch).
pub(crate) fn same_nrows(rng: &mut Rng, x: &RaggedTensor, dtype: DType) -> RaggedTensor {
    let nrows = x.nrows();
    if x.is_dense() || rng.chance(0.3) {
        let mut shape = vec![nrows];
        let inner_rank = rng.below(3);
        shape.extend(random_shape(rng, inner_rank));
        return random_dense(rng, dtype, shape).into();
    }
    let p = random_partition(rng, nrows);
    let mut shape = vec![p.nvals()];
    shape.extend_from_slice(x.flat_values().shape().get(1..).unwrap_or(&[]));
    RaggedTensor::new(random_dense(rng, dtype, shape), vec![p]).expect("one partition over its values")
}

/// A dense operand that broadcasts against `x` (or almost): a scalar, `[nrows]`, `[nrows, 1]`, `[1]`.
pub(crate) fn column_for(rng: &mut Rng, x: &RaggedTensor, dtype: DType) -> RaggedTensor {
    let n = x.nrows();
    let shape = match rng.below(5) {
        0 => vec![],
        1 => vec![n],
        2 => vec![n, 1],
        3 => vec![1],
        _ => vec![n + 1],
    };
    random_dense(rng, dtype, shape).into()
}

fn int_dtype(rng: &mut Rng) -> DType {
    match rng.below(10) {
        0..=3 => DType::I64,
        4..=6 => DType::I32,
        7 => *rng.pick(&[DType::I8, DType::I16, DType::U8, DType::U16, DType::U32, DType::U64]),
        8 => DType::F32,
        _ => random_dtype(rng),
    }
}

/// An integer vector (of a mostly-integer dtype) holding `values`; a value the dtype cannot hold
/// becomes its lowest value, tamed by [`edge`] (wrapping could land just under the allocation cap).
pub(crate) fn int_vector(rng: &mut Rng, values: Vec<i64>) -> RaggedTensor {
    let dtype = int_dtype(rng);
    let n = values.len();
    let flat = dispatch_dtype!(dtype,
    T => {
        let item = |v: i64| edge(rng, T::from_int_literal(i128::from(v)).unwrap_or_else(T::lowest));
        DenseTensor::from_vec(vec![n], values.into_iter().map(item).collect()).expect("a vector")
    },
    string => {
        let strings: Vec<String> = values.iter().map(i64::to_string).collect();
        DenseTensor::String(StringTensor::from_strings(&strings, vec![n]).expect("a vector"))
    });
    flat.into()
}

/// Small integers around `0..=n`, with the odd negative or out-of-range one.
pub(crate) fn small_ints(rng: &mut Rng, len: usize, n: usize) -> Vec<i64> {
    (0..len)
        .map(|_| match rng.below(12) {
            0 => rng.range(-(n as i64) - 2, -1),
            1 => n as i64 + rng.range(0, 2),
            2 if rng.chance(0.3) => *rng.pick(EXTREME_INTS),
            _ => rng.range(0, n.saturating_sub(1) as i64),
        })
        .collect()
}

/// Row lengths that sum to `nvals` (sometimes off by a little, sometimes with a negative length).
pub(crate) fn lengths_for(rng: &mut Rng, nvals: usize) -> Vec<i64> {
    let nrows = rng.below(5);
    let mut lengths = vec![0i64; nrows];
    if nrows > 0 {
        for _ in 0..nvals {
            let r = rng.below(nrows);
            lengths[r] += 1;
        }
    } else if nvals > 0 {
        lengths.push(nvals as i64);
    }
    corrupt(rng, &mut lengths);
    lengths
}

/// With small probability, breaks one entry of `v` (off by one, negative, huge) or its length.
pub(crate) fn corrupt(rng: &mut Rng, v: &mut Vec<i64>) {
    if !rng.chance(0.25) {
        return;
    }
    match rng.below(5) {
        0 => v.push(rng.range(-1, 3)),
        1 => {
            v.pop();
        }
        _ if !v.is_empty() => {
            let i = rng.below(v.len());
            v[i] = match rng.below(3) {
                0 => v[i].wrapping_add(1),
                1 => v[i].wrapping_neg().wrapping_sub(1),
                _ => *rng.pick(EXTREME_INTS),
            };
        }
        _ => v.push(*rng.pick(EXTREME_INTS)),
    }
}

pub(crate) fn splits_for(rng: &mut Rng, nvals: usize) -> Vec<i64> {
    let mut lengths = lengths_for(rng, nvals);
    lengths.retain(|&l| l >= 0);
    let mut splits = vec![0i64];
    for l in lengths {
        splits.push(splits.last().copied().unwrap_or(0).saturating_add(l));
    }
    corrupt(rng, &mut splits);
    splits
}

pub(crate) fn rowids_for(rng: &mut Rng, nvals: usize) -> Vec<i64> {
    let mut ids: Vec<i64> = (0..nvals).map(|_| rng.range(0, 3)).collect();
    ids.sort_unstable();
    corrupt(rng, &mut ids);
    ids
}

/// Wraps a vector in an outer ragged dimension now and then (ragged indices, ragged masks).
pub(crate) fn maybe_ragged(rng: &mut Rng, v: RaggedTensor) -> RaggedTensor {
    if !rng.chance(0.3) || v.rank() != 1 {
        return v;
    }
    let n = v.nrows() as i64;
    let cut = rng.range(0, n);
    RaggedTensor::from_row_splits(v, vec![0, cut, n]).expect("splits over the vector")
}

// ---------------------------------------------------------------------------------------------
// Inputs for each op.
