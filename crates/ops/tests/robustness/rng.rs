//! The sweep's deterministic randomness: a splitmix64 generator seeded per op name, and the extreme
//! integers it mixes in.

/// splitmix64: tiny, fast, and good enough to drive a fuzzer deterministically.
pub(crate) struct Rng {
    state: u64,
    /// Whether values may hold `int32`'s extremes (see [`edge`]): true while generating operands
    /// of ops that only compute on elements, false for ops that read sizes or indices from data.
    pub(crate) extreme_int32: bool,
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng { state: seed, extreme_int32: false }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next_u64() as u128 % span) as i128) as i64
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// FNV-1a, to derive one seed per op name.
pub(crate) fn hash_name(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Integers that break naive arithmetic: overflow, sign, and sizes past the allocation cap
/// (`DenseTensor::MAX_ELEMENTS`, 2^31), so that a size built from them must be refused. Sizes just
/// under the cap are left out: they are legitimate requests for gigabytes.
pub(crate) const EXTREME_INTS: &[i64] =
    &[i64::MIN, i64::MAX, i64::MIN + 1, -(1 << 40), 1 << 40, 1 << 32, (1 << 31) + 1];
/// The extremes so far out that a difference or a quotient by a small number stays past the cap
/// (range bounds).
pub(crate) const FAR_INTS: &[i64] = &[i64::MIN, i64::MAX, i64::MIN + 1, -(1 << 40), 1 << 40];

// ---------------------------------------------------------------------------------------------
// Random values.
