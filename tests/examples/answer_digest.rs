//! Prints a digest of every overlap, yes/no and cast answer to random
//! queries on random scenes, one line a seed: run it before and after a
//! change to the queries, and equal lines mean the change moved no answer
//! by a bit.
//!
//! ```text
//! git worktree add --detach /tmp/before <commit>
//! (cd /tmp/before && cargo run --release -p kiln-tests --example answer_digest)
//! cargo run --release -p kiln-tests --example answer_digest
//! ```
//!
//! Arguments: scenes and queries a scene (default 800 and 400: 960,000
//! queries over three seeds, about 20 s).

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |a| a.parse().expect("a count"))
    };
    let (scenes, queries) = (arg(1, 800), arg(2, 400));
    for seed in [1u64, 2, 3] {
        let d = kiln_tests::scenes::answer_digest(seed, scenes, queries);
        println!("seed {seed}: {scenes} scenes x {queries} queries: {d:016x}");
    }
}
