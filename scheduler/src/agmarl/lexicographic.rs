//! The central controller's choice among the feasible nodes: lexicographic
//! filtering by objective within a tolerance (the paper's selection), and
//! the fixed weighted sum of the `agmarl-linear` ablation. Strategic
//! restraint is in [`super::restraint`].
//!
//! Scores are the agents' `[fault tolerance, utilisation, cost]` triples, each
//! meant in [0, 1], higher is better. Both selections are deterministic: the
//! same candidates in any order give the same node.

use super::stress::Objective;
use crate::explain::Steps;
use schedlab_core::node::NodeId;
use serde::{Deserialize, Serialize};

/// Score differences up to this are rounding noise, not preferences: the
/// `delta_lex` boundary and sum ties are inclusive by this much. Scores are
/// f32 in [0, 1], where one ulp is at most 1.2e-7, so 1e-6 covers the few
/// roundings of computing `best − delta` (0.8 − 0.1 is not 0.7 in f32) and
/// is far below any difference a policy means.
pub const LEX_EPSILON: f64 = 1e-6;

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

/// How far below an objective's best a candidate may score and still stay
/// in the lexicographic filter: the larger of `delta_lex × (best − worst)`
/// (a fraction of the objective's spread among the candidates still kept)
/// and `floor[objective]` (in score units).
///
/// The floor is what keeps the selection from deciding on noise: with
/// `floor` the scoring heads' held-out RMSE, two nodes whose scores differ
/// by less than the head's own error stay together and the next objective
/// (or the tie-break) decides between them (see
/// [`crate::agmarl::policy::AgmarlConfig::score_tolerance`]). A floor of 0
/// is the spread-only rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    pub delta_lex: f32,
    pub floor: [f32; 3],
}

impl Tolerance {
    /// The spread-only rule: `delta_lex` of each objective's spread, no floor.
    pub fn of_spread(delta_lex: f32) -> Tolerance {
        Tolerance {
            delta_lex,
            floor: [0.0; 3],
        }
    }

    /// `delta_lex` clamped to [0, 1] (negative or NaN: 0).
    fn fraction(&self) -> f64 {
        if self.delta_lex > 0.0 {
            f64::from(self.delta_lex).min(1.0)
        } else {
            0.0
        }
    }

    /// The floor of `objective` in score units (negative or NaN: 0).
    fn floor_of(&self, objective: Objective) -> f64 {
        let f = self.floor[objective.index()];
        if f > 0.0 { f64::from(f) } else { 0.0 }
    }
}

/// The paper's lexicographic selection, with a tolerance relative to each
/// objective's spread. Returns an index into `cands`, None when `cands` is
/// empty.
///
/// 1. Candidates with a score that is NaN or infinite are left out (a broken
///    network must not steer placements); if every candidate has one, the
///    candidate with the lowest [`NodeId`] is returned, since all are
///    feasible and the pod should not stay pending because of the scores.
/// 2. For each objective of `order` in turn, among the candidates still
///    kept, with `best` and `worst` their highest and lowest score: keep
///    those scoring ≥ `best − delta_lex × (best − worst)`. `delta_lex` is a
///    fraction of the spread, so a flat objective (the fault-tolerance
///    scores of one pool, say) still keeps only its top part instead of
///    passing everyone: with scores spread evenly, `delta_lex` 0.25 keeps
///    about the best quarter. The boundary is inclusive, widened by
///    [`LEX_EPSILON`] against float rounding; candidates whose scores all lie
///    within [`LEX_EPSILON`] tie and all stay. `delta_lex` 0 is strict
///    lexicographic order (only ties survive each step); 1 or more lets
///    every candidate through; a negative or NaN `delta_lex` counts as 0.
/// 3. Tie-break: the highest sum of the three scores (to within
///    [`LEX_EPSILON`]), then the lowest [`NodeId`], then the lowest index.
///
/// Each step compares with the best and worst of the current set, so the
/// result does not depend on the candidates' order. An `order` that repeats
/// an objective simply filters by it twice. [`lexicographic_select_traced`]
/// adds a floor in score units to each step's tolerance ([`Tolerance`]).
pub fn lexicographic_select(cands: &[Candidate], order: &[Objective; 3], delta_lex: f32) -> Option<usize> {
    lexicographic_select_traced(cands, order, Tolerance::of_spread(delta_lex), None)
}

/// [`lexicographic_select`] with the tolerance `tolerance`, counting into
/// `kept_after` (when given) the candidates left after each objective's
/// step, in `order`. Nothing is counted when no step runs (no candidate, or
/// none with valid scores).
pub fn lexicographic_select_traced(
    cands: &[Candidate],
    order: &[Objective; 3],
    tolerance: Tolerance,
    kept_after: Option<&mut Steps>,
) -> Option<usize> {
    match lexicographic_survivors(cands, order, tolerance, kept_after)? {
        Survivors::Kept(kept) => tie_break(cands, kept),
        Survivors::Fallback(i) => Some(i),
    }
}

/// What the lexicographic filter leaves before the tie-break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Survivors {
    /// indices into the candidates (at least one, ascending)
    Kept(Vec<usize>),
    /// no candidate has valid scores: this one, by lowest [`NodeId`]
    Fallback(usize),
}

/// The candidates left after every step of the lexicographic filter (step 2
/// of [`lexicographic_select`]), before its tie-break: training chooses
/// among them at random ([`crate::agmarl::policy::AgmarlScheduler::explore_survivors`]),
/// so the heads learn from placements the tie-break would never make.
pub fn lexicographic_survivors(
    cands: &[Candidate],
    order: &[Objective; 3],
    tolerance: Tolerance,
    mut kept_after: Option<&mut Steps>,
) -> Option<Survivors> {
    let mut kept = match valid_or_fallback(cands)? {
        Eligible::Valid(kept) => kept,
        Eligible::Fallback(i) => return Some(Survivors::Fallback(i)),
    };
    let fraction = tolerance.fraction();
    for &objective in order {
        let value = |i: usize| f64::from(cands[i].score(objective));
        keep_top_of_spread(&mut kept, value, fraction, tolerance.floor_of(objective));
        if let Some(steps) = kept_after.as_deref_mut() {
            steps.push(kept.len());
        }
    }
    Some(Survivors::Kept(kept))
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

/// Keeps the indices whose value is ≥ best − max(`fraction` × (best −
/// worst), `floor`) − [`LEX_EPSILON`], best and worst over `kept`.
fn keep_top_of_spread(kept: &mut Vec<usize>, value: impl Fn(usize) -> f64, fraction: f64, floor: f64) {
    let (best, worst) = kept
        .iter()
        .map(|&i| value(i))
        .fold((f64::NEG_INFINITY, f64::INFINITY), |(b, w), v| (b.max(v), w.min(v)));
    let bar = best - (fraction * (best - worst)).max(floor) - LEX_EPSILON;
    kept.retain(|&i| value(i) >= bar);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::stress::{StressLevel, objective_order};
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
    fn a_candidate_exactly_at_the_bar_is_kept() {
        // costs 0.8 (best), 0.0 (worst): δ 0.25 of the spread puts the bar at 0.6
        let cands = vec![c(0, 0.0, 0.2, 0.8), c(1, 0.0, 0.9, 0.6), c(2, 0.0, 0.5, 0.0)];
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], 0.25), Some(1));
        // the same just below the bar is dropped
        let cands = vec![c(0, 0.0, 0.2, 0.8), c(1, 0.0, 0.9, 0.5999), c(2, 0.0, 0.5, 0.0)];
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], 0.25), Some(0));
    }

    #[test]
    fn the_bar_is_a_fraction_of_the_spread_for_many_deltas() {
        for k in 1..=50 {
            let delta = k as f32 / 100.0;
            let (best, worst) = (0.9f32, 0.1f32);
            let at_bar = best - delta * (best - worst);
            let cands = vec![c(0, 0.0, 0.0, best), c(1, 0.0, 1.0, at_bar), c(2, 0.0, 0.5, worst)];
            assert_eq!(
                lex(&cands, [Cost, Utilization, FaultTolerance], delta),
                Some(1),
                "delta {delta}"
            );
            let beyond = vec![
                c(0, 0.0, 0.0, best),
                c(1, 0.0, 1.0, at_bar - 1e-4),
                c(2, 0.0, 0.5, worst),
            ];
            assert_eq!(
                lex(&beyond, [Cost, Utilization, FaultTolerance], delta),
                Some(0),
                "delta {delta}"
            );
        }
    }

    #[test]
    fn a_flat_objective_still_discriminates() {
        // fault tolerance within 0.03 everywhere: an absolute tolerance of
        // 0.05 would pass all four to utilisation; relative to the spread
        // only the top quarter of it stays
        let cands = vec![
            c(0, 0.90, 0.1, 0.5),
            c(1, 0.91, 0.2, 0.5),
            c(2, 0.93, 0.3, 0.5),
            c(3, 0.92, 0.9, 0.5),
        ];
        let mut steps = Steps::default();
        let pick = lexicographic_select_traced(
            &cands,
            &[FaultTolerance, Utilization, Cost],
            Tolerance::of_spread(0.25),
            Some(&mut steps),
        );
        assert_eq!(node_of(&cands, pick), Some(2));
        assert_eq!(steps.as_slice(), &[1, 1, 1]);
        // exact ties all stay
        let tied = vec![c(0, 0.9, 0.1, 0.5), c(1, 0.9, 0.8, 0.5)];
        assert_eq!(lex(&tied, [FaultTolerance, Utilization, Cost], 0.25), Some(1));
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
        // δ 1 keeps every cost: utilisation decides; more counts as 1
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], 1.0), Some(1));
        assert_eq!(lex(&cands, [Cost, Utilization, FaultTolerance], f32::INFINITY), Some(1));
        // costs 0.2..0.95: δ 0.5 puts the bar at 0.575 and keeps 1 and 2,
        // then fault tolerance picks 1; δ 0.4 (bar 0.65) keeps 2 alone
        assert_eq!(lex(&cands, [Cost, FaultTolerance, Utilization], 0.5), Some(1));
        assert_eq!(lex(&cands, [Cost, FaultTolerance, Utilization], 0.4), Some(2));
    }

    #[test]
    fn ties_on_every_objective_go_to_the_highest_sum_then_the_lowest_node() {
        // everything kept everywhere: the sum decides
        let cands = vec![c(5, 0.5, 0.5, 0.5), c(3, 0.52, 0.52, 0.52), c(4, 0.51, 0.51, 0.51)];
        assert_eq!(lex(&cands, objective_order(Calm), 1.0), Some(3));
        // equal sums: the lowest node id, wherever it sits
        let cands = vec![c(7, 0.6, 0.5, 0.4), c(2, 0.4, 0.5, 0.6), c(9, 0.5, 0.5, 0.5)];
        assert_eq!(lex(&cands, objective_order(Stressed), 1.0), Some(2));
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
        // cost keeps 1 and 2 (bar 0.575), fault tolerance 1 (0.4 against 0.3)
        let pick = lexicographic_select_traced(
            &cands,
            &[Cost, FaultTolerance, Utilization],
            Tolerance::of_spread(0.5),
            Some(&mut steps),
        );
        assert_eq!(node_of(&cands, pick), Some(1));
        assert_eq!(steps.as_slice(), &[2, 1, 1]);
        // everything kept: the sum decides
        let mut steps = Steps::default();
        let pick = lexicographic_select_traced(
            &cands,
            &[Cost, FaultTolerance, Utilization],
            Tolerance::of_spread(1.0),
            Some(&mut steps),
        );
        assert_eq!(node_of(&cands, pick), Some(1));
        assert_eq!(steps.as_slice(), &[3, 3, 3]);
        // cost keeps 0 and 1 (bar 0.88), utilisation then 0
        let narrowing = vec![c(0, 0.5, 0.8, 0.9), c(1, 0.9, 0.7, 0.88), c(2, 0.1, 0.9, 0.5)];
        let mut steps = Steps::default();
        let pick = lexicographic_select_traced(
            &narrowing,
            &objective_order(Calm),
            Tolerance::of_spread(0.05),
            Some(&mut steps),
        );
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
            lexicographic_select_traced(
                &broken,
                &objective_order(Calm),
                Tolerance::of_spread(0.1),
                Some(&mut steps)
            ),
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
    fn differences_within_the_heads_error_do_not_decide() {
        // cost differs by 0.02, well inside a cost head with RMSE 0.05: the
        // spread rule alone picks the cheaper node 0, the floor keeps both
        // and utilisation (second in the calm order) decides
        let cands = vec![c(0, 0.5, 0.2, 0.92), c(1, 0.5, 0.8, 0.90), c(2, 0.5, 0.9, 0.40)];
        let order = objective_order(Calm);
        assert_eq!(lex(&cands, order, 0.0), Some(0));
        let noisy = Tolerance {
            delta_lex: 0.0,
            floor: [0.3, 0.1, 0.05],
        };
        let mut steps = Steps::default();
        let pick = lexicographic_select_traced(&cands, &order, noisy, Some(&mut steps));
        assert_eq!(node_of(&cands, pick), Some(1));
        assert_eq!(steps.as_slice(), &[2, 1, 1]);
        // a difference larger than the error still decides
        let clear = vec![c(0, 0.5, 0.2, 0.99), c(1, 0.5, 0.8, 0.90)];
        assert_eq!(
            node_of(&clear, lexicographic_select_traced(&clear, &order, noisy, None)),
            Some(0)
        );
        // the floor only widens: a spread-relative bar that is wider stays
        let wide = Tolerance {
            delta_lex: 1.0,
            floor: [0.0, 0.0, 0.01],
        };
        assert_eq!(
            lexicographic_survivors(&cands, &[Cost, Cost, Cost], wide, None),
            Some(Survivors::Kept(vec![0, 1, 2]))
        );
        // negative and NaN floors count as 0
        let broken = Tolerance {
            delta_lex: 0.0,
            floor: [f32::NAN, -1.0, -1.0],
        };
        assert_eq!(
            node_of(&cands, lexicographic_select_traced(&cands, &order, broken, None)),
            Some(0)
        );
    }

    #[test]
    fn survivors_are_what_the_tie_break_chooses_from() {
        let cands = vec![c(5, 0.9, 0.5, 0.80), c(2, 0.9, 0.5, 0.81), c(7, 0.1, 0.5, 0.2)];
        let tol = Tolerance {
            delta_lex: 0.0,
            floor: [0.0, 0.0, 0.05],
        };
        let order = [Cost, Utilization, FaultTolerance];
        assert_eq!(
            lexicographic_survivors(&cands, &order, tol, None),
            Some(Survivors::Kept(vec![0, 1]))
        );
        // equal sums within epsilon? no: 2.21 against 2.2, the higher sum wins
        assert_eq!(lexicographic_select_traced(&cands, &order, tol, None), Some(1));
        assert_eq!(lexicographic_survivors(&[], &order, tol, None), None);
        let nan = vec![c(3, f32::NAN, 0.0, 0.0)];
        assert_eq!(
            lexicographic_survivors(&nan, &order, tol, None),
            Some(Survivors::Fallback(0))
        );
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
            shuffled.shuffle(&mut schedlab_core::rng::stream(seed, &[schedlab_core::rng::purpose::SCHEDULER]));
            let a = lexicographic_select(&cands, &order, delta).map(|i| cands[i]);
            let b = lexicographic_select(&shuffled, &order, delta).map(|i| shuffled[i]);
            prop_assert_eq!(a, b);
            let w = [0.2, 0.5, 0.3];
            let a = weighted_select(&cands, w).map(|i| cands[i]);
            let b = weighted_select(&shuffled, w).map(|i| shuffled[i]);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn the_winner_is_within_delta_of_the_spread_on_the_first_objective(
            cands in arb_candidates(),
            level in 0usize..3,
            delta in 0.0f32..0.5,
        ) {
            let order = objective_order(StressLevel::ALL[level]);
            let i = lexicographic_select(&cands, &order, delta);
            prop_assert!(i.is_some());
            let won = cands[i.unwrap_or_default()].score(order[0]);
            let best = cands.iter().map(|c| c.score(order[0])).fold(f32::NEG_INFINITY, f32::max);
            let worst = cands.iter().map(|c| c.score(order[0])).fold(f32::INFINITY, f32::min);
            let bar = f64::from(best) - f64::from(delta) * (f64::from(best) - f64::from(worst));
            prop_assert!(f64::from(won) >= bar - LEX_EPSILON);
            if delta == 0.0 {
                prop_assert!(best - won < 1e-6);
            }
        }
    }
}
