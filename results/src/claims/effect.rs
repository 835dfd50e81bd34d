//! One row against one baseline: the difference of means with a seeded
//! bootstrap interval, and the two-sided Mann–Whitney U test, with the
//! pre-registered unit of replication: an arm whose runs come from several
//! training runs is sampled by training run (its per-training-run means,
//! a hierarchical bootstrap over training runs, then seeds within each),
//! an arm with one training run (or none) by seed.

use crate::stats::{CONFIDENCE, Interval, MannWhitney, cliffs_delta, mann_whitney, mean, percentile_interval};
use rand::Rng;

/// One arm's defined values of a row, grouped by training run (in a fixed
/// order); an arm without training runs is one group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sample {
    /// non-empty groups only
    pub groups: Vec<Vec<f64>>,
    /// runs left out because the metric is undefined there
    pub undefined: usize,
}

impl Sample {
    /// Groups `values` (each with its training run) by training run, in the
    /// order of the training runs' names (`None` first).
    pub fn of(values: &[(Option<&str>, Option<f64>)]) -> Sample {
        let mut groups: std::collections::BTreeMap<Option<&str>, Vec<f64>> = Default::default();
        let mut undefined = 0;
        for (run, v) in values {
            match v {
                Some(x) if x.is_finite() => groups.entry(*run).or_default().push(*x),
                _ => undefined += 1,
            }
        }
        Sample {
            groups: groups.into_values().collect(),
            undefined,
        }
    }

    /// One group of plain per-seed values.
    pub fn seeds(values: &[f64]) -> Sample {
        Sample {
            groups: if values.is_empty() {
                Vec::new()
            } else {
                vec![values.to_vec()]
            },
            undefined: 0,
        }
    }

    /// Whether the unit is the training run (at least two of them).
    pub fn by_run(&self) -> bool {
        self.groups.len() >= 2
    }

    /// The values the test compares: per-training-run means, or per-seed values.
    pub fn units(&self) -> Vec<f64> {
        if self.by_run() {
            self.groups.iter().filter_map(|g| mean(g)).collect()
        } else {
            self.groups.concat()
        }
    }

    pub fn n_seeds(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }
}

/// The mean of one side and both of its n.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    /// the sample size of the test: training runs, or seeds with one run
    pub n: usize,
    /// training runs (groups) among the defined values
    pub runs: usize,
    /// runs (seeds) in which the metric is defined
    pub seeds: usize,
    /// runs left out because it is undefined there
    pub undefined: usize,
    /// the mean of the units (of the per-training-run means, or of the seeds)
    pub mean: f64,
    /// the unit is the training run
    pub by_run: bool,
}

impl Side {
    /// `None` when no run defines the metric.
    pub fn of(sample: &Sample) -> Option<Side> {
        let units = sample.units();
        Some(Side {
            n: units.len(),
            runs: sample.groups.len(),
            seeds: sample.n_seeds(),
            undefined: sample.undefined,
            mean: mean(&units)?,
            by_run: sample.by_run(),
        })
    }
}

/// The judged arm (x) against a baseline (y) on one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Effect {
    /// mean(x) − mean(y), each the mean of its units
    pub diff: f64,
    /// bootstrap interval of `diff`: each side resampled on its own
    /// ([`replicate_means`]); `[diff, diff]` with one unit a side
    pub ci: Option<Interval>,
    pub test: MannWhitney,
    /// Cliff's delta of x against y: the direction the test sees
    pub cliffs_delta: f64,
    /// every value of both sides is equal: the test cannot reject (p = 1
    /// whatever the split) and is left out of the Holm family
    pub tied: bool,
}

/// The means of `resamples` plain bootstrap resamples of `values`.
pub fn plain_replicates(values: &[f64], resamples: usize, rng: &mut impl Rng) -> Vec<f64> {
    (0..resamples)
        .map(|_| {
            (0..values.len())
                .map(|_| values[rng.random_range(0..values.len())])
                .sum::<f64>()
                / values.len() as f64
        })
        .collect()
}

/// The means of `resamples` bootstrap resamples of `sample`: with one
/// training run, a plain bootstrap of its seeds (drawn from `seeds`); with
/// several, a hierarchical one: training runs resampled with replacement
/// (drawn from `runs`), then the seeds of each resampled run (from `seeds`),
/// the replicate being the mean of the resampled runs' means. Two streams,
/// so the run-level draws are those of a plain bootstrap over run means.
pub fn replicate_means(sample: &Sample, resamples: usize, runs: &mut impl Rng, seeds: &mut impl Rng) -> Vec<f64> {
    match sample.groups.as_slice() {
        [] => Vec::new(),
        [one] => plain_replicates(one, resamples, seeds),
        groups => (0..resamples)
            .map(|_| {
                let total: f64 = (0..groups.len())
                    .map(|_| {
                        let g = &groups[runs.random_range(0..groups.len())];
                        (0..g.len()).map(|_| g[seeds.random_range(0..g.len())]).sum::<f64>() / g.len() as f64
                    })
                    .sum();
                total / groups.len() as f64
            })
            .collect(),
    }
}

/// The bootstrap interval of one sample's mean ([`replicate_means`]).
pub fn mean_interval(sample: &Sample, resamples: usize, runs: &mut impl Rng, seeds: &mut impl Rng) -> Option<Interval> {
    let mut reps = replicate_means(sample, resamples, runs, seeds);
    if reps.is_empty() {
        return None;
    }
    percentile_interval(&mut reps, CONFIDENCE)
}

/// The effect of `x` against `y`; `None` when a side is empty or not
/// finite. `rng(k)` gives the bootstrap's streams: 0 and 1 for x's training
/// runs and seeds, 2 and 3 for y's.
pub fn effect<R: Rng>(x: &Sample, y: &Sample, resamples: usize, mut rng: impl FnMut(u64) -> R) -> Option<Effect> {
    let (ux, uy) = (x.units(), y.units());
    let test = mann_whitney(&ux, &uy)?;
    let delta = cliffs_delta(&ux, &uy)?;
    let diff = mean(&ux)? - mean(&uy)?;
    let ci = if ux.len() == 1 && uy.len() == 1 && x.n_seeds() == 1 && y.n_seeds() == 1 {
        Some(Interval { low: diff, high: diff })
    } else {
        let rx = replicate_means(x, resamples, &mut rng(0), &mut rng(1));
        let ry = replicate_means(y, resamples, &mut rng(2), &mut rng(3));
        let mut d: Vec<f64> = rx.iter().zip(&ry).map(|(a, b)| a - b).collect();
        percentile_interval(&mut d, CONFIDENCE)
    };
    let tied = ux.iter().chain(&uy).all(|v| *v == ux[0]);
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

    fn rng(seed: u64) -> impl FnMut(u64) -> schedlab_core::rng::SimRng {
        move |k| stream(seed, &[k])
    }

    #[test]
    fn difference_interval_and_test_by_hand() {
        let (x, y) = (
            Sample::seeds(&[1.0, 2.0, 3.0, 4.0]),
            Sample::seeds(&[11.0, 12.0, 13.0, 14.0]),
        );
        let e = effect(&x, &y, 1000, rng(3)).unwrap();
        assert_eq!(e.diff, -10.0);
        let ci = e.ci.unwrap();
        assert!(ci.contains(-10.0) && ci.low >= -13.0 && ci.high <= -7.0, "{ci:?}");
        assert_eq!(e.cliffs_delta, -1.0);
        // every x below every y: the most extreme of C(8, 4) = 70 splits, twice
        assert!((e.test.p - 2.0 / 70.0).abs() < 1e-12, "{}", e.test.p);
        assert!(!e.tied);
        // seeded: the same streams, the same interval
        assert_eq!(effect(&x, &y, 1000, rng(3)), Some(e));
    }

    #[test]
    fn ties_one_run_and_empty_sides() {
        let e = effect(&Sample::seeds(&[2.0, 2.0]), &Sample::seeds(&[2.0]), 1000, rng(1)).unwrap();
        assert!(e.tied && e.diff == 0.0 && e.test.p == 1.0);
        let one = effect(&Sample::seeds(&[1.0]), &Sample::seeds(&[3.0]), 1000, rng(1)).unwrap();
        assert_eq!(one.ci, Some(Interval { low: -2.0, high: -2.0 }));
        assert!(effect(&Sample::seeds(&[]), &Sample::seeds(&[1.0]), 1000, rng(1)).is_none());
        let s = Sample::of(&[(None, None), (None, Some(1.0)), (None, Some(3.0))]);
        assert_eq!(
            Side::of(&s).map(|s| (s.n, s.runs, s.seeds, s.undefined, s.mean)),
            Some((2, 1, 2, 1, 2.0))
        );
        assert!(Side::of(&Sample::of(&[(None, None)])).is_none());
    }

    #[test]
    fn several_training_runs_make_the_training_run_the_unit() {
        let s = Sample::of(&[
            (Some("seed:2000"), Some(4.0)),
            (Some("seed:1000"), Some(1.0)),
            (Some("seed:1000"), Some(3.0)),
            (Some("seed:2000"), Some(6.0)),
            (Some("seed:2000"), None),
        ]);
        assert_eq!(s.groups, [vec![1.0, 3.0], vec![4.0, 6.0]]);
        assert!(s.by_run());
        assert_eq!(s.units(), [2.0, 5.0]);
        let side = Side::of(&s).unwrap();
        assert_eq!(
            (side.n, side.runs, side.seeds, side.undefined, side.mean),
            (2, 2, 4, 1, 3.5)
        );
        // the test compares run means: 2 runs against 3 seeds
        let y = Sample::seeds(&[10.0, 11.0, 12.0]);
        let e = effect(&s, &y, 200, rng(5)).unwrap();
        assert_eq!((e.test.n_x, e.test.n_y), (2, 3));
        assert_eq!(e.diff, 3.5 - 11.0);
    }

    /// Runs constant within a run: the hierarchical bootstrap's replicates
    /// are those of the plain bootstrap over the run means, drawn from the
    /// same stream; one run: those of the plain bootstrap over its seeds.
    #[test]
    fn the_hierarchical_bootstrap_against_hand_computed_cases() {
        let constant = Sample {
            groups: vec![vec![1.0; 3], vec![4.0; 5], vec![10.0; 2]],
            undefined: 0,
        };
        let hier = replicate_means(&constant, 500, &mut stream(9, &[0]), &mut stream(9, &[1]));
        let plain = plain_replicates(&[1.0, 4.0, 10.0], 500, &mut stream(9, &[0]));
        assert_eq!(hier.len(), 500);
        for (h, p) in hier.iter().zip(&plain) {
            assert!((h - p).abs() < 1e-12, "{h} vs {p}");
        }
        let a = mean_interval(&constant, 500, &mut stream(9, &[0]), &mut stream(9, &[1])).unwrap();
        let b = percentile_interval(&mut plain.clone(), CONFIDENCE).unwrap();
        assert!((a.low - b.low).abs() < 1e-12 && (a.high - b.high).abs() < 1e-12);

        let one = Sample::seeds(&[1.0, 2.0, 7.0, 9.0]);
        let hier = replicate_means(&one, 500, &mut stream(4, &[0]), &mut stream(4, &[1]));
        assert_eq!(hier, plain_replicates(&[1.0, 2.0, 7.0, 9.0], 500, &mut stream(4, &[1])));

        // by hand: two runs {0, 0} and {1, 3}; the hierarchical replicate
        // means can only be averages of two resampled run means, each of
        // run 1 in {0} and of run 2 in {1, 2, 3}: so in {0, 0.5, 1, 1.5, 2, 2.5, 3}
        let two = Sample {
            groups: vec![vec![0.0, 0.0], vec![1.0, 3.0]],
            undefined: 0,
        };
        for r in replicate_means(&two, 300, &mut stream(1, &[0]), &mut stream(1, &[1])) {
            assert!([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0].contains(&r), "{r}");
        }
    }
}
