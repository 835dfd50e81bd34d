//! kube-scheduler's DefaultPreemption PostFilter as of v1.20
//! (`pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`),
//! for a pod no node could take, and the nominated pods every Filter run
//! accounts for (`RunFilterPluginsWithNominatedPods`, `addNominatedPods`).
//!
//! - Potential nodes (`nodesWherePreemptionMightHelp`): those whose rejection
//!   was not `UnschedulableAndUnresolvable`. NodeUnschedulable and
//!   TaintToleration (the unreachable taints of a NotReady node included)
//!   are unresolvable; NodeResourcesFit and plugins outside the default
//!   profile are not.
//! - Dry run (`dryRunPreemption`, `selectVictimsOnNode`): on a copy of the
//!   node, remove every pod of lower priority; if the pod still does not
//!   pass the filters, the node is no candidate. Otherwise add the removed
//!   pods back, most important first (`MoreImportantPod`: higher priority,
//!   then earlier start), keeping each that still leaves room; the rest are
//!   the victims, most important first. Over 100 potential nodes, the scan
//!   starts at a random offset and stops after
//!   `max(10% of the potential nodes, 100)` candidates
//!   (`getOffsetAndNumCandidates`); sequentially here, where upstream fans
//!   out in parallel.
//! - Choice (`pickOneNodeForPreemption`): fewest PodDisruptionBudget
//!   violations (the model has no PDBs: all tie), lowest highest victim
//!   priority, lowest sum of victim priorities (each shifted by 2³¹, so more
//!   victims weigh more), fewest victims, latest earliest start among the
//!   highest-priority victims; upstream takes the first of what still ties
//!   in Go's map order, that is at random: a draw from the policy's stream.
//!
//! Not modelled: PreemptionPolicy `Never` (the model's pods have none),
//! PodDisruptionBudgets, extenders, and graceful termination (a backend
//! deletes victims at once, so the `PodEligibleToPreemptOthers` wait for
//! terminating victims never applies).

use crate::filters::{FilterFailure, Insufficient};
use rand::Rng;
use schedlab_core::node::{NodeId, NodeState};
use schedlab_core::pod::PodSpec;
use schedlab_core::resources::Resources;
use schedlab_core::time::Time;
use schedlab_core::{BoundPod, ClusterView, PendingPod};

/// `MinCandidateNodesPercentage` of DefaultPreemptionArgs.
pub const MIN_CANDIDATE_NODES_PERCENTAGE: usize = 10;
/// `MinCandidateNodesAbsolute` of DefaultPreemptionArgs.
pub const MIN_CANDIDATE_NODES_ABSOLUTE: usize = 100;

/// A node where preemption would make room, and what it would delete there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// index of the node in the view's node list
    pub node: usize,
    /// most important first
    pub victims: Vec<BoundPod>,
}

/// The requests of nominated pods a pod must leave room for, per node:
/// those of priority at least its own, other than itself.
#[derive(Debug, Clone, Default)]
pub struct Nominated {
    /// (node, summed requests, pod count), one entry per node
    per_node: Vec<(NodeId, Resources, u32)>,
}

impl Nominated {
    /// The nominations `pod` must respect on `cluster`.
    pub fn for_pod(pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Nominated {
        let mut per_node: Vec<(NodeId, Resources, u32)> = Vec::new();
        for n in cluster
            .nominated
            .iter()
            .filter(|n| n.priority >= pod.spec.priority && n.pod != pod.id)
        {
            match per_node.iter_mut().find(|(node, ..)| *node == n.node) {
                Some((_, requests, count)) => {
                    *requests += n.requests;
                    *count += 1;
                }
                None => per_node.push((n.node, n.requests, 1)),
            }
        }
        Nominated { per_node }
    }

    fn on(&self, node: NodeId) -> Option<(Resources, u32)> {
        self.per_node
            .iter()
            .find(|(n, ..)| *n == node)
            .map(|&(_, requests, count)| (requests, count))
    }

    /// `filter` on `node` with the nominated pods added: the node must pass
    /// both without and with them, as upstream runs the filters twice.
    pub fn filter<'n, F>(&self, filter: &mut F, pod: &PodSpec, node: &'n NodeState) -> Result<(), FilterFailure<'n>>
    where
        F: for<'x> FnMut(&PodSpec, &'x NodeState) -> Result<(), FilterFailure<'x>>,
    {
        filter(pod, node)?;
        let Some((requests, count)) = self.on(node.id) else {
            return Ok(());
        };
        let mut with = node.clone();
        add_pod_requests(&mut with, requests, count);
        // only resources changed, so a failure now is a resource or plugin one
        filter(pod, &with).map_err(|f| detach(f).unwrap_or(FilterFailure::Insufficient(Insufficient::default())))
    }
}

/// A failure that borrows nothing from the node it was found on.
fn detach<'b>(failure: FilterFailure<'_>) -> Option<FilterFailure<'b>> {
    match failure {
        FilterFailure::Unschedulable => Some(FilterFailure::Unschedulable),
        FilterFailure::Insufficient(i) => Some(FilterFailure::Insufficient(i)),
        FilterFailure::Plugin(reason) => Some(FilterFailure::Plugin(reason)),
        FilterFailure::UntoleratedTaint(_) => None,
    }
}

fn add_pod_requests(node: &mut NodeState, requests: Resources, count: u32) {
    node.requested += requests;
    node.non_zero_requested += requests.non_zero_for_scoring();
    node.pod_count = node.pod_count.saturating_add(count);
}

fn remove_pod(node: &mut NodeState, pod: &BoundPod) {
    node.requested -= pod.requests;
    node.non_zero_requested -= pod.requests.non_zero_for_scoring();
    node.pod_count = node.pod_count.saturating_sub(1);
}

/// Whether preemption might help on a node rejected with `failure`.
fn resolvable(failure: &FilterFailure<'_>) -> bool {
    matches!(failure, FilterFailure::Insufficient(_) | FilterFailure::Plugin(_))
}

/// `calculateNumCandidates`.
pub fn num_candidates(potential: usize) -> usize {
    (potential * MIN_CANDIDATE_NODES_PERCENTAGE / 100)
        .max(MIN_CANDIDATE_NODES_ABSOLUTE)
        .min(potential)
}

/// `MoreImportantPod`: higher priority first, then the earlier start; the
/// pod id makes the order total where upstream's sort leaves it open.
fn more_important_first(a: &BoundPod, b: &BoundPod) -> std::cmp::Ordering {
    b.priority
        .cmp(&a.priority)
        .then(a.started.cmp(&b.started))
        .then(a.id.cmp(&b.id))
}

/// Whether NodeResourcesFit could pass on `node` once every pod of lower
/// priority than `pod` is gone (nominated pods' room still taken): a check
/// on sums that spares copying the node where the dry run cannot succeed.
/// Every filter chain here includes NodeResourcesFit, so a node failing it
/// is no candidate.
fn room_without_lower(pod: &PodSpec, node: &NodeState, bound: &[BoundPod], nominated: &Nominated) -> bool {
    let (mut freed, mut count) = (Resources::ZERO, 0u32);
    for b in bound.iter().filter(|b| b.priority < pod.priority) {
        freed += b.requests;
        count += 1;
    }
    if count == 0 {
        return false;
    }
    let (extra, extra_count) = nominated.on(node.id).unwrap_or((Resources::ZERO, 0));
    let pods = u64::from(node.pod_count) - u64::from(count.min(node.pod_count)) + u64::from(extra_count) + 1;
    let requested = node.requested.saturating_sub(freed) + extra;
    let free = node.spec.allocatable.saturating_sub(requested);
    let r = pod.requests;
    pods <= u64::from(node.spec.max_pods)
        && (r.cpu_milli == 0 || r.cpu_milli <= free.cpu_milli)
        && (r.memory_bytes == 0 || r.memory_bytes <= free.memory_bytes)
}

/// `selectVictimsOnNode`: the victims on `node` for `pod`, or None when even
/// deleting every lower-priority pod leaves no room.
fn select_victims<F>(
    pod: &PendingPod<'_>,
    node: &NodeState,
    bound: &[BoundPod],
    nominated: &Nominated,
    filter: &mut F,
) -> Option<Vec<BoundPod>>
where
    F: for<'x> FnMut(&PodSpec, &'x NodeState) -> Result<(), FilterFailure<'x>>,
{
    let priority = pod.spec.priority;
    let mut potential: Vec<BoundPod> = bound.iter().filter(|b| b.priority < priority).copied().collect();
    let mut trial = node.clone();
    for p in &potential {
        remove_pod(&mut trial, p);
    }
    nominated.filter(filter, pod.spec, &trial).ok()?;
    potential.sort_by(more_important_first);
    let mut victims = Vec::new();
    for p in potential {
        add_pod_requests(&mut trial, p.requests, 1);
        if nominated.filter(filter, pod.spec, &trial).is_err() {
            remove_pod(&mut trial, &p);
            victims.push(p);
        }
    }
    Some(victims)
}

/// `FindCandidates`: the nodes where deleting lower-priority pods makes room
/// for `pod`, with their victims. `rng` draws the scan's offset when there
/// are more potential nodes than candidates wanted; without it (for
/// evaluations that must not draw) every potential node is tried.
pub fn find_candidates<F>(
    pod: &PendingPod<'_>,
    cluster: &ClusterView<'_>,
    nominated: &Nominated,
    filter: &mut F,
    rng: Option<&mut impl Rng>,
) -> Vec<Candidate>
where
    F: for<'x> FnMut(&PodSpec, &'x NodeState) -> Result<(), FilterFailure<'x>>,
{
    let priority = pod.spec.priority;
    // nothing of lower priority anywhere: no node can be a candidate
    if cluster.lowest_bound_priority.is_none_or(|lowest| lowest >= priority) {
        return Vec::new();
    }
    let potential: Vec<usize> = cluster
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| match nominated.filter(filter, pod.spec, node) {
            Ok(()) => false,
            Err(failure) => resolvable(&failure),
        })
        .map(|(i, _)| i)
        .collect();
    if potential.is_empty() {
        return Vec::new();
    }
    let wanted = num_candidates(potential.len());
    let offset = match rng {
        Some(rng) if wanted < potential.len() => rng.random_range(0..potential.len()),
        _ => 0,
    };
    let limit = if offset == 0 && wanted == potential.len() {
        potential.len()
    } else {
        wanted
    };
    let mut candidates = Vec::new();
    for k in 0..potential.len() {
        let i = potential[(offset + k) % potential.len()];
        let node = &cluster.nodes[i];
        let bound = cluster.pods_on(node.id);
        if !room_without_lower(pod.spec, node, bound, nominated) {
            continue;
        }
        if let Some(victims) = select_victims(pod, node, bound, nominated, filter) {
            candidates.push(Candidate { node: i, victims });
            if candidates.len() >= limit {
                break;
            }
        }
    }
    candidates
}

/// The earliest start among the highest-priority victims (`GetEarliestPodStartTime`).
fn earliest_start_of_highest(victims: &[BoundPod]) -> Time {
    let highest = victims.iter().map(|v| v.priority).max().unwrap_or(i32::MIN);
    victims
        .iter()
        .filter(|v| v.priority == highest)
        .map(|v| v.started)
        .min()
        .unwrap_or(Time::ZERO)
}

/// `pickOneNodeForPreemption` up to its last tie: the indices (into
/// `candidates`) of every candidate best by its criteria.
pub fn best_candidates(candidates: &[Candidate]) -> Vec<usize> {
    let mut best: Vec<usize> = (0..candidates.len()).collect();
    let mut keep_min = |key: &dyn Fn(&Candidate) -> i128| {
        let Some(min) = best.iter().map(|&i| key(&candidates[i])).min() else {
            return;
        };
        best.retain(|&i| key(&candidates[i]) == min);
    };
    let shift = i128::from(i32::MAX) + 1;
    keep_min(&|c| i128::from(c.victims.iter().map(|v| v.priority).max().unwrap_or(i32::MIN)));
    keep_min(&|c| c.victims.iter().map(|v| i128::from(v.priority) + shift).sum());
    keep_min(&|c| c.victims.len() as i128);
    // the latest start wins: the smallest negated start
    keep_min(&|c| -i128::from(earliest_start_of_highest(&c.victims).as_millis()));
    best
}

/// DefaultPreemption for `pod`, which no node could take: the node and the
/// victims to delete there, or None when preemption cannot help.
pub fn preempt<F>(
    pod: &PendingPod<'_>,
    cluster: &ClusterView<'_>,
    nominated: &Nominated,
    filter: &mut F,
    rng: &mut impl Rng,
) -> Option<(NodeId, Vec<BoundPod>)>
where
    F: for<'x> FnMut(&PodSpec, &'x NodeState) -> Result<(), FilterFailure<'x>>,
{
    let mut candidates = find_candidates(pod, cluster, nominated, filter, Some(&mut *rng));
    let best = best_candidates(&candidates);
    let chosen = match best.as_slice() {
        [] => return None,
        [only] => *only,
        many => many[rng.random_range(0..many.len())],
    };
    let c = candidates.swap_remove(chosen);
    Some((cluster.nodes[c.node].id, c.victims))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::run_filters;
    use crate::testing::{cluster, node, pending, view_with_pods};
    use schedlab_core::Nomination;
    use schedlab_core::node::TaintEffect;
    use schedlab_core::pod::PodId;
    use schedlab_core::rng::{purpose, stream};
    use schedlab_core::testing::{PodSpecChanges, pod};

    fn bound(id: u64, priority: i32, cpu_milli: u64, started_s: u64) -> BoundPod {
        BoundPod {
            id: PodId(id),
            priority,
            requests: Resources::new(cpu_milli, 0),
            started: Time(started_s * 1000),
        }
    }

    fn ids(victims: &[BoundPod]) -> Vec<u64> {
        victims.iter().map(|v| v.id.0).collect()
    }

    #[test]
    fn victims_are_the_fewest_lower_priority_pods_reprieving_the_most_important() {
        // 4 cpu: pods of priority 0 (1 cpu, started 5 s), 0 (1 cpu, 1 s), 5 (2 cpu) and an equal-priority one
        let mut nodes = cluster([node("a").cpu("4").memory("16Gi")]);
        let pods = vec![vec![
            bound(1, 0, 1000, 5),
            bound(2, 0, 1000, 1),
            bound(3, 5, 1000, 2),
            bound(4, 10, 1000, 0),
        ]];
        let view = view_with_pods(&mut nodes, &pods, &[]);
        let spec = pod(2000, 0).priority(10);
        let p = pending(&spec);
        let c = find_candidates(
            &p,
            &view,
            &Nominated::for_pod(&p, &view),
            &mut run_filters,
            None::<&mut schedlab_core::rng::SimRng>,
        );
        // removing 1, 2 and 3 frees 3 cpu; reprieve order: 3 (priority 5), 2 (started first), 1.
        // 3 back: 2 cpu used, fits; 2 back: 3 used, 1 free, no fit -> victim; 1 back: no fit -> victim
        assert_eq!(c.len(), 1);
        assert_eq!(ids(&c[0].victims), vec![2, 1]);
    }

    #[test]
    fn unresolvable_nodes_and_nodes_without_room_are_no_candidates() {
        let mut nodes = cluster([
            node("cordoned").cpu("4").memory("16Gi").cordoned(),
            node("tainted").cpu("4").memory("16Gi").tainted(crate::testing::taint(
                "spot",
                "true",
                TaintEffect::NoSchedule,
            )),
            node("small").cpu("1").memory("16Gi"),
            node("ok").cpu("4").memory("16Gi"),
        ]);
        let pods = vec![
            vec![bound(1, 0, 4000, 0)],
            vec![bound(2, 0, 4000, 0)],
            vec![bound(3, 0, 1000, 0)],
            vec![bound(4, 0, 4000, 0)],
        ];
        let view = view_with_pods(&mut nodes, &pods, &[]);
        let spec = pod(2000, 0).priority(1);
        let p = pending(&spec);
        let c = find_candidates(
            &p,
            &view,
            &Nominated::for_pod(&p, &view),
            &mut run_filters,
            None::<&mut schedlab_core::rng::SimRng>,
        );
        assert_eq!(c.iter().map(|c| c.node).collect::<Vec<_>>(), vec![3]);
        // nothing of lower priority: nothing to preempt
        let spec = pod(2000, 0);
        let p = pending(&spec);
        assert!(
            find_candidates(
                &p,
                &view,
                &Nominated::default(),
                &mut run_filters,
                None::<&mut schedlab_core::rng::SimRng>
            )
            .is_empty()
        );
    }

    #[test]
    fn the_choice_follows_pick_one_node_for_preemption() {
        let c = |node, victims: Vec<BoundPod>| Candidate { node, victims };
        // lowest highest victim priority wins over fewer victims
        let cands = vec![
            c(0, vec![bound(1, 5, 1, 0)]),
            c(1, vec![bound(2, 3, 1, 0), bound(3, 3, 1, 0)]),
        ];
        assert_eq!(best_candidates(&cands), vec![1]);
        // then the lowest shifted sum: two victims of priority -1 weigh more than one of 0
        let cands = vec![
            c(0, vec![bound(1, 0, 1, 0)]),
            c(1, vec![bound(2, 0, 1, 0), bound(3, -1, 1, 0)]),
        ];
        assert_eq!(best_candidates(&cands), vec![0]);
        // then fewest victims, then the latest earliest start of the highest-priority victims
        let cands = vec![
            c(0, vec![bound(1, 2, 1, 10), bound(2, 2, 1, 30)]),
            c(1, vec![bound(3, 2, 1, 20), bound(4, 2, 1, 40)]),
            c(2, vec![bound(5, 2, 1, 20), bound(6, 2, 1, 25)]),
        ];
        assert_eq!(best_candidates(&cands), vec![1, 2]);
        assert!(best_candidates(&[]).is_empty());
    }

    #[test]
    fn nominated_pods_of_higher_or_equal_priority_hold_their_room() {
        let mut nodes = cluster([node("a").cpu("4").memory("16Gi")]);
        let pods = vec![vec![bound(1, 0, 2000, 0)]];
        let nominated = [Nomination {
            pod: PodId(9),
            node: NodeId(0),
            priority: 5,
            requests: Resources::new(2000, 0),
        }];
        let view = view_with_pods(&mut nodes, &pods, &nominated);
        let filter = |spec: &PodSpec, view: &ClusterView<'_>, id: u64| {
            let mut p = pending(spec);
            p.id = PodId(id);
            Nominated::for_pod(&p, view)
                .filter(&mut run_filters, spec, &view.nodes[0])
                .is_ok()
        };
        // lower priority: the nominated pod's 2 cpu are taken
        assert!(!filter(&pod(1000, 0).priority(4), &view, 1));
        // equal priority too; higher priority passes; the nominee itself passes
        assert!(!filter(&pod(1000, 0).priority(5), &view, 1));
        assert!(filter(&pod(1000, 0).priority(6), &view, 1));
        assert!(filter(&pod(2000, 0).priority(5), &view, 9));
    }

    #[test]
    fn past_a_hundred_potential_nodes_the_scan_stops_at_the_wanted_number() {
        assert_eq!(num_candidates(50), 50);
        assert_eq!(num_candidates(150), 100);
        assert_eq!(num_candidates(5000), 500);
        let mut nodes = cluster((0..150).map(|i| node(&format!("n{i}")).cpu("1").memory("4Gi")));
        let pods: Vec<Vec<BoundPod>> = (0..150).map(|i| vec![bound(i, 0, 1000, 0)]).collect();
        let view = view_with_pods(&mut nodes, &pods, &[]);
        let spec = pod(1000, 0).priority(1);
        let p = pending(&spec);
        let mut rng = stream(3, &[purpose::SCHEDULER]);
        let c = find_candidates(&p, &view, &Nominated::default(), &mut run_filters, Some(&mut rng));
        assert_eq!(c.len(), 100);
        // consecutive from the offset, wrapping around
        let first = c[0].node;
        assert!(c.iter().enumerate().all(|(k, c)| c.node == (first + k) % 150));
        let (node, victims) = preempt(&p, &view, &Nominated::default(), &mut run_filters, &mut rng).unwrap();
        assert_eq!(victims.len(), 1);
        assert_eq!(victims[0].id.0, u64::from(node.0));
    }
}
