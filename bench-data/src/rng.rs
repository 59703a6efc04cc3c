//! A tiny seedable PRNG, kept in-crate so that "same seed -> same bytes" cannot be broken by a
//! dependency changing its stream between releases.

/// SplitMix64 (Steele, Lea, Flood 2014; the seeding generator of xoshiro). One u64 of state,
/// passes BigCrush, and any seed (including 0) is fine. Also used as a hash: seeding it with a
/// mix of (seed, row) gives every row its own independent stream, so rows can be generated in
/// any order, in parallel, or sampled by index.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The stream of one item (row, city, road, ...) of one purpose, independent of all others.
    pub(crate) fn for_item(seed: u64, purpose: u64, item: u64) -> Self {
        let mut h = Self::new(seed ^ purpose.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let a = h.next_u64();
        Self::new(a ^ item.wrapping_mul(GOLDEN_GAMMA))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub(crate) fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// Uniform integer in [0, n); n > 0. Multiply-shift (Lemire) without the rejection step:
    /// the bias is below 2^-32 for the n used here.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Standard normal by Box-Muller (one of the pair; simplicity over speed).
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.next_f64(); // (0, 1]: ln is finite
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    pub(crate) fn fill_bytes(&mut self, out: &mut [u8]) {
        let mut chunks = out.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        rest.copy_from_slice(&last[..rest.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_first_outputs_of_seed_zero() {
        // Published SplitMix64 reference values for seed 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn uniform_and_normal_moments() {
        let mut r = SplitMix64::new(7);
        let n = 100_000;
        let (mut s, mut s2, mut u) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let z = r.normal();
            s += z;
            s2 += z * z;
            u += r.next_f64();
        }
        let n = f64::from(n);
        assert!((s / n).abs() < 0.02);
        assert!((s2 / n - 1.0).abs() < 0.03);
        assert!((u / n - 0.5).abs() < 0.01);
        assert!(r.below(10) < 10);
    }
}
