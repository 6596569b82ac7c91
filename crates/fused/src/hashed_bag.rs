//! `HashedGatherReduce`: an embedding bag of hashed string features (a row's tokens, its n-grams)
//! in one pass over the tokens: each row's features are hashed where they are read (each n-gram
//! assembled in a small per-thread buffer) and their table rows added to the row's accumulator,
//! so neither the n-gram strings nor the `[features]` bucket tensors are ever written.
//!
//! It replaces `GatherReduce(p_0, h_0(x), p_1, h_1(x), ...)` where every `h_k` hashes the same
//! ragged tokens `x` (`to_hash_bucket_fast(x)` or `HashedNgrams(x)`): per row it adds the table
//! rows of feature 0's buckets in order, then feature 1's, ..., exactly the additions
//! `GatherReduce` makes over the bucket tensors (and the same f64 division for means), so the
//! result is bit-identical.

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Element, ExecContext, RaggedTensor, Result, StringTensor, TensorType};
use ragtime_graph::{Cost, FunctionGraph, Op, OpProperties};
use ragtime_ops::reduce::{add_item, ReduceKind, RowSum};
use ragtime_ops::strings::{HashedNgrams, OneWidth, ToHashBucketFast};
use ragtime_runtime::{parallel, InnerGraph};

use crate::gather_reduce::GatherReduce;

/// One hashed feature of a row's tokens.
#[derive(Debug, Clone, PartialEq)]
pub enum HashedFeature {
    /// Each token, hashed (`to_hash_bucket_fast(x)`).
    Tokens(ToHashBucketFast),
    /// Each n-gram of one width, hashed (`HashedNgrams(x)`).
    Ngrams(HashedNgrams),
}

impl HashedFeature {
    fn hash(&self) -> &ToHashBucketFast {
        match self {
            HashedFeature::Tokens(hash) => hash,
            HashedFeature::Ngrams(hashed) => hashed.hash(),
        }
    }
}

/// Adds the rows `buckets` of `table` (rows of `acc.len()` values) to `acc`, bucket by bucket, each
/// value's additions in that order (the reference's bits); may panic, as slicing does, on a bucket
/// without a row. The JIT hands one compiled for a wider instruction set than this crate's to
/// [`HashedGatherReduce::with_rows_add`].
pub type RowsAddF32 = fn(&mut [f32], &[f32], &[usize]);

/// The fused op; inputs are `(tokens, table_0, table_1, ...)`, one table per feature.
#[derive(Debug, Clone)]
pub struct HashedGatherReduce {
    features: Vec<HashedFeature>,
    kind: ReduceKind,
    keepdims: bool,
    inner: InnerGraph,
    /// The float32 row sum, when the JIT gave one (else [`add_rows`]).
    rows_add: Option<RowsAddF32>,
}

impl PartialEq for HashedGatherReduce {
    /// The same sums: which code adds the rows does not change their bits.
    fn eq(&self, other: &Self) -> bool {
        (&self.features, self.kind, self.keepdims, &self.inner)
            == (&other.features, other.kind, other.keepdims, &other.inner)
    }
}

/// A feature as one call computes it.
enum Source<'a, T> {
    Tokens {
        hash: &'a ToHashBucketFast,
        table: &'a [T],
    },
    Ngrams {
        op: &'a HashedNgrams,
        grams: OneWidth<'a>,
        width: i64,
        /// The bytes of an n-gram's pads and separators, plus the 16 `append_bytes` may write
        /// past its end.
        bound: usize,
        table: &'a [T],
    },
    /// N-grams of a batch without any token and without padding for that case: none in any row.
    Nothing,
}

/// Adds the rows `buckets` of `table` (rows of `acc.len()` values) to `acc`, in order.
#[inline(always)]
fn add_rows<T: RowSum>(acc: &mut [T], table: &[T], buckets: &[usize]) {
    let n = acc.len();
    for &b in buckets {
        add_item(acc, &table[b * n..b * n + n]);
    }
}

/// A row sum ([`RowsAddF32`] for any element type).
type RowsAdd<T> = fn(&mut [T], &[T], &[usize]);

/// What every row of a call reads: its features, and the row sum given for its element type.
type Features<'s, 'a, T> = (&'s [Source<'a, T>], Option<RowsAdd<T>>);

/// The row sum of `T`: the op's [`RowsAddF32`] for float32, else none (then [`add_rows`]).
fn rows_add_of<T: 'static>(rows_add: Option<RowsAddF32>) -> Option<RowsAdd<T>> {
    (&rows_add as &dyn Any).downcast_ref::<Option<RowsAdd<T>>>().copied().flatten()
}

/// N-grams assembled before the first of them is hashed (see [`bag_row`]).
const NGRAM_BATCH: usize = 8;

/// What one thread reuses from row to row: the buckets of one feature of the row, and a batch of
/// n-grams (their bytes one after the other, and where each ends).
#[derive(Default)]
struct Scratch {
    buckets: Vec<usize>,
    ngrams: Vec<u8>,
    ends: Vec<usize>,
}

/// Row `r` of the tokens (`offsets` of every token, `splits` of the rows) summed into `acc` (zeros
/// on entry): every feature's table rows in turn. Each feature's buckets are hashed first, then
/// their rows added, so the accumulator stays in registers while rows are added (a hash call
/// between two adds would spill it). N-grams are assembled [`NGRAM_BATCH`] at a time, all of a
/// batch before any is hashed: a hash reading an n-gram just written by several overlapping
/// stores waits for them to reach the cache (they cannot be forwarded), which made every hash
/// wait for the one before; written a batch ahead, they are there. Returns how many rows were
/// added.
#[inline(always)]
fn bag_row<T: RowSum>(
    (sources, rows_add): Features<'_, '_, T>,
    (bytes, offsets, splits): (&[u8], &[i64], &[i64]),
    r: usize,
    acc: &mut [T],
    scratch: &mut Scratch,
) -> usize {
    let tokens = &offsets[splits[r] as usize..=splits[r + 1] as usize];
    let len = tokens.len() as i64 - 1;
    let mut count = 0usize;
    for source in sources {
        let Scratch { buckets, ngrams, ends } = &mut *scratch;
        buckets.clear();
        let table = match source {
            Source::Tokens { hash, table } => {
                buckets.extend(tokens.windows(2).map(|w| hash.bucket(&bytes[w[0] as usize..w[1] as usize]) as usize));
                table
            }
            Source::Ngrams { op, grams, width, bound, table } => {
                // A token is in at most `width` n-grams of a batch, so `width` times the row's
                // bytes bound the batch's tokens.
                let row_bytes = (tokens[tokens.len() - 1] - tokens[0]) as usize;
                let room = *width as usize * row_bytes + NGRAM_BATCH * bound;
                if ngrams.len() < room {
                    ngrams.resize(room, 0);
                }
                let count = op.ngrams().count_for_width(len, *width);
                for first in (0..count).step_by(NGRAM_BATCH) {
                    ends.clear();
                    let mut at = 0;
                    for j in first..(first + NGRAM_BATCH as i64).min(count) {
                        at = grams.append(ngrams, at, tokens, j);
                        ends.push(at);
                    }
                    let mut start = 0;
                    buckets.extend(ends.iter().map(|&end| {
                        let bucket = op.hash().bucket(&ngrams[start..end]) as usize;
                        start = end;
                        bucket
                    }));
                }
                table
            }
            Source::Nothing => continue,
        };
        match rows_add {
            Some(add) => add(acc, table, buckets),
            None => add_rows(acc, table, buckets),
        }
        count += buckets.len();
    }
    count
}

/// The rows of `chunk` (rows `first_row..`, `N` values each), in a `[T; N]` accumulator the
/// compiler keeps in registers.
fn bag_rows<T: RowSum, const N: usize>(
    sources: Features<'_, '_, T>,
    strings: (&[u8], &[i64], &[i64]),
    first_row: usize,
    chunk: &mut [T],
    mean: bool,
) {
    let mut scratch = Scratch::default();
    for (r, out) in (first_row..).zip(chunk.chunks_exact_mut(N)) {
        let mut acc = [T::ZERO; N];
        let count = bag_row(sources, strings, r, &mut acc, &mut scratch);
        for (o, a) in out.iter_mut().zip(acc) {
            *o = if mean { T::mean(a, count) } else { a };
        }
    }
}

/// [`bag_rows`] for rows of any number of values.
fn bag_rows_of_any_width<T: RowSum>(
    sources: Features<'_, '_, T>,
    strings: (&[u8], &[i64], &[i64]),
    first_row: usize,
    chunk: &mut [T],
    (inner, mean): (usize, bool),
) {
    let mut scratch = Scratch::default();
    for (r, out) in (first_row..).zip(chunk.chunks_exact_mut(inner)) {
        let count = bag_row(sources, strings, r, out, &mut scratch);
        if mean {
            for o in out.iter_mut() {
                *o = T::mean(*o, count);
            }
        }
    }
}

impl HashedGatherReduce {
    /// The bag of `features` of one token tensor, reduced as `reduce` (the `GatherReduce` it
    /// replaces, whose tables are picked by the features' buckets in order), with the ops it
    /// replaces as its inner graph (inputs `tokens, table_0, ...`: its types, errors and every case
    /// the fast path does not take). `None` unless there is one table per feature.
    pub fn new(features: Vec<HashedFeature>, reduce: &GatherReduce, inner: InnerGraph) -> Option<Self> {
        let fits = !features.is_empty()
            && reduce.tables() == features.len()
            && inner.graph().inputs().len() == features.len() + 1;
        fits.then(|| HashedGatherReduce {
            features,
            kind: reduce.kind(),
            keepdims: reduce.keepdims(),
            inner,
            rows_add: None,
        })
    }

    /// The op adding float32 table rows with `rows_add` (the same bits, faster code).
    pub fn with_rows_add(&self, rows_add: RowsAddF32) -> Self {
        HashedGatherReduce { rows_add: Some(rows_add), ..self.clone() }
    }

    /// Whether float32 rows are added by code the JIT gave ([`Self::with_rows_add`]).
    pub fn has_rows_add(&self) -> bool {
        self.rows_add.is_some()
    }

    /// The features, in the order their rows are added.
    pub fn features(&self) -> &[HashedFeature] {
        &self.features
    }

    /// The fast path, when the tokens are ragged `[nrows, *]` and every table is dense of element
    /// type `T` with one row shape and a row for every bucket of its feature; `None` sends the call
    /// to the inner graph.
    fn fast<T: RowSum + Element + Send + Sync + 'static>(
        &self,
        ctx: &ExecContext,
        inputs: &[RaggedTensor],
    ) -> Option<Result<RaggedTensor>> {
        let (tokens, tables) = inputs.split_first()?;
        let [partition] = tokens.partitions() else { return None };
        let col: &StringTensor = tokens.flat_values().as_strings()?;
        let first_table = tables.first()?.flat_values();
        let row_shape = first_table.shape().get(1..)?.to_vec();
        let inner: usize = row_shape.iter().product();
        if col.shape().len() != 1 || tables.len() != self.features.len() || inner == 0 {
            return None;
        }
        let splits = partition.row_splits();
        let mut sources = Vec::with_capacity(tables.len());
        for (feature, table) in self.features.iter().zip(tables) {
            let values = table.flat_values();
            let buckets = usize::try_from(feature.hash().num_buckets()).ok()?;
            let fits = table.is_dense() && values.shape().get(1..) == Some(&row_shape[..]);
            if !fits || values.shape()[0] < buckets {
                return None;
            }
            let table = values.as_slice::<T>()?;
            sources.push(match feature {
                HashedFeature::Tokens(hash) => Source::Tokens { hash, table },
                // TensorFlow's kernel: no tokens at all means no n-gram in any row.
                HashedFeature::Ngrams(op) if col.is_empty() && !op.ngrams().pads_without_tokens() => Source::Nothing,
                HashedFeature::Ngrams(op) => {
                    let ngrams = op.ngrams();
                    let width = ngrams.one_width()?;
                    if let Err(e) = ngrams.check_output_size(ctx, col, splits) {
                        return Some(Err(e));
                    }
                    let (left, right) = ngrams.pad_values().map_or((0, 0), |(l, r)| (l.len(), r.len()));
                    let w = usize::try_from(width).ok()?;
                    // Pads, separators and the 16 bytes `append_bytes` may write past the end.
                    let bound = w * left.max(right) + (w - 1) * ngrams.separator().len() + 16;
                    Source::Ngrams { op, grams: OneWidth::new(ngrams, col, width), width, bound, table }
                }
            });
        }
        let nrows = partition.nrows();
        let op = if self.kind == ReduceKind::Mean { "reduce_mean" } else { "reduce_sum" };
        // Zeros written by the threads that then fill the rows: the sums of any width start from them.
        let mut out: Vec<T> = match nrows.checked_mul(inner).map(|n| parallel::filled(ctx, op, n, T::ZERO)) {
            Some(Ok(v)) => v,
            Some(Err(e)) => return Some(Err(e)),
            None => return None,
        };
        let mean = self.kind == ReduceKind::Mean;
        let strings: (&[u8], &[i64], &[i64]) = (&col.bytes()[..], &col.offsets()[..], splits);
        let sources = (&sources[..], rows_add_of::<T>(self.rows_add));
        let filled = parallel::fill_chunks_balanced(ctx, &mut out, inner, |first_row, chunk| match inner {
            4 => bag_rows::<T, 4>(sources, strings, first_row, chunk, mean),
            8 => bag_rows::<T, 8>(sources, strings, first_row, chunk, mean),
            16 => bag_rows::<T, 16>(sources, strings, first_row, chunk, mean),
            32 => bag_rows::<T, 32>(sources, strings, first_row, chunk, mean),
            _ => bag_rows_of_any_width(sources, strings, first_row, chunk, (inner, mean)),
        });
        if let Err(e) = filled {
            return Some(Err(e));
        }
        let mut shape = vec![nrows];
        if self.keepdims {
            shape.push(1);
        }
        shape.extend_from_slice(&row_shape);
        Some(DenseTensor::from_vec(shape, out).map(RaggedTensor::from))
    }
}

impl Op for HashedGatherReduce {
    fn name(&self) -> String {
        let kind = if self.kind == ReduceKind::Mean { "mean" } else { "sum" };
        let keep = if self.keepdims { ", keepdims" } else { "" };
        let features: Vec<String> = self
            .features
            .iter()
            .map(|f| match f {
                HashedFeature::Tokens(hash) => format!("tokens/{}", hash.num_buckets()),
                HashedFeature::Ngrams(op) => format!(
                    "ngrams{}/{}",
                    op.ngrams().one_width().map_or(String::new(), |w| w.to_string()),
                    op.hash().num_buckets()
                ),
            })
            .collect();
        format!("HashedGatherReduce{{{kind}, features=[{}]{keep}}}", features.join(", "))
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        self.inner.infer(inputs)
    }

    fn keeps_uniform_rows(&self) -> bool {
        // As `GatherReduce`: the output is dense, its type the inner graph's.
        true
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let fast = match inputs.get(1).map(|t| t.dtype()) {
            _ if inputs.len() != self.features.len() + 1 => None,
            Some(DType::F32) => self.fast::<f32>(ctx, inputs),
            Some(DType::F64) => self.fast::<f64>(ctx, inputs),
            _ => None,
        };
        self.inner.fast_or_run(ctx, inputs, fast)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn inner_graph(&self) -> Option<&FunctionGraph> {
        Some(self.inner.graph())
    }

    fn properties(&self) -> OpProperties {
        // The inner graph's gathers fail on a table with fewer rows than buckets.
        OpProperties { can_fail: true, cost: Cost::Expensive, ..OpProperties::default() }
    }
}
