//! Why a timeline cannot be simulated.

use crate::behaviour::ModelConfigError;
use crate::dist::DistError;
use crate::node::NodeId;
use crate::pod::WorkloadId;
use crate::time::Time;

/// A timeline or model config the simulator refuses, found before anything runs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error("timeline: actions[{index}] at {at} names node {node:?}, but the cluster has {nodes} nodes")]
    UnknownNode {
        index: usize,
        at: Time,
        node: NodeId,
        nodes: usize,
    },
    #[error(
        "timeline: actions[{index}] at {at} names workload {workload:?}, but the timeline has {workloads} workloads"
    )]
    UnknownWorkload {
        index: usize,
        at: Time,
        workload: WorkloadId,
        workloads: usize,
    },
    #[error("timeline: workloads[{index}] has id {id:?}; workload ids must equal their index")]
    WorkloadIdMismatch { index: usize, id: WorkloadId },
    #[error("timeline: workload {workload:?}: behaviour.{field}: {source}")]
    InvalidDistribution {
        workload: String,
        field: &'static str,
        source: DistError,
    },
    #[error("timeline: workload {workload:?}: behaviour.{field} = {value}: expected a finite number >= 0")]
    InvalidCrashRate {
        workload: String,
        field: &'static str,
        value: f64,
    },
    #[error("timeline: sample_interval must be > 0")]
    ZeroSampleInterval,
    #[error("timeline: {nodes} nodes is more than node ids can number")]
    TooManyNodes { nodes: usize },
    #[error(transparent)]
    Model(#[from] ModelConfigError),
    #[error("decision-time histogram: {0}")]
    Histogram(String),
}
