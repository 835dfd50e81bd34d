//! What a pod's owner (a ReplicaSet-like controller) does when a pod ends.

use super::lifecycle::PodEnd;
use crate::record::DeleteCause;

/// Whether the owner of a workload with `recreate` set replaces a pod that
/// ended with `end`: after an eviction, a churn deletion, or a failure for
/// good, or a preemption, as a ReplicaSet keeps its replica count. Completed
/// pods and pods the scenario deleted for good are not replaced.
pub fn owner_recreates(recreate: bool, end: PodEnd) -> bool {
    recreate
        && matches!(
            end,
            PodEnd::Evicted
                | PodEnd::Failed
                | PodEnd::Deleted(DeleteCause::Churn)
                | PodEnd::Deleted(DeleteCause::Preempted)
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_lost_pods_only() {
        for end in [
            PodEnd::Evicted,
            PodEnd::Failed,
            PodEnd::Deleted(DeleteCause::Churn),
            PodEnd::Deleted(DeleteCause::Preempted),
        ] {
            assert!(owner_recreates(true, end));
            assert!(!owner_recreates(false, end));
        }
        assert!(!owner_recreates(true, PodEnd::Succeeded));
        assert!(!owner_recreates(true, PodEnd::Deleted(DeleteCause::Scenario)));
    }
}
