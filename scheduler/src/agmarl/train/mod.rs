//! Training AGMARL-DKS with MADDPG: centralised critic, decentralised
//! actors (one actor shared by every node agent), replay, soft target
//! updates, Adam with an adaptive learning rate, decaying Gaussian
//! exploration.
//!
//! The simulator is not a dependency of this crate: a backend (the harness's
//! `schedlab train`) plays each episode, calling an [`Explorer`] for every
//! scheduling attempt and feeding every record it writes to a
//! [`RealisedTracker`]; the [`Trainer`] turns the two into transitions and
//! learns from them.
//!
//! - [`replay`]: the replay buffer (capacity, seeded sampling).
//! - [`realised`]: the realised `[ft, util, cost]` of each placement.
//! - [`censoring`]: survival estimates for censored fault-tolerance labels.
//! - [`reward`]: the reward of a decision.
//! - [`transition`]: states and transitions as stored.
//! - [`episode`]: the exploring policy and the assembly of an episode.
//! - [`heads`]: how well each head predicts, and tells nodes apart.
//! - [`exploration`]: the noise and its decay.
//! - [`maddpg`]: the learner (losses and updates).
//! - [`batch`]: the minibatch forward passes the learner runs.
//! - [`schedule`]: the adaptive learning rate.
//! - [`config`]: every setting, with defaults.
//! - [`trainer`]: learner + buffer + explorers, round by round.
//! - [`curve`]: the training curve's CSV rows.

pub mod batch;
pub mod censoring;
pub mod config;
pub mod curve;
pub mod episode;
pub mod error;
pub mod exploration;
pub mod heads;
pub mod maddpg;
pub mod realised;
pub mod replay;
pub mod reward;
pub mod schedule;
pub mod trainer;
pub mod transition;

/// The lowest training seed: seeds below are kept for evaluation, so no
/// episode a model learns from is one it is judged on.
pub const MIN_TRAINING_SEED: u64 = 1000;

/// The scenarios training plays when none is named.
pub const DEFAULT_SCENARIOS: &[&str] = &["pressure", "churn"];

pub use config::TrainConfig;
pub use curve::{CURVE_HEADER, CurveRow};
pub use episode::{Episode, EpisodeStats, Explorer};
pub use error::TrainError;
pub use exploration::{GaussianNoise, NoiseSchedule};
pub use heads::{HeadReport, HeadSample, HeadStats};
pub use maddpg::{Learner, MaddpgConfig, UpdateStats};
pub use realised::{DEFAULT_HORIZON, Realised, RealisedTracker, Settled};
pub use replay::ReplayBuffer;
pub use reward::{Outcome, RewardConfig, reward, score_error, score_error_known};
pub use schedule::{CosineSchedule, LrScheduleConfig};
pub use trainer::{LearnStats, Trainer, WAIT_MIN_SAMPLES, WAIT_WINDOW};
pub use transition::{State, Transition};
