//! The intersection tests' deterministic number stream (xorshift), shared by the box and the
//! continuous-detection tests; each test file adds the samplers it needs.

/// A small deterministic generator (xorshift) of numbers in [0, 1).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    pub(crate) fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.next()
    }
}
