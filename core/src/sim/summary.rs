//! Counts of what a simulation did, for logs and benchmarks.

use crate::time::Time;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimSummary {
    /// the time the run reached
    pub end: Time,
    /// timeline actions applied
    pub actions: u64,
    /// event-queue items processed (lifecycle timers, stale ones included, and scheduling retries)
    pub queue_events: u64,
    /// calls of the placer
    pub scheduling_attempts: u64,
    pub binds: u64,
    /// binds refused because the node could not take the pod (scheduler bugs)
    pub rejected_binds: u64,
    /// pods deleted by preemption
    pub preempted: u64,
    /// preemptions refused because a victim was not a lower-priority pod on the node (scheduler bugs)
    pub rejected_preemptions: u64,
    pub pods_created: u64,
    pub container_starts: u64,
    pub samples: u64,
    /// records written to the sink
    pub records: u64,
    /// the most items the event queue held at once
    pub peak_queue: u64,
}
