//! How well each of the actor's three heads predicts what its placements
//! realise, and how much of what it says differs between the nodes of one
//! decision.
//!
//! A head that predicts well on average can still be useless to the
//! controller: the controller compares the candidates of one pod, so what
//! matters is (a) whether the scores separate placements that fail from
//! placements that survive, and (b) how much of a head's variation lies
//! across the candidate nodes of one decision rather than between pods.
//! [`HeadStats`] accumulates both over any number of decisions (an episode,
//! an evaluation over many seeds) and [`HeadReport`] states them:
//!
//! - **AUC** of the fault-tolerance head: the probability that a placement
//!   that survived its horizon scored higher than one that failed (ties
//!   count one half), over placements with an observed label. Censored
//!   placements (deleted, or still running at the end, before the horizon)
//!   carry a survival *estimate*, not an observation, and are left out.
//! - **R²** and **Brier score** (the mean squared error of a prediction in
//!   [0, 1]; for the binary fault-tolerance label it is Brier's score proper)
//!   per head, over the measured labels (fault tolerance: observed ones
//!   only); **RMSE** is the Brier score's square root, in score units, the
//!   head's own error that a selection should not decide below.
//! - **Across-candidate share** per head: of the variance of the head's
//!   scores over every (decision, candidate) pair, the share that lies
//!   within decisions (across the candidates of one pod) rather than
//!   between decisions. A head whose scores move only with the pod has a
//!   share near 0 and cannot tell nodes apart, however well it predicts.
//!
//! Every number is None when its sample cannot define it (no label, one
//! class only, no variance).

use serde::Serialize;

/// One bind: the chosen node's noiseless scores and what the placement
/// realised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadSample {
    /// the network's scores of the chosen node, before exploration noise
    pub predicted: [f32; 3],
    /// the realised `[fault tolerance, utilisation, cost]`
    pub realised: [f32; 3],
    /// which realised metrics were measured
    pub known: [bool; 3],
    /// the fault-tolerance label is a survival estimate, not an observation
    pub censored: bool,
}

/// Running sums of one head over the placements with a label.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Fit {
    n: u64,
    sum_y: f64,
    sum_y2: f64,
    sum_sq_err: f64,
}

impl Fit {
    fn push(&mut self, predicted: f64, y: f64) {
        self.n += 1;
        self.sum_y += y;
        self.sum_y2 += y * y;
        self.sum_sq_err += (predicted - y) * (predicted - y);
    }

    fn merge(&mut self, other: &Fit) {
        self.n += other.n;
        self.sum_y += other.sum_y;
        self.sum_y2 += other.sum_y2;
        self.sum_sq_err += other.sum_sq_err;
    }

    fn brier(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_sq_err / self.n as f64)
    }

    fn r2(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let n = self.n as f64;
        let total = self.sum_y2 - self.sum_y * self.sum_y / n;
        // a constant label has no variance to explain
        (total > 1e-12).then(|| 1.0 - self.sum_sq_err / total)
    }
}

/// Running sums of one head's scores over the candidates of decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Spread {
    /// candidates over every decision
    n: u64,
    sum: f64,
    sum_sq: f64,
    /// Σ over decisions of the squared deviations from the decision's mean
    within: f64,
}

impl Spread {
    fn merge(&mut self, other: &Spread) {
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.within += other.within;
    }

    fn share(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let total = self.sum_sq - self.sum * self.sum / self.n as f64;
        (total > 1e-12).then(|| (self.within / total).clamp(0.0, 1.0))
    }
}

/// Accumulates head diagnostics over decisions; see the module docs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeadStats {
    placements: u64,
    censored: u64,
    fits: [Fit; 3],
    /// (fault-tolerance score, survived) of every observed label
    ft_labels: Vec<(f32, bool)>,
    spreads: [Spread; 3],
    decisions: u64,
}

impl HeadStats {
    /// Adds one bind's prediction and outcome. Non-finite values are left out.
    pub fn push_placement(&mut self, s: &HeadSample) {
        self.placements += 1;
        if s.censored {
            self.censored += 1;
        }
        for o in 0..3 {
            let (p, y) = (s.predicted[o], s.realised[o]);
            if !s.known[o] || !p.is_finite() || !y.is_finite() {
                continue;
            }
            if o == 0 {
                if s.censored {
                    continue;
                }
                self.ft_labels.push((p, y >= 0.5));
            }
            self.fits[o].push(f64::from(p), f64::from(y));
        }
    }

    /// Adds the noiseless scores of every candidate of one decision.
    pub fn push_decision(&mut self, scores: &[[f32; 3]]) {
        if scores.is_empty() {
            return;
        }
        self.decisions += 1;
        for (o, spread) in self.spreads.iter_mut().enumerate() {
            let values = scores.iter().map(|s| f64::from(s[o])).filter(|v| v.is_finite());
            let (mut n, mut sum, mut sum_sq) = (0u64, 0.0f64, 0.0f64);
            for v in values {
                n += 1;
                sum += v;
                sum_sq += v * v;
            }
            if n == 0 {
                continue;
            }
            spread.n += n;
            spread.sum += sum;
            spread.sum_sq += sum_sq;
            spread.within += (sum_sq - sum * sum / n as f64).max(0.0);
        }
    }

    /// Adds everything `other` accumulated.
    pub fn merge(&mut self, other: &HeadStats) {
        self.placements += other.placements;
        self.censored += other.censored;
        self.decisions += other.decisions;
        for (a, b) in self.fits.iter_mut().zip(&other.fits) {
            a.merge(b);
        }
        for (a, b) in self.spreads.iter_mut().zip(&other.spreads) {
            a.merge(b);
        }
        self.ft_labels.extend_from_slice(&other.ft_labels);
    }

    pub fn report(&self) -> HeadReport {
        let failures = self.ft_labels.iter().filter(|(_, survived)| !survived).count() as u64;
        HeadReport {
            decisions: self.decisions,
            placements: self.placements,
            censored: self.censored,
            ft_observed: self.ft_labels.len() as u64,
            ft_failures: failures,
            auc_ft: auc(&self.ft_labels),
            brier: self.fits.map(|f| f.brier()),
            rmse: self.fits.map(|f| f.brier().map(f64::sqrt)),
            r2: self.fits.map(|f| f.r2()),
            across_candidates: self.spreads.map(|s| s.share()),
        }
    }
}

/// What [`HeadStats`] found; arrays are `[fault tolerance, utilisation, cost]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadReport {
    /// decisions with candidates whose scores were seen
    pub decisions: u64,
    /// binds with an outcome
    pub placements: u64,
    /// of those, binds whose fault tolerance was censored
    pub censored: u64,
    /// binds with an observed fault-tolerance label
    pub ft_observed: u64,
    /// of those, the failures
    pub ft_failures: u64,
    pub auc_ft: Option<f64>,
    pub brier: [Option<f64>; 3],
    pub rmse: [Option<f64>; 3],
    pub r2: [Option<f64>; 3],
    pub across_candidates: [Option<f64>; 3],
}

/// The area under the ROC curve of `score` for `positive` (the
/// Mann–Whitney form, ties counting one half); None without both classes.
pub fn auc(labelled: &[(f32, bool)]) -> Option<f64> {
    let positives = labelled.iter().filter(|(_, p)| *p).count();
    let negatives = labelled.len() - positives;
    if positives == 0 || negatives == 0 {
        return None;
    }
    let mut sorted: Vec<(f32, bool)> = labelled.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    // sum of the positives' ranks, tied scores sharing their average rank
    let mut rank_sum = 0.0f64;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j < sorted.len() && sorted[j].0 == sorted[i].0 {
            j += 1;
        }
        let average_rank = (i + 1 + j) as f64 / 2.0;
        rank_sum += average_rank * sorted[i..j].iter().filter(|(_, p)| *p).count() as f64;
        i = j;
    }
    let (p, n) = (positives as f64, negatives as f64);
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ft: f32, survived: bool) -> HeadSample {
        HeadSample {
            predicted: [ft, 0.5, 0.5],
            realised: [if survived { 1.0 } else { 0.0 }, 0.5, 0.5],
            known: [true, false, false],
            censored: false,
        }
    }

    #[test]
    fn auc_of_perfect_reversed_tied_and_one_class_samples() {
        assert_eq!(auc(&[(0.9, true), (0.8, true), (0.1, false)]), Some(1.0));
        assert_eq!(auc(&[(0.1, true), (0.9, false)]), Some(0.0));
        assert_eq!(auc(&[(0.5, true), (0.5, false)]), Some(0.5));
        // one of the two positives outranks the negative, the other ties it
        assert_eq!(auc(&[(0.9, true), (0.4, true), (0.4, false)]), Some(0.75));
        assert_eq!(auc(&[(0.9, true)]), None);
        assert_eq!(auc(&[]), None);
    }

    #[test]
    fn censored_labels_stay_out_of_the_fault_tolerance_head() {
        let mut s = HeadStats::default();
        s.push_placement(&sample(0.9, true));
        s.push_placement(&sample(0.2, false));
        s.push_placement(&HeadSample {
            censored: true,
            realised: [0.7, 0.5, 0.5],
            ..sample(0.1, true)
        });
        let r = s.report();
        assert_eq!((r.placements, r.censored, r.ft_observed, r.ft_failures), (3, 1, 2, 1));
        assert_eq!(r.auc_ft, Some(1.0));
        // (0.1² + 0.2²) / 2
        assert!((r.brier[0].unwrap() - 0.025).abs() < 1e-6, "{r:?}");
        assert!((r.rmse[0].unwrap() - 0.025f64.sqrt()).abs() < 1e-6);
        // labels 1 and 0: total sum of squares 0.5, so R² = 1 − 0.05/0.5
        assert!((r.r2[0].unwrap() - 0.9).abs() < 1e-6, "{r:?}");
        // utilisation and cost were not measured
        assert_eq!((r.brier[1], r.r2[2]), (None, None));
    }

    #[test]
    fn r2_is_undefined_for_a_constant_label_and_negative_for_a_bad_head() {
        let mut s = HeadStats::default();
        for p in [0.2, 0.4] {
            s.push_placement(&HeadSample {
                predicted: [0.5, p, 0.5],
                realised: [1.0, 0.3, 0.5],
                known: [false, true, false],
                censored: false,
            });
        }
        assert_eq!(s.report().r2[1], None);
        let mut bad = HeadStats::default();
        for (p, y) in [(1.0, 0.0), (0.0, 1.0)] {
            bad.push_placement(&HeadSample {
                predicted: [0.5, 0.5, p],
                realised: [1.0, 0.5, y],
                known: [false, false, true],
                censored: false,
            });
        }
        // every error is 1, the labels' variance 0.5: R² = 1 − 2/0.5
        assert!((bad.report().r2[2].unwrap() + 3.0).abs() < 1e-9);
    }

    #[test]
    fn across_candidate_share_separates_node_variation_from_pod_variation() {
        // fault tolerance varies only between decisions, cost only within them,
        // utilisation both ways equally
        let mut s = HeadStats::default();
        s.push_decision(&[[0.2, 0.0, 0.0], [0.2, 1.0, 1.0]]);
        s.push_decision(&[[0.8, 0.0, 0.0], [0.8, 1.0, 1.0]]);
        let r = s.report();
        assert_eq!(r.decisions, 2);
        assert_eq!(r.across_candidates[0], Some(0.0));
        assert_eq!(r.across_candidates[2], Some(1.0));
        // utilisation is the same as cost here: within decisions only
        assert_eq!(r.across_candidates[1], Some(1.0));
        let mut mixed = HeadStats::default();
        mixed.push_decision(&[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        mixed.push_decision(&[[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]]);
        // values 0,1 | 1,2: total SS 2, within 0.5 + 0.5
        assert_eq!(mixed.report().across_candidates[1], Some(0.5));
        // a single candidate or a constant head defines no share
        assert_eq!(mixed.report().across_candidates[0], None);
    }

    #[test]
    fn merging_equals_accumulating_in_one() {
        let (mut a, mut b, mut all) = (HeadStats::default(), HeadStats::default(), HeadStats::default());
        let first = [sample(0.9, true), sample(0.3, false)];
        let second = [sample(0.6, true), sample(0.7, false)];
        for x in &first {
            a.push_placement(x);
            all.push_placement(x);
        }
        for x in &second {
            b.push_placement(x);
            all.push_placement(x);
        }
        a.push_decision(&[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]);
        all.push_decision(&[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]);
        a.merge(&b);
        assert_eq!(a.report(), all.report());
        assert_eq!(a.report().auc_ft, Some(0.75));
    }
}
