//! The reward of one scheduling decision, shared by every agent (the agents
//! cooperate; MADDPG's centralised critic learns one value for all of them).
//!
//! A bind: `r = 1 − error + λ_level × realised fault tolerance`, where
//!
//! - **error** is the mean, over the objectives whose realised metric is
//!   known ([`super::realised::Realised::known`]), of `(predicted −
//!   realised)²` for the chosen node, `predicted` being the scores the policy
//!   acted on (after exploration noise) and `realised` the measured metrics
//!   of [`super::realised`] (a censored fault tolerance is its survival
//!   estimate, [`super::censoring`]). This is the term the paper's reward is
//!   built around: agents are rewarded for scores that say truly what a
//!   placement will bring;
//! - **stress term**: `λ` = 0 when Calm, [`RewardConfig::stress_elevated`]
//!   when Elevated and [`RewardConfig::stress_stressed`] when Stressed (0.1
//!   and 0.25 by default): under stress a placement that survives its
//!   horizon is worth more, which is what the controller's
//!   fault-tolerance-first order asks of the scores.
//!
//! A strategic decline: `r = decline + λ_level × (later − predicted)`, where
//! [`RewardConfig::decline`] (0.5 by default) is the value of a pod kept
//! pending (worse than a good placement, better than nothing), `predicted`
//! the fault-tolerance score of the node restraint refused and `later` the
//! realised fault tolerance of the pod's placement when it was bound later
//! (0 if it never was in the run): a decline is worth what waiting bought
//! over placing the pod then.
//!
//! No feasible node: `r = 0`.
//!
//! With the defaults a reward lies in `[0, 1.25]`.

use crate::agmarl::stress::StressLevel;
use serde::{Deserialize, Serialize};

/// Weights of the reward's terms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RewardConfig {
    /// success value of a strategic decline (a bind is 1, unschedulable 0)
    pub decline: f32,
    /// λ under Elevated stress
    pub stress_elevated: f32,
    /// λ under Stressed
    pub stress_stressed: f32,
}

impl Default for RewardConfig {
    fn default() -> Self {
        RewardConfig {
            decline: 0.5,
            stress_elevated: 0.1,
            stress_stressed: 0.25,
        }
    }
}

impl RewardConfig {
    /// The stress term's weight λ at `level`.
    pub fn stress_weight(&self, level: StressLevel) -> f32 {
        match level {
            StressLevel::Calm => 0.0,
            StressLevel::Elevated => self.stress_elevated,
            StressLevel::Stressed => self.stress_stressed,
        }
    }
}

/// What a decision led to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// bound; the chosen node's scores as acted on, its realised metrics
    /// and which of them are known
    Bound {
        predicted: [f32; 3],
        realised: [f32; 3],
        known: [bool; 3],
    },
    /// no feasible node
    Unschedulable,
    /// feasible nodes existed but restraint declined the pod: the refused
    /// node's fault-tolerance score, and the realised fault tolerance of the
    /// pod's later placement (None: never bound)
    Declined { predicted: f32, later: Option<f32> },
}

/// Mean over the three objectives of `(predicted − realised)²`.
pub fn score_error(predicted: &[f32; 3], realised: &[f32; 3]) -> f32 {
    score_error_known(predicted, realised, &[true; 3])
}

/// Mean over the objectives marked `known` of `(predicted − realised)²`; 0
/// when none is.
pub fn score_error_known(predicted: &[f32; 3], realised: &[f32; 3], known: &[bool; 3]) -> f32 {
    let (sum, n) = predicted
        .iter()
        .zip(realised)
        .zip(known)
        .filter(|(_, k)| **k)
        .fold((0.0f32, 0u32), |(sum, n), ((p, r), _)| (sum + (p - r) * (p - r), n + 1));
    if n == 0 { 0.0 } else { sum / n as f32 }
}

/// The reward of a decision taken at stress `level`.
pub fn reward(outcome: &Outcome, level: StressLevel, cfg: &RewardConfig) -> f32 {
    match outcome {
        Outcome::Bound {
            predicted,
            realised,
            known,
        } => {
            let ft = if known[0] { realised[0] } else { 0.0 };
            1.0 - score_error_known(predicted, realised, known) + cfg.stress_weight(level) * ft
        }
        Outcome::Unschedulable => 0.0,
        Outcome::Declined { predicted, later } => {
            cfg.decline + cfg.stress_weight(level) * (later.unwrap_or(0.0) - predicted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_perfect_prediction_earns_the_full_success() {
        let cfg = RewardConfig::default();
        let m = [1.0, 0.4, 0.7];
        let r = reward(
            &Outcome::Bound {
                predicted: m,
                realised: m,
                known: [true; 3],
            },
            StressLevel::Calm,
            &cfg,
        );
        assert_eq!(r, 1.0);
    }

    #[test]
    fn prediction_error_costs_its_mean_square() {
        let cfg = RewardConfig::default();
        let r = reward(
            &Outcome::Bound {
                predicted: [1.0, 0.5, 0.5],
                realised: [0.0, 0.5, 0.2],
                known: [true; 3],
            },
            StressLevel::Calm,
            &cfg,
        );
        assert!((r - (1.0 - (1.0 + 0.09) / 3.0)).abs() < 1e-6, "{r}");
    }

    #[test]
    fn stress_rewards_surviving_placements_only() {
        let cfg = RewardConfig::default();
        let bound = |ft: f32| Outcome::Bound {
            predicted: [ft, 0.5, 0.5],
            realised: [ft, 0.5, 0.5],
            known: [true; 3],
        };
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        assert!(close(reward(&bound(1.0), StressLevel::Stressed, &cfg), 1.25));
        assert!(close(reward(&bound(1.0), StressLevel::Elevated, &cfg), 1.1));
        assert!(close(reward(&bound(1.0), StressLevel::Calm, &cfg), 1.0));
        assert!(close(reward(&bound(0.0), StressLevel::Stressed, &cfg), 1.0));
    }

    #[test]
    fn unknown_metrics_cost_nothing() {
        let cfg = RewardConfig::default();
        let r = reward(
            &Outcome::Bound {
                predicted: [1.0, 0.0, 0.5],
                realised: [0.0, 1.0, 0.2],
                known: [false, false, true],
            },
            StressLevel::Stressed,
            &cfg,
        );
        // only the cost error counts; an unknown fault tolerance earns no stress term
        assert!((r - (1.0 - 0.09)).abs() < 1e-6, "{r}");
        assert_eq!(score_error_known(&[1.0; 3], &[0.0; 3], &[false; 3]), 0.0);
    }

    #[test]
    fn a_decline_is_worth_what_waiting_bought() {
        let cfg = RewardConfig::default();
        assert_eq!(reward(&Outcome::Unschedulable, StressLevel::Stressed, &cfg), 0.0);
        let declined = |later| Outcome::Declined { predicted: 0.4, later };
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        // placed later on a node where it survived: 0.5 + 0.25 × 0.6
        assert!(close(reward(&declined(Some(1.0)), StressLevel::Stressed, &cfg), 0.65));
        // failed anyway
        assert!(close(reward(&declined(Some(0.0)), StressLevel::Stressed, &cfg), 0.4));
        // never placed counts as not running
        assert!(close(reward(&declined(None), StressLevel::Stressed, &cfg), 0.4));
        // no stress weight when calm
        assert!(close(reward(&declined(Some(1.0)), StressLevel::Calm, &cfg), 0.5));
    }
}
