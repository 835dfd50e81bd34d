//! Scheduling policies for schedlab.
//!
//! A policy implements [`Scheduler`]: for each pending pod it reads a
//! read-only [`schedlab_core::ClusterView`] and answers a [`schedlab_core::Placement`].
//! The same policy runs in the simulator and, wrapped in a watch-and-bind
//! loop, against a real API server. The crate owns the policies (the
//! baselines as profiles of plugins, AGMARL-DKS with its training and
//! checkpoints) and may use only `schedlab-core` below it: it never sees
//! an API server, a run folder or a scenario file.
//!
//! - [`api`]: the [`Scheduler`] trait.
//! - [`explain`]: decision explanations, on request, and the stress every
//!   arm's decisions saw ([`explain::Explaining`]).
//! - [`registry`]: building a policy by arm name ([`arm`]; [`baseline`] for
//!   the baselines only).
//! - The kube-scheduler building blocks, shared by the baselines and reusable
//!   by learned policies: [`filters`] (feasibility), [`feasible`] (which
//!   nodes are examined: `numFeasibleNodesToFind` and the rotating start
//!   index), [`scores`] (score plugins), [`select`] (`selectHost`),
//!   [`diagnosis`] (the "0/N nodes are available" message), [`profile`]
//!   (a profile as data: its filter and score plugins with their weights,
//!   normalisation and configuration; [`profile::Cycle`], the one
//!   scheduling cycle that runs any profile; [`profile::Evaluation`], what
//!   an attempt sees plugin by plugin, for diagnostics) and [`release`] (the
//!   kube-scheduler release whose rules a plugin follows).
//! - The baselines, each a [`profile::Profile`] constant but `random` (all
//!   listed in [`registry::PROFILES`]): [`default`] (kube-scheduler's default profile),
//!   [`binpack`] (its bin-packing configuration, same release as `default`),
//!   [`random`], [`cost_binpack`] (cheapest per core, then fullest),
//!   [`target_load`] (Trimaran's TargetLoadPacking) and [`load_aware`]
//!   (Koordinator's LoadAwareScheduling).
//! - [`extender`]: a kube-scheduler HTTP extender on top of a profile
//!   (arms `extender:URL`), the way a policy in any language meets the
//!   lab's scenarios.
//! - [`agmarl`]: AGMARL-DKS, the multi-agent learned scheduler (arms
//!   `agmarl`, `agmarl-nognn`, `agmarl-linear`, `agmarl-nostress`).
//! - [`drs`]: the monolithic foil, a centralised DQN after DRS (arms `drs`,
//!   `drs-agmarl-reward`), one network per cluster size.

pub mod agmarl;
pub mod api;
pub mod binpack;
pub mod cost_binpack;
pub mod default;
pub mod diagnosis;
pub mod drs;
mod error;
pub mod explain;
pub mod extender;
pub mod feasible;
pub mod filters;
pub mod load_aware;
pub mod preemption;
pub mod profile;
pub mod random;
pub mod registry;
pub mod release;
pub mod scores;
pub mod select;
pub mod target_load;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use api::Scheduler;
pub use binpack::BinPackScheduler;
pub use cost_binpack::CostBinPackScheduler;
pub use default::DefaultScheduler;
pub use error::{Error, Result};
pub use load_aware::LoadAwareScheduler;
pub use random::RandomScheduler;
pub use registry::{
    ARM_NAMES, ArmError, BASELINE_NAMES, UnknownScheduler, arm, baseline, bundled_checkpoint, bundled_net,
    control_head_error, preempts,
};
pub use target_load::TargetLoadScheduler;
