//! The one seeded generator of Kiln's tests and benchmarks (xorshift64*:
//! Marsaglia, "Xorshift RNGs", 2003, with Vigna's multiplied output, "An
//! experimental exploration of Marsaglia's xorshift generators,
//! scrambled", 2016): the same sequence for the same seed on every
//! machine, no dependency. The unit tests of every crate, the end-to-end
//! tests (`kiln_tests::Rng` is this type) and the peer benchmark draw from
//! it: f64 draws for geometry, f32 draws for queries.

use glam::{DVec3, Vec3};

/// A xorshift64* generator. `Rng(s)` starts at state `s` (non-zero);
/// [`Rng::new`] mixes any seed into one.
pub struct Rng(pub u64);

impl Rng {
    /// A generator from any seed (0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1), 53 bits.
    pub fn f(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
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

    /// Uniform in [0, 1) as an f32, 24 bits.
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform f32 in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }

    /// Uniform integer below `n` (0 for `n` = 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.f32() as f64 * n as f64) as usize).min(n.saturating_sub(1))
    }

    /// A uniformly distributed f32 unit vector.
    pub fn unit32(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            let l = v.length_squared();
            if l > 1e-4 && l <= 1.0 {
                return v / l.sqrt();
            }
        }
    }
}
