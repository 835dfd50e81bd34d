//! The interface every scheduling policy implements.

use clusters::{ClusterView, PendingPod, Placement};

/// A scheduling policy: one decision per pending pod.
///
/// Backends call [`Scheduler::schedule`] once per scheduling attempt, in the
/// order pods leave their queue, with the cluster as it is at that moment.
/// A policy may keep state between calls (a rotating start index, a random
/// stream, learned parameters); it must draw randomness only from streams
/// seeded by the run's seed so that runs replay exactly.
pub trait Scheduler: Send {
    /// The arm name, e.g. "default".
    fn name(&self) -> &str;

    /// Decides where `pod` goes. The view includes every node, ready or not;
    /// feasibility is the policy's business.
    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement;
}
