//! [`Substr`]: `strings.substr` in bytes or UTF-8 characters.

use std::any::Any;

use ragtime_core::{DType, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Attrs, Op};

use crate::strings::common::{
    expect_string, infer_same_structure, is_trail_byte, locate, map_to_strings, string_column, utf8_len, CharUnit,
    SUBSTR,
};
use crate::util::{expect_dtype, one};

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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let x = &inputs[0];
        let (positions, lengths) = if self.from_inputs {
            (Some(self.per_string(x, &inputs[1], 1)?), Some(self.per_string(x, &inputs[2], 2)?))
        } else {
            (None, None)
        };
        let col = string_column(SUBSTR, 0, x)?;
        one(map_to_strings(ctx, SUBSTR, x, |i, s, out| {
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
