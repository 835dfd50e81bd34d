//! What a run is asked to do, and what it did.

use schedlab_core::behaviour::ModelConfig;
use serde::{Deserialize, Serialize};

/// How one run plays a timeline against an API server.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    /// The run's id ([`super::new_run_id`]): a DNS label of at most 40
    /// characters, also the run's namespace and the value of its run label.
    pub run: String,
    /// The run's seed: every pod carries it for the behaviour model.
    pub seed: u64,
    /// The arm's scheduler: `spec.schedulerName` of every pod created
    /// ("default-scheduler" for the real kube-scheduler).
    pub scheduler_name: String,
    /// The time scale of the clock given to [`super::play`] (for manifests;
    /// play warns when its clock differs).
    pub clock_scale: f64,
    pub nodes: NodeSource,
    /// The behaviour model the run was planned with (checked before setup).
    pub model: ModelConfig,
    /// The workload image real kubelets run for each pod
    /// ([`crate::objects::use_workload_image`]); None: the pause image,
    /// for nodes the emulator plays.
    pub workload_image: Option<String>,
}

/// Where a run's nodes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeSource {
    /// Node objects made from the timeline's nodes, played by the node
    /// emulator (labelled emulated=true and run=<run>). Pods are kept to
    /// them with a node affinity on the run label.
    Emulated,
    /// The cluster's own nodes matched by a label selector ("" for all),
    /// numbered in name order. Pods are kept to them with a node affinity.
    /// The timeline's node list is not used: its node faults go to the
    /// existing node of the same index, if any.
    Existing { selector: String },
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// pods whose create call succeeded
    pub pods_created: u64,
    /// pods the scenario deleted (churn or for good)
    pub deletes: u64,
    /// KillPod/FailNode/RecoverNode/DegradeNode actions sent to the emulator
    pub faults_sent: u64,
    /// fault actions nobody could carry out (no emulator, or no such node)
    pub faults_unsupported: u64,
    /// records written to the sink
    pub records: u64,
    /// wall time of [`super::play`]
    pub wall_seconds: f64,
    /// wall time of [`super::setup`] before it
    #[serde(default)]
    pub setup_seconds: f64,
    /// requests sent again after a 429, a 5xx or a broken connection
    pub api_errors_retried: u64,
    /// the longest a pod create took, from when the scenario asked for the
    /// pod to when the API server had it, in scenario seconds: how far the
    /// cluster fell behind the scenario (a time scale too high shows here)
    #[serde(default)]
    pub create_lag_max_seconds: f64,
}
