//! Goodput: the pod-hours containers actually ran, so that an arm that
//! declines or strands pods cannot look better by not running them.

use schedlab_core::record::EventKind;
use schedlab_core::{NodeId, PodId, Time};
use std::collections::HashMap;

#[derive(Debug, Default)]
pub(super) struct Goodput {
    /// pods whose container runs now: since when, on which node
    running: HashMap<PodId, (Time, NodeId)>,
    ran_ms: u128,
}

impl Goodput {
    fn stop(&mut self, pod: PodId, t: Time) {
        if let Some((since, _)) = self.running.remove(&pod) {
            self.ran_ms += u128::from(t.since(since).as_millis());
        }
    }

    pub fn event(&mut self, t: Time, kind: &EventKind) {
        use EventKind as E;
        match kind {
            E::ContainerStarted { pod, node, .. } => {
                // a start without a stop before it closes the earlier run
                self.stop(*pod, t);
                self.running.insert(*pod, (t, *node));
            }
            E::ContainerExited { pod, .. } | E::PodDeleted { pod, .. } | E::PodEvicted { pod, .. } => {
                self.stop(*pod, t);
            }
            // A failed or lost node's containers stop with it, and no
            // ContainerExited says so: no kubelet is left to report.
            E::NodeFailed { node } | E::NodeLost { node } => {
                let stopped: Vec<PodId> = self
                    .running
                    .iter()
                    .filter(|(_, (_, n))| n == node)
                    .map(|(p, _)| *p)
                    .collect();
                for pod in stopped {
                    self.stop(pod, t);
                }
            }
            _ => {}
        }
    }

    /// Running pod-hours, containers still running counted to `end`.
    pub fn finish(mut self, end: Time) -> f64 {
        let open: Vec<PodId> = self.running.keys().copied().collect();
        for pod in open {
            self.stop(pod, end);
        }
        self.ran_ms as f64 / 3_600_000.0
    }
}
