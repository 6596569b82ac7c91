//! [`Ngrams`] (`strings.ngrams` with TensorFlow's padding rules) and [`HashedNgrams`] (n-grams
//! hashed to buckets without building the joined strings).

use std::any::Any;

use ragtime_core::{
    DType, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, StringBuilder, StringTensor,
    TensorType,
};
use ragtime_graph::{expect_arity, Attr, Attrs, Op};
use ragtime_runtime::parallel;

use crate::strings::common::{expect_string, string_column, HASH, NGRAMS};
use crate::strings::hashing::ToHashBucketFast;
use crate::util::{fixed_inputs, one};

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
    pub fn count_for_width(&self, length: i64, width: i64) -> i64 {
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
    pub fn check_output_size(&self, ctx: &ExecContext, col: &StringTensor, splits: &[i64]) -> Result<()> {
        let offsets = col.offsets();
        if self.within_limits_at_most(ctx, offsets, splits) {
            return Ok(());
        }
        let (lp, rp) = self.pad_values().map_or((0, 0), |(l, r)| (l.len() as u128, r.len() as u128));
        let sep = self.separator.len() as u128;
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
        let max_bytes = ctx.limits().buffer_bytes;
        let limit = max_bytes as u128;
        if ngrams > (max_bytes / 8) as u128 || items > limit || bytes > limit {
            return Err(ctx.limits().exceeded(
                NGRAMS,
                "bytes per buffer",
                max_bytes,
                format!("the n-grams would be {ngrams} strings of {items} tokens and pads (up to {bytes} bytes)"),
            ));
        }
        Ok(())
    }

    /// Whether a bound of the n-grams' size over all rows at once (every row counted as if it had
    /// all the padding n-grams a row can have) is within the limits: then so is the exact size
    /// [`Ngrams::check_output_size`] adds up row by row, which it need not walk. O(widths).
    fn within_limits_at_most(&self, ctx: &ExecContext, offsets: &[i64], splits: &[i64]) -> bool {
        let (Some(&first), Some(&last)) = (splits.first(), splits.last()) else { return true };
        if self.preserve_short_sequences {
            return false;
        }
        let (lp, rp) = self.pad_values().map_or((0, 0), |(l, r)| (l.len() as u128, r.len() as u128));
        let sep = self.separator.len() as u128;
        let nrows = splits.len().saturating_sub(1) as u128;
        let tokens = (last - first).max(0) as u128;
        let bytes_of_tokens = (offsets[last as usize] - offsets[first as usize]).max(0) as u128;
        let (mut ngrams, mut items, mut bytes) = (0u128, 0u128, 0u128);
        for &width in &self.widths {
            let (w, pad) = (width.max(0) as u128, self.pad_width(width).max(0) as u128);
            // A row of `n` tokens has `max(n + 2 pad - w + 1, 0) <= n + max(2 pad + 1 - w, 0)` n-grams,
            // each with at most `pad` pads on each side.
            let count = tokens + nrows * (2 * pad + 1).saturating_sub(w);
            ngrams += count;
            items += count * w;
            bytes += count * pad * (lp + rp) + w * bytes_of_tokens + count * w.saturating_sub(1) * sep;
        }
        let max_bytes = ctx.limits().buffer_bytes;
        ngrams <= (max_bytes / 8) as u128 && items <= max_bytes as u128 && bytes <= max_bytes as u128
    }

    /// The n-grams of every row `splits[i]..splits[i + 1]` of `col`: the n-gram column and its splits.
    fn ngrams_of_rows(
        &self,
        ctx: &ExecContext,
        col: &StringTensor,
        splits: &[i64],
    ) -> Result<(StringTensor, Vec<i64>)> {
        let nrows = splits.len().saturating_sub(1);
        // TensorFlow's kernel: no tokens at all means no n-gram in any row, padding or not.
        if col.is_empty() && !self.pad_without_tokens {
            return Ok((StringBuilder::default().finish(vec![0])?, vec![0; nrows + 1]));
        }
        self.check_output_size(ctx, col, splits)?;
        if let Some(width) = self.one_width() {
            return self.ngrams_of_one_width(ctx, col, splits, width);
        }
        self.ngrams_one_by_one(ctx, col, splits)
    }

    /// [`Ngrams::ngrams_of_rows`] for any widths (after the size check): n-gram after n-gram
    /// appended on this thread.
    pub(crate) fn ngrams_one_by_one(
        &self,
        ctx: &ExecContext,
        col: &StringTensor,
        splits: &[i64],
    ) -> Result<(StringTensor, Vec<i64>)> {
        let mut out_splits = Vec::with_capacity(splits.len());
        out_splits.push(0i64);
        let mut out = StringBuilder::in_call(ctx, 0, col.byte_len());
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
    /// `Ngrams::ngrams_of_one_width` and [`HashedNgrams`] compute in parallel.
    pub fn one_width(&self) -> Option<i64> {
        match (self.widths.as_slice(), self.preserve_short_sequences) {
            ([width], false) => Some(*width),
            _ => None,
        }
    }

    /// [`Ngrams::ngrams_of_rows`] for one width without short sequences preserved (after the
    /// size check): the offsets first, then the bytes, filled by groups of rows on the call's
    /// threads.
    pub(crate) fn ngrams_of_one_width(
        &self,
        ctx: &ExecContext,
        col: &StringTensor,
        splits: &[i64],
        width: i64,
    ) -> Result<(StringTensor, Vec<i64>)> {
        let grams = OneWidth::new(self, col, width);
        let nrows = splits.len().saturating_sub(1);
        let out_splits = self.one_width_splits(ctx, splits, width)?;
        let total = out_splits[nrows] as usize;
        let mut gram_offsets: Vec<i64> = ctx.try_vec(NGRAMS, total + 1)?;
        let mut row_offsets: Vec<i64> = ctx.try_vec(NGRAMS, nrows + 1)?;
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
        let buf: Vec<u8> = parallel::spans_filled(ctx, NGRAMS, &row_offsets, |rows, chunk| {
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
    fn one_width_splits(&self, ctx: &ExecContext, splits: &[i64], width: i64) -> Result<Vec<i64>> {
        let mut out_splits: Vec<i64> = ctx.try_vec(NGRAMS, splits.len())?;
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

/// A separator or pad value, kept in a 16-byte array when it fits one: the source then always
/// holds 16 bytes from its start, so [`ragtime_core::append_bytes`] writes it with one 16-byte
/// move, as it does short tokens (the n-gram kernels write one separator per token).
#[derive(Debug, Clone, Copy)]
struct Piece<'a> {
    bytes: &'a [u8],
    padded: [u8; 16],
}

impl<'a> Piece<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        let mut padded = [0u8; 16];
        if let Some(head) = padded.get_mut(..bytes.len()) {
            head.copy_from_slice(bytes);
        }
        Piece { bytes, padded }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Appends the piece to `dst` at `at` (as [`ragtime_core::append_bytes`]); returns its end.
    #[inline(always)]
    fn append(&self, dst: &mut [u8], at: usize) -> usize {
        let src = if self.bytes.len() <= 16 { &self.padded[..] } else { self.bytes };
        ragtime_core::append_bytes(dst, at, src, 0, self.bytes.len())
    }
}

/// The n-grams of one width of a token column: n-gram `j` of a row covers positions
/// `j..j + width` of the row with `pad` copies of the pad values on each side, which is what
/// `Ngrams` writes. A row is given by its token offsets (`len + 1` of them). Shared with the fused
/// hashed embedding bag (`ragtime_fused::HashedGatherReduce`), which assembles each n-gram to hash it.
#[derive(Debug)]
pub struct OneWidth<'a> {
    width: i64,
    pad: i64,
    left_pad: Piece<'a>,
    right_pad: Piece<'a>,
    sep: Piece<'a>,
    bytes: &'a [u8],
    offsets: &'a [i64],
}

impl<'a> OneWidth<'a> {
    /// The n-grams of width `width` that `op` makes of the tokens `col`.
    pub fn new(op: &'a Ngrams, col: &'a StringTensor, width: i64) -> Self {
        let (left_pad, right_pad) = op.pad_values().map_or((&b""[..], &b""[..]), |(l, r)| (l.as_bytes(), r.as_bytes()));
        OneWidth {
            width,
            pad: op.pad_width(width),
            left_pad: Piece::new(left_pad),
            right_pad: Piece::new(right_pad),
            sep: Piece::new(op.separator.as_bytes()),
            bytes: col.bytes(),
            offsets: col.offsets(),
        }
    }

    /// Whether n-gram `j` of a row of `len` tokens is tokens only (every n-gram but those at a
    /// padded row's ends): the tokens from `j - pad`.
    #[inline(always)]
    fn inner(&self, j: i64, len: i64) -> bool {
        j >= self.pad && j + self.width <= self.pad + len
    }

    /// N-gram `j` of a row of `len` tokens: how many left pads, which tokens (`lo..hi` of the
    /// row), how many right pads.
    #[inline(always)]
    fn window(&self, j: i64, len: i64) -> (i64, i64, i64, i64) {
        let (width, pad) = (self.width, self.pad);
        let left = (pad - j).clamp(0, width);
        let right = (j + width - pad - len).clamp(0, width);
        let lo = (j - pad).clamp(0, len);
        (left, lo, lo + (width - left - right).max(0), right)
    }

    /// The bytes of n-gram `j` of the row with token offsets `tokens`.
    pub fn len(&self, tokens: &[i64], j: i64) -> i64 {
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
    #[inline]
    pub fn append(&self, dst: &mut [u8], at: usize, tokens: &[i64], j: i64) -> usize {
        let len = tokens.len() as i64 - 1;
        let token = |dst: &mut [u8], at: usize, t: usize| {
            ragtime_core::append_bytes(dst, at, self.bytes, tokens[t] as usize, tokens[t + 1] as usize)
        };
        if self.inner(j, len) {
            let first = (j - self.pad) as usize;
            let mut at = token(dst, at, first);
            for t in first + 1..first + self.width as usize {
                at = self.sep.append(dst, at);
                at = token(dst, at, t);
            }
            return at;
        }
        let (left, lo, hi, right) = self.window(j, len);
        // Every piece after the n-gram's first follows a separator.
        let mut at = at;
        let mut first = true;
        let mut separate = |dst: &mut [u8], at: usize| {
            if std::mem::replace(&mut first, false) {
                at
            } else {
                self.sep.append(dst, at)
            }
        };
        for _ in 0..left {
            at = separate(dst, at);
            at = self.left_pad.append(dst, at);
        }
        for t in lo as usize..hi as usize {
            at = separate(dst, at);
            at = token(dst, at, t);
        }
        for _ in 0..right {
            at = separate(dst, at);
            at = self.right_pad.append(dst, at);
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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(NGRAMS, inputs)?;
        let col = string_column(NGRAMS, 0, x)?;
        Ngrams::check_tokens(&TensorType::of(x))?;
        if let Some(inner) = x.partitions().last() {
            let (grams, splits) = self.ngrams_of_rows(ctx, col, inner.row_splits())?;
            let mut partitions = x.partitions()[..x.ragged_rank() - 1].to_vec();
            partitions.push(RowPartition::from_row_splits(splits)?);
            return one(RaggedTensor::new(DenseTensor::String(grams), partitions)?);
        }
        let shape = col.shape();
        let row_len = shape[shape.len() - 1];
        let nrows: usize = shape[..shape.len() - 1].iter().product();
        let splits: Vec<i64> = (0..=nrows).map(|r| (r * row_len) as i64).collect();
        let (grams, _) = self.ngrams_of_rows(ctx, col, &splits)?;
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
    fn buckets_of_rows(
        &self,
        ctx: &ExecContext,
        col: &StringTensor,
        splits: &[i64],
        width: i64,
    ) -> Result<(Vec<i64>, Vec<i64>)> {
        let nrows = splits.len().saturating_sub(1);
        // TensorFlow's kernel: no tokens at all means no n-gram in any row, padding or not.
        if col.is_empty() && !self.ngrams.pad_without_tokens {
            return Ok((Vec::new(), vec![0; nrows + 1]));
        }
        self.ngrams.check_output_size(ctx, col, splits)?;
        let out_splits = self.ngrams.one_width_splits(ctx, splits, width)?;
        let grams = OneWidth::new(&self.ngrams, col, width);
        let buckets: Vec<i64> = parallel::spans_filled(ctx, HASH, &out_splits, |rows, chunk| {
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

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(NGRAMS, inputs)?;
        let col = string_column(NGRAMS, 0, x)?;
        Ngrams::check_tokens(&TensorType::of(x))?;
        let (Some(inner), Some(width)) = (x.partitions().last(), self.ngrams.one_width()) else {
            let grams = self.ngrams.perform(ctx, inputs)?;
            return self.hash.perform(ctx, &grams);
        };
        let (buckets, splits) = self.buckets_of_rows(ctx, col, inner.row_splits(), width)?;
        let n = buckets.len();
        let mut partitions = x.partitions()[..x.ragged_rank() - 1].to_vec();
        partitions.push(RowPartition::from_row_splits(splits)?);
        one(RaggedTensor::new(DenseTensor::from_vec(vec![n], buckets)?, partitions)?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
