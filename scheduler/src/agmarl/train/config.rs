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

    pub fn validate(&self) -> Result<(), TrainError> {
        self.hyper.validate()?;
        self.policy
            .validate()
            .map_err(|e| TrainError::Config(format!("policy: {e}")))?;
        self.learner_config().validate()?;
        if self.replay_capacity == 0 {
            return Err(TrainError::Config("replay_capacity must be at least 1".into()));
        }
        if self.horizon_secs == 0 {
            return Err(TrainError::Config("horizon_secs must be at least 1".into()));
        }
        let n = &self.noise;
        if !(n.start >= 0.0 && n.end >= 0.0 && n.start.is_finite() && n.end.is_finite() && n.decay_fraction >= 0.0) {
            return Err(TrainError::Config(
                "noise: start and end must be non-negative numbers".into(),
            ));
        }
        let r = &self.reward;
        if ![r.decline, r.stress_elevated, r.stress_stressed]
            .iter()
            .all(|x| x.is_finite())
        {
            return Err(TrainError::Config("reward weights must be numbers".into()));
        }
        Ok(())
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
}
