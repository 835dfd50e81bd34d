//! The training curve: one CSV row per episode.
//!
//! Columns: `episode` (0-based), `scenario`, `seed`, `reward_mean` (mean
//! reward over the episode's binds and declines), `critic_loss`,
//! `actor_loss` (means over the learning round that followed the episode's
//! round; empty before the buffer reached its warm-up size), `score_mse`
//! (the frozen actor's own, noiseless score error to the realised metrics
//! over the episode's binds: how well the policy that played the episode
//! predicted what its placements brought), `lr` (the actor's learning rate
//! in the learning round that followed), `noise` (the episode's σ), then
//! `decisions`, `binds`, `declines`, `fault_tolerance` (mean fault
//! tolerance of the binds, censored ones by their survival estimate),
//! `mse_ft`, `mse_util`, `mse_cost` (`score_mse` per objective, over the
//! metrics measured), `censored` (binds whose fault tolerance was censored
//! and estimated) and `decline_gain` (mean over declines of the pod's later
//! realised fault tolerance minus the refused node's score;
//! 0 without declines).

use crate::agmarl::train::episode::EpisodeStats;
use crate::agmarl::train::trainer::LearnStats;

/// The header line of `training_curve.csv` (no newline).
pub const CURVE_HEADER: &str = "episode,scenario,seed,reward_mean,critic_loss,actor_loss,score_mse,lr,noise,decisions,binds,declines,fault_tolerance,mse_ft,mse_util,mse_cost,censored,decline_gain";

/// One episode of the curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveRow {
    pub episode: usize,
    pub scenario: String,
    pub seed: u64,
    pub stats: EpisodeStats,
    pub learn: LearnStats,
    pub lr: f64,
    pub noise: f32,
}

fn number(x: f32) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        String::new()
    }
}

/// A scenario name as one CSV field (quoted when it needs to be).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl CurveRow {
    /// The row as a CSV line (no newline).
    pub fn to_csv(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{:e},{},{},{},{},{},{},{},{},{},{}",
            self.episode,
            field(&self.scenario),
            self.seed,
            number(self.stats.reward_mean),
            number(self.learn.critic_loss),
            number(self.learn.actor_loss),
            number(self.stats.score_mse),
            self.lr,
            number(self.noise),
            self.stats.decisions,
            self.stats.binds,
            self.stats.declines,
            number(self.stats.fault_tolerance),
            number(self.stats.score_mse_by_objective[0]),
            number(self.stats.score_mse_by_objective[1]),
            number(self.stats.score_mse_by_objective[2]),
            self.stats.censored,
            number(self.stats.decline_gain),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_one_field_per_header_column() {
        let row = CurveRow {
            episode: 3,
            scenario: "a,b".into(),
            seed: 1003,
            stats: EpisodeStats {
                decisions: 10,
                binds: 8,
                reward_mean: 0.75,
                score_mse: 0.1,
                fault_tolerance: 1.0,
                ..EpisodeStats::default()
            },
            learn: LearnStats {
                updates: 0,
                critic_loss: f32::NAN,
                actor_loss: f32::NAN,
                score_mse: f32::NAN,
                q_mean: f32::NAN,
            },
            lr: 0.001,
            noise: 0.2,
        };
        let line = row.to_csv();
        assert_eq!(
            line,
            "3,\"a,b\",1003,0.750000,,,0.100000,1e-3,0.200000,10,8,0,1.000000,0.000000,0.000000,0.000000,0,0.000000"
        );
        let plain = CurveRow {
            scenario: "churn".into(),
            ..row
        };
        assert_eq!(plain.to_csv().split(',').count(), CURVE_HEADER.split(',').count());
    }
}
