//! String columns: [`StringTensor`] (bytes + offsets, Arrow's layout), [`StringBuilder`] that
//! assembles one, and the byte copies they share.

use crate::dense::shape_len;
use crate::{DenseTensor, Error, ExecContext, Result, SharedSlice};

/// A column of byte strings: one byte buffer plus offsets (Apache Arrow's layout), with a shape.
///
/// Element `i` (row-major) is `bytes[offsets[i]..offsets[i + 1]]`. Invariant: `offsets` has
/// `product(shape) + 1` entries, is non-decreasing and stays within `bytes`. The offsets need not
/// start at 0 (a column may view part of a larger buffer, such as an Arrow array's), so the bytes
/// the strings use are `offsets[0]..offsets[len]` ([`StringTensor::byte_len`]).
#[derive(Clone)]
pub struct StringTensor {
    pub(crate) bytes: SharedSlice<u8>,
    pub(crate) offsets: SharedSlice<i64>,
    pub(crate) shape: Vec<usize>,
}

impl StringTensor {
    /// Builds a column from its parts (a `Vec`, an `Arc<[_]>` or a [`SharedSlice`] of another
    /// library's memory, shared as they are), checking the offsets invariant.
    pub fn from_parts(
        bytes: impl Into<SharedSlice<u8>>,
        offsets: impl Into<SharedSlice<i64>>,
        shape: Vec<usize>,
    ) -> Result<Self> {
        let (bytes, offsets) = (bytes.into(), offsets.into());
        let n = shape_len(&shape)
            .ok_or_else(|| Error::value("StringTensor", format!("the shape {shape:?} has too many elements")))?;
        if offsets.len() != n.saturating_add(1) {
            return Err(Error::value(
                "StringTensor",
                format!("{} offsets for {n} strings (expected {})", offsets.len(), n + 1),
            ));
        }
        if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
            return Err(Error::value("StringTensor", format!("offsets decrease at string {i}")));
        }
        if offsets[0] < 0 || offsets[n] as u64 > bytes.len() as u64 {
            return Err(Error::value("StringTensor", "offsets outside the byte buffer"));
        }
        Ok(StringTensor { bytes, offsets, shape })
    }

    /// A column of the given strings with the given shape.
    pub fn from_strings<S: AsRef<[u8]>>(strings: &[S], shape: Vec<usize>) -> Result<Self> {
        let mut b = StringBuilder::with_capacity(strings.len(), 0);
        for s in strings {
            b.push(s.as_ref());
        }
        b.finish(shape)
    }

    /// Number of strings.
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }
    /// True when there are no strings.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The shape of the column.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The bytes of string `i` (row-major).
    #[inline(always)]
    pub fn get(&self, i: usize) -> &[u8] {
        // Each buffer resolved once: string kernels call this per element.
        let offsets = self.offsets.as_slice();
        &self.bytes.as_slice()[offsets[i] as usize..offsets[i + 1] as usize]
    }
    /// All strings, in row-major order.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        let (bytes, offsets) = (self.bytes.as_slice(), self.offsets.as_slice());
        offsets.windows(2).map(move |w| &bytes[w[0] as usize..w[1] as usize])
    }
    /// The shared byte buffer (it may hold bytes outside every string: see [`StringTensor::byte_len`]).
    #[inline]
    pub fn bytes(&self) -> &SharedSlice<u8> {
        &self.bytes
    }
    /// The shared offsets (`len() + 1` entries, into [`StringTensor::bytes`]).
    #[inline]
    pub fn offsets(&self) -> &SharedSlice<i64> {
        &self.offsets
    }
    /// The number of bytes the strings span (`offsets[len] - offsets[0]`), which is what a copy
    /// of the column takes; at most `bytes().len()`.
    #[inline]
    pub fn byte_len(&self) -> usize {
        (self.offsets[self.len()] - self.offsets[0]) as usize
    }
    /// The same strings with another shape of the same size.
    pub fn reshaped(&self, shape: Vec<usize>) -> Result<Self> {
        if shape_len(&shape) != Some(self.len()) {
            return Err(Error::shapes("reshape", format!("cannot reshape {} strings to {shape:?}", self.len())));
        }
        Ok(StringTensor { bytes: self.bytes.clone(), offsets: self.offsets.clone(), shape })
    }
}

/// Copies `src` into `dst`, which must have the same length. String kernels copy millions of
/// strings of a few bytes each, where a `memcpy` call costs more than the copy: up to 16 bytes
/// this is two overlapping fixed-size moves (or a byte loop under 4).
///
/// # Panics
/// If the lengths differ.
#[inline]
pub fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert_eq!(dst.len(), n, "copy_bytes: destination and source lengths differ");
    match n {
        0..=3 => {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = *s;
            }
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..].copy_from_slice(&src[n - 4..]);
        }
        8..=16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..].copy_from_slice(&src[n - 8..]);
        }
        _ => dst.copy_from_slice(src),
    }
}

/// Copies `src[begin..end]` to `dst` at `at` and returns where it ends in `dst`: for kernels that
/// fill `dst` front to back with many short strings. When both buffers hold 16 bytes from the
/// copy's start, a string of up to 16 bytes is one 16-byte move, whose bytes past the string's end
/// the following copies overwrite (so no branch on the length); otherwise [`copy_bytes`].
///
/// # Panics
/// If `begin..end` is not within `src` or the string does not fit `dst` at `at`.
#[inline]
pub fn append_bytes(dst: &mut [u8], at: usize, src: &[u8], begin: usize, end: usize) -> usize {
    let n = end - begin;
    if n <= 16 && at + 16 <= dst.len() && begin + 16 <= src.len() {
        dst[at..at + 16].copy_from_slice(&src[begin..begin + 16]);
    } else {
        copy_bytes(&mut dst[at..at + n], &src[begin..end]);
    }
    at + n
}

/// Appends strings into one byte buffer; the way every string kernel builds its output.
///
/// The builder never grows past its context's per-buffer limit of bytes (or of offsets), charges
/// its growth to the context's call budget ([`StringBuilder::in_call`]; none outside a call), and
/// grows its buffers fallibly: a push that would cross a limit, or that the allocator cannot
/// serve, is dropped and remembered, and [`StringBuilder::finish`] then returns an error. Kernels
/// can therefore push without checking, and still never abort on a huge result.
#[derive(Debug)]
pub struct StringBuilder {
    bytes: Vec<u8>,
    offsets: Vec<i64>,
    overflow: bool,
    /// The most bytes of string data (and of offsets): the context's per-buffer limit.
    max_bytes: usize,
    ctx: ExecContext,
}

impl Default for StringBuilder {
    /// An empty builder (its offsets start with the leading 0, like [`StringBuilder::with_capacity`]).
    fn default() -> Self {
        Self::with_capacity(0, 0)
    }
}

impl StringBuilder {
    /// An empty builder outside any call ([`ExecContext::detached`]) with room for `strings`
    /// strings of `bytes` bytes in all (a hint, see [`StringBuilder::in_call`]).
    pub fn with_capacity(strings: usize, bytes: usize) -> Self {
        Self::in_call(ExecContext::detached(), strings, bytes)
    }
    /// An empty builder for an op of the call `ctx` with room for `strings` strings of `bytes`
    /// bytes in all (a hint: the room is clamped to the limits and reserved only if the budget
    /// and the allocator can give it).
    pub fn in_call(ctx: &ExecContext, strings: usize, bytes: usize) -> Self {
        let max_bytes = ctx.limits().buffer_bytes;
        let mut offsets = Vec::new();
        let _ = offsets.try_reserve(strings.saturating_add(1).min(max_bytes / 8));
        offsets.push(0);
        let mut buf = Vec::new();
        let bytes = bytes.min(max_bytes);
        // Room reserved up front is charged to the call's budget like later growth.
        if ctx.charge("StringBuilder", bytes).is_ok() {
            let _ = buf.try_reserve_exact(bytes);
        }
        StringBuilder { bytes: buf, offsets, overflow: false, max_bytes, ctx: ctx.clone() }
    }
    /// Appends one string.
    #[inline]
    pub fn push(&mut self, s: &[u8]) {
        self.extend(s);
        self.end_string();
    }
    /// Appends bytes to the string being built, without ending it.
    #[inline]
    pub fn extend(&mut self, s: &[u8]) {
        // Within the room already reserved (and charged): a plain copy.
        if s.len() <= self.bytes.capacity() - self.bytes.len()
            && self.bytes.len() + s.len() <= self.max_bytes
            && !self.overflow
        {
            self.bytes.extend_from_slice(s);
            return;
        }
        self.extend_growing(s);
    }
    /// [`StringBuilder::extend`] past the reserved room: grows fallibly, within the limits and
    /// the call's budget.
    #[cold]
    fn extend_growing(&mut self, s: &[u8]) {
        if self.overflow {
            return;
        }
        let capacity = self.bytes.capacity();
        if self.bytes.len().saturating_add(s.len()) > self.max_bytes || self.bytes.try_reserve(s.len()).is_err() {
            self.overflow = true;
            return;
        }
        // Growth is charged to the call's memory budget, if one is open.
        if self.bytes.capacity() > capacity
            && self.ctx.charge("StringBuilder", self.bytes.capacity() - capacity).is_err()
        {
            self.overflow = true;
            return;
        }
        self.bytes.extend_from_slice(s);
    }
    /// Ends the string being built (made of the bytes given to [`StringBuilder::extend`]).
    #[inline]
    pub fn end_string(&mut self) {
        if self.offsets.len() < self.offsets.capacity()
            && (self.offsets.len() + 1) * 8 <= self.max_bytes
            && !self.overflow
        {
            self.offsets.push(self.bytes.len() as i64);
            return;
        }
        self.end_string_growing();
    }
    /// [`StringBuilder::end_string`] past the reserved room.
    #[cold]
    fn end_string_growing(&mut self) {
        if self.overflow {
            return;
        }
        if (self.offsets.len() + 1) * 8 > self.max_bytes || self.offsets.try_reserve(1).is_err() {
            self.overflow = true;
            return;
        }
        self.offsets.push(self.bytes.len() as i64);
    }
    /// Number of strings so far.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    /// True when no string was pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of bytes so far.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }
    /// True once a push was dropped for crossing the limits: the builder will not finish.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }
    /// The column, with the given shape (whose size must be the number of strings).
    pub fn finish(mut self, shape: Vec<usize>) -> Result<StringTensor> {
        if self.overflow {
            return Err(self.ctx.limits().exceeded(
                "StringBuilder",
                "bytes per buffer",
                self.max_bytes,
                format!("the strings of a result of shape {shape:?} would take more bytes, or more than the call's memory budget"),
            ));
        }
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        if shape_len(&shape) != Some(self.len()) {
            return Err(Error::shapes("StringBuilder", format!("{} strings for shape {shape:?}", self.len())));
        }
        Ok(StringTensor {
            bytes: SharedSlice::from_vec(self.bytes),
            offsets: SharedSlice::from_vec(self.offsets),
            shape,
        })
    }
}

impl std::fmt::Debug for StringTensor {
    /// `StringTensor { shape: [2], values: ["a", "b"] }`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let values = crate::RaggedTensor::from(DenseTensor::String(self.clone()));
        f.debug_struct("StringTensor")
            .field("shape", &self.shape())
            .field("values", &crate::literal::DebugText(&values.values_display().to_string()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_bytes_copies_every_length() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=src.len() {
            let mut dst = vec![0u8; n + 2];
            copy_bytes(&mut dst[1..=n], &src[..n]);
            assert_eq!(&dst[1..=n], &src[..n], "{n} bytes copied");
            assert_eq!((dst[0], dst[n + 1]), (0, 0), "{n} bytes: nothing written outside the destination");
        }
    }

    #[test]
    fn appended_strings_of_every_length_fill_the_buffer_exactly() {
        // Strings of 0-40 bytes at every position of a source, appended back to back; the last
        // ones end at the end of both buffers, where no 16-byte move fits.
        let src: Vec<u8> = (0..200u32).map(|i| (i % 251) as u8 + 1).collect();
        let mut pieces = Vec::new();
        let mut begin = 0;
        for n in (0..=40).chain(0..=16) {
            let start = begin % (src.len() - n);
            pieces.push((start, start + n));
            begin += 7;
        }
        pieces.push((src.len() - 3, src.len()));
        let want: Vec<u8> = pieces.iter().flat_map(|&(a, b)| src[a..b].iter().copied()).collect();
        let mut dst = vec![0u8; want.len()];
        let mut at = 0;
        for &(a, b) in &pieces {
            at = append_bytes(&mut dst, at, &src, a, b);
        }
        assert_eq!(at, want.len());
        assert_eq!(dst, want, "every byte is the appended strings'");
    }
}
