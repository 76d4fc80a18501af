//! The one-dimensional searches the oracles share: where a convex
//! function of one variable is least (ternary search), and the first time
//! a convex gap closes (the least, then bisection before it), and the
//! same for a gap whose slope is bounded, which can stop early.

/// The argument in `[lo, hi]` where the convex function `f` is least:
/// ternary search, at most `rounds` rounds, stopping once the bracket is
/// narrower than `eps`.
pub fn argmin(f: impl Fn(f64) -> f64, lo: f64, hi: f64, rounds: usize, eps: f64) -> f64 {
    let (mut lo, mut hi) = (lo, hi);
    for _ in 0..rounds {
        let m1 = lo + (hi - lo) / 3.0;
        let m2 = hi - (hi - lo) / 3.0;
        if f(m1) <= f(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
        if hi - lo < eps {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The first `t` in `[0, max_t]` at which `gap(t) ≤ 0`, for a gap convex
/// in `t` (a distance between two convex things moving apart at constant
/// velocity, less a radius): `None` when the least gap is positive. Also
/// returns the least gap found.
pub fn first_contact(gap: impl Fn(f64) -> f64, max_t: f64) -> (Option<f64>, f64) {
    let g0 = gap(0.0);
    if g0 <= 0.0 {
        return (Some(0.0), g0);
    }
    let scale = max_t.max(1.0);
    let t_min = argmin(&gap, 0.0, max_t, 200, 1e-13 * scale);
    // the bracket never holds its end: the least may be there
    let t_min = if gap(max_t) <= gap(t_min) {
        max_t
    } else {
        t_min
    };
    let least = gap(t_min);
    if least > 0.0 {
        return (None, least);
    }
    let (mut a, mut b) = (0.0f64, t_min);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if gap(m) <= 0.0 {
            b = m;
        } else {
            a = m;
        }
        if b - a < 1e-14 * scale {
            break;
        }
    }
    (Some(b), least)
}

/// The first `t` in `[0, max_t]` at which `gap(t) ≤ 0`, as
/// [`first_contact`] finds it, for a gap that is convex in `t` and changes
/// by at most `slope` per unit of `t` (a distance between two convex things,
/// one moving at speed `slope`, less a radius). Without the least gap to
/// report, the search may stop early, and each shortcut follows from those
/// two properties:
/// - the search for the least stops at the first point where the gap is
///   ≤ 0: a convex gap is positive before its first root and ≤ 0 from
///   there to any such point, so bisection between 0 and it finds the root;
/// - it answers `None` once the bracket that holds the least is too narrow
///   for the gap to reach zero inside it (`gap(x) > slope · width` there);
/// - bisection's lower end moves on by `gap(a) / slope`, which cannot pass
///   the first root (conservative advancement: Mirtich, "Impulse-based
///   Dynamic Simulation of Rigid Body Systems", 1996).
pub fn first_root(gap: impl Fn(f64) -> f64, max_t: f64, slope: f64) -> Option<f64> {
    let g0 = gap(0.0);
    if g0 <= 0.0 {
        return Some(0.0);
    }
    if slope.is_nan() || slope <= 0.0 {
        // nothing moves: the gap stays g0
        return None;
    }
    let scale = max_t.max(1.0);
    let eps = 1e-13 * scale;
    // the bound with room for rounding in the gap (1e-9 m, far below the
    // oracles' tolerances), so that only a clear miss stops the search
    let clear = |g: f64, width: f64| g > slope * width * (1.0 + 1e-6) + 1e-9;
    let (mut lo, mut hi) = (0.0f64, max_t);
    let mut below = None;
    for _ in 0..200 {
        let m1 = lo + (hi - lo) / 3.0;
        let m2 = hi - (hi - lo) / 3.0;
        let g1 = gap(m1);
        if g1 <= 0.0 {
            below = Some(m1);
            break;
        }
        let g2 = gap(m2);
        if g2 <= 0.0 {
            below = Some(m2);
            break;
        }
        if g1 <= g2 {
            hi = m2;
        } else {
            lo = m1;
        }
        // the least lies in [lo, hi], within slope · width of g1.min(g2)
        if clear(g1.min(g2), hi - lo) {
            return None;
        }
        if hi - lo < eps {
            break;
        }
    }
    let b = match below {
        Some(b) => b,
        // the bracket never holds its end: the least may be there
        None => [0.5 * (lo + hi), max_t]
            .into_iter()
            .find(|&t| gap(t) <= 0.0)?,
    };
    // no root before t + gap(t) / slope (a hair less, for rounding)
    let past = |t: f64, g: f64, b: f64| (t + g / slope * (1.0 - 1e-9)).min(b);
    let mut a = past(0.0, g0, b);
    let mut b = b;
    for _ in 0..200 {
        if b - a < 1e-14 * scale {
            break;
        }
        let m = 0.5 * (a + b);
        let g = gap(m);
        if g <= 0.0 {
            b = m;
        } else {
            a = past(m, g, b);
        }
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parabola_and_a_closing_gap() {
        let x = argmin(|t| (t - 0.3) * (t - 0.3), 0.0, 1.0, 200, 1e-12);
        assert!((x - 0.3).abs() < 1e-9, "{x}");
        // a point moving along x from -2 at unit speed, radius 0.5 around 0
        let (t, least) = first_contact(|t| (t - 2.0).abs() - 0.5, 10.0);
        assert!((t.unwrap() - 1.5).abs() < 1e-12 && (least + 0.5).abs() < 1e-9);
        let (none, least) = first_contact(|t| (t - 2.0).abs() + 0.25, 10.0);
        assert!(none.is_none() && (least - 0.25).abs() < 1e-9);
        // the least at the end of the range
        assert!(first_contact(|t| 1.0 - t, 1.0).0.is_some());
    }

    /// The early-stopping search against the full one on the gaps it is
    /// for: a point passing another at speed `s`, `h` to the side, less a
    /// radius `r` (head-on, grazing, missing by a hair, touching at the
    /// start or the end, standing still).
    #[test]
    fn the_early_stopping_search_finds_what_the_full_one_finds() {
        let mut rng = crate::Rng::new(17);
        let mut rand = || f64::from(rng.f32());
        let (mut roots, mut misses) = (0, 0);
        for i in 0..20_000 {
            let s = [0.0, 1e-3, 1.0, 40.0][i % 4] * (0.5 + rand());
            let c = rand() * 3.0 - 0.5;
            let h = if i % 5 == 0 { 0.0 } else { rand() * 0.6 };
            let r = match i % 7 {
                // missing or grazing by a hair
                0 => h * (1.0 - 1e-7),
                1 => h * (1.0 + 1e-7),
                _ => rand() * 0.5,
            };
            let max_t = [1.0, 2.5, 1e3][i % 3];
            let gap = |t: f64| ((t - c) * s).hypot(h) - r;
            let (want, least) = first_contact(gap, max_t);
            let got = first_root(gap, max_t, s);
            match (want, got) {
                (Some(w), Some(g)) => {
                    roots += 1;
                    assert!((w - g).abs() * s <= 1e-9, "{i}: {g} against {w}");
                    assert!(gap(g) <= 0.0, "{i}: {g} is not in contact");
                }
                (None, None) => misses += 1,
                // either answer is right for a graze within rounding
                _ => assert!(
                    least.abs() <= 1e-8,
                    "{i}: {want:?} against {got:?} (least {least})"
                ),
            }
        }
        assert!(
            roots > 5_000 && misses > 5_000,
            "{roots} roots, {misses} misses"
        );
    }
}
