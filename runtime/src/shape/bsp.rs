//! Queries on a solid-leaf BSP tree ([`kiln_formats::bsp`]).
//!
//! Points descend the tree; rays clip a segment down it (Thibault and
//! Naylor 1987): the first solid leaf a piece of the segment reaches gives
//! the hit, and the plane that last clipped that piece its normal. Spheres
//! use dynamic plane shifting (Melax, "Dynamic Plane Shifting BSP
//! Traversal", GI 2000): each plane is moved by the radius towards the side
//! being entered (`d + r` on the solid side, `d − r` on the other), so a
//! sphere is treated as its centre against every cell grown plane by
//! plane. The grown cells contain the exact Minkowski sums, so no contact
//! is ever missed; near edges and corners where the grown planes overshoot
//! the rounded sum, contact is reported early (the bevel planes the baker
//! adds bound how much; see `baker/src/build/bsp.rs`). Under a non-uniform
//! placement the world sphere is an ellipsoid in local space, and each
//! plane is shifted by the ellipsoid's exact support along its normal,
//! `r·|Lᵀn|` (`L` local-from-world), so the answer is the same as in world
//! space.
//!
//! Verification guarantees children come after their parents and the tree
//! is at most [`kiln_formats::bsp::MAX_DEPTH`] deep, so the recursion ends.

use super::{LocalRayHit, ShapeContact};
use crate::geom::sphere_triangle::Contact;
use crate::instance::Placement;
use glam::{DVec3, Vec3};
use kiln_formats::bsp::{ArchivedBsp, BEVEL, EMPTY, SOLID};

/// The plane a piece of segment entered its cell through: outward normal
/// of the cell (local) and the plane's index.
type Entry = Option<(DVec3, u32)>;

/// A BSP shape ready to answer.
#[derive(Clone, Copy)]
pub(crate) struct BspView<'a>(pub &'a ArchivedBsp);

/// `{t ∈ [t0, t1] : c + t·k ≤ 0}`, if not empty.
#[inline]
fn clip_le(c: f64, k: f64, t0: f64, t1: f64) -> Option<(f64, f64)> {
    if k == 0.0 {
        return (c <= 0.0).then_some((t0, t1));
    }
    let tc = -c / k;
    if k > 0.0 {
        let b = t1.min(tc);
        (b >= t0).then_some((t0, b))
    } else {
        let a = t0.max(tc);
        (a <= t1).then_some((a, t1))
    }
}

impl<'a> BspView<'a> {
    /// Plane `k` (a node's plane field, bevel bit ignored): unit normal
    /// and offset.
    #[inline]
    fn plane(&self, k: u32) -> (DVec3, f64) {
        let p = &self.0.planes[(k & !BEVEL) as usize];
        let f = |i: usize| f64::from(p[i].to_native());
        (DVec3::new(f(0), f(1), f(2)), f(3))
    }

    /// Node `i`: plane, front child, back child.
    #[inline]
    fn node(&self, i: u32) -> (u32, u32, u32) {
        let n = &self.0.nodes[i as usize];
        (n.plane.to_native(), n.front.to_native(), n.back.to_native())
    }

    /// Whether the local point `p` is in the solid (points on a face count
    /// as inside).
    pub fn contains_local(&self, p: DVec3) -> bool {
        let mut at = 0u32;
        loop {
            match at {
                SOLID => return true,
                EMPTY => return false,
                _ => {
                    let (k, front, back) = self.node(at);
                    if k & BEVEL != 0 {
                        at = back;
                        continue;
                    }
                    let (n, d) = self.plane(k);
                    at = if n.dot(p) - d > 0.0 { front } else { back };
                }
            }
        }
    }

    /// The first `t ∈ [t0, t1]` at which `o + t·d` is in a solid cell whose
    /// planes are moved out by `shift(n)`, with the plane it entered
    /// through (`None`: it started inside). Of the two (overlapping, when
    /// shifted) pieces a plane cuts the segment into, the one holding the
    /// segment's start is walked first: a hit there ends the search unless
    /// the other piece starts before it, and shortens that piece if so.
    /// (Melax walks the solid side first; near-first finds the same first
    /// contact and lets a ray stop at its first solid cell.) `RAY`: no
    /// shift, so bevel nodes are stepped over.
    #[allow(clippy::too_many_arguments)]
    fn first_solid<const RAY: bool, F: Fn(DVec3) -> f64>(
        &self,
        at: u32,
        o: DVec3,
        d: DVec3,
        t0: f64,
        t1: f64,
        entry: Entry,
        shift: &F,
    ) -> Option<(f64, Entry)> {
        match at {
            SOLID => return Some((t0, entry)),
            EMPTY => return None,
            _ => {}
        }
        let (k, front, back) = self.node(at);
        if RAY && k & BEVEL != 0 {
            // without a radius a bevel cannot cut the piece that got here
            return self.first_solid::<RAY, F>(back, o, d, t0, t1, entry, shift);
        }
        let (n, dd) = self.plane(k);
        let r = shift(n);
        let (so, sd) = (n.dot(o) - dd, n.dot(d));
        // the solid side, grown by r: s(t) ≤ r; the other, s(t) ≥ −r
        let under = clip_le(so - r, sd, t0, t1);
        let over = clip_le(-(so + r), -sd, t0, t1);
        let pieces = [(under, back, n), (over, front, -n)];
        // near first: the piece that starts earlier (ties: the solid side)
        let order = match (under, over) {
            (Some((a, _)), Some((b, _))) if b < a => [1, 0],
            _ => [0, 1],
        };
        let mut best: Option<(f64, Entry)> = None;
        for i in order {
            let (piece, child, normal) = pieces[i];
            let Some((a, mut b)) = piece else {
                continue;
            };
            if let Some((t, _)) = best {
                if a >= t {
                    continue;
                }
                b = b.min(t);
            }
            let e = if a > t0 {
                Some((normal, k & !BEVEL))
            } else {
                entry
            };
            if let Some(h) = self.first_solid::<RAY, F>(child, o, d, a, b, e, shift)
                && best.is_none_or(|b| h.0 < b.0)
            {
                best = Some(h);
            }
        }
        best
    }

    /// Whether a solid cell, its planes moved out by `shift(n)` in local
    /// units, holds the local point `c` (the touch test of a sphere).
    fn reaches_solid<F: Fn(DVec3) -> f64>(&self, at: u32, c: DVec3, shift: &F) -> bool {
        match at {
            SOLID => return true,
            EMPTY => return false,
            _ => {}
        }
        let (k, front, back) = self.node(at);
        let (n, d) = self.plane(k);
        let s = n.dot(c) - d;
        let r = shift(n);
        (s <= r && self.reaches_solid(back, c, shift))
            || (s >= -r && self.reaches_solid(front, c, shift))
    }

    /// A ray in local space (any placement: rays are affine-invariant).
    pub fn raycast(&self, o: Vec3, d: Vec3, t_max: f32) -> Option<LocalRayHit> {
        let (t, entry) = self.first_solid::<true, _>(
            0,
            o.as_dvec3(),
            d.as_dvec3(),
            0.0,
            f64::from(t_max),
            None,
            &|_| 0.0,
        )?;
        Some(match entry {
            None => LocalRayHit {
                t: 0.0,
                normal: -d,
                feature: 0, // not reported: the ray starts inside
                inside: true,
            },
            Some((n, k)) => LocalRayHit {
                t: t as f32,
                normal: n.as_vec3(),
                feature: k,
                inside: false,
            },
        })
    }

    /// Whether the world point `p` is inside.
    pub fn contains(&self, place: &Placement, p: Vec3) -> bool {
        self.contains_local(place.local_point64(p.as_dvec3()))
    }

    /// The smallest, over the solid cells the centre reaches with planes
    /// shifted by `r`, of the cell's largest signed world distance to its
    /// planes (negative inside), with that plane's local outward normal.
    fn nearest<F: Fn(DVec3) -> f64>(
        &self,
        at: u32,
        c: DVec3,
        r: f64,
        scale: &F,
        path: (f64, Entry),
        best: &mut (f64, Entry),
    ) {
        match at {
            SOLID => {
                if path.0 < best.0 {
                    *best = path;
                }
                return;
            }
            EMPTY => return,
            _ => {}
        }
        let (k, front, back) = self.node(at);
        let (n, d) = self.plane(k);
        let w = (n.dot(c) - d) / scale(n);
        // the solid side: outside by w; the other: outside by −w
        for (side, out, normal) in [(back, w, n), (front, -w, -n)] {
            if out <= r && out.max(path.0) < best.0 {
                let p = if out > path.0 {
                    (out, Some((normal, k & !BEVEL)))
                } else {
                    path
                };
                self.nearest(side, c, r, scale, p, best);
            }
        }
    }

    /// The world length of the world normal of local normal `n` (`|Lᵀn|`)
    /// and that unit world normal, for `place`.
    fn world_normal(place: &Placement, n: DVec3) -> (f64, DVec3) {
        let l = place.local_matrix();
        let m = DVec3::new(
            l[0] * n.x + l[4] * n.y + l[8] * n.z,
            l[1] * n.x + l[5] * n.y + l[9] * n.z,
            l[2] * n.x + l[6] * n.y + l[10] * n.z,
        );
        let len = m.length();
        (len, m / len)
    }

    /// `|Lᵀn|` for every normal: under a similarity a constant (local
    /// length per world length, grown by twice the 1e-5 to which a
    /// placement counts as one, so the shift never falls short), else
    /// computed per plane.
    fn shift_scale<'p>(place: &'p Placement<'_>) -> impl Fn(DVec3) -> f64 + 'p {
        let uniform = place.similarity().map(|s| f64::from(s) * (1.0 + 2e-5));
        move |n| uniform.unwrap_or_else(|| Self::world_normal(place, n).0)
    }

    /// Closest point of the plane-shifted solid to the world sphere
    /// (`c`, `r`), if it touches: distance is the largest distance of the
    /// centre outside the planes of the nearest cell it reaches (never more
    /// than the exact distance; negative inside, the depth).
    pub fn closest(&self, place: &Placement, c: Vec3, r: f32) -> Option<ShapeContact> {
        let cw = c.as_dvec3();
        let lc = place.local_point64(cw);
        let r = f64::from(r);
        let scale = Self::shift_scale(place);
        let mut best = (f64::INFINITY, None);
        self.nearest(0, lc, r, &scale, (f64::NEG_INFINITY, None), &mut best);
        let (dist, Some((n, k))) = best else {
            return None;
        };
        if dist > r {
            return None;
        }
        let (_, nw) = Self::world_normal(place, n);
        Some(ShapeContact {
            contact: Contact {
                t: 0.0,
                point: cw - nw * dist,
                normal: nw,
            },
            distance: dist.abs(),
            feature: k,
            inside: dist < 0.0,
        })
    }

    /// Whether the world sphere touches the plane-shifted solid (the same
    /// answer as [`Self::closest`], stopping at the first solid cell).
    pub fn touches(&self, place: &Placement, c: Vec3, r: f32) -> bool {
        let lc = place.local_point64(c.as_dvec3());
        let r = f64::from(r);
        let scale = Self::shift_scale(place);
        self.reaches_solid(0, lc, &|n| r * scale(n))
    }

    /// First contact of the sweep at a time `≤ limit`, by plane shifting.
    pub fn sweep(&self, place: &Placement, s: &crate::Sweep, limit: f64) -> Option<(Contact, u32)> {
        let (c, d, r) = (s.center.as_dvec3(), s.dir.as_dvec3(), f64::from(s.radius));
        let (lc, ld) = (place.local_point64(c), place.local_vector64(d));
        let scale = Self::shift_scale(place);
        let shift = |n: DVec3| r * scale(n);
        let (t, entry) = self.first_solid::<false, _>(0, lc, ld, 0.0, limit, None, &shift)?;
        match entry {
            Some((n, k)) => {
                let (_, nw) = Self::world_normal(place, n);
                Some((
                    Contact {
                        t,
                        point: c + d * t - nw * r,
                        normal: nw,
                    },
                    k,
                ))
            }
            // starts in contact: the way out of the nearest cell
            None => {
                let h = self.closest(place, s.center, s.radius)?;
                Some((h.contact, h.feature))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::clip_le;

    #[test]
    fn clipping_keeps_the_part_on_the_negative_side() {
        assert_eq!(clip_le(-1.0, 1.0, 0.0, 5.0), Some((0.0, 1.0)));
        assert_eq!(clip_le(-1.0, -1.0, 0.0, 5.0), Some((0.0, 5.0)));
        assert_eq!(clip_le(1.0, -1.0, 0.0, 5.0), Some((1.0, 5.0)));
        assert_eq!(clip_le(1.0, 1.0, 0.0, 5.0), None);
        assert_eq!(clip_le(1.0, 0.0, 0.0, 5.0), None);
        assert_eq!(clip_le(0.0, 0.0, 0.0, 5.0), Some((0.0, 5.0)));
    }
}
