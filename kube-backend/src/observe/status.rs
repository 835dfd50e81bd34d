//! The parts of a pod's status that [`super::PodObservation`] compares:
//! what the scheduler answered, where the pod is bound, its container's
//! starts and terminations, its phase and the running container's usage.

use crate::labels;
use crate::objects::{self, CONTAINER};
use k8s_openapi::api::core::v1 as core;
use schedlab_core::record::{ExitReason, OomCause};
use schedlab_core::resources::Resources;
use schedlab_core::verdict::Answer;

/// How a container stopped, as its termination record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// an exit the simulator records as an event
    Exit(ExitReason, Option<OomCause>),
    /// lost with its node (kubelet's ContainerStatusUnknown): the simulator
    /// stops such a container without an event
    Lost,
}

/// Kubelet's reasons for a container it could not find any more (its node
/// went away); no exit the container made itself.
const LOST_REASONS: [&str; 2] = ["ContainerStatusUnknown", "Unknown"];

/// One `terminated` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Termination<'a> {
    pub(crate) id: &'a str,
    pub(crate) stop: Stop,
}

impl<'a> Termination<'a> {
    fn of(t: &'a core::ContainerStateTerminated, fallback_id: &'a str) -> Termination<'a> {
        let id = t
            .container_id
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or(fallback_id);
        let reason = t.reason.as_deref().unwrap_or("");
        let stop = if LOST_REASONS.contains(&reason) {
            Stop::Lost
        } else if reason == "OOMKilled" {
            let cause = match t.message.as_deref() {
                Some(labels::OOM_LIMIT_MESSAGE) => Some(OomCause::Limit),
                Some(labels::OOM_NODE_PRESSURE_MESSAGE) => Some(OomCause::NodePressure),
                _ => None,
            };
            Stop::Exit(ExitReason::OOMKilled, cause)
        } else if reason == "Completed" || (reason != "Error" && t.exit_code == 0) {
            Stop::Exit(ExitReason::Completed, None)
        } else {
            Stop::Exit(ExitReason::Error, None)
        };
        Termination { id, stop }
    }
}

/// The pod's container, as kubelet (or the node emulator) reports it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Container<'a> {
    /// the latest container's ID
    pub(crate) id: &'a str,
    pub(crate) restart_count: u32,
    pub(crate) running: bool,
    pub(crate) waiting_reason: Option<&'a str>,
    /// `state.terminated`: the latest container stopped for good
    pub(crate) terminated: Option<Termination<'a>>,
    /// `lastState.terminated`: the container before, or the latest one while
    /// it waits out its back-off
    pub(crate) last_terminated: Option<Termination<'a>>,
}

impl Container<'_> {
    /// Containers started so far (kubelet's restartCount counts the starts
    /// after the first).
    pub(crate) fn starts(&self) -> u32 {
        let started = self.running
            || self.terminated.is_some()
            || self.last_terminated.is_some()
            || self.restart_count > 0
            || self.waiting_reason == Some("CrashLoopBackOff");
        if started {
            self.restart_count.saturating_add(1)
        } else {
            0
        }
    }
}

/// How a pod ended, as its phase says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Terminal {
    Succeeded,
    Failed,
    Evicted,
}

/// Everything the observation reads from one state of a pod.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Snapshot<'a> {
    pub(crate) node_name: Option<&'a str>,
    /// PodScheduled=False with a reason a scheduler gives for not placing it
    pub(crate) answer: Option<(Answer, &'a str)>,
    pub(crate) container: Container<'a>,
    pub(crate) terminal: Option<Terminal>,
    /// the Usage condition, when True
    pub(crate) usage: Option<Resources>,
}

impl<'a> Snapshot<'a> {
    pub(crate) fn of(pod: &'a core::Pod) -> Snapshot<'a> {
        let status = pod.status.as_ref();
        let answer = status
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "PodScheduled" && c.status == "False"))
            .and_then(|c| {
                let answer = labels::answer_of_reason(c.reason.as_deref()?)?;
                Some((answer, c.message.as_deref().unwrap_or("")))
            });
        let terminal = match status.and_then(|s| s.phase.as_deref()) {
            Some("Succeeded") => Some(Terminal::Succeeded),
            Some("Failed") if status.and_then(|s| s.reason.as_deref()) == Some(labels::EVICTED_REASON) => {
                Some(Terminal::Evicted)
            }
            Some("Failed") => Some(Terminal::Failed),
            _ => None,
        };
        Snapshot {
            node_name: objects::pod_node_name(pod),
            answer,
            container: container_of(status),
            terminal,
            usage: objects::pod_usage_of(pod),
        }
    }
}

/// schedlab's pods have one container, "main"; of a foreign pod the first
/// one stands for the pod.
fn container_of(status: Option<&core::PodStatus>) -> Container<'_> {
    let Some(statuses) = status.and_then(|s| s.container_statuses.as_ref()) else {
        return Container::default();
    };
    let Some(cs) = statuses
        .iter()
        .find(|c| c.name == CONTAINER)
        .or_else(|| statuses.first())
    else {
        return Container::default();
    };
    let id = cs.container_id.as_deref().unwrap_or("");
    let state = cs.state.as_ref();
    Container {
        id,
        restart_count: u32::try_from(cs.restart_count).unwrap_or(0),
        running: state.is_some_and(|s| s.running.is_some()),
        waiting_reason: state.and_then(|s| s.waiting.as_ref()).and_then(|w| w.reason.as_deref()),
        terminated: state
            .and_then(|s| s.terminated.as_ref())
            .map(|t| Termination::of(t, id)),
        last_terminated: cs
            .last_state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .map(|t| Termination::of(t, "")),
    }
}
