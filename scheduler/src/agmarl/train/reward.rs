//! The reward of one scheduling decision, shared by every agent (the agents
//! cooperate; MADDPG's centralised critic learns one value for all of them).
//!
//! `r = success − error + stress term`, where
//!
//! - **success** is 1 for a bind, 0 when no node was feasible, and
//!   [`RewardConfig::decline`] (0.5 by default) for a strategic decline: the
//!   pod stays pending, which is worse than a good placement but, under the
//!   stress that allows restraint, better than a placement that fails;
//! - **error** is the mean over the three objectives of `(predicted −
//!   realised)²` for the chosen node, `predicted` being the scores the policy
//!   acted on (after exploration noise) and `realised` the measured metrics
//!   of [`super::realised`]; it is 0 when nothing was bound (nothing to
//!   measure). This is the term the paper's reward is built around: agents
//!   are rewarded for scores that say truly what a placement will bring;
//! - **stress term**: `λ_level × realised fault tolerance` of a bind, with
//!   `λ` = 0 when Calm, [`RewardConfig::stress_elevated`] when Elevated and
//!   [`RewardConfig::stress_stressed`] when Stressed (0.1 and 0.25 by
//!   default): under stress a placement that survives its horizon is worth
//!   more, which is what the controller's fault-tolerance-first order asks of
//!   the scores.
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
    /// bound; the chosen node's scores as acted on, and its realised metrics
    Bound { predicted: [f32; 3], realised: [f32; 3] },
    /// no feasible node
    Unschedulable,
    /// feasible nodes existed but the policy declined the pod
    Declined,
}

/// Mean over the three objectives of `(predicted − realised)²`.
pub fn score_error(predicted: &[f32; 3], realised: &[f32; 3]) -> f32 {
    predicted
        .iter()
        .zip(realised)
        .map(|(p, r)| (p - r) * (p - r))
        .sum::<f32>()
        / 3.0
}

/// The reward of a decision taken at stress `level`.
pub fn reward(outcome: &Outcome, level: StressLevel, cfg: &RewardConfig) -> f32 {
    match outcome {
        Outcome::Bound { predicted, realised } => {
            1.0 - score_error(predicted, realised) + cfg.stress_weight(level) * realised[0]
        }
        Outcome::Unschedulable => 0.0,
        Outcome::Declined => cfg.decline,
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
        };
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        assert!(close(reward(&bound(1.0), StressLevel::Stressed, &cfg), 1.25));
        assert!(close(reward(&bound(1.0), StressLevel::Elevated, &cfg), 1.1));
        assert!(close(reward(&bound(1.0), StressLevel::Calm, &cfg), 1.0));
        assert!(close(reward(&bound(0.0), StressLevel::Stressed, &cfg), 1.0));
    }

    #[test]
    fn unplaced_pods_earn_no_success() {
        let cfg = RewardConfig::default();
        assert_eq!(reward(&Outcome::Unschedulable, StressLevel::Stressed, &cfg), 0.0);
        assert_eq!(reward(&Outcome::Declined, StressLevel::Stressed, &cfg), 0.5);
    }
}
