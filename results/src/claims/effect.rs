//! One row against one baseline: the difference of means with a seeded
//! percentile-bootstrap interval, and the two-sided Mann–Whitney U test.

use crate::stats::{CONFIDENCE, Interval, MannWhitney, cliffs_delta, mann_whitney, mean, percentile_interval};
use rand::Rng;

/// The mean of one side's defined values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    /// runs in which the metric is defined
    pub n: usize,
    /// runs left out because it is undefined there
    pub undefined: usize,
    pub mean: f64,
}

impl Side {
    /// `None` when no run defines the metric.
    pub fn of(values: &[Option<f64>]) -> Option<Side> {
        let defined: Vec<f64> = values.iter().flatten().copied().collect();
        Some(Side {
            n: defined.len(),
            undefined: values.len() - defined.len(),
            mean: mean(&defined)?,
        })
    }
}

/// The judged arm (x) against a baseline (y) on one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Effect {
    /// mean(x) − mean(y)
    pub diff: f64,
    /// percentile-bootstrap interval of `diff`: each side resampled with
    /// replacement on its own; `[diff, diff]` with one run a side
    pub ci: Option<Interval>,
    pub test: MannWhitney,
    /// Cliff's delta of x against y: the direction the test sees
    pub cliffs_delta: f64,
    /// every value of both sides is equal: the test cannot reject (p = 1
    /// whatever the split) and is left out of the Holm family
    pub tied: bool,
}

/// The mean of one resample of `v` with replacement.
fn resample_mean(v: &[f64], rng: &mut impl Rng) -> f64 {
    (0..v.len()).map(|_| v[rng.random_range(0..v.len())]).sum::<f64>() / v.len() as f64
}

/// The effect of `x` against `y` (defined values only); `None` when a side
/// is empty or not finite.
pub fn effect(x: &[f64], y: &[f64], resamples: usize, rng: &mut impl Rng) -> Option<Effect> {
    let test = mann_whitney(x, y)?;
    let delta = cliffs_delta(x, y)?;
    let diff = mean(x)? - mean(y)?;
    let ci = if x.len() == 1 && y.len() == 1 {
        Some(Interval { low: diff, high: diff })
    } else {
        let mut replicates: Vec<f64> = (0..resamples)
            .map(|_| resample_mean(x, rng) - resample_mean(y, rng))
            .collect();
        percentile_interval(&mut replicates, CONFIDENCE)
    };
    let tied = x.iter().chain(y).all(|v| *v == x[0]);
    Some(Effect {
        diff,
        ci,
        test,
        cliffs_delta: delta,
        tied,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::rng::stream;

    #[test]
    fn difference_interval_and_test_by_hand() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [11.0, 12.0, 13.0, 14.0];
        let e = effect(&x, &y, 1000, &mut stream(3, &[])).unwrap();
        assert_eq!(e.diff, -10.0);
        let ci = e.ci.unwrap();
        assert!(ci.contains(-10.0) && ci.low >= -13.0 && ci.high <= -7.0, "{ci:?}");
        assert_eq!(e.cliffs_delta, -1.0);
        // every x below every y: the most extreme of C(8, 4) = 70 splits, twice
        assert!((e.test.p - 2.0 / 70.0).abs() < 1e-12, "{}", e.test.p);
        assert!(!e.tied);
        // seeded: the same stream, the same interval
        assert_eq!(effect(&x, &y, 1000, &mut stream(3, &[])), Some(e));
    }

    #[test]
    fn ties_one_run_and_empty_sides() {
        let e = effect(&[2.0, 2.0], &[2.0], 1000, &mut stream(1, &[])).unwrap();
        assert!(e.tied && e.diff == 0.0 && e.test.p == 1.0);
        let one = effect(&[1.0], &[3.0], 1000, &mut stream(1, &[])).unwrap();
        assert_eq!(one.ci, Some(Interval { low: -2.0, high: -2.0 }));
        assert!(effect(&[], &[1.0], 1000, &mut stream(1, &[])).is_none());
        assert_eq!(
            Side::of(&[None, Some(1.0), Some(3.0)]).map(|s| (s.n, s.undefined, s.mean)),
            Some((2, 1, 2.0))
        );
        assert!(Side::of(&[None]).is_none());
    }
}
