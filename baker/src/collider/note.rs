//! What the build tells a placement's rule and the bake report, as typed
//! values: each builder returns what it did, and the text is made once,
//! here ([`std::fmt::Display`]), when the rule or the report is written.
//! The rendered text is archived (an object's rule), so it must not
//! change for the same input.

use super::bsp::surface::Fidelity;
use std::fmt;

/// One step of making a concave collider, in the order done.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Vertices closer than a hair welded (counts before and after).
    Welded {
        /// Vertices before and after.
        vertices: (usize, usize),
        /// Triangles before and after.
        faces: (usize, usize),
    },
    /// Edges shared by more than two triangles split, which closed the
    /// surface.
    PinchedEdgesSplit,
    /// A closed surface wound inside out, turned.
    TurnedOutward,
    /// An open surface remeshed on a voxel grid.
    Remeshed {
        /// Grid cells along the longest side.
        resolution: u32,
        /// Triangles of the remeshed surface.
        faces: usize,
        /// Pinched edges left (`None`: the surface is not closed).
        pinched: Option<usize>,
    },
    /// Simplified to this many triangles.
    Simplified {
        /// Triangles after.
        faces: usize,
    },
    /// Edges where the closed surface touches itself.
    Pinched {
        /// How many.
        edges: usize,
    },
    /// The convex hull, the collider of last resort, and why.
    ConvexHull {
        /// Why the surface could not be kept.
        why: &'static str,
    },
    /// A hull with more faces than the plane cap, capped.
    Capped(HullCap),
    /// The object's tolerance relaxed (doubled, up to four times), and why.
    Relaxed {
        /// What was wrong at the tolerance before.
        why: Relaxed,
        /// The tolerance now.
        tolerance: f64,
    },
}

/// Why a collider's tolerance was relaxed.
#[derive(Clone, Debug, PartialEq)]
pub enum Relaxed {
    /// The collider had more triangles than the render mesh (or the face
    /// budget).
    TooManyFaces {
        /// The tolerance tried.
        tolerance: f64,
        /// Its collider's triangles.
        faces: usize,
        /// The render mesh's triangles.
        render_faces: usize,
    },
    /// The BSP tree of the collider was too large.
    BspTooLarge {
        /// The tolerance tried.
        tolerance: f64,
        /// The BSP builder's error.
        error: String,
    },
}

/// A convex hull capped to fewer planes than it has faces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HullCap {
    /// The hull's faces.
    pub faces: usize,
    /// Planes kept.
    pub planes: usize,
    /// How far the capped polytope reaches beyond the hull (m).
    pub reach: f64,
}

/// What a placement's rule says after the classifier's reason: how its
/// shape was built.
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// Placed with a non-uniform scale or shear, so the mesh's convex hull
    /// stands in for a primitive.
    HullInstead,
    /// A primitive fitted to the mesh, off by this much at most (m).
    Fit {
        /// The largest distance from a mesh vertex to the primitive.
        error: f64,
    },
    /// A convex hull capped to the plane budget.
    Capped(HullCap),
    /// Kept as a triangle mesh, and why.
    KeptAsTriangles(String),
    /// A concave solid's low-poly surface, measured, with its BSP tree or
    /// as a polytope.
    Surface {
        /// How close it is to the render mesh, and the steps that made it.
        fidelity: Fidelity,
        /// The solid built from it.
        tree: Tree,
    },
}

/// The solid a concave collider became.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tree {
    /// A BSP tree.
    Bsp {
        /// Nodes.
        nodes: usize,
        /// Bevel-plane nodes among them.
        bevel: u32,
        /// Depth.
        depth: usize,
    },
    /// The collider came out convex: its hull as a polytope.
    Polytope,
}

/// Steps as a comma-separated list.
pub struct Steps<'a>(pub &'a [Step]);

impl fmt::Display for Steps<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, s) in self.0.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

impl fmt::Display for HullCap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "hull of {} faces capped to {} planes, reaching up to {:.4} m beyond it",
            self.faces, self.planes, self.reach
        )
    }
}

impl fmt::Display for Relaxed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Relaxed::TooManyFaces {
                tolerance,
                faces,
                render_faces,
            } => write!(
                f,
                "at tolerance {tolerance} the collider has {faces} faces, more than the render mesh's {render_faces}"
            ),
            Relaxed::BspTooLarge { tolerance, error } => {
                write!(f, "at tolerance {tolerance} {error}")
            }
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Welded { vertices, faces } => write!(
                f,
                "welded ({} → {} vertices, {} → {} faces)",
                vertices.0, vertices.1, faces.0, faces.1
            ),
            Step::PinchedEdgesSplit => f.write_str("pinched edges split"),
            Step::TurnedOutward => f.write_str("turned outward"),
            Step::Remeshed {
                resolution,
                faces,
                pinched,
            } => {
                write!(f, "remeshed at {resolution}³ ({faces} faces")?;
                match pinched {
                    None => f.write_str(", not closed)"),
                    Some(0) => f.write_str(")"),
                    Some(p) => write!(f, ", {p} pinched edges)"),
                }
            }
            Step::Simplified { faces } => write!(f, "simplified to {faces} faces"),
            Step::Pinched { edges } => {
                write!(
                    f,
                    "{edges} pinched edges (closed, but touching itself there)"
                )
            }
            Step::ConvexHull { why } => write!(f, "convex hull ({why})"),
            Step::Capped(c) => write!(f, "{c}"),
            Step::Relaxed { why, tolerance } => {
                write!(f, "{why}; tolerance relaxed to {tolerance}")
            }
        }
    }
}

impl serde::Serialize for Step {
    /// As its text: the report's JSON lists steps as sentences.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tree::Bsp {
                nodes,
                bevel,
                depth,
            } => write!(f, "bsp of {nodes} nodes ({bevel} bevel), depth {depth}"),
            Tree::Polytope => f.write_str("the convex hull as a polytope"),
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::HullInstead => f.write_str(
                "placed with non-uniform scale or shear: the mesh's convex hull instead",
            ),
            Note::Fit { error } => write!(f, "fit error {error:.4} m"),
            Note::Capped(c) => write!(f, "{c}"),
            Note::KeptAsTriangles(why) => write!(f, "{why}; kept as a triangle mesh"),
            Note::Surface { fidelity: c, tree } => {
                write!(
                    f,
                    "collider {} → {} faces, Hausdorff {:.4} m (render → collider {:.4}, collider → render {:.4}), mean {:.4} m, volume {:.1}%; {tree}",
                    c.faces_in,
                    c.faces_out,
                    c.hausdorff(),
                    c.render_to_collider,
                    c.collider_to_render,
                    c.mean,
                    c.volume_ratio * 100.0,
                )?;
                if !c.steps.is_empty() {
                    write!(f, "; {}", Steps(&c.steps))?;
                }
                Ok(())
            }
        }
    }
}

/// A rule with its notes, each in parentheses after it, as archived.
pub fn rule_with<'a>(rule: &str, notes: impl IntoIterator<Item = &'a Note>) -> String {
    use std::fmt::Write;
    let mut s = rule.to_string();
    for n in notes {
        let _ = write!(s, " ({n})");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rendered text, which archives store, reads as it always has.
    #[test]
    fn notes_render_as_archived() {
        let steps = vec![
            Step::Welded {
                vertices: (10, 8),
                faces: (12, 12),
            },
            Step::Remeshed {
                resolution: 64,
                faces: 900,
                pinched: Some(2),
            },
            Step::Simplified { faces: 128 },
            Step::Relaxed {
                why: Relaxed::TooManyFaces {
                    tolerance: 0.05,
                    faces: 20,
                    render_faces: 12,
                },
                tolerance: 0.1,
            },
        ];
        assert_eq!(
            Steps(&steps).to_string(),
            "welded (10 → 8 vertices, 12 → 12 faces), remeshed at 64³ (900 faces, 2 pinched edges), simplified to 128 faces, at tolerance 0.05 the collider has 20 faces, more than the render mesh's 12; tolerance relaxed to 0.1"
        );
        let fidelity = Fidelity {
            faces_in: 12,
            faces_out: 128,
            render_to_collider: 0.01,
            collider_to_render: 0.02,
            mean: 0.005,
            volume_ratio: 0.985,
            steps: vec![Step::TurnedOutward],
        };
        let notes = [
            Note::HullInstead,
            Note::Surface {
                fidelity,
                tree: Tree::Bsp {
                    nodes: 40,
                    bevel: 3,
                    depth: 9,
                },
            },
        ];
        assert_eq!(
            rule_with("auto: closed", &notes),
            "auto: closed (placed with non-uniform scale or shear: the mesh's convex hull instead) (collider 12 → 128 faces, Hausdorff 0.0200 m (render → collider 0.0100, collider → render 0.0200), mean 0.0050 m, volume 98.5%; bsp of 40 nodes (3 bevel), depth 9; turned outward)"
        );
        assert_eq!(
            Note::KeptAsTriangles("open".into()).to_string(),
            "open; kept as a triangle mesh"
        );
    }
}
