//! The seeded generator the geometry unit tests of both crates share
//! (xorshift64, Marsaglia 2003): the same sequence for the same seed, no
//! dependency.

use glam::DVec3;

/// A xorshift64 generator: the same sequence for the same seed.
pub struct Rng(pub u64);

impl Rng {
    /// Uniform in [0, 1).
    pub fn f(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in the cube [−s, s]³.
    pub fn v(&mut self, s: f64) -> DVec3 {
        DVec3::new(self.f() - 0.5, self.f() - 0.5, self.f() - 0.5) * (2.0 * s)
    }

    /// A random unit vector.
    pub fn unit(&mut self) -> DVec3 {
        loop {
            let v = DVec3::new(self.f(), self.f(), self.f()) * 2.0 - 1.0;
            let l = v.length();
            if l > 0.1 && l <= 1.0 {
                return v / l;
            }
        }
    }

    /// The axes of a random rotation.
    pub fn rotation(&mut self) -> [DVec3; 3] {
        let q = glam::DQuat::from_axis_angle(self.unit(), self.f() * std::f64::consts::TAU);
        [q * DVec3::X, q * DVec3::Y, q * DVec3::Z]
    }
}
