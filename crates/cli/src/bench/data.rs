//! The benchmark data of `docs/benchmarks.md`, generated deterministically: the ragged float32 pair `x`, `z`
//! (W1-W6, their ragged rank 2 view, and their form with an inner dimension of 8), the bigram queries, vocabulary and embedding table (W7), and the
//! users -> sessions -> events durations and features (W9).

use std::sync::Arc;

use ragtime::{DenseTensor, RaggedTensor, Result, RowPartition, StringTensor};

/// The number of rows `docs/benchmarks.md` fixes for W1-W4.
pub const DEFAULT_ROWS: usize = 1 << 20;
/// The number of W7 queries at the default size.
pub const DEFAULT_QUERIES: usize = 100_000;
/// W7's vocabulary size.
pub const VOCABULARY: usize = 5_000;
/// W7's longest query, in words (the shortest has one).
pub const MAX_WORDS: usize = 12;
/// W7's hash buckets: the embedding table's rows.
pub const BUCKETS: usize = 1024;
/// W7's embedding width: the embedding table's columns.
pub const DIM: usize = 16;
/// The seed of W7's SplitMix64 stream.
pub const SEED: u64 = 0x5241_4754_494d_4537;

/// Row `i`'s length: `(i * 7919) % 21`.
pub fn row_length(i: usize) -> i64 {
    ((i as u64).wrapping_mul(7919) % 21) as i64
}

/// `x[k] = ((k * 37) % 1000) / 1000 - 0.5`, computed in f64, stored as float32.
pub fn x_value(k: usize) -> f32 {
    (((k as u64).wrapping_mul(37) % 1000) as f64 / 1000.0 - 0.5) as f32
}

/// `z[k] = ((k * 91) % 1000) / 500 - 1`, computed in f64, stored as float32.
pub fn z_value(k: usize) -> f32 {
    (((k as u64).wrapping_mul(91) % 1000) as f64 / 500.0 - 1.0) as f32
}

/// The W1-W4 inputs: `x` and `z` over one shared row partition (the same `Arc`, so ragtime proves
/// their structures equal in O(1)).
#[derive(Debug, Clone)]
pub struct Data {
    /// `x`, float32 `[nrows, *]`.
    pub x: RaggedTensor,
    /// `z`, float32 `[nrows, *]`, with `x`'s partition.
    pub z: RaggedTensor,
}

impl Data {
    /// The data with `nrows` rows.
    pub fn new(nrows: usize) -> Result<Data> {
        let lengths: Vec<i64> = (0..nrows).map(row_length).collect();
        let partition = RowPartition::from_row_lengths(&lengths)?;
        let n = partition.nvals();
        let x = DenseTensor::vector((0..n).map(x_value).collect::<Vec<f32>>());
        let z = DenseTensor::vector((0..n).map(z_value).collect::<Vec<f32>>());
        Ok(Data { x: RaggedTensor::new(x, vec![partition.clone()])?, z: RaggedTensor::new(z, vec![partition])? })
    }

    /// The number of rows.
    pub fn nrows(&self) -> usize {
        self.x.nrows()
    }

    /// The number of values of each of `x` and `z`.
    pub fn nvals(&self) -> usize {
        self.splits().last().map_or(0, |&n| n as usize)
    }

    /// The shared row splits.
    pub fn splits(&self) -> &[i64] {
        self.x.partitions().first().map_or(&[0][..], RowPartition::row_splits)
    }

    /// `x`'s flat values (the buffer ragtime reads).
    pub fn xs(&self) -> &[f32] {
        self.x.flat_slice::<f32>().unwrap_or(&[])
    }

    /// `z`'s flat values (the buffer ragtime reads).
    pub fn zs(&self) -> &[f32] {
        self.z.flat_slice::<f32>().unwrap_or(&[])
    }
}

/// Outer row `u`'s length in the ragged rank 2 view of the W1-W4 data: `(u * 7919) % 7` rows (0 to 6).
pub fn outer_length(u: usize) -> i64 {
    ((u as u64).wrapping_mul(7919) % 7) as i64
}

/// The ragged rank 2 view of `x` and `z`: the same flat values and row partition (its rows are the
/// inner rows), grouped `outer_length(u)` rows at a time by an outer partition (the last outer row
/// takes what is left), so a reduction over axis 2 computes W3's per-row values.
#[derive(Debug, Clone)]
pub struct Rank2 {
    /// `x`, float32 `[outer, *, *]`.
    pub x: RaggedTensor,
    /// `z`, with `x`'s partitions.
    pub z: RaggedTensor,
}

impl Rank2 {
    /// The view of `data`.
    pub fn new(data: &Data) -> Result<Rank2> {
        let inner = data.x.partitions()[0].clone();
        let nrows = data.nrows() as i64;
        let mut lengths = Vec::new();
        let mut covered = 0i64;
        while covered < nrows {
            let len = outer_length(lengths.len()).min(nrows - covered);
            lengths.push(len);
            covered += len;
        }
        let outer = RowPartition::from_row_lengths(&lengths)?;
        let view = |t: &RaggedTensor| RaggedTensor::new(t.flat_values().clone(), vec![outer.clone(), inner.clone()]);
        Ok(Rank2 { x: view(&data.x)?, z: view(&data.z)? })
    }

    /// The number of outer rows.
    pub fn outer_rows(&self) -> usize {
        self.x.nrows()
    }
}

/// The uniform inner dimension of the inner-dim forms of W3 and W4 (`[n, *, 8]`).
pub const INNER: usize = 8;

/// W3's and W4's data with a uniform inner dimension: `x` and `z` float32 `[rows, *, 8]` on one
/// partition, `rows = nrows / 8` (rounded up) of W3's row lengths `(i * 7919) % 21`, so they hold
/// about as many values as W3's `x` (per-value times compare); value `k` of the flat buffer
/// (row-major, `[items, 8]`) is `x_value(k)` / `z_value(k)`.
#[derive(Debug, Clone)]
pub struct Inner {
    /// `x`, float32 `[rows, *, 8]`.
    pub x: RaggedTensor,
    /// `z`, with `x`'s partition.
    pub z: RaggedTensor,
}

impl Inner {
    /// The inner-dim data matching W3's data of `nrows` rows.
    pub fn new(nrows: usize) -> Result<Inner> {
        let lengths: Vec<i64> = (0..nrows.div_ceil(INNER)).map(row_length).collect();
        let partition = RowPartition::from_row_lengths(&lengths)?;
        let n = partition.nvals() * INNER;
        let x = DenseTensor::from_vec(vec![partition.nvals(), INNER], (0..n).map(x_value).collect::<Vec<f32>>())?;
        let z = DenseTensor::from_vec(vec![partition.nvals(), INNER], (0..n).map(z_value).collect::<Vec<f32>>())?;
        Ok(Inner { x: RaggedTensor::new(x, vec![partition.clone()])?, z: RaggedTensor::new(z, vec![partition])? })
    }

    /// The number of rows.
    pub fn nrows(&self) -> usize {
        self.x.nrows()
    }

    /// The number of float32 values of each of `x` and `z` (8 per item).
    pub fn nvals(&self) -> usize {
        self.x.flat_values().len()
    }

    /// The shared row splits (into the items of 8 values).
    pub fn splits(&self) -> &[i64] {
        self.x.partitions().first().map_or(&[0][..], RowPartition::row_splits)
    }

    /// `x`'s flat values, row-major.
    pub fn xs(&self) -> &[f32] {
        self.x.flat_slice::<f32>().unwrap_or(&[])
    }

    /// `z`'s flat values, row-major.
    pub fn zs(&self) -> &[f32] {
        self.z.flat_slice::<f32>().unwrap_or(&[])
    }
}

/// W9's feature width: the uniform inner dimension of `f`.
pub const FEATURES: usize = 8;

/// W9 users at the default size (2^17, an eighth of the W1-W4 rows).
pub const DEFAULT_USERS: usize = 1 << 17;

/// User `u`'s sessions: `(u * 7919) % 7`.
pub fn sessions_of(u: usize) -> i64 {
    ((u as u64).wrapping_mul(7919) % 7) as i64
}

/// Session `s`'s events (sessions numbered over all users): `(s * 104729) % 9`.
pub fn events_of(s: usize) -> i64 {
    ((s as u64).wrapping_mul(104729) % 9) as i64
}

/// `d[k] = ((k * 37) % 1000) / 1000`, computed in f64, stored as float32.
pub fn duration(k: usize) -> f32 {
    (((k as u64).wrapping_mul(37) % 1000) as f64 / 1000.0) as f32
}

/// `f[k, j] = (((k * 8 + j) * 91) % 1000) / 500 - 1`, computed in f64, stored as float32.
pub fn feature(k: usize, j: usize) -> f32 {
    ((((k * FEATURES + j) as u64).wrapping_mul(91) % 1000) as f64 / 500.0 - 1.0) as f32
}

/// The W9 inputs: durations `d`, float32 `[users, *, *]`, and features `f`, float32
/// `[users, *, *, 8]`, over the same two partitions (the same `Arc`s).
#[derive(Debug, Clone)]
pub struct Sessions {
    /// Event durations.
    pub d: RaggedTensor,
    /// Event features, 8 per event.
    pub f: RaggedTensor,
}

impl Sessions {
    /// The data of `users` users.
    pub fn new(users: usize) -> Result<Sessions> {
        let sessions: Vec<i64> = (0..users).map(sessions_of).collect();
        let outer = RowPartition::from_row_lengths(&sessions)?;
        let events: Vec<i64> = (0..outer.nvals()).map(events_of).collect();
        let inner = RowPartition::from_row_lengths(&events)?;
        let n = inner.nvals();
        let d = DenseTensor::vector((0..n).map(duration).collect::<Vec<f32>>());
        let f: Vec<f32> = (0..n * FEATURES).map(|i| feature(i / FEATURES, i % FEATURES)).collect();
        let f = DenseTensor::from_vec(vec![n, FEATURES], f)?;
        let partitions = vec![outer, inner];
        Ok(Sessions { d: RaggedTensor::new(d, partitions.clone())?, f: RaggedTensor::new(f, partitions)? })
    }

    /// The number of users.
    pub fn users(&self) -> usize {
        self.d.nrows()
    }

    /// The number of events.
    pub fn events(&self) -> usize {
        self.d.flat_values().len()
    }

    /// User -> session splits.
    pub fn user_splits(&self) -> &[i64] {
        self.d.partitions()[0].row_splits()
    }

    /// Session -> event splits.
    pub fn session_splits(&self) -> &[i64] {
        self.d.partitions()[1].row_splits()
    }

    /// The durations' flat values.
    pub fn durations(&self) -> &[f32] {
        self.d.flat_slice::<f32>().unwrap_or(&[])
    }

    /// The features' flat values, row-major `[events, 8]`.
    pub fn features(&self) -> &[f32] {
        self.f.flat_slice::<f32>().unwrap_or(&[])
    }
}

/// The 5-row input of W5's check and of W6: `[[3, 1, 4, 1], [], [5, 9, 2], [6], []]` as float32.
pub fn small_input() -> Result<RaggedTensor> {
    let values = DenseTensor::vector(vec![3f32, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]);
    RaggedTensor::new(values, vec![RowPartition::from_row_splits(vec![0, 4, 4, 7, 8, 8])?])
}

/// SplitMix64 (Steele, Lea and Flood): a small, fixed, well-mixed stream for W7's queries.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`; the modulo bias is below 2^-50 for the sizes used here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The W7 inputs: a batch of queries (ragged strings) and the embedding table.
#[derive(Debug, Clone)]
pub struct Queries {
    /// string `[queries, *]`: each query 1 to 12 words of the vocabulary.
    pub queries: RaggedTensor,
    /// float32 `[1024, 16]`.
    pub table: RaggedTensor,
}

impl Queries {
    /// `count` queries, drawn from one seeded SplitMix64 stream: first the 5,000-word vocabulary
    /// (distinct lowercase words of 2 to 10 letters), then for each query its length (1 to 12) and its
    /// words. Table entry `k` (row-major) is `((k * 53) % 1000) / 1000 - 0.5`.
    pub fn new(count: usize) -> Result<Queries> {
        let mut rng = SplitMix64::new(SEED);
        let mut vocabulary: Vec<Vec<u8>> = Vec::with_capacity(VOCABULARY);
        let mut seen = std::collections::HashSet::with_capacity(VOCABULARY);
        while vocabulary.len() < VOCABULARY {
            let len = 2 + rng.below(9);
            let word: Vec<u8> = (0..len).map(|_| b'a' + rng.below(26) as u8).collect();
            if seen.insert(word.clone()) {
                vocabulary.push(word);
            }
        }
        let mut lengths = Vec::with_capacity(count);
        let mut bytes = Vec::new();
        let mut offsets = vec![0i64];
        for _ in 0..count {
            let words = 1 + rng.below(MAX_WORDS);
            lengths.push(words as i64);
            for _ in 0..words {
                bytes.extend_from_slice(&vocabulary[rng.below(VOCABULARY)]);
                offsets.push(bytes.len() as i64);
            }
        }
        let nwords = offsets.len() - 1;
        let column = StringTensor::from_parts(Arc::from(bytes), Arc::from(offsets), vec![nwords])?;
        let queries = RaggedTensor::new(DenseTensor::String(column), vec![RowPartition::from_row_lengths(&lengths)?])?;
        let table: Vec<f32> =
            (0..BUCKETS * DIM).map(|k| (((k as u64 * 53) % 1000) as f64 / 1000.0 - 0.5) as f32).collect();
        let table = DenseTensor::from_vec(vec![BUCKETS, DIM], table)?.into();
        Ok(Queries { queries, table })
    }

    /// The number of queries.
    pub fn count(&self) -> usize {
        self.queries.nrows()
    }

    /// The total number of words.
    pub fn words(&self) -> usize {
        self.splits().last().map_or(0, |&n| n as usize)
    }

    /// The query row splits (into the word column).
    pub fn splits(&self) -> &[i64] {
        self.queries.partitions().first().map_or(&[0][..], RowPartition::row_splits)
    }

    /// The word column.
    pub fn words_column(&self) -> Option<&StringTensor> {
        self.queries.flat_strings()
    }

    /// The table's values, row-major.
    pub fn table_values(&self) -> &[f32] {
        self.table.flat_slice::<f32>().unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_and_z_share_one_partition_and_follow_the_formulas() {
        let d = Data::new(100).unwrap();
        assert!(d.x.partitions()[0].ptr_eq(&d.z.partitions()[0]));
        let lengths: Vec<i64> = d.splits().windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(&lengths[..4], &[0, 2, 4, 6]); // 0, 7919 % 21 = 2, 15838 % 21 = 4, ...
        assert_eq!(d.nvals(), lengths.iter().sum::<i64>() as usize);
        assert_eq!(d.xs()[1], (37.0f64 / 1000.0 - 0.5) as f32);
        assert_eq!(d.zs()[3], (273.0f64 / 500.0 - 1.0) as f32);
    }

    #[test]
    fn the_rank2_view_groups_every_row_once() {
        let d = Data::new(100).unwrap();
        let r = Rank2::new(&d).unwrap();
        assert_eq!(r.x.nested_row_splits()[0].last(), Some(&100));
        assert!(r.x.partitions()[1].ptr_eq(&d.x.partitions()[0]));
        assert!(r.z.partitions()[0].ptr_eq(&r.x.partitions()[0]));
        let lengths: Vec<i64> = r.x.nested_row_splits()[0].windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(&lengths[..4], &[0, 2, 4, 6]);
    }

    #[test]
    fn the_inner_dim_data_has_about_w3s_values() {
        let d = Data::new(1000).unwrap();
        let i = Inner::new(1000).unwrap();
        assert_eq!(i.nrows(), 125);
        assert!(i.x.partitions()[0].ptr_eq(&i.z.partitions()[0]));
        assert_eq!(i.x.flat_values().shape(), &[i.splits()[125] as usize, INNER]);
        assert_eq!(i.nvals(), i.splits()[125] as usize * INNER);
        assert!((i.nvals() as f64 / d.nvals() as f64 - 1.0).abs() < 0.05, "{} vs {}", i.nvals(), d.nvals());
        assert_eq!(i.xs()[9], x_value(9));
        assert_eq!(i.zs()[17], z_value(17));
    }

    #[test]
    fn sessions_follow_the_formulas() {
        let s = Sessions::new(10).unwrap();
        let users: Vec<i64> = s.user_splits().windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(users, (0..10).map(|u| (u * 7919) % 7).collect::<Vec<i64>>());
        let events: Vec<i64> = s.session_splits().windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(events, (0..events.len() as i64).map(|k| (k * 104729) % 9).collect::<Vec<i64>>());
        assert_eq!(s.features().len(), s.events() * FEATURES);
        assert_eq!(s.durations()[3], 0.111);
        assert_eq!(s.features()[9], (819.0f64 / 500.0 - 1.0) as f32); // event 1, feature 1: 9 * 91 = 819
    }

    #[test]
    fn queries_are_deterministic_and_in_range() {
        let a = Queries::new(50).unwrap();
        let b = Queries::new(50).unwrap();
        assert!(a.queries.equals(&b.queries));
        assert!(a.splits().windows(2).all(|w| (1..=MAX_WORDS as i64).contains(&(w[1] - w[0]))));
        assert_eq!(a.table_values().len(), BUCKETS * DIM);
    }
}
