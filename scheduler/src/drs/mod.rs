//! DRS, the monolithic foil (issue "The monolithic foil"): a centralised
//! deep-RL scheduler after DRS (arXiv 2309.12592), one DQN over the
//! concatenated state of every node, one Q-value per node. Its input and
//! output are sized by the node count, so a network runs only on the
//! cluster size it was trained for: the weakness AGMARL-DKS's per-node
//! agents claim to remove (the paper's claim 5).
//!
//! - [`network`]: the Q-network (candle for training, plain rows for deciding).
//! - [`state`]: the state vector and the node order.
//! - [`policy`]: the `drs` and `drs-agmarl-reward` arms.
//! - [`train`]: the DQN learner.
//! - [`checkpoint`]: weights and sidecar, with the cluster-size check.

pub mod checkpoint;
pub mod error;
pub mod network;
pub mod policy;
pub mod state;
pub mod train;

pub use checkpoint::DrsMeta;
pub use error::DrsError;
pub use network::{QNet, QWeights};
pub use policy::{DRS_ARMS, DrsReward, DrsScheduler};
pub use train::{Dqn, DqnConfig};
