//! One scheduling cycle of a kube-scheduler profile, after
//! `pkg/scheduler/schedule_one.go` `schedulePod`: find feasible nodes
//! (`findNodesThatFitPod`, sampled by `numFeasibleNodesToFind` from a
//! rotating start), bind straight away when exactly one is feasible, else
//! score them (`prioritizeNodes`) and pick the best (`selectHost`).
//!
//! The score plugins are those of the default profile that the model has
//! data for, with their default weights: NodeResourcesFit (1, with the
//! profile's [`FitStrategy`]), NodeResourcesBalancedAllocation (1) and
//! TaintToleration (3 as of v1.33, 1 in v1.20), each as the profile's
//! [`Release`] computes it. A pod no node takes goes to the DefaultPreemption
//! PostFilter ([`crate::preemption`]), with v1.20's rules whatever the
//! release (v1.33 differs in how it runs, not in what it chooses, for what
//! the model has).
//!
//! [`Cycle`] is that cycle with the filter and score functions left to the
//! caller, so policies built from other plugins (`cost-binpack`,
//! `target-load`, `load-aware`) share the scan, the lone-node shortcut,
//! `selectHost` and the failure message with [`KubeProfile`].
//!
//! [`KubeProfile::evaluate`] answers what an attempt would see without
//! making it (the feasible nodes, their scores, the top-score set), for
//! diagnostics such as the twin test against a real kube-scheduler.

use crate::diagnosis::Diagnosis;
use crate::explain::Explanation;
use crate::feasible::{NodeScan, num_feasible_nodes_to_find};
use crate::filters::{FilterFailure, run_filters};
use crate::preemption::{Candidate, Nominated, best_candidates, find_candidates, preempt};
use crate::release::Release;
use crate::scores::{
    FitStrategy, MAX_NODE_SCORE, balanced_allocation_as, default_normalize_score_by, intolerable_prefer_no_schedule,
    node_resources_fit_as, weight,
};
use crate::select::select_host;
use schedlab_core::node::NodeState;
use schedlab_core::pod::PodSpec;
use schedlab_core::rng::{SimRng, purpose, stream};
use schedlab_core::{ClusterView, PendingPod, Placement};

/// The plugin scores of one feasible node (upstream's `NodePluginScores`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeScores {
    /// index of the node in the view's node list
    pub node: usize,
    /// NodeResourcesFit, 0..=100
    pub node_resources_fit: i64,
    /// NodeResourcesBalancedAllocation, 0..=100
    pub balanced_allocation: i64,
    /// TaintToleration after normalisation, 0..=100
    pub taint_toleration: i64,
    /// the weighted sum the host is picked by
    pub total: i64,
}

/// How a profile scores: the release whose rules it follows and its
/// NodeResourcesFit strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scoring {
    pub release: Release,
    pub strategy: FitStrategy,
}

impl Scoring {
    pub fn new(release: Release, strategy: FitStrategy) -> Scoring {
        Scoring { release, strategy }
    }

    /// `prioritizeNodes` for the profile's plugins: scores every node of
    /// `feasible` (indices into `nodes`) into `out` (cleared first), in order.
    pub fn prioritize(self, pod: &PodSpec, nodes: &[NodeState], feasible: &[usize], out: &mut Vec<NodeScores>) {
        out.clear();
        out.extend(feasible.iter().map(|&i| {
            let node = &nodes[i];
            NodeScores {
                node: i,
                node_resources_fit: node_resources_fit_as(self.release, self.strategy, node, pod),
                balanced_allocation: balanced_allocation_as(self.release, node, pod),
                taint_toleration: intolerable_prefer_no_schedule(&node.spec.taints, &pod.tolerations),
                total: 0,
            }
        }));
        // TaintToleration's NormalizeScore: reversed, relative to the worst node
        default_normalize_score_by(MAX_NODE_SCORE, true, out, |s| &mut s.taint_toleration);
        let taint_weight = self.release.taint_toleration_weight();
        for s in out.iter_mut() {
            s.total = weight::NODE_RESOURCES_FIT * s.node_resources_fit
                + weight::BALANCED_ALLOCATION * s.balanced_allocation
                + taint_weight * s.taint_toleration;
        }
    }
}

/// `prioritizeNodes` with v1.33's rules (see [`Scoring::prioritize`]).
pub fn prioritize_nodes(
    strategy: FitStrategy,
    pod: &PodSpec,
    nodes: &[NodeState],
    feasible: &[usize],
    out: &mut Vec<NodeScores>,
) {
    Scoring::new(Release::V1_33, strategy).prioritize(pod, nodes, feasible, out);
}

/// What one scheduling attempt finds before it picks a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    /// indices of the feasible nodes found, in scan order
    pub feasible: Vec<usize>,
    /// the scores of `feasible`, in the same order; empty when fewer than two
    /// are feasible, since upstream binds a lone feasible node unscored
    pub scores: Vec<NodeScores>,
    /// the failure message when no node is feasible
    pub unschedulable: Option<String>,
}

impl Evaluation {
    /// The nodes (indices into the view's node list) the attempt may bind:
    /// the lone feasible node, or every scored node with the top total, in
    /// scan order; empty when the pod is unschedulable.
    pub fn top_score_set(&self) -> Vec<usize> {
        if let [only] = self.feasible.as_slice() {
            return vec![*only];
        }
        let Some(top) = self.scores.iter().map(|s| s.total).max() else {
            return Vec::new();
        };
        self.scores.iter().filter(|s| s.total == top).map(|s| s.node).collect()
    }

    /// The scores of node `node` (an index), if it was scored.
    pub fn scores_of(&self, node: usize) -> Option<&NodeScores> {
        self.scores.iter().find(|s| s.node == node)
    }
}

/// The part of an attempt before `selectHost`: filters from the scan's start
/// until `numFeasibleNodesToFind` nodes fit, then scores them when more than
/// one does. The diagnosis holds the rejections.
fn filter_and_score<'a>(
    scoring: Scoring,
    scan: &mut NodeScan,
    pod: &PodSpec,
    nodes: &'a [NodeState],
    feasible: &mut Vec<usize>,
    scores: &mut Vec<NodeScores>,
) -> Diagnosis<'a> {
    let mut diagnosis = Diagnosis::new();
    let limit = num_feasible_nodes_to_find(nodes.len());
    scan.find(pod, nodes, limit, feasible, &mut diagnosis);
    scores.clear();
    if feasible.len() > 1 {
        scoring.prioritize(pod, nodes, feasible, scores);
    }
    diagnosis
}

/// Which nodes an attempt examines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sampling {
    /// kube-scheduler's: from the rotating start until
    /// [`num_feasible_nodes_to_find`] nodes fit.
    Adaptive,
    /// Every node, so a global preference (the cheapest node) sees them all.
    /// A full scan leaves the start index where it was.
    Every,
}

/// The framework's part of a scheduling attempt, whatever the plugins: the
/// node scan with its rotating start index, binding a lone feasible node
/// unscored, `selectHost` over the plugins' totals with the tie-break
/// stream, and the "0/N nodes are available" message in the words of a
/// release. Policies built like a kube-scheduler profile differ only in the
/// filter and score functions they hand to [`Cycle::schedule`].
#[derive(Debug, Clone)]
pub struct Cycle {
    release: Release,
    sampling: Sampling,
    scan: NodeScan,
    rng: SimRng,
    feasible: Vec<usize>,
    totals: Vec<(usize, i64)>,
    /// None while not explaining; Some(the last attempt's explanation,
    /// None before the first) while explaining
    explanation: Option<Option<Explanation>>,
}

impl Cycle {
    /// Tie-breaks draw from the run's `seed` (scheduler stream); messages are
    /// worded as `release` words them.
    pub fn new(release: Release, sampling: Sampling, seed: u64) -> Cycle {
        Cycle {
            release,
            sampling,
            scan: NodeScan::new(),
            rng: stream(seed, &[purpose::SCHEDULER]),
            feasible: Vec::new(),
            totals: Vec::new(),
            explanation: None,
        }
    }

    /// Explains every attempt from now on (or stops): the feasible count,
    /// the chosen node's total and the runner-up's (see
    /// [`Explanation::of_totals`]). Picks are unchanged either way.
    pub fn set_explain(&mut self, on: bool) {
        self.explanation = on.then_some(None);
    }

    /// The last attempt's explanation, while explaining.
    pub fn explanation(&self) -> Option<Explanation> {
        self.explanation.flatten()
    }

    pub fn release(&self) -> Release {
        self.release
    }

    /// `nextStartNodeIndex` of the next attempt.
    pub fn next_start_node_index(&self) -> usize {
        self.scan.next_start_node_index()
    }

    fn limit(&self, num_nodes: usize) -> usize {
        match self.sampling {
            Sampling::Adaptive => num_feasible_nodes_to_find(num_nodes),
            Sampling::Every => num_nodes,
        }
    }

    /// One attempt for `pod`: the nodes passing `filter` (the whole filter
    /// chain, default plugins first, with the room of nominated pods of at
    /// least the pod's priority taken), then, when more than one does,
    /// `score` writes `(node, total)` for the nodes it ranks (all of
    /// `feasible`, or those a policy prefers among them) and the highest
    /// total wins. When none does, DefaultPreemption looks for pods of lower
    /// priority to delete ([`crate::preemption`]).
    pub fn schedule<'a, F>(
        &mut self,
        pod: &PendingPod<'_>,
        cluster: &ClusterView<'a>,
        mut filter: F,
        score: impl FnOnce(&PodSpec, &'a [NodeState], &[usize], &mut Vec<(usize, i64)>),
    ) -> Placement
    where
        F: for<'x> FnMut(&PodSpec, &'x NodeState) -> Result<(), FilterFailure<'x>>,
    {
        let nodes = cluster.nodes;
        let mut diagnosis = Diagnosis::new();
        let limit = self.limit(nodes.len());
        let nominated = Nominated::for_pod(pod, cluster);
        self.scan.find_with(
            pod.spec,
            nodes,
            limit,
            &mut self.feasible,
            &mut diagnosis,
            |spec, node| nominated.filter(&mut filter, spec, node),
        );
        let chosen = match self.feasible.as_slice() {
            [] => {
                if let Some(slot) = &mut self.explanation {
                    *slot = Some(Explanation::none_feasible());
                }
                let reason = diagnosis.message_as(self.release, nodes.len());
                if let Some((node, victims)) = preempt(pod, cluster, &nominated, &mut filter, &mut self.rng) {
                    tracing::trace!(pod = pod.id.0, node = node.0, victims = victims.len(), "preempt");
                    return Placement::Preempt {
                        node,
                        victims: victims.iter().map(|v| v.id).collect(),
                        reason: reason.into(),
                    };
                }
                tracing::trace!(pod = pod.id.0, %reason, "unschedulable");
                return Placement::Unschedulable { reason: reason.into() };
            }
            // "When only one node after predicate, just use it."
            [only] => *only,
            many => {
                self.totals.clear();
                score(pod.spec, nodes, many, &mut self.totals);
                // a score function ranks at least one node; should it rank
                // none, the first feasible node still binds the pod
                select_host(self.totals.iter().copied(), &mut self.rng).unwrap_or(many[0])
            }
        };
        if let Some(slot) = &mut self.explanation {
            // a lone feasible node is bound unscored: no totals to report
            let totals: &[(usize, i64)] = if self.feasible.len() > 1 { &self.totals } else { &[] };
            *slot = Some(Explanation::of_totals(self.feasible.len(), totals, chosen, nodes));
        }
        let node = nodes[chosen].id;
        tracing::trace!(pod = pod.id.0, node = node.0, feasible = self.feasible.len(), "bind");
        Placement::Bind(node)
    }
}

/// A kube-scheduler profile of the default plugins: how it scores, and the
/// [`Cycle`] it schedules with, plus a scratch buffer reused across decisions.
#[derive(Debug, Clone)]
pub struct KubeProfile {
    scoring: Scoring,
    cycle: Cycle,
    scores: Vec<NodeScores>,
}

impl KubeProfile {
    /// A profile with v1.33's rules drawing its tie-breaks from the run's `seed`.
    pub fn new(strategy: FitStrategy, seed: u64) -> KubeProfile {
        KubeProfile::with_scoring(Scoring::new(Release::V1_33, strategy), seed)
    }

    /// A profile scoring as `scoring` says, drawing its tie-breaks from the run's `seed`.
    pub fn with_scoring(scoring: Scoring, seed: u64) -> KubeProfile {
        KubeProfile {
            scoring,
            cycle: Cycle::new(scoring.release, Sampling::Adaptive, seed),
            scores: Vec::new(),
        }
    }

    pub fn strategy(&self) -> FitStrategy {
        self.scoring.strategy
    }

    pub fn scoring(&self) -> Scoring {
        self.scoring
    }

    /// `nextStartNodeIndex` of the next attempt.
    pub fn next_start_node_index(&self) -> usize {
        self.cycle.next_start_node_index()
    }

    /// What the next attempt for `pod` would find on `cluster`, without
    /// making it: the start index and the tie-break stream stay as they are.
    pub fn evaluate(&self, pod: &PodSpec, cluster: &ClusterView<'_>) -> Evaluation {
        let mut scan = self.cycle.scan.clone();
        let (mut feasible, mut scores) = (Vec::new(), Vec::new());
        let diagnosis = filter_and_score(self.scoring, &mut scan, pod, cluster.nodes, &mut feasible, &mut scores);
        let unschedulable = feasible
            .is_empty()
            .then(|| diagnosis.message_as(self.scoring.release, cluster.nodes.len()));
        Evaluation {
            feasible,
            scores,
            unschedulable,
        }
    }

    /// What DefaultPreemption would find for `pod` if no node took it: every
    /// candidate (all potential nodes are tried) and the indices of those its
    /// choice ties between. Draws nothing.
    pub fn evaluate_preemption(&self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> (Vec<Candidate>, Vec<usize>) {
        let nominated = Nominated::for_pod(pod, cluster);
        let candidates = find_candidates(pod, cluster, &nominated, &mut run_filters, None::<&mut SimRng>);
        let best = best_candidates(&candidates);
        (candidates, best)
    }

    /// See [`Cycle::set_explain`].
    pub fn set_explain(&mut self, on: bool) {
        self.cycle.set_explain(on);
    }

    /// The last attempt's explanation, while explaining.
    pub fn explanation(&self) -> Option<Explanation> {
        self.cycle.explanation()
    }

    /// One scheduling attempt for `pod`.
    pub fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        let (scoring, scores) = (self.scoring, &mut self.scores);
        self.cycle
            .schedule(pod, cluster, run_filters, |pod, nodes, feasible, totals| {
                scoring.prioritize(pod, nodes, feasible, scores);
                totals.extend(scores.iter().map(|s| (s.node, s.total)));
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, node, pending, pod, taint, view};
    use schedlab_core::node::{NodeId, TaintEffect};

    #[test]
    fn evaluate_sees_what_schedule_picks_from_and_changes_nothing() {
        // a, b and d are alike and emptier than c: a three-way tie
        let nodes = cluster([
            node("a").cpu("4").memory("16Gi"),
            node("b").cpu("4").memory("16Gi"),
            node("c").cpu("4").memory("16Gi").requested("2", "8Gi"),
            node("d").cpu("4").memory("16Gi"),
        ]);
        let spec = pod().cpu("500m").memory("1Gi").build();
        let mut profile = KubeProfile::with_scoring(Scoring::new(Release::V1_20, FitStrategy::LeastAllocated), 4);
        let before = profile.clone();
        let eval = profile.evaluate(&spec, &view(&nodes));
        assert_eq!(eval.feasible, vec![0, 1, 2, 3]);
        assert_eq!(eval.top_score_set(), vec![0, 1, 3]);
        assert_eq!(eval.unschedulable, None);
        assert!(
            eval.scores_of(2)
                .is_some_and(|s| s.total < eval.scores_of(0).map_or(0, |t| t.total))
        );
        // evaluating neither rotated the scan nor drew a tie-break
        assert_eq!(profile.next_start_node_index(), before.next_start_node_index());
        assert_eq!(profile.cycle.rng, before.cycle.rng);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..60 {
            match profile.schedule(&pending(&spec), &view(&nodes)) {
                Placement::Bind(NodeId(i)) => seen.insert(i as usize),
                other => panic!("{other:?}"),
            };
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), eval.top_score_set());
    }

    #[test]
    fn explaining_reports_the_pick_and_draws_nothing_more() {
        let nodes = cluster([
            node("a").cpu("4").memory("16Gi"),
            node("b").cpu("4").memory("16Gi"),
            node("c").cpu("4").memory("16Gi").requested("2", "8Gi"),
            node("d").cpu("4").memory("16Gi"),
        ]);
        let spec = pod().cpu("500m").memory("1Gi").build();
        let scoring = Scoring::new(Release::V1_20, FitStrategy::LeastAllocated);
        let mut plain = KubeProfile::with_scoring(scoring, 4);
        let mut explained = plain.clone();
        explained.set_explain(true);
        let top = profile_top(&plain, &spec, &nodes);
        for _ in 0..20 {
            let want = plain.schedule(&pending(&spec), &view(&nodes));
            assert_eq!(explained.schedule(&pending(&spec), &view(&nodes)), want);
            let e = explained.explanation().expect("explaining");
            assert_eq!(Placement::Bind(e.chosen.unwrap().node), want);
            assert_eq!(e.candidates, 4);
            // a three-way tie: the runner-up is another top node
            let (chosen, runner_up) = (e.chosen.unwrap(), e.runner_up.unwrap());
            assert_eq!(chosen.score, runner_up.score);
            assert!(top.contains(&(runner_up.node.0 as usize)) && runner_up.node != chosen.node);
        }
        assert_eq!(explained.cycle.rng, plain.cycle.rng, "no extra draw");
        assert_eq!(plain.explanation(), None, "off by default");
    }

    fn profile_top(profile: &KubeProfile, spec: &PodSpec, nodes: &[NodeState]) -> Vec<usize> {
        profile.evaluate(spec, &view(nodes)).top_score_set()
    }

    #[test]
    fn lone_feasible_node_and_no_node() {
        let nodes = cluster([
            node("cordoned").cordoned(),
            node("spot").tainted(taint("spot", "true", TaintEffect::NoSchedule)),
            node("free"),
        ]);
        let profile = KubeProfile::with_scoring(Scoring::new(Release::V1_20, FitStrategy::LeastAllocated), 1);
        let eval = profile.evaluate(&pod().cpu("1").build(), &view(&nodes));
        // bound without scoring, as upstream does
        assert_eq!(
            (eval.feasible.as_slice(), eval.scores.as_slice()),
            ([2usize].as_slice(), [].as_slice())
        );
        assert_eq!(eval.top_score_set(), vec![2]);

        let eval = profile.evaluate(&pod().cpu("64").build(), &view(&nodes));
        assert!(eval.top_score_set().is_empty());
        assert_eq!(
            eval.unschedulable.as_deref(),
            Some(
                "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had taint {spot: true}, \
                 that the pod didn't tolerate, 1 node(s) were unschedulable."
            )
        );
    }

    #[test]
    fn taint_toleration_weight_follows_the_release() {
        let nodes = cluster([
            node("plain").cpu("4").memory("16Gi").requested("3", "12Gi"),
            node("soft")
                .cpu("4")
                .memory("16Gi")
                .tainted(taint("maintenance", "", TaintEffect::PreferNoSchedule)),
        ]);
        let spec = pod().cpu("100m").memory("256Mi").build();
        let mut scores = Vec::new();
        let totals = |release, scores: &mut Vec<NodeScores>| {
            Scoring::new(release, FitStrategy::LeastAllocated).prioritize(&spec, &nodes, &[0, 1], scores);
            scores.iter().map(|s| (s.taint_toleration, s.total)).collect::<Vec<_>>()
        };
        // plain: fit cpu (4000 - 3100) * 100 / 4000 = 22, mem (16384 - 12544) * 100 / 16384 = 23 -> 22
        //   v1.20 balanced: 0.775 vs 0.765625 -> 99; v1.33: std 0.0047 -> 99
        // soft: fit cpu 97, mem 98 -> 97; v1.20 balanced 0.025 vs 0.015625 -> 99; v1.33 -> 99
        // v1.20: plain 22 + 99 + 100 = 221 beats soft 97 + 99 + 0 = 196
        assert_eq!(totals(Release::V1_20, &mut scores), vec![(100, 221), (0, 196)]);
        // v1.33: plain 22 + 99 + 300 = 421, soft 196
        assert_eq!(totals(Release::V1_33, &mut scores), vec![(100, 421), (0, 196)]);
    }
}
