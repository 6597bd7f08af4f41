//! The crate's one seeded generator, splitmix64 (Steele, Lea, Flood 2014). Bootstrap
//! resampling, probe orders and the kernels' pointer-chase orders must be reproducible, not
//! cryptographic. It is written out (no `rand` dependency) so the C re-implementations of the
//! kernels' orders in `tests/fixtures/` can reproduce it bit for bit.

/// splitmix64: a 64-bit state advanced by the golden-ratio increment, then mixed.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift (bias below 2^-32 for our n): the bootstrap.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// `next_u64() mod n` (n > 0): the reduction the timing probes' orders were drawn with, kept
    /// so their orders (and the synthetic curves of the inference tests) stay as recorded.
    pub fn below_by_modulo(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}
