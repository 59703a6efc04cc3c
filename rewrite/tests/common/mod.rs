//! Test data shared by the rewrite crate's integration tests.

/// SplitMix64: deterministic test data without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// ISO WKB of a 2D point.
pub fn point_wkb(x: f64, y: f64) -> Vec<u8> {
    let mut w = vec![1u8, 1, 0, 0, 0];
    w.extend(x.to_le_bytes());
    w.extend(y.to_le_bytes());
    w
}
