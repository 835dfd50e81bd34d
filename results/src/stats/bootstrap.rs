//! Percentile-bootstrap confidence intervals of a mean.

use super::quantile::{mean, nearest_rank, sample_std};
use rand::Rng;
use serde::Serialize;

/// Resamples drawn for every bootstrap interval in schedlab's reports.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;
/// Confidence level of every interval in schedlab's reports.
pub const CONFIDENCE: f64 = 0.95;

/// A closed interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Half the width: what a report prints after "±". A percentile interval
    /// need not be symmetric about the estimate; the exact bounds are in the
    /// CSV and JSON outputs.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// Mean of a sample with its spread and a bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanEstimate {
    pub n: usize,
    pub mean: f64,
    /// sample standard deviation; `None` for n = 1
    pub std: Option<f64>,
    /// percentile-bootstrap interval of the mean; `[x, x]` for n = 1
    pub ci: Interval,
}

/// The percentile interval of bootstrap replicates: their nearest-rank
/// quantiles at (1 − confidence)/2 and (1 + confidence)/2. Sorts `replicates`.
pub fn percentile_interval(replicates: &mut [f64], confidence: f64) -> Option<Interval> {
    if !(confidence > 0.0 && confidence < 1.0) || replicates.iter().any(|r| !r.is_finite()) {
        return None;
    }
    replicates.sort_by(f64::total_cmp);
    Some(Interval {
        low: nearest_rank(replicates, (1.0 - confidence) / 2.0)?,
        high: nearest_rank(replicates, (1.0 + confidence) / 2.0)?,
    })
}

/// Mean, standard deviation and a percentile-bootstrap interval of the mean
/// of `values`: `resamples` resamples of n values drawn with replacement from
/// `rng`. `None` for an empty or non-finite sample. With one value there is
/// nothing to resample: the interval is that value, and reports say n = 1.
pub fn bootstrap_mean_ci(
    values: &[f64],
    confidence: f64,
    resamples: usize,
    rng: &mut impl Rng,
) -> Option<MeanEstimate> {
    let m = mean(values)?;
    let n = values.len();
    if n == 1 {
        return Some(MeanEstimate {
            n,
            mean: m,
            std: None,
            ci: Interval { low: m, high: m },
        });
    }
    if resamples == 0 {
        return None;
    }
    let mut replicates: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    Some(MeanEstimate {
        n,
        mean: m,
        std: sample_std(values),
        ci: percentile_interval(&mut replicates, confidence)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::rng::{purpose, stream};

    #[test]
    fn interval_contains_the_mean_and_is_reproducible() {
        let values = [3.0, 5.0, 4.0, 8.0, 6.0, 5.5, 4.5];
        let a = bootstrap_mean_ci(&values, CONFIDENCE, 1000, &mut stream(7, &[purpose::STATISTICS])).unwrap();
        let b = bootstrap_mean_ci(&values, CONFIDENCE, 1000, &mut stream(7, &[purpose::STATISTICS])).unwrap();
        let c = bootstrap_mean_ci(&values, CONFIDENCE, 1000, &mut stream(8, &[purpose::STATISTICS])).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.ci, c.ci);
        assert!(a.ci.contains(a.mean), "{a:?}");
        assert!((a.mean - 36.0 / 7.0).abs() < 1e-12);
        // the interval of a mean is narrower than the data's range
        assert!(a.ci.low > 3.0 && a.ci.high < 8.0, "{a:?}");
    }

    #[test]
    fn one_value_is_its_own_interval() {
        let e = bootstrap_mean_ci(&[2.5], CONFIDENCE, 1000, &mut stream(1, &[])).unwrap();
        assert_eq!(e.n, 1);
        assert_eq!(e.ci, Interval { low: 2.5, high: 2.5 });
        assert_eq!(e.std, None);
    }

    #[test]
    fn undefined_inputs_give_none() {
        let mut rng = stream(1, &[]);
        assert!(bootstrap_mean_ci(&[], CONFIDENCE, 1000, &mut rng).is_none());
        assert!(bootstrap_mean_ci(&[1.0, f64::INFINITY], CONFIDENCE, 1000, &mut rng).is_none());
        assert!(percentile_interval(&mut [1.0, 2.0], 1.0).is_none());
    }

    #[test]
    fn percentile_interval_by_hand() {
        // 40 replicates 1..=40: ranks ⌈0.025·40⌉ = 1 and ⌈0.975·40⌉ = 39
        let mut r: Vec<f64> = (1..=40).rev().map(f64::from).collect();
        assert_eq!(
            percentile_interval(&mut r, 0.95),
            Some(Interval { low: 1.0, high: 39.0 })
        );
    }
}
