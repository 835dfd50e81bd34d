//! Fault-tolerance labels of censored placements: a survival estimate, not
//! a success.
//!
//! A placement whose pod was deleted, or whose run ended, before the horizon
//! `H` and before any failure is censored at `c` = [`Realised::observed`]:
//! it is known to have survived `c`, not `H`. Counting it as a success (what
//! the labels did before) makes placements that churn deletes early look
//! safe; leaving it out biases the other way, since failures are seen early
//! and survivals only late. Its label is instead the Kaplan–Meier estimate of
//! surviving to `H` given survival to `c`, `Ŝ(H) ÷ Ŝ(c)`, where `Ŝ` is the
//! Kaplan–Meier survival curve of the episode's placements of the same
//! workload (time since the bind; a failure is the event; a censored
//! placement leaves the risk set at `c`; a success or the horizon is
//! survival to `H`). A workload with fewer than [`MIN_WORKLOAD_PLACEMENTS`]
//! placements in the episode uses the curve of all the episode's placements
//! instead. Uncensored labels (0 for a failure in the horizon, 1 for
//! survival or success) are kept as measured.
//!
//! This assumes censoring tells nothing about the pod's own risk beyond its
//! workload (churn deletes pods at random; a run's end is a clock), the usual
//! assumption of Kaplan–Meier.

use crate::agmarl::train::realised::{Realised, Settled};
use schedlab_core::pod::WorkloadId;
use schedlab_core::time::Span;
use std::collections::BTreeMap;

/// Below this many placements in an episode a workload's own curve is too
/// noisy: the episode's pooled curve is used.
pub const MIN_WORKLOAD_PLACEMENTS: usize = 20;

/// A Kaplan–Meier survival curve: the steps `(t, Ŝ(t))` at each failure time.
#[derive(Debug, Clone, PartialEq)]
pub struct SurvivalCurve {
    steps: Vec<(u64, f64)>,
}

impl SurvivalCurve {
    /// The curve of `(observed time, failed)` pairs; times in milliseconds.
    pub fn fit(mut observations: Vec<(u64, bool)>) -> SurvivalCurve {
        // at equal times failures come first: a pod censored at t was at
        // risk of the failures at t (the usual convention)
        observations.sort_unstable_by_key(|&(t, failed)| (t, !failed));
        let mut at_risk = observations.len();
        let mut survival = 1.0;
        let mut steps = Vec::new();
        let mut i = 0;
        while i < observations.len() {
            let t = observations[i].0;
            let (mut failures, mut leaving) = (0usize, 0usize);
            while i < observations.len() && observations[i].0 == t {
                failures += usize::from(observations[i].1);
                leaving += 1;
                i += 1;
            }
            if failures > 0 && at_risk > 0 {
                survival *= 1.0 - failures as f64 / at_risk as f64;
                steps.push((t, survival));
            }
            at_risk -= leaving;
        }
        SurvivalCurve { steps }
    }

    /// `Ŝ(t)`: the probability of surviving past `t`.
    pub fn at(&self, t: u64) -> f64 {
        match self.steps.partition_point(|&(s, _)| s <= t) {
            0 => 1.0,
            k => self.steps[k - 1].1,
        }
    }

    /// `Ŝ(h) ÷ Ŝ(c)`, the survival to `h` of one known to survive `c`; 0 when
    /// nobody survived `c` in the fit (every placement failed by then).
    pub fn conditional(&self, c: u64, h: u64) -> f64 {
        let at_c = self.at(c);
        if at_c <= 0.0 {
            return 0.0;
        }
        (self.at(h) / at_c).clamp(0.0, 1.0)
    }
}

/// The placement as a survival observation, with a horizon of `horizon`.
fn observation(r: &Realised, horizon: Span) -> (u64, bool) {
    let h = horizon.as_millis();
    match r.settled {
        Settled::Failed => (r.observed.as_millis().min(h), true),
        Settled::Deleted | Settled::RunEnded => (r.observed.as_millis().min(h), false),
        // known to survive the horizon: at risk of every failure before it
        Settled::Succeeded | Settled::HorizonPassed => (h, false),
    }
}

/// Replaces the fault-tolerance label of every censored placement in
/// `realised` (one episode's) by its survival estimate, and marks it known.
pub fn estimate_censored(realised: &mut [Realised], horizon: Span) {
    if !realised.iter().any(|r| r.settled.censored()) {
        return;
    }
    let pooled = SurvivalCurve::fit(realised.iter().map(|r| observation(r, horizon)).collect());
    let mut by_workload: BTreeMap<WorkloadId, Vec<(u64, bool)>> = BTreeMap::new();
    for r in realised.iter() {
        by_workload.entry(r.workload).or_default().push(observation(r, horizon));
    }
    let curves: BTreeMap<WorkloadId, SurvivalCurve> = by_workload
        .into_iter()
        .filter(|(_, obs)| obs.len() >= MIN_WORKLOAD_PLACEMENTS)
        .map(|(w, obs)| (w, SurvivalCurve::fit(obs)))
        .collect();
    let h = horizon.as_millis();
    for r in realised.iter_mut().filter(|r| r.settled.censored()) {
        let curve = curves.get(&r.workload).unwrap_or(&pooled);
        r.metrics[0] = curve.conditional(r.observed.as_millis().min(h), h) as f32;
        r.known[0] = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::node::NodeId;
    use schedlab_core::pod::PodId;
    use schedlab_core::time::Time;

    const H: u64 = 600_000;

    fn placement(pod: u64, workload: u32, settled: Settled, observed: u64) -> Realised {
        Realised {
            pod: PodId(pod),
            workload: WorkloadId(workload),
            node: NodeId(0),
            bound_at: Time(0),
            metrics: [if settled == Settled::Failed { 0.0 } else { 1.0 }, 0.5, 0.5],
            known: [!settled.censored(), true, true],
            settled,
            observed: Span(observed),
        }
    }

    #[test]
    fn the_curve_is_kaplan_meier() {
        // 4 at risk: a failure at 1 (3/4), a censoring at 2, a failure at 3
        // among 2 at risk (3/4 · 1/2), one survivor
        let c = SurvivalCurve::fit(vec![(3, true), (1, true), (2, false), (10, false)]);
        assert_eq!(c.at(0), 1.0);
        assert_eq!(c.at(1), 0.75);
        assert_eq!(c.at(2), 0.75);
        assert_eq!(c.at(3), 0.375);
        assert_eq!(c.at(100), 0.375);
        assert_eq!(c.conditional(2, 10), 0.5);
        // a censoring tied with a failure was at risk of it
        let tied = SurvivalCurve::fit(vec![(1, false), (1, true)]);
        assert_eq!(tied.at(1), 0.5);
        let all_failed = SurvivalCurve::fit(vec![(1, true)]);
        assert_eq!(all_failed.conditional(1, 10), 0.0);
    }

    #[test]
    fn a_censored_placement_gets_its_workloads_survival_not_a_success() {
        // workload 0: of 20 placements, 10 fail at 1 minute, 10 survive;
        // workload 1 (too few for its own curve): one censored placement
        let mut realised: Vec<Realised> = (0..10)
            .map(|i| placement(i, 0, Settled::Failed, 60_000))
            .chain((10..20).map(|i| placement(i, 0, Settled::HorizonPassed, H)))
            .collect();
        // censored before the failures: of the workload's 22 placements, 21
        // are still at risk at 1 minute, when 10 fail
        realised.push(placement(20, 0, Settled::Deleted, 30_000));
        // censored after them: it already passed the risk
        realised.push(placement(21, 0, Settled::Deleted, 120_000));
        realised.push(placement(22, 1, Settled::RunEnded, 30_000));
        estimate_censored(&mut realised, Span(H));
        let by = |p: u64| realised.iter().find(|r| r.pod == PodId(p)).unwrap();
        let early = f64::from(by(20).metrics[0]);
        assert!((early - (1.0 - 10.0 / 21.0)).abs() < 1e-6, "{early}");
        assert_eq!(by(21).metrics[0], 1.0);
        assert!(by(20).known[0] && by(21).known[0] && by(22).known[0]);
        // the pooled curve: of 23 placements two left at 30 s, 10 of the
        // 21 left failed at 1 minute
        let pooled = f64::from(by(22).metrics[0]);
        assert!((pooled - (1.0 - 10.0 / 21.0)).abs() < 1e-6, "{pooled}");
        // uncensored labels are kept
        assert_eq!((by(0).metrics[0], by(10).metrics[0]), (0.0, 1.0));
    }

    #[test]
    fn without_censoring_nothing_changes() {
        let mut realised = vec![
            placement(0, 0, Settled::Failed, 1),
            placement(1, 0, Settled::Succeeded, 5),
        ];
        let before = realised.clone();
        estimate_censored(&mut realised, Span(H));
        assert_eq!(realised, before);
    }
}
