//! [`Split`]: `strings.split` on whitespace or a separator.

use std::any::Any;

use ragtime_core::{
    DType, DenseTensor, Dim, ExecContext, RaggedTensor, Result, RowPartition, StringBuilder, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Op};

use crate::strings::common::{expect_string, string_column, SPLIT};
use crate::util::{fixed_inputs, one};

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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(SPLIT, inputs)?;
        let col = string_column(SPLIT, 0, x)?;
        let mut pieces = StringBuilder::in_call(ctx, col.len(), col.byte_len());
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
