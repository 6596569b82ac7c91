//! Helpers shared by the string ops: input checks, mapping a function over a string column,
//! error locations, UTF-8 character units.

use std::fmt;

use ragtime_core::{
    DType, DenseTensor, Element, Error, ExecContext, RaggedTensor, Result, StringBuilder, StringTensor, TensorType,
};
use ragtime_graph::{expect_arity, Attrs};

use crate::util::expect_dtype;

pub(crate) const SPLIT: &str = "strings.split";
pub(crate) const SUBSTR: &str = "strings.substr";
pub(crate) const JOIN: &str = "strings.join";
pub(crate) const REDUCE_JOIN: &str = "strings.reduce_join";
pub(crate) const LENGTH: &str = "strings.length";
pub(crate) const LOWER: &str = "strings.lower";
pub(crate) const UPPER: &str = "strings.upper";
pub(crate) const HASH: &str = "strings.to_hash_bucket_fast";
pub(crate) const NGRAMS: &str = "strings.ngrams";
pub(crate) const STRIP: &str = "strings.strip";
pub(crate) const TO_NUMBER: &str = "strings.to_number";
pub(crate) const AS_STRING: &str = "strings.as_string";
pub(crate) const UNICODE_ENCODE: &str = "strings.unicode_encode";
pub(crate) const UNICODE_DECODE: &str = "strings.unicode_decode";
pub(crate) const UNICODE_SPLIT: &str = "strings.unicode_split";

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

/// Fails unless input `index` of `op` is a string tensor (`type_mismatch` otherwise).
pub fn expect_string(op: &str, index: usize, ty: &TensorType) -> Result<()> {
    expect_dtype(op, index, ty, &[DType::String], "a string tensor")
}

/// The string column of input `index`, or a `type_mismatch` naming the op and the input.
pub(crate) fn string_column<'a>(op: &str, index: usize, x: &'a RaggedTensor) -> Result<&'a StringTensor> {
    string_column_of(op, index, x.flat_values())
}

/// The string column of the dense tensor `t`, input `index` of `op` (`type_mismatch` for numbers).
pub(crate) fn string_column_of<'a>(op: &str, index: usize, t: &'a DenseTensor) -> Result<&'a StringTensor> {
    t.as_strings().ok_or_else(|| Error::dtype(op, format!("input {index} must be a string tensor, got {}", t.dtype())))
}

/// Infers the type of a one-input string op that keeps the input's structure, giving `dtype`.
pub(crate) fn infer_same_structure(op: &str, inputs: &[TensorType], dtype: DType) -> Result<Vec<TensorType>> {
    expect_arity(op, inputs, 1..=1)?;
    expect_string(op, 0, &inputs[0])?;
    Ok(vec![inputs[0].clone().with_dtype(dtype)])
}

/// `b"..."` with non-printable bytes escaped, cut after 40 bytes: how errors show a string.
fn show(s: &[u8]) -> String {
    const MAX: usize = 40;
    let cut = &s[..s.len().min(MAX)];
    let more = if s.len() > MAX { "..." } else { "" };
    format!("b\"{}{more}\"", cut.escape_ascii())
}

/// Where string `flat` of `x` is, for error messages: `string b"abc" at [1, 0]`.
pub(crate) fn locate(x: &RaggedTensor, col: &StringTensor, flat: usize) -> String {
    format!("string {} at {:?}", show(col.get(flat)), x.element_index(flat))
}

/// Applies `f` to every string of `x`, which appends the result's bytes to the builder; the output
/// keeps the shape of the column and the partitions of `x`.
pub(crate) fn map_to_strings(
    ctx: &ExecContext,
    op: &str,
    x: &RaggedTensor,
    mut f: impl FnMut(usize, &[u8], &mut StringBuilder) -> Result<()>,
) -> Result<RaggedTensor> {
    let col = string_column(op, 0, x)?;
    let mut out = StringBuilder::in_call(ctx, col.len(), col.byte_len());
    for (i, s) in col.iter().enumerate() {
        f(i, s, &mut out)?;
        out.end_string();
    }
    x.with_flat_values(DenseTensor::String(out.finish(col.shape().to_vec())?))
}

/// Maps every string of `x` to a number; the output keeps the shape and partitions of `x`.
pub(crate) fn map_to_numbers<T: Element>(
    op: &str,
    x: &RaggedTensor,
    mut f: impl FnMut(usize, &[u8]) -> Result<T>,
) -> Result<RaggedTensor> {
    let col = string_column(op, 0, x)?;
    let data = col.iter().enumerate().map(|(i, s)| f(i, s)).collect::<Result<Vec<T>>>()?;
    x.with_flat_values(DenseTensor::from_vec(col.shape().to_vec(), data)?)
}

/// How string positions and lengths are counted (TensorFlow's `unit` attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CharUnit {
    /// Bytes (`"BYTE"`, the default).
    #[default]
    Byte,
    /// UTF-8 characters (`"UTF8_CHAR"`): every byte that is not a continuation byte starts one.
    Utf8Char,
}

impl CharUnit {
    /// Parses TensorFlow's spelling, `"BYTE"` or `"UTF8_CHAR"`.
    pub fn parse(op: &str, unit: &str) -> Result<Self> {
        match unit {
            "BYTE" => Ok(CharUnit::Byte),
            "UTF8_CHAR" => Ok(CharUnit::Utf8Char),
            other => Err(Error::argument(op, format!("unit must be \"BYTE\" or \"UTF8_CHAR\", got {other:?}"))),
        }
    }

    pub(crate) fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.str_opt("unit")?.map_or(Ok(CharUnit::Byte), |u| CharUnit::parse(attrs.op(), u))
    }
}

impl fmt::Display for CharUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CharUnit::Byte => "BYTE",
            CharUnit::Utf8Char => "UTF8_CHAR",
        })
    }
}

/// True for UTF-8 continuation bytes (`10xxxxxx`), which do not start a character.
pub(crate) fn is_trail_byte(b: u8) -> bool {
    (b & 0xC0) == 0x80
}

/// Number of UTF-8 characters, counted as TensorFlow does: bytes that are not continuation bytes
/// (so invalid UTF-8 gives a count, not an error).
pub(crate) fn utf8_len(s: &[u8]) -> usize {
    s.iter().filter(|&&b| !is_trail_byte(b)).count()
}

// ---------------------------------------------------------------------------------------------
// strings.split
// ---------------------------------------------------------------------------------------------
