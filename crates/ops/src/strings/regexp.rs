//! [`RegexFullMatch`] and [`RegexReplace`] with RE2 syntax (the `regex` crate).

use std::any::Any;

use ragtime_core::{DType, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attrs, Cost, Op, OpProperties};
use regex::bytes::{Captures, Regex};

use crate::strings::common::{infer_same_structure, map_to_numbers, map_to_strings};
use crate::util::{fixed_inputs, one};

pub(crate) const FULL_MATCH: &str = "strings.regex_full_match";
pub(crate) const REPLACE: &str = "strings.regex_replace";

/// Compiles `pattern` (anchored at both ends when `full`), or `invalid_value` naming `op`.
fn compile(op: &str, pattern: &str, full: bool) -> Result<Regex> {
    let source = if full { format!("^(?:{pattern})$") } else { pattern.to_string() };
    Regex::new(&source)
        .map_err(|e| Error::value(op, format!("pattern {pattern:?} is not a valid regular expression: {e}")))
}

/// `strings.regex_full_match(s, pattern)`: whether each whole string matches `pattern` (bool,
/// keeping the input's structure).
#[derive(Debug, Clone)]
pub struct RegexFullMatch {
    pattern: String,
    regex: Regex,
}

impl PartialEq for RegexFullMatch {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl RegexFullMatch {
    /// The op for `pattern` (`invalid_value` when it does not compile).
    pub fn new(pattern: &str) -> Result<Self> {
        Ok(RegexFullMatch { pattern: pattern.to_string(), regex: compile(FULL_MATCH, pattern, true)? })
    }

    /// From graph-file attributes: `pattern`.
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["pattern"])?;
        Self::new(attrs.str("pattern")?)
    }
}

impl Op for RegexFullMatch {
    fn name(&self) -> String {
        format!("StringsRegexFullMatch{{pattern={:?}}}", self.pattern)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(FULL_MATCH, inputs, DType::Bool)
    }

    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(FULL_MATCH, inputs)?;
        one(map_to_numbers(FULL_MATCH, x, |_, s| Ok(self.regex.is_match(s)))?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: true, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Expensive }
    }
}

/// One piece of a parsed rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(Vec<u8>),
    Group(usize),
}

/// `strings.regex_replace(s, pattern, rewrite, replace_global)`: every match (the first one when
/// `replace_global` is false) replaced by `rewrite`, in which `\0` ... `\9` are the match and its
/// groups, `\\` a backslash, and everything else literal (`$1` too), as RE2's rewrite strings. A
/// group the pattern does not have is `invalid_value`.
#[derive(Debug, Clone)]
pub struct RegexReplace {
    pattern: String,
    rewrite: String,
    replace_global: bool,
    regex: Regex,
    pieces: Vec<Piece>,
}

impl PartialEq for RegexReplace {
    fn eq(&self, other: &Self) -> bool {
        (&self.pattern, &self.rewrite, self.replace_global) == (&other.pattern, &other.rewrite, other.replace_global)
    }
}

impl RegexReplace {
    /// The op (`invalid_value` for a pattern that does not compile or a rewrite naming a group
    /// the pattern does not have).
    pub fn new(pattern: &str, rewrite: &str, replace_global: bool) -> Result<Self> {
        let regex = compile(REPLACE, pattern, false)?;
        let mut pieces = Vec::new();
        let mut literal = Vec::new();
        let mut bytes = rewrite.bytes();
        while let Some(b) = bytes.next() {
            if b != b'\\' {
                literal.push(b);
                continue;
            }
            match bytes.next() {
                Some(d @ b'0'..=b'9') => {
                    let group = usize::from(d - b'0');
                    if group >= regex.captures_len() {
                        return Err(Error::value(
                            REPLACE,
                            format!(
                                "rewrite {rewrite:?} names group {group}, but {pattern:?} has {}",
                                regex.captures_len() - 1
                            ),
                        ));
                    }
                    pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    pieces.push(Piece::Group(group));
                }
                Some(b'\\') => literal.push(b'\\'),
                other => {
                    return Err(Error::value(
                        REPLACE,
                        format!(
                        "rewrite {rewrite:?}: a backslash must be followed by a digit or a backslash, got {other:?}"
                    ),
                    ))
                }
            }
        }
        pieces.push(Piece::Literal(literal));
        Ok(RegexReplace { pattern: pattern.into(), rewrite: rewrite.into(), replace_global, regex, pieces })
    }

    /// From graph-file attributes: `pattern`, `rewrite`, `replace_global` (true by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["pattern", "rewrite", "replace_global"])?;
        Self::new(attrs.str("pattern")?, attrs.str("rewrite")?, attrs.bool_opt("replace_global")?.unwrap_or(true))
    }

    /// Appends the rewrite of one match to `out`.
    fn expand(&self, caps: &Captures<'_>, out: &mut ragtime_core::StringBuilder) {
        for piece in &self.pieces {
            match piece {
                Piece::Literal(bytes) => out.extend(bytes),
                Piece::Group(g) => out.extend(caps.get(*g).map_or(&[][..], |m| m.as_bytes())),
            }
        }
    }
}

impl Op for RegexReplace {
    fn name(&self) -> String {
        format!(
            "StringsRegexReplace{{pattern={:?}, rewrite={:?}, replace_global={}}}",
            self.pattern, self.rewrite, self.replace_global
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        infer_same_structure(REPLACE, inputs, DType::String)
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(REPLACE, inputs)?;
        one(map_to_strings(ctx, REPLACE, x, |_, s, out| {
            let mut last = 0;
            for caps in self.regex.captures_iter(s) {
                let whole = caps.get(0).map_or(last..last, |m| m.range());
                out.extend(&s[last..whole.start]);
                self.expand(&caps, out);
                last = whole.end;
                if !self.replace_global {
                    break;
                }
            }
            out.extend(&s[last..]);
            Ok(())
        })?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: Some(0), can_fail: false, cost: Cost::Expensive }
    }
}
