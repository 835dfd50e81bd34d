//! Each built-in reaches the regime its description promises, as facts
//! about the `default` arm's own records over a few seeds (never about
//! which arm wins). The same facts are in the book's "Scenarios" table (docs/src/scenarios.md).

use schedlab_core::record::{DeleteCause, EventKind, ExitReason, OomCause, Record};
use schedlab_core::{NodeCondition, NodeId, PodId, Resources, Time};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Plays `scenario` (a built-in name) with `default` on `seed`.
fn play(scenario: &str, seed: u64, set: &[&str]) -> Vec<Record> {
    play_arm(scenario, "default", seed, set)
}

/// Plays `scenario` with `arm` on `seed`.
fn play_arm(scenario: &str, arm: &str, seed: u64, set: &[&str]) -> Vec<Record> {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let s = workloads::load(scenario, &set).expect("the built-in loads");
    let mut sim = schedlab_core::sim::Sim::new(s.expand(seed), seed, schedlab_core::behaviour::ModelConfig::default())
        .expect("a valid timeline");
    let mut policy = scheduler::arm(arm, seed).expect("the arm builds");
    let mut placer =
        |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| policy.schedule(pod, view);
    let mut records = Vec::new();
    let end = sim.end();
    sim.run_until(end, &mut placer, &mut records);
    sim.finish(&mut placer, &mut records);
    records
}

/// What a run's records say about its regime.
#[derive(Debug, Default)]
struct Regime {
    samples: usize,
    /// sample times at which the requests of bound and pending pods exceed
    /// the Ready nodes' allocatable (cpu or memory)
    overcommitted: usize,
    pending_max: u32,
    pending_end: u32,
    /// after the pending peak, the lowest pending count
    pending_min_after_peak: u32,
    succeeded: u64,
    oom_limit: u64,
    oom_node_pressure: u64,
    /// node-pressure OOM victims that are not unstable, on a node that also
    /// hosted an unstable pod at the time
    neighbour_oom_victims: u64,
    /// longest stretch (ms) in which free allocatable (cpu or memory) of the
    /// Ready nodes is below 15%, after the first node fault
    scarce_ms_after_faults: u64,
    /// critical (highest-priority) pods created while free allocatable was below 15%
    critical_created_scarce: u64,
    /// critical pods created while other pods were waiting for a node
    critical_created_behind_queue: u64,
    /// the largest number of nodes that failed at one instant
    nodes_failed_at_once: usize,
    /// the highest share of Ready allocatable requested (cpu or memory) at a sample
    peak_requested_share: f64,
    critical_created: u64,
    /// failures of critical pods on degraded nodes
    critical_failures_on_degraded: u64,
    /// nodes that degraded and later failed while still degraded
    degraded_then_failed: usize,
    unstable_over_request: u64,
    /// pods the scenario deleted for good (a trace's deletions)
    deleted_for_good: u64,
    /// of those, pods still pending when deleted (they never ran)
    deleted_while_pending: u64,
    pods_created: u64,
    /// distinct slots given a pod (the first pod of each; owners recreate others)
    slots_with_pods: u64,
}

fn regime(records: &[Record]) -> Regime {
    let mut r = Regime::default();
    let mut requests: HashMap<PodId, Resources> = HashMap::new();
    let mut pending: BTreeMap<PodId, Resources> = BTreeMap::new();
    let mut priority: HashMap<PodId, i32> = HashMap::new();
    let mut unstable: BTreeSet<PodId> = BTreeSet::new();
    let mut on_node: HashMap<PodId, NodeId> = HashMap::new();
    let mut condition: HashMap<NodeId, NodeCondition> = HashMap::new();
    let mut degraded_once: BTreeSet<NodeId> = BTreeSet::new();
    let mut failed_after_degrade: BTreeSet<NodeId> = BTreeSet::new();
    let mut first_fault: Option<Time> = None;
    let mut scarce_since: Option<Time> = None;
    let mut scarce_now = false;
    let mut peak_at_sample = 0;
    let mut pendings = Vec::new();
    let mut failed_at: BTreeMap<Time, usize> = BTreeMap::new();
    let mut slots = BTreeSet::new();
    let top_priority = records
        .iter()
        .filter_map(|rec| match rec {
            Record::Event(e) => match e.kind {
                EventKind::PodCreated { priority, .. } => Some(priority),
                _ => None,
            },
            _ => None,
        })
        .max()
        .unwrap_or(0);
    for rec in records {
        match rec {
            Record::Event(e) => match &e.kind {
                EventKind::PodCreated {
                    pod,
                    slot,
                    requests: req,
                    priority: p,
                    unstable: u,
                    ..
                } => {
                    r.pods_created += 1;
                    slots.insert(*slot);
                    requests.insert(*pod, *req);
                    pending.insert(*pod, *req);
                    priority.insert(*pod, *p);
                    if *u {
                        unstable.insert(*pod);
                    }
                    if *p == top_priority && top_priority > 0 {
                        r.critical_created += 1;
                        if scarce_now {
                            r.critical_created_scarce += 1;
                        }
                        if pending.keys().any(|q| priority.get(q) != Some(&top_priority)) {
                            r.critical_created_behind_queue += 1;
                        }
                    }
                }
                EventKind::PodBound { pod, node } => {
                    pending.remove(pod);
                    on_node.insert(*pod, *node);
                }
                EventKind::PodDeleted { pod, cause, .. } => {
                    let was_pending = pending.remove(pod).is_some();
                    if *cause == DeleteCause::Scenario {
                        r.deleted_for_good += 1;
                        r.deleted_while_pending += u64::from(was_pending);
                    }
                    on_node.remove(pod);
                }
                EventKind::PodSucceeded { pod, .. } => {
                    r.succeeded += 1;
                    on_node.remove(pod);
                }
                EventKind::PodFailed { pod, .. } | EventKind::PodEvicted { pod, .. } => {
                    on_node.remove(pod);
                }
                EventKind::ContainerStarted { pod, usage, .. }
                    if unstable.contains(pod) && usage.memory_bytes > requests[pod].memory_bytes =>
                {
                    r.unstable_over_request += 1;
                }
                EventKind::ContainerExited {
                    pod,
                    node,
                    reason,
                    oom_cause,
                } => {
                    match oom_cause {
                        Some(OomCause::Limit) => r.oom_limit += 1,
                        Some(OomCause::NodePressure) => {
                            r.oom_node_pressure += 1;
                            let neighbour_unstable = on_node.iter().any(|(p, n)| n == node && unstable.contains(p));
                            if !unstable.contains(pod) && neighbour_unstable {
                                r.neighbour_oom_victims += 1;
                            }
                        }
                        None => {}
                    }
                    let failed = matches!(reason, ExitReason::Error | ExitReason::OOMKilled);
                    if failed
                        && priority.get(pod) == Some(&top_priority)
                        && top_priority > 0
                        && condition.get(node) == Some(&NodeCondition::Degraded)
                    {
                        r.critical_failures_on_degraded += 1;
                    }
                }
                EventKind::NodeDegraded { node } => {
                    condition.insert(*node, NodeCondition::Degraded);
                    degraded_once.insert(*node);
                    first_fault.get_or_insert(e.t);
                }
                EventKind::NodeFailed { node } | EventKind::NodeLost { node } => {
                    *failed_at.entry(e.t).or_insert(0) += 1;
                    if condition.get(node) == Some(&NodeCondition::Degraded) {
                        failed_after_degrade.insert(*node);
                    }
                    condition.insert(*node, NodeCondition::NotReady);
                    first_fault.get_or_insert(e.t);
                }
                EventKind::NodeRecovered { node } | EventKind::NodeReplaced { node } => {
                    condition.insert(*node, NodeCondition::Ready);
                }
                _ => {}
            },
            Record::ClusterSample(s) => {
                r.samples += 1;
                let waiting = pending.values().fold(Resources::ZERO, |a, b| a + *b);
                let demand = s.requested + waiting;
                if demand.cpu_milli > s.allocatable.cpu_milli || demand.memory_bytes > s.allocatable.memory_bytes {
                    r.overcommitted += 1;
                }
                let free = |used: u64, all: u64| if all == 0 { 0.0 } else { 1.0 - used as f64 / all as f64 };
                let scarce = free(s.requested.cpu_milli, s.allocatable.cpu_milli) < 0.15
                    || free(s.requested.memory_bytes, s.allocatable.memory_bytes) < 0.15;
                scarce_now = scarce;
                let share = |used: u64, all: u64| if all == 0 { 0.0 } else { used as f64 / all as f64 };
                r.peak_requested_share = r
                    .peak_requested_share
                    .max(share(s.requested.cpu_milli, s.allocatable.cpu_milli))
                    .max(share(s.requested.memory_bytes, s.allocatable.memory_bytes));
                if scarce && first_fault.is_some_and(|f| s.t >= f) {
                    let since = *scarce_since.get_or_insert(s.t);
                    r.scarce_ms_after_faults = r.scarce_ms_after_faults.max(s.t.since(since).as_millis());
                } else {
                    scarce_since = None;
                }
                if s.pending > r.pending_max {
                    r.pending_max = s.pending;
                    peak_at_sample = pendings.len();
                }
                pendings.push(s.pending);
                r.pending_end = s.pending;
            }
            _ => {}
        }
    }
    r.pending_min_after_peak = pendings[peak_at_sample..].iter().copied().min().unwrap_or(0);
    r.degraded_then_failed = failed_after_degrade.intersection(&degraded_once).count();
    r.nodes_failed_at_once = failed_at.values().copied().max().unwrap_or(0);
    r.slots_with_pods = slots.len() as u64;
    r
}

const SEEDS: [u64; 3] = [1, 2, 3];

#[test]
fn pressure_overcommits_queues_drains_and_ooms_nodes() {
    for seed in SEEDS {
        let r = regime(&play("pressure", seed, &[]));
        eprintln!("pressure seed {seed}: {r:?}");
        assert!(
            r.overcommitted * 3 >= r.samples,
            "requests exceed allocatable at {} of {} samples",
            r.overcommitted,
            r.samples
        );
        assert!(r.pending_max >= 100, "pods queue: peak {}", r.pending_max);
        assert!(
            r.pending_min_after_peak * 10 <= r.pending_max,
            "the queue drains: {} after a peak of {}",
            r.pending_min_after_peak,
            r.pending_max
        );
        assert!(r.succeeded > 0, "work completes");
        assert!(r.oom_node_pressure > 0, "node-pressure OOM kills occur");
    }
}

#[test]
fn churn_is_tight_after_the_faults_and_its_critical_pods_arrive_when_room_is_scarce() {
    let mut neighbour_ooms = 0;
    let mut critical_failures_on_degraded = 0;
    for seed in SEEDS {
        let r = regime(&play("churn", seed, &[]));
        eprintln!("churn seed {seed}: {r:?}");
        assert!(
            r.scarce_ms_after_faults >= 3 * 60_000,
            "free allocatable below 15% for {} s after the faults",
            r.scarce_ms_after_faults / 1000
        );
        assert!(r.unstable_over_request > 0, "unstable pods use more than they request");
        assert!(
            r.critical_created_scarce * 2 >= r.critical_created,
            "{} of {} critical pods arrive while room is scarce",
            r.critical_created_scarce,
            r.critical_created
        );
        assert!(r.degraded_then_failed > 0, "some nodes degrade before they fail");
        neighbour_ooms += r.neighbour_oom_victims;
        critical_failures_on_degraded += r.critical_failures_on_degraded;
    }
    assert!(
        neighbour_ooms > 0,
        "unstable pods push neighbours into node-pressure OOMs"
    );
    assert!(
        critical_failures_on_degraded > 0,
        "critical pods can fail on degraded nodes"
    );
}

#[test]
fn mixed_queues_batch_work_serves_critical_groups_behind_it_and_loses_a_zone() {
    for seed in SEEDS {
        let r = regime(&play("mixed", seed, &[]));
        eprintln!("mixed seed {seed}: {r:?}");
        assert!(r.succeeded > 0, "batch jobs complete");
        assert!(r.pending_max >= 20, "batch work queues: peak {}", r.pending_max);
        assert!(
            r.critical_created_behind_queue * 2 >= r.critical_created,
            "{} of {} critical pods arrive while other pods wait",
            r.critical_created_behind_queue,
            r.critical_created
        );
        // a zone of the default size: 15 on-demand nodes fail together
        assert!(
            r.nodes_failed_at_once >= 15,
            "a zone outage: {} at once",
            r.nodes_failed_at_once
        );
        assert!(r.degraded_then_failed > 0, "some nodes degrade before they fail");
    }
}

#[test]
fn trace_queues_at_its_peaks_and_the_trace_deletes_its_pods() {
    for seed in SEEDS {
        let r = regime(&play("trace", seed, &[]));
        eprintln!("trace seed {seed}: {r:?}");
        assert_eq!(r.slots_with_pods, 600, "every row of the bundled sample is a pod");
        assert!(
            r.pending_max >= 10,
            "pods queue at the peaks ({} pending at most)",
            r.pending_max
        );
        assert!(
            r.pending_min_after_peak * 2 <= r.pending_max,
            "the queue drains after its peak ({} of {})",
            r.pending_min_after_peak,
            r.pending_max
        );
        assert!(r.overcommitted > 0, "demand exceeds the cluster at some samples");
        assert!(
            r.deleted_for_good >= 300,
            "the trace deletes its tasks ({})",
            r.deleted_for_good
        );
    }
}

/// The memory request of each slot's first pod, by workload.
fn memory_requests_by_workload(records: &[Record]) -> BTreeMap<u32, Vec<u64>> {
    let mut seen = BTreeSet::new();
    let mut out: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for rec in records {
        if let Record::Event(e) = rec
            && let EventKind::PodCreated { slot, requests, .. } = &e.kind
            && seen.insert(*slot)
        {
            out.entry(slot.workload.0).or_default().push(requests.memory_bytes);
        }
    }
    out
}

#[test]
fn autoscaled_varies_requests_within_workloads_under_memory_pressure_and_faults() {
    for seed in SEEDS {
        let records = play("autoscaled", seed, &[]);
        let r = regime(&records);
        eprintln!("autoscaled seed {seed}: {r:?}");
        assert!(r.peak_requested_share >= 0.9, "tight: peak {}", r.peak_requested_share);
        assert!(
            r.pending_max >= 10,
            "pods wait after the faults: peak {}",
            r.pending_max
        );
        assert!(r.oom_node_pressure > 0, "node-pressure OOM kills occur");
        assert!(r.degraded_then_failed > 0, "some nodes degrade before they fail");
        // two workloads whose pods ask for memory spread over a factor > 2
        // between their 10th and 90th percentiles
        let varying = memory_requests_by_workload(&records)
            .into_values()
            .filter(|m| {
                let mut m = m.clone();
                m.sort_unstable();
                m.len() >= 20 && m[m.len() * 9 / 10] as f64 > 2.0 * m[m.len() / 10] as f64
            })
            .count();
        assert_eq!(varying, 2, "service and cache vary within the workload");
    }
}

/// Common random numbers: whichever arm runs, the pod of a slot asks for
/// the same requests on one seed (and for others on another seed). Only the
/// requests are compared, never what the arms make of them.
#[test]
fn every_arm_of_a_seed_sees_the_same_drawn_requests() {
    let requests = |records: &[Record]| {
        let mut by_slot = BTreeMap::new();
        for rec in records {
            if let Record::Event(e) = rec
                && let EventKind::PodCreated { slot, requests, .. } = &e.kind
            {
                let first = *by_slot.entry(*slot).or_insert(*requests);
                assert_eq!(first, *requests, "{slot:?} keeps its requests across incarnations");
            }
        }
        by_slot
    };
    let set = ["nodes=8"];
    let default = requests(&play_arm("autoscaled", "default", 4, &set));
    let random = requests(&play_arm("autoscaled", "random", 4, &set));
    let common: Vec<_> = default.keys().filter(|k| random.contains_key(k)).collect();
    assert!(common.len() > 50, "{} slots in both runs", common.len());
    for slot in common {
        assert_eq!(default[slot], random[slot], "{slot:?}");
    }
    let other_seed = requests(&play_arm("autoscaled", "default", 5, &set));
    assert!(default.iter().any(|(k, v)| other_seed.get(k).is_some_and(|o| o != v)));
}
