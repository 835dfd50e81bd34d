//! The pod ledger: what happened to each pod incarnation, from the events.

use super::PodOutcome;
use super::strata::StratumPod;
use schedlab_core::record::{DeleteCause, EventKind, ExitReason};
use schedlab_core::{PodId, Time, WorkloadId};
use std::collections::HashMap;

#[derive(Debug)]
struct Pod {
    id: PodId,
    created: Time,
    memory_request: u64,
    workload: WorkloadId,
    priority: i32,
    first_bound: Option<Time>,
    /// when the pod was deleted (first PodDeleted)
    deleted: Option<Time>,
    binds: u32,
    /// PodBound events onto a node Degraded at that moment
    degraded_binds: u32,
    declined: bool,
    unschedulable: bool,
    succeeded: bool,
    failures: u32,
}

/// Event counts and per-pod state.
#[derive(Debug, Default)]
pub(super) struct Pods {
    // Vec in creation order (the order outputs follow); the map only finds
    // a pod's slot.
    pods: Vec<Pod>,
    index: HashMap<PodId, usize>,
    pub binds: u64,
    pub restarts: u64,
    pub oom_kills: u64,
    pub evictions: u64,
    pub failures: u64,
    /// PodNominated events: preemptions carried out
    pub preemptions: u64,
    /// pods deleted by preemption
    pub preempted: u64,
    /// creation → first bind, ms, one entry per pod bound
    pub latencies_ms: Vec<u64>,
}

/// What the ledger yields at the end of a run.
#[derive(Debug)]
pub(super) struct PodCounts {
    pub created: u64,
    pub bound: u64,
    pub pending_end: u64,
    pub declined: u64,
    pub unschedulable: u64,
    pub with_failure: u64,
    /// pods with a PodSucceeded event
    pub succeeded: u64,
    /// pods with no PodBound event
    pub never_bound: u64,
    pub outcomes: Vec<PodOutcome>,
    pub strata: Vec<StratumPod>,
}

impl Pods {
    /// Applies one event; `Err` with the reason if it contradicts the earlier
    /// ones. `onto_degraded`: a PodBound's node is Degraded at that moment.
    pub fn event(&mut self, t: Time, kind: &EventKind, onto_degraded: bool) -> Result<(), String> {
        use EventKind as E;
        if let E::PodCreated {
            pod,
            requests,
            slot,
            priority,
            ..
        } = kind
        {
            if self.index.contains_key(pod) {
                return Err(format!("a second PodCreated for pod {}", pod.0));
            }
            self.index.insert(*pod, self.pods.len());
            self.pods.push(Pod {
                id: *pod,
                created: t,
                memory_request: requests.memory_bytes,
                workload: slot.workload,
                priority: *priority,
                first_bound: None,
                deleted: None,
                binds: 0,
                degraded_binds: 0,
                declined: false,
                unschedulable: false,
                succeeded: false,
                failures: 0,
            });
            return Ok(());
        }
        let Some(id) = kind.pod() else {
            return Ok(());
        };
        let Some(pod) = self.index.get(&id).and_then(|&i| self.pods.get_mut(i)) else {
            return Err(format!("{} for pod {} that was never created", name(kind), id.0));
        };
        let needs_bound = !matches!(
            kind,
            E::PodUnschedulable { .. }
                | E::PodDeclined { .. }
                | E::PodBound { .. }
                | E::PodDeleted { .. }
                | E::PodNominated { .. }
        );
        if needs_bound && pod.first_bound.is_none() {
            return Err(format!("{} for pod {} that was never bound", name(kind), id.0));
        }
        let failed = kind.is_failure();
        match kind {
            E::PodUnschedulable { .. } => pod.unschedulable = true,
            E::PodDeclined { .. } => pod.declined = true,
            E::PodBound { .. } => {
                if t < pod.created {
                    return Err(format!(
                        "pod {} bound at {t} before its creation at {}",
                        id.0, pod.created
                    ));
                }
                self.binds += 1;
                pod.binds = pod.binds.saturating_add(1);
                if onto_degraded {
                    pod.degraded_binds = pod.degraded_binds.saturating_add(1);
                }
                if pod.first_bound.is_none() {
                    pod.first_bound = Some(t);
                    self.latencies_ms.push(t.since(pod.created).as_millis());
                }
            }
            E::ContainerStarted { restart_count, .. } => {
                if *restart_count > 0 {
                    self.restarts += 1;
                }
            }
            E::ContainerExited { reason, .. } => {
                if *reason == ExitReason::OOMKilled {
                    self.oom_kills += 1;
                }
            }
            E::PodEvicted { .. } => self.evictions += 1,
            E::PodDeleted { cause, .. } => {
                if pod.deleted.is_none() && *cause == DeleteCause::Preempted {
                    self.preempted += 1;
                }
                pod.deleted.get_or_insert(t);
            }
            E::PodNominated { .. } => self.preemptions += 1,
            E::PodSucceeded { .. } => pod.succeeded = true,
            E::PodFailed { .. } | E::PodCreated { .. } => {}
            E::NodeFailed { .. }
            | E::NodeDegraded { .. }
            | E::NodeRecovered { .. }
            | E::NodeLost { .. }
            | E::NodeReplaced { .. } => {}
        }
        if failed {
            self.failures += 1;
            pod.failures = pod.failures.saturating_add(1);
        }
        Ok(())
    }

    /// `pending_time_mean_s`: each pod's wait from creation to its first
    /// bind, or, never bound, to its deletion or `end`; `None` without pods.
    pub fn pending_time_mean_s(&self, end: Time) -> Option<f64> {
        if self.pods.is_empty() {
            return None;
        }
        let total_ms: u128 = self
            .pods
            .iter()
            .map(|p| {
                let until = p.first_bound.or(p.deleted).unwrap_or(end);
                u128::from(until.since(p.created).as_millis())
            })
            .sum();
        Some(total_ms as f64 / self.pods.len() as f64 / 1000.0)
    }

    pub fn counts(&self) -> PodCounts {
        let count = |f: fn(&Pod) -> bool| self.pods.iter().filter(|p| f(p)).count() as u64;
        PodCounts {
            created: self.pods.len() as u64,
            bound: count(|p| p.first_bound.is_some()),
            pending_end: count(|p| p.first_bound.is_none() && p.deleted.is_none()),
            declined: count(|p| p.declined),
            unschedulable: count(|p| p.unschedulable),
            with_failure: count(|p| p.failures > 0),
            succeeded: count(|p| p.succeeded),
            never_bound: count(|p| p.first_bound.is_none()),
            outcomes: self
                .pods
                .iter()
                .filter(|p| p.first_bound.is_some())
                .map(|p| PodOutcome {
                    pod: p.id,
                    memory_request_bytes: p.memory_request,
                    failures: p.failures,
                    workload: p.workload,
                })
                .collect(),
            strata: self
                .pods
                .iter()
                .map(|p| StratumPod {
                    priority: p.priority,
                    created: p.created,
                    first_bound: p.first_bound,
                    // a pod bound first cannot have been deleted pending
                    deleted_pending: p.deleted.filter(|_| p.first_bound.is_none()),
                    failures: p.failures,
                    binds: p.binds,
                    degraded_binds: p.degraded_binds,
                })
                .collect(),
        }
    }
}

/// The event's name as written in the records.
pub(super) fn name(kind: &EventKind) -> &'static str {
    use EventKind as E;
    match kind {
        E::PodCreated { .. } => "PodCreated",
        E::PodUnschedulable { .. } => "PodUnschedulable",
        E::PodDeclined { .. } => "PodDeclined",
        E::PodBound { .. } => "PodBound",
        E::ContainerStarted { .. } => "ContainerStarted",
        E::ContainerExited { .. } => "ContainerExited",
        E::PodSucceeded { .. } => "PodSucceeded",
        E::PodFailed { .. } => "PodFailed",
        E::PodEvicted { .. } => "PodEvicted",
        E::PodDeleted { .. } => "PodDeleted",
        E::PodNominated { .. } => "PodNominated",
        E::NodeFailed { .. } => "NodeFailed",
        E::NodeDegraded { .. } => "NodeDegraded",
        E::NodeRecovered { .. } => "NodeRecovered",
        E::NodeLost { .. } => "NodeLost",
        E::NodeReplaced { .. } => "NodeReplaced",
    }
}
