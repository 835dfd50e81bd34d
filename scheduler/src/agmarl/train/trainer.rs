//! The trainer: one learner, one replay buffer, and the exploring policies
//! handed to the environments.
//!
//! Training goes in rounds. A round plays a few episodes at once, each in
//! its own environment with an [`Explorer`] holding a frozen copy of the
//! actor as it was at the round's start (so the environments never wait on
//! the learner and an episode's decisions all come from one policy); their
//! transitions enter the buffer in episode order (so a run replays exactly
//! whatever thread finished first); then the learner does
//! `updates_per_episode` updates per episode of the round, at the learning
//! rates of the run's progress ([`Trainer::set_progress`]).
//!
//! The exploring policies choose at random among the candidates the
//! lexicographic filter keeps ([`TrainConfig::explore_survivors`]), with the
//! selection's tolerance at the heads' latest measured error
//! ([`Trainer::set_head_error`], from the validation points): so the heads
//! are trained on placements across the nodes the controller finds
//! equivalent, not only on the ones its tie-break picks.

use crate::agmarl::network::{AgmarlNet, Critic};
use crate::agmarl::policy::AgmarlScheduler;
use crate::agmarl::train::config::TrainConfig;
use crate::agmarl::train::episode::{Episode, Explorer};
use crate::agmarl::train::maddpg::Learner;
use crate::agmarl::train::realised::RealisedTracker;
use crate::agmarl::train::replay::ReplayBuffer;
use crate::agmarl::train::transition::Transition;
use schedlab_core::rng::{SimRng, purpose, stream};

/// Stream key of the replay sampling (under `purpose::TRAINING`).
const REPLAY_STREAM: u64 = 0x7265_706c_6179; // "replay"

/// Declines whose wait-head error [`Trainer::wait_error`] averages over.
pub const WAIT_WINDOW: usize = 1000;
/// ... and how many it needs before it says anything.
pub const WAIT_MIN_SAMPLES: usize = 50;

/// Stream key of the exploring choice among the selection's survivors
/// (under `purpose::TRAINING`, per episode seed).
const CHOICE_STREAM: u64 = 0x6368_6f69_6365; // "choice"

/// What a learning round measured: means over its updates (NaN when it did none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearnStats {
    pub updates: usize,
    pub critic_loss: f32,
    pub actor_loss: f32,
    /// the chosen agents' score MSE on the sampled minibatches, before each update
    pub score_mse: f32,
    pub q_mean: f32,
}

impl LearnStats {
    fn none() -> LearnStats {
        LearnStats {
            updates: 0,
            critic_loss: f32::NAN,
            actor_loss: f32::NAN,
            score_mse: f32::NAN,
            q_mean: f32::NAN,
        }
    }
}

/// The learner, its replay buffer and the sampling stream.
#[derive(Debug)]
pub struct Trainer {
    cfg: TrainConfig,
    learner: Learner,
    buffer: ReplayBuffer<Transition>,
    rng: SimRng,
    /// the heads' latest measured RMSE: the selection's tolerance
    head_error: Option<[f32; 3]>,
    /// the wait head's squared errors on the latest declines (at most
    /// [`WAIT_WINDOW`]), each measured before the learner saw it
    wait_errors: std::collections::VecDeque<f32>,
    /// declines measured in all
    wait_samples: usize,
}

impl Trainer {
    /// A trainer with freshly initialised networks drawn from `seed`.
    pub fn new(cfg: TrainConfig, seed: u64) -> crate::Result<Trainer> {
        cfg.validate()?;
        let actor = AgmarlNet::new(&cfg.hyper, seed)?;
        let critic = Critic::new(&cfg.hyper, seed)?;
        let learner = Learner::new(actor, critic, cfg.learner_config())?;
        Ok(Trainer {
            buffer: ReplayBuffer::new(cfg.replay_capacity),
            rng: stream(seed, &[purpose::TRAINING, REPLAY_STREAM]),
            head_error: None,
            wait_errors: std::collections::VecDeque::new(),
            wait_samples: 0,
            learner,
            cfg,
        })
    }

    pub fn config(&self) -> &TrainConfig {
        &self.cfg
    }

    /// The actor being trained.
    pub fn actor(&self) -> &AgmarlNet {
        self.learner.actor()
    }

    pub fn learner(&self) -> &Learner {
        &self.learner
    }

    pub fn buffer(&self) -> &ReplayBuffer<Transition> {
        &self.buffer
    }

    /// The actor's current learning rate.
    pub fn learning_rate(&self) -> f64 {
        self.learner.learning_rates().0
    }

    /// Exploration σ for episode `episode` of `episodes`.
    pub fn noise_sigma(&self, episode: usize, episodes: usize) -> f32 {
        self.cfg.noise.sigma(episode, episodes)
    }

    /// The exploring policy of one episode: a frozen copy of the actor, the
    /// noise of `sigma` drawn from `seed`, the selection's tolerance at the
    /// heads' latest measured error and, when configured, a random choice
    /// among the selection's survivors drawn from `seed`.
    pub fn explorer(&self, seed: u64, sigma: f32) -> crate::Result<Explorer> {
        let mut scheduler = self.policy(seed)?;
        if self.cfg.explore_survivors {
            scheduler.explore_survivors(Some(stream(seed, &[purpose::TRAINING, CHOICE_STREAM])));
            scheduler.explore_declines(self.cfg.explore_declines);
        }
        Ok(Explorer::with_scheduler(scheduler, seed, sigma))
    }

    /// The policy as it would be evaluated now: a frozen copy of the actor,
    /// the selection's tolerance at the heads' latest measured error, no
    /// noise and the deterministic choice (the validation probes).
    pub fn probe(&self, seed: u64) -> crate::Result<Explorer> {
        Ok(Explorer::with_scheduler(self.policy(seed)?, seed, 0.0))
    }

    fn policy(&self, seed: u64) -> crate::Result<AgmarlScheduler> {
        let mut policy = AgmarlScheduler::new(self.actor().deep_clone()?, self.cfg.policy.clone(), seed)
            .with_head_error(self.head_error);
        policy.set_wait_error(self.wait_error());
        Ok(policy)
    }

    /// The wait head's RMSE over the latest [`WAIT_WINDOW`] declines, each
    /// measured against the actor as it was before the learner trained on
    /// that decline (prequential: never on data it has fit); None below
    /// [`WAIT_MIN_SAMPLES`]. The learned restraint's margin.
    pub fn wait_error(&self) -> Option<f32> {
        if self.wait_errors.len() < WAIT_MIN_SAMPLES {
            return None;
        }
        let mean = self.wait_errors.iter().map(|&e| f64::from(e)).sum::<f64>() / self.wait_errors.len() as f64;
        Some(mean.sqrt() as f32)
    }

    /// Declines whose wait-head error was measured, in all.
    pub fn wait_samples(&self) -> usize {
        self.wait_samples
    }

    /// Measures the current actor's wait head on `episode`'s declines.
    fn measure_wait(&mut self, episode: &Episode) -> crate::Result<()> {
        let mut declines = episode
            .transitions
            .iter()
            .filter_map(|t| Some((t, t.wait_target()?)))
            .peekable();
        if declines.peek().is_none() {
            return Ok(());
        }
        let use_gnn = self.cfg.policy.variant.uses_gnn();
        let mut scorer = crate::agmarl::scoring::Scorer::new(self.actor().weights()?);
        for (t, target) in declines {
            let wait = scorer.wait(&t.state().obs, use_gnn)?;
            if self.wait_errors.len() == WAIT_WINDOW {
                self.wait_errors.pop_front();
            }
            self.wait_errors.push_back((wait - target) * (wait - target));
            self.wait_samples += 1;
        }
        Ok(())
    }

    /// The heads' measured RMSE `[ft, util, cost]` (a validation point's):
    /// from now on the selection's tolerance in score units, for the
    /// exploring policies and the learner's `c'` alike (unless the policy
    /// config sets [`crate::agmarl::AgmarlConfig::score_tolerance`]).
    pub fn set_head_error(&mut self, rmse: [f32; 3]) {
        self.head_error = Some(rmse);
        let tolerance = self.cfg.policy.score_tolerance.unwrap_or(rmse);
        self.learner.set_score_tolerance(tolerance);
    }

    /// The heads' error the selection now tolerates (None before the first
    /// measurement).
    pub fn head_error(&self) -> Option<[f32; 3]> {
        self.head_error
    }

    /// Sets the learning rates for `done` of `total` episodes played.
    pub fn set_progress(&mut self, done: usize, total: usize) {
        let progress = if total == 0 { 1.0 } else { done as f64 / total as f64 };
        self.learner.set_progress(progress);
    }

    /// A tracker of realised metrics with this run's horizon.
    pub fn tracker(&self) -> RealisedTracker {
        RealisedTracker::new(self.cfg.horizon())
    }

    /// Measures the wait head on an episode's declines, then stores its
    /// transitions.
    pub fn add_episode(&mut self, episode: Episode) -> crate::Result<()> {
        self.measure_wait(&episode)?;
        for t in episode.transitions {
            self.buffer.push(t);
        }
        Ok(())
    }

    /// Adds `transitions` directly (for training on data not from episodes).
    pub fn add_transitions(&mut self, transitions: impl IntoIterator<Item = Transition>) {
        for t in transitions {
            self.buffer.push(t);
        }
    }

    /// `updates` learner updates on minibatches from the buffer (none while
    /// it holds fewer than `warmup` transitions).
    pub fn learn(&mut self, updates: usize) -> crate::Result<LearnStats> {
        if self.buffer.len() < self.cfg.warmup.max(1) || updates == 0 {
            return Ok(LearnStats::none());
        }
        let mut sums = [0.0f64; 4];
        for _ in 0..updates {
            let batch = self.buffer.sample(self.cfg.maddpg.batch_size, &mut self.rng);
            let s = self.learner.update(&batch)?;
            for (sum, v) in sums
                .iter_mut()
                .zip([s.critic_loss, s.actor_loss, s.score_mse, s.q_mean])
            {
                *sum += f64::from(v);
            }
        }
        let mean = |i: usize| (sums[i] / updates as f64) as f32;
        let stats = LearnStats {
            updates,
            critic_loss: mean(0),
            actor_loss: mean(1),
            score_mse: mean(2),
            q_mean: mean(3),
        };
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::features::{NODE_FEATURES, Observation, POD_FEATURES, node};
    use crate::agmarl::stress::StressLevel;
    use crate::agmarl::train::transition::State;
    use rand::Rng;
    use std::sync::Arc;

    /// Synthetic decisions whose realised metrics are a fixed function of the
    /// chosen node's features: what a working learner must pick up.
    fn synthetic(count: usize, seed: u64) -> Vec<Transition> {
        let mut rng = stream(seed, &[purpose::TRAINING, 77]);
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let n = rng.random_range(3..8usize);
            let features: Vec<f32> = (0..n * NODE_FEATURES).map(|_| rng.random::<f32>()).collect();
            let obs = Observation {
                n,
                node_features: features,
                pod_features: (0..POD_FEATURES).map(|_| rng.random::<f32>()).collect(),
                queue: [0.25, 0.5],
                domains: (0..n).map(|i| (i % 3) as u32).collect(),
                domain_count: n.min(3),
                domain_features: vec![0.25; n.min(3) * crate::agmarl::features::DOMAIN_FEATURES],
            };
            let chosen = rng.random_range(0..n);
            let f = |k: usize| obs.node_features[chosen * NODE_FEATURES + k];
            let realised = [
                if f(node::RECENT_FAILURES) > 0.5 { 0.0 } else { 1.0 },
                (f(node::CPU_AFTER) + f(node::MEMORY_AFTER)) / 2.0,
                1.0 - f(node::PRICE),
            ];
            let actions: Vec<[f32; 3]> = (0..n).map(|_| [rng.random(), rng.random(), rng.random()]).collect();
            let reward = 1.0 - crate::agmarl::train::reward::score_error(&actions[chosen], &realised);
            let state = Arc::new(State::new(obs, (0..n).collect(), StressLevel::Calm).unwrap());
            out.push(Transition::new(state, actions, chosen, (realised, [true; 3]), reward, None).unwrap());
        }
        out
    }

    #[test]
    fn learning_on_synthetic_transitions_lowers_the_score_error() {
        let cfg = TrainConfig {
            warmup: 1,
            ..TrainConfig::default()
        };
        let mut trainer = Trainer::new(cfg, 1000).unwrap();
        trainer.add_transitions(synthetic(512, 1));
        let held_out = synthetic(200, 2);
        let refs: Vec<&Transition> = held_out.iter().collect();
        let before = trainer.learner().score_mse(&refs).unwrap();
        let mut last = LearnStats::none();
        for _ in 0..6 {
            last = trainer.learn(50).unwrap();
        }
        let after = trainer.learner().score_mse(&refs).unwrap();
        assert_eq!(trainer.learner().updates(), 300);
        assert!(last.critic_loss.is_finite() && last.actor_loss.is_finite());
        assert!(after < 0.5 * before, "held-out score MSE {before} -> {after}");
    }

    #[test]
    fn no_updates_before_warmup() {
        let cfg = TrainConfig {
            warmup: 100,
            ..TrainConfig::default()
        };
        let mut trainer = Trainer::new(cfg, 1000).unwrap();
        trainer.add_transitions(synthetic(10, 1));
        let stats = trainer.learn(5).unwrap();
        assert_eq!(stats.updates, 0);
        assert!(stats.critic_loss.is_nan());
        assert_eq!(trainer.learner().updates(), 0);
    }

    #[test]
    fn the_same_seed_trains_the_same_weights() {
        let run = || {
            let cfg = TrainConfig {
                warmup: 1,
                ..TrainConfig::default()
            };
            let mut trainer = Trainer::new(cfg, 1001).unwrap();
            trainer.add_transitions(synthetic(100, 3));
            trainer.learn(5).unwrap();
            let probe = synthetic(1, 4);
            let s = probe[0].state();
            trainer.actor().scores(&s.obs, &s.candidates, true).unwrap()
        };
        assert_eq!(run(), run());
    }
}
