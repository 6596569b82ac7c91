//! String functions of the DSL, named like `tf.strings.*`: `ragtime::ops::strings::split(&s, Some(" "))`,
//! and the same as methods of [`Var`]: `s.split(Some(" "))`, `s.lower()`, `s.to_hash_bucket_fast(1000)`.

use ragtime_ops::strings::{
    AsString, CharUnit, Join, Length, Lower, Ngrams, ReduceJoin, Split, Strip, Substr, ToHashBucketFast, ToNumber,
    UnicodeDecode, UnicodeEncode, Upper,
};
use ragtime_ops::strings::{Lookup, StringHash, ToHashBucket};
use ragtime_ops::strings::{RegexFullMatch, RegexReplace};

use ragtime_ops::reduce::Axes;

use crate::{Result, Var};

/// Splits each string on `sep` (on runs of whitespace when `None`), adding a ragged dimension.
#[track_caller]
pub fn split(x: &Var, sep: Option<&str>) -> Var {
    x.apply1(Split::new(sep), &[])
}

/// The bytes `pos..pos + len` of each string (`tf.strings.substr`; negative `pos` counts from the end).
#[track_caller]
pub fn substr(x: &Var, pos: i64, len: i64) -> Var {
    x.apply1(Substr::new(pos, len), &[])
}

/// The substring of each string at `pos` of `len` bytes, both int32 or int64 tensors: scalars,
/// or one per string with the strings' exact shape (`tf.strings.substr` with tensor arguments).
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let s = g.input("s", TensorType::ragged(DType::String, 1));
/// let pos = g.input("pos", TensorType::ragged(DType::I32, 1));
/// let len = g.input("len", TensorType::scalar(DType::I32));
/// let f = compile(&[&s, &pos, &len], &[&ragtime::ops::strings::substr_at(&s, &pos, &len)]).unwrap();
/// let y = f.call(&[ragged![["hello", "world"]].unwrap(), ragged![[1, -2]].unwrap(), RaggedTensor::dense(DenseTensor::scalar(3i32))])
///     .unwrap();
/// assert_eq!(y[0].to_literal(), ragged![["ell", "ld"]].unwrap().to_literal());
/// ```
#[track_caller]
pub fn substr_at(x: &Var, pos: &Var, len: &Var) -> Var {
    x.apply1(Substr::with_tensor_args(), &[pos, len])
}

/// Joins strings elementwise with `separator`, with broadcasting (`tf.strings.join`).
#[track_caller]
pub fn join(xs: &[&Var], separator: &str) -> Var {
    match xs.split_first() {
        Some((first, rest)) => first.apply1(Join::new(separator), rest),
        None => Var::error(ragtime_core::Error::argument("strings.join", "needs at least one input")),
    }
}

/// Joins the strings along `axis` (an axis, a list of axes, or `None` for all) with `separator`
/// (`tf.strings.reduce_join`).
#[track_caller]
pub fn reduce_join(x: &Var, axis: impl Into<Axes>, separator: &str) -> Var {
    x.apply1(ReduceJoin::with_axes(axis, separator), &[])
}

/// The length of each string in bytes, as int32 (`tf.strings.length`).
#[track_caller]
pub fn length(x: &Var) -> Var {
    x.apply1(Length::new(CharUnit::Byte), &[])
}

/// The length of each string in UTF-8 characters (`tf.strings.length(unit="UTF8_CHAR")`).
#[track_caller]
pub fn length_chars(x: &Var) -> Var {
    x.apply1(Length::new(CharUnit::Utf8Char), &[])
}

/// ASCII lower case (`tf.strings.lower`).
#[track_caller]
pub fn lower(x: &Var) -> Var {
    x.apply1(Lower::new(), &[])
}

/// ASCII upper case (`tf.strings.upper`).
#[track_caller]
pub fn upper(x: &Var) -> Var {
    x.apply1(Upper::new(), &[])
}

/// FarmHash Fingerprint64 of each string modulo `num_buckets`, as int64
/// (`tf.strings.to_hash_bucket_fast`, bit-exact with TensorFlow).
#[track_caller]
pub fn to_hash_bucket_fast(x: &Var, num_buckets: i64) -> Var {
    match ToHashBucketFast::new(num_buckets) {
        Ok(op) => x.apply1(op, &[]),
        Err(e) => Var::error(e),
    }
}

/// TensorFlow's `Hash64` (MurmurHash64A) of each string modulo `num_buckets`, as int64
/// (`tf.strings.to_hash_bucket`, bit-exact).
#[track_caller]
pub fn to_hash_bucket(x: &Var, num_buckets: u64) -> Var {
    match ToHashBucket::new(StringHash::Murmur, num_buckets) {
        Ok(op) => x.apply1(op, &[]),
        Err(e) => Var::error(e),
    }
}

/// SipHash-2-4 of each string with `key` modulo `num_buckets`, as int64
/// (`tf.strings.to_hash_bucket_strong`, bit-exact).
#[track_caller]
pub fn to_hash_bucket_strong(x: &Var, num_buckets: u64, key: [u64; 2]) -> Var {
    match ToHashBucket::new(StringHash::Sip { k0: key[0], k1: key[1] }, num_buckets) {
        Ok(op) => x.apply1(op, &[]),
        Err(e) => Var::error(e),
    }
}

/// Each string's id in `vocab`, or `vocab.len()` plus its FarmHash bucket among
/// `num_oov_buckets` (`tf.lookup.StaticVocabularyTable(...).lookup`); int64.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let s = g.input("s", TensorType::ragged(DType::String, 1));
/// let f = compile(&[&s], &[&s.lookup(&["a", "b"], 1)]).unwrap();
/// let y = f.call(&[ragged![["b", "zzz"], []].unwrap()]).unwrap();
/// assert_eq!(y[0].flat_values().as_slice::<i64>().unwrap(), &[1, 2]);
/// ```
#[track_caller]
pub fn lookup(x: &Var, vocab: &[&str], num_oov_buckets: u64) -> Var {
    match Lookup::new(vocab.iter().map(|w| w.as_bytes().to_vec()).collect(), num_oov_buckets) {
        Ok(op) => x.apply1(op, &[]),
        Err(e) => Var::error(e),
    }
}

/// Each element as text (`tf.strings.as_string`): integers in decimal, floats as C's `%f`,
/// `true` / `false`.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let x = g.input("x", TensorType::ragged(DType::F32, 1));
/// let f = compile(&[&x], &[&x.as_string()]).unwrap();
/// let y = f.call(&[ragged![[1.5, -0.25], []].unwrap()]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![["1.500000", "-0.250000"], []].unwrap().to_literal());
/// ```
#[track_caller]
pub fn as_string(x: &Var) -> Var {
    x.apply1(AsString::new(), &[])
}

/// Each innermost row of int32 code points as one UTF-8 string (`tf.strings.unicode_encode`);
/// invalid code points become U+FFFD.
#[track_caller]
pub fn unicode_encode(code_points: &Var) -> Var {
    code_points.apply1(UnicodeEncode::default(), &[])
}

/// The code points of each UTF-8 string as int32, one more ragged dim
/// (`tf.strings.unicode_decode(s, "UTF-8")`); invalid sequences become U+FFFD.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let s = g.input("s", TensorType::ragged(DType::String, 1));
/// let f = compile(&[&s], &[&s.unicode_decode()]).unwrap();
/// let y = f.call(&[ragged![["hé"], []].unwrap()]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![[[104, 233]], []].unwrap().to_literal());
/// ```
#[track_caller]
pub fn unicode_decode(x: &Var) -> Var {
    x.apply1(UnicodeDecode::new(false), &[])
}

/// The characters of each UTF-8 string as strings, one more ragged dim
/// (`tf.strings.unicode_split(s, "UTF-8")`).
#[track_caller]
pub fn unicode_split(x: &Var) -> Var {
    x.apply1(UnicodeDecode::new(true), &[])
}

/// Whether each whole string matches `pattern` (`tf.strings.regex_full_match`); a pattern that
/// is not a valid regular expression is an `invalid_value` error of the returned variable.
#[track_caller]
pub fn regex_full_match(x: &Var, pattern: &str) -> Var {
    match RegexFullMatch::new(pattern) {
        Ok(op) => x.apply1(op, &[]),
        Err(e) => Var::error(e),
    }
}

/// Every match of `pattern` replaced by `rewrite` (`\0`..`\9` are the match and its groups)
/// (`tf.strings.regex_replace`, `replace_global=True`).
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let s = g.input("s", TensorType::ragged(DType::String, 1));
/// let f = compile(&[&s], &[&s.regex_replace("[0-9]+", "<\\0>")]).unwrap();
/// let y = f.call(&[ragged![["a1b22"], []].unwrap()]).unwrap();
/// assert_eq!(y[0].to_literal(), ragged![["a<1>b<22>"], []].unwrap().to_literal());
/// ```
#[track_caller]
pub fn regex_replace(x: &Var, pattern: &str, rewrite: &str) -> Var {
    match RegexReplace::new(pattern, rewrite, true) {
        Ok(op) => x.apply1(op, &[]),
        Err(e) => Var::error(e),
    }
}

/// Each string parsed as a number of `out_type` (float32, float64, int32, int64)
/// (`tf.strings.to_number`); a string that is not one is an `invalid_value` error when run.
///
/// ```
/// use ragtime::prelude::*;
/// let g = Graph::new();
/// let s = g.input("s", TensorType::ragged(DType::String, 1));
/// let f = compile(&[&s], &[&s.to_number(DType::F64)]).unwrap();
/// let y = f.call(&[ragged![[" 1.5", "0x10", "-inf"]].unwrap()]).unwrap();
/// assert_eq!(y[0].flat_values().as_slice::<f64>().unwrap(), &[1.5, 16.0, f64::NEG_INFINITY]);
/// ```
#[track_caller]
pub fn to_number(x: &Var, out_type: ragtime_core::DType) -> Var {
    match ToNumber::new(out_type) {
        Ok(op) => x.apply1(op, &[]),
        Err(e) => Var::error(e),
    }
}

/// Each string without its leading and trailing ASCII whitespace (`tf.strings.strip`).
#[track_caller]
pub fn strip(x: &Var) -> Var {
    x.apply1(Strip::new(), &[])
}

/// The `width`-grams of the innermost dimension, joined with `separator` (`tf.strings.ngrams`).
#[track_caller]
pub fn ngrams(x: &Var, width: i64, separator: &str) -> Var {
    match Ngrams::new(&[width]) {
        Ok(op) => x.apply1(op.with_separator(separator), &[]),
        Err(e) => Var::error(e),
    }
}

/// The arguments of `tf.strings.ngrams` beyond the input: widths, separator, padding and short
/// sequences, for [`ngrams_with`].
#[derive(Debug, Clone)]
pub struct NgramOptions {
    widths: Vec<i64>,
    separator: String,
    padding: Option<(String, String, Option<i64>)>,
    preserve_short_sequences: bool,
}

impl NgramOptions {
    /// N-grams of each of `widths` (at least 1 each), joined with a space, unpadded.
    pub fn new(widths: &[i64]) -> Self {
        NgramOptions { widths: widths.to_vec(), separator: " ".into(), padding: None, preserve_short_sequences: false }
    }

    /// Joins the tokens of an n-gram with `separator`.
    pub fn separator(mut self, separator: &str) -> Self {
        self.separator = separator.into();
        self
    }

    /// Pads each row with `left` before and `right` after it (`pad_values`), `width` times each
    /// side (`padding_width`; `None`: the n-gram width minus one).
    pub fn pad(mut self, left: &str, right: &str, width: Option<i64>) -> Self {
        self.padding = Some((left.into(), right.into(), width));
        self
    }

    /// A row too short for any n-gram gives one n-gram of all its tokens
    /// (`preserve_short_sequences`).
    pub fn preserve_short_sequences(mut self) -> Self {
        self.preserve_short_sequences = true;
        self
    }

    fn op(&self) -> Result<Ngrams> {
        let op = Ngrams::new(&self.widths)?.with_separator(&self.separator);
        let op = match &self.padding {
            Some((left, right, width)) => op.with_padding(left, right, *width)?,
            None => op,
        };
        Ok(op.with_preserve_short_sequences(self.preserve_short_sequences))
    }
}

/// `tf.strings.ngrams` with all its options: the n-grams of the innermost dimension.
///
/// ```
/// use ragtime::prelude::*;
/// use ragtime::ops::strings::{ngrams_with, NgramOptions};
///
/// let g = Graph::new();
/// let words = g.input("words", TensorType::ragged(DType::String, 1));
/// let bigrams = ngrams_with(&words, NgramOptions::new(&[2]).separator("+").pad("#", "#", Some(1)));
/// let f = compile(&[&words], &[&bigrams])?;
/// let out = f.call(&[ragged![["a", "b"], ["c"]]?])?;
/// assert_eq!(out[0].to_nested::<Vec<Vec<String>>>()?, vec![vec!["#+a", "a+b", "b+#"], vec!["#+c", "c+#"]]);
/// # Ok::<(), ragtime::Error>(())
/// ```
#[track_caller]
pub fn ngrams_with(x: &Var, options: NgramOptions) -> Var {
    match options.op() {
        Ok(op) => x.apply1(op, &[]),
        Err(e) => Var::error(e),
    }
}

impl Var {
    /// Splits each string on `sep` (on runs of whitespace when `None`), adding a ragged dimension
    /// (`tf.strings.split`).
    #[track_caller]
    pub fn split(&self, sep: Option<&str>) -> Var {
        split(self, sep)
    }

    /// The bytes `pos..pos + len` of each string (`tf.strings.substr`).
    #[track_caller]
    pub fn substr(&self, pos: i64, len: i64) -> Var {
        substr(self, pos, len)
    }

    /// Joins `self` and `others` elementwise with `separator` (`tf.strings.join([self, *others])`).
    #[track_caller]
    pub fn join(&self, others: &[&Var], separator: &str) -> Var {
        let mut all = vec![self];
        all.extend_from_slice(others);
        join(&all, separator)
    }

    /// Joins the strings along `axis` with `separator` (`tf.strings.reduce_join`).
    #[track_caller]
    pub fn reduce_join(&self, axis: impl Into<Axes>, separator: &str) -> Var {
        reduce_join(self, axis, separator)
    }

    /// The length of each string in bytes, as int32 (`tf.strings.length`).
    #[track_caller]
    pub fn length(&self) -> Var {
        length(self)
    }

    /// The length of each string in UTF-8 characters (`tf.strings.length(unit="UTF8_CHAR")`).
    #[track_caller]
    pub fn length_chars(&self) -> Var {
        length_chars(self)
    }

    /// ASCII lower case (`tf.strings.lower`).
    #[track_caller]
    pub fn lower(&self) -> Var {
        lower(self)
    }

    /// ASCII upper case (`tf.strings.upper`).
    #[track_caller]
    pub fn upper(&self) -> Var {
        upper(self)
    }

    /// FarmHash Fingerprint64 modulo `num_buckets`, as int64 (`tf.strings.to_hash_bucket_fast`).
    #[track_caller]
    pub fn to_hash_bucket_fast(&self, num_buckets: i64) -> Var {
        to_hash_bucket_fast(self, num_buckets)
    }

    /// The `width`-grams of the innermost dimension, joined with `separator` (`tf.strings.ngrams`).
    #[track_caller]
    pub fn ngrams(&self, width: i64, separator: &str) -> Var {
        ngrams(self, width, separator)
    }

    /// TensorFlow's `Hash64` modulo `num_buckets`, as int64 (`tf.strings.to_hash_bucket`).
    #[track_caller]
    pub fn to_hash_bucket(&self, num_buckets: u64) -> Var {
        to_hash_bucket(self, num_buckets)
    }

    /// Keyed SipHash-2-4 modulo `num_buckets`, as int64 (`tf.strings.to_hash_bucket_strong`).
    #[track_caller]
    pub fn to_hash_bucket_strong(&self, num_buckets: u64, key: [u64; 2]) -> Var {
        to_hash_bucket_strong(self, num_buckets, key)
    }

    /// Vocabulary ids with out-of-vocabulary buckets (`StaticVocabularyTable.lookup`).
    #[track_caller]
    pub fn lookup(&self, vocab: &[&str], num_oov_buckets: u64) -> Var {
        lookup(self, vocab, num_oov_buckets)
    }

    /// Without leading and trailing ASCII whitespace (`tf.strings.strip`).
    #[track_caller]
    pub fn strip(&self) -> Var {
        strip(self)
    }

    /// Each element as text (`tf.strings.as_string`).
    #[track_caller]
    pub fn as_string(&self) -> Var {
        as_string(self)
    }

    /// Each string parsed as a number of `out_type` (`tf.strings.to_number`).
    #[track_caller]
    pub fn to_number(&self, out_type: ragtime_core::DType) -> Var {
        to_number(self, out_type)
    }

    /// Whether each whole string matches `pattern` (`tf.strings.regex_full_match`).
    #[track_caller]
    pub fn regex_full_match(&self, pattern: &str) -> Var {
        regex_full_match(self, pattern)
    }

    /// Every match of `pattern` replaced by `rewrite` (`tf.strings.regex_replace`).
    #[track_caller]
    pub fn regex_replace(&self, pattern: &str, rewrite: &str) -> Var {
        regex_replace(self, pattern, rewrite)
    }

    /// Code points of each string, one more ragged dim (`tf.strings.unicode_decode`).
    #[track_caller]
    pub fn unicode_decode(&self) -> Var {
        unicode_decode(self)
    }

    /// Characters of each string, one more ragged dim (`tf.strings.unicode_split`).
    #[track_caller]
    pub fn unicode_split(&self) -> Var {
        unicode_split(self)
    }

    /// Innermost rows of code points as UTF-8 strings (`tf.strings.unicode_encode`).
    #[track_caller]
    pub fn unicode_encode(&self) -> Var {
        unicode_encode(self)
    }
}
