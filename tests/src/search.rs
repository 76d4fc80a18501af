//! The one-dimensional searches the oracles share: where a convex
//! function of one variable is least (ternary search), and the first time
//! a convex gap closes (the least, then bisection before it).

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
}
