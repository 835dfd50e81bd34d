//! AGMARL-DKS (arXiv 2603.12031): every node is an agent; a shared graph
//! network over the fully connected node graph gives each agent a global
//! embedding beside its local features; each agent scores its node on fault
//! tolerance, utilisation and cost; a central controller orders these
//! objectives by cluster stress and picks a node lexicographically, and may
//! decline an unstable pod under heavy stress (strategic restraint).
//!
//! - [`features`]: what each agent observes ([`Observation`]).
//! - [`network`]: the GNN, the shared actor and the centralised critic.
//! - [`scoring`]: the actor's decision path, remembering node encodings.
//! - [`analytic`]: the hand-written scores of the `agmarl-analytic` control.
//! - [`checkpoint`]: safetensors + JSON sidecar, and the bundled checkpoint.
//! - [`stress`], [`lexicographic`], [`restraint`]: the central controller.
//! - [`policy`]: [`AgmarlScheduler`], one decision per pod.
//! - [`arms`]: the `agmarl*` arms of the harness, the controls
//!   `agmarl-untrained` and `agmarl-analytic` included.
//! - [`train`]: MADDPG training (replay, realised metrics, reward, learner).

pub mod analytic;
pub mod arms;
pub mod checkpoint;
pub mod error;
pub mod features;
pub mod lexicographic;
pub mod measured;
pub mod network;
pub mod policy;
pub mod restraint;
pub mod scoring;
pub mod stress;
pub mod train;

pub use arms::{
    AGMARL_ARMS, CONTROL_ARMS, DEFAULT_INIT_SEED, VARIANT_ARMS, agmarl_arm_configured, agmarl_arm_with, control_arm,
};
pub use checkpoint::{CheckpointError, CheckpointMeta, bundled, load, load_bytes, save};
pub use error::AgmarlError;
pub use features::{FEATURE_SCHEMA_VERSION, NODE_FEATURES, Observation, POD_FEATURES, STATE_FEATURES, observe};
pub use measured::MeasuredError;
pub use network::{AgmarlNet, Critic, Hyper, soft_update};
pub use policy::{AgmarlConfig, AgmarlConfigError, AgmarlScheduler, Control, Decision, Variant};
pub use scoring::{Reuse, Scorer, Weights};
