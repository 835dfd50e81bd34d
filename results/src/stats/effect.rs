//! Effect sizes of two samples that need no distributional assumption.

/// Cliff's delta of `x` against `y`: P(X > Y) − P(X < Y) over all pairs,
/// in [−1, 1]; positive when `x` tends to be larger. `None` when a side is
/// empty or holds a non-finite value.
pub fn cliffs_delta(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.is_empty() || y.is_empty() || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let mut score: i64 = 0;
    for a in x {
        for b in y {
            score += match a.partial_cmp(b) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    Some(score as f64 / (x.len() * y.len()) as f64)
}

/// Vargha–Delaney A12 of `x` against `y`: P(X > Y) + P(X = Y)/2, in [0, 1];
/// 0.5 is no effect. Equal to (delta + 1)/2 with Cliff's delta.
pub fn vargha_delaney_a12(x: &[f64], y: &[f64]) -> Option<f64> {
    cliffs_delta(x, y).map(a12_from_delta)
}

/// A12 from Cliff's delta.
pub fn a12_from_delta(delta: f64) -> f64 {
    (delta + 1.0) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // pairs of x = 1,3 vs y = 2,2,4: (1,2)< (1,2)< (1,4)< (3,2)> (3,2)> (3,4)<
        // 2 greater, 4 less: (2 − 4)/6
        assert_eq!(cliffs_delta(&[1.0, 3.0], &[2.0, 2.0, 4.0]), Some(-1.0 / 3.0));
        let a = vargha_delaney_a12(&[1.0, 3.0], &[2.0, 2.0, 4.0]).unwrap();
        assert!((a - 1.0 / 3.0).abs() < 1e-12, "{a}");
        assert_eq!(cliffs_delta(&[5.0, 6.0], &[1.0]), Some(1.0));
        // ties count as neither
        assert_eq!(cliffs_delta(&[2.0], &[2.0]), Some(0.0));
        assert_eq!(vargha_delaney_a12(&[2.0], &[2.0]), Some(0.5));
        assert_eq!(cliffs_delta(&[], &[1.0]), None);
        assert_eq!(cliffs_delta(&[f64::INFINITY], &[1.0]), None);
    }
}
