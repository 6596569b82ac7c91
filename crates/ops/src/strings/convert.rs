//! Per-string conversions: [`Length`], [`Lower`], [`Upper`], [`Strip`], [`AsString`] and
//! [`ToNumber`].

use std::any::Any;

use ragtime_core::{
    DType, DenseTensor, Element, Error, ExecContext, RaggedTensor, Result, StringBuilder, StringTensor, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Op};

use crate::strings::common::{
    infer_same_structure, locate, map_to_numbers, map_to_strings, string_column, utf8_len, CharUnit, AS_STRING, LENGTH,
    LOWER, STRIP, TO_NUMBER, UPPER,
};
use crate::util::{fixed_inputs, one};

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

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(STRIP, inputs)?;
        // `u8::is_ascii_whitespace` leaves out the vertical tab, which TensorFlow strips.
        let space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
        one(map_to_strings(ctx, STRIP, x, |_, s, out| {
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
pub(crate) fn write_c_float(out: &mut String, v: f64) {
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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        use std::fmt::Write;
        let [x] = fixed_inputs::<1>(AS_STRING, inputs)?;
        let values = x.flat_values();
        if values.dtype() == DType::String {
            return one(x.clone());
        }
        let mut out = StringBuilder::in_call(ctx, values.len(), values.len() * 4);
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
pub(crate) fn trimmed(s: &[u8]) -> Option<&str> {
    let space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
    let start = s.iter().position(|b| !space(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !space(b)).map_or(start, |e| e + 1);
    std::str::from_utf8(&s[start..end]).ok()
}

/// A float as `strtod` reads it (see [`ToNumber`]), in float64.
pub(crate) fn parse_float(text: &str) -> Option<f64> {
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
    // Four bits per hex digit after the point; a fraction longer than int32 holds saturates (to 0.0).
    let frac_bits = i32::try_from(frac_part.len()).unwrap_or(i32::MAX).saturating_mul(4);
    let scale = exponent.saturating_sub(frac_bits);
    Some(libm::ldexp(mantissa, scale))
}

impl Op for ToNumber {
    fn name(&self) -> String {
        format!("StringsToNumber{{out_type={}}}", self.out_type)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(TO_NUMBER, inputs, self.out_type)
    }

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
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

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        map_ascii_case(UPPER, inputs, true)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
