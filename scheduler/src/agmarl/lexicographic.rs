//! The central controller's choice among the feasible nodes: lexicographic
//! filtering by objective within a tolerance (the paper's selection), the
//! fixed weighted sum of the `agmarl-linear` ablation, and strategic
//! restraint (declining an unstable pod under stress).
//!
//! Scores are the agents' `[fault tolerance, utilisation, cost]` triples, each
//! meant in [0, 1], higher is better. Both selections are deterministic: the
//! same candidates in any order give the same node.

use super::stress::{Objective, StressLevel};
use crate::explain::Steps;
use clusters::node::NodeId;
use clusters::view::{PendingPod, WorkloadHistory};
use serde::{Deserialize, Serialize};

/// Score differences up to this are rounding noise, not preferences: the
/// `delta_lex` boundary and sum ties are inclusive by this much. Scores are
/// f32 in [0, 1], where one ulp is at most 1.2e-7, so 1e-6 covers the few
/// roundings of computing `best − delta` (0.8 − 0.1 is not 0.7 in f32) and
/// is far below any difference a policy means.
pub const LEX_EPSILON: f64 = 1e-6;

/// The reason given with a [`clusters::Placement::Decline`] from
/// [`should_decline`].
pub const RESTRAINT_REASON: &str =
    "strategic restraint: unstable pod under cluster stress and no node reaches the fault-tolerance threshold";

/// A feasible node and its agent's scores, indexed by
/// [`Objective::index`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub node: NodeId,
    pub scores: [f32; 3],
}

impl Candidate {
    pub fn score(&self, objective: Objective) -> f32 {
        self.scores[objective.index()]
    }

    /// All three scores are numbers (not NaN, not infinite).
    fn is_valid(&self) -> bool {
        self.scores.iter().all(|s| s.is_finite())
    }

    fn sum(&self) -> f64 {
        self.scores.iter().map(|&s| f64::from(s)).sum()
    }
}

/// The paper's lexicographic selection. Returns an index into `cands`, None
/// when `cands` is empty.
///
/// 1. Candidates with a score that is NaN or infinite are left out (a broken
///    network must not steer placements); if every candidate has one, the
///    candidate with the lowest [`NodeId`] is returned, since all are
///    feasible and the pod should not stay pending because of the scores.
/// 2. For each objective of `order` in turn: keep the candidates whose score
///    is ≥ best − `delta_lex` among those still kept. The boundary is
///    inclusive, widened by [`LEX_EPSILON`] against float rounding: a score
///    exactly `delta_lex` below the best is kept. `delta_lex` 0 is strict
///    lexicographic order (only ties, to within [`LEX_EPSILON`], survive
///    each step); a negative or NaN `delta_lex` counts as 0; a large one lets
///    every candidate through to the next objective.
/// 3. Tie-break: the highest sum of the three scores (to within
///    [`LEX_EPSILON`]), then the lowest [`NodeId`], then the lowest index.
///
/// Each step compares with the best of the current set, so the result does
/// not depend on the candidates' order. An `order` that repeats an objective
/// simply filters by it twice.
pub fn lexicographic_select(cands: &[Candidate], order: &[Objective; 3], delta_lex: f32) -> Option<usize> {
    lexicographic_select_traced(cands, order, delta_lex, None)
}

/// [`lexicographic_select`], counting into `kept_after` (when given) the
/// candidates left after each objective's step, in `order`. Nothing is
/// counted when no step runs (no candidate, or none with valid scores).
pub fn lexicographic_select_traced(
    cands: &[Candidate],
    order: &[Objective; 3],
    delta_lex: f32,
    mut kept_after: Option<&mut Steps>,
) -> Option<usize> {
    let mut kept = match valid_or_fallback(cands)? {
        Eligible::Valid(kept) => kept,
        Eligible::Fallback(i) => return Some(i),
    };
    let delta = if delta_lex > 0.0 { f64::from(delta_lex) } else { 0.0 };
    for &objective in order {
        let value = |i: usize| f64::from(cands[i].score(objective));
        keep_near_best(&mut kept, value, delta);
        if let Some(steps) = kept_after.as_deref_mut() {
            steps.push(kept.len());
        }
    }
    tie_break(cands, kept)
}

/// The `agmarl-linear` ablation: the candidate with the highest
/// `Σ weights[o] · scores[o]` (to within [`LEX_EPSILON`]), then the same
/// tie-break as [`lexicographic_select`]; candidates with non-finite scores
/// are handled the same way too. Weights are used as given (not
/// normalised, which would not change the choice); a NaN or infinite weight
/// counts as 0. None when `cands` is empty.
pub fn weighted_select(cands: &[Candidate], weights: [f32; 3]) -> Option<usize> {
    weighted_select_traced(cands, weights, None)
}

/// [`weighted_select`], counting into `kept_after` (when given) the
/// candidates left after its one step, the weighted sum.
pub fn weighted_select_traced(cands: &[Candidate], weights: [f32; 3], kept_after: Option<&mut Steps>) -> Option<usize> {
    let mut kept = match valid_or_fallback(cands)? {
        Eligible::Valid(kept) => kept,
        Eligible::Fallback(i) => return Some(i),
    };
    let weights = weights.map(|w| if w.is_finite() { f64::from(w) } else { 0.0 });
    let value = |i: usize| {
        cands[i]
            .scores
            .iter()
            .zip(weights)
            .map(|(&s, w)| w * f64::from(s))
            .sum::<f64>()
    };
    keep_near_best(&mut kept, value, 0.0);
    if let Some(steps) = kept_after {
        steps.push(kept.len());
    }
    tie_break(cands, kept)
}

enum Eligible {
    /// indices of the candidates with valid scores (at least one)
    Valid(Vec<usize>),
    /// no candidate has valid scores: this one, by lowest NodeId
    Fallback(usize),
}

fn valid_or_fallback(cands: &[Candidate]) -> Option<Eligible> {
    let valid: Vec<usize> = (0..cands.len()).filter(|&i| cands[i].is_valid()).collect();
    if !valid.is_empty() {
        return Some(Eligible::Valid(valid));
    }
    let fallback = (0..cands.len()).min_by_key(|&i| (cands[i].node, i))?;
    tracing::warn!(
        candidates = cands.len(),
        "every candidate has a non-finite score; choosing the lowest node id"
    );
    Some(Eligible::Fallback(fallback))
}

/// Keeps the indices whose value is ≥ the best − `delta` − [`LEX_EPSILON`].
/// Values are finite (valid candidates, finite weights), so a best exists
/// whenever `kept` is non-empty.
fn keep_near_best(kept: &mut Vec<usize>, value: impl Fn(usize) -> f64, delta: f64) {
    let best = kept.iter().map(|&i| value(i)).fold(f64::NEG_INFINITY, f64::max);
    kept.retain(|&i| value(i) >= best - delta - LEX_EPSILON);
}

fn tie_break(cands: &[Candidate], mut kept: Vec<usize>) -> Option<usize> {
    keep_near_best(&mut kept, |i| cands[i].sum(), 0.0);
    kept.into_iter().min_by_key(|&i| (cands[i].node, i))
}

/// When AGMARL-DKS declines to place a pod (the paper's strategic
/// restraint), see [`should_decline`]. The paper gives no numbers; the
/// defaults are ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RestraintConfig {
    /// false: never decline (default true)
    pub enabled: bool,
    /// the lowest stress level at which restraint applies (default
    /// Stressed, the paper's "heavy churn")
    pub min_level: StressLevel,
    /// a candidate is safe enough when its fault-tolerance score is ≥ this
    /// (default 0.5: the agent expects the pod more likely than not to run
    /// without failure over the scoring horizon)
    pub ft_threshold: f32,
    /// a pod is unstable when its workload's (restarts + failures) per pod
    /// created is ≥ this (default 0.5). A crash counts once as a failure
    /// (the Error exit) and once as a restart, so 0.5 is about one crash per
    /// four pods created; a workload that crashes a few times an hour reaches
    /// it within minutes, one that crashes a few times a day does not.
    pub unstable_ratio: f32,
    /// ... once at least this many pods of the workload have been created
    /// (default 3), so that one unlucky pod does not brand its workload
    pub min_pods_observed: u32,
    /// pods with priority ≥ this are never declined (default 1 000 000, the
    /// `high-priority` PriorityClass of the Kubernetes documentation's
    /// example): mission-critical pods must run even on risky nodes
    pub critical_priority: i32,
    /// a pod that has already had this many scheduling attempts is never
    /// declined (default 20, with kube-scheduler's back-off of 1 s doubling
    /// to 10 s about three minutes of waiting): restraint delays a pod
    /// through a storm, it must not starve it when stress persists
    pub max_attempts: u32,
}

impl Default for RestraintConfig {
    fn default() -> Self {
        RestraintConfig {
            enabled: true,
            min_level: StressLevel::Stressed,
            ft_threshold: 0.5,
            unstable_ratio: 0.5,
            min_pods_observed: 3,
            critical_priority: 1_000_000,
            max_attempts: 20,
        }
    }
}

/// A [`RestraintConfig`] that cannot work as documented.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RestraintConfigError {
    #[error("restraint ft_threshold must be in [0, 1], got {0}")]
    FtThreshold(f32),
    #[error("restraint unstable_ratio must be finite and >= 0, got {0}")]
    UnstableRatio(f32),
}

impl RestraintConfig {
    pub fn validate(&self) -> Result<(), RestraintConfigError> {
        if !(0.0..=1.0).contains(&self.ft_threshold) {
            return Err(RestraintConfigError::FtThreshold(self.ft_threshold));
        }
        if !(self.unstable_ratio.is_finite() && self.unstable_ratio >= 0.0) {
            return Err(RestraintConfigError::UnstableRatio(self.unstable_ratio));
        }
        Ok(())
    }
}

/// (restarts + failures) ÷ max(1, pods created) of a workload's observed
/// history. Not the scenario's `behaviour.unstable` flag: that is ground
/// truth a real scheduler does not see.
pub fn instability(history: &WorkloadHistory) -> f32 {
    let trouble = u64::from(history.restarts) + u64::from(history.failures);
    (trouble as f64 / f64::from(history.pods.max(1))) as f32
}

/// Whether the history brands the workload unstable: at least
/// `min_pods_observed` pods created and [`instability`] ≥ `unstable_ratio`.
pub fn is_unstable(history: &WorkloadHistory, cfg: &RestraintConfig) -> bool {
    history.pods >= cfg.min_pods_observed && instability(history) >= cfg.unstable_ratio
}

/// Strategic restraint: true when the pod should stay pending although
/// `cands` (its feasible nodes, scored) is not empty. True only when all of:
/// restraint is enabled; there is a candidate (no candidate is
/// Unschedulable, not a decline); `level` ≥ `min_level`; the pod's priority
/// is < `critical_priority`; it has had fewer than `max_attempts` attempts;
/// its workload [`is_unstable`]; and no candidate's fault-tolerance score is
/// ≥ `ft_threshold` (a NaN score is not).
pub fn should_decline(level: StressLevel, pod: &PendingPod<'_>, cands: &[Candidate], cfg: &RestraintConfig) -> bool {
    cfg.enabled
        && !cands.is_empty()
        && level >= cfg.min_level
        && pod.spec.priority < cfg.critical_priority
        && pod.attempts < cfg.max_attempts
        && is_unstable(&pod.history, cfg)
        && !cands
            .iter()
            .any(|c| c.score(Objective::FaultTolerance) >= cfg.ft_threshold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::stress::objective_order;
    use crate::testing::{pending, pod};
    use Objective::{Cost, FaultTolerance, Utilization};
    use StressLevel::{Calm, Elevated, Stressed};
    use proptest::prelude::*;

    fn c(node: u32, ft: f32, util: f32, cost: f32) -> Candidate {
        Candidate {
            node: NodeId(node),
            scores: [ft, util, cost],
        }
    }

    fn node_of(cands: &[Candidate], pick: Option<usize>) -> Option<u32> {
        pick.map(|i| cands[i].node.0)
    }

    fn lex(cands: &[Candidate], order: [Objective; 3], delta: f32) -> Option<u32> {
        node_of(cands, lexicographic_select(cands, &order, delta))
    }

    /// Three nodes, each best at one objective.
    fn specialists() -> Vec<Candidate> {
        vec![
            c(0, 0.95, 0.30, 0.20), // safe
            c(1, 0.40, 0.90, 0.60), // well packed
            c(2, 0.30, 0.50, 0.95), // cheap
        ]
    }

    #[test]
    fn the_stress_level_switches_the_winner() {
        let cands = specialists();
        assert_eq!(lex(&cands, objective_order(Calm), 0.05), Some(2));
        assert_eq!(lex(&cands, objective_order(Stressed), 0.05), Some(0));
    }

    #[test]
    fn elevated_breaks_cost_ties_by_fault_tolerance() {
        // same price (one pool), one safer, one better packed
        let cands = vec![c(0, 0.85, 0.3, 0.8), c(1, 0.4, 0.9, 0.8), c(2, 0.95, 0.95, 0.2)];
        assert_eq!(lex(&cands, objective_order(Calm), 0.05), Some(1));
        assert_eq!(lex(&cands, objective_order(Elevated), 0.05), Some(0));
        assert_eq!(lex(&cands, objective_order(Stressed), 0.05), Some(2));
    }

    #[test]
    fn a_candidate_exactly_delta_below_the_best_is_kept() {
        // 0.8 − 0.1 is not 0.7 in f32: the epsilon keeps it
        let cands = vec![c(0, 0.0, 0.2, 0.8), c(1, 0.0, 0.9, 0.7)];
        // without the epsilon the comparison would drop it
        assert!(f64::from(0.7f32) < f64::from(0.8f32) - f64::from(0.1f32));
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], 0.1), Some(1));
        // the same just beyond the tolerance is dropped
        let cands = vec![c(0, 0.0, 0.2, 0.8), c(1, 0.0, 0.9, 0.6999)];
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], 0.1), Some(0));
    }

    #[test]
    fn the_boundary_holds_for_many_deltas() {
        for k in 1..=50 {
            let delta = k as f32 / 100.0;
            let best = 0.9f32;
            let at_boundary = best - delta;
            let cands = vec![c(0, 0.0, 0.0, best), c(1, 0.0, 1.0, at_boundary)];
            assert_eq!(
                lex(&cands, [Cost, Utilization, FaultTolerance], delta),
                Some(1),
                "delta {delta}"
            );
            let beyond = vec![c(0, 0.0, 0.0, best), c(1, 0.0, 1.0, at_boundary - 1e-4)];
            assert_eq!(
                lex(&beyond, [Cost, Utilization, FaultTolerance], delta),
                Some(0),
                "delta {delta}"
            );
        }
    }

    #[test]
    fn delta_zero_is_strict_lexicographic() {
        let cands = vec![c(0, 0.1, 0.1, 0.801), c(1, 0.9, 0.9, 0.8), c(2, 0.9, 0.9, 0.0)];
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], 0.0), Some(0));
        // only exact ties move on to the next objective
        let cands = vec![c(0, 0.1, 0.1, 0.8), c(1, 0.2, 0.5, 0.8), c(2, 0.9, 0.9, 0.7)];
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], 0.0), Some(1));
        assert_eq!(lex(&cands, [Cost, FaultTolerance, Utilization], 0.0), Some(1));
        // negative and NaN deltas count as 0
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], -0.5), Some(1));
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], f32::NAN), Some(1));
    }

    #[test]
    fn a_large_delta_falls_through_to_the_next_objective() {
        let cands = specialists();
        // every cost is within 1.0 of the best: utilisation decides
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], 1.0), Some(1));
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], f32::INFINITY), Some(1));
        // intermediate: cost keeps 1 and 2 (0.6 is within 0.4 of 0.95), then
        // fault tolerance picks 1
        assert_eq!(lex(&cands, [Cost, FaultTolerance, Utilization], 0.4), Some(1));
        assert_eq!(lex(&cands, [Cost, FaultTolerance, Utilization], 0.3), Some(2));
    }

    #[test]
    fn ties_on_every_objective_go_to_the_highest_sum_then_the_lowest_node() {
        // all within delta everywhere: the sum decides
        let cands = vec![c(5, 0.5, 0.5, 0.5), c(3, 0.52, 0.52, 0.52), c(4, 0.51, 0.51, 0.51)];
        assert_eq!(lex(&cands, objective_order(Calm), 0.1), Some(3));
        // equal sums: the lowest node id, wherever it sits
        let cands = vec![c(7, 0.6, 0.5, 0.4), c(2, 0.4, 0.5, 0.6), c(9, 0.5, 0.5, 0.5)];
        assert_eq!(lex(&cands, objective_order(Stressed), 0.5), Some(2));
        assert_eq!(
            weighted_select(&cands, [1.0, 1.0, 1.0]).map(|i| cands[i].node.0),
            Some(2)
        );
        // a duplicate node id: the first of them
        let cands = vec![c(1, 0.5, 0.5, 0.5), c(1, 0.5, 0.5, 0.5)];
        assert_eq!(lexicographic_select(&cands, &objective_order(Calm), 0.1), Some(0));
    }

    #[test]
    fn traced_selections_count_the_candidates_after_each_step() {
        let cands = specialists();
        let mut steps = Steps::default();
        // cost keeps 1 and 2 (within 0.4 of 0.95), and so do fault
        // tolerance (0.4 and 0.3) and utilisation (0.9 and 0.5): the sum decides
        let pick = lexicographic_select_traced(&cands, &[Cost, FaultTolerance, Utilization], 0.4, Some(&mut steps));
        assert_eq!(node_of(&cands, pick), Some(1));
        assert_eq!(steps.as_slice(), &[2, 2, 2]);
        // cost keeps 0 and 1, utilisation then 0
        let narrowing = vec![c(0, 0.5, 0.8, 0.9), c(1, 0.9, 0.7, 0.88), c(2, 0.1, 0.9, 0.5)];
        let mut steps = Steps::default();
        let pick = lexicographic_select_traced(&narrowing, &objective_order(Calm), 0.05, Some(&mut steps));
        assert_eq!(node_of(&narrowing, pick), Some(0));
        assert_eq!(steps.as_slice(), &[2, 1, 1]);
        assert_eq!(pick, lexicographic_select(&narrowing, &objective_order(Calm), 0.05));
        let mut steps = Steps::default();
        let pick = weighted_select_traced(&cands, [0.0, 0.0, 0.0], Some(&mut steps));
        assert_eq!(node_of(&cands, pick), Some(1));
        assert_eq!(steps.as_slice(), &[3]);
        // no step runs when every score is broken
        let nan = f32::NAN;
        let broken = vec![c(3, nan, nan, nan)];
        let mut steps = Steps::default();
        assert_eq!(
            lexicographic_select_traced(&broken, &objective_order(Calm), 0.1, Some(&mut steps)),
            Some(0)
        );
        assert!(steps.as_slice().is_empty());
    }

    #[test]
    fn empty_gives_none() {
        assert_eq!(lexicographic_select(&[], &objective_order(Calm), 0.1), None);
        assert_eq!(weighted_select(&[], [0.4, 0.3, 0.3]), None);
    }

    #[test]
    fn a_single_candidate_is_chosen_whatever_its_scores() {
        let cands = [c(4, 0.0, 0.0, 0.0)];
        assert_eq!(lexicographic_select(&cands, &objective_order(Stressed), 0.0), Some(0));
        assert_eq!(weighted_select(&cands, [1.0, 0.0, 0.0]), Some(0));
    }

    #[test]
    fn nan_scores_never_win_and_never_panic() {
        let nan = f32::NAN;
        // best on the first objective, but NaN further down
        let cands = vec![c(0, 0.2, nan, 1.0), c(1, 0.1, 0.1, 0.1), c(2, nan, nan, nan)];
        for level in StressLevel::ALL {
            for delta in [0.0, 0.1, 1.0] {
                assert_eq!(lex(&cands, objective_order(level), delta), Some(1), "{level} {delta}");
            }
        }
        assert_eq!(node_of(&cands, weighted_select(&cands, [0.0, 0.0, 1.0])), Some(1));
        let cands = vec![c(0, f32::INFINITY, 1.0, 1.0), c(1, 0.1, 0.1, 0.1)];
        assert_eq!(lex(&cands, objective_order(Stressed), 0.1), Some(1));
        assert_eq!(node_of(&cands, weighted_select(&cands, [1.0, 1.0, 1.0])), Some(1));
    }

    #[test]
    fn all_nan_falls_back_to_the_lowest_node_id() {
        let nan = f32::NAN;
        let cands = vec![
            c(6, nan, 0.5, 0.5),
            c(3, nan, nan, nan),
            c(8, 0.9, f32::NEG_INFINITY, 0.9),
        ];
        assert_eq!(lex(&cands, objective_order(Calm), 0.1), Some(3));
        assert_eq!(node_of(&cands, weighted_select(&cands, [0.3, 0.3, 0.4])), Some(3));
    }

    #[test]
    fn weighted_select_maximises_the_weighted_sum() {
        let cands = specialists();
        let pick = |w| node_of(&cands, weighted_select(&cands, w));
        assert_eq!(pick([1.0, 0.0, 0.0]), Some(0));
        assert_eq!(pick([0.0, 1.0, 0.0]), Some(1));
        assert_eq!(pick([0.0, 0.0, 1.0]), Some(2));
        // 0: 0.285+0.09+0.08=0.455; 1: 0.12+0.27+0.24=0.63; 2: 0.09+0.15+0.38=0.62
        assert_eq!(pick([0.3, 0.3, 0.4]), Some(1));
        // unnormalised weights choose alike; a NaN weight counts as 0
        assert_eq!(pick([3.0, 3.0, 4.0]), Some(1));
        assert_eq!(pick([f32::NAN, 0.0, 1.0]), Some(2));
        // all-zero weights: everything ties, the sum decides (1: 1.9)
        assert_eq!(pick([0.0, 0.0, 0.0]), Some(1));
    }

    #[test]
    fn weighted_select_breaks_value_ties_by_sum_then_node() {
        // equal cost-only value, different sums
        let cands = vec![c(0, 0.1, 0.1, 0.9), c(1, 0.5, 0.5, 0.9), c(2, 0.9, 0.9, 0.5)];
        assert_eq!(node_of(&cands, weighted_select(&cands, [0.0, 0.0, 1.0])), Some(1));
    }

    fn arb_candidates() -> impl Strategy<Value = Vec<Candidate>> {
        prop::collection::vec(prop::array::uniform3(0.0f32..=1.0), 1..12).prop_map(|scores| {
            scores
                .into_iter()
                .enumerate()
                .map(|(i, s)| Candidate {
                    node: NodeId(i as u32 * 3 % 37),
                    scores: s,
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn the_choice_does_not_depend_on_candidate_order(
            cands in arb_candidates(),
            level in 0usize..3,
            delta in 0.0f32..0.5,
            seed in any::<u64>(),
        ) {
            use rand::seq::SliceRandom;
            let order = objective_order(StressLevel::ALL[level]);
            let mut shuffled = cands.clone();
            shuffled.shuffle(&mut clusters::rng::stream(seed, &[clusters::rng::purpose::SCHEDULER]));
            let a = lexicographic_select(&cands, &order, delta).map(|i| cands[i]);
            let b = lexicographic_select(&shuffled, &order, delta).map(|i| shuffled[i]);
            prop_assert_eq!(a, b);
            let w = [0.2, 0.5, 0.3];
            let a = weighted_select(&cands, w).map(|i| cands[i]);
            let b = weighted_select(&shuffled, w).map(|i| shuffled[i]);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn the_winner_is_within_delta_of_the_best_on_the_first_objective(
            cands in arb_candidates(),
            level in 0usize..3,
            delta in 0.0f32..0.5,
        ) {
            let order = objective_order(StressLevel::ALL[level]);
            let i = lexicographic_select(&cands, &order, delta);
            prop_assert!(i.is_some());
            let won = cands[i.unwrap_or_default()].score(order[0]);
            let best = cands.iter().map(|c| c.score(order[0])).fold(f32::NEG_INFINITY, f32::max);
            prop_assert!(f64::from(won) >= f64::from(best) - f64::from(delta) - LEX_EPSILON);
            if delta == 0.0 {
                prop_assert!(best - won < 1e-6);
            }
        }
    }

    // ---- strategic restraint ----

    fn unstable_history() -> WorkloadHistory {
        WorkloadHistory {
            pods: 10,
            restarts: 4,
            oom_kills: 0,
            failures: 4,
        }
    }

    fn risky() -> Vec<Candidate> {
        vec![c(0, 0.3, 0.9, 0.9), c(1, 0.49, 0.2, 0.2)]
    }

    #[test]
    fn declines_an_unstable_pod_under_stress_when_no_node_is_safe() {
        let spec = pod().cpu("100m").build();
        let mut p = pending(&spec);
        p.history = unstable_history();
        let cfg = RestraintConfig::default();
        assert!(should_decline(Stressed, &p, &risky(), &cfg));
    }

    #[test]
    fn each_condition_is_needed() {
        let spec = pod().cpu("100m").build();
        let mut p = pending(&spec);
        p.history = unstable_history();
        let cfg = RestraintConfig::default();
        let cands = risky();
        // not stressed enough
        assert!(!should_decline(Calm, &p, &cands, &cfg));
        assert!(!should_decline(Elevated, &p, &cands, &cfg));
        // a safe node exists (the threshold is inclusive)
        let mut safe = cands.clone();
        safe.push(c(2, 0.5, 0.0, 0.0));
        assert!(!should_decline(Stressed, &p, &safe, &cfg));
        // nothing feasible: that is Unschedulable, not a decline
        assert!(!should_decline(Stressed, &p, &[], &cfg));
        // disabled
        let off = RestraintConfig {
            enabled: false,
            ..cfg.clone()
        };
        assert!(!should_decline(Stressed, &p, &cands, &off));
        // too many attempts already
        let mut tried = p;
        tried.attempts = cfg.max_attempts;
        assert!(!should_decline(Stressed, &tried, &cands, &cfg));
        tried.attempts = cfg.max_attempts - 1;
        assert!(should_decline(Stressed, &tried, &cands, &cfg));
        // a stable workload
        let mut stable = p;
        stable.history = WorkloadHistory {
            pods: 10,
            restarts: 1,
            oom_kills: 0,
            failures: 1,
        };
        assert!(!should_decline(Stressed, &stable, &cands, &cfg));
    }

    #[test]
    fn critical_pods_are_never_declined() {
        let critical = pod().priority(1_000_000).build();
        let mut p = pending(&critical);
        p.history = unstable_history();
        let cfg = RestraintConfig::default();
        assert!(!should_decline(Stressed, &p, &risky(), &cfg));
        let high = pod().priority(999_999).build();
        let mut p = pending(&high);
        p.history = unstable_history();
        assert!(should_decline(Stressed, &p, &risky(), &cfg));
    }

    #[test]
    fn min_level_can_allow_restraint_earlier() {
        let spec = pod().build();
        let mut p = pending(&spec);
        p.history = unstable_history();
        let cfg = RestraintConfig {
            min_level: Elevated,
            ..RestraintConfig::default()
        };
        assert!(!should_decline(Calm, &p, &risky(), &cfg));
        assert!(should_decline(Elevated, &p, &risky(), &cfg));
        assert!(should_decline(Stressed, &p, &risky(), &cfg));
    }

    #[test]
    fn nan_fault_tolerance_is_not_safe() {
        let spec = pod().build();
        let mut p = pending(&spec);
        p.history = unstable_history();
        let cands = vec![c(0, f32::NAN, 1.0, 1.0)];
        assert!(should_decline(Stressed, &p, &cands, &RestraintConfig::default()));
    }

    #[test]
    fn instability_comes_from_observed_history_only() {
        let h = |pods, restarts, failures| WorkloadHistory {
            pods,
            restarts,
            oom_kills: 0,
            failures,
        };
        let cfg = RestraintConfig::default();
        assert_eq!(instability(&h(0, 0, 0)), 0.0);
        assert_eq!(instability(&h(0, 2, 1)), 3.0);
        assert_eq!(instability(&h(8, 2, 2)), 0.5);
        // at the ratio threshold: unstable (inclusive)
        assert!(is_unstable(&h(8, 2, 2), &cfg));
        assert!(!is_unstable(&h(8, 2, 1), &cfg));
        // too few pods observed, however bad
        assert!(!is_unstable(&h(2, 50, 50), &cfg));
        assert!(is_unstable(&h(3, 50, 50), &cfg));
        // the scenario's ground-truth flag is not consulted
        let mut spec = pod().build();
        spec.behaviour.unstable = true;
        let mut p = pending(&spec);
        p.history = h(10, 0, 0);
        assert!(!should_decline(Stressed, &p, &risky(), &cfg));
        // huge counts do not overflow
        assert!(instability(&h(1, u32::MAX, u32::MAX)) > 1e9);
    }

    #[test]
    fn restraint_config_validates_and_round_trips() {
        let cfg = RestraintConfig::default();
        assert_eq!(cfg.validate(), Ok(()));
        let bad = RestraintConfig {
            ft_threshold: 1.5,
            ..cfg.clone()
        };
        assert_eq!(bad.validate(), Err(RestraintConfigError::FtThreshold(1.5)));
        let bad = RestraintConfig {
            ft_threshold: f32::NAN,
            ..cfg.clone()
        };
        assert!(bad.validate().is_err());
        let bad = RestraintConfig {
            unstable_ratio: -1.0,
            ..cfg.clone()
        };
        assert_eq!(bad.validate(), Err(RestraintConfigError::UnstableRatio(-1.0)));
        let json = serde_json::to_string(&cfg).expect("serialise");
        assert_eq!(
            serde_json::from_str::<RestraintConfig>(&json).expect("deserialise"),
            cfg
        );
        let partial: RestraintConfig =
            serde_json::from_str(r#"{"min_level": "elevated", "ft_threshold": 0.7}"#).expect("partial");
        assert_eq!((partial.min_level, partial.ft_threshold), (Elevated, 0.7));
        assert_eq!(partial.max_attempts, cfg.max_attempts);
        assert!(serde_json::from_str::<RestraintConfig>(r#"{"threshold": 0.7}"#).is_err());
    }
}
