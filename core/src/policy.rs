//! The interface every scheduling policy implements, and every backend
//! calls: the simulator directly, the watch-and-bind loop and the
//! in-cluster scheduler around it.

use crate::explanation::{Explained, Explanation};
use crate::view::{ClusterView, PendingPod, Placement};

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

    /// Asks the policy to explain its decisions from now on (or to stop).
    /// Explaining must not change a decision: a policy records what the
    /// decision computed anyway, draws nothing from its random stream, and
    /// skips the recording entirely while off. The default ignores the
    /// request: such a policy does not explain.
    fn set_explain(&mut self, _on: bool) {}

    /// The explanation of the last [`Scheduler::schedule`] call, while
    /// explaining is on; None for a policy that does not explain (the
    /// default) and before the first decision.
    fn explanation(&self) -> Option<Explanation> {
        None
    }

    /// The last decision explained for its decision record: the policy's
    /// explanation with the cluster's stress, when the policy is wrapped
    /// to explain (`scheduler::explain::Explaining`); None otherwise (the
    /// default). A backend asks after timing the decision, and writes the
    /// record to its sink ([`crate::record::RecordSink::decision`]).
    fn explained(&self) -> Option<Explained> {
        None
    }
}

/// A function of the pod and the cluster is a policy (named "policy", it
/// does not explain): tests, benchmarks and wrappers that record around
/// another policy are written as closures.
impl<F> Scheduler for F
where
    F: FnMut(&PendingPod<'_>, &ClusterView<'_>) -> Placement + Send,
{
    fn name(&self) -> &str {
        "policy"
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        self(pod, cluster)
    }
}
