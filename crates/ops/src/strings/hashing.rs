//! String hashing: [`ToHashBucketFast`] (farmhash), [`ToHashBucket`] (`to_hash_bucket`,
//! `to_hash_bucket_strong`), [`Lookup`] (a vocabulary lookup) and the hash functions.

use std::any::Any;
use std::collections::HashMap;

use ragtime_core::{DType, DenseTensor, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attr, Attrs, Cost, Op, OpProperties};
use ragtime_runtime::parallel;

use crate::strings::common::{infer_same_structure, map_to_numbers, string_column, HASH};
use crate::util::{fixed_inputs, one};

/// `tf.strings.to_hash_bucket_fast`: FarmHash Fingerprint64 of every string's bytes modulo
/// `num_buckets`, as int64 (the same buckets as TensorFlow).
#[derive(Debug, Clone, PartialEq)]
pub struct ToHashBucketFast {
    num_buckets: u64,
}

impl ToHashBucketFast {
    /// Hashes into `num_buckets` buckets; `num_buckets < 1` is an `invalid_argument`.
    pub fn new(num_buckets: i64) -> Result<Self> {
        if num_buckets < 1 {
            return Err(Error::argument(HASH, format!("num_buckets must be at least 1, got {num_buckets}")));
        }
        Ok(ToHashBucketFast { num_buckets: num_buckets as u64 })
    }

    /// From graph-file attributes: `num_buckets` (integer).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["num_buckets"])?;
        ToHashBucketFast::new(attrs.int("num_buckets")?)
    }

    /// The number of buckets.
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// The bucket of one string.
    #[inline]
    pub fn bucket(&self, s: &[u8]) -> i64 {
        // `num_buckets` came from a positive i64, so the remainder fits an i64.
        let hash = farmhash::fingerprint64(s);
        if self.num_buckets.is_power_of_two() {
            // The same remainder, without a 64-bit division.
            (hash & (self.num_buckets - 1)) as i64
        } else {
            (hash % self.num_buckets) as i64
        }
    }
}

impl Op for ToHashBucketFast {
    fn name(&self) -> String {
        format!("StringsToHashBucketFast{{num_buckets={}}}", self.num_buckets)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(HASH, inputs, DType::I64)
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(HASH, inputs)?;
        let col = string_column(HASH, 0, x)?;
        let (bytes, offsets) = (col.bytes(), col.offsets());
        let mut buckets = ctx.try_vec(HASH, col.len())?;
        buckets.resize(col.len(), 0i64);
        parallel::fill_chunks(ctx, &mut buckets, 1, |first, chunk| {
            let offsets = &offsets[first..=first + chunk.len()];
            for (b, w) in chunk.iter_mut().zip(offsets.windows(2)) {
                *b = self.bucket(&bytes[w[0] as usize..w[1] as usize]);
            }
        })?;
        one(x.with_flat_values(DenseTensor::from_vec(col.shape().to_vec(), buckets)?)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// strings.ngrams
// ---------------------------------------------------------------------------------------------

pub(crate) const TO_HASH_BUCKET: &str = "strings.to_hash_bucket";
pub(crate) const TO_HASH_BUCKET_STRONG: &str = "strings.to_hash_bucket_strong";
pub(crate) const LOOKUP: &str = "strings.lookup";

/// The seed of TensorFlow's `Hash64` (`tensorflow/core/lib/hash/hash.h`).
const HASH64_SEED: u64 = 0x00DE_CAFC_AFFE;

/// TensorFlow's `Hash64(data, seed)`: MurmurHash64A (m = 0xc6a4a7935bd1e995, r = 47) over
/// little-endian 8-byte words, the tail bytes folded in last.
pub fn murmur_hash64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut words = data.chunks_exact(8);
    for word in words.by_ref() {
        let mut k = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^ (h >> R)
}

/// SipHash-2-4 of `data` with the key `(k0, k1)` (Aumasson and Bernstein's reference algorithm, the
/// 64-bit output).
pub fn siphash24(k0: u64, k1: u64, data: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let round = |v: &mut [u64; 4]| {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    };
    let compress = |v: &mut [u64; 4], m: u64| {
        v[3] ^= m;
        round(v);
        round(v);
        v[0] ^= m;
    };
    let mut words = data.chunks_exact(8);
    for word in words.by_ref() {
        compress(&mut v, u64::from_le_bytes(word.try_into().unwrap_or([0; 8])));
    }
    let mut last = (data.len() as u64) << 56;
    for (i, &b) in words.remainder().iter().enumerate() {
        last |= u64::from(b) << (8 * i);
    }
    compress(&mut v, last);
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// The positive `num_buckets` attribute, as u64 (`invalid_argument` below 1).
fn num_buckets_attr(op: &str, attrs: &Attrs, name: &str) -> Result<u64> {
    let n = attrs.int(name)?;
    u64::try_from(n)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| Error::argument(op, format!("{name} must be at least 1, got {n}")))
}

/// Which hash a [`ToHashBucket`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StringHash {
    /// TensorFlow's `Hash64` (`strings.to_hash_bucket`).
    Murmur,
    /// SipHash-2-4 with this key (`strings.to_hash_bucket_strong`).
    Sip {
        /// The first 8 key bytes, little endian.
        k0: u64,
        /// The last 8 key bytes, little endian.
        k1: u64,
    },
}

/// `strings.to_hash_bucket` / `strings.to_hash_bucket_strong`: each string's hash mod
/// `num_buckets`, int64, keeping the input's structure.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToHashBucket {
    /// The hash.
    pub hash: StringHash,
    /// The number of buckets (at least 1).
    pub num_buckets: u64,
}

impl ToHashBucket {
    /// Hashes with `hash` into `num_buckets` buckets (`invalid_argument` below 1).
    pub fn new(hash: StringHash, num_buckets: u64) -> Result<Self> {
        let op = ToHashBucket { hash, num_buckets };
        if num_buckets == 0 {
            return Err(Error::argument(op.op_name(), "num_buckets must be at least 1, got 0"));
        }
        Ok(op)
    }

    fn op_name(&self) -> &'static str {
        match self.hash {
            StringHash::Murmur => TO_HASH_BUCKET,
            StringHash::Sip { .. } => TO_HASH_BUCKET_STRONG,
        }
    }

    /// From graph-file attributes: `num_buckets`, and `key` (two integers, their 64-bit patterns)
    /// for the strong hash.
    pub fn from_attrs(strong: bool, attrs: &Attrs) -> Result<Self> {
        let op = if strong { TO_HASH_BUCKET_STRONG } else { TO_HASH_BUCKET };
        if !strong {
            attrs.only(&["num_buckets"])?;
            return ToHashBucket::new(StringHash::Murmur, num_buckets_attr(op, attrs, "num_buckets")?);
        }
        attrs.only(&["num_buckets", "key"])?;
        let key = attrs.ints_opt("key")?.unwrap_or_default();
        let [k0, k1] = key[..] else {
            return Err(Error::argument(op, format!("key must hold two integers, got {key:?}")));
        };
        ToHashBucket::new(StringHash::Sip { k0: k0 as u64, k1: k1 as u64 }, num_buckets_attr(op, attrs, "num_buckets")?)
    }

    /// The bucket of one string.
    pub fn bucket(&self, s: &[u8]) -> i64 {
        let h = match self.hash {
            StringHash::Murmur => murmur_hash64a(s, HASH64_SEED),
            StringHash::Sip { k0, k1 } => siphash24(k0, k1, s),
        };
        // `num_buckets` came from a positive i64, so the remainder fits one.
        (h % self.num_buckets) as i64
    }
}

impl Op for ToHashBucket {
    fn name(&self) -> String {
        match self.hash {
            StringHash::Murmur => format!("StringsToHashBucket{{num_buckets={}}}", self.num_buckets),
            StringHash::Sip { k0, k1 } => {
                format!("StringsToHashBucketStrong{{num_buckets={}, key=[{k0}, {k1}]}}", self.num_buckets)
            }
        }
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(self.op_name(), inputs, DType::I64)
    }

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(self.op_name(), inputs)?;
        one(map_to_numbers(self.op_name(), x, |_, s| Ok(self.bucket(s)))?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: true, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Expensive }
    }
}

/// `strings.lookup` (`tf.lookup.StaticVocabularyTable` over `KeyValueTensorInitializer(vocab,
/// [0, n))` with `num_oov_buckets`): `vocab[i]` gives `i`, any other string `len(vocab) +
/// Fingerprint64(s) mod num_oov_buckets`; int64, keeping the input's structure. A vocabulary
/// entry given twice is `invalid_value`; `num_oov_buckets` below 1 `invalid_argument`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    vocab: Vec<Vec<u8>>,
    ids: HashMap<Vec<u8>, i64>,
    num_oov_buckets: u64,
}

impl Lookup {
    /// The table of `vocab` (distinct strings) with `num_oov_buckets` (at least 1).
    pub fn new(vocab: Vec<Vec<u8>>, num_oov_buckets: u64) -> Result<Self> {
        if num_oov_buckets == 0 {
            return Err(Error::argument(LOOKUP, "num_oov_buckets must be at least 1, got 0"));
        }
        let mut ids = HashMap::with_capacity(vocab.len());
        for (i, word) in vocab.iter().enumerate() {
            if let Some(first) = ids.insert(word.clone(), i as i64) {
                return Err(Error::value(
                    LOOKUP,
                    format!("vocab[{i}] = {:?} repeats vocab[{first}]", String::from_utf8_lossy(word)),
                ));
            }
        }
        Ok(Lookup { vocab, ids, num_oov_buckets })
    }

    /// From graph-file attributes: `vocab` (a list of strings), `num_oov_buckets` (at least 1).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["vocab", "num_oov_buckets"])?;
        let vocab = match attrs.get("vocab") {
            Some(Attr::List(items)) => items
                .iter()
                .map(|a| match a {
                    Attr::Str(s) => Ok(s.as_bytes().to_vec()),
                    other => Err(Error::argument(LOOKUP, format!("vocab must hold strings, got {other:?}"))),
                })
                .collect::<Result<Vec<_>>>()?,
            other => return Err(Error::argument(LOOKUP, format!("vocab must be a list of strings, got {other:?}"))),
        };
        Lookup::new(vocab, num_buckets_attr(LOOKUP, attrs, "num_oov_buckets")?)
    }

    /// The id of one string.
    pub fn id(&self, s: &[u8]) -> i64 {
        match self.ids.get(s) {
            Some(&id) => id,
            // At most i64::MAX buckets after the vocabulary: the sum fits in practice, and wraps
            // rather than panicking past it.
            None => (self.vocab.len() as i64).wrapping_add((farmhash::fingerprint64(s) % self.num_oov_buckets) as i64),
        }
    }
}

impl Op for Lookup {
    fn name(&self) -> String {
        format!("StringsLookup{{vocab_size={}, num_oov_buckets={}}}", self.vocab.len(), self.num_oov_buckets)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(LOOKUP, inputs, DType::I64)
    }

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(LOOKUP, inputs)?;
        one(map_to_numbers(LOOKUP, x, |_, s| Ok(self.id(s)))?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: true, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Expensive }
    }
}
