//! One scheduling cycle of a profile, after `pkg/scheduler/schedule_one.go`
//! `schedulePod`: find feasible nodes (`findNodesThatFitPod`, sampled by
//! `numFeasibleNodesToFind` from a rotating start, unless the profile
//! examines every node), bind straight away when exactly one is feasible,
//! else narrow them by the profile's preferences, score them
//! (`prioritizeNodes`) and pick the best (`selectHost`). A pod no node takes
//! goes to the DefaultPreemption PostFilter ([`crate::preemption`]) with the
//! profile's filters, by v1.20's rules whatever the release (v1.33 differs in
//! how it runs, not in what it chooses, for what the model has).

use super::{Evaluation, Profile, filter_chain};
use crate::api::Scheduler;
use crate::diagnosis::Diagnosis;
use crate::explain::Explanation;
use crate::feasible::NodeScan;
use crate::preemption::{Candidate, Nominated, best_candidates, find_candidates, preempt};
use crate::select::select_host;
use schedlab_core::node::NodeState;
use schedlab_core::pod::PodSpec;
use schedlab_core::rng::{SimRng, purpose, stream};
use schedlab_core::{ClusterView, PendingPod, Placement};

/// A profile with the framework's state between attempts (the rotating start
/// index, the tie-break stream) and scratch buffers reused across them.
#[derive(Debug, Clone)]
pub struct Cycle {
    profile: Profile,
    scan: NodeScan,
    rng: SimRng,
    feasible: Vec<usize>,
    kept: Vec<usize>,
    column: Vec<i64>,
    totals: Vec<(usize, i64)>,
    /// None while not explaining; Some(the last attempt's explanation,
    /// None before the first) while explaining
    explanation: Option<Option<Explanation>>,
}

impl Cycle {
    /// `profile`, drawing its tie-breaks from the run's `seed` (scheduler stream).
    pub fn new(profile: Profile, seed: u64) -> Cycle {
        Cycle {
            profile,
            scan: NodeScan::new(),
            rng: stream(seed, &[purpose::SCHEDULER]),
            feasible: Vec::new(),
            kept: Vec::new(),
            column: Vec::new(),
            totals: Vec::new(),
            explanation: None,
        }
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// `nextStartNodeIndex` of the next attempt.
    pub fn next_start_node_index(&self) -> usize {
        self.scan.next_start_node_index()
    }

    /// One attempt for `pod`: the nodes passing the filters (with the room
    /// of nominated pods of at least the pod's priority taken), then, when
    /// more than one does, the highest total among those the preferences
    /// keep wins. When none does, DefaultPreemption looks for pods of lower
    /// priority to delete.
    pub fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        self.schedule_with(pod, cluster, &mut NoExtension)
    }

    /// [`Cycle::schedule`] with `extension` consulted as kube-scheduler
    /// consults its extenders (`findNodesThatPassExtenders`,
    /// `prioritizeNodes`): it filters the nodes the profile's filters kept
    /// (when any are), and adds its scores to the framework's totals when
    /// more than one node is left. An extension that fails makes the attempt
    /// unschedulable without preemption, as kube-scheduler's scheduling
    /// error does.
    pub(crate) fn schedule_with<E: Extension>(
        &mut self,
        pod: &PendingPod<'_>,
        cluster: &ClusterView<'_>,
        extension: &mut E,
    ) -> Placement {
        let profile = self.profile;
        let nodes = cluster.nodes;
        let mut filter = filter_chain(profile);
        let mut diagnosis = Diagnosis::new();
        let nominated = Nominated::for_pod(pod, cluster);
        self.scan.find_with(
            pod.spec,
            nodes,
            profile.sampling.limit(nodes.len()),
            &mut self.feasible,
            &mut diagnosis,
            |spec, node| nominated.filter(&mut filter, spec, node),
        );
        if !self.feasible.is_empty()
            && let Err(reason) = extension.filter(pod, nodes, &mut self.feasible, &mut diagnosis)
        {
            if let Some(slot) = &mut self.explanation {
                *slot = Some(Explanation::none_feasible());
            }
            tracing::trace!(pod = pod.id.0, %reason, "extension failed");
            return Placement::Unschedulable { reason: reason.into() };
        }
        let chosen = match self.feasible.as_slice() {
            [] => {
                if let Some(slot) = &mut self.explanation {
                    *slot = Some(Explanation::none_feasible());
                }
                let reason = diagnosis.message_as(profile.release, nodes.len());
                let preempted = if profile.preemption {
                    preempt(pod, cluster, &nominated, &mut filter, &mut self.rng)
                } else {
                    None
                };
                if let Some((node, victims)) = preempted {
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
                let ranked = profile.narrow(nodes, many, &mut self.kept);
                profile.prioritize(pod.spec, nodes, ranked, &mut self.column, &mut self.totals);
                extension.prioritize(pod, nodes, &mut self.totals);
                // the preferences keep at least one node; should they keep
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

    /// What the next attempt for `pod` would find on `cluster`, without
    /// making it: the start index and the tie-break stream stay as they are.
    /// Nominated pods are not taken into account.
    pub fn evaluate(&self, pod: &PodSpec, cluster: &ClusterView<'_>) -> Evaluation {
        let nodes = cluster.nodes;
        let mut scan = self.scan.clone();
        let mut diagnosis = Diagnosis::new();
        let mut feasible = Vec::new();
        let limit = self.profile.sampling.limit(nodes.len());
        scan.find_with(
            pod,
            nodes,
            limit,
            &mut feasible,
            &mut diagnosis,
            filter_chain(self.profile),
        );
        let scores = if feasible.len() > 1 {
            let mut kept = Vec::new();
            let ranked = self.profile.narrow(nodes, &feasible, &mut kept);
            self.profile.node_scores(pod, nodes, ranked)
        } else {
            Vec::new()
        };
        let unschedulable = feasible
            .is_empty()
            .then(|| diagnosis.message_as(self.profile.release, nodes.len()));
        Evaluation {
            profile: self.profile,
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
        let mut filter = filter_chain(self.profile);
        let candidates = find_candidates(pod, cluster, &nominated, &mut filter, None::<&mut SimRng>);
        let best = best_candidates(&candidates);
        (candidates, best)
    }
}

/// What a scheduling cycle consults besides its profile's plugins: the
/// extenders of kube-scheduler's configuration ([`crate::extender`]).
pub(crate) trait Extension {
    /// Keeps those of `feasible` (indices into `nodes`, never empty) the
    /// extension takes, recording each node it drops in `diagnosis`; an
    /// `Err` is the reason the whole attempt failed.
    fn filter<'a>(
        &mut self,
        pod: &PendingPod<'_>,
        nodes: &'a [NodeState],
        feasible: &mut Vec<usize>,
        diagnosis: &mut Diagnosis<'a>,
    ) -> Result<(), String>;

    /// Adds the extension's score to each `(node index, total)` of `totals`.
    fn prioritize(&mut self, pod: &PendingPod<'_>, nodes: &[NodeState], totals: &mut [(usize, i64)]);
}

/// A profile alone: every built-in arm. Inlined away.
struct NoExtension;

impl Extension for NoExtension {
    #[inline(always)]
    fn filter<'a>(
        &mut self,
        _pod: &PendingPod<'_>,
        _nodes: &'a [NodeState],
        _feasible: &mut Vec<usize>,
        _diagnosis: &mut Diagnosis<'a>,
    ) -> Result<(), String> {
        Ok(())
    }

    #[inline(always)]
    fn prioritize(&mut self, _pod: &PendingPod<'_>, _nodes: &[NodeState], _totals: &mut [(usize, i64)]) {}
}

impl Scheduler for Cycle {
    fn name(&self) -> &str {
        self.profile.name
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        Cycle::schedule(self, pod, cluster)
    }

    /// Explains every attempt: the feasible count, the chosen node's total
    /// and the runner-up's among the scored nodes (see
    /// [`Explanation::of_totals`]). Picks are unchanged either way.
    fn set_explain(&mut self, on: bool) {
        self.explanation = on.then_some(None);
    }

    fn explanation(&self) -> Option<Explanation> {
        self.explanation.flatten()
    }
}

/// Implements [`Scheduler`] for a newtype over [`Cycle`] (an arm with its
/// own constructors) by delegation, and lets it be read as its cycle
/// (`evaluate`, `profile`, ...).
macro_rules! profile_arm {
    ($arm:ty) => {
        impl $crate::api::Scheduler for $arm {
            fn name(&self) -> &str {
                $crate::api::Scheduler::name(&self.0)
            }

            fn schedule(
                &mut self,
                pod: &schedlab_core::PendingPod<'_>,
                cluster: &schedlab_core::ClusterView<'_>,
            ) -> schedlab_core::Placement {
                self.0.schedule(pod, cluster)
            }

            fn set_explain(&mut self, on: bool) {
                $crate::api::Scheduler::set_explain(&mut self.0, on);
            }

            fn explanation(&self) -> Option<$crate::explain::Explanation> {
                $crate::api::Scheduler::explanation(&self.0)
            }
        }

        impl std::ops::Deref for $arm {
            type Target = $crate::profile::Cycle;

            fn deref(&self) -> &$crate::profile::Cycle {
                &self.0
            }
        }
    };
}
pub(crate) use profile_arm;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default::{PROFILE as DEFAULT, profile as default_profile};
    use crate::profile::Profile;
    use crate::release::Release;
    use crate::testing::{bound_pod, cluster, node, pending, taint, three_way_tie, view, view_with_pods};
    use schedlab_core::node::{NodeId, NodeState, TaintEffect};
    use schedlab_core::testing::{GI, MI, PodSpecChanges, pod};

    #[test]
    fn evaluate_sees_what_schedule_picks_from_and_changes_nothing() {
        let nodes = three_way_tie();
        let spec = pod(500, GI);
        let mut profile = Cycle::new(DEFAULT, 4);
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
        assert_eq!(profile.rng, before.rng);
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
        let nodes = three_way_tie();
        let spec = pod(500, GI);
        let mut plain = Cycle::new(DEFAULT, 4);
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
        assert_eq!(explained.rng, plain.rng, "no extra draw");
        assert_eq!(plain.explanation(), None, "off by default");
    }

    fn profile_top(profile: &Cycle, spec: &PodSpec, nodes: &[NodeState]) -> Vec<usize> {
        profile.evaluate(spec, &view(nodes)).top_score_set()
    }

    #[test]
    fn lone_feasible_node_and_no_node() {
        let nodes = cluster([
            node("cordoned").cordoned(),
            node("spot").tainted(taint("spot", "true", TaintEffect::NoSchedule)),
            node("free"),
        ]);
        let profile = Cycle::new(DEFAULT, 1);
        let eval = profile.evaluate(&pod(1000, 0), &view(&nodes));
        // bound without scoring, as upstream does
        assert_eq!(
            (eval.feasible.as_slice(), eval.scores.as_slice()),
            ([2usize].as_slice(), [].as_slice())
        );
        assert_eq!(eval.top_score_set(), vec![2]);

        let eval = profile.evaluate(&pod(64_000, 0), &view(&nodes));
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
    fn a_profile_without_default_preemption_preempts_nothing() {
        // a full node of low-priority pods and a pod of higher priority
        let mut nodes = cluster([node("a").cpu("2").memory("8Gi")]);
        let pods = vec![vec![bound_pod(1, 0, 1000, 1), bound_pod(2, 0, 1000, 2)]];
        let view = view_with_pods(&mut nodes, &pods, &[]);
        let spec = pod(1000, 0).priority(10);
        let with = Cycle::new(DEFAULT, 1).schedule(&pending(&spec), &view);
        assert!(matches!(with, Placement::Preempt { .. }), "{with:?}");
        let without = Profile {
            preemption: false,
            ..DEFAULT
        };
        let answer = Cycle::new(without, 1).schedule(&pending(&spec), &view);
        assert!(matches!(answer, Placement::Unschedulable { .. }), "{answer:?}");
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
        let spec = pod(100, 256 * MI);
        let totals = |release| {
            let scores = default_profile(release).node_scores(&spec, &nodes, &[0, 1]);
            scores.iter().map(|s| (s.plugins[2], s.total)).collect::<Vec<_>>()
        };
        // plain: fit cpu (4000 - 3100) * 100 / 4000 = 22, mem (16384 - 12544) * 100 / 16384 = 23 -> 22
        //   v1.20 balanced: 0.775 vs 0.765625 -> 99; v1.33: std 0.0047 -> 99
        // soft: fit cpu 97, mem 98 -> 97; v1.20 balanced 0.025 vs 0.015625 -> 99; v1.33 -> 99
        // v1.20: plain 22 + 99 + 100 = 221 beats soft 97 + 99 + 0 = 196
        assert_eq!(totals(Release::V1_20), vec![(100, 221), (0, 196)]);
        // v1.33: plain 22 + 99 + 300 = 421, soft 196
        assert_eq!(totals(Release::V1_33), vec![(100, 421), (0, 196)]);
    }
}
