//! Robustness sweep: every op of the registry, built from random (valid and invalid) attributes and
//! run on random values, must never panic, must produce values of the types it inferred, and must
//! leave its inputs untouched.
//!
//! The sweep is deterministic: a splitmix64 generator seeded per op name (and by
//! `RAGTIME_SWEEP_SEED`) drives everything. `RAGTIME_SWEEP_ITERS` sets the number of cases per op
//! (default [`DEFAULT_ITERS`]); `RAGTIME_SWEEP_OPS` and `RAGTIME_SWEEP_SKIP` (comma-separated op
//! names) restrict the sweep, e.g. to go on past an op that hangs. A failing run prints one
//! reproducer per distinct failure: the op name, its attributes and every input value with its type.
//!
//! Properties checked for every case:
//! 1. nothing panics: building the op, `name`, `infer`, `perform`, and printing the outputs;
//! 2. when `infer` accepts the input types and `perform` succeeds, there are as many outputs as
//!    inferred types and each output is accepted by its type (`TensorType::check`);
//! 3. the inputs are unchanged after `perform` (compared with deep copies made before the call);
//! 4. no call takes long or allocates much (inputs are tiny; a call past [`SLOW_CALL`] is a
//!    failure, and a call past [`HUNG_CALL`] or memory past [`MAX_RESIDENT`] aborts the run with
//!    its reproducer, since neither can be unwound);
//! 5. `infer` is monotone: when it accepts types with some known dims made unknown and `perform`
//!    succeeds on the values, it accepts their exact types too, and the output types it gave for
//!    the less precise types accept the ones it gives for the exact types.
//!
//! `perform` is public API too, so the sweep also runs it on a share of the inputs whose types
//! `infer` rejected, checking only that it does not panic.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, RaggedTensor, RowPartition, StringTensor, TensorType,
};
use ragtime_graph::{Attr, Attrs, OpRef};
use ragtime_ops::{op_from_name, OP_NAMES};

/// Cases per op when `RAGTIME_SWEEP_ITERS` is not set.
const DEFAULT_ITERS: usize = 2000;
/// A single call slower than this is reported as a failure (sizes are tiny; only a loop driven by a
/// huge attribute or a quadratic blow-up gets here).
const SLOW_CALL: Duration = Duration::from_secs(2);
/// A single call slower than this aborts the whole run (printing the case first).
const HUNG_CALL: Duration = Duration::from_secs(10);
/// Resident memory past which the run aborts with the case in progress (inputs are tiny: only an
/// allocation driven by a huge attribute or index gets here).
const MAX_RESIDENT: usize = 2 << 30;
/// Reproducers printed per distinct failure.
const EXAMPLES_PER_FAILURE: usize = 2;

// ---------------------------------------------------------------------------------------------
// Deterministic randomness.

/// splitmix64: tiny, fast, and good enough to drive a fuzzer deterministically.
struct Rng {
    state: u64,
    /// Whether values may hold `int32`'s extremes (see [`edge`]): true while generating operands
    /// of ops that only compute on elements, false for ops that read sizes or indices from data.
    extreme_int32: bool,
}

impl Rng {
    fn new(seed: u64) -> Self {
        Rng { state: seed, extreme_int32: false }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next_u64() as u128 % span) as i128) as i64
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// FNV-1a, to derive one seed per op name.
fn hash_name(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Integers that break naive arithmetic: overflow, sign, and sizes past the allocation cap
/// (`DenseTensor::MAX_ELEMENTS`, 2^31), so that a size built from them must be refused. Sizes just
/// under the cap are left out: they are legitimate requests for gigabytes.
const EXTREME_INTS: &[i64] = &[i64::MIN, i64::MAX, i64::MIN + 1, -(1 << 40), 1 << 40, 1 << 32, (1 << 31) + 1];
/// The extremes so far out that a difference or a quotient by a small number stays past the cap
/// (range bounds).
const FAR_INTS: &[i64] = &[i64::MIN, i64::MAX, i64::MIN + 1, -(1 << 40), 1 << 40];

// ---------------------------------------------------------------------------------------------
// Random values.

/// Strings with the usual suspects: empty, spaces, non-ASCII, NUL, invalid UTF-8.
const STRINGS: &[&[u8]] = &[
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
fn edge<T: Element>(rng: &Rng, v: T) -> T {
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
fn random_dense(rng: &mut Rng, dtype: DType, shape: Vec<usize>) -> DenseTensor {
    let n: usize = shape.iter().product();
    dispatch_dtype!(dtype,
    T => DenseTensor::from_vec(shape, random_elements::<T>(rng, n)).expect("n elements fit the shape"),
    string => {
        let strings: Vec<&[u8]> = (0..n).map(|_| *rng.pick(STRINGS)).collect();
        DenseTensor::String(StringTensor::from_strings(&strings, shape).expect("n strings fit the shape"))
    })
}

fn random_dtype(rng: &mut Rng) -> DType {
    *rng.pick(&DType::ALL)
}

/// A small shape: `rank` dims of 0..=4 (mostly non-zero).
fn random_shape(rng: &mut Rng, rank: usize) -> Vec<usize> {
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
fn random_value_of(rng: &mut Rng, dtype: DType) -> RaggedTensor {
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

fn random_value(rng: &mut Rng) -> RaggedTensor {
    let dtype = random_dtype(rng);
    random_value_of(rng, dtype)
}

/// A value with the structure of `x` (its partitions, shared or rebuilt equal, and its flat shape)
/// and new elements of `dtype`.
fn same_structure(rng: &mut Rng, x: &RaggedTensor, dtype: DType) -> RaggedTensor {
    let flat = random_dense(rng, dtype, x.flat_values().shape().to_vec());
    let partitions =
        if rng.chance(0.5) { x.partitions().to_vec() } else { x.partitions().iter().map(rebuilt).collect() };
    RaggedTensor::new(flat, partitions).expect("same structure as a valid value")
}

/// An equal partition (uniform if `p` is) that does not share its buffers, so that `ptr_eq`
/// fails and values are compared.
fn rebuilt(p: &RowPartition) -> RowPartition {
    match p.uniform_row_length() {
        Some(len) => RowPartition::from_uniform_row_length(len, p.nrows()),
        None => RowPartition::from_row_splits(p.row_splits().to_vec()),
    }
    .expect("the encoding of a valid partition")
}

/// A value with as many rows as `x` but its own ragged structure (a likely mismatch).
fn same_nrows(rng: &mut Rng, x: &RaggedTensor, dtype: DType) -> RaggedTensor {
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
fn column_for(rng: &mut Rng, x: &RaggedTensor, dtype: DType) -> RaggedTensor {
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
fn int_vector(rng: &mut Rng, values: Vec<i64>) -> RaggedTensor {
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
fn small_ints(rng: &mut Rng, len: usize, n: usize) -> Vec<i64> {
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
fn lengths_for(rng: &mut Rng, nvals: usize) -> Vec<i64> {
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
fn corrupt(rng: &mut Rng, v: &mut Vec<i64>) {
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

fn splits_for(rng: &mut Rng, nvals: usize) -> Vec<i64> {
    let mut lengths = lengths_for(rng, nvals);
    lengths.retain(|&l| l >= 0);
    let mut splits = vec![0i64];
    for l in lengths {
        splits.push(splits.last().copied().unwrap_or(0).saturating_add(l));
    }
    corrupt(rng, &mut splits);
    splits
}

fn rowids_for(rng: &mut Rng, nvals: usize) -> Vec<i64> {
    let mut ids: Vec<i64> = (0..nvals).map(|_| rng.range(0, 3)).collect();
    ids.sort_unstable();
    corrupt(rng, &mut ids);
    ids
}

/// Wraps a vector in an outer ragged dimension now and then (ragged indices, ragged masks).
fn maybe_ragged(rng: &mut Rng, v: RaggedTensor) -> RaggedTensor {
    if !rng.chance(0.3) || v.rank() != 1 {
        return v;
    }
    let n = v.nrows() as i64;
    let cut = rng.range(0, n);
    RaggedTensor::from_row_splits(v, vec![0, cut, n]).expect("splits over the vector")
}

// ---------------------------------------------------------------------------------------------
// Inputs for each op.

/// How inputs are laid out for an op, from its signature in the conformance README.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Profile {
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
enum PartitionKind {
    Splits,
    Lengths,
    Rowids,
    Starts,
    Limits,
}

const INTEGERS: &[DType] =
    &[DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32, DType::U64];

fn profile(name: &str) -> Profile {
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
fn inputs_for(rng: &mut Rng, profile: Profile) -> Vec<RaggedTensor> {
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
fn wild_inputs(rng: &mut Rng) -> Vec<RaggedTensor> {
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

/// The attributes each op reads (from the conformance README and the ops' `from_attrs`).
fn attr_names(name: &str) -> &'static [&'static str] {
    match name {
        "cast" => &["dtype"],
        "reduce_sum" | "reduce_mean" | "reduce_max" | "reduce_min" | "reduce_prod" | "reduce_all" | "reduce_any" => {
            &["axis", "keepdims"]
        }
        "concat" | "stack" | "row_lengths" => &["axis"],
        "gather" => &["axis", "batch_dims"],
        "reverse" => &["axis"],
        "tile" => &["multiples"],
        "getitem" => &["key"],
        "unsorted_segment_sum"
        | "unsorted_segment_max"
        | "unsorted_segment_min"
        | "unsorted_segment_prod"
        | "unsorted_segment_mean"
        | "unsorted_segment_sqrt_n" => &["num_segments"],
        "reduce_variance" | "reduce_std" | "reduce_logsumexp" | "reduce_euclidean_norm" => &["axis", "keepdims"],
        "argmax" | "argmin" => &["axis", "output_type"],
        "one_hot" => &["depth", "on_value", "off_value", "dtype"],
        "expand_dims" => &["axis"],
        "merge_dims" => &["outer_axis", "inner_axis"],
        "size" => &["out_type"],
        "bounding_shape" => &["axis", "out_type"],
        "ones_like" | "zeros_like" => &["dtype"],
        "ragged.segment_ids_to_row_splits" => &["num_segments", "out_type"],
        "from_value_rowids" => &["nrows"],
        "from_uniform_row_length" => &["uniform_row_length", "nrows"],
        "to_tensor" => &["default_value", "shape"],
        "strings.split" => &["sep", "maxsplit"],
        "strings.substr" => &["pos", "len", "unit"],
        "strings.join" => &["separator"],
        "strings.reduce_join" => &["axis", "separator", "keepdims"],
        "strings.length" => &["unit"],
        "strings.to_hash_bucket_fast" | "strings.to_hash_bucket" => &["num_buckets"],
        "strings.to_hash_bucket_strong" => &["num_buckets", "key"],
        "strings.lookup" => &["vocab", "num_oov_buckets"],
        "strings.unicode_encode" => &["output_encoding", "errors", "replacement_char"],
        "strings.regex_full_match" => &["pattern"],
        "strings.to_number" => &["out_type"],
        "strings.regex_replace" => &["pattern", "rewrite", "replace_global"],
        "strings.unicode_decode" | "strings.unicode_split" => &["input_encoding", "errors", "replacement_char"],
        "ragged.cross_hashed" => &["num_buckets", "hash_key"],
        "from_tensor" => &["padding", "ragged_rank"],
        "strings.ngrams" => &["ngram_width", "separator", "pad_values", "padding_width", "preserve_short_sequences"],
        "softmax" | "log_softmax" => &["axis"],
        "cumsum" | "cumprod" => &["axis", "exclusive", "reverse"],
        "sort" => &["axis", "direction"],
        "argsort" => &["axis", "direction", "stable"],
        "top_k" => &["k"],
        _ => &[],
    }
}

/// An attribute of the wrong kind.
fn wrong_kind(rng: &mut Rng) -> Attr {
    match rng.below(6) {
        0 => Attr::Null,
        1 => Attr::Bool(true),
        2 => Attr::Float(1.5),
        3 => Attr::Str("1".into()),
        4 => Attr::List(vec![Attr::Int(1), Attr::Str("x".into())]),
        _ => Attr::List(vec![]),
    }
}

/// An integer attribute: mostly in `lo..=hi`, sometimes extreme, sometimes of the wrong kind.
fn int_attr(rng: &mut Rng, lo: i64, hi: i64) -> Attr {
    match rng.below(20) {
        0 => wrong_kind(rng),
        1 | 2 => Attr::Int(*rng.pick(EXTREME_INTS)),
        _ => Attr::Int(rng.range(lo, hi)),
    }
}

/// A list of integer attributes, mostly `rank` long (the rank of the op's first input).
fn int_list_attr(rng: &mut Rng, rank: usize, lo: i64, hi: i64) -> Attr {
    let len = if rng.chance(0.7) { rank } else { rng.below(5) };
    Attr::List((0..len).map(|_| int_attr(rng, lo, hi)).collect())
}

fn string_attr(rng: &mut Rng) -> Attr {
    if rng.chance(0.05) {
        return wrong_kind(rng);
    }
    let s = *rng.pick(&[" ", "", ",", "ab", "\u{e9}", "<>", "  ", "\0"]);
    Attr::Str(s.to_string())
}

fn scalar_attr(rng: &mut Rng) -> Attr {
    match rng.below(7) {
        0 => Attr::Int(rng.range(-2, 5)),
        1 => Attr::Int(*rng.pick(EXTREME_INTS)),
        2 => Attr::Float(*rng.pick(&[0.5, -1.0, f64::NAN, f64::INFINITY, 1e300])),
        3 => Attr::Bool(rng.chance(0.5)),
        4 => Attr::Str(String::from_utf8_lossy(rng.pick::<&[u8]>(STRINGS)).into_owned()),
        5 => Attr::Null,
        _ => wrong_kind(rng),
    }
}

/// One item of a `getitem` key in Python syntax, valid or not.
fn key_item(rng: &mut Rng) -> String {
    let bound = |rng: &mut Rng| -> String {
        match rng.below(8) {
            0 | 1 => String::new(),
            2 => rng.pick(EXTREME_INTS).to_string(),
            _ => rng.range(-5, 5).to_string(),
        }
    };
    match rng.below(12) {
        0..=3 => match rng.below(10) {
            0 => rng.pick(EXTREME_INTS).to_string(),
            _ => rng.range(-5, 5).to_string(),
        },
        4..=7 => {
            let (start, stop) = (bound(rng), bound(rng));
            match rng.below(3) {
                0 => format!("{start}:{stop}"),
                _ => {
                    let step = match rng.below(8) {
                        0 => "0".to_string(),
                        1 => String::new(),
                        2 => rng.pick(EXTREME_INTS).to_string(),
                        _ => rng.pick(&["1", "2", "3", "-1", "-2", "-3"]).to_string(),
                    };
                    format!("{start}:{stop}:{step}")
                }
            }
        }
        8 => "...".into(),
        9 => rng.pick(&["None", "tf.newaxis", "newaxis"]).to_string(),
        10 => ":".into(),
        _ => rng
            .pick(&["", "a", "1:2:3:4", "+", "-", "1e3", "\u{e9}", "99999999999999999999", " : ", "()", "[1]"])
            .to_string(),
    }
}

fn key_attr(rng: &mut Rng) -> Attr {
    match rng.below(25) {
        0 => Attr::Int(rng.range(-3, 3)),
        1 => wrong_kind(rng),
        2 => Attr::Str(rng.pick(&["", "()", ",", " ", ",,", "1,,2", "...,...", "1,"]).to_string()),
        _ => {
            let n = rng.below(4) + 1;
            let items: Vec<String> = (0..n).map(|_| key_item(rng)).collect();
            Attr::Str(items.join(if rng.chance(0.5) { ", " } else { "," }))
        }
    }
}

/// A value for attribute `attr` of op `op` whose first input has rank `rank`.
fn attr_value(rng: &mut Rng, op: &str, attr: &str, rank: usize) -> Attr {
    match attr {
        "dtype" => match rng.below(12) {
            0 => Attr::Str(rng.pick(&["float", "", "int128", "Float32", "complex64"]).to_string()),
            1 => wrong_kind(rng),
            _ => Attr::Str(random_dtype(rng).name().to_string()),
        },
        "axis" if op == "reverse" => {
            if rng.chance(0.2) {
                int_attr(rng, -4, 4)
            } else {
                let len = rng.below(rank.min(3) + 1);
                int_list_attr(rng, len, -4, 4)
            }
        }
        "axis" => match rng.below(10) {
            0 => Attr::Null,
            1 if op.starts_with("reduce_") || op == "bounding_shape" => {
                let len = rng.below(rank.min(3) + 1);
                int_list_attr(rng, len, -4, 4)
            }
            _ => int_attr(rng, -4, 4),
        },
        "direction" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::Str("ascending".into()),
            _ => Attr::Str(rng.pick(&["ASCENDING", "DESCENDING"]).to_string()),
        },
        "k" => int_attr(rng, -1, 4),
        "outer_axis" | "inner_axis" | "batch_dims" => int_attr(rng, -4, 4),
        "depth" => int_attr(rng, -1, 5),
        "on_value" | "off_value" => scalar_attr(rng),
        "output_type" | "out_type" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::Str("float32".into()),
            _ => Attr::Str(rng.pick(&["int32", "int64"]).to_string()),
        },
        "keepdims" | "preserve_short_sequences" | "exclusive" | "reverse" | "stable" => match rng.below(10) {
            0 => wrong_kind(rng),
            _ => Attr::Bool(rng.chance(0.5)),
        },
        "multiples" => match rng.below(10) {
            0 => int_attr(rng, 0, 3),
            _ => int_list_attr(rng, rank, -1, 3),
        },
        "key" if op == "strings.to_hash_bucket_strong" => int_list_attr(rng, 2, -3, 1 << 40),
        "key" => key_attr(rng),
        "num_segments" | "nrows" => int_attr(rng, -1, 6),
        "uniform_row_length" => {
            let lo = if rng.chance(0.8) { 1 } else { -1 };
            int_attr(rng, lo, 3)
        }
        "padding" | "default_value" => scalar_attr(rng),
        "shape" => match rng.below(10) {
            0 => wrong_kind(rng),
            _ => {
                let len = if rng.chance(0.7) { rank } else { rng.below(5) };
                Attr::List(
                    (0..len)
                        .map(|_| match rng.below(6) {
                            0 => Attr::Null,
                            1 => Attr::Int(-1),
                            _ => int_attr(rng, 0, 4),
                        })
                        .collect(),
                )
            }
        },
        "sep" | "separator" => string_attr(rng),
        "maxsplit" => int_attr(rng, -1, 3),
        "pos" | "len" => int_attr(rng, -5, 5),
        "unit" => match rng.below(6) {
            0 => Attr::Str("CHAR".into()),
            1 => wrong_kind(rng),
            _ => Attr::Str(rng.pick(&["BYTE", "UTF8_CHAR"]).to_string()),
        },
        "num_buckets" | "num_oov_buckets" => int_attr(rng, 0, 1000),
        "hash_key" => int_attr(rng, -3, 1 << 40),
        "ragged_rank" => int_attr(rng, 0, 3),
        "pattern" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::Str(rng.pick(&["(a", "[b-", "(?=a)b", "a{99999}"]).to_string()),
            _ => Attr::Str(rng.pick(&["a", "[a-c]+", "(b)(c)?", "", ".*", "^a|c$", "世界"]).to_string()),
        },
        "rewrite" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::Str(rng.pick(&["\\9", "\\", "\\x"]).to_string()),
            _ => Attr::Str(rng.pick(&["", "x", "<\\0>", "\\1\\1", "$1"]).to_string()),
        },
        "replace_global" => match rng.below(10) {
            0 => wrong_kind(rng),
            _ => Attr::Bool(rng.chance(0.5)),
        },
        "output_encoding" | "input_encoding" => match rng.below(6) {
            0 => Attr::Str("UTF-16".into()),
            1 => wrong_kind(rng),
            _ => Attr::Str("UTF-8".into()),
        },
        "errors" => match rng.below(8) {
            0 => Attr::Str("loud".into()),
            1 => wrong_kind(rng),
            _ => Attr::Str(rng.pick(&["replace", "ignore", "strict"]).to_string()),
        },
        "replacement_char" => match rng.below(6) {
            0 => Attr::Int(0xD800),
            1 => int_attr(rng, -1, 0x11_0000),
            _ => Attr::Int(*rng.pick(&[0xFFFD, 63, 32])),
        },
        "vocab" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::List(vec![string_attr(rng), string_attr(rng)]),
            _ => Attr::List((0..rng.below(5)).map(|k| Attr::Str(["a", "", "bb", "ccc", "d"][k].into())).collect()),
        },
        "ngram_width" => match rng.below(3) {
            0 => {
                let len = rng.below(4);
                int_list_attr(rng, len, 0, 4)
            }
            _ => {
                let lo = if rng.chance(0.8) { 1 } else { -1 };
                int_attr(rng, lo, 4)
            }
        },
        "pad_values" => match rng.below(5) {
            0 => wrong_kind(rng),
            1 | 2 => string_attr(rng),
            _ => Attr::List(vec![string_attr(rng), string_attr(rng)]),
        },
        "padding_width" => int_attr(rng, -2, 4),
        _ => wrong_kind(rng),
    }
}

/// Random attributes for `op` whose first input has rank `rank`: each attribute it reads, present
/// most of the time; now and then an attribute it does not know.
fn attrs_for(rng: &mut Rng, op: &str, rank: usize) -> BTreeMap<String, Attr> {
    let mut map = BTreeMap::new();
    for &attr in attr_names(op) {
        if rng.chance(0.85) {
            map.insert(attr.to_string(), attr_value(rng, op, attr, rank));
        }
    }
    if rng.chance(0.03) {
        let attr = *rng.pick(&["axis", "bogus", "dtype", "key", "multiples"]);
        map.insert(attr.to_string(), attr_value(rng, op, attr, rank));
    }
    map
}

// ---------------------------------------------------------------------------------------------
// Running one case.

thread_local! {
    /// True while [`catch`] runs a call on this thread: its panics are recorded, not printed.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// The last panic caught on this thread ("message at file:line").
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that records the message and location of panics inside [`catch`]
/// instead of printing one report per caught panic; other panics (the test's own assertions) go
/// to the default hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                return default(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".into());
            let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{message} at {location}")));
        }));
    });
}

/// What the watchdog knows about the call in progress.
type Current = Arc<Mutex<Option<(Instant, String)>>>;

/// Starts a thread that aborts the process (after printing the case) when one call hangs or its
/// memory runs away: neither can be unwound, and a silent timeout or an OOM kill would hide the
/// reproducer.
fn start_watchdog() -> Current {
    let current: Current = Arc::new(Mutex::new(None));
    let watched = Arc::clone(&current);
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(50));
        let guard = watched.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((start, case)) = guard.as_ref() {
            let why = if start.elapsed() > HUNG_CALL {
                format!("call hung for {HUNG_CALL:?}")
            } else if resident_bytes().is_some_and(|b| b > MAX_RESIDENT) {
                format!(
                    "memory passed {} MiB during (or, if freed memory was kept, after) this call",
                    MAX_RESIDENT >> 20
                )
            } else {
                continue;
            };
            // Written straight to stderr: the test harness's capture would be lost on exit.
            let _ = writeln!(std::io::stderr(), "robustness sweep: {why}:\n{case}");
            std::process::exit(101);
        }
    });
    current
}

/// The resident memory of this process, where `/proc` tells it (Linux).
fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// One call under `catch_unwind`, timed and watched; `Err` carries the panic message.
fn catch<R>(
    watch: &Current,
    stage: &str,
    case: &dyn Fn() -> String,
    f: impl FnOnce() -> R,
) -> (Result<R, String>, Duration) {
    *watch.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), format!("[{stage}] {}", case())));
    let start = Instant::now();
    CATCHING.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    let elapsed = start.elapsed();
    // Freed memory is not always returned to the system, so the watchdog may see a blow-up only
    // after the call that caused it; a call long enough to have touched gigabytes checks here.
    if elapsed > Duration::from_millis(20) && resident_bytes().is_some_and(|b| b > MAX_RESIDENT) {
        let case = format!("[{stage}] {}", case());
        let _ = writeln!(std::io::stderr(), "robustness sweep: memory passed {} MiB in:\n{case}", MAX_RESIDENT >> 20);
        std::process::exit(101);
    }
    *watch.lock().unwrap_or_else(|e| e.into_inner()) = None;
    let result = result.map_err(|_| LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "panic".into()));
    (result, elapsed)
}

/// A copy of `x` that shares no buffer with it, to detect in-place mutation.
fn deep_copy(x: &RaggedTensor) -> RaggedTensor {
    let fv = x.flat_values();
    let shape = fv.shape().to_vec();
    let flat = dispatch_dtype!(fv.dtype(),
    T => DenseTensor::from_vec(shape, fv.as_slice::<T>().expect("standard layout").to_vec()).expect("same shape"),
    string => {
        let s = fv.as_strings().expect("a string column");
        DenseTensor::String(StringTensor::from_strings(&s.iter().collect::<Vec<_>>(), shape).expect("same shape"))
    });
    RaggedTensor::new(flat, x.partitions().iter().map(rebuilt).collect()).expect("same structure")
}

/// Types for `infer`: the exact types of the inputs, or (sometimes) with known dims made unknown.
fn types_for(rng: &mut Rng, inputs: &[RaggedTensor]) -> Vec<TensorType> {
    let loosen = rng.chance(0.3);
    inputs
        .iter()
        .map(|x| {
            let mut t = TensorType::of(x);
            if loosen {
                for axis in 0..t.rank() {
                    if matches!(t.dims()[axis], Dim::Known(_)) && rng.chance(0.5) {
                        t = t.with_dim(axis, Dim::Unknown).expect("a known dim made unknown keeps the type valid");
                    }
                }
            }
            t
        })
        .collect()
}

/// Types as `int32[2, *], float32[]`.
fn show_types(types: &[TensorType]) -> String {
    types.iter().map(TensorType::to_string).collect::<Vec<_>>().join(", ")
}

/// A reproducer: the op with its attributes, and each input with its exact type, the type `infer`
/// was given, and (for ragged inputs) the nested row splits, marking partitions built with a
/// uniform row length.
fn describe(op: &str, attrs: &BTreeMap<String, Attr>, inputs: &[RaggedTensor], types: &[TensorType]) -> String {
    let mut s = format!("op_from_name({op:?}, {attrs:?})\n");
    for (i, (x, t)) in inputs.iter().zip(types).enumerate() {
        let _ = write!(s, "  input {i}: {x}  type {}  infer given {t}", TensorType::of(x));
        if !x.is_dense() {
            let _ = write!(s, "  splits {:?}", x.nested_row_splits());
            let uniform: Vec<Option<usize>> = x.partitions().iter().map(RowPartition::uniform_row_length).collect();
            if uniform.iter().any(Option::is_some) {
                let _ = write!(s, "  uniform row lengths {uniform:?}");
            }
        }
        s.push('\n');
    }
    s
}

/// One distinct failure (op, what went wrong, where) with its first reproducers.
#[derive(Default)]
struct Failures {
    by_key: BTreeMap<(String, String), (usize, Vec<String>)>,
}

impl Failures {
    fn add(&mut self, op: &str, what: String, case: String) {
        let entry = self.by_key.entry((op.to_string(), what)).or_default();
        entry.0 += 1;
        if entry.1.len() < EXAMPLES_PER_FAILURE {
            entry.1.push(case);
        }
    }

    fn report(&self) -> String {
        let mut s = String::new();
        for ((op, what), (count, examples)) in &self.by_key {
            let _ = writeln!(s, "== {op}: {what} ({count} cases)");
            for e in examples {
                let _ = writeln!(s, "{e}");
            }
        }
        s
    }
}

/// Counts of what the sweep reached, to show it does more than hit argument checks.
#[derive(Default, Debug)]
struct Coverage {
    built: usize,
    inferred: usize,
    performed: usize,
    /// Cases where `infer` refused the exact input types but `perform` computed a value anyway:
    /// not a failure (a stricter `infer` is safe), shown to spot over-strict type rules.
    lenient_perform: usize,
}

/// Runs one case of `op_name`; records every property violation in `failures`.
fn run_case(rng: &mut Rng, op_name: &str, watch: &Current, failures: &mut Failures, coverage: &mut Coverage) {
    let inputs = if rng.chance(0.1) { wild_inputs(rng) } else { inputs_for(rng, profile(op_name)) };
    let attr_map = attrs_for(rng, op_name, inputs.first().map_or(0, RaggedTensor::rank));
    let types = types_for(rng, &inputs);
    let originals: Vec<RaggedTensor> = inputs.iter().map(deep_copy).collect();
    let case = || describe(op_name, &attr_map, &inputs, &types);
    // `what` keys the failure (one reproducer set per key); `detail` goes with the reproducer.
    let mut fail_with = |what: String, detail: String| failures.add(op_name, what, format!("{detail}\n{}", case()));

    let attrs = Attrs::new(op_name, attr_map.clone());
    let (built, elapsed) = catch(watch, "build", &case, || op_from_name(op_name, &attrs));
    let op: OpRef = match built {
        Err(p) => return fail_with(panic_key("op_from_name", &p), p),
        Ok(Err(_)) => return,
        Ok(Ok(op)) => op,
    };
    if elapsed > SLOW_CALL {
        fail_with("op_from_name is slow".into(), format!("took {elapsed:?}"));
    }
    coverage.built += 1;
    if let (Err(p), _) = catch(watch, "name", &case, || op.name()) {
        return fail_with(panic_key("name()", &p), p);
    }

    let (inferred, elapsed) = catch(watch, "infer", &case, || op.output_types(&types));
    if elapsed > SLOW_CALL {
        fail_with("infer is slow".into(), format!("took {elapsed:?}"));
    }
    let inferred = match inferred {
        Err(p) => return fail_with(panic_key("infer", &p), p),
        Ok(r) => r,
    };
    // `perform` must not panic on any value; on values whose types `infer` refused it is only
    // checked for panics, on a share of the cases.
    if inferred.is_err() && !rng.chance(0.3) {
        return;
    }
    let (performed, elapsed) = catch(watch, "perform", &case, || op.perform(&inputs));
    if elapsed > SLOW_CALL {
        fail_with(
            format!("{} is slow", if inferred.is_ok() { "perform" } else { "perform (refused types)" }),
            format!("took {elapsed:?}"),
        );
    }
    let stage = if inferred.is_ok() { "perform" } else { "perform (types refused by infer)" };
    let performed = match performed {
        Err(p) => return fail_with(panic_key(stage, &p), p),
        Ok(r) => r,
    };
    for (i, (x, original)) in inputs.iter().zip(&originals).enumerate() {
        if !x.equals(original) || x.shape() != original.shape() {
            fail_with(format!("{stage} changed input {i}"), format!("input {i} is now {x}"));
        }
    }
    let exact: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    let inferred = match inferred {
        Ok(inferred) => inferred,
        Err(_) => {
            if performed.is_ok() && types == exact {
                coverage.lenient_perform += 1;
            }
            return;
        }
    };
    coverage.inferred += 1;
    if types != exact && performed.is_ok() {
        // Property 5: the values are valid (perform computed them) and their exact types refine
        // the loosened ones, so infer must accept them too, with output types that refine the
        // loosened outputs.
        match catch(watch, "infer (exact types)", &case, || op.output_types(&exact)).0 {
            Err(p) => return fail_with(panic_key("infer", &p), p),
            Ok(Err(e)) => fail_with(
                "infer refuses exact types after accepting less precise ones".into(),
                format!("with exact types: {e}"),
            ),
            Ok(Ok(refined)) => {
                let agree =
                    refined.len() == inferred.len() && inferred.iter().zip(&refined).all(|(loose, r)| loose.accepts(r));
                if !agree {
                    fail_with(
                        "infer on exact types is not a refinement of infer on less precise ones".into(),
                        format!(
                            "less precise inputs gave {}, exact inputs gave {}",
                            show_types(&inferred),
                            show_types(&refined)
                        ),
                    );
                }
            }
        }
    }
    let Ok(outputs) = performed else { return };
    coverage.performed += 1;
    if outputs.len() != inferred.len() {
        fail_with(
            "infer and perform disagree on the number of outputs".into(),
            format!("infer gave {} types, perform gave {} outputs", inferred.len(), outputs.len()),
        );
        return;
    }
    for (i, (out, ty)) in outputs.iter().zip(&inferred).enumerate() {
        if let Err(e) = ty.check(out, &format!("output {i}")) {
            fail_with(format!("output {i} does not match its inferred type"), format!("{e}; the output is {out}"));
        }
        if let (Err(p), _) = catch(watch, "print output", &case, || out.to_string()) {
            fail_with(panic_key("printing an output", &p), p);
        }
    }
}

/// The failure key of a panic: the stage and the panic's location (messages carry data, locations
/// do not, so one bug gives one key).
fn panic_key(stage: &str, panic: &str) -> String {
    let location = panic.rsplit(" at ").next().unwrap_or(panic);
    format!("{stage} panicked at {location}")
}

/// Cases per op: `RAGTIME_SWEEP_ITERS` or [`DEFAULT_ITERS`].
fn iterations() -> usize {
    std::env::var("RAGTIME_SWEEP_ITERS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_ITERS)
}

/// A comma-separated list of op names from the environment.
fn env_list(var: &str) -> Option<Vec<String>> {
    std::env::var(var).ok().map(|v| v.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect())
}

/// The sweep's seed: `RAGTIME_SWEEP_SEED` (decimal) or a fixed default.
fn base_seed() -> u64 {
    std::env::var("RAGTIME_SWEEP_SEED").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0x5EED_5EED)
}

#[test]
fn every_op_survives_random_attributes_and_values() {
    install_panic_hook();
    let watch = start_watchdog();
    let iters = iterations();
    let seed = base_seed();
    let mut failures = Failures::default();
    let mut summary = String::new();
    let only = env_list("RAGTIME_SWEEP_OPS");
    let skip = env_list("RAGTIME_SWEEP_SKIP");
    for &op in OP_NAMES {
        if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == op)) || skip.iter().flatten().any(|n| n == op) {
            continue;
        }
        let mut rng = Rng::new(seed ^ hash_name(op));
        let mut coverage = Coverage::default();
        for _ in 0..iters {
            run_case(&mut rng, op, &watch, &mut failures, &mut coverage);
        }
        let _ = writeln!(summary, "{op}: {coverage:?}");
        // A profile that never gets past the argument checks would make the sweep pointless.
        if iters >= 100 {
            assert!(coverage.performed > 0, "{op}: no case of {iters} reached perform successfully\n{summary}");
        }
    }
    println!("{summary}");
    assert!(
        failures.by_key.is_empty(),
        "robustness sweep failures (seed {seed}, {iters} cases per op):\n{}",
        failures.report()
    );
}

#[test]
fn catch_reports_panics_with_their_location() {
    install_panic_hook();
    let watch: Current = Arc::new(Mutex::new(None));
    let case = || "a deliberate panic".to_string();
    let (result, _) = catch(&watch, "self-test", &case, || -> usize { panic!("boom {}", 42) });
    let message = result.expect_err("the panic is caught");
    assert!(message.starts_with("boom 42 at ") && message.contains("robustness.rs"), "got {message:?}");
    assert_eq!(
        panic_key("perform", &message).split(':').next(),
        Some("perform panicked at crates/ops/tests/robustness.rs")
    );
    let (result, _) = catch(&watch, "self-test", &case, || 7);
    assert_eq!(result, Ok(7));
}
