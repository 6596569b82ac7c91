//! String ops (`tf.strings.*`): split, substr, join, reduce_join, length, lower/upper, strip,
//! to_number, as_string, unicode_encode / decode / split, hashing and n-grams (the other hashes and the vocabulary lookup are in `string_hash`).
//!
//! Every kernel reads the input's string column (one byte buffer plus offsets) and writes its result
//! through one [`StringBuilder`] or one numeric vector: no per-element allocation. Ops that keep the
//! structure (substr, length, lower, upper, to_hash_bucket_fast) reuse the input's partitions, so
//! their results share the input's partition `Arc`s.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;

use ragtime_core::{
    limits, DType, DenseTensor, Dim, Element, Error, RaggedTensor, Result, RowPartition, StringBuilder, StringTensor,
    TensorType,
};
use ragtime_graph::{expect_arity, Attr, Attrs, Cost, Op, OpProperties, OpRef};

use crate::broadcast::{broadcast_types, broadcast_values};
use crate::reduce::{plan_reduction, reduced_type, Axes, ReductionStage};
use crate::util::{expect_dtype, fixed_inputs, one, shared};

const SPLIT: &str = "strings.split";
const SUBSTR: &str = "strings.substr";
const JOIN: &str = "strings.join";
const REDUCE_JOIN: &str = "strings.reduce_join";
const LENGTH: &str = "strings.length";
const LOWER: &str = "strings.lower";
const UPPER: &str = "strings.upper";
const HASH: &str = "strings.to_hash_bucket_fast";
const NGRAMS: &str = "strings.ngrams";
const STRIP: &str = "strings.strip";
const TO_NUMBER: &str = "strings.to_number";
const AS_STRING: &str = "strings.as_string";
const UNICODE_ENCODE: &str = "strings.unicode_encode";
const UNICODE_DECODE: &str = "strings.unicode_decode";
const UNICODE_SPLIT: &str = "strings.unicode_split";

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
        _ => return None,
    })
}

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
fn string_column_of<'a>(op: &str, index: usize, t: &'a DenseTensor) -> Result<&'a StringTensor> {
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
fn locate(x: &RaggedTensor, col: &StringTensor, flat: usize) -> String {
    format!("string {} at {:?}", show(col.get(flat)), x.element_index(flat))
}

/// Applies `f` to every string of `x`, which appends the result's bytes to the builder; the output
/// keeps the shape of the column and the partitions of `x`.
pub(crate) fn map_to_strings(
    op: &str,
    x: &RaggedTensor,
    mut f: impl FnMut(usize, &[u8], &mut StringBuilder) -> Result<()>,
) -> Result<RaggedTensor> {
    let col = string_column(op, 0, x)?;
    let mut out = StringBuilder::with_capacity(col.len(), col.byte_len());
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

    fn from_attrs(attrs: &Attrs) -> Result<Self> {
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
fn is_trail_byte(b: u8) -> bool {
    (b & 0xC0) == 0x80
}

/// Number of UTF-8 characters, counted as TensorFlow does: bytes that are not continuation bytes
/// (so invalid UTF-8 gives a count, not an error).
fn utf8_len(s: &[u8]) -> usize {
    s.iter().filter(|&&b| !is_trail_byte(b)).count()
}

// ---------------------------------------------------------------------------------------------
// strings.split
// ---------------------------------------------------------------------------------------------

/// `tf.strings.split`: splits every string into pieces, adding one ragged dimension.
///
/// With a separator, every occurrence splits (`"a,,b"` gives `["a", "", "b"]`, `""` gives `[""]`).
/// Without one (or with an empty one, as in TensorFlow), runs of ASCII whitespace split and empty
/// pieces are dropped (`""` gives `[]`). `maxsplit > 0` stops after that many splits, keeping the
/// rest as the last piece; `maxsplit == 0` keeps each string whole.
///
/// A scalar gives a dense vector; a tensor of rank `r >= 1` gives a ragged tensor of rank `r + 1`
/// whose every dimension but the outermost is ragged (uniform inner dims become uniform partitions).
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    sep: Option<String>,
    maxsplit: i64,
}

impl Split {
    /// Splits on `sep`, or on whitespace runs for `None` / `Some("")`.
    pub fn new(sep: Option<&str>) -> Self {
        Split { sep: sep.filter(|s| !s.is_empty()).map(str::to_owned), maxsplit: -1 }
    }

    /// Stops after `maxsplit` splits (negative: no limit, the default).
    pub fn with_maxsplit(mut self, maxsplit: i64) -> Self {
        self.maxsplit = maxsplit;
        self
    }

    /// From graph-file attributes: `sep` (optional string), `maxsplit` (optional integer).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["sep", "maxsplit"])?;
        Ok(Split::new(attrs.str_opt("sep")?).with_maxsplit(attrs.int_opt("maxsplit")?.unwrap_or(-1)))
    }

    /// The separator (`None`: whitespace runs).
    pub fn sep(&self) -> Option<&str> {
        self.sep.as_deref()
    }

    /// The split limit (negative: none).
    pub fn maxsplit(&self) -> i64 {
        self.maxsplit
    }

    /// Appends the pieces of `s` to `out`; returns their count.
    fn split_into(&self, s: &[u8], out: &mut StringBuilder) -> usize {
        if self.maxsplit == 0 {
            out.push(s);
            return 1;
        }
        let limit_reached = |count: usize| self.maxsplit > 0 && count as u64 == self.maxsplit as u64;
        match self.sep.as_deref().map(str::as_bytes) {
            None => {
                let mut rest = trim_leading_whitespace(s);
                let mut count = 0;
                while !rest.is_empty() {
                    let end = rest.iter().position(|&b| is_split_whitespace(b)).unwrap_or(rest.len());
                    out.push(&rest[..end]);
                    rest = trim_leading_whitespace(&rest[end..]);
                    count += 1;
                    if limit_reached(count) {
                        // TensorFlow keeps the remainder, even when it is empty.
                        out.push(rest);
                        return count + 1;
                    }
                }
                count
            }
            Some(sep) => {
                let mut rest = s;
                let mut count = 0;
                while let Some(at) = find(rest, sep) {
                    out.push(&rest[..at]);
                    rest = &rest[at + sep.len()..];
                    count += 1;
                    if limit_reached(count) {
                        break;
                    }
                }
                out.push(rest);
                count + 1
            }
        }
    }
}

/// ASCII whitespace as C's `isspace` (and TensorFlow) sees it, vertical tab included.
fn is_split_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

fn trim_leading_whitespace(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| !is_split_whitespace(b)).unwrap_or(s.len());
    &s[start..]
}

/// The first occurrence of the non-empty `needle` in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    match needle {
        [b] => haystack.iter().position(|c| c == b),
        _ => haystack.windows(needle.len()).position(|w| w == needle),
    }
}

impl Op for Split {
    fn name(&self) -> String {
        let sep = self.sep.as_ref().map_or_else(|| "None".to_owned(), |s| format!("{s:?}"));
        format!("StringsSplit{{sep={sep}, maxsplit={}}}", self.maxsplit)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(SPLIT, inputs, 1..=1)?;
        let ty = &inputs[0];
        expect_string(SPLIT, 0, ty)?;
        let rank = ty.rank();
        if rank == 0 {
            return Ok(vec![TensorType::vector(DType::String)]);
        }
        let mut dims = vec![ty.dims()[0]];
        dims.extend(std::iter::repeat_n(Dim::Ragged, rank));
        Ok(vec![TensorType::new(DType::String, rank, dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(SPLIT, inputs)?;
        let col = string_column(SPLIT, 0, x)?;
        let mut pieces = StringBuilder::with_capacity(col.len(), col.byte_len());
        let lengths: Vec<i64> = col.iter().map(|s| self.split_into(s, &mut pieces) as i64).collect();
        let npieces = pieces.len();
        let pieces = DenseTensor::String(pieces.finish(vec![npieces])?);
        if x.rank() == 0 {
            return one(RaggedTensor::dense(pieces));
        }
        // Keep the ragged dims, turn the uniform dims of the flat values into uniform partitions,
        // then add the pieces' partition innermost.
        let mut partitions = x.partitions().to_vec();
        let shape = x.flat_values().shape();
        let mut rows = shape[0];
        for &d in &shape[1..] {
            partitions.push(RowPartition::from_uniform_row_length(d, rows)?);
            rows *= d;
        }
        partitions.push(RowPartition::from_row_lengths(&lengths)?);
        one(RaggedTensor::new(pieces, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// strings.substr
// ---------------------------------------------------------------------------------------------

/// `tf.strings.substr`: the substring of every string, at `pos` of `len` given as attributes
/// (one for every string) or as inputs 1 and 2 (scalars, or one per string with the strings'
/// exact shape and partitions).
///
/// A negative `pos` counts from the end. In bytes, `pos` must lie in `-size..=size`, otherwise the
/// op fails with `index_out_of_range` naming the string; a `len` past the end or negative takes
/// every byte to the end. In UTF-8 characters the rules are TensorFlow's kernel's: `pos` must lie
/// within the characters, a `len` past the end is capped; a negative `len` gives an empty string
/// for `pos >= 0` and fails for `pos < 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Substr {
    pos: i64,
    len: i64,
    unit: CharUnit,
    /// `pos` and `len` are inputs 1 and 2 (tensors) instead of attributes.
    from_inputs: bool,
}

impl Substr {
    /// The substring of `len` bytes starting at byte `pos`.
    pub fn new(pos: i64, len: i64) -> Self {
        Substr { pos, len, unit: CharUnit::Byte, from_inputs: false }
    }

    /// Counts `pos` and `len` in `unit` instead of bytes.
    pub fn with_unit(mut self, unit: CharUnit) -> Self {
        self.unit = unit;
        self
    }

    /// The substring at the positions and lengths given as inputs 1 and 2: int32 or int64
    /// tensors, each a scalar or of the strings' exact shape and partitions (applied element by
    /// element, TensorFlow's *flat values* definition).
    pub fn with_tensor_args() -> Self {
        Substr { pos: 0, len: 0, unit: CharUnit::Byte, from_inputs: true }
    }

    /// From graph-file attributes: `pos`, `len` (integers; both absent when they are inputs 1
    /// and 2), `unit` (optional).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["pos", "len", "unit"])?;
        let unit = CharUnit::from_attrs(attrs)?;
        match (attrs.int_opt("pos")?, attrs.int_opt("len")?) {
            (Some(pos), Some(len)) => Ok(Substr::new(pos, len).with_unit(unit)),
            (None, None) => Ok(Substr::with_tensor_args().with_unit(unit)),
            _ => Err(Error::argument(SUBSTR, "give both pos and len as attributes, or neither (then as inputs)")),
        }
    }

    /// Input `index` (pos or len) as one i64 per string: a scalar repeated, or a tensor with the
    /// strings' structure (`incompatible_shapes` otherwise).
    fn per_string(&self, x: &RaggedTensor, arg: &RaggedTensor, index: usize) -> Result<Vec<i64>> {
        let what = if index == 1 { "input 1 (pos)" } else { "input 2 (len)" };
        let values = arg.flat_values().to_i64_vec(SUBSTR, what)?;
        if arg.rank() == 0 {
            return Ok(vec![values[0]; x.flat_values().len()]);
        }
        let same = arg.ragged_rank() == x.ragged_rank()
            && arg.flat_values().shape() == x.flat_values().shape()
            && arg.partitions().iter().zip(x.partitions()).all(|(a, b)| a.same(b));
        if !same {
            return Err(Error::shapes(
                SUBSTR,
                format!(
                    "{what} must be a scalar or have the strings' shape {}, got {}",
                    TensorType::of(x),
                    TensorType::of(arg)
                ),
            ));
        }
        Ok(values)
    }

    /// The start position.
    pub fn pos(&self) -> i64 {
        self.pos
    }

    /// The requested length.
    pub fn length(&self) -> i64 {
        self.len
    }

    /// The unit of `pos` and `len`.
    pub fn unit(&self) -> CharUnit {
        self.unit
    }

    /// The byte range of the substring of `s` at `pos` of `len` (in the op's unit), or `None`
    /// when `pos` is out of range.
    fn byte_range(&self, s: &[u8], pos: i64, len: i64) -> Option<std::ops::Range<usize>> {
        match self.unit {
            CharUnit::Byte => {
                let size = s.len() as i64;
                let start = if pos < 0 { size.checked_add(pos)? } else { pos };
                if !(0..=size).contains(&start) {
                    return None;
                }
                let available = size - start;
                let take = if (0..=available).contains(&len) { len } else { available };
                Some(start as usize..(start + take) as usize)
            }
            CharUnit::Utf8Char => Self::utf8_range(s, pos, len),
        }
    }

    /// TensorFlow's `UpdatePosAndLenForUtf8`, on byte positions.
    fn utf8_range(s: &[u8], pos: i64, len: i64) -> Option<std::ops::Range<usize>> {
        if pos >= 0 {
            let mut start = 0;
            if !forward_chars(s, pos, &mut start) {
                return None;
            }
            let mut end = start;
            // The length is capped at the end of the string, whether or not it had enough characters.
            forward_chars(s, len, &mut end);
            Some(start..end)
        } else {
            let from_end = pos.saturating_neg();
            let skip = from_end.saturating_sub(len).max(0);
            let mut end = s.len();
            if !back_chars(s, skip, &mut end) {
                return None;
            }
            let mut start = end;
            if !back_chars(s, from_end.saturating_sub(skip), &mut start) {
                return None;
            }
            Some(start..end)
        }
    }
}

/// Moves `pos` forward by `count` UTF-8 characters; false when the string ends first (or `count`
/// is negative), as TensorFlow's `ForwardNUTF8CharPositions`.
fn forward_chars(s: &[u8], count: i64, pos: &mut usize) -> bool {
    let mut counted = 0;
    while counted < count && *pos < s.len() {
        *pos += 1;
        while *pos < s.len() && is_trail_byte(s[*pos]) {
            *pos += 1;
        }
        counted += 1;
    }
    counted == count
}

/// Moves `pos` back by `count` UTF-8 characters; false when the string starts first (or `count` is
/// negative), as TensorFlow's `BackNUTF8CharPositions`.
fn back_chars(s: &[u8], count: i64, pos: &mut usize) -> bool {
    let mut counted = 0;
    while counted < count && *pos > 0 {
        *pos -= 1;
        while *pos > 0 && is_trail_byte(s[*pos]) {
            *pos -= 1;
        }
        counted += 1;
    }
    counted == count
}

impl Op for Substr {
    fn name(&self) -> String {
        if self.from_inputs {
            return format!("StringsSubstr{{unit={}}}", self.unit);
        }
        format!("StringsSubstr{{pos={}, len={}, unit={}}}", self.pos, self.len, self.unit)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        if !self.from_inputs {
            return infer_same_structure(SUBSTR, inputs, DType::String);
        }
        expect_arity(SUBSTR, inputs, 3..=3)?;
        let (x, pos, len) = (&inputs[0], &inputs[1], &inputs[2]);
        expect_string(SUBSTR, 0, x)?;
        expect_dtype(SUBSTR, 1, pos, &[DType::I32, DType::I64], "int32 or int64 (pos)")?;
        if len.dtype() != pos.dtype() {
            return Err(Error::dtype(
                SUBSTR,
                format!("input 2 (len) is {} but input 1 (pos) is {}", len.dtype(), pos.dtype()),
            ));
        }
        for (index, arg) in [(1, pos), (2, len)] {
            let fits = arg.rank() == 0
                || arg.ragged_rank() == x.ragged_rank()
                    && arg.rank() == x.rank()
                    && arg.dims().iter().zip(x.dims()).all(|(a, b)| a.size().zip(b.size()).is_none_or(|(a, b)| a == b));
            if !fits {
                return Err(Error::shapes(
                    SUBSTR,
                    format!("input {index} ({arg}) must be a scalar or have the strings' shape {x}"),
                ));
            }
        }
        Ok(vec![x.clone()])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let x = &inputs[0];
        let (positions, lengths) = if self.from_inputs {
            (Some(self.per_string(x, &inputs[1], 1)?), Some(self.per_string(x, &inputs[2], 2)?))
        } else {
            (None, None)
        };
        let col = string_column(SUBSTR, 0, x)?;
        one(map_to_strings(SUBSTR, x, |i, s, out| {
            let pos = positions.as_ref().map_or(self.pos, |p| p[i]);
            let len = lengths.as_ref().map_or(self.len, |l| l[i]);
            match self.byte_range(s, pos, len) {
                Some(range) => {
                    out.extend(&s[range]);
                    Ok(())
                }
                None => {
                    let size = match self.unit {
                        CharUnit::Byte => s.len(),
                        CharUnit::Utf8Char => utf8_len(s),
                    };
                    Err(Error::out_of_range_at(
                        SUBSTR,
                        pos,
                        x.rank(),
                        size,
                        format!("pos in {} (unit {})", locate(x, col, i), self.unit),
                    ))
                }
            }
        })?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// strings.join
// ---------------------------------------------------------------------------------------------

/// `tf.strings.join`: joins its inputs element by element with `separator`, broadcasting them as
/// the other elementwise ops do (scalars, per-row values, same-structure ragged tensors).
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    separator: String,
}

impl Join {
    /// Joins with `separator` between the inputs' strings.
    pub fn new(separator: &str) -> Self {
        Join { separator: separator.to_owned() }
    }

    /// From graph-file attributes: `separator` (optional, `""` by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["separator"])?;
        Ok(Join::new(attrs.str_opt("separator")?.unwrap_or("")))
    }

    /// The separator.
    pub fn separator(&self) -> &str {
        &self.separator
    }
}

impl Op for Join {
    fn name(&self) -> String {
        format!("StringsJoin{{separator={:?}}}", self.separator)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(JOIN, inputs, 1..=usize::MAX)?;
        for (i, ty) in inputs.iter().enumerate() {
            expect_string(JOIN, i, ty)?;
        }
        Ok(vec![broadcast_types(JOIN, inputs)?.with_dtype(DType::String)])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        if inputs.is_empty() {
            return Err(Error::argument(JOIN, "takes at least 1 input, got 0"));
        }
        for (i, x) in inputs.iter().enumerate() {
            string_column(JOIN, i, x)?;
        }
        let b = broadcast_values(JOIN, inputs)?;
        let operands =
            b.operands.iter().enumerate().map(|(i, t)| string_column_of(JOIN, i, t)).collect::<Result<Vec<_>>>()?;
        let n = limits::checked_size(JOIN, &b.flat_shape, 8)?;
        let sep = self.separator.as_bytes();
        // The result's bytes, counted before anything is joined (a broadcast operand repeats its
        // strings, and the separator comes once per join).
        let operand_bytes = operands.iter().map(|c| {
            let o = c.offsets();
            (o[o.len() - 1] - o[0]) as u128
        });
        let seps = n as u128 * operands.len().saturating_sub(1) as u128 * sep.len() as u128;
        let bytes = operand_bytes.sum::<u128>() + seps;
        limits::checked_bytes(JOIN, usize::try_from(bytes).unwrap_or(usize::MAX), "the joined strings")?;
        if operands.iter().all(|c| c.len() == n) {
            // Every operand has one string per element (nothing broadcast): copy byte ranges
            // straight into a buffer of the exact size.
            let columns: Vec<(&[u8], &[i64])> = operands.iter().map(|c| (&c.bytes()[..], &c.offsets()[..])).collect();
            // Offsets first, then the bytes, filled in parallel by groups of elements.
            let seps_per_join = (sep.len() * columns.len().saturating_sub(1)) as i64;
            let mut offsets: Vec<i64> = limits::try_vec(JOIN, n + 1)?;
            offsets.push(0);
            let mut end = 0i64;
            for e in 0..n {
                end += seps_per_join + columns.iter().map(|&(_, o)| o[e + 1] - o[e]).sum::<i64>();
                offsets.push(end);
            }
            let buf: Vec<u8> = crate::parallel::spans_filled(JOIN, &offsets, |elements, chunk| {
                let mut at = 0;
                for e in elements {
                    for (k, &(b, o)) in columns.iter().enumerate() {
                        if k > 0 {
                            at = ragtime_core::append_bytes(chunk, at, sep, 0, sep.len());
                        }
                        at = ragtime_core::append_bytes(chunk, at, b, o[e] as usize, o[e + 1] as usize);
                    }
                }
            })?;
            let column = StringTensor::from_parts(buf, offsets, b.flat_shape.clone())?;
            return one(b.finish(DenseTensor::String(column))?);
        }
        let mut out = StringBuilder::with_capacity(n, bytes as usize);
        for e in 0..n {
            for (k, col) in operands.iter().enumerate() {
                if k > 0 {
                    out.extend(sep);
                }
                out.extend(col.get(e));
            }
            out.end_string();
        }
        one(b.finish(DenseTensor::String(out.finish(b.flat_shape.clone())?))?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// strings.reduce_join
// ---------------------------------------------------------------------------------------------

/// `tf.strings.reduce_join`: joins the strings along `axis` (every axis, one, or several) with
/// `separator`, in order; an empty group gives `""`. The grouping is the one of the numeric
/// reductions ([`plan_reduction`]): a ragged input is joined one axis at a time from the
/// innermost listed axis outwards, so an empty inner group still stands between separators
/// (`[["a"], [], ["b"]]` over `[0, 1]` with `"-"` gives `"a--b"`); a dense input joins each
/// group at once with the first listed axis varying fastest (`[["a", "b"], ["c", "d"]]` over
/// `[0, 1]` gives `"acbd"`, over `[1, 0]` `"abcd"`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceJoin {
    axis: Axes,
    keepdims: bool,
    separator: String,
}

impl ReduceJoin {
    /// Joins along `axis` (negative counts from the end; `None` joins everything into a scalar).
    pub fn new(axis: Option<i64>, separator: &str) -> Self {
        Self::with_axes(axis, separator)
    }

    /// Joins along `axes`: `Axes::All`, an axis (`1`), or a list (`vec![0, 2]`, `[0, -1]`).
    pub fn with_axes(axes: impl Into<Axes>, separator: &str) -> Self {
        ReduceJoin { axis: axes.into(), keepdims: false, separator: separator.to_owned() }
    }

    /// Keeps each joined dimension with size 1.
    pub fn with_keepdims(mut self, keepdims: bool) -> Self {
        self.keepdims = keepdims;
        self
    }

    /// From graph-file attributes: `axis` (integer, list of integers, or null), `separator`
    /// (optional, `""` by default), `keepdims` (optional, false by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "separator", "keepdims"])?;
        Ok(ReduceJoin::with_axes(Axes::from_attr(attrs, "axis")?, attrs.str_opt("separator")?.unwrap_or(""))
            .with_keepdims(attrs.bool_opt("keepdims")?.unwrap_or(false)))
    }

    /// The joined axes.
    pub fn axis(&self) -> &Axes {
        &self.axis
    }

    /// Whether each joined dimension is kept with size 1.
    pub fn keepdims(&self) -> bool {
        self.keepdims
    }

    /// The separator.
    pub fn separator(&self) -> &str {
        &self.separator
    }

    /// Joins the groups of one plan stage of `input`, giving a column of `shape`.
    fn join_stage(&self, input: &StringTensor, stage: &ReductionStage, shape: Vec<usize>) -> Result<StringTensor> {
        let sep = self.separator.as_bytes();
        let mut out = StringBuilder::with_capacity(stage.len(), input.byte_len() + stage.members().len() * sep.len());
        for o in 0..stage.len() {
            for (k, &member) in stage.group(o).iter().enumerate() {
                if k > 0 {
                    out.extend(sep);
                }
                out.extend(input.get(member));
            }
            out.end_string();
        }
        out.finish(shape)
    }
}

impl Op for ReduceJoin {
    fn name(&self) -> String {
        format!("StringsReduceJoin{{axis={}, keepdims={}, separator={:?}}}", self.axis, self.keepdims, self.separator)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(REDUCE_JOIN, inputs, 1..=1)?;
        expect_string(REDUCE_JOIN, 0, &inputs[0])?;
        Ok(vec![reduced_type(REDUCE_JOIN, &inputs[0], &self.axis, self.keepdims)?.with_dtype(DType::String)])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(REDUCE_JOIN, inputs)?;
        let col = string_column(REDUCE_JOIN, 0, x)?;
        let plan = plan_reduction(REDUCE_JOIN, x, &self.axis, self.keepdims)?;
        plan.check_input(REDUCE_JOIN, col.len())?;
        // Stage by stage; intermediate columns are flat, the last one takes the result's shape.
        let last = plan.stages().len().saturating_sub(1);
        let shape_of =
            |k: usize, stage: &ReductionStage| if k == last { plan.flat_shape.clone() } else { vec![stage.len()] };
        let mut joined = Cow::Borrowed(col);
        for (k, stage) in plan.stages().iter().enumerate() {
            joined = Cow::Owned(self.join_stage(&joined, stage, shape_of(k, stage))?);
        }
        one(plan.finish(DenseTensor::String(joined.into_owned()))?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// strings.length, strings.lower, strings.upper, strings.to_hash_bucket_fast
// ---------------------------------------------------------------------------------------------

/// `tf.strings.length`: the length of every string as int32, in bytes or UTF-8 characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Length {
    unit: CharUnit,
}

impl Length {
    /// Lengths counted in `unit`.
    pub fn new(unit: CharUnit) -> Self {
        Length { unit }
    }

    /// From graph-file attributes: `unit` (optional, `"BYTE"` by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["unit"])?;
        Ok(Length::new(CharUnit::from_attrs(attrs)?))
    }

    /// The unit lengths are counted in.
    pub fn unit(&self) -> CharUnit {
        self.unit
    }
}

impl Op for Length {
    fn name(&self) -> String {
        format!("StringsLength{{unit={}}}", self.unit)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(LENGTH, inputs, DType::I32)
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(LENGTH, inputs)?;
        one(map_to_numbers::<i32>(LENGTH, x, |i, s| {
            let n = match self.unit {
                CharUnit::Byte => s.len(),
                CharUnit::Utf8Char => utf8_len(s),
            };
            i32::try_from(n).map_err(|_| {
                Error::value(
                    LENGTH,
                    format!("the length {n} of the string at {:?} overflows int32", x.element_index(i)),
                )
            })
        })?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// ASCII case mapping of a whole column: the offsets (and the partitions) are shared with the input,
/// only the bytes are rewritten.
fn map_ascii_case(op: &str, inputs: &[RaggedTensor], upper: bool) -> Result<Vec<RaggedTensor>> {
    let [x] = fixed_inputs::<1>(op, inputs)?;
    let col = string_column(op, 0, x)?;
    let bytes: Vec<u8> = if upper {
        col.bytes().iter().map(u8::to_ascii_uppercase).collect()
    } else {
        col.bytes().iter().map(u8::to_ascii_lowercase).collect()
    };
    let mapped = StringTensor::from_parts(bytes, col.offsets().clone(), col.shape().to_vec())?;
    one(x.with_flat_values(DenseTensor::String(mapped))?)
}

/// `tf.strings.lower` with the default encoding `""`: ASCII letters to lower case, other bytes kept.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lower;

impl Lower {
    /// The op.
    pub fn new() -> Self {
        Lower
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Lower)
    }
}

impl Op for Lower {
    fn name(&self) -> String {
        "StringsLower".to_owned()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(LOWER, inputs, DType::String)
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        map_ascii_case(LOWER, inputs, false)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.strings.strip`: removes ASCII whitespace (space, `\t`, `\n`, `\v`, `\f`, `\r`) at both
/// ends of each string.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Strip;

impl Strip {
    /// The op.
    pub fn new() -> Self {
        Strip
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Strip)
    }
}

impl Op for Strip {
    fn name(&self) -> String {
        "StringsStrip".to_owned()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(STRIP, inputs, DType::String)
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(STRIP, inputs)?;
        // `u8::is_ascii_whitespace` leaves out the vertical tab, which TensorFlow strips.
        let space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
        one(map_to_strings(STRIP, x, |_, s, out| {
            let start = s.iter().position(|b| !space(b)).unwrap_or(s.len());
            let end = s.iter().rposition(|b| !space(b)).map_or(start, |e| e + 1);
            out.extend(&s[start..end]);
            Ok(())
        })?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.strings.as_string` with the default attributes: integers in decimal, floats as C's `%f` of
/// the value widened to double (6 decimals, `inf`, `-inf`, `nan` / `-nan` by the sign bit), bools as
/// `true` / `false`, strings unchanged. Keeps the input's structure.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AsString;

impl AsString {
    /// The op.
    pub fn new() -> Self {
        AsString
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(AsString)
    }
}

/// Writes `v` as C's `printf("%f", v)` does.
fn write_c_float(out: &mut String, v: f64) {
    use std::fmt::Write;
    // Writing into a String cannot fail.
    let _ = match v {
        _ if v.is_nan() => write!(out, "{}nan", if v.is_sign_negative() { "-" } else { "" }),
        _ if v.is_infinite() => write!(out, "{}inf", if v < 0.0 { "-" } else { "" }),
        _ => write!(out, "{v:.6}"),
    };
}

impl Op for AsString {
    fn name(&self) -> String {
        "StringsAsString".to_owned()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(AS_STRING, inputs, 1..=1)?;
        Ok(vec![inputs[0].clone().with_dtype(DType::String)])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        use std::fmt::Write;
        let [x] = fixed_inputs::<1>(AS_STRING, inputs)?;
        let values = x.flat_values();
        if values.dtype() == DType::String {
            return one(x.clone());
        }
        let mut out = StringBuilder::with_capacity(values.len(), values.len() * 4);
        // One text buffer, reused for every element.
        let mut text = String::new();
        ragtime_core::dispatch_dtype!(values.dtype(),
            T => {
                let data = values.as_slice::<T>().ok_or_else(|| Error::dtype(AS_STRING, "unexpected dtype"))?;
                for &v in data {
                    text.clear();
                    match T::DTYPE {
                        DType::F32 | DType::F64 => write_c_float(&mut text, v.to_f64()),
                        // Integers and bools print themselves (`true` / `false`).
                        _ => {
                            let _ = write!(text, "{v}");
                        }
                    }
                    out.push(text.as_bytes());
                }
            },
            // Returned unchanged above.
            string => {});
        one(x.with_flat_values(DenseTensor::String(out.finish(values.shape().to_vec())?))?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What `unicode_encode` / `unicode_decode` do with an invalid code point or byte sequence
/// (TensorFlow's `errors` attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UnicodeErrors {
    /// Write `replacement_char` instead (the default).
    #[default]
    Replace,
    /// Drop it.
    Ignore,
    /// Fail with `invalid_value`.
    Strict,
}

impl UnicodeErrors {
    /// From the attribute `errors` of `attrs` (`replace` when absent).
    fn from_attrs(op: &str, attrs: &Attrs) -> Result<Self> {
        match attrs.str_opt("errors")? {
            None | Some("replace") => Ok(UnicodeErrors::Replace),
            Some("ignore") => Ok(UnicodeErrors::Ignore),
            Some("strict") => Ok(UnicodeErrors::Strict),
            Some(other) => Err(Error::argument(op, format!("errors must be replace, ignore or strict, got `{other}`"))),
        }
    }
}

/// `replacement_char` of `attrs` (65533 when absent), a valid code point.
fn replacement_char_attr(op: &str, attrs: &Attrs) -> Result<char> {
    let code = attrs.int_opt("replacement_char")?.unwrap_or(0xFFFD);
    u32::try_from(code)
        .ok()
        .and_then(char::from_u32)
        .ok_or_else(|| Error::argument(op, format!("replacement_char {code} is not a code point")))
}

/// `tf.strings.unicode_encode(code_points, "UTF-8")`: each innermost row of int32 code points
/// joined into one UTF-8 string (the result has one dim less). Negative, surrogate and
/// above-0x10FFFF code points are replaced by `replacement_char`, dropped, or `invalid_value`
/// (naming the row), as `errors` says.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnicodeEncode {
    /// What to do with an invalid code point.
    pub errors: UnicodeErrors,
    /// The replacement character.
    pub replacement_char: char,
}

impl Default for UnicodeEncode {
    fn default() -> Self {
        UnicodeEncode { errors: UnicodeErrors::Replace, replacement_char: '\u{FFFD}' }
    }
}

impl UnicodeEncode {
    /// From graph-file attributes: `output_encoding` (`UTF-8` only), `errors`, `replacement_char`.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["output_encoding", "errors", "replacement_char"])?;
        match attrs.str_opt("output_encoding")? {
            None | Some("UTF-8") => {}
            Some(other) => {
                return Err(Error::argument(UNICODE_ENCODE, format!("output_encoding must be UTF-8, got `{other}`")))
            }
        }
        Ok(UnicodeEncode {
            errors: UnicodeErrors::from_attrs(UNICODE_ENCODE, attrs)?,
            replacement_char: replacement_char_attr(UNICODE_ENCODE, attrs)?,
        })
    }
}

impl Op for UnicodeEncode {
    fn name(&self) -> String {
        format!(
            "StringsUnicodeEncode{{errors={:?}, replacement_char={}}}",
            self.errors,
            u32::from(self.replacement_char)
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(UNICODE_ENCODE, inputs, 1..=1)?;
        let x = &inputs[0];
        expect_dtype(UNICODE_ENCODE, 0, x, &[DType::I32], "int32 (code points)")?;
        if x.rank() == 0 {
            return Err(Error::shapes(UNICODE_ENCODE, "input 0 must have rank >= 1, got a scalar"));
        }
        let mut dims = x.dims().to_vec();
        dims.pop();
        let ragged_rank = if x.inner_dims().is_empty() { x.ragged_rank().saturating_sub(1) } else { x.ragged_rank() };
        Ok(vec![TensorType::new(DType::String, ragged_rank, dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(UNICODE_ENCODE, inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        let values = x.flat_values();
        let codes = values.as_slice::<i32>().ok_or_else(|| Error::dtype(UNICODE_ENCODE, "input 0 must be int32"))?;
        // The rows joined: innermost ragged rows, or the last dim of the flat values.
        let (rows, shape, partitions): (Vec<std::ops::Range<usize>>, Vec<usize>, Vec<RowPartition>) =
            if x.ragged_rank() > 0 && values.rank() == 1 {
                let last = &x.partitions()[x.ragged_rank() - 1];
                (
                    (0..last.nrows()).map(|r| last.row_range(r)).collect(),
                    vec![last.nrows()],
                    x.partitions()[..x.ragged_rank() - 1].to_vec(),
                )
            } else {
                let width = values.shape()[values.rank() - 1];
                let shape = values.shape()[..values.rank() - 1].to_vec();
                let n: usize = shape.iter().product();
                ((0..n).map(|r| r * width..(r + 1) * width).collect(), shape, x.partitions().to_vec())
            };
        let mut out = StringBuilder::with_capacity(rows.len(), codes.len());
        let mut utf8 = [0u8; 4];
        for (r, range) in rows.into_iter().enumerate() {
            for &code in &codes[range] {
                let c = match u32::try_from(code).ok().and_then(char::from_u32) {
                    Some(c) => c,
                    None => match self.errors {
                        UnicodeErrors::Replace => self.replacement_char,
                        UnicodeErrors::Ignore => continue,
                        UnicodeErrors::Strict => {
                            return Err(Error::value(
                                UNICODE_ENCODE,
                                format!("row {r} holds {code}, which is not a Unicode scalar value"),
                            ))
                        }
                    },
                };
                out.extend(c.encode_utf8(&mut utf8).as_bytes());
            }
            out.end_string();
        }
        one(RaggedTensor::new(DenseTensor::String(out.finish(shape)?), partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.strings.unicode_decode` (`split` false: int32 code points) and `tf.strings.unicode_split`
/// (`split` true: one string per character) of UTF-8 strings: one more ragged dim (a scalar gives
/// a vector; the dims of a dense input become uniform ragged dims, as in TensorFlow). Each maximal
/// ill-formed subsequence (as Rust's `String::from_utf8_lossy` finds them) becomes one
/// `replacement_char`, is dropped, or is `invalid_value` (naming the string), as `errors` says.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnicodeDecode {
    /// Characters as strings (`unicode_split`) instead of code points.
    pub split: bool,
    /// What to do with invalid UTF-8.
    pub errors: UnicodeErrors,
    /// The replacement character.
    pub replacement_char: char,
}

impl UnicodeDecode {
    /// `unicode_decode` (`split` false) or `unicode_split` with TensorFlow's defaults.
    pub fn new(split: bool) -> Self {
        UnicodeDecode { split, errors: UnicodeErrors::Replace, replacement_char: '\u{FFFD}' }
    }

    fn op_name(&self) -> &'static str {
        if self.split {
            UNICODE_SPLIT
        } else {
            UNICODE_DECODE
        }
    }

    /// From graph-file attributes: `input_encoding` (`UTF-8` only), `errors`, `replacement_char`.
    pub fn from_attrs(split: bool, attrs: &Attrs) -> Result<Self> {
        let op = if split { UNICODE_SPLIT } else { UNICODE_DECODE };
        attrs.only(&["input_encoding", "errors", "replacement_char"])?;
        match attrs.str_opt("input_encoding")? {
            None | Some("UTF-8") => {}
            Some(other) => return Err(Error::argument(op, format!("input_encoding must be UTF-8, got `{other}`"))),
        }
        Ok(UnicodeDecode {
            split,
            errors: UnicodeErrors::from_attrs(op, attrs)?,
            replacement_char: replacement_char_attr(op, attrs)?,
        })
    }

    /// Calls `f` with each character of `s` (invalid sequences handled as `errors` says).
    fn chars(&self, s: &[u8], mut f: impl FnMut(char)) -> std::result::Result<(), ()> {
        for chunk in s.utf8_chunks() {
            chunk.valid().chars().for_each(&mut f);
            if !chunk.invalid().is_empty() {
                match self.errors {
                    UnicodeErrors::Replace => f(self.replacement_char),
                    UnicodeErrors::Ignore => {}
                    UnicodeErrors::Strict => return Err(()),
                }
            }
        }
        Ok(())
    }
}

impl Op for UnicodeDecode {
    fn name(&self) -> String {
        format!(
            "{}{{errors={:?}, replacement_char={}}}",
            if self.split { "StringsUnicodeSplit" } else { "StringsUnicodeDecode" },
            self.errors,
            u32::from(self.replacement_char)
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.op_name();
        expect_arity(op, inputs, 1..=1)?;
        let x = &inputs[0];
        expect_string(op, 0, x)?;
        let dtype = if self.split { DType::String } else { DType::I32 };
        if x.rank() == 0 {
            return Ok(vec![TensorType::dense(dtype, &[None])]);
        }
        let mut dims = vec![x.dims()[0]];
        dims.extend(std::iter::repeat_n(Dim::Ragged, x.rank()));
        Ok(vec![TensorType::new(dtype, x.rank(), dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.op_name();
        let [x] = fixed_inputs::<1>(op, inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        // Every dim of the strings as a partition, so their flat values are a vector.
        let strings = if x.rank() >= 2 { crate::gather::raise_ragged_rank(op, x, x.rank() - 1)? } else { x.clone() };
        let col = string_column(op, 0, &strings)?;
        let mut lengths = limits::try_vec::<i64>(op, col.len())?;
        let mut codes: Vec<i32> = Vec::new();
        let mut pieces = StringBuilder::with_capacity(if self.split { col.byte_len() } else { 0 }, col.byte_len());
        let mut utf8 = [0u8; 4];
        for (i, s) in col.iter().enumerate() {
            let mut count = 0i64;
            let decoded = self.chars(s, |c| {
                count += 1;
                if self.split {
                    pieces.push(c.encode_utf8(&mut utf8).as_bytes());
                } else {
                    codes.push(c as i32);
                }
            });
            if decoded.is_err() {
                return Err(Error::value(op, format!("{} is not valid UTF-8", locate(x, col, i))));
            }
            lengths.push(count);
        }
        let n = lengths.iter().sum::<i64>() as usize;
        let values = if self.split { DenseTensor::String(pieces.finish(vec![n])?) } else { DenseTensor::vector(codes) };
        if x.rank() == 0 {
            return one(RaggedTensor::dense(values));
        }
        let mut partitions = strings.partitions().to_vec();
        partitions.push(RowPartition::from_row_lengths(&lengths)?);
        one(RaggedTensor::new(values, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties {
            elementwise: false,
            keeps_partitions_of: None,
            can_fail: self.errors == UnicodeErrors::Strict,
            cost: Cost::Cheap,
        }
    }
}

/// `tf.strings.to_number(s, out_type)`: each string parsed as `out_type` (float32 by default,
/// float64, int32, int64), keeping the input's structure. ASCII whitespace around the number is
/// allowed. Floats: an optionally signed decimal (`1e3`, `.5`, `5.`), a `0x` hexadecimal float
/// (optional `p` exponent), or `inf` / `infinity` / `nan` in any case; out of range gives ±inf or
/// 0. Integers: an optionally signed run of decimal digits, in range. Anything else is
/// `invalid_value`, naming the string.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToNumber {
    /// The result's dtype.
    pub out_type: DType,
}

impl ToNumber {
    /// Parsing into `out_type` (float32, float64, int32 or int64; else `invalid_argument`).
    pub fn new(out_type: DType) -> Result<Self> {
        if !matches!(out_type, DType::F32 | DType::F64 | DType::I32 | DType::I64) {
            return Err(Error::argument(
                TO_NUMBER,
                format!("out_type must be float32, float64, int32 or int64, got {out_type}"),
            ));
        }
        Ok(ToNumber { out_type })
    }

    /// From graph-file attributes: `out_type` (`float32` by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["out_type"])?;
        let out_type = match attrs.str_opt("out_type")? {
            None => DType::F32,
            Some(name) => {
                DType::from_name(name).ok_or_else(|| Error::argument(TO_NUMBER, format!("unknown dtype `{name}`")))?
            }
        };
        ToNumber::new(out_type)
    }
}

/// `s` without ASCII whitespace at both ends, as text (`None` when it is not ASCII-clean UTF-8).
fn trimmed(s: &[u8]) -> Option<&str> {
    let space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
    let start = s.iter().position(|b| !space(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !space(b)).map_or(start, |e| e + 1);
    std::str::from_utf8(&s[start..end]).ok()
}

/// A float as `strtod` reads it (see [`ToNumber`]), in float64.
fn parse_float(text: &str) -> Option<f64> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let value = match body.get(..2) {
        Some("0x") | Some("0X") => parse_hex_float(&body[2..])?,
        // Rust's grammar is strtod's for decimals and inf / infinity / nan (any case); a second
        // sign was taken above, so refuse one here.
        _ if body.starts_with(['+', '-']) => return None,
        _ => body.parse::<f64>().ok()?,
    };
    Some(if negative { -value } else { value })
}

/// The hexadecimal float after `0x`: hex digits with an optional point, then an optional binary
/// exponent `p[+-]digits`.
fn parse_hex_float(text: &str) -> Option<f64> {
    let (digits, exponent) = match text.find(['p', 'P']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut mantissa = 0f64;
    for c in int_part.chars().chain(frac_part.chars()) {
        mantissa = mantissa * 16.0 + f64::from(c.to_digit(16)?);
    }
    let scale = exponent.saturating_sub(4 * frac_part.len() as i32);
    Some(libm::ldexp(mantissa, scale))
}

impl Op for ToNumber {
    fn name(&self) -> String {
        format!("StringsToNumber{{out_type={}}}", self.out_type)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(TO_NUMBER, inputs, self.out_type)
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(TO_NUMBER, inputs)?;
        let col = string_column(TO_NUMBER, 0, x)?;
        let bad =
            |i: usize| Error::value(TO_NUMBER, format!("{} is not a {} number", locate(x, col, i), self.out_type));
        let out = match self.out_type {
            DType::F32 => map_to_numbers(TO_NUMBER, x, |i, s| {
                trimmed(s).and_then(parse_float).map(|v| v as f32).ok_or_else(|| bad(i))
            })?,
            DType::F64 => map_to_numbers(TO_NUMBER, x, |i, s| trimmed(s).and_then(parse_float).ok_or_else(|| bad(i)))?,
            DType::I32 => map_to_numbers(TO_NUMBER, x, |i, s| {
                trimmed(s).and_then(|t| t.parse::<i32>().ok()).ok_or_else(|| bad(i))
            })?,
            _ => map_to_numbers(TO_NUMBER, x, |i, s| {
                trimmed(s).and_then(|t| t.parse::<i64>().ok()).ok_or_else(|| bad(i))
            })?,
        };
        one(out)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.strings.upper` with the default encoding `""`: ASCII letters to upper case, other bytes kept.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Upper;

impl Upper {
    /// The op.
    pub fn new() -> Self {
        Upper
    }

    /// From graph-file attributes (none).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&[])?;
        Ok(Upper)
    }
}

impl Op for Upper {
    fn name(&self) -> String {
        "StringsUpper".to_owned()
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(UPPER, inputs, DType::String)
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        map_ascii_case(UPPER, inputs, true)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

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

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(HASH, inputs)?;
        let col = string_column(HASH, 0, x)?;
        let (bytes, offsets) = (col.bytes(), col.offsets());
        let mut buckets = limits::try_vec(HASH, col.len())?;
        buckets.resize(col.len(), 0i64);
        crate::parallel::fill_chunks(&mut buckets, 1, |first, chunk| {
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

/// `tf.strings.ngrams`: the n-grams of every innermost row of tokens, joined by `separator`.
///
/// For each row the n-grams of every width in `widths` follow each other, in the order given.
/// With `pad_values = (left, right)` the row is padded with `padding_width` copies on each side
/// (by default `width - 1`, and never more than that); `preserve_short_sequences` makes a non-empty
/// row too short for any n-gram give one n-gram of the whole (padded) row.
///
/// Ragged tokens (no inner uniform dims) give ragged n-grams with the same outer partitions; dense
/// tokens give dense n-grams `[..., k]` (every row has the same length, so the same count). As in
/// TensorFlow's kernel, when there are no tokens at all every row gets no n-gram, even if padded.
#[derive(Debug, Clone, PartialEq)]
pub struct Ngrams {
    widths: Vec<i64>,
    separator: String,
    pad_values: Option<(String, String)>,
    padding_width: Option<i64>,
    preserve_short_sequences: bool,
    pad_without_tokens: bool,
}

impl Ngrams {
    /// N-grams of the given widths (each at least 1), space-separated, unpadded.
    pub fn new(widths: &[i64]) -> Result<Self> {
        if widths.is_empty() {
            return Err(Error::argument(NGRAMS, "ngram_width must name at least one width"));
        }
        if let Some(&bad) = widths.iter().find(|&&w| !(1..=i64::from(i32::MAX)).contains(&w)) {
            return Err(Error::argument(NGRAMS, format!("every ngram_width must be at least 1, got {bad}")));
        }
        Ok(Ngrams {
            widths: widths.to_vec(),
            separator: " ".to_owned(),
            pad_values: None,
            padding_width: None,
            preserve_short_sequences: false,
            pad_without_tokens: false,
        })
    }

    /// Joins the tokens of an n-gram with `separator` (default `" "`).
    pub fn with_separator(mut self, separator: &str) -> Self {
        self.separator = separator.to_owned();
        self
    }

    /// Pads every row with `left` before and `right` after it, `padding_width` times each side
    /// (`None`: `width - 1` for each width). `padding_width` must be at least 1.
    pub fn with_padding(mut self, left: &str, right: &str, padding_width: Option<i64>) -> Result<Self> {
        if let Some(p) = padding_width {
            if !(1..=i64::from(i32::MAX)).contains(&p) {
                return Err(Error::argument(NGRAMS, format!("padding_width must be at least 1, got {p}")));
            }
        }
        self.pad_values = Some((left.to_owned(), right.to_owned()));
        self.padding_width = padding_width;
        Ok(self)
    }

    /// Whether a non-empty row too short for any n-gram gives one n-gram of the whole row.
    pub fn with_preserve_short_sequences(mut self, preserve: bool) -> Self {
        self.preserve_short_sequences = preserve;
        self
    }

    /// Pads the rows even when the input has no tokens at all, where TensorFlow's kernel gives no
    /// n-gram in any row: the n-grams of rows that were padded beforehand (a ragtime extension;
    /// the optimizer's `local_pad_ngrams` makes such n-grams from a concat of pads).
    pub fn with_padding_without_tokens(mut self) -> Self {
        self.pad_without_tokens = true;
        self
    }

    /// Whether rows are padded even when the input has no tokens at all.
    pub fn pads_without_tokens(&self) -> bool {
        self.pad_without_tokens
    }

    /// From graph-file attributes: `ngram_width` (integer or list), `separator`, `pad_values`
    /// (a string for both sides or a pair `[left, right]`), `padding_width`, `preserve_short_sequences`.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["ngram_width", "separator", "pad_values", "padding_width", "preserve_short_sequences"])?;
        let widths = attrs
            .ints_opt("ngram_width")?
            .ok_or_else(|| Error::argument(NGRAMS, "attribute `ngram_width` is required"))?;
        let mut op = Ngrams::new(&widths)?;
        if let Some(sep) = attrs.str_opt("separator")? {
            op = op.with_separator(sep);
        }
        let padding_width = attrs.int_opt("padding_width")?;
        match attrs.get("pad_values") {
            None if padding_width.is_some() => {
                return Err(Error::argument(NGRAMS, "padding_width needs pad_values"));
            }
            None => {}
            Some(Attr::Str(both)) => op = op.with_padding(both, both, padding_width)?,
            Some(Attr::List(pair)) => match pair.as_slice() {
                [Attr::Str(left), Attr::Str(right)] => op = op.with_padding(left, right, padding_width)?,
                _ => return Err(Error::argument(NGRAMS, "pad_values must be a string or a pair of strings")),
            },
            Some(other) => {
                return Err(Error::argument(
                    NGRAMS,
                    format!("pad_values must be a string or a pair of strings, got {other:?}"),
                ))
            }
        }
        Ok(op.with_preserve_short_sequences(attrs.bool_opt("preserve_short_sequences")?.unwrap_or(false)))
    }

    /// The n-gram widths, in output order.
    pub fn widths(&self) -> &[i64] {
        &self.widths
    }

    /// The separator between the tokens of an n-gram.
    pub fn separator(&self) -> &str {
        &self.separator
    }

    /// The left and right pad values, if padding.
    pub fn pad_values(&self) -> Option<(&str, &str)> {
        self.pad_values.as_ref().map(|(l, r)| (l.as_str(), r.as_str()))
    }

    /// The padding width (`None`: `width - 1`, or no padding without pad values).
    pub fn padding_width(&self) -> Option<i64> {
        self.padding_width
    }

    /// Whether short non-empty rows give one n-gram.
    pub fn preserve_short_sequences(&self) -> bool {
        self.preserve_short_sequences
    }

    /// The padding requested by the attributes, as TensorFlow's kernel sees it: 0 without pad
    /// values, -1 for "`width - 1`", else the width given.
    fn requested_padding(&self) -> i64 {
        match (&self.pad_values, self.padding_width) {
            (None, _) => 0,
            (Some(_), None) => -1,
            (Some(_), Some(p)) => p,
        }
    }

    /// The padding on each side for n-grams of `width`: never more than `width - 1`.
    fn pad_width(&self, width: i64) -> i64 {
        let requested = self.requested_padding();
        if requested < 0 {
            width - 1
        } else {
            requested.min(width - 1)
        }
    }

    /// Number of n-grams of `width` in a row of `length` tokens.
    fn count_for_width(&self, length: i64, width: i64) -> i64 {
        (length + 2 * self.pad_width(width) - width + 1).max(0)
    }

    /// Number of n-grams of a row of `length` tokens (all widths, short rows preserved).
    fn count(&self, length: i64) -> i64 {
        let n: i64 = self.widths.iter().map(|&w| self.count_for_width(length, w)).sum();
        if self.preserve_short_sequences && length > 0 && n == 0 {
            1
        } else {
            n
        }
    }

    /// Writes n-gram `index` (of `count`) of `width` over `tokens` (one row), padded with `pad`.
    fn write_ngram(
        &self,
        out: &mut StringBuilder,
        row: RowTokens<'_>,
        (index, count, width, pad): (i64, i64, i64, i64),
    ) -> Result<()> {
        let (left_pad, right_pad) = self.pad_values().unwrap_or(("", ""));
        let sep = self.separator.as_bytes();
        let left = (pad - index).max(0);
        let right = (pad - (count - 1 - index)).max(0);
        let ntokens = width - left - right;
        let first = if left > 0 { 0 } else { index - pad };
        let token = |k: i64| -> Result<&[u8]> {
            usize::try_from(first + k)
                .ok()
                .filter(|&t| t < row.len)
                .map(|t| row.col.get(row.start + t))
                .ok_or_else(|| Error::value(NGRAMS, format!("n-gram {index} of width {width} reads past its row")))
        };
        for _ in 0..left {
            out.extend(left_pad.as_bytes());
            out.extend(sep);
        }
        for k in 0..ntokens - 1 {
            out.extend(token(k)?);
            out.extend(sep);
        }
        if ntokens > 0 {
            // End with the last token or a right pad, never with a separator.
            out.extend(token(ntokens - 1)?);
            for _ in 0..right {
                out.extend(sep);
                out.extend(right_pad.as_bytes());
            }
        } else {
            for _ in 0..right - 1 {
                out.extend(right_pad.as_bytes());
                out.extend(sep);
            }
            out.extend(right_pad.as_bytes());
        }
        out.end_string();
        Ok(())
    }

    /// Checks, before anything is written, that the n-grams of every row fit the limits: their
    /// number, the items (tokens and pads) they are made of (the work), and an upper bound of
    /// their bytes. Padded output grows quadratically with the width, so a small file could
    /// otherwise ask for terabytes or run for hours. O(rows x widths).
    fn check_output_size(&self, col: &StringTensor, splits: &[i64]) -> Result<()> {
        let (lp, rp) = self.pad_values().map_or((0, 0), |(l, r)| (l.len() as u128, r.len() as u128));
        let sep = self.separator.len() as u128;
        let offsets = col.offsets();
        let (mut ngrams, mut items, mut bytes) = (0u128, 0u128, 0u128);
        let mut add_width = |count: i64, width: i64, pad: i64, row_bytes: u128| {
            let (count, width, pad) = (count.max(0) as u128, width.max(0) as u128, pad.max(0) as u128);
            // Left pads over the n-grams: sum of max(pad - i, 0); the right side mirrors it.
            let k = pad.min(count);
            let pads_each_side = k * pad - k * k.saturating_sub(1) / 2;
            ngrams += count;
            items += count * width;
            // Each token appears in at most `width` n-grams of one width.
            bytes += pads_each_side * (lp + rp) + width * row_bytes + count * width.saturating_sub(1) * sep;
        };
        for w in splits.windows(2) {
            let length = w[1] - w[0];
            let row_bytes = (offsets[w[1] as usize] - offsets[w[0] as usize]) as u128;
            let mut any = false;
            for &width in &self.widths {
                let count = self.count_for_width(length, width);
                any |= count > 0;
                add_width(count, width, self.pad_width(width), row_bytes);
            }
            if self.preserve_short_sequences && !any && length > 0 {
                let pad = self.requested_padding().max(0);
                let width = length + 2 * pad;
                add_width(1, width, pad.min(width - 1), row_bytes);
            }
        }
        let limit = limits::MAX_BYTES as u128;
        if ngrams > (limits::MAX_BYTES / 8) as u128 || items > limit || bytes > limit {
            return Err(Error::argument(
                NGRAMS,
                format!(
                    "the n-grams would be {ngrams} strings of {items} tokens and pads (up to {bytes} bytes), over the limit of {} bytes",
                    limits::MAX_BYTES
                ),
            ));
        }
        Ok(())
    }

    /// The n-grams of every row `splits[i]..splits[i + 1]` of `col`: the n-gram column and its splits.
    fn ngrams_of_rows(&self, col: &StringTensor, splits: &[i64]) -> Result<(StringTensor, Vec<i64>)> {
        let nrows = splits.len().saturating_sub(1);
        // TensorFlow's kernel: no tokens at all means no n-gram in any row, padding or not.
        if col.is_empty() && !self.pad_without_tokens {
            return Ok((StringBuilder::default().finish(vec![0])?, vec![0; nrows + 1]));
        }
        self.check_output_size(col, splits)?;
        if let Some(width) = self.one_width() {
            return self.ngrams_of_one_width(col, splits, width);
        }
        self.ngrams_one_by_one(col, splits)
    }

    /// [`Ngrams::ngrams_of_rows`] for any widths (after the size check): n-gram after n-gram
    /// appended on this thread.
    fn ngrams_one_by_one(&self, col: &StringTensor, splits: &[i64]) -> Result<(StringTensor, Vec<i64>)> {
        let mut out_splits = Vec::with_capacity(splits.len());
        out_splits.push(0i64);
        let mut out = StringBuilder::with_capacity(0, col.byte_len());
        for w in splits.windows(2) {
            let row = RowTokens { col, start: w[0] as usize, len: (w[1] - w[0]) as usize };
            let length = w[1] - w[0];
            let before = out.len();
            for &width in &self.widths {
                let count = self.count_for_width(length, width);
                let pad = self.pad_width(width);
                for index in 0..count {
                    self.write_ngram(&mut out, row, (index, count, width, pad))?;
                }
            }
            if self.preserve_short_sequences && out.len() == before && length > 0 {
                // One n-gram of the whole row with the requested padding on both sides.
                let pad = self.requested_padding().max(0);
                let width = length + 2 * pad;
                self.write_ngram(&mut out, row, (0, 1, width, pad.min(width - 1)))?;
            }
            out_splits.push(out.len() as i64);
        }
        let n = out.len();
        Ok((out.finish(vec![n])?, out_splits))
    }

    /// Whether the n-grams are of one width without short sequences preserved: the form
    /// [`Ngrams::ngrams_of_one_width`] and [`HashedNgrams`] compute in parallel.
    fn one_width(&self) -> Option<i64> {
        match (self.widths.as_slice(), self.preserve_short_sequences) {
            ([width], false) => Some(*width),
            _ => None,
        }
    }

    /// [`Ngrams::ngrams_of_rows`] for one width without short sequences preserved (after the
    /// size check): the offsets first, then the bytes, filled by groups of rows on the call's
    /// threads.
    fn ngrams_of_one_width(&self, col: &StringTensor, splits: &[i64], width: i64) -> Result<(StringTensor, Vec<i64>)> {
        let grams = OneWidth::new(self, col, width);
        let nrows = splits.len().saturating_sub(1);
        let out_splits = self.one_width_splits(splits, width)?;
        let total = out_splits[nrows] as usize;
        let mut gram_offsets: Vec<i64> = limits::try_vec(NGRAMS, total + 1)?;
        let mut row_offsets: Vec<i64> = limits::try_vec(NGRAMS, nrows + 1)?;
        gram_offsets.push(0);
        row_offsets.push(0);
        let mut end = 0i64;
        for (r, w) in splits.windows(2).enumerate() {
            let tokens = &grams.offsets[w[0] as usize..=w[1] as usize];
            for j in 0..out_splits[r + 1] - out_splits[r] {
                end += grams.len(tokens, j);
                gram_offsets.push(end);
            }
            row_offsets.push(end);
        }
        let buf: Vec<u8> = crate::parallel::spans_filled(NGRAMS, &row_offsets, |rows, chunk| {
            let mut at = 0;
            for r in rows {
                let tokens = &grams.offsets[splits[r] as usize..=splits[r + 1] as usize];
                for j in 0..out_splits[r + 1] - out_splits[r] {
                    at = grams.append(chunk, at, tokens, j);
                }
            }
        })?;
        Ok((StringTensor::from_parts(buf, gram_offsets, vec![total])?, out_splits))
    }

    /// The n-gram splits of rows `splits` for one width.
    fn one_width_splits(&self, splits: &[i64], width: i64) -> Result<Vec<i64>> {
        let mut out_splits: Vec<i64> = limits::try_vec(NGRAMS, splits.len())?;
        out_splits.push(0);
        for w in splits.windows(2) {
            let count = self.count_for_width(w[1] - w[0], width);
            out_splits.push(out_splits[out_splits.len() - 1] + count);
        }
        Ok(out_splits)
    }

    /// Fails unless `ty` can hold tokens: a string tensor of rank >= 1 whose innermost dim is the
    /// one the n-grams run over (ragged tokens must not have uniform inner dims).
    fn check_tokens(ty: &TensorType) -> Result<()> {
        expect_string(NGRAMS, 0, ty)?;
        if ty.rank() == 0 {
            return Err(Error::shapes(NGRAMS, "input 0 must have rank >= 1, got a scalar"));
        }
        if ty.ragged_rank() > 0 && !ty.inner_dims().is_empty() {
            return Err(Error::shapes(
                NGRAMS,
                format!("input 0 must not have uniform dims after its ragged dims, got {ty}"),
            ));
        }
        Ok(())
    }
}

/// One row of tokens: strings `start..start + len` of `col`.
#[derive(Clone, Copy)]
struct RowTokens<'a> {
    col: &'a StringTensor,
    start: usize,
    len: usize,
}

/// The n-grams of one width of a token column: n-gram `j` of a row covers positions
/// `j..j + width` of the row with `pad` copies of the pad values on each side, which is what
/// [`Ngrams::write_ngram`] writes. A row is given by its token offsets (`len + 1` of them).
struct OneWidth<'a> {
    width: i64,
    pad: i64,
    left_pad: &'a [u8],
    right_pad: &'a [u8],
    sep: &'a [u8],
    bytes: &'a [u8],
    offsets: &'a [i64],
}

impl<'a> OneWidth<'a> {
    fn new(op: &'a Ngrams, col: &'a StringTensor, width: i64) -> Self {
        let (left_pad, right_pad) = op.pad_values().map_or((&b""[..], &b""[..]), |(l, r)| (l.as_bytes(), r.as_bytes()));
        OneWidth {
            width,
            pad: op.pad_width(width),
            left_pad,
            right_pad,
            sep: op.separator.as_bytes(),
            bytes: col.bytes(),
            offsets: col.offsets(),
        }
    }

    /// Whether n-gram `j` of a row of `len` tokens is tokens only (every n-gram but those at a
    /// padded row's ends): the tokens from `j - pad`.
    fn inner(&self, j: i64, len: i64) -> bool {
        j >= self.pad && j + self.width <= self.pad + len
    }

    /// N-gram `j` of a row of `len` tokens: how many left pads, which tokens (`lo..hi` of the
    /// row), how many right pads.
    fn window(&self, j: i64, len: i64) -> (i64, i64, i64, i64) {
        let (width, pad) = (self.width, self.pad);
        let left = (pad - j).clamp(0, width);
        let right = (j + width - pad - len).clamp(0, width);
        let lo = (j - pad).clamp(0, len);
        (left, lo, lo + (width - left - right).max(0), right)
    }

    /// The bytes of n-gram `j` of the row with token offsets `tokens`.
    fn len(&self, tokens: &[i64], j: i64) -> i64 {
        let len = tokens.len() as i64 - 1;
        let seps = (self.width - 1) * self.sep.len() as i64;
        seps + if self.inner(j, len) {
            tokens[(j - self.pad + self.width) as usize] - tokens[(j - self.pad) as usize]
        } else {
            let (left, lo, hi, right) = self.window(j, len);
            left * self.left_pad.len() as i64 + right * self.right_pad.len() as i64 + tokens[hi as usize]
                - tokens[lo as usize]
        }
    }

    /// Writes n-gram `j` of the row with token offsets `tokens` into `dst` at `at` (with
    /// [`ragtime_core::append_bytes`]: `dst` is filled front to back); returns its end.
    fn append(&self, dst: &mut [u8], at: usize, tokens: &[i64], j: i64) -> usize {
        let len = tokens.len() as i64 - 1;
        // Appends `src[begin..end]`, after the separator unless it is the n-gram's first piece.
        let put = |dst: &mut [u8], at: usize, src: &[u8], (begin, end): (usize, usize), first: bool| {
            let at = if first { at } else { ragtime_core::append_bytes(dst, at, self.sep, 0, self.sep.len()) };
            ragtime_core::append_bytes(dst, at, src, begin, end)
        };
        let token = |t: usize| (tokens[t] as usize, tokens[t + 1] as usize);
        let mut at = at;
        if self.inner(j, len) {
            let first = (j - self.pad) as usize;
            at = put(dst, at, self.bytes, token(first), true);
            for t in first + 1..first + self.width as usize {
                at = put(dst, at, self.bytes, token(t), false);
            }
            return at;
        }
        let (left, lo, hi, right) = self.window(j, len);
        for k in 0..left {
            at = put(dst, at, self.left_pad, (0, self.left_pad.len()), k == 0);
        }
        for t in lo as usize..hi as usize {
            at = put(dst, at, self.bytes, token(t), left == 0 && t == lo as usize);
        }
        for k in 0..right {
            at = put(dst, at, self.right_pad, (0, self.right_pad.len()), left == 0 && hi == lo && k == 0);
        }
        at
    }
}

impl Op for Ngrams {
    fn name(&self) -> String {
        format!(
            "StringsNgrams{{widths={:?}, separator={:?}, pad_values={:?}, padding_width={:?}, preserve_short_sequences={}{}}}",
            self.widths,
            self.separator,
            self.pad_values,
            self.padding_width,
            self.preserve_short_sequences,
            if self.pad_without_tokens { ", pad_without_tokens=true" } else { "" }
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(NGRAMS, inputs, 1..=1)?;
        let ty = &inputs[0];
        Ngrams::check_tokens(ty)?;
        if ty.ragged_rank() > 0 {
            return Ok(vec![ty.clone()]);
        }
        // Dense rows all have the same length, hence the same n-gram count (none without tokens).
        let mut dims = ty.dims().to_vec();
        if let Some(last) = dims.last_mut() {
            *last = match *last {
                Dim::Known(0) if !self.pad_without_tokens => Dim::Known(0),
                Dim::Known(m) => Dim::Known(self.count(m as i64) as usize),
                other => other,
            };
        }
        Ok(vec![TensorType::new(DType::String, 0, dims)?])
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(NGRAMS, inputs)?;
        let col = string_column(NGRAMS, 0, x)?;
        Ngrams::check_tokens(&TensorType::of(x))?;
        if let Some(inner) = x.partitions().last() {
            let (grams, splits) = self.ngrams_of_rows(col, inner.row_splits())?;
            let mut partitions = x.partitions()[..x.ragged_rank() - 1].to_vec();
            partitions.push(RowPartition::from_row_splits(splits)?);
            return one(RaggedTensor::new(DenseTensor::String(grams), partitions)?);
        }
        let shape = col.shape();
        let row_len = shape[shape.len() - 1];
        let nrows: usize = shape[..shape.len() - 1].iter().product();
        let splits: Vec<i64> = (0..=nrows).map(|r| (r * row_len) as i64).collect();
        let (grams, _) = self.ngrams_of_rows(col, &splits)?;
        let per_row = if row_len == 0 && !self.pad_without_tokens { 0 } else { self.count(row_len as i64) as usize };
        let mut out_shape = shape.to_vec();
        if let Some(last) = out_shape.last_mut() {
            *last = per_row;
        }
        let grams = if nrows == 0 { StringBuilder::default().finish(out_shape)? } else { grams.reshaped(out_shape)? };
        one(RaggedTensor::dense(DenseTensor::String(grams)))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// hashed n-grams (fused)
// ---------------------------------------------------------------------------------------------

/// `to_hash_bucket_fast(ngrams(x))` for one n-gram width without short sequences preserved, made
/// by the optimizer (`local_hash_ngrams`): each n-gram is assembled in a small per-thread buffer
/// and hashed there, so the n-gram strings are never stored. The buckets are those of the two ops
/// (the same bytes are hashed), with the n-grams' partition. Inputs the fused form does not cover
/// (dense tokens) run the two ops.
#[derive(Debug, Clone, PartialEq)]
pub struct HashedNgrams {
    ngrams: Ngrams,
    hash: ToHashBucketFast,
}

impl HashedNgrams {
    /// The fused op, when `ngrams` has one width and does not preserve short sequences.
    pub fn new(ngrams: Ngrams, hash: ToHashBucketFast) -> Option<Self> {
        ngrams.one_width()?;
        Some(HashedNgrams { ngrams, hash })
    }

    /// The n-grams hashed.
    pub fn ngrams(&self) -> &Ngrams {
        &self.ngrams
    }

    /// The hash of each n-gram.
    pub fn hash(&self) -> &ToHashBucketFast {
        &self.hash
    }

    /// The buckets of the n-grams of every row `splits[i]..splits[i + 1]` of `col`, and the
    /// n-grams' splits.
    fn buckets_of_rows(&self, col: &StringTensor, splits: &[i64], width: i64) -> Result<(Vec<i64>, Vec<i64>)> {
        let nrows = splits.len().saturating_sub(1);
        // TensorFlow's kernel: no tokens at all means no n-gram in any row, padding or not.
        if col.is_empty() && !self.ngrams.pad_without_tokens {
            return Ok((Vec::new(), vec![0; nrows + 1]));
        }
        self.ngrams.check_output_size(col, splits)?;
        let out_splits = self.ngrams.one_width_splits(splits, width)?;
        let grams = OneWidth::new(&self.ngrams, col, width);
        let buckets: Vec<i64> = crate::parallel::spans_filled(HASH, &out_splits, |rows, chunk| {
            // Room for the n-gram plus the 16 bytes `append_bytes` may write past it.
            let mut scratch: Vec<u8> = Vec::new();
            let mut k = 0;
            for r in rows {
                let tokens = &grams.offsets[splits[r] as usize..=splits[r + 1] as usize];
                for j in 0..out_splits[r + 1] - out_splits[r] {
                    let n = grams.len(tokens, j) as usize;
                    if scratch.len() < n + 16 {
                        scratch.resize(n + 16, 0);
                    }
                    let end = grams.append(&mut scratch, 0, tokens, j);
                    chunk[k] = self.hash.bucket(&scratch[..end]);
                    k += 1;
                }
            }
        })?;
        Ok((buckets, out_splits))
    }
}

impl Op for HashedNgrams {
    fn name(&self) -> String {
        format!("StringsHashedNgrams{{{}, num_buckets={}}}", self.ngrams.name(), self.hash.num_buckets())
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let grams = self.ngrams.infer(inputs)?;
        self.hash.infer(&grams)
    }

    fn perform(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(NGRAMS, inputs)?;
        let col = string_column(NGRAMS, 0, x)?;
        Ngrams::check_tokens(&TensorType::of(x))?;
        let (Some(inner), Some(width)) = (x.partitions().last(), self.ngrams.one_width()) else {
            let grams = self.ngrams.perform(inputs)?;
            return self.hash.perform(&grams);
        };
        let (buckets, splits) = self.buckets_of_rows(col, inner.row_splits(), width)?;
        let n = buckets.len();
        let mut partitions = x.partitions()[..x.ragged_rank() - 1].to_vec();
        partitions.push(RowPartition::from_row_splits(splits)?);
        one(RaggedTensor::new(DenseTensor::from_vec(vec![n], buckets)?, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use ragtime_core::{ragged, ErrorKind, Literal};

    use super::*;

    /// A string tensor of the given ragged rank from a literal (so empty lists stay strings).
    fn strings(lit: Literal, ragged_rank: usize) -> RaggedTensor {
        RaggedTensor::from_literal_typed(&lit, Some(DType::String), Some(ragged_rank), None).unwrap()
    }

    fn lit<T: Into<Literal>>(v: T) -> Literal {
        v.into()
    }

    /// Runs `op` on `inputs`, checking that `infer` accepts every input type and the output's type.
    fn run(op: &dyn Op, inputs: &[RaggedTensor]) -> RaggedTensor {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let inferred = op.output_types(&types).unwrap_or_else(|e| panic!("{}: infer failed: {e}", op.name()));
        let out = op.perform(inputs).unwrap_or_else(|e| panic!("{}: perform failed: {e}", op.name()));
        assert_eq!(out.len(), 1, "{} gives one output", op.name());
        let got = TensorType::of(&out[0]);
        assert!(inferred[0].accepts(&got), "{}: inferred {} but the value has type {got}", op.name(), inferred[0]);
        out.into_iter().next().unwrap()
    }

    fn assert_value(got: &RaggedTensor, want: &RaggedTensor) {
        assert!(got.equals(want), "expected {want}, got {got}");
    }

    fn perform_error(op: &dyn Op, inputs: &[RaggedTensor]) -> ErrorKind {
        match op.perform(inputs) {
            Ok(v) => panic!("{}: expected an error, got {}", op.name(), v[0]),
            Err(e) => e.kind(),
        }
    }

    fn sentences() -> RaggedTensor {
        ragged!["What makes you think she is a witch?", "She turned me into a newt.", "A newt?", "Well, I got better."]
            .unwrap()
    }

    // --- strings.split -------------------------------------------------------------------------

    #[test]
    fn split_on_space_matches_tensorflow() {
        // conformance: strings/split_space
        let out = run(&Split::new(Some(" ")), &[sentences()]);
        let want = ragged![
            ["What", "makes", "you", "think", "she", "is", "a", "witch?"],
            ["She", "turned", "me", "into", "a", "newt."],
            ["A", "newt?"],
            ["Well,", "I", "got", "better."]
        ]
        .unwrap();
        assert_value(&out, &want);
    }

    #[test]
    fn split_with_separator_keeps_empty_pieces() {
        let out = run(&Split::new(Some("<>")), &[ragged!["1<>2<><>3", "", "<>"].unwrap()]);
        assert_value(&out, &strings(lit(vec![vec!["1", "2", "", "3"], vec![""], vec!["", ""]]), 1));
        let out = run(&Split::new(Some(",")), &[ragged!["a,,b"].unwrap()]);
        assert_value(&out, &ragged![["a", "", "b"]].unwrap());
    }

    #[test]
    fn split_without_separator_uses_whitespace_runs() {
        let input = ragged!["hello world", "  a \t b\n\x0bc  ", "", " \r\n "].unwrap();
        let want = strings(lit(vec![vec!["hello", "world"], vec!["a", "b", "c"], vec![], vec![]]), 1);
        assert_value(&run(&Split::new(None), std::slice::from_ref(&input)), &want);
        // TensorFlow treats an empty separator as no separator.
        assert_value(&run(&Split::new(Some("")), &[input]), &want);
    }

    #[test]
    fn split_maxsplit_keeps_the_rest() {
        let out = run(&Split::new(Some(",")).with_maxsplit(1), &[ragged!["a,b,c", "", "x"].unwrap()]);
        assert_value(&out, &ragged![["a", "b,c"], [""], ["x"]].unwrap());
        // TensorFlow's kernel keeps the remainder once the limit is reached, even an empty one.
        let out = run(&Split::new(None).with_maxsplit(1), &[ragged!["a b  c ", "a"].unwrap()]);
        assert_value(&out, &ragged![["a", "b  c "], ["a", ""]].unwrap());
        let out = run(&Split::new(None).with_maxsplit(0), &[ragged!["a b", ""].unwrap()]);
        assert_value(&out, &ragged![["a b"], [""]].unwrap());
    }

    #[test]
    fn split_of_a_scalar_is_a_dense_vector() {
        let scalar = RaggedTensor::from_literal(&lit("hello world")).unwrap();
        let out = run(&Split::new(None), &[scalar]);
        assert_value(&out, &ragged!["hello", "world"].unwrap());
    }

    #[test]
    fn split_adds_a_ragged_dimension_and_reuses_partitions() {
        let x = ragged![["a b", "c"], [], ["d e f"]].unwrap();
        let out = run(&Split::new(Some(" ")), std::slice::from_ref(&x));
        assert_value(&out, &ragged![[["a", "b"], ["c"]], [], [["d", "e", "f"]]].unwrap());
        assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]), "the outer partition is shared");
    }

    #[test]
    fn split_of_a_matrix_makes_every_inner_dim_ragged() {
        let x =
            RaggedTensor::from_literal_typed(&lit(vec![vec!["a b", "c"], vec!["", "d"]]), None, Some(0), None).unwrap();
        let out = run(&Split::new(None), &[x]);
        assert_eq!(out.ragged_rank(), 2);
        assert_value(&out, &strings(lit(vec![vec![vec!["a", "b"], vec!["c"]], vec![vec![], vec!["d"]]]), 2));
    }

    #[test]
    fn split_of_no_strings_has_no_rows() {
        let x = strings(lit(Vec::<Literal>::new()), 0);
        let out = run(&Split::new(Some(",")), &[x]);
        assert_eq!((out.nrows(), out.ragged_rank()), (0, 1));
    }

    #[test]
    fn split_refuses_numbers() {
        let err = Split::new(None).infer(&[TensorType::ragged(DType::I32, 1)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TypeMismatch);
        assert_eq!(perform_error(&Split::new(None), &[ragged![[1, 2]].unwrap()]), ErrorKind::TypeMismatch);
    }

    // --- strings.substr ------------------------------------------------------------------------

    fn words() -> RaggedTensor {
        ragged![["So", "long"], ["thanks", "for", "all", "the", "fish"]].unwrap()
    }

    #[test]
    fn substr_matches_tensorflow() {
        // conformance: seed_walkthrough/substr_0_2 and strings/substr_neg
        let x = words();
        let out = run(&Substr::new(0, 2), std::slice::from_ref(&x));
        assert_value(&out, &ragged![["So", "lo"], ["th", "fo", "al", "th", "fi"]].unwrap());
        assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]), "substr keeps the input's partition");
        let out = run(&Substr::new(1, 3), &[x]);
        assert_value(&out, &ragged![["o", "ong"], ["han", "or", "ll", "he", "ish"]].unwrap());
    }

    #[test]
    fn substr_negative_pos_counts_from_the_end() {
        let x = ragged!["Hello", "World"].unwrap();
        assert_value(&run(&Substr::new(-3, 2), std::slice::from_ref(&x)), &ragged!["ll", "rl"].unwrap());
        assert_value(&run(&Substr::new(-5, 1), std::slice::from_ref(&x)), &ragged!["H", "W"].unwrap());
    }

    #[test]
    fn substr_long_or_negative_len_takes_the_rest() {
        let x = ragged!["Hello", "ab"].unwrap();
        assert_value(&run(&Substr::new(1, 100), std::slice::from_ref(&x)), &ragged!["ello", "b"].unwrap());
        assert_value(&run(&Substr::new(1, -1), std::slice::from_ref(&x)), &ragged!["ello", "b"].unwrap());
        assert_value(&run(&Substr::new(-1, -7), &[x]), &ragged!["o", "b"].unwrap());
    }

    #[test]
    fn substr_pos_at_the_end_gives_empty_strings() {
        let x = ragged![["abc"], [""]].unwrap();
        assert_value(&run(&Substr::new(0, 2), std::slice::from_ref(&x)), &ragged![["ab"], [""]].unwrap());
        let x = ragged!["abc", "xyz"].unwrap();
        assert_value(&run(&Substr::new(3, 2), &[x]), &ragged!["", ""].unwrap());
    }

    #[test]
    fn substr_pos_outside_a_string_is_out_of_range() {
        let x = ragged![["So", "long"], ["thanks", "for"]].unwrap();
        let err = Substr::new(3, 1).perform(std::slice::from_ref(&x)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::IndexOutOfRange);
        let msg = err.to_string();
        assert!(msg.contains("strings.substr") && msg.contains("b\"So\"") && msg.contains("[0, 0]"), "{msg}");
        assert_eq!(perform_error(&Substr::new(-3, 1), &[x]), ErrorKind::IndexOutOfRange);
        assert_eq!(perform_error(&Substr::new(1, 1), &[ragged![""].unwrap()]), ErrorKind::IndexOutOfRange);
    }

    #[test]
    fn substr_in_utf8_characters() {
        let x = ragged!["héllo", "世界", "🙂"].unwrap();
        let utf8 = |pos, len| Substr::new(pos, len).with_unit(CharUnit::Utf8Char);
        assert_value(&run(&utf8(1, 2), std::slice::from_ref(&x)), &ragged!["él", "界", ""].unwrap());
        assert_value(&run(&utf8(-1, 1), std::slice::from_ref(&x)), &ragged!["o", "界", "🙂"].unwrap());
        assert_value(&run(&utf8(0, 10), std::slice::from_ref(&x)), &ragged!["héllo", "世界", "🙂"].unwrap());
        // TensorFlow's kernel: a negative length is an empty substring for pos >= 0 ...
        assert_value(&run(&utf8(1, -1), std::slice::from_ref(&x)), &ragged!["", "", ""].unwrap());
        // ... and an error for pos < 0; pos beyond the characters is out of range.
        assert_eq!(perform_error(&utf8(-1, -1), std::slice::from_ref(&x)), ErrorKind::IndexOutOfRange);
        assert_eq!(perform_error(&utf8(2, 1), &[x]), ErrorKind::IndexOutOfRange);
    }

    #[test]
    fn substr_refuses_numbers_and_bad_units() {
        let err = Substr::new(0, 1).infer(&[TensorType::vector(DType::F32)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TypeMismatch);
        assert_eq!(CharUnit::parse(SUBSTR, "UTF16").unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    // --- strings.join --------------------------------------------------------------------------

    #[test]
    fn join_pairs_matches_tensorflow() {
        // conformance: strings/join_pairs
        let a = ragged![["a", "b"], ["c"]].unwrap();
        let b = ragged![["x", "y"], ["z"]].unwrap();
        let out = run(&Join::new("+"), &[a.clone(), b]);
        assert_value(&out, &ragged![["a+x", "b+y"], ["c+z"]].unwrap());
        assert!(out.partitions()[0].ptr_eq(&a.partitions()[0]), "the result reuses input 0's partition");
    }

    #[test]
    fn join_broadcasts_scalars() {
        let a = ragged![["a", "b"], [], ["c"]].unwrap();
        let hash = RaggedTensor::from_literal(&lit("#")).unwrap();
        let out = run(&Join::new(""), &[hash.clone(), a, hash]);
        assert_value(&out, &strings(lit(vec![vec!["#a#", "#b#"], vec![], vec!["#c#"]]), 1));
        let out = run(&Join::new(", "), &[ragged!["x", ""].unwrap()]);
        assert_value(&out, &ragged!["x", ""].unwrap());
    }

    #[test]
    fn join_refuses_numbers_and_mismatched_rows() {
        let a = ragged![["a", "b"], ["c"]].unwrap();
        let err = Join::new("").infer(&[TensorType::of(&a), TensorType::ragged(DType::I32, 1)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TypeMismatch);
        assert_eq!(perform_error(&Join::new(""), &[a.clone(), ragged![[1, 2], [3]].unwrap()]), ErrorKind::TypeMismatch);
        let b = ragged![["a"], ["b", "c"]].unwrap();
        assert_eq!(perform_error(&Join::new(""), &[a, b]), ErrorKind::IncompatibleShapes);
        assert_eq!(Join::new("").infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(perform_error(&Join::new(""), &[]), ErrorKind::InvalidArgument);
    }

    // --- strings.reduce_join -------------------------------------------------------------------

    #[test]
    fn reduce_join_rows_matches_tensorflow() {
        // conformance: strings/reduce_join_axis1
        let out = run(&ReduceJoin::new(Some(1), " "), &[words()]);
        assert_value(&out, &ragged!["So long", "thanks for all the fish"].unwrap());
        let out = run(&ReduceJoin::new(Some(-1), " "), &[words()]);
        assert_value(&out, &ragged!["So long", "thanks for all the fish"].unwrap());
    }

    #[test]
    fn reduce_join_of_empty_rows_is_empty() {
        let x = strings(lit(vec![vec!["a", "b"], vec![], vec!["c"]]), 1);
        let out = run(&ReduceJoin::new(Some(1), "-"), &[x]);
        assert_value(&out, &ragged!["a-b", "", "c"].unwrap());
    }

    #[test]
    fn reduce_join_everything_or_across_rows() {
        let x = ragged![["a", "b"], [], ["c", "d", "e"]].unwrap();
        let all = run(&ReduceJoin::new(None, ","), std::slice::from_ref(&x));
        assert_value(&all, &RaggedTensor::from_literal(&lit("a,b,c,d,e")).unwrap());
        // Across rows, position by position (as tf.reduce_sum(axis=0) groups them).
        let columns = run(&ReduceJoin::new(Some(0), ""), std::slice::from_ref(&x));
        assert_value(&columns, &ragged!["ac", "bd", "e"].unwrap());
        let dense =
            RaggedTensor::from_literal_typed(&lit(vec![vec!["a", "b"], vec!["c", "d"]]), None, Some(0), None).unwrap();
        let kept = run(&ReduceJoin::new(Some(1), "").with_keepdims(true), &[dense]);
        let want = RaggedTensor::from_literal_typed(&lit(vec![vec!["ab"], vec!["cd"]]), None, Some(0), None).unwrap();
        assert_value(&kept, &want);
    }

    #[test]
    fn reduce_join_refuses_numbers_and_bad_axes() {
        let err = ReduceJoin::new(Some(1), "").infer(&[TensorType::ragged(DType::F64, 1)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TypeMismatch);
        let err = ReduceJoin::new(Some(2), "").infer(&[TensorType::of(&words())]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert_eq!(perform_error(&ReduceJoin::new(Some(-3), ""), &[words()]), ErrorKind::InvalidArgument);
    }

    fn dense_strings(lit: Literal) -> RaggedTensor {
        strings(lit, 0)
    }

    #[test]
    fn reduce_join_of_a_dense_tensor_runs_the_first_listed_axis_fastest() {
        // TensorFlow's ReduceJoin documentation: [["a", "b"], ["c", "d"]] over [0, 1] is "acbd",
        // over [1, 0] "abcd".
        let x = dense_strings(lit(vec![vec!["a", "b"], vec!["c", "d"]]));
        let scalar = |s: &str| RaggedTensor::from_literal(&lit(s)).unwrap();
        assert_value(&run(&ReduceJoin::with_axes(vec![0, 1], ""), std::slice::from_ref(&x)), &scalar("acbd"));
        assert_value(&run(&ReduceJoin::with_axes(vec![1, 0], ""), std::slice::from_ref(&x)), &scalar("abcd"));
        assert_value(&run(&ReduceJoin::with_axes(vec![-1, -2], "."), std::slice::from_ref(&x)), &scalar("a.b.c.d"));
        let kept = run(&ReduceJoin::with_axes(vec![0, 1], "").with_keepdims(true), std::slice::from_ref(&x));
        assert_value(&kept, &dense_strings(lit(vec![vec!["acbd"]])));
        assert_value(&run(&ReduceJoin::with_axes(Vec::new(), "-"), std::slice::from_ref(&x)), &x);
        // An empty dim leaves every group empty: no separators.
        let empty =
            RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings::<&str>(&[], vec![2, 0]).unwrap()));
        assert_value(&run(&ReduceJoin::with_axes(vec![0, 1], "-"), &[empty]), &scalar(""));
    }

    #[test]
    fn reduce_join_of_a_ragged_tensor_joins_innermost_first() {
        let x = ragged![["a", "b"], ["c", "d"]].unwrap();
        let scalar = |s: &str| RaggedTensor::from_literal(&lit(s)).unwrap();
        for axes in [vec![0, 1], vec![1, 0], vec![-1, 0]] {
            let out = run(&ReduceJoin::with_axes(axes.clone(), ""), std::slice::from_ref(&x));
            assert_value(&out, &scalar("abcd"));
        }
        // An empty row joins to "", which the join across rows keeps between separators.
        let gaps = strings(lit(vec![vec!["a"], vec![], vec!["b"]]), 1);
        assert_value(&run(&ReduceJoin::with_axes(vec![0, 1], "-"), std::slice::from_ref(&gaps)), &scalar("a--b"));
        assert_value(&run(&ReduceJoin::new(None, "-"), std::slice::from_ref(&gaps)), &scalar("a-b"));
        let no_values = strings(lit(vec![Vec::<&str>::new(), vec![]]), 1);
        assert_value(&run(&ReduceJoin::with_axes(vec![1, 0], "-"), &[no_values]), &scalar("-"));
        // Rank 3: each row's words, then the row's sentences.
        let doc = strings(lit(vec![vec![vec!["to", "be"], vec!["or"]], vec![vec!["not"]]]), 2);
        let out = run(&ReduceJoin::with_axes(vec![1, 2], " "), std::slice::from_ref(&doc));
        assert_value(&out, &ragged!["to be or", "not"].unwrap());
        let kept = run(&ReduceJoin::with_axes(vec![1, 2], " ").with_keepdims(true), &[doc]);
        assert_value(&kept, &dense_strings(lit(vec![vec![vec!["to be or"]], vec![vec!["not"]]])));
    }

    #[test]
    fn reduce_join_axis_lists_from_attributes() {
        let mut m = std::collections::BTreeMap::new();
        m.insert("axis".to_owned(), Attr::List(vec![Attr::Int(0), Attr::Int(-1)]));
        m.insert("separator".to_owned(), Attr::Str(",".to_owned()));
        let op = lookup(REDUCE_JOIN, &Attrs::new(REDUCE_JOIN, m)).unwrap().unwrap();
        assert_eq!(op.name(), r#"StringsReduceJoin{axis=[0, -1], keepdims=false, separator=","}"#);
        let out = op.perform(&[words()]).unwrap().remove(0);
        assert_value(&out, &RaggedTensor::from_literal(&lit("So,long,thanks,for,all,the,fish")).unwrap());
        assert_eq!(ReduceJoin::with_axes(vec![1], "").name(), ReduceJoin::new(Some(1), "").name());
        assert_eq!(ReduceJoin::with_axes([0, 2], "").axis(), &Axes::List(vec![0, 2]));
        for axes in [vec![1, 1], vec![0, -2], vec![0, 2]] {
            let op = ReduceJoin::with_axes(axes.clone(), "");
            let err = op.infer(&[TensorType::of(&words())]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "axes {axes:?}");
            assert_eq!(perform_error(&op, &[words()]), ErrorKind::InvalidArgument, "axes {axes:?}");
        }
    }

    // --- strings.length, lower, upper, to_hash_bucket_fast -------------------------------------

    fn unicode() -> RaggedTensor {
        ragged![["héllo", "世界", ""], ["🙂"]].unwrap()
    }

    #[test]
    fn length_counts_bytes_as_int32() {
        // conformance: strings/length_bytes
        let x = unicode();
        let out = run(&Length::new(CharUnit::Byte), std::slice::from_ref(&x));
        assert_value(&out, &ragged![[6, 6, 0], [4]].unwrap());
        assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]));
    }

    #[test]
    fn length_counts_utf8_characters() {
        let out = run(&Length::new(CharUnit::Utf8Char), &[unicode()]);
        assert_value(&out, &ragged![[5, 2, 0], [1]].unwrap());
    }

    #[test]
    fn lower_and_upper_map_ascii_only() {
        let x = ragged![["Hello WORLD", "ÉtÉ 9"], []].unwrap();
        let lower = run(&Lower::new(), std::slice::from_ref(&x));
        assert_value(&lower, &ragged![["hello world", "ÉtÉ 9"], []].unwrap());
        let upper = run(&Upper::new(), std::slice::from_ref(&x));
        assert_value(&upper, &ragged![["HELLO WORLD", "ÉTÉ 9"], []].unwrap());
        assert!(upper.partitions()[0].ptr_eq(&x.partitions()[0]));
        let offsets = |t: &RaggedTensor| t.flat_strings().unwrap().offsets().clone();
        assert!(offsets(&upper).as_ptr() == offsets(&x).as_ptr(), "case mapping shares the offsets");
        assert_value(&x, &ragged![["Hello WORLD", "ÉtÉ 9"], []].unwrap());
    }

    #[test]
    fn hash_buckets_match_tensorflow() {
        // conformance: strings/split_then_hash and strings/hash_unicode
        let words = run(&Split::new(Some(" ")), &[sentences()]);
        let out = run(&ToHashBucketFast::new(1000).unwrap(), &[words]);
        let want = ragged![
            [940i64, 203, 668, 387, 790, 320, 939, 185],
            [315i64, 515, 791, 181, 939, 787],
            [564i64, 205],
            [820i64, 180, 993, 739]
        ]
        .unwrap()
        .cast(DType::I64)
        .unwrap();
        assert_value(&out, &want);
        let out = run(&ToHashBucketFast::new(1048576).unwrap(), &[unicode()]);
        assert_value(&out, &ragged![[480503i64, 698667, 16463], [39156i64]].unwrap().cast(DType::I64).unwrap());
    }

    #[test]
    fn power_of_two_buckets_are_the_remainder() {
        let words: [&[u8]; 6] =
            [b"", b"#", b"#+Who", b"Dan+Smith", b"a longer string, past sixteen bytes", &[0xff; 70]];
        for n in [1i64, 2, 1024, 1 << 40, (1 << 62) + 1, 1000, i64::MAX] {
            let op = ToHashBucketFast::new(n).unwrap();
            for w in words {
                assert_eq!(op.bucket(w), (farmhash::fingerprint64(w) % n as u64) as i64, "{n} {w:?}");
            }
        }
    }

    #[test]
    fn hash_needs_a_positive_bucket_count() {
        assert_eq!(ToHashBucketFast::new(0).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(ToHashBucketFast::new(-5).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let one_bucket = run(&ToHashBucketFast::new(1).unwrap(), &[ragged!["a", ""].unwrap()]);
        assert_value(&one_bucket, &RaggedTensor::dense(DenseTensor::vector(vec![0i64, 0])));
    }

    #[test]
    fn elementwise_string_ops_refuse_numbers() {
        let ops: [&dyn Op; 4] =
            [&Length::new(CharUnit::Byte), &Lower::new(), &Upper::new(), &ToHashBucketFast::new(3).unwrap()];
        for op in ops {
            let err = op.infer(&[TensorType::ragged(DType::I64, 1)]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::TypeMismatch, "{}", op.name());
            assert_eq!(perform_error(op, &[ragged![[1.5]].unwrap()]), ErrorKind::TypeMismatch, "{}", op.name());
            assert_eq!(op.infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument, "{}", op.name());
        }
    }

    // --- strings.ngrams ------------------------------------------------------------------------

    fn tokens() -> RaggedTensor {
        ragged![["aa", "bb", "cc", "dd"], ["ee", "ff"]].unwrap()
    }

    /// 40,000 rows of 0-6 tokens (empty strings among them, and one of 18 bytes), enough to be
    /// split across threads: the column and its row splits.
    fn token_rows() -> (StringTensor, Vec<i64>) {
        let words = ["", "a", "bc", "def", "ghij", "é", "klmnopqrstuvwxyz01"];
        let mut builder = StringBuilder::with_capacity(0, 0);
        let mut splits = vec![0i64];
        let mut seed = 7u64;
        for _ in 0..40_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (seed >> 33) % 7;
            for k in 0..len {
                builder.extend(words[((seed >> (k * 3 + 8)) % words.len() as u64) as usize].as_bytes());
                builder.end_string();
            }
            splits.push(splits.last().unwrap() + len as i64);
        }
        let n = builder.len();
        (builder.finish(vec![n]).unwrap(), splits)
    }

    /// Every width, padding and separator combination of one width.
    fn one_width_ngram_ops() -> Vec<(i64, Ngrams)> {
        let mut ops = Vec::new();
        for width in 1..=4 {
            for sep in ["", "<->"] {
                let plain = Ngrams::new(&[width]).unwrap().with_separator(sep);
                ops.push((width, plain.clone()));
                for padding in [None, Some(1), Some(5)] {
                    ops.push((width, plain.clone().with_padding("#", "", padding).unwrap()));
                    ops.push((width, plain.clone().with_padding("<s>", "</s>", padding).unwrap()));
                }
            }
        }
        ops
    }

    #[test]
    fn one_width_ngrams_filled_in_parallel_match_the_ones_appended_one_by_one() {
        let (col, splits) = token_rows();
        let _threads = crate::parallel::enter_threads(2);
        for (width, op) in one_width_ngram_ops() {
            let fast = op.ngrams_of_one_width(&col, &splits, width).unwrap();
            let slow = op.ngrams_one_by_one(&col, &splits).unwrap();
            assert_eq!(fast.1, slow.1, "{}: n-gram counts", op.name());
            assert_eq!(fast.0.offsets(), slow.0.offsets(), "{}: n-gram lengths", op.name());
            assert_eq!(fast.0.bytes(), slow.0.bytes(), "{}: n-gram bytes", op.name());
        }
    }

    #[test]
    fn ngrams_padded_without_tokens_pad_empty_rows_too() {
        let op = Ngrams::new(&[2]).unwrap().with_separator("+").with_padding("<", ">", Some(1)).unwrap();
        let always = op.clone().with_padding_without_tokens();
        let empty = strings(lit(vec![Vec::<&str>::new(), vec![]]), 1);
        // TensorFlow's rule: no tokens at all, no n-grams; the extension pads every row.
        assert_value(&run(&op, std::slice::from_ref(&empty)), &empty);
        assert_value(&run(&always, std::slice::from_ref(&empty)), &ragged![["<+>"], ["<+>"]].unwrap());
        // Dense rows of no tokens: one n-gram a row, and the inferred type says so.
        let dense =
            RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings::<&str>(&[], vec![2, 0]).unwrap()));
        let got = run(&always, &[dense]);
        assert_value(
            &got,
            &RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings(&["<+>", "<+>"], vec![2, 1]).unwrap())),
        );
        let tokens = ragged![["a", "b"], []].unwrap();
        assert_value(&run(&always, std::slice::from_ref(&tokens)), &run(&op, &[tokens]));
    }

    #[test]
    fn hashed_ngrams_are_the_buckets_of_the_ngrams() {
        let (col, splits) = token_rows();
        let tokens = RaggedTensor::from_row_splits(DenseTensor::String(col), splits).unwrap();
        let hash = ToHashBucketFast::new(1000).unwrap();
        let _threads = crate::parallel::enter_threads(2);
        for (_, op) in one_width_ngram_ops() {
            let fused = HashedNgrams::new(op.clone(), hash.clone()).unwrap();
            let want = run(&hash, &[run(&op, std::slice::from_ref(&tokens))]);
            assert_value(&run(&fused, std::slice::from_ref(&tokens)), &want);
        }
        // Dense tokens run the two ops; no tokens at all give no n-gram even when padded.
        let op = Ngrams::new(&[2]).unwrap().with_padding("#", "#", None).unwrap();
        let fused = HashedNgrams::new(op.clone(), hash.clone()).unwrap();
        let dense = ragged![["a", "b", "c"], ["d", "e", "f"]].unwrap();
        assert_value(&run(&fused, std::slice::from_ref(&dense)), &run(&hash, &[run(&op, &[dense])]));
        let empty = strings(lit(vec![Vec::<&str>::new(), vec![]]), 1);
        assert_value(&run(&fused, std::slice::from_ref(&empty)), &run(&hash, &[run(&op, &[empty])]));
        assert!(HashedNgrams::new(Ngrams::new(&[1, 2]).unwrap(), hash.clone()).is_none(), "two widths");
        let preserve = Ngrams::new(&[2]).unwrap().with_preserve_short_sequences(true);
        assert!(HashedNgrams::new(preserve, hash).is_none(), "short sequences preserved");
    }

    #[test]
    fn ngrams_unpadded() {
        let op = Ngrams::new(&[3]).unwrap().with_separator("|");
        let out = run(&op, &[tokens()]);
        assert_value(&out, &strings(lit(vec![vec!["aa|bb|cc", "bb|cc|dd"], vec![]]), 1));
        let dense = run(&Ngrams::new(&[2]).unwrap(), &[ragged!["A", "B", "C", "D"].unwrap()]);
        assert_value(&dense, &ragged!["A B", "B C", "C D"].unwrap());
    }

    #[test]
    fn ngrams_of_several_widths_follow_each_other() {
        let op = Ngrams::new(&[1, 2, 3]).unwrap().with_separator("|");
        let out = run(&op, &[tokens()]);
        let want =
            ragged![["aa", "bb", "cc", "dd", "aa|bb", "bb|cc", "cc|dd", "aa|bb|cc", "bb|cc|dd"], ["ee", "ff", "ee|ff"]]
                .unwrap();
        assert_value(&out, &want);
    }

    #[test]
    fn ngrams_padded_to_width_minus_one() {
        let op = Ngrams::new(&[3]).unwrap().with_separator("|").with_padding("LP", "RP", None).unwrap();
        let out = run(&op, &[tokens()]);
        let want = ragged![
            ["LP|LP|aa", "LP|aa|bb", "aa|bb|cc", "bb|cc|dd", "cc|dd|RP", "dd|RP|RP"],
            ["LP|LP|ee", "LP|ee|ff", "ee|ff|RP", "ff|RP|RP"]
        ]
        .unwrap();
        assert_value(&out, &want);
        let op = Ngrams::new(&[2]).unwrap().with_separator("|").with_padding("LP", "RP", None).unwrap();
        let want = ragged![["LP|aa", "aa|bb", "bb|cc", "cc|dd", "dd|RP"], ["LP|ee", "ee|ff", "ff|RP"]].unwrap();
        assert_value(&run(&op, &[tokens()]), &want);
    }

    #[test]
    fn ngrams_with_a_fixed_padding_width() {
        let op = Ngrams::new(&[3]).unwrap().with_separator("|").with_padding("LP", "LP", Some(1)).unwrap();
        let want = ragged![["LP|aa|bb", "aa|bb|cc", "bb|cc|dd", "cc|dd|LP"], ["LP|ee|ff", "ee|ff|LP"]].unwrap();
        assert_value(&run(&op, &[tokens()]), &want);
    }

    #[test]
    fn ngrams_of_an_empty_row_are_only_padding() {
        let x = strings(lit(vec![vec!["a"], vec![]]), 1);
        let op = Ngrams::new(&[3]).unwrap().with_separator("|").with_padding("L", "R", None).unwrap();
        let want = ragged![["L|L|a", "L|a|R", "a|R|R"], ["L|L|R", "L|R|R"]].unwrap();
        assert_value(&run(&op, &[x]), &want);
        // TensorFlow's kernel gives nothing at all when there is no token in the whole input.
        let empty = strings(lit(vec![Vec::<&str>::new(), vec![]]), 1);
        assert_value(&run(&op, std::slice::from_ref(&empty)), &empty);
    }

    #[test]
    fn ngrams_preserve_short_sequences() {
        let x = ragged![["aa", "bb", "cc", "dd"], ["ee"]].unwrap();
        let op = Ngrams::new(&[3]).unwrap().with_separator("|").with_preserve_short_sequences(true);
        let want = ragged![["aa|bb|cc", "bb|cc|dd"], ["ee"]].unwrap();
        assert_value(&run(&op, std::slice::from_ref(&x)), &want);
        let op = op.with_padding("L", "R", Some(1)).unwrap();
        let x = strings(lit(vec![vec!["ee"], vec![]]), 1);
        // One n-gram of the padded short row; an empty row stays empty.
        assert_value(&run(&op, &[x]), &strings(lit(vec![vec!["L|ee|R"], vec![]]), 1));
    }

    #[test]
    fn ngrams_of_dense_tokens_are_dense() {
        let x = RaggedTensor::from_literal_typed(
            &lit(vec![vec!["a", "b", "c", "d"], vec!["e", "f", "g", "h"]]),
            None,
            Some(0),
            None,
        )
        .unwrap();
        let out = run(&Ngrams::new(&[3]).unwrap().with_separator("|"), &[x]);
        let want = RaggedTensor::from_literal_typed(
            &lit(vec![vec!["a|b|c", "b|c|d"], vec!["e|f|g", "f|g|h"]]),
            None,
            Some(0),
            None,
        )
        .unwrap();
        assert_value(&out, &want);
    }

    #[test]
    fn ngrams_keep_outer_partitions() {
        let x = ragged![[["a", "b", "c"]], [], [["d"], ["e", "f"]]].unwrap();
        let out = run(&Ngrams::new(&[2]).unwrap(), std::slice::from_ref(&x));
        assert_value(&out, &strings(lit(vec![vec![vec!["a b", "b c"]], vec![], vec![vec![], vec!["e f"]]]), 2));
        assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]), "the outer partition is shared");
    }

    #[test]
    fn ngrams_refuse_bad_arguments() {
        assert_eq!(Ngrams::new(&[0]).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(Ngrams::new(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let padded = Ngrams::new(&[2]).unwrap().with_padding("", "", Some(0));
        assert_eq!(padded.unwrap_err().kind(), ErrorKind::InvalidArgument);
        let op = Ngrams::new(&[2]).unwrap();
        assert_eq!(op.infer(&[TensorType::scalar(DType::String)]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
        assert_eq!(op.infer(&[TensorType::ragged(DType::I32, 1)]).unwrap_err().kind(), ErrorKind::TypeMismatch);
        let with_inner = TensorType::ragged(DType::String, 1).with_inner(&[Some(2)]);
        assert_eq!(op.infer(&[with_inner]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    }

    // --- lookup --------------------------------------------------------------------------------

    fn attrs(op: &str, pairs: &[(&str, Attr)]) -> Attrs {
        Attrs::new(op, pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    #[test]
    fn lookup_builds_ops_from_attributes() {
        let op = lookup("strings.split", &attrs("strings.split", &[("sep", Attr::Str(" ".into()))])).unwrap().unwrap();
        assert_eq!(op.name(), "StringsSplit{sep=\" \", maxsplit=-1}");
        let op = lookup("strings.substr", &attrs("strings.substr", &[("pos", Attr::Int(1)), ("len", Attr::Int(3))]));
        assert_eq!(op.unwrap().unwrap().name(), "StringsSubstr{pos=1, len=3, unit=BYTE}");
        let ngrams = attrs(
            "strings.ngrams",
            &[
                ("ngram_width", Attr::List(vec![Attr::Int(2), Attr::Int(3)])),
                ("pad_values", Attr::List(vec![Attr::Str("<s>".into()), Attr::Str("</s>".into())])),
                ("padding_width", Attr::Int(1)),
            ],
        );
        let op = lookup("strings.ngrams", &ngrams).unwrap().unwrap();
        let out = op.perform(&[ragged![["a", "b"]].unwrap()]).unwrap();
        let want = ragged![["<s> a", "a b", "b </s>", "<s> a b", "a b </s>"]].unwrap();
        assert_value(&out[0], &want);
        assert!(lookup("strings.nope", &attrs("strings.nope", &[])).is_none());
    }

    #[test]
    fn to_number_follows_strtod_and_refuses_the_rest() {
        for (text, want) in
            [("0x1.8p1", 3.0), ("-0X10", -16.0), ("  .5\t", 0.5), ("INFINITY", f64::INFINITY), ("1e400", f64::INFINITY)]
        {
            assert_eq!(trimmed(text.as_bytes()).and_then(parse_float), Some(want), "{text:?}");
        }
        for text in ["", "+-1", "0x", "0xg", "1.5abc", "1 2", "0x1p"] {
            assert_eq!(trimmed(text.as_bytes()).and_then(parse_float), None, "{text:?}");
        }
        let op = ToNumber::new(DType::I32).unwrap();
        let e = op.perform(&[ragged![["1", "2147483648"]].unwrap()]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        assert!(e.to_string().contains("2147483648") && e.to_string().contains("[0, 1]"), "{e}");
        assert_eq!(ToNumber::new(DType::Bool).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn unicode_encode_errors_and_as_string_floats() {
        let codes =
            RaggedTensor::from_row_splits(DenseTensor::vector(vec![104i32, 0xD800, 105, -1]), vec![0, 2, 4]).unwrap();
        let strict = UnicodeEncode { errors: UnicodeErrors::Strict, ..UnicodeEncode::default() };
        let e = strict.perform(std::slice::from_ref(&codes)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        assert!(e.to_string().contains("row 0") && e.to_string().contains("55296"), "{e}");
        let ignore = UnicodeEncode { errors: UnicodeErrors::Ignore, ..UnicodeEncode::default() };
        let y = ignore.perform(std::slice::from_ref(&codes)).unwrap().remove(0);
        let texts: Vec<&[u8]> = y.flat_values().as_strings().unwrap().iter().collect();
        assert_eq!(texts, [&b"h"[..], b"i"]);
        let y = UnicodeEncode::default().perform(&[codes]).unwrap().remove(0);
        assert_eq!(y.flat_values().as_strings().unwrap().get(1), "i\u{FFFD}".as_bytes());
        // C's %f: six decimals, signed zero and NaN keep their sign.
        let mut text = String::new();
        for (v, want) in [
            (-0.0, "-0.000000"),
            (f64::NAN, "nan"),
            (-f64::NAN, "-nan"),
            (1e20f32 as f64, "100000002004087734272.000000"),
        ] {
            text.clear();
            write_c_float(&mut text, v);
            assert_eq!(text, want);
        }
    }

    #[test]
    fn lookup_refuses_bad_attributes() {
        let unknown = attrs("strings.length", &[("units", Attr::Str("BYTE".into()))]);
        assert_eq!(lookup("strings.length", &unknown).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
        let no_buckets = attrs("strings.to_hash_bucket_fast", &[]);
        assert!(lookup("strings.to_hash_bucket_fast", &no_buckets).unwrap().is_err());
        let width_without_pad =
            attrs("strings.ngrams", &[("ngram_width", Attr::Int(2)), ("padding_width", Attr::Int(1))]);
        assert_eq!(
            lookup("strings.ngrams", &width_without_pad).unwrap().unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
}
