//! The string family (`strings.*`): splitting (`split`), substrings (`substr`), joining
//! (`join`), case, length, strip and number conversions (`convert`), unicode (`unicode`),
//! n-grams (`ngrams`), hashing (`hashing`) and regular expressions (`regexp`), over the shared
//! helpers of `common`.

pub(crate) mod common;
pub(crate) mod convert;
pub(crate) mod hashing;
pub(crate) mod join;
pub(crate) mod ngrams;
pub(crate) mod regexp;
pub(crate) mod split;
pub(crate) mod substr;
pub(crate) mod unicode;

#[cfg(test)]
mod hash_tests;
#[cfg(test)]
mod regex_tests;
#[cfg(test)]
mod tests;

pub use common::{expect_string, CharUnit};
pub use convert::{AsString, Length, Lower, Strip, ToNumber, Upper};
pub use hashing::ToHashBucketFast;
pub use hashing::{murmur_hash64a, siphash24, Lookup, StringHash, ToHashBucket};
pub use join::{Join, ReduceJoin};
pub use ngrams::{HashedNgrams, Ngrams, OneWidth};
pub use regexp::{RegexFullMatch, RegexReplace};
pub use split::Split;
pub use substr::Substr;
pub use unicode::{UnicodeDecode, UnicodeEncode, UnicodeErrors};

use ragtime_core::Result;
use ragtime_graph::{Attrs, OpRef};

use crate::strings::common::{
    AS_STRING, HASH, JOIN, LENGTH, LOWER, NGRAMS, REDUCE_JOIN, SPLIT, STRIP, SUBSTR, TO_NUMBER, UNICODE_DECODE,
    UNICODE_ENCODE, UNICODE_SPLIT, UPPER,
};
use crate::strings::hashing::{LOOKUP, TO_HASH_BUCKET, TO_HASH_BUCKET_STRONG};
use crate::strings::regexp::{FULL_MATCH, REPLACE};
use crate::util::shared;

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    Some(match name {
        SPLIT => shared(Split::from_attrs(attrs)),
        SUBSTR => shared(Substr::from_attrs(attrs)),
        JOIN => shared(Join::from_attrs(attrs)),
        REDUCE_JOIN => shared(ReduceJoin::from_attrs(attrs)),
        LENGTH => shared(Length::from_attrs(attrs)),
        LOWER => shared(Lower::from_attrs(attrs)),
        UPPER => shared(Upper::from_attrs(attrs)),
        HASH => shared(ToHashBucketFast::from_attrs(attrs)),
        NGRAMS => shared(Ngrams::from_attrs(attrs)),
        STRIP => shared(Strip::from_attrs(attrs)),
        TO_NUMBER => shared(ToNumber::from_attrs(attrs)),
        AS_STRING => shared(AsString::from_attrs(attrs)),
        UNICODE_ENCODE => shared(UnicodeEncode::from_attrs(attrs)),
        UNICODE_DECODE => shared(UnicodeDecode::from_attrs(false, attrs)),
        UNICODE_SPLIT => shared(UnicodeDecode::from_attrs(true, attrs)),
        TO_HASH_BUCKET => shared(ToHashBucket::from_attrs(false, attrs)),
        TO_HASH_BUCKET_STRONG => shared(ToHashBucket::from_attrs(true, attrs)),
        LOOKUP => shared(Lookup::from_attrs(attrs)),
        FULL_MATCH => shared(RegexFullMatch::from_attrs(attrs)),
        REPLACE => shared(RegexReplace::from_attrs(attrs)),
        _ => return None,
    })
}
