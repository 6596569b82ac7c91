//! String functions of the DSL, named like `tf.strings.*`: `ragtime::ops::strings::split(&s, Some(" "))`,
//! and the same as methods of [`Var`]: `s.split(Some(" "))`, `s.lower()`, `s.to_hash_bucket_fast(1000)`.

use ragtime_ops::strings::{CharUnit, Join, Length, Lower, Ngrams, ReduceJoin, Split, Substr, ToHashBucketFast, Upper};

use ragtime_ops::reduce::Axes;

use crate::Var;

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

/// The `width`-grams of the innermost dimension, joined with `separator` (`tf.strings.ngrams`).
#[track_caller]
pub fn ngrams(x: &Var, width: i64, separator: &str) -> Var {
    match Ngrams::new(&[width]) {
        Ok(op) => x.apply1(op.with_separator(separator), &[]),
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
}
