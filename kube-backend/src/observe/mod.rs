//! What changed in a pod, as the simulator's events.
//!
//! A watch shows a pod's states, not its transitions, and after a relist it
//! may skip some. [`PodObservation`] keeps what was seen of one pod and turns
//! each new state into the events the simulator records for the same
//! transitions, in the simulator's order: the scheduler's answers while the
//! pod is pending, its binding, container exits and starts as they
//! alternated, and its end last.
//!
//! Containers are told apart by their IDs (a new one per start) and counted
//! by kubelet's restartCount. Exits come from the termination records
//! (`lastState.terminated`, and `state.terminated` once the pod ended). When
//! the count jumped by more than one since the last state, the containers in
//! between started and stopped unseen: each gets a start and an exit with
//! reason Error, so restart and failure counts stay right. A container that
//! stopped without a record while exactly one new one started, or that is
//! shown waiting for another reason than CrashLoopBackOff (the node
//! emulator's NodeNotReady), was stopped by its node going down, which the
//! simulator records without an exit; so is the container of an evicted pod.

mod status;

pub use schedlab_core::verdict::Answer;

use k8s_openapi::api::core::v1 as core;
use schedlab_core::behaviour::PodEnd;
use schedlab_core::node::NodeId;
use schedlab_core::pod::PodId;
use schedlab_core::record::{EventKind, ExitReason};
use schedlab_core::resources::Resources;
use status::{Snapshot, Stop, Terminal, Termination};
use std::borrow::Cow;
use std::collections::VecDeque;

/// Container IDs whose stop was accounted, kept to tell fresh termination
/// records from ones already seen; a pod shows at most two records at once.
const CLOSED_KEPT: usize = 4;

/// What has been seen of one pod.
#[derive(Debug, Clone)]
pub struct PodObservation {
    pod: PodId,
    node: Option<NodeId>,
    /// the node name the pod is bound to while `node_id` does not know it
    awaiting_node: Option<String>,
    answer: Option<Answer>,
    /// container starts accounted (the next start's restart count)
    starts: u32,
    /// the ID of the container accounted as running
    running: Option<String>,
    closed: VecDeque<String>,
    usage: Resources,
    ended: Option<PodEnd>,
}

impl Default for PodObservation {
    fn default() -> PodObservation {
        PodObservation::new(PodId(0))
    }
}

impl PodObservation {
    /// Nothing seen yet of the pod that events will name `pod`.
    pub fn new(pod: PodId) -> PodObservation {
        PodObservation {
            pod,
            node: None,
            awaiting_node: None,
            answer: None,
            starts: 0,
            running: None,
            closed: VecDeque::with_capacity(CLOSED_KEPT),
            usage: Resources::ZERO,
            ended: None,
        }
    }

    /// Compares the pod's latest state with what was seen before; pushes the
    /// events that happened in between, in order, and remembers the new
    /// state. `node_id` maps a node name to its NodeId; a pod bound to a node
    /// it does not know yet waits (nothing after the binding is emitted)
    /// until a later call knows the node.
    pub fn observe(&mut self, pod: &core::Pod, node_id: &dyn Fn(&str) -> Option<NodeId>, out: &mut Vec<EventKind>) {
        if self.ended.is_some() {
            return;
        }
        let snap = Snapshot::of(pod);
        let node = match (self.node, snap.node_name) {
            (Some(node), _) => node,
            (None, None) => {
                if let Some((answer, message)) = snap.answer
                    && self.answer != Some(answer)
                {
                    self.answer = Some(answer);
                    let reason = Cow::Owned(message.to_string());
                    out.push(answer.event(self.pod, reason));
                }
                return;
            }
            (None, Some(name)) => match node_id(name) {
                Some(node) => {
                    self.node = Some(node);
                    self.awaiting_node = None;
                    out.push(EventKind::PodBound { pod: self.pod, node });
                    node
                }
                None => {
                    if self.awaiting_node.as_deref() != Some(name) {
                        self.awaiting_node = Some(name.to_string());
                    }
                    return;
                }
            },
        };
        self.containers(&snap, node, out);
        self.usage = match (&self.running, snap.usage) {
            (Some(_), Some(usage)) => usage,
            _ => Resources::ZERO,
        };
        if let Some(terminal) = snap.terminal {
            let (end, event) = match terminal {
                Terminal::Succeeded => (PodEnd::Succeeded, EventKind::PodSucceeded { pod: self.pod, node }),
                Terminal::Failed => (PodEnd::Failed, EventKind::PodFailed { pod: self.pod, node }),
                Terminal::Evicted => (PodEnd::Evicted, EventKind::PodEvicted { pod: self.pod, node }),
            };
            out.push(event);
            self.ended = Some(end);
            self.usage = Resources::ZERO;
        }
    }

    /// The container starts and stops between the last state and `snap`.
    fn containers(&mut self, snap: &Snapshot<'_>, node: NodeId, out: &mut Vec<EventKind>) {
        let c = &snap.container;
        // an ended pod runs nothing, whatever its stale container state says
        let running_now = (c.running && snap.terminal.is_none()).then_some(c.id);
        let known = self.running.as_deref();
        if running_now.is_some() && running_now == known {
            return;
        }
        let before = self.starts;
        let mut starts = c.starts().max(before);
        if running_now.is_some() && starts == before {
            // a new running container is a new start, whatever the count says
            starts = before.saturating_add(1);
        }
        let jump = starts - before;
        let evicted = snap.terminal == Some(Terminal::Evicted);
        // which container each fresh record is about: the known running one
        // by its ID, else by where kubelet puts records
        let mut records: [Option<(u32, Termination<'_>)>; 2] = [None, None];
        let last_of = |t: &Termination<'_>| -> Option<u32> {
            if known == Some(t.id) {
                before.checked_sub(1)
            } else if c.terminated.is_some() || running_now.is_some() {
                starts.checked_sub(2)
            } else {
                starts.checked_sub(1)
            }
        };
        if let Some(t) = c.last_terminated.filter(|t| self.is_fresh(t.id))
            && let Some(k) = last_of(&t)
        {
            records[0] = Some((k, t));
        }
        // an evicted pod's container was stopped by its node going down,
        // without an exit of its own
        if let Some(t) = c.terminated.filter(|t| !evicted && self.is_fresh(t.id)) {
            let k = if known == Some(t.id) {
                before.checked_sub(1)
            } else {
                starts.checked_sub(1)
            };
            if let Some(k) = k {
                records[1] = Some((k, t));
            }
        }
        let record_of = |k: u32| records.iter().flatten().find(|(n, _)| *n == k).map(|(_, t)| *t);
        let first = if known.is_some() { before - 1 } else { before };
        for k in first..starts {
            if k >= before {
                let usage = match running_now {
                    Some(_) if k + 1 == starts => snap.usage.unwrap_or(Resources::ZERO),
                    _ => Resources::ZERO,
                };
                out.push(EventKind::ContainerStarted {
                    pod: self.pod,
                    node,
                    restart_count: k,
                    usage,
                });
            }
            let last = k + 1 == starts;
            if last && running_now.is_some() {
                break;
            }
            let stop = match record_of(k) {
                Some(t) => {
                    self.close(t.id);
                    t.stop
                }
                None if last => match snap.terminal {
                    Some(Terminal::Succeeded) => Stop::Exit(ExitReason::Completed, None),
                    Some(Terminal::Failed) => Stop::Exit(ExitReason::Error, None),
                    Some(Terminal::Evicted) => Stop::Lost,
                    None if c.waiting_reason == Some("CrashLoopBackOff") => Stop::Exit(ExitReason::Error, None),
                    None => Stop::Lost,
                },
                // replaced by exactly one new container without a record: its
                // node went down and came back
                None if jump == 1 => Stop::Lost,
                None => Stop::Exit(ExitReason::Error, None),
            };
            if k + 1 == before
                && let Some(id) = self.running.take()
            {
                self.close_owned(id);
            }
            if let Stop::Exit(reason, oom_cause) = stop {
                out.push(EventKind::ContainerExited {
                    pod: self.pod,
                    node,
                    reason,
                    oom_cause,
                });
            }
        }
        self.starts = starts;
        self.running = running_now.map(str::to_string);
        // records of containers this state outdates are seen; a later
        // state must not take them for new ones
        for t in [c.last_terminated, c.terminated].into_iter().flatten() {
            self.close(t.id);
        }
    }

    fn is_fresh(&self, id: &str) -> bool {
        !self.closed.iter().any(|c| c == id)
    }

    fn close(&mut self, id: &str) {
        if self.is_fresh(id) {
            self.close_owned(id.to_string());
        }
    }

    fn close_owned(&mut self, id: String) {
        if self.closed.iter().any(|c| *c == id) {
            return;
        }
        if self.closed.len() == CLOSED_KEPT {
            self.closed.pop_front();
        }
        self.closed.push_back(id);
    }

    /// The pod events name.
    pub fn pod(&self) -> PodId {
        self.pod
    }
    /// The node the pod is bound to, once that node is known.
    pub fn node(&self) -> Option<NodeId> {
        self.node
    }
    pub fn is_bound(&self) -> bool {
        self.node.is_some()
    }
    /// The node name of a bound pod whose node was not known when seen.
    pub fn awaiting_node(&self) -> Option<&str> {
        self.awaiting_node.as_deref()
    }
    /// The scheduler's last answer while the pod was pending.
    pub fn last_answer(&self) -> Option<Answer> {
        self.answer
    }
    /// Succeeded, Failed or Evicted once the pod's phase says so; a deletion
    /// is the caller's to note.
    pub fn ended(&self) -> Option<PodEnd> {
        self.ended
    }
    /// Container starts seen (the restart count is one less).
    pub fn starts(&self) -> u32 {
        self.starts
    }
    /// Whether a container is running.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }
    /// The running container's usage (from the Usage condition), else zero.
    pub fn running_usage(&self) -> Resources {
        self.usage
    }
}

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
