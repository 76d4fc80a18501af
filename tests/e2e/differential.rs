//! Differential testing of every query kind on small random scenes (see
//! `kiln_tests::scenes`): every collider kind under every class of
//! placement, queries deep inside, straddling and near them, each answer
//! judged by the brute-force oracle of `kiln_tests::judge`. A failure
//! names the scene's seed and the query; the `query_judge` fuzz target
//! drives the same generator and judge from fuzzer bytes.

use kiln_tests::judge::Stats;
use kiln_tests::scenes::{Dice, judge_scene};
use rayon::prelude::*;

/// Scenes and queries per scene (overlap, yes/no, cast and point each).
const SCENES: u64 = 600;
const QUERIES: usize = 60;

/// One scene, for replaying a failure: `KILN_SCENE=375 cargo test
/// --release -p kiln-tests --test e2e one_scene -- --ignored --nocapture`.
#[test]
#[ignore]
fn one_scene() {
    let seed: u64 = std::env::var("KILN_SCENE").map_or(0, |s| s.parse().expect("a seed"));
    let mut dice = Dice::seeded(seed);
    let scene = kiln_tests::scenes::scene(&mut Dice::seeded(seed));
    for inst in &scene.instances {
        eprintln!(
            "{}: {} as {:?}, {:?}",
            inst.name, scene.meshes[inst.mesh].name, inst.extras_collider, inst.transform
        );
    }
    let s = judge_scene(&mut dice, QUERIES, &format!("scene {seed}"));
    kiln_tests::judge::report("scene", &s);
}

/// The seeds to run: `0..SCENES`, or `KILN_SCENES=FROM..TO` for a long run
/// (`KILN_SCENES=0..100000 cargo test --release -p kiln-tests --test e2e
/// random_scenes -- --nocapture`).
fn seeds() -> std::ops::Range<u64> {
    std::env::var("KILN_SCENES").map_or(0..SCENES, |s| {
        let (a, b) = s.split_once("..").expect("KILN_SCENES=FROM..TO");
        a.parse().expect("a seed")..b.parse().expect("a seed")
    })
}

#[test]
fn random_scenes_answer_every_query_as_the_oracle() {
    let seeds = seeds();
    let scenes = seeds.end - seeds.start;
    let stats: Vec<Stats> = seeds
        .into_par_iter()
        .map(|seed| judge_scene(&mut Dice::seeded(seed), QUERIES, &format!("scene {seed}")))
        .collect();
    let mut total = Stats::default();
    for s in &stats {
        total.add(s);
    }
    kiln_tests::judge::report("random scenes", &total);
    // each query: an overlap, a yes/no test, a cast and a point
    eprintln!("{scenes} scenes, {} cases", total.overlaps * 4);
    let queries = scenes as usize * QUERIES;
    assert!(total.touching > queries / 4, "{}", total.touching);
    assert!(total.hits > queries / 10, "{}", total.hits);
    assert!(total.inside > queries / 100, "{}", total.inside);
    // the judge checks each concave solid's way out against a direction
    // search: a guard that the search ran
    assert!(total.searched > queries / 20, "{}", total.searched);
}

/// A level of 5,000 objects on a grid, over the baker's float-node limit
/// for the top-level tree (`kiln_baker::encode::FLOAT_TOP_LEAVES`), so its
/// tree is quantised, and one of 900, whose tree is float: every query
/// kind judged by the oracle against both forms, and rays against every
/// object's own answer.
#[test]
fn both_forms_of_the_top_level_tree_answer_as_the_oracle() {
    use kiln_formats::level::ArchivedTopNodes;
    for (count, quantised) in [(5_000, true), (900, false)] {
        let mut dice = Dice::seeded(count as u64);
        let scene = kiln_tests::scenes::grid_scene(&mut dice, count, 3.0);
        let level = kiln_runtime::Level::from_bytes(
            &kiln_baker::bake_scene(&scene, &kiln_baker::BakeSettings::default()).bytes,
        )
        .expect("the baker's own archive opens");
        let nodes = &level.archive().top.nodes;
        assert_eq!(
            matches!(nodes, ArchivedTopNodes::Boxes(_)),
            quantised,
            "{count} objects: {} top-level nodes",
            nodes.len()
        );
        let s = kiln_tests::scenes::judge_level(&level, &mut dice, 400, &format!("grid {count}"));
        kiln_tests::judge::report(&format!("grid of {count}"), &s);
        assert!(
            s.touching > 100 && s.hits > 40,
            "{} touching, {} hits",
            s.touching,
            s.hits
        );
        // rays: the level's answer against the nearest of every object's
        // own, along rays over the grid, so that each walks the tree far
        let mut rng = kiln_tests::Rng::new(count as u64);
        let side = (count as f32).sqrt().ceil() * 3.0;
        let (mut hits, mut n) = (0, 0);
        for _ in 0..200 {
            let o = glam::Vec3::new(
                rng.range(-5.0, side + 5.0),
                rng.range(0.5, 3.0),
                rng.range(-5.0, side + 5.0),
            );
            let d = (glam::Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-0.4, 0.05),
                rng.range(-1.0, 1.0),
            ))
            .normalize_or(glam::Vec3::X);
            let ray = kiln_runtime::Ray::new(o, d, side);
            let got = level.raycast(&ray, &kiln_runtime::Filter::ALL);
            // each object alone (a filter that keeps it), the nearest
            let want = level
                .objects()
                .filter_map(|id| {
                    let only = move |o| o == id;
                    level.raycast(&ray, &kiln_runtime::Filter::ALL.keep(&only))
                })
                .min_by(|a, b| a.t.total_cmp(&b.t));
            match (&got, &want) {
                (Some(g), Some(w)) => {
                    hits += 1;
                    assert!(
                        (g.t - w.t).abs() <= 1e-5 * w.t.max(1.0),
                        "ray {n}: {g:?} against {want:?}"
                    );
                }
                (None, None) => {}
                _ => panic!("ray {n}: {got:?} against {want:?}"),
            }
            n += 1;
        }
        assert!(hits > 50, "{hits} of {n} rays hit");
    }
}

/// Generator seeds beyond the default run that once found a wrong answer,
/// judged again:
/// - 18149: a capsule hanging 0.9 mm past the border of a flat floor 3 km
///   out was told the depth that clears the floor's plane; the test of
///   "every corner over the floor" allowed a distance that grew as the
///   floor's edge shrank.
const FOUND: &[u64] = &[18149];

#[test]
fn scenes_that_found_wrong_answers_answer_as_the_oracle() {
    for &seed in FOUND {
        judge_scene(&mut Dice::seeded(seed), QUERIES, &format!("scene {seed}"));
    }
}

/// Every input in `tests/fuzz_regressions/query_judge/` once made the
/// `query_judge` fuzz target find a wrong answer; each is judged again.
#[test]
fn fuzz_regressions_answer_as_the_oracle() {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz_regressions/query_judge");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("the regressions folder") {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        judge_scene(
            &mut Dice::from_bytes(&bytes),
            8,
            &path.display().to_string(),
        );
        n += 1;
    }
    assert!(n >= 1, "no regression inputs in {}", dir.display());
}

/// The answer digest (`examples/answer_digest.rs`, the check that a change
/// moves no answer) is the same when the same queries are asked again —
/// every per-thread buffer and cached query body leaves no trace in the
/// next answers — and tells two seeds' queries apart.
#[test]
fn the_answer_digest_is_repeatable_and_tells_seeds_apart() {
    let a = kiln_tests::scenes::answer_digest(7, 12, 60);
    assert_eq!(a, kiln_tests::scenes::answer_digest(7, 12, 60));
    assert_ne!(a, kiln_tests::scenes::answer_digest(8, 12, 60));
}
