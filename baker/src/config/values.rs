//! The values a setting may take, one type per kind of value, each with
//! its range checked where it is made — the command line (clap parses
//! through [`std::str::FromStr`]) and `kiln.toml` (serde goes through
//! `TryFrom`) — and one wording of the range for both.

use kiln_formats::tri_mesh::TreeKind;
use std::fmt;
use std::str::FromStr;

/// Most planes a polytope may have: from 6 (a capped hull keeps the six
/// axis-aligned planes) to [`kiln_formats::polytope::MAX_PLANES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(try_from = "i64")]
pub struct MaxPlanes(u16);

impl MaxPlanes {
    /// The fewest planes a capped hull needs.
    pub const MIN: usize = 6;
    /// The most the archive allows.
    pub const MAX: usize = kiln_formats::polytope::MAX_PLANES;

    /// The cap, checked.
    pub fn new(v: i64) -> Result<MaxPlanes, String> {
        if (Self::MIN as i64..=Self::MAX as i64).contains(&v) {
            Ok(MaxPlanes(v as u16))
        } else {
            Err(format!(
                "{v} is not a plane cap: a polytope has from {} to {} planes",
                Self::MIN,
                Self::MAX
            ))
        }
    }

    /// The cap.
    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

/// A concave collider's face budget: from 4 to 65,536 faces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(try_from = "i64")]
pub struct FaceBudget(u32);

impl FaceBudget {
    /// The smallest budget (a tetrahedron).
    pub const MIN: usize = 4;
    /// The largest budget.
    pub const MAX: usize = 65_536;

    /// The budget, checked.
    pub fn new(v: i64) -> Result<FaceBudget, String> {
        if (Self::MIN as i64..=Self::MAX as i64).contains(&v) {
            Ok(FaceBudget(v as u32))
        } else {
            Err(format!(
                "{v} is not a face budget: a collider has from {} to {} faces",
                Self::MIN,
                Self::MAX
            ))
        }
    }

    /// The budget.
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// A fraction of a convex hull's volume, in [0, 1): how much volume a
/// closed mesh may lack and still count as convex.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(try_from = "f64")]
pub struct VolumeFraction(f64);

impl VolumeFraction {
    /// The fraction, checked.
    pub fn new(v: f64) -> Result<VolumeFraction, String> {
        if (0.0..1.0).contains(&v) {
            Ok(VolumeFraction(v))
        } else {
            Err(format!(
                "{v} is not a volume fraction: it is in [0, 1) (0.02 = 2% of the hull's volume)"
            ))
        }
    }

    /// The fraction.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// A positive, finite length in world units (metres).
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(try_from = "f64")]
pub struct Metres(f64);

impl Metres {
    /// The length, checked.
    pub fn new(v: f64) -> Result<Metres, String> {
        if v.is_finite() && v > 0.0 {
            Ok(Metres(v))
        } else {
            Err(format!("{v} is not a length: it is positive, in metres"))
        }
    }

    /// The length.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// Most convex pieces one object's decomposition may have: 1 to
/// [`kiln_formats::level::MAX_PIECES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(try_from = "i64")]
pub struct MaxPieces(u16);

impl MaxPieces {
    /// The most the archive allows.
    pub const MAX: usize = kiln_formats::level::MAX_PIECES;

    /// The cap, checked.
    pub fn new(v: i64) -> Result<MaxPieces, String> {
        if (1..=Self::MAX as i64).contains(&v) {
            Ok(MaxPieces(v as u16))
        } else {
            Err(format!(
                "{v} is not a piece cap: a decomposition has from 1 to {} pieces",
                Self::MAX
            ))
        }
    }

    /// The cap.
    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

/// How far an object's convex pieces may bulge beyond it: a length in
/// metres (`0.05`), or a fraction of the object's diagonal written as a
/// percentage (`"2%"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Concavity {
    /// World units (metres), at the largest scale the object is placed
    /// with.
    Metres(f64),
    /// A fraction of the diagonal of the object's box (0.02 for `2%`).
    Diagonal(f64),
}

impl Concavity {
    /// The bound in the mesh's own units, for a mesh whose box has this
    /// `diagonal` and whose unit is at most `scale` metres long.
    pub fn local(self, diagonal: f64, scale: f64) -> f64 {
        match self {
            Concavity::Metres(m) => m / scale.max(f64::MIN_POSITIVE),
            Concavity::Diagonal(f) => f * diagonal,
        }
    }

    /// Bits that identify the bound (for hashing settings).
    pub fn key(self) -> (u8, u64) {
        match self {
            Concavity::Metres(m) => (0, m.to_bits()),
            Concavity::Diagonal(f) => (1, f.to_bits()),
        }
    }
}

impl FromStr for Concavity {
    type Err = String;
    fn from_str(s: &str) -> Result<Concavity, String> {
        let t = s.trim();
        let bad = || {
            format!(
                "{s:?} is not a concavity bound: a length in metres (0.05) or a percentage of the object's diagonal (\"2%\"), positive"
            )
        };
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| bad())?;
            if v.is_finite() && v > 0.0 && v <= 100.0 {
                return Ok(Concavity::Diagonal(v / 100.0));
            }
            return Err(bad());
        }
        let v: f64 = t.parse().map_err(|_| bad())?;
        if v.is_finite() && v > 0.0 {
            Ok(Concavity::Metres(v))
        } else {
            Err(bad())
        }
    }
}

impl fmt::Display for Concavity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Concavity::Metres(m) => m.fmt(f),
            Concavity::Diagonal(x) => write!(f, "\"{}%\"", x * 100.0),
        }
    }
}

/// `kiln.toml` writes a bound as a number (metres) or a string (`"2%"`).
impl<'de> serde::Deserialize<'de> for Concavity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Concavity, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(v) => v.to_string().parse(),
            Raw::Text(t) => t.parse(),
        }
        .map_err(serde::de::Error::custom)
    }
}

macro_rules! parse_and_show {
    ($t:ty, $raw:ty, $what:literal) => {
        impl TryFrom<$raw> for $t {
            type Error = String;
            fn try_from(v: $raw) -> Result<$t, String> {
                <$t>::new(v)
            }
        }
        impl FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<$t, String> {
                let v: $raw = s
                    .trim()
                    .parse()
                    .map_err(|_| format!("{s:?} is not {}", $what))?;
                <$t>::new(v)
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.get().fmt(f)
            }
        }
    };
}

parse_and_show!(MaxPlanes, i64, "a whole number");
parse_and_show!(FaceBudget, i64, "a whole number");
parse_and_show!(VolumeFraction, f64, "a number");
parse_and_show!(Metres, f64, "a number");
parse_and_show!(MaxPieces, i64, "a whole number");

/// The tree over a triangle mesh's triangles, by name (`aabb` or
/// `sphere`): the one spelling of [`TreeKind`] in files and flags.
pub fn parse_tree(s: &str) -> Result<TreeKind, String> {
    match s {
        "aabb" => Ok(TreeKind::Aabb),
        "sphere" => Ok(TreeKind::Sphere),
        _ => Err(format!("{s:?} is not a tree kind: aabb or sphere")),
    }
}

/// [`TreeKind`] read by serde through [`parse_tree`].
pub(crate) fn tree_kind<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<TreeKind>, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    parse_tree(&s).map(Some).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked_with_one_wording() {
        assert_eq!(MaxPlanes::new(6).unwrap().get(), 6);
        assert_eq!("256".parse::<MaxPlanes>().unwrap().get(), 256);
        let e = "5".parse::<MaxPlanes>().unwrap_err();
        assert_eq!(e, MaxPlanes::new(5).unwrap_err());
        assert!(e.contains("from 6 to 256"), "{e}");
        assert!("257".parse::<MaxPlanes>().is_err());
        assert!(
            "x".parse::<MaxPlanes>()
                .unwrap_err()
                .contains("whole number")
        );
        assert!(FaceBudget::new(3).is_err() && FaceBudget::new(4).is_ok());
        assert!(FaceBudget::new(65_537).is_err());
        assert!(VolumeFraction::new(1.0).is_err() && VolumeFraction::new(0.0).is_ok());
        assert!(VolumeFraction::new(f64::NAN).is_err());
        assert!(Metres::new(0.0).is_err() && Metres::new(f64::INFINITY).is_err());
        assert_eq!(Metres::new(0.05).unwrap().to_string(), "0.05");
        assert_eq!(parse_tree("sphere"), Ok(TreeKind::Sphere));
        assert!(parse_tree("obb").is_err());
        assert_eq!("0.05".parse::<Concavity>(), Ok(Concavity::Metres(0.05)));
        assert_eq!(" 2 % ".parse::<Concavity>(), Ok(Concavity::Diagonal(0.02)));
        for bad in ["0", "-1", "0%", "101%", "x", "inf", "NaN%"] {
            let e = bad.parse::<Concavity>().unwrap_err();
            assert!(e.contains("concavity bound"), "{bad}: {e}");
        }
        assert_eq!(Concavity::Diagonal(0.02).to_string(), "\"2%\"");
        assert_eq!(Concavity::Diagonal(0.5).local(3.0, 10.0), 1.5);
        assert_eq!(Concavity::Metres(0.5).local(3.0, 10.0), 0.05);
        assert!(MaxPieces::new(0).is_err() && MaxPieces::new(1024).is_ok());
        assert!(
            "1025"
                .parse::<MaxPieces>()
                .unwrap_err()
                .contains("from 1 to 1024")
        );
    }
}
