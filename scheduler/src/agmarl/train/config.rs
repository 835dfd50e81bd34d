//! Every setting of a training run, with its defaults. The whole struct is
//! written into the checkpoint's sidecar, so a checkpoint says how it was
//! trained.

use crate::agmarl::network::Hyper;
use crate::agmarl::policy::{AgmarlConfig, Variant};
use crate::agmarl::train::error::TrainError;
use crate::agmarl::train::exploration::NoiseSchedule;
use crate::agmarl::train::maddpg::MaddpgConfig;
use crate::agmarl::train::reward::RewardConfig;
use schedlab_core::time::Span;
use serde::{Deserialize, Serialize};

/// Settings of a training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// network sizes
    pub hyper: Hyper,
    /// the controller the exploring policy runs with; its `delta_lex`, its
    /// variant's use of the GNN and its selection rule also steer the learner
    pub policy: AgmarlConfig,
    pub maddpg: MaddpgConfig,
    pub reward: RewardConfig,
    pub noise: NoiseSchedule,
    /// the realised metrics' horizon H, in simulated seconds
    pub horizon_secs: u64,
    /// transitions the replay buffer keeps (the newest)
    pub replay_capacity: usize,
    /// transitions collected before the first update
    pub warmup: usize,
    /// learner updates per episode played (done after each round of episodes)
    pub updates_per_episode: usize,
    /// exploring policies choose uniformly at random among the candidates
    /// the lexicographic filter keeps, instead of its tie-break (default
    /// true): the heads then learn from placements across the nodes the
    /// controller cannot tell apart, and the choice a policy makes is part of
    /// what training explores (the `agmarl-linear` variant keeps its
    /// weighted choice)
    pub explore_survivors: bool,
    /// while exploring survivors, the probability of declining a pod the
    /// learned restraint may decline, at random (default 0.05): the wait
    /// head learns from declines its own rule would not make
    pub explore_declines: f64,
    /// every this many episodes (and before the first and after the last)
    /// the actor plays noiseless probe episodes it does not learn from, for
    /// the validation and held-out curves; 0: never
    pub validate_every: usize,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            hyper: Hyper::default(),
            policy: AgmarlConfig::default(),
            maddpg: MaddpgConfig::default(),
            reward: RewardConfig::default(),
            noise: NoiseSchedule::default(),
            horizon_secs: 600,
            replay_capacity: 20_000,
            warmup: 1_000,
            updates_per_episode: 40,
            explore_survivors: true,
            explore_declines: 0.05,
            validate_every: 25,
        }
    }
}

impl TrainConfig {
    /// The learner's settings with the controller's `delta_lex`, GNN use and
    /// selection rule.
    pub fn learner_config(&self) -> MaddpgConfig {
        MaddpgConfig {
            delta_lex: self.policy.delta_lex,
            use_gnn: self.policy.variant.uses_gnn(),
            linear_weights: (self.policy.variant == Variant::Linear).then_some(self.policy.linear_weights),
            ..self.maddpg.clone()
        }
    }

    pub fn horizon(&self) -> Span {
        Span::from_secs(self.horizon_secs)
    }

    /// Refuses a setting outside its range, naming the field (as written in
    /// `schedlab train --config`), the value and the range: every count is
    /// bounded, so that a typo (`updates_per_episode: 1000000000`) fails at
    /// once instead of training for ever.
    pub fn validate(&self) -> Result<(), TrainError> {
        self.hyper
            .validate()
            .map_err(|e| TrainError::Config(format!("hyper.{}", hyper_detail(&e))))?;
        self.policy
            .validate()
            .map_err(|e| TrainError::Config(format!("policy: {e}")))?;
        self.learner_config().validate().map_err(|e| match e {
            TrainError::Config(m) => TrainError::Config(format!("maddpg.{m}")),
            other => other,
        })?;
        within("horizon_secs", self.horizon_secs, 1, MAX_HORIZON_SECS)?;
        within("replay_capacity", self.replay_capacity, 1, MAX_REPLAY_CAPACITY)?;
        // the buffer never holds more than its capacity: a longer warmup
        // would never end
        if self.warmup > self.replay_capacity {
            return Err(out_of_range(
                "warmup",
                self.warmup,
                format!("0..={} (replay_capacity)", self.replay_capacity),
            ));
        }
        within(
            "updates_per_episode",
            self.updates_per_episode,
            0,
            MAX_UPDATES_PER_EPISODE,
        )?;
        within("validate_every", self.validate_every, 0, MAX_VALIDATE_EVERY)?;
        within_f("explore_declines", self.explore_declines, 0.0, 1.0)?;
        let n = &self.noise;
        within_f("noise.start", f64::from(n.start), 0.0, 1.0)?;
        within_f("noise.end", f64::from(n.end), 0.0, 1.0)?;
        within_f("noise.decay_fraction", f64::from(n.decay_fraction), 0.0, 1.0)?;
        let r = &self.reward;
        within_f("reward.decline", f64::from(r.decline), 0.0, 1.0)?;
        within_f(
            "reward.stress_elevated",
            f64::from(r.stress_elevated),
            0.0,
            MAX_STRESS_WEIGHT,
        )?;
        within_f(
            "reward.stress_stressed",
            f64::from(r.stress_stressed),
            0.0,
            MAX_STRESS_WEIGHT,
        )?;
        Ok(())
    }
}

/// Simulated seconds of the realised metrics' horizon: a year, as a scenario.
pub const MAX_HORIZON_SECS: u64 = 366 * 86_400;
/// Transitions the replay buffer may keep (each holds every node's features).
pub const MAX_REPLAY_CAPACITY: usize = 1_000_000;
/// Learner updates per episode played (40 by default).
pub const MAX_UPDATES_PER_EPISODE: usize = 10_000;
/// Episodes between validation points.
pub const MAX_VALIDATE_EVERY: usize = 1_000_000;
/// The reward's stress weights λ: a bind is worth 1, so a larger λ would drown it.
pub const MAX_STRESS_WEIGHT: f64 = 10.0;

pub(crate) fn out_of_range(field: &str, value: impl std::fmt::Display, range: impl std::fmt::Display) -> TrainError {
    TrainError::Config(format!("{field} = {value}: must be in {range}"))
}

/// `lo..=hi`, integers.
pub(crate) fn within<T: PartialOrd + std::fmt::Display>(field: &str, value: T, lo: T, hi: T) -> Result<(), TrainError> {
    if value >= lo && value <= hi {
        Ok(())
    } else {
        Err(out_of_range(field, value, format!("{lo}..={hi}")))
    }
}

/// `[lo, hi]`, numbers (NaN is outside).
pub(crate) fn within_f(field: &str, value: f64, lo: f64, hi: f64) -> Result<(), TrainError> {
    if value >= lo && value <= hi {
        Ok(())
    } else {
        Err(out_of_range(field, value, format!("[{lo}, {hi}]")))
    }
}

/// A network size's error without the error type's preamble.
fn hyper_detail(e: &crate::agmarl::error::AgmarlError) -> String {
    match e {
        crate::agmarl::error::AgmarlError::Hyper(m) => m.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_round_trip_through_json() {
        let cfg = TrainConfig::default();
        cfg.validate().unwrap();
        let json = serde_json::to_value(&cfg).unwrap();
        let back: TrainConfig = serde_json::from_value(json).unwrap();
        assert_eq!(back, cfg);
        let partial: TrainConfig = serde_json::from_str(r#"{"warmup": 5, "maddpg": {"gamma": 0.5}}"#).unwrap();
        assert_eq!(partial.warmup, 5);
        assert_eq!(partial.maddpg.gamma, 0.5);
        assert_eq!(partial.maddpg.tau, MaddpgConfig::default().tau);
        assert!(serde_json::from_str::<TrainConfig>(r#"{"warmpu": 5}"#).is_err());
    }

    #[test]
    fn the_learner_follows_the_controller() {
        let mut cfg = TrainConfig::default();
        cfg.policy.delta_lex = 0.2;
        cfg.policy.variant = Variant::NoGnn;
        let l = cfg.learner_config();
        assert_eq!(l.delta_lex, 0.2);
        assert!(!l.use_gnn);
        assert_eq!(l.linear_weights, None);
        cfg.policy.variant = Variant::Linear;
        cfg.policy.linear_weights = [0.5, 0.25, 0.25];
        assert_eq!(cfg.learner_config().linear_weights, Some([0.5, 0.25, 0.25]));
        cfg.replay_capacity = 0;
        assert!(cfg.validate().is_err());
        let mut bad_policy = TrainConfig::default();
        bad_policy.policy.delta_lex = f32::NAN;
        assert!(matches!(bad_policy.validate(), Err(TrainError::Config(m)) if m.starts_with("policy")));
    }

    /// Every count is bounded and every number has a range, and the error
    /// names the field as written, the value and the range.
    #[test]
    fn every_setting_outside_its_range_is_refused_with_field_value_and_range() {
        let cases: [(&str, &str); 17] = [
            (
                r#"{"warmup": 0, "updates_per_episode": 1000000000}"#,
                "updates_per_episode = 1000000000: must be in 0..=10000",
            ),
            (
                r#"{"warmup": 30, "replay_capacity": 20}"#,
                "warmup = 30: must be in 0..=20 (replay_capacity)",
            ),
            (
                r#"{"replay_capacity": 1000001}"#,
                "replay_capacity = 1000001: must be in 1..=1000000",
            ),
            (
                r#"{"replay_capacity": 0, "warmup": 0}"#,
                "replay_capacity = 0: must be in 1..=1000000",
            ),
            (r#"{"horizon_secs": 0}"#, "horizon_secs = 0: must be in 1..=31622400"),
            (
                r#"{"validate_every": 1000001}"#,
                "validate_every = 1000001: must be in 0..=1000000",
            ),
            (
                r#"{"maddpg": {"batch_size": 65537}}"#,
                "maddpg.batch_size = 65537: must be in 1..=65536",
            ),
            (r#"{"maddpg": {"gamma": 1}}"#, "maddpg.gamma = 1: must be in [0, 1)"),
            (r#"{"maddpg": {"tau": 0}}"#, "maddpg.tau = 0: must be in (0, 1]"),
            (
                r#"{"maddpg": {"critic_lr": 5}}"#,
                "maddpg.critic_lr = 5: must be in (0, 1]",
            ),
            (
                r#"{"maddpg": {"beta": 1e9}}"#,
                "maddpg.beta = 1000000000: must be in [0, 1000]",
            ),
            (
                r#"{"maddpg": {"lr_schedule": {"min_scale": 2}}}"#,
                "maddpg.lr_schedule.min_scale = 2: must be in (0, 1]",
            ),
            (r#"{"noise": {"end": -0.5}}"#, "noise.end = -0.5: must be in [0, 1]"),
            (
                r#"{"noise": {"decay_fraction": 7}}"#,
                "noise.decay_fraction = 7: must be in [0, 1]",
            ),
            (r#"{"reward": {"decline": 2}}"#, "reward.decline = 2: must be in [0, 1]"),
            (
                r#"{"reward": {"stress_stressed": 11}}"#,
                "reward.stress_stressed = 11: must be in [0, 10]",
            ),
            (
                r#"{"hyper": {"actor_hidden": 0}}"#,
                "hyper.actor_hidden = 0: must be in 1..=4096",
            ),
        ];
        for (json, want) in cases {
            let cfg: TrainConfig = serde_json::from_str(json).unwrap();
            let e = cfg.validate().unwrap_err();
            assert!(matches!(e, TrainError::Config(_)), "{json}: {e:?}");
            assert_eq!(e.to_string(), format!("invalid training settings: {want}"), "{json}");
        }
        // the edges are in
        let edges = r#"{"warmup": 5, "replay_capacity": 5, "updates_per_episode": 10000, "horizon_secs": 31622400,
            "validate_every": 0, "maddpg": {"batch_size": 65536, "gamma": 0, "tau": 1, "actor_lr": 1, "beta": 1000},
            "noise": {"start": 1, "end": 0, "decay_fraction": 1}, "reward": {"decline": 0, "stress_elevated": 10}}"#;
        serde_json::from_str::<TrainConfig>(edges).unwrap().validate().unwrap();
    }
}
