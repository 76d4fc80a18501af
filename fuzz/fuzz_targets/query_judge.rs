//! Small random scenes and queries made from the fuzzer's bytes — every
//! collider kind under every class of placement, every query shape —
//! judged by the brute-force oracle of `kiln_tests::judge`, which panics
//! on a wrong answer (the same generator and judge as the e2e test
//! `differential`).
#![no_main]

use kiln_tests::scenes::{Dice, judge_scene};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    judge_scene(&mut Dice::from_bytes(data), 8, "fuzz case");
});
