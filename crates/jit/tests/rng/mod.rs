//! The tests' deterministic xorshift generator (no dependency, reproducible failures), shared by
//! the test files that draw inputs.

/// A xorshift64 generator from a nonzero seed.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [lo, hi).
    #[allow(dead_code)] // not every test file draws floats
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n.
    #[allow(dead_code)] // not every test file draws integers
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
