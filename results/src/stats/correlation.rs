//! Pearson and Spearman correlation, and their bootstrap intervals.
//!
//! Both coefficients are computed as weighted sums over the original points,
//! the weight of a point being how often a resample drew it. A resample then
//! costs O(n) instead of a sort, and Spearman's average ranks of a resample
//! follow from per-value counts (a value drawn c times after b smaller draws
//! has average rank b + (c + 1)/2), exactly as if the resample were expanded.

use super::bootstrap::{Interval, percentile_interval};
use rand::Rng;
use serde::Serialize;

/// Pearson's r of paired samples. `None` if the lengths differ, n < 3, a
/// value is not finite, or either side has zero variance.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let points = Points::new(x, y)?;
    let w = vec![1u32; points.n()];
    points.pearson(&w)
}

/// Spearman's rho: Pearson's r of the average ranks (ties share the mean of
/// the ranks they span). Undefined as for [`pearson`].
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    let points = Points::new(x, y)?;
    let w = vec![1u32; points.n()];
    points.spearman(&w)
}

/// 1-based ranks of `values`, tied values sharing the average of their ranks.
/// Non-finite values are ordered by IEEE total order.
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let groups = Groups::new(values);
    let ones = vec![1u32; values.len()];
    let group_ranks = groups.average_ranks(&ones);
    groups.of.iter().map(|&g| group_ranks[g]).collect()
}

/// A point estimate with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    /// percentile-bootstrap interval; `None` if no resample had it defined
    pub ci: Option<Interval>,
    /// resamples in which the statistic was undefined (a side with zero
    /// variance) and that the interval therefore leaves out
    pub undefined_resamples: usize,
}

/// Pearson and Spearman coefficients of paired samples with their intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CorrelationEstimate {
    pub n: usize,
    pub resamples: usize,
    pub pearson: Option<Estimate>,
    pub spearman: Option<Estimate>,
}

/// Calls `each` with the weights of `resamples` bootstrap resamples of `n`
/// points (how often each point was drawn, with replacement), one buffer
/// reused for all of them.
fn for_each_resample(n: usize, resamples: usize, rng: &mut impl Rng, mut each: impl FnMut(&[u32])) {
    let mut w = vec![0u32; n];
    for _ in 0..resamples {
        w.iter_mut().for_each(|c| *c = 0);
        for _ in 0..n {
            w[rng.random_range(0..n)] += 1;
        }
        each(&w);
    }
}

/// Pearson's r and Spearman's rho of `(x, y)` with percentile-bootstrap
/// intervals from `resamples` resamples of the pairs drawn from `rng`.
pub fn correlation_ci(
    x: &[f64],
    y: &[f64],
    confidence: f64,
    resamples: usize,
    rng: &mut impl Rng,
) -> CorrelationEstimate {
    let n = x.len().min(y.len());
    let Some(points) = Points::new(x, y) else {
        return CorrelationEstimate {
            n,
            resamples,
            pearson: None,
            spearman: None,
        };
    };
    let ones = vec![1u32; n];
    let r = points.pearson(&ones);
    let rho = points.spearman(&ones);
    let mut r_reps = Vec::with_capacity(resamples);
    let mut rho_reps = Vec::with_capacity(resamples);
    if r.is_some() || rho.is_some() {
        for_each_resample(n, resamples, rng, |w| {
            r_reps.extend(points.pearson(w));
            rho_reps.extend(points.spearman(w));
        });
    }
    let estimate = |value: Option<f64>, reps: &mut Vec<f64>| {
        value.map(|value| Estimate {
            value,
            ci: percentile_interval(reps, confidence),
            undefined_resamples: resamples - reps.len(),
        })
    };
    CorrelationEstimate {
        n,
        resamples,
        pearson: estimate(r, &mut r_reps),
        spearman: estimate(rho, &mut rho_reps),
    }
}

/// The correlation of paired samples within groups, with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PartialEstimate {
    pub n: usize,
    /// distinct groups among the points
    pub groups: usize,
    pub resamples: usize,
    pub pearson: Option<Estimate>,
}

/// The partial correlation of `x` and `y` controlling for a categorical
/// `group`: Pearson's r of the residuals x − (mean x of the point's group)
/// and y − (mean y of the point's group), the pooled within-group
/// correlation. A correlation that only comes from groups differing in both
/// means vanishes here. `None` if the lengths differ, a value is not finite,
/// there are fewer than 3 points, fewer than 2 residual degrees of freedom
/// (points minus groups), or either side is constant within every group.
pub fn partial_pearson(x: &[f64], y: &[f64], group: &[u64]) -> Option<f64> {
    let g = GroupedPoints::new(x, y, group)?;
    g.pearson(&vec![1u32; g.x.len()])
}

/// [`partial_pearson`] with a percentile-bootstrap interval from `resamples`
/// resamples of the points (group means recomputed in every resample).
pub fn partial_correlation_ci(
    x: &[f64],
    y: &[f64],
    group: &[u64],
    confidence: f64,
    resamples: usize,
    rng: &mut impl Rng,
) -> PartialEstimate {
    let n = x.len().min(y.len()).min(group.len());
    let Some(points) = GroupedPoints::new(x, y, group) else {
        let mut distinct = group.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        return PartialEstimate {
            n,
            groups: distinct.len(),
            resamples,
            pearson: None,
        };
    };
    let value = points.pearson(&vec![1u32; n]);
    let mut reps = Vec::with_capacity(resamples);
    if value.is_some() {
        for_each_resample(n, resamples, rng, |w| reps.extend(points.pearson(w)));
    }
    PartialEstimate {
        n,
        groups: points.groups,
        resamples,
        pearson: value.map(|value| Estimate {
            value,
            ci: percentile_interval(&mut reps, confidence),
            undefined_resamples: resamples - reps.len(),
        }),
    }
}

/// Points with a dense group index each.
struct GroupedPoints<'a> {
    x: &'a [f64],
    y: &'a [f64],
    of: Vec<usize>,
    groups: usize,
}

impl<'a> GroupedPoints<'a> {
    fn new(x: &'a [f64], y: &'a [f64], group: &[u64]) -> Option<GroupedPoints<'a>> {
        if x.len() != y.len() || x.len() != group.len() || x.len() < 3 || x.iter().chain(y).any(|v| !v.is_finite()) {
            return None;
        }
        let mut distinct = group.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let of = group
            .iter()
            .map(|g| distinct.binary_search(g).unwrap_or_default())
            .collect();
        Some(GroupedPoints {
            x,
            y,
            of,
            groups: distinct.len(),
        })
    }

    /// Whether the drawn values vary within at least one group, decided on
    /// the values exactly (as [`Groups::varies`]).
    fn varies_within(&self, values: &[f64], w: &[u32]) -> bool {
        let mut first: Vec<Option<f64>> = vec![None; self.groups];
        for ((&g, &v), &wi) in self.of.iter().zip(values).zip(w) {
            if wi == 0 {
                continue;
            }
            match first[g] {
                None => first[g] = Some(v),
                Some(f) if f != v => return true,
                Some(_) => {}
            }
        }
        false
    }

    fn pearson(&self, w: &[u32]) -> Option<f64> {
        let mut weight = vec![0.0f64; self.groups];
        let mut sum_x = vec![0.0f64; self.groups];
        let mut sum_y = vec![0.0f64; self.groups];
        for (i, &g) in self.of.iter().enumerate() {
            let wi = f64::from(w[i]);
            weight[g] += wi;
            sum_x[g] += wi * self.x[i];
            sum_y[g] += wi * self.y[i];
        }
        let drawn_groups = weight.iter().filter(|&&c| c > 0.0).count() as f64;
        let total: f64 = weight.iter().sum();
        if total - drawn_groups < 2.0 || !self.varies_within(self.x, w) || !self.varies_within(self.y, w) {
            return None;
        }
        // undrawn points have weight 0 and do not count, whatever their residual
        let residuals = |values: &[f64], sums: &[f64]| -> Vec<f64> {
            self.of
                .iter()
                .zip(values)
                .map(|(&g, &v)| if weight[g] > 0.0 { v - sums[g] / weight[g] } else { 0.0 })
                .collect()
        };
        let (rx, ry) = (residuals(self.x, &sum_x), residuals(self.y, &sum_y));
        weighted_pearson(rx.into_iter(), ry.into_iter(), w)
    }
}

/// Distinct values of one side, ascending, and each point's value index.
struct Groups {
    of: Vec<usize>,
    count: usize,
}

impl Groups {
    fn new(values: &[f64]) -> Groups {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut of = vec![0; values.len()];
        let mut count = 0;
        let mut last: Option<f64> = None;
        for &i in &order {
            // `==` so that -0.0 and 0.0, adjacent in total order, tie
            if last != Some(values[i]) {
                count += 1;
            }
            of[i] = count - 1;
            last = Some(values[i]);
        }
        Groups { of, count }
    }

    /// Average rank of each distinct value when point i is drawn `w[i]` times.
    fn average_ranks(&self, w: &[u32]) -> Vec<f64> {
        let mut counts = vec![0u64; self.count];
        for (&g, &wi) in self.of.iter().zip(w) {
            counts[g] += u64::from(wi);
        }
        let mut before = 0u64;
        counts
            .iter()
            .map(|&c| {
                let rank = before as f64 + (c as f64 + 1.0) / 2.0;
                before += c;
                rank
            })
            .collect()
    }

    /// Whether the drawn points take at least two distinct values.
    fn varies(&self, w: &[u32]) -> bool {
        let mut first = None;
        for (&g, &wi) in self.of.iter().zip(w) {
            if wi == 0 {
                continue;
            }
            match first {
                None => first = Some(g),
                Some(f) if f != g => return true,
                Some(_) => {}
            }
        }
        false
    }
}

struct Points<'a> {
    x: &'a [f64],
    y: &'a [f64],
    gx: Groups,
    gy: Groups,
}

impl<'a> Points<'a> {
    fn new(x: &'a [f64], y: &'a [f64]) -> Option<Points<'a>> {
        if x.len() != y.len() || x.len() < 3 || x.iter().chain(y).any(|v| !v.is_finite()) {
            return None;
        }
        Some(Points {
            x,
            y,
            gx: Groups::new(x),
            gy: Groups::new(y),
        })
    }

    fn n(&self) -> usize {
        self.x.len()
    }

    /// Zero variance is decided on the distinct values, exactly, rather than
    /// on a floating-point sum of squares that rounding may leave above 0.
    fn defined(&self, w: &[u32]) -> bool {
        self.gx.varies(w) && self.gy.varies(w)
    }

    fn pearson(&self, w: &[u32]) -> Option<f64> {
        if !self.defined(w) {
            return None;
        }
        weighted_pearson(self.x.iter().copied(), self.y.iter().copied(), w)
    }

    fn spearman(&self, w: &[u32]) -> Option<f64> {
        if !self.defined(w) {
            return None;
        }
        let rx = self.gx.average_ranks(w);
        let ry = self.gy.average_ranks(w);
        weighted_pearson(self.gx.of.iter().map(|&g| rx[g]), self.gy.of.iter().map(|&g| ry[g]), w)
    }
}

fn weighted_pearson(
    x: impl Iterator<Item = f64> + Clone,
    y: impl Iterator<Item = f64> + Clone,
    w: &[u32],
) -> Option<f64> {
    pearson_weighted_by(x, y, w.iter().map(|&wi| f64::from(wi)))
}

/// Pearson's r of points that each stand for `w[i]` equal pairs: [`pearson`]
/// of the pairs spelt out, without spelling them out (the memory plot pools
/// the pods of thousands of runs by their distinct values). Undefined as
/// for [`pearson`]: unequal lengths, fewer than 3 pairs, a value that is not
/// finite, or a side that does not vary.
pub fn pearson_of_counts(x: &[f64], y: &[f64], w: &[u64]) -> Option<f64> {
    let drawn = || x.iter().zip(y).zip(w).filter(|(_, w)| **w > 0).map(|(p, _)| p);
    let varies = |side: fn(&(&f64, &f64)) -> f64| {
        let mut values = drawn().map(|p| side(&p));
        values.next().is_some_and(|first| values.any(|v| v != first))
    };
    if x.len() != y.len()
        || x.len() != w.len()
        || w.iter().sum::<u64>() < 3
        || x.iter().chain(y).any(|v| !v.is_finite())
        || !varies(|p| *p.0)
        || !varies(|p| *p.1)
    {
        return None;
    }
    pearson_weighted_by(x.iter().copied(), y.iter().copied(), w.iter().map(|&wi| wi as f64))
}

fn pearson_weighted_by(
    x: impl Iterator<Item = f64> + Clone,
    y: impl Iterator<Item = f64> + Clone,
    weights: impl Iterator<Item = f64> + Clone,
) -> Option<f64> {
    let total: f64 = weights.clone().sum();
    if total <= 0.0 {
        return None;
    }
    let weights = || weights.clone();
    let mx = x.clone().zip(weights()).map(|(v, wi)| v * wi).sum::<f64>() / total;
    let my = y.clone().zip(weights()).map(|(v, wi)| v * wi).sum::<f64>() / total;
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for ((xi, yi), wi) in x.zip(y).zip(weights()) {
        let (dx, dy) = (xi - mx, yi - my);
        sxx += wi * dx * dx;
        syy += wi * dy * dy;
        sxy += wi * dx * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    let r = sxy / (sxx.sqrt() * syy.sqrt());
    r.is_finite().then_some(r.clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::CONFIDENCE;
    use schedlab_core::rng::{purpose, stream};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn pearson_by_hand() {
        // x = 1,2,3,4,5; y = 2,4,5,4,5. Means 3 and 4; dx = -2..2;
        // dy = -2,0,1,0,1. Sxy = 4+0+0+0+2 = 6, Sxx = 10, Syy = 6.
        // r = 6 / sqrt(60)
        let r = pearson(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 5.0, 4.0, 5.0]).unwrap();
        assert!(close(r, 6.0 / 60f64.sqrt()), "{r}");
        let neg = pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap();
        assert!(close(neg, -1.0));
    }

    #[test]
    fn counted_points_are_the_pairs_spelt_out() {
        // (1,2) twice, (3,5) once, (4,4) three times
        let spelt = pearson(&[1.0, 1.0, 3.0, 4.0, 4.0, 4.0], &[2.0, 2.0, 5.0, 4.0, 4.0, 4.0]).unwrap();
        let counted = pearson_of_counts(&[1.0, 3.0, 4.0], &[2.0, 5.0, 4.0], &[2, 1, 3]).unwrap();
        assert!(close(spelt, counted), "{spelt} {counted}");
        // undefined where pearson is: too few pairs, a side that does not vary (an uncounted point
        // does not make it vary), unequal lengths, a value that is not finite
        assert_eq!(pearson_of_counts(&[1.0, 2.0], &[1.0, 2.0], &[1, 1]), None);
        assert_eq!(pearson_of_counts(&[1.0, 1.0, 2.0], &[1.0, 2.0, 3.0], &[2, 3, 0]), None);
        assert_eq!(pearson_of_counts(&[1.0, 2.0], &[1.0, 2.0], &[2]), None);
        assert_eq!(pearson_of_counts(&[1.0, f64::NAN], &[1.0, 2.0], &[2, 2]), None);
        assert!(pearson_of_counts(&[1.0, 2.0], &[1.0, 2.0], &[1, 2]).is_some());
    }

    #[test]
    fn average_ranks_share_ties() {
        assert_eq!(
            average_ranks(&[10.0, 20.0, 20.0, 5.0, 20.0]),
            vec![2.0, 4.0, 4.0, 1.0, 4.0]
        );
        assert_eq!(average_ranks(&[1.0, 1.0]), vec![1.5, 1.5]);
    }

    #[test]
    fn spearman_by_hand_with_ties() {
        // x = 1,2,3,4,5 → ranks 1..5; y = 2,4,5,4,5 → ranks 1, 2.5, 4.5, 2.5, 4.5.
        // Means 3 and 3; dy = -2, -0.5, 1.5, -0.5, 1.5.
        // Sxy = 4 + 0.5 + 0 - 0.5 + 3 = 7; Sxx = 10; Syy = 4 + .25 + 2.25 + .25 + 2.25 = 9.
        let rho = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 5.0, 4.0, 5.0]).unwrap();
        assert!(close(rho, 7.0 / 90f64.sqrt()), "{rho}");
        // monotone but not linear: rho 1, r below 1
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [1.0, 10.0, 100.0, 1000.0];
        assert!(close(spearman(&x, &y).unwrap(), 1.0));
        assert!(pearson(&x, &y).unwrap() < 0.99);
    }

    #[test]
    fn undefined_cases_are_none() {
        assert_eq!(pearson(&[1.0, 2.0], &[1.0, 2.0]), None, "n < 3");
        assert_eq!(pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None, "zero variance");
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[4.0, 4.0, 4.0]), None, "zero variance");
        assert_eq!(pearson(&[1.0, 2.0, 3.0], &[1.0, 2.0]), None, "length mismatch");
        assert_eq!(pearson(&[1.0, f64::NAN, 3.0], &[1.0, 2.0, 3.0]), None, "NaN");
        let c = correlation_ci(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0], CONFIDENCE, 100, &mut stream(1, &[]));
        assert_eq!(c.n, 3);
        assert!(c.pearson.is_none() && c.spearman.is_none());
    }

    #[test]
    fn partial_correlation_removes_the_group_mix() {
        // Two groups, uncorrelated within each, far apart in both means:
        // the pooled r is strong, the within-group r is 0.
        let x = [1000.0, 1100.0, 1000.0, 1100.0, 5000.0, 5100.0, 5000.0, 5100.0];
        let y = [0.0, 0.0, 1.0, 1.0, 4.0, 4.0, 5.0, 5.0];
        let g = [0, 0, 0, 0, 1, 1, 1, 1];
        assert!(pearson(&x, &y).unwrap() > 0.96);
        assert!(close(partial_pearson(&x, &y, &g).unwrap(), 0.0));
        // requests that vary within each workload and go with its failures
        // (vertically autoscaled pods): the within-workload r is theirs,
        // Σxy / √(Σx² Σy²) = 2 / √5 per group, whatever the groups' means
        let vx = [1.0, 2.0, 3.0, 4.0, 11.0, 12.0, 13.0, 14.0];
        let vy = [0.0, 0.0, 1.0, 1.0, 5.0, 5.0, 6.0, 6.0];
        assert!(close(partial_pearson(&vx, &vy, &g).unwrap(), 2.0 / 5f64.sqrt()));
        // one group: the partial correlation is the plain one
        let one = [7u64; 8];
        assert!(close(partial_pearson(&x, &y, &one).unwrap(), pearson(&x, &y).unwrap()));
        // constant within every group: undefined
        assert_eq!(
            partial_pearson(&[1.0, 1.0, 2.0, 2.0], &[0.0, 1.0, 0.0, 1.0], &[0, 0, 1, 1]),
            None
        );
        // 3 points in 2 groups leave 1 degree of freedom: undefined
        assert_eq!(partial_pearson(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0], &[0, 0, 1]), None);
        let c = partial_correlation_ci(&x, &y, &g, CONFIDENCE, 200, &mut stream(5, &[]));
        assert_eq!((c.n, c.groups), (8, 2));
        let e = c.pearson.unwrap();
        assert!(close(e.value, 0.0) && e.ci.unwrap().contains(0.0), "{e:?}");
    }

    #[test]
    fn weighted_resample_matches_expanded_resample() {
        let x = [1.0, 5.0, 5.0, 2.0, 9.0];
        let y = [0.0, 3.0, 1.0, 1.0, 7.0];
        let w = [2u32, 0, 1, 1, 3];
        let points = Points::new(&x, &y).unwrap();
        let (mut ex, mut ey) = (vec![], vec![]);
        for i in 0..x.len() {
            for _ in 0..w[i] {
                ex.push(x[i]);
                ey.push(y[i]);
            }
        }
        assert!(close(points.pearson(&w).unwrap(), pearson(&ex, &ey).unwrap()));
        assert!(close(points.spearman(&w).unwrap(), spearman(&ex, &ey).unwrap()));
    }

    #[test]
    fn bootstrap_interval_is_seeded_and_covers_the_estimate() {
        let x: Vec<f64> = (0..60).map(|i| f64::from(i % 7) * 256.0).collect();
        let y: Vec<f64> = (0..60).map(|i| f64::from((i % 7) / 2 + (i % 3))).collect();
        let a = correlation_ci(&x, &y, CONFIDENCE, 500, &mut stream(3, &[purpose::STATISTICS]));
        let b = correlation_ci(&x, &y, CONFIDENCE, 500, &mut stream(3, &[purpose::STATISTICS]));
        assert_eq!(a, b);
        let r = a.pearson.unwrap();
        let rho = a.spearman.unwrap();
        assert!(close(r.value, pearson(&x, &y).unwrap()));
        assert!(close(rho.value, spearman(&x, &y).unwrap()));
        assert!(r.ci.unwrap().contains(r.value), "{r:?}");
        assert!(rho.ci.unwrap().contains(rho.value), "{rho:?}");
        assert_eq!(r.undefined_resamples, 0);
    }
}
