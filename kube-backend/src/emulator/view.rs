//! What the emulator shows of a pod: the containers it started and how they
//! ended, kept from the lifecycle's events, as kubelet keeps container
//! statuses. The status writer turns a [`PodView`] into `pods/status`.

use super::driver::PodKey;
use schedlab_core::behaviour::{PodEnd, PodPhase};
use schedlab_core::record::{EventKind, ExitReason, OomCause};
use schedlab_core::resources::Resources;
use schedlab_core::time::Time;

/// A container start: its number (0 for the first) and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub number: u32,
    pub at: Time,
}

/// A container that stopped, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub start: Start,
    pub finished: Time,
    pub reason: ExitReason,
    pub oom_cause: Option<OomCause>,
}

/// A pod's containers as kubelet would report them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Containers {
    /// when the pod was bound to its node (the pod's startTime)
    pub bound_at: Time,
    /// container starts so far
    pub starts: u32,
    /// the last container started, until it exits. A container stopped by a
    /// node failure stays here (shown waiting, NodeNotReady): no kubelet was
    /// left to report its end, and the simulator records no exit for it.
    pub current: Option<Start>,
    pub last_exit: Option<Exit>,
    /// the exit before `last_exit` (lastState of a pod that ended)
    pub prev_exit: Option<Exit>,
    /// a container runs
    pub ready: bool,
    pub ready_changed: Time,
    /// the running container's usage (zero when none runs)
    pub usage: Resources,
    pub end: Option<PodEnd>,
}

impl Containers {
    /// Keeps what `event` (of the pod's lifecycle, at `now`) changes.
    pub fn on_event(&mut self, event: &EventKind, now: Time) {
        match *event {
            EventKind::ContainerStarted { restart_count, .. } => {
                self.current = Some(Start {
                    number: restart_count,
                    at: now,
                });
                self.starts = restart_count.saturating_add(1);
            }
            EventKind::ContainerExited { reason, oom_cause, .. } => {
                let start = self.current.take().unwrap_or(Start {
                    number: self.starts.saturating_sub(1),
                    at: now,
                });
                self.prev_exit = self.last_exit.take();
                self.last_exit = Some(Exit {
                    start,
                    finished: now,
                    reason,
                    oom_cause,
                });
            }
            _ => {}
        }
    }

    /// kubelet's restartCount: container starts after the first.
    pub fn restart_count(&self) -> u32 {
        self.starts.saturating_sub(1)
    }
}

/// A snapshot of one pod for the status writer.
#[derive(Debug, Clone, PartialEq)]
pub struct PodView {
    pub key: PodKey,
    pub uid: String,
    pub phase: PodPhase,
    pub containers: Containers,
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::node::NodeId;
    use schedlab_core::pod::PodId;

    #[test]
    fn exits_remember_the_container_and_the_one_before() {
        let mut c = Containers::default();
        let started = |n| EventKind::ContainerStarted {
            pod: PodId(1),
            node: NodeId(0),
            restart_count: n,
            usage: Resources::ZERO,
        };
        let exited = |reason| EventKind::ContainerExited {
            pod: PodId(1),
            node: NodeId(0),
            reason,
            oom_cause: None,
        };
        c.on_event(&started(0), Time(10));
        assert_eq!(
            c.current,
            Some(Start {
                number: 0,
                at: Time(10)
            })
        );
        c.on_event(&exited(ExitReason::Error), Time(20));
        assert_eq!(c.current, None);
        c.on_event(&started(1), Time(30));
        c.on_event(&exited(ExitReason::OOMKilled), Time(40));
        assert_eq!(c.restart_count(), 1);
        let last = c.last_exit.unwrap();
        assert_eq!(
            (last.start.number, last.finished, last.reason),
            (1, Time(40), ExitReason::OOMKilled)
        );
        assert_eq!(c.prev_exit.unwrap().reason, ExitReason::Error);
    }
}
