//! [`UnicodeEncode`] and [`UnicodeDecode`] (`unicode_decode`, `unicode_split`) with TensorFlow's
//! error modes.

use std::any::Any;

use ragtime_core::{
    DType, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, StringBuilder, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Cost, Op, OpProperties};

use crate::strings::common::{expect_string, locate, string_column, UNICODE_DECODE, UNICODE_ENCODE, UNICODE_SPLIT};
use crate::util::{expect_dtype, fixed_inputs, one};

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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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
        let mut out = StringBuilder::in_call(ctx, rows.len(), codes.len());
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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.op_name();
        let [x] = fixed_inputs::<1>(op, inputs)?;
        self.output_types(&[TensorType::of(x)])?;
        // Every dim of the strings as a partition, so their flat values are a vector.
        let strings =
            if x.rank() >= 2 { crate::gather::take::raise_ragged_rank(ctx, op, x, x.rank() - 1)? } else { x.clone() };
        let col = string_column(op, 0, &strings)?;
        let mut lengths = ctx.try_vec::<i64>(op, col.len())?;
        let mut codes: Vec<i32> = Vec::new();
        let mut pieces = StringBuilder::in_call(ctx, if self.split { col.byte_len() } else { 0 }, col.byte_len());
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
