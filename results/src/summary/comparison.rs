//! Each arm against the reference arm, metric by metric: the Mann–Whitney U
//! test over the per-seed values, Cliff's delta and A12, and the Holm
//! adjustment across the metrics of that arm.

use super::{ArmSummary, MetricStats};
use crate::stats::{ALPHA, MannWhitney, a12_from_delta, cliffs_delta, holm, mann_whitney};
use serde::Serialize;

/// How reports compare an arm with the reference arm; printed with them.
pub const VS_REFERENCE: &str = "Against the reference arm (`default` when the scenario has it, otherwise the first \
                                arm), per metric, over the runs in which the metric is defined: the median of the \
                                per-seed values (the middle value, or the mean of the two middle values); a \
                                two-sided Mann–Whitney U test of the arm's values against the reference's (exact \
                                permutation distribution of the mid-ranks, ties included, when both sides together have at \
                                most 50 values, otherwise the normal approximation with tie and continuity \
                                correction; the method is printed beside each p); Cliff's delta = P(arm > reference) − P(arm < \
                                reference) over all pairs of runs, and Vargha–Delaney A12 = P(arm > reference) + \
                                P(tie)/2 = (delta + 1)/2, both of the metric's values whatever its better direction; \
                                the p-values of one arm's metrics are Holm–Bonferroni adjusted together, and a \
                                difference is significant when the adjusted p is below 0.05. A metric whose values \
                                are all equal on both sides (p = 1 whatever the split) cannot differ and is left out \
                                of that family (its adjusted p is 1). With 3 runs against 3 the smallest possible p \
                                is 0.1: few seeds cannot show significance.";

/// One metric of one arm against the same metric of the reference arm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VsReference {
    /// the arm's values (x) against the reference's (y)
    pub test: MannWhitney,
    /// Holm-adjusted across the metrics of this arm's comparison
    pub p_holm: f64,
    /// Cliff's delta of the arm against the reference, in [−1, 1]
    pub cliffs_delta: f64,
    /// Vargha–Delaney A12 = (delta + 1)/2
    pub a12: f64,
    /// `p_holm` < [`ALPHA`]
    pub significant: bool,
    /// the tests of this arm's Holm family (metrics defined on both sides
    /// whose values are not all equal)
    pub family_size: usize,
}

/// Fills `vs_reference` of every metric of `arm` against `reference`.
pub(super) fn compare(arm: &mut ArmSummary, reference: &ArmSummary) {
    let raw: Vec<Option<(MannWhitney, f64)>> = arm
        .metrics
        .iter()
        .zip(&reference.metrics)
        .map(|(m, r)| {
            let (x, y) = (m.defined_values(), r.defined_values());
            Some((mann_whitney(&x, &y)?, cliffs_delta(&x, &y)?))
        })
        .collect();
    // A comparison whose pooled values are all equal has p = 1 under every
    // split of them: it cannot reject, and counting it would only make every
    // other test of the family harder to pass.
    let tied: Vec<bool> = arm
        .metrics
        .iter()
        .zip(&reference.metrics)
        .map(|(m, r)| {
            let pooled: Vec<f64> = m.defined_values().into_iter().chain(r.defined_values()).collect();
            pooled.windows(2).all(|w| w[0] == w[1])
        })
        .collect();
    let p: Vec<Option<f64>> = raw
        .iter()
        .zip(&tied)
        .map(|(t, &tied)| t.filter(|_| !tied).map(|(mw, _)| mw.p))
        .collect();
    let family_size = p.iter().flatten().count();
    let adjusted = holm(&p);
    for (((m, t), p_holm), tied) in arm.metrics.iter_mut().zip(raw).zip(adjusted).zip(tied) {
        let p_holm = if tied { Some(1.0) } else { p_holm };
        m.vs_reference = match (t, p_holm) {
            (Some((test, delta)), Some(p_holm)) => Some(VsReference {
                test,
                p_holm,
                cliffs_delta: delta,
                a12: a12_from_delta(delta),
                significant: p_holm < ALPHA,
                family_size,
            }),
            _ => None,
        };
    }
}

impl MetricStats {
    /// The values of the runs in which the metric is defined, in seed order.
    pub fn defined_values(&self) -> Vec<f64> {
        self.values.iter().filter_map(|(_, v)| *v).collect()
    }
}
