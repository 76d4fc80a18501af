//! Corrupt and hostile archives: truncation at every 1/64 of the file, and
//! 10k random bit flips / byte overwrites. `open` must return an error, or
//! the queries must answer without panicking. Each damaged file is tried
//! twice: as is (the body checksum catches it) and "hostile", with the
//! checksum recomputed so that rkyv's validation and our verify must stand
//! on their own.

use glam::Vec3;
use kiln_baker::{BakeSettings, Scene, bake_file, bake_scene, scene::SceneMesh};
use kiln_formats::level::ArchivedTopNodes;
use kiln_formats::tri_mesh::ArchivedMeshTree;
use kiln_formats::{HEADER_LEN, header::body_hash};
use kiln_runtime::Level;
use kiln_runtime::{Filter, Ray};
use kiln_tests::SphereQueries;
use kiln_tests::{Rng, levels_dir};

/// A baked archive to damage: the shape collection with one torus a BSP
/// tree and the other a triangle mesh (every family but the capsule) if
/// the shared levels are present, else a generated one.
fn archive() -> Vec<u8> {
    if let Some(dir) = levels_dir() {
        let mut settings = BakeSettings::default();
        settings.rules = vec![kiln_baker::config::Rule::collider(
            "Torus.001",
            kiln_baker::config::ColliderName::Mesh,
        )];
        return bake_file(&dir.join("shape_collection.glb"), &settings)
            .unwrap()
            .bytes;
    }
    let mut pos = Vec::new();
    let mut tris = Vec::new();
    for y in 0..20u32 {
        for x in 0..20u32 {
            pos.push([x as f32, ((x * y) % 7) as f32 * 0.1, y as f32]);
            if x > 0 && y > 0 {
                let i = y * 20 + x;
                tris.push([i - 21, i - 20, i]);
                tris.push([i - 21, i, i - 1]);
            }
        }
    }
    // two objects, so the top-level tree has an inner node to damage
    let beside: Vec<[f32; 3]> = pos.iter().map(|p| [p[0] + 30.0, p[1], p[2]]).collect();
    bake_scene(
        &Scene::from_meshes(vec![
            SceneMesh::new("grid", pos, &tris),
            SceneMesh::new("grid beside", beside, &tris),
        ]),
        &BakeSettings::default(),
    )
    .bytes
}

/// Fixes the header's body hash so the damage reaches the validator.
fn rehash(bytes: &mut [u8]) {
    if bytes.len() >= HEADER_LEN {
        let h = body_hash(&bytes[HEADER_LEN..]);
        bytes[48..56].copy_from_slice(&h.to_le_bytes());
    }
}

/// Opens the bytes; if that works, queries must not panic.
fn exercise(bytes: &[u8], rng: &mut Rng) -> bool {
    match Level::from_bytes(bytes) {
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
        Ok(level) => {
            for _ in 0..50 {
                let o = Vec3::new(
                    rng.range(-10.0, 10.0),
                    rng.range(-10.0, 10.0),
                    rng.range(-10.0, 10.0),
                );
                let _ = level.raycast(&Ray::new(o, rng.unit32(), 100.0), &Filter::ALL);
                let _ = level.raycast_any(&Ray::new(o, rng.unit32(), 100.0), &Filter::ALL);
                let r = rng.range(0.0, 2.0);
                let _ = level.sphere_overlaps(o, r);
                let _ = level.sphere_sweep(o, r, rng.unit32(), 10.0);
                let _ = level.contains_point(o, &Filter::ALL);
            }
            let _ = baker_tools::inspect::inspect_level(&level);
            let _ = kiln_baker::export::world_objects(level.archive());
            true
        }
    }
}

#[test]
fn truncation_at_every_64th_of_the_file_is_an_error() {
    let good = archive();
    let mut rng = Rng::new(1);
    for k in 0..64 {
        let cut = good.len() * k / 64;
        let mut bytes = good[..cut].to_vec();
        assert!(
            !exercise(&bytes, &mut rng),
            "truncated at {cut} of {} opened",
            good.len()
        );
        // a hostile header claiming the shorter length
        if bytes.len() >= HEADER_LEN {
            let body = (bytes.len() - HEADER_LEN) as u64;
            bytes[40..48].copy_from_slice(&body.to_le_bytes());
            rehash(&mut bytes);
            exercise(&bytes, &mut rng);
        }
    }
}

#[test]
fn random_bit_flips_and_overwrites_never_panic() {
    let good = archive();
    let mut rng = Rng::new(2);
    let (mut caught_by_checksum, mut rejected, mut opened) = (0, 0, 0);
    for i in 0..10_000 {
        let mut bytes = good.clone();
        let flips = 1 + rng.below(4);
        for _ in 0..flips {
            let at = rng.below(bytes.len());
            if i % 2 == 0 {
                bytes[at] ^= 1 << rng.below(8);
            } else {
                bytes[at] = rng.below(256) as u8;
            }
        }
        if bytes == good {
            continue;
        }
        if !exercise(&bytes, &mut rng) {
            caught_by_checksum += 1;
        }
        rehash(&mut bytes);
        if exercise(&bytes, &mut rng) {
            opened += 1;
        } else {
            rejected += 1;
        }
    }
    eprintln!(
        "10k damaged archives: {caught_by_checksum} rejected with the checksum; hostile (rehashed): {rejected} rejected, {opened} opened and queried safely"
    );
    assert!(caught_by_checksum > 9_900);
    assert!(rejected > 0 && opened > 0, "both outcomes are exercised");
}

#[test]
fn hostile_tree_links_are_rejected_not_followed() {
    // Find the exact byte offsets of the links of the top-level root and
    // of the first mesh root, then make each name itself as its first
    // inner child (a loop if a walker followed it), or use one slot. The checksum is
    // fixed up, so only validation stands between the archive and the
    // queries.
    let good = archive();
    let aligned = aligned(&good);
    let (_, level) = kiln_formats::access_file(&aligned).unwrap();
    let base = aligned.as_ptr() as usize;
    let boxes = level
        .colliders
        .iter()
        .find_map(|s| match &s.tri_mesh()?.tree {
            ArchivedMeshTree::Boxes(b) if !b.is_empty() => Some(b),
            _ => None,
        })
        .expect("a mesh with inner nodes");
    // a level of a few objects keeps its top-level tree in float nodes
    let ArchivedTopNodes::Floats(top) = &level.top.nodes else {
        panic!("a small level's top-level tree has float nodes")
    };
    let top = top
        .first()
        .expect("several objects: a top-level inner node");
    let at = |r: &rkyv::rend::u32_le| r as *const _ as usize - base;
    // a float node's child box with a NaN corner, and with its lower
    // corner above its upper one
    let x_lo = &top.lo[0][0];
    let x_at = x_lo as *const _ as usize - base;
    let above = (top.hi[0][0].to_native() + 1.0).to_le_bytes();
    // the first inner child set to the node itself, its leaf bits kept
    // (four in a top-level node's word, eight in a mesh box node's)
    let own = |r: &rkyv::rend::u32_le| (r.to_native() & 0xf).to_le_bytes();
    let own_wide = |r: &rkyv::rend::u32_le| (r.to_native() & 0xff).to_le_bytes();
    // one used slot, where a node has two to four
    let one_slot = (top.links[1].to_native() & !3).to_le_bytes();
    assert_rejected(
        &good,
        vec![
            (
                at(&boxes[0].links[0]),
                own_wide(&boxes[0].links[0]),
                "node 0: children start at node 0 and leaf 0, expected 1 and 0",
            ),
            (
                at(&top.links[0]),
                own(&top.links[0]),
                "top-level tree: node 0: children start at node 0",
            ),
            (
                at(&top.links[1]),
                one_slot,
                "top-level tree: node 0: fewer than two child slots used",
            ),
            (
                x_at,
                f32::NAN.to_le_bytes(),
                "top-level tree: node 0: box [NaN,",
            ),
            (x_at, above, "top-level tree: node 0: box"),
        ],
    );
}

/// Damaged leaves: a corner offset below vertex 0 or past the last, a
/// corner `a` placed past the last vertex, a listing flag on a leaf its
/// table does not list, a delta beside a listed second id, a zero delta on
/// a pair whose second id is not listed, a second-id entry naming a leaf
/// not flagged, and entries out of order. The mesh is a grid whose lower
/// triangles come before its upper ones but in the last row, so a cell's
/// two ids are n(n − 1) apart: a delta on the 12² grid, listed on the 17²
/// one and on the 260² one, which is large enough (67,600 leaves) to be
/// scanned in parallel chunks; the last row's pairs are one apart.
#[test]
fn hostile_leaves_are_rejected_by_verification() {
    for n in [12, 17, 260] {
        hostile_leaves_in_a_grid(n);
    }
}

/// The four bytes of a leaf from its first-id field: the id offset, the
/// bits and the delta.
fn id_bits_delta(l: &kiln_formats::tri_mesh::ArchivedLeaf, bits: u8, delta: u8) -> [u8; 4] {
    let id = l.id.to_native().to_le_bytes();
    [id[0], id[1], bits, delta]
}

fn hostile_leaves_in_a_grid(n: u32) {
    use kiln_formats::tri_mesh::{A_LISTED, ID_LISTED, LEAF_CHUNK};
    let pos: Vec<[f32; 3]> = (0..=n)
        .flat_map(|y| (0..=n).map(move |x| [x as f32, 0.0, y as f32]))
        .collect();
    let v = |x: u32, y: u32| y * (n + 1) + x;
    let cells = || (0..n).flat_map(|y| (0..n).map(move |x| (x, y)));
    let lower = |(x, y): (u32, u32)| [v(x, y), v(x + 1, y + 1), v(x + 1, y)];
    let upper = |(x, y): (u32, u32)| [v(x, y), v(x, y + 1), v(x + 1, y + 1)];
    // all rows but the last: every lower triangle, then every upper one
    // (a cell's ids n(n - 1) apart); the last row's cells pair by pair
    // (ids one apart)
    let block = || cells().filter(|&(_, y)| y + 1 < n);
    let mut tris: Vec<[u32; 3]> = block().map(lower).collect();
    tris.extend(block().map(upper));
    tris.extend(
        cells()
            .filter(|&(_, y)| y + 1 == n)
            .flat_map(|c| [lower(c), upper(c)]),
    );
    let good = one_mesh("halves", pos.clone(), &tris);
    let aligned = aligned(&good);
    let (_, level) = kiln_formats::access_file(&aligned).unwrap();
    let base = aligned.as_ptr() as usize;
    let at = |p: *const ()| p as usize - base;
    let m = level.colliders[0].tri_mesh().expect("a mesh");
    let listed = |l: &kiln_formats::tri_mesh::ArchivedLeaf| l.is_pair() && l.delta == 0;
    // a delta up to 255, listed beyond
    let apart = n * (n - 1);
    let listing = apart > 255;
    assert_eq!(m.second_ids.is_empty(), !listing, "{n}");
    assert!(listing || m.leaves.iter().any(|l| u32::from(l.delta) == apart));
    let plain = m.leaves.iter().position(|l| l.is_pair() && !listed(l));
    // damage the leaf nearest vertex 0 (an offset can reach below it) and
    // the one nearest the last vertex (an offset can reach past it)
    let nv = m.vertices.len() as u32;
    let corner = |l: usize| m.corners(l)[0];
    let placed = || (0..m.leaves.len()).filter(|&l| m.leaves[l].bits & A_LISTED == 0);
    let (low, high) = (
        placed().min_by_key(|&l| corner(l)).unwrap(),
        placed().max_by_key(|&l| corner(l)).unwrap(),
    );
    // offsets 0 and 1 as one little-endian word
    let word = |o0: i16, o1: i16| (u32::from(o0 as u16) | u32::from(o1 as u16) << 16).to_le_bytes();
    let (lo, hi) = (&m.leaves[low], &m.leaves[high]);
    let below = -(corner(low) as i16) - 1;
    let past = (nv - corner(high)) as i16;
    // corner `a` of the high leaf placed on the vertex count, offset 0 kept
    let high_base = m.bases[high / LEAF_CHUNK][0].to_native();
    let a_past = ((nv - high_base) as u16).to_le_bytes();
    let o0 = hi.offset[0].to_native().to_le_bytes();
    let (low_says, high_says) = (
        format!("leaf {low} uses vertex"),
        format!("leaf {high} uses vertex"),
    );
    let mut cases = vec![
        (
            at(std::ptr::from_ref(&lo.offset[0]).cast()),
            word(below, lo.offset[1].to_native()),
            low_says.as_str(),
        ),
        (
            at(std::ptr::from_ref(&hi.offset[0]).cast()),
            word(hi.offset[0].to_native(), past),
            high_says.as_str(),
        ),
        (
            at(std::ptr::from_ref(&hi.a).cast()),
            [a_past[0], a_past[1], o0[0], o0[1]],
            high_says.as_str(),
        ),
        // a corner flagged listed that no entry lists
        (
            at(std::ptr::from_ref(&lo.id).cast()),
            id_bits_delta(lo, lo.bits | A_LISTED, lo.delta),
            "listed-corner entry",
        ),
    ];
    // one base pair short: the length word after the vector's relative
    // pointer (rkyv's `ArchivedVec` layout)
    let runs = m.bases.len() as u32;
    let short_says = format!("need {runs} base pairs, {} stored", runs - 1);
    cases.push((
        at(std::ptr::from_ref(&m.bases).cast()) + 4,
        (runs - 1).to_le_bytes(),
        short_says.as_str(),
    ));
    // a listed corner past the last vertex, and listed corners out of order
    let far_says = m
        .listed_corners
        .first()
        .map(|e| format!("leaf {} uses vertex {nv}", e[0].to_native()));
    if let Some(says) = &far_says {
        let e = &m.listed_corners[0];
        cases.push((at(std::ptr::from_ref(&e[1]).cast()), nv.to_le_bytes(), says));
        if let Some(next) = m.listed_corners.get(1) {
            cases.push((
                at(std::ptr::from_ref(&e[0]).cast()),
                next[0].to_native().to_le_bytes(),
                "listed-corner entry 1 of",
            ));
        }
    }
    // a first id flagged listed that no entry lists
    let unlisted_id = (0..m.leaves.len())
        .find(|&l| m.leaves[l].bits & ID_LISTED == 0)
        .expect("a leaf with its id in its run's window");
    let ul = &m.leaves[unlisted_id];
    cases.push((
        at(std::ptr::from_ref(&ul.id).cast()),
        id_bits_delta(ul, ul.bits | ID_LISTED, ul.delta),
        "listed-id entry",
    ));
    let first_listed = m.second_ids.first().map(|e| e[0].to_native() as usize);
    if let Some(l) = first_listed {
        let ll = &m.leaves[l];
        cases.extend([
            // a delta beside a listed id: the entry names a leaf not flagged
            (
                at(std::ptr::from_ref(&ll.id).cast()),
                id_bits_delta(ll, ll.bits, 1),
                "second-id entry 0 of",
            ),
            // the first entry names the second's leaf: out of order
            (
                at(std::ptr::from_ref(&m.second_ids[0][0]).cast()),
                m.second_ids[1][0].to_native().to_le_bytes(),
                "second-id entry 1 of",
            ),
        ]);
    }
    if let Some(p) = plain {
        // a pair with a zero delta but no listed id
        let l = &m.leaves[p];
        cases.push((
            at(std::ptr::from_ref(&l.id).cast()),
            id_bits_delta(l, l.bits, 0),
            "does not name the next flagged leaf",
        ));
        if listing {
            // an entry naming a leaf that is not flagged
            cases.push((
                at(std::ptr::from_ref(&m.second_ids[0][0]).cast()),
                (p as u32).to_le_bytes(),
                "second-id entry 0 of",
            ));
        }
    }
    // the last row's pairs are plain, so the two cases above ran
    assert!(plain.is_some(), "{n}");
    assert_rejected(&good, cases);
    // the undamaged archive reports each triangle's own id, listed or not
    let level = Level::from_bytes(&good).unwrap();
    for (id, t) in tris.iter().enumerate() {
        let at = t.iter().map(|&i| Vec3::from(pos[i as usize])).sum::<Vec3>() / 3.0;
        let ray = Ray::new(at + Vec3::Y, -Vec3::Y, 2.0);
        let hit = level.raycast(&ray, &Filter::default()).expect("a hit");
        assert_eq!(hit.feature, Some(id as u32));
    }
}

/// `bytes` copied to 16-byte-aligned memory, as the archive reader needs.
fn aligned(bytes: &[u8]) -> rkyv::util::AlignedVec<16> {
    let mut a = rkyv::util::AlignedVec::<16>::with_capacity(bytes.len());
    a.extend_from_slice(bytes);
    a
}

/// The archive of one mesh baked as a triangle mesh.
fn one_mesh(name: &str, pos: Vec<[f32; 3]>, tris: &[[u32; 3]]) -> Vec<u8> {
    bake_scene(
        &Scene::from_meshes(vec![SceneMesh::new(name, pos, tris)]),
        &BakeSettings::default().all_meshes(),
    )
    .bytes
}

/// Byte offset in a vertex record of the first axis stored as f32.
fn f32_axis(v: &kiln_formats::vertices::ArchivedVertices) -> usize {
    let k = (0..3)
        .find(|&k| !v.axes[k].get().on_grid())
        .expect("a mesh with an axis stored as f32");
    usize::from(v.layout[k])
}

/// Damaged vertex grids and records: a grid whose step is negative, NaN,
/// or so large its last value is infinite, a record layout that is not the
/// one the axes give, a byte count that is not whole records, and on a
/// mesh with an f32 axis an infinite coordinate. Each must be rejected at
/// open, not decoded into a non-finite vertex or read out of bounds.
#[test]
fn hostile_vertex_grids_are_rejected_by_verification() {
    // x and z whole metres (grids), y arbitrary (f32)
    let n = 20u32;
    let pos: Vec<[f32; 3]> = (0..=n)
        .flat_map(|z| {
            (0..=n).map(move |x| [x as f32, (x as f32 * 0.3).sin() + z as f32 * 0.01, z as f32])
        })
        .collect();
    let v = |x: u32, z: u32| z * (n + 1) + x;
    let tris: Vec<[u32; 3]> = (0..n)
        .flat_map(|z| (0..n).map(move |x| (x, z)))
        .flat_map(|(x, z)| {
            [
                [v(x, z), v(x, z + 1), v(x + 1, z)],
                [v(x + 1, z), v(x, z + 1), v(x + 1, z + 1)],
            ]
        })
        .collect();
    let good = one_mesh("field", pos, &tris);
    let aligned = aligned(&good);
    let (_, level) = kiln_formats::access_file(&aligned).unwrap();
    let base = aligned.as_ptr() as usize;
    let at = |p: *const ()| p as usize - base;
    let m = level.colliders[0].tri_mesh().expect("a mesh");
    let vx = &m.vertices;
    assert!(vx.axes[0].get().on_grid() && vx.axes[2].get().on_grid());
    assert!(!vx.axes[1].get().on_grid());
    assert_eq!(vx.stride(), 8);
    let malformed = "vertex axes or record layout are malformed";
    let step = |k: usize| at(std::ptr::from_ref(&vx.axes[k].step).cast());
    let origin = |k: usize| at(std::ptr::from_ref(&vx.axes[k].origin).cast());
    let layout = at(vx.layout.as_ptr().cast());
    let [l0, l1, l2, l3] = vx.layout;
    let len = vx.data.len() as u32;
    let cases = vec![
        (step(0), (-1.0f32).to_le_bytes(), malformed),
        (step(2), f32::NAN.to_le_bytes(), malformed),
        // finite origin and step, but the last grid value overflows
        (step(0), (f32::MAX / 1000.0).to_le_bytes(), malformed),
        (origin(2), f32::INFINITY.to_le_bytes(), malformed),
        // a step on the f32 axis: a valid grid, but not the layout's
        (step(1), 1.0f32.to_le_bytes(), malformed),
        // x read where y is
        (layout, [l1, l0, l2, l3], malformed),
        // a record one byte shorter than the axes need
        (layout, [l0, l1, l2, l3 - 1], malformed),
        // the data's length (rkyv's u32 after the relative pointer) cut by one byte
        (
            at(std::ptr::from_ref(&vx.data).cast()) + 4,
            (len - 1).to_le_bytes(),
            malformed,
        ),
        (
            at(vx.data[..].as_ptr().cast()) + 5 * 8 + f32_axis(vx),
            f32::NEG_INFINITY.to_le_bytes(),
            "vertex 5 is not finite",
        ),
    ];
    assert_rejected(&good, cases);
}

/// Writes each case's four bytes at its offset into a copy of `good`,
/// fixes the checksum, and checks that opening fails saying `want`.
fn assert_rejected(good: &[u8], cases: Vec<(usize, [u8; 4], &str)>) {
    for (offset, value, want) in cases {
        let mut bytes = good.to_vec();
        bytes[offset..offset + 4].copy_from_slice(&value);
        rehash(&mut bytes);
        let err = Level::from_bytes(&bytes)
            .err()
            .unwrap_or_else(|| panic!("a hostile archive ({want}) opened"));
        assert!(err.to_string().contains(want), "{want}: {err}");
    }
}

/// An archive holding every shape family: the KHR physics fixture (box,
/// sphere, capsule, polytopes, a triangle mesh).
fn every_shape() -> Vec<u8> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/colliders/khr_physics.gltf");
    bake_file(&path, &BakeSettings::default()).unwrap().bytes
}

#[test]
fn hostile_shapes_are_rejected_by_verification() {
    use kiln_formats::ArchivedCollider;
    let good = every_shape();
    let aligned = aligned(&good);
    let (_, level) = kiln_formats::access_file(&aligned).unwrap();
    let base = aligned.as_ptr() as usize;
    let at = |p: *const ()| p as usize - base;
    // (byte offset, bytes to write, what the error must say)
    let mut cases: Vec<(usize, [u8; 4], &str)> = Vec::new();
    let (mut seen_poly, mut seen_box, mut seen_ball, mut seen_cap) = (false, false, false, false);
    for s in level.colliders.iter() {
        match s {
            ArchivedCollider::Polytope(p) if !seen_poly => {
                seen_poly = true;
                let nan = f32::NAN.to_le_bytes();
                cases.push((
                    at(p.planes[0].as_ptr().cast()),
                    5f32.to_le_bytes(),
                    "unit normal",
                ));
                cases.push((at(p.planes[1][3..].as_ptr().cast()), nan, "unit normal"));
                cases.push((
                    at(p.vertices[0].as_ptr().cast()),
                    1e6f32.to_le_bytes(),
                    "outside the box",
                ));
                // 16-bit entries: each case rewrites one and writes the
                // next back as it was
                let two = |a: u16, b: u16| {
                    let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
                    [a[0], a[1], b[0], b[1]]
                };
                cases.push((
                    at(std::ptr::from_ref(&p.face_vertices[0]).cast()),
                    two(9999, p.face_vertices[1].to_native()),
                    "a face uses vertex",
                ));
                cases.push((
                    at(std::ptr::from_ref(&p.face_starts[1]).cast()),
                    two(1, p.face_starts[2].to_native()),
                    "fewer than three",
                ));
                // a plane pulled inwards: the vertices stick out of it
                let d = p.planes[0][3].to_native() - 0.5;
                cases.push((
                    at(p.planes[0][3..].as_ptr().cast()),
                    d.to_le_bytes(),
                    "outside plane 0",
                ));
            }
            ArchivedCollider::Cuboid(c) if !seen_box => {
                seen_box = true;
                cases.push((
                    at(c.half_extents.as_ptr().cast()),
                    0f32.to_le_bytes(),
                    "cuboid half extent",
                ));
            }
            ArchivedCollider::Sphere(b) if !seen_ball => {
                seen_ball = true;
                cases.push((
                    at(std::ptr::from_ref(&b.radius).cast()),
                    (-1f32).to_le_bytes(),
                    "sphere radius",
                ));
                cases.push((
                    at(std::ptr::from_ref(&b.radius).cast()),
                    f32::INFINITY.to_le_bytes(),
                    "sphere radius",
                ));
            }
            ArchivedCollider::Capsule(c) if !seen_cap => {
                seen_cap = true;
                cases.push((
                    at(std::ptr::from_ref(&c.radius).cast()),
                    f32::NAN.to_le_bytes(),
                    "capsule radius",
                ));
                cases.push((
                    at(std::ptr::from_ref(&c.half_height).cast()),
                    (-2f32).to_le_bytes(),
                    "capsule half height",
                ));
            }
            _ => {}
        }
    }
    assert!(
        seen_poly && seen_box && seen_ball && seen_cap,
        "every family present"
    );
    // a sphere placed by a stretching transform
    let ball = level
        .instances
        .iter()
        .position(|i| {
            matches!(
                level.colliders[i.collider.to_native() as usize],
                ArchivedCollider::Sphere(_)
            )
        })
        .unwrap();
    // a placement scaled beyond 2^40, one moved to infinity, and one
    // marked affine (no rotation) whose table entry does not exist
    let inst = &level.instances[ball];
    assert!(
        level.affines.is_empty(),
        "the fixture places everything by similarities"
    );
    let q = &inst.rotation;
    cases.push((
        at(std::ptr::from_ref(&q[3]).cast()),
        1e30f32.to_le_bytes(),
        "placement is out of range",
    ));
    cases.push((
        at(std::ptr::from_ref(&inst.translation[1]).cast()),
        f32::INFINITY.to_le_bytes(),
        "placement is out of range",
    ));
    if q[..3].iter().all(|v| v.to_native() == 0.0) {
        cases.push((
            at(std::ptr::from_ref(&q[3]).cast()),
            0f32.to_le_bytes(),
            "placement is out of range",
        ));
    }
    assert_rejected(&good, cases);
    // and random damage to the shapes file never panics
    let mut rng = Rng::new(3);
    for _ in 0..3000 {
        let mut bytes = good.clone();
        let at = HEADER_LEN + rng.below(bytes.len() - HEADER_LEN);
        bytes[at] = rng.below(256) as u8;
        rehash(&mut bytes);
        exercise(&bytes, &mut rng);
    }
}

#[test]
fn hostile_bsp_trees_are_rejected_by_verification() {
    use kiln_formats::ArchivedCollider;
    let path = kiln_tests::samples_dir().join("shape_collection.glb");
    let good = bake_file(&path, &BakeSettings::default()).unwrap().bytes;
    let aligned = aligned(&good);
    let (_, level) = kiln_formats::access_file(&aligned).unwrap();
    let base = aligned.as_ptr() as usize;
    let at = |p: *const ()| p as usize - base;
    let b = level
        .colliders
        .iter()
        .find_map(|s| match s {
            ArchivedCollider::Bsp(b) => Some(b),
            _ => None,
        })
        .expect("the torus is a BSP tree");
    let n = b.nodes.len() as u32;
    let inner = |i: u32| i != kiln_formats::bsp::EMPTY && i != kiln_formats::bsp::SOLID;
    // a node whose children are both inner nodes, to make one shared
    let (fork, node) = b
        .nodes
        .iter()
        .enumerate()
        .find(|(_, x)| inner(x.front.to_native()) && inner(x.back.to_native()))
        .expect("a fork");
    // the surface's leaf 0 with corner `a` at its run's base + 65,535,
    // past the surface's few hundred vertices
    let surface_past = format!(
        "uses vertex {}",
        b.surface.bases[0][0].to_native() + u32::from(u16::MAX)
    );
    let surface_o0 = b.surface.leaves[0].offset[0].to_native().to_le_bytes();
    let cases: Vec<(usize, [u8; 4], &str)> = vec![
        // back to the root: a cycle
        (
            at(std::ptr::from_ref(&node.front).cast()),
            0u32.to_le_bytes(),
            "not a later node",
        ),
        // to itself
        (
            at(std::ptr::from_ref(&node.back).cast()),
            (fork as u32).to_le_bytes(),
            "not a later node",
        ),
        (
            at(std::ptr::from_ref(&node.back).cast()),
            (n + 5).to_le_bytes(),
            "not a later node",
        ),
        // both children the same subtree
        (
            at(std::ptr::from_ref(&node.back).cast()),
            node.front.to_native().to_le_bytes(),
            "two parents",
        ),
        (
            at(std::ptr::from_ref(&node.plane).cast()),
            1_000_000u32.to_le_bytes(),
            "plane",
        ),
        // a bevel (stepped over by rays) with a subtree in front
        (
            at(std::ptr::from_ref(&node.plane).cast()),
            (node.plane.to_native() | kiln_formats::bsp::BEVEL).to_le_bytes(),
            "a bevel with something in front",
        ),
        (
            at(b.planes[0].as_ptr().cast()),
            5f32.to_le_bytes(),
            "unit normal",
        ),
        (
            at(b.planes[1][3..].as_ptr().cast()),
            f32::NAN.to_le_bytes(),
            "unit normal",
        ),
        (
            at(b.surface.vertices.data[..].as_ptr().cast()) + f32_axis(&b.surface.vertices),
            f32::INFINITY.to_le_bytes(),
            "vertex 0 is not finite",
        ),
        (
            at(std::ptr::from_ref(&b.surface.leaves[0].a).cast()),
            [0xff, 0xff, surface_o0[0], surface_o0[1]],
            surface_past.as_str(),
        ),
    ];
    assert_rejected(&good, cases);
}

/// The one-pass check `Level::open` runs on mesh trees
/// (`verify_mesh_tree`) must reject exactly what a breadth-first walk
/// from the root rejects ([`walk_verdict`], written apart from it): 4,000
/// damaged words of links, node boxes and codes per tree kind, each trying a value
/// a walker could be fooled by (a small number, all ones, a leaf-looking
/// word, a flipped bit, a random word); on a small tree (one serial pass)
/// and on one large enough to be checked in parallel chunks. The
/// statistics walk (`mesh_tree_stats`) follows every accepted tree.
#[test]
fn the_fast_mesh_tree_check_rejects_what_the_full_walk_rejects() {
    for (u, v) in [(60, 12), (1400, 24)] {
        fast_and_full_tree_checks_agree(u, v);
    }
}

fn fast_and_full_tree_checks_agree(u: u32, v: u32) {
    use kiln_formats::tri_mesh::ArchivedTriMesh;
    use kiln_formats::verify::{PARALLEL_TREE_NODES, mesh_tree_stats, verify_mesh_tree};
    let (pos, tris) = kiln_tests::torus_knot(u, v, false);
    let scene = Scene::from_meshes(vec![SceneMesh::new("knot", pos, &tris)]);
    fn mesh_of(level: &kiln_formats::ArchivedLevel) -> &ArchivedTriMesh {
        level.colliders.iter().find_map(|s| s.tri_mesh()).unwrap()
    }
    for kind in [kiln_formats::TreeKind::Aabb, kiln_formats::TreeKind::Sphere] {
        let settings = BakeSettings::default().all_meshes().with_tree(kind);
        let good = bake_scene(&scene, &settings).bytes;
        let mut body = rkyv::util::AlignedVec::<16>::with_capacity(good.len());
        body.extend_from_slice(&good[HEADER_LEN..]);
        // the byte range of the tree's nodes
        let (lo, hi) = {
            let level =
                rkyv::access::<kiln_formats::ArchivedLevel, rkyv::rancor::Error>(&body).unwrap();
            let mesh = mesh_of(level);
            let (start, len) = match &mesh.tree {
                ArchivedMeshTree::Boxes(n) => {
                    (n.as_ptr() as usize, std::mem::size_of_val(n.as_slice()))
                }
                ArchivedMeshTree::Spheres(t) => (
                    t.nodes.as_ptr() as usize,
                    std::mem::size_of_val(t.nodes.as_slice()),
                ),
            };
            let base = body.as_ptr() as usize;
            assert!(len > 1000, "{kind:?}: a tree worth damaging");
            // the large knot's tree is checked in parallel pieces
            let nodes = match &mesh.tree {
                ArchivedMeshTree::Boxes(n) => n.len(),
                ArchivedMeshTree::Spheres(t) => t.nodes.len(),
            };
            assert_eq!(u > 100, nodes >= PARALLEL_TREE_NODES, "{nodes} nodes");
            (start - base, start - base + len)
        };
        let mut rng = Rng::new(77);
        let (mut agreed_bad, mut agreed_good) = (0, 0);
        for _ in 0..4000 {
            let mut bytes = body.clone();
            let at = lo + (rng.below((hi - lo) / 4)) * 4;
            let word = match rng.below(5) {
                0 => rng.below(64) as u32,
                1 => u32::MAX,
                2 => (1 << 31) | rng.below(256) as u32,
                3 => {
                    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) ^ (1 << rng.below(32))
                }
                _ => rng.below(u32::MAX as usize) as u32,
            };
            bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
            let Ok(level) =
                rkyv::access::<kiln_formats::ArchivedLevel, rkyv::rancor::Error>(&bytes)
            else {
                continue;
            };
            let mesh = mesh_of(level);
            let fast = verify_mesh_tree(mesh);
            let walked = walk_verdict(mesh);
            assert_eq!(
                fast.is_ok(),
                walked,
                "{kind:?} {u}×{v}: word {word:#x} at {at}: {fast:?}"
            );
            // the statistics walk follows every tree the check accepts
            if fast.is_ok() {
                mesh_tree_stats(mesh).expect("an accepted tree's statistics");
            }
            if fast.is_ok() {
                agreed_good += 1;
            } else {
                agreed_bad += 1;
            }
        }
        // both outcomes occur (a code change can leave a tree valid; eight
        // of a sphere node's ten words are codes, which always pass)
        assert!(
            agreed_bad > 500 && agreed_good > 10,
            "{kind:?} {u}×{v}: {agreed_bad} / {agreed_good}"
        );
    }
}

/// A mesh tree's verdict by a breadth-first walk from the root: nodes
/// dequeued in index order, each storing the next node and leaf numbers
/// (even with no child of a kind), at least two used slots with leaf bits
/// only on them, a box node's own box finite, not inverted and of a finite
/// size, box codes that do not cross, every node and leaf met,
/// inner nodes fewer than `MAX_DEPTH` levels deep.
fn walk_verdict(mesh: &kiln_formats::tri_mesh::ArchivedTriMesh) -> bool {
    use kiln_formats::level::MAX_DEPTH;
    use kiln_formats::tri_mesh::LEAF_BIT;
    let (n, leaves) = (mesh.tree.len(), mesh.leaves.len());
    let root = mesh.root.to_native();
    if n == 0 {
        return leaves == 0 || (leaves == 1 && root == LEAF_BIT);
    }
    if root != 0 {
        return false;
    }
    let mut queue = vec![(0usize, 1usize)];
    let (mut pos, mut next_leaf) = (0, 0);
    while pos < queue.len() {
        let (i, depth) = queue[pos];
        let l = match &mesh.tree {
            ArchivedMeshTree::Boxes(b) => {
                let node = &b[i];
                let l = node.links();
                let crossed = (0..(l.used as usize).min(8)).any(|c| {
                    (0..3).any(|k| u16::from(node.lo[k][c]) + u16::from(node.hi[k][c]) > 255)
                });
                let bounded = (0..3).all(|k| {
                    let (lo, hi) = (node.min[k].to_native(), node.max[k].to_native());
                    lo.is_finite() && hi.is_finite() && lo <= hi && (hi - lo).is_finite()
                });
                if crossed || !bounded {
                    return false;
                }
                l
            }
            ArchivedMeshTree::Spheres(t) => t.nodes[i].links(),
        };
        if i != pos || depth >= MAX_DEPTH || l.used < 2 || l.leaf_mask >> l.used != 0 {
            return false;
        }
        if (l.first_node as usize, l.first_leaf as usize) != (queue.len(), next_leaf) {
            return false;
        }
        for c in 0..l.used as usize {
            let r = l.child(c);
            if r & LEAF_BIT != 0 {
                next_leaf += 1;
            } else {
                if r as usize >= n {
                    return false;
                }
                queue.push((r as usize, depth + 1));
            }
        }
        pos += 1;
    }
    queue.len() == n && next_leaf == leaves
}

#[test]
fn hostile_piece_shapes_are_rejected_by_verification() {
    use kiln_formats::level::ArchivedPieceKind as K;
    // the props sample's dynamic L and U: their pieces are given as boxes
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/props.gltf");
    let good = bake_file(&path, &BakeSettings::default()).unwrap().bytes;
    let aligned = aligned(&good);
    let (_, level) = kiln_formats::access_file(&aligned).unwrap();
    let base = aligned.as_ptr() as usize;
    let at = |p: *const ()| p as usize - base;
    let d = &level.decompositions[0];
    let s = &d.shapes[0];
    let K::Cuboid(c) = &s.kind else {
        panic!("the L's first piece is given as a {}", s.kind.name())
    };
    let h = c.half_extents.map(|x| x.to_native());
    let len = d.shapes.len() as u32;
    let cases = vec![
        // a box too small to hold its piece
        (
            at(std::ptr::from_ref(&c.half_extents[0]).cast()),
            (0.5 * h[0]).to_le_bytes(),
            "outside the cuboid that stands in for it",
        ),
        (
            at(std::ptr::from_ref(&c.half_extents[1]).cast()),
            f32::NAN.to_le_bytes(),
            "is not finite and positive",
        ),
        // a rotation that is no rotation
        (
            at(std::ptr::from_ref(&s.rotation[3]).cast()),
            3.0f32.to_le_bytes(),
            "not of unit length",
        ),
        (
            at(std::ptr::from_ref(&s.centre[2]).cast()),
            f32::INFINITY.to_le_bytes(),
            "not finite",
        ),
        // the box moved off its piece
        (
            at(std::ptr::from_ref(&s.centre[0]).cast()),
            (s.centre[0].to_native() + 4.0 * h[0]).to_le_bytes(),
            "outside the cuboid",
        ),
        // one shape fewer than pieces (rkyv's u32 length after the pointer)
        (
            at(std::ptr::from_ref(&d.shapes).cast()) + 4,
            (len - 1).to_le_bytes(),
            "piece shapes for",
        ),
    ];
    assert_rejected(&good, cases);
}

#[test]
fn hostile_bodies_are_rejected_by_verification() {
    // the bodies sample: a dumbbell of three objects, a gate, a barrel
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/bodies.gltf");
    let good = bake_file(&path, &BakeSettings::default()).unwrap().bytes;
    let aligned = aligned(&good);
    let (_, level) = kiln_formats::access_file(&aligned).unwrap();
    let base = aligned.as_ptr() as usize;
    let at = |p: *const ()| p as usize - base;
    let (d, g) = (&level.bodies[0], &level.bodies[1]);
    let n = level.instances.len() as u32;
    let cases = vec![
        (
            at(std::ptr::from_ref(&d.motion).cast()),
            3u32.to_le_bytes(),
            "is not kinematic or dynamic",
        ),
        (
            at(std::ptr::from_ref(&d.members[1]).cast()),
            n.to_le_bytes(),
            "ascending, each once",
        ),
        // out of order
        (
            at(std::ptr::from_ref(&d.members[1]).cast()),
            d.members[0].to_native().to_le_bytes(),
            "ascending, each once",
        ),
        // a kinematic gate post in the dynamic dumbbell
        (
            at(std::ptr::from_ref(&d.members[2]).cast()),
            g.members[2].to_native().to_le_bytes(),
            "does not have the body's motion",
        ),
        // the barrel's one object made the dumbbell's first (both dynamic)
        (
            at(std::ptr::from_ref(&level.bodies[2].members[0]).cast()),
            d.members[0].to_native().to_le_bytes(),
            "is in an earlier body too",
        ),
        (
            at(std::ptr::from_ref(&d.rotation[3]).cast()),
            2.0f32.to_le_bytes(),
            "not of unit length",
        ),
        (
            at(std::ptr::from_ref(&d.mass).cast()),
            f32::NAN.to_le_bytes(),
            "are not finite, non-negative",
        ),
        (
            at(std::ptr::from_ref(&d.inertia_diagonal[1]).cast()),
            (-1.0f32).to_le_bytes(),
            "are not finite, non-negative",
        ),
        (
            at(std::ptr::from_ref(&d.authored).cast()),
            8u32.to_le_bytes(),
            "unknown authored bits",
        ),
        // no members (rkyv's u32 length after the pointer)
        (
            at(std::ptr::from_ref(&d.members).cast()) + 4,
            0u32.to_le_bytes(),
            "no members",
        ),
    ];
    assert_rejected(&good, cases);
}

/// The piece flag (a mesh cut at tile borders) only on a static triangle
/// mesh: on another collider, a mover or a trigger it is refused, as is
/// an unknown flag bit; on a static triangle mesh the archive opens.
#[test]
fn hostile_piece_flags_are_rejected_by_verification() {
    use kiln_formats::level::{KINEMATIC, PIECE, TRIGGER};
    let good = every_shape();
    let aligned = aligned(&good);
    let (_, level) = kiln_formats::access_file(&aligned).unwrap();
    let base = aligned.as_ptr() as usize;
    let flags_at = |i: usize| std::ptr::from_ref(&level.instances[i].flags) as usize - base;
    let in_top = level.top.leaves.to_native() as usize;
    let is_mesh = |i: usize| {
        level.colliders[level.instances[i].collider.to_native() as usize]
            .tri_mesh()
            .is_some()
    };
    let mesh = (0..in_top)
        .find(|&i| is_mesh(i))
        .expect("a static triangle mesh");
    let other = (0..in_top)
        .find(|&i| !is_mesh(i))
        .expect("a static primitive");
    let piece = "a piece cut at tile borders is a static triangle mesh";
    let cases = vec![
        (flags_at(other), PIECE.to_le_bytes(), piece),
        (flags_at(mesh), (PIECE | TRIGGER).to_le_bytes(), piece),
        (flags_at(mesh), (PIECE | KINEMATIC).to_le_bytes(), piece),
        (flags_at(mesh), (1u32 << 16).to_le_bytes(), "unknown flags"),
    ];
    assert_rejected(&good, cases);
    // a static triangle mesh may be a piece
    let mut bytes = good.clone();
    let at = flags_at(mesh);
    bytes[at..at + 4].copy_from_slice(&PIECE.to_le_bytes());
    rehash(&mut bytes);
    let opened = Level::from_bytes(&bytes).unwrap();
    assert!(opened.archive().instances[mesh].is_piece());
}
