//! Goodput: the pod-hours containers actually ran, so that an arm that
//! declines or strands pods cannot look better by not running them; and the
//! part of them that went to pods whose life ended well, so that hours spent
//! on work later lost (evicted, preempted, failed) do not count as work done.

use schedlab_core::record::{DeleteCause, EventKind};
use schedlab_core::{NodeId, PodId, Time};
use std::collections::HashMap;

/// How a pod incarnation's life ended, at its first ending event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// succeeded, or deleted by its workload (churn or the scenario)
    Good,
    /// failed, evicted, preempted, or its node was lost
    Lost,
}

#[derive(Debug, Default)]
pub(super) struct Goodput {
    /// pods whose container runs now: since when, on which node
    running: HashMap<PodId, (Time, NodeId)>,
    ran_ms: u128,
    /// every pod's running time, ms
    pod_ms: HashMap<PodId, u128>,
    /// the node each pod was last bound to
    bound_to: HashMap<PodId, NodeId>,
    fate: HashMap<PodId, Fate>,
}

/// Running pod-hours of a run, all of them and those of pods that ended well.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct GoodputHours {
    pub running: f64,
    pub good: f64,
}

impl Goodput {
    fn stop(&mut self, pod: PodId, t: Time) {
        if let Some((since, _)) = self.running.remove(&pod) {
            let ms = u128::from(t.since(since).as_millis());
            self.ran_ms += ms;
            *self.pod_ms.entry(pod).or_default() += ms;
        }
    }

    /// The pod's first ending decides its fate; later events do not change it.
    fn end_life(&mut self, pod: PodId, fate: Fate) {
        self.fate.entry(pod).or_insert(fate);
    }

    pub fn event(&mut self, t: Time, kind: &EventKind) {
        use EventKind as E;
        match kind {
            E::PodBound { pod, node } => {
                self.bound_to.insert(*pod, *node);
            }
            E::ContainerStarted { pod, node, .. } => {
                // a start without a stop before it closes the earlier run
                self.stop(*pod, t);
                self.running.insert(*pod, (t, *node));
            }
            E::ContainerExited { pod, .. } => self.stop(*pod, t),
            E::PodDeleted { pod, cause, .. } => {
                self.stop(*pod, t);
                let fate = match cause {
                    DeleteCause::Churn | DeleteCause::Scenario => Fate::Good,
                    DeleteCause::Preempted => Fate::Lost,
                };
                self.end_life(*pod, fate);
            }
            E::PodEvicted { pod, .. } => {
                self.stop(*pod, t);
                self.end_life(*pod, Fate::Lost);
            }
            E::PodSucceeded { pod, .. } => self.end_life(*pod, Fate::Good),
            E::PodFailed { pod, .. } => self.end_life(*pod, Fate::Lost),
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
                if matches!(kind, E::NodeLost { .. }) {
                    let lost: Vec<PodId> = self
                        .bound_to
                        .iter()
                        .filter(|(_, n)| *n == node)
                        .map(|(p, _)| *p)
                        .collect();
                    for pod in lost {
                        self.end_life(pod, Fate::Lost);
                    }
                }
            }
            _ => {}
        }
    }

    /// Running pod-hours, containers still running counted to `end`; and
    /// those of pods that ended well or whose container still runs at `end`.
    pub fn finish(mut self, end: Time) -> GoodputHours {
        let open: Vec<PodId> = self.running.keys().copied().collect();
        for pod in &open {
            // still running at the end, with no ending before it: a good life
            self.end_life(*pod, Fate::Good);
            self.stop(*pod, end);
        }
        let good_ms: u128 = self
            .pod_ms
            .iter()
            .filter(|(pod, _)| self.fate.get(pod) == Some(&Fate::Good))
            .map(|(_, ms)| *ms)
            .sum();
        GoodputHours {
            running: self.ran_ms as f64 / 3_600_000.0,
            good: good_ms as f64 / 3_600_000.0,
        }
    }
}
