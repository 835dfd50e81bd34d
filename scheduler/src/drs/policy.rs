//! The `drs` arms: DRS's monolithic DQN as a scheduling policy. One network
//! sees every node's features at once ([`super::state`]) and answers one
//! Q-value per node; the pod goes to the feasible node of highest value.
//!
//! - Feasibility is the default profile's filters with nominated pods'
//!   room taken, as every arm of the lab has it; infeasible nodes are
//!   masked (never chosen, their values not computed). DRS itself chose
//!   among all nodes and left the API server to refuse.
//! - Ties go to the lowest slot, so a decision is a function of the view.
//! - A pod no node takes goes to kube-scheduler's DefaultPreemption, as for
//!   the agmarl arms and every kube profile (the framework scheduler the
//!   network would run in preempts); [`DrsScheduler::with_preemption`]
//!   turns it off.
//! - While training, [`DrsScheduler::explore`] makes the choice ε-greedy
//!   and every decision with a candidate is logged for the learner.

use crate::agmarl::features::{Observation, ObservationMemory, observe_into};
use crate::api::Scheduler;
use crate::diagnosis::Diagnosis;
use crate::drs::network::QWeights;
use crate::drs::state::{slot_of, state_into};
use crate::preemption::{Nominated, preempt};
use crate::profile::filter_chain;
use rand::Rng;
use schedlab_core::pod::PodId;
use schedlab_core::rng::{SimRng, purpose, stream};
use schedlab_core::{ClusterView, PendingPod, Placement};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What a DRS network was trained to maximise: the two `drs` arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DrsReward {
    /// `drs`: DRS's own reward, the negative sum over resources (cpu,
    /// memory) of the standard deviation across Ready nodes of their
    /// requested share, right after the bind.
    #[serde(rename = "drs")]
    Balance,
    /// `drs-agmarl-reward`: what AGMARL-DKS's agents score, the mean of the
    /// placement's realised fault tolerance, utilisation and cost
    /// ([`crate::agmarl::train::realised`]) over those measured, so that the
    /// comparison with `agmarl` is of architectures and not of objectives.
    #[serde(rename = "drs-agmarl-reward")]
    Objectives,
}

impl DrsReward {
    pub const ALL: [DrsReward; 2] = [DrsReward::Balance, DrsReward::Objectives];

    /// The harness arm name.
    pub fn arm_name(self) -> &'static str {
        match self {
            DrsReward::Balance => "drs",
            DrsReward::Objectives => "drs-agmarl-reward",
        }
    }

    /// The reward of an arm name, if it is a DRS arm.
    pub fn from_arm_name(name: &str) -> Option<DrsReward> {
        DrsReward::ALL.into_iter().find(|r| r.arm_name() == name)
    }
}

/// The DRS arms' names.
pub const DRS_ARMS: &[&str] = &["drs", "drs-agmarl-reward"];

/// Why a pod stays pending when feasible nodes exist but none has a slot.
const NO_SLOT_REASON: &str = "no feasible node has a slot in the DRS network (it has fewer outputs than nodes)";

/// One decision with a candidate, as training needs it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub pod: PodId,
    /// the state vector
    pub state: Arc<[f32]>,
    /// the feasible slots
    pub feasible: Arc<[usize]>,
    /// the slot bound to
    pub action: usize,
    /// DRS's balance reward of this bind, known at once
    pub balance: f32,
}

/// ε-greedy exploration while training.
#[derive(Debug)]
struct Explore {
    rng: SimRng,
    epsilon: f64,
}

/// The DRS policy.
#[derive(Debug)]
pub struct DrsScheduler {
    reward: DrsReward,
    weights: QWeights,
    preemption: bool,
    rng: SimRng,
    explore: Option<Explore>,
    log: Option<Vec<Logged>>,
    obs: Observation,
    observed: ObservationMemory,
    state: Vec<f32>,
    feasible: Vec<usize>,
    q: Vec<f32>,
}

/// Stream key of the exploration draws (under `purpose::TRAINING`).
const EXPLORE_STREAM: u64 = 0x0064_7273_5f65; // "drs_e"

impl DrsScheduler {
    /// The arm of `reward` deciding with `weights`, drawing preemption's
    /// random choices from `seed`.
    pub fn new(reward: DrsReward, weights: QWeights, seed: u64) -> DrsScheduler {
        DrsScheduler {
            reward,
            weights,
            preemption: true,
            rng: stream(seed, &[purpose::SCHEDULER]),
            explore: None,
            log: None,
            obs: Observation::default(),
            observed: ObservationMemory::default(),
            state: Vec::new(),
            feasible: Vec::new(),
            q: Vec::new(),
        }
    }

    /// Whether a pod no node takes goes to DefaultPreemption (default true).
    pub fn with_preemption(mut self, on: bool) -> DrsScheduler {
        self.preemption = on;
        self
    }

    /// Chooses ε-greedily from now on, drawing from `seed`'s training
    /// stream, and logs every decision with a candidate ([`Self::take_log`]).
    pub fn explore(&mut self, epsilon: f64, seed: u64) {
        self.explore = Some(Explore {
            rng: stream(seed, &[purpose::TRAINING, EXPLORE_STREAM]),
            epsilon: epsilon.clamp(0.0, 1.0),
        });
        self.log = Some(Vec::new());
    }

    /// The decisions logged since [`Self::explore`].
    pub fn take_log(&mut self) -> Vec<Logged> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The number of nodes the network was built for.
    pub fn nodes(&self) -> usize {
        self.weights.nodes()
    }

    pub fn reward(&self) -> DrsReward {
        self.reward
    }
}

/// DRS's reward after binding `pod` to view row `chosen`: minus the sum over
/// cpu and memory of the population standard deviation, across Ready nodes,
/// of each node's requested share of its allocatable.
pub fn balance_reward(pod: &PendingPod<'_>, view: &ClusterView<'_>, chosen: usize) -> f32 {
    let mut shares: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for (i, node) in view.nodes.iter().enumerate() {
        if !node.condition.is_ready() {
            continue;
        }
        let mut requested = node.requested;
        if i == chosen {
            requested += pod.spec.requests;
        }
        let alloc = node.spec.allocatable;
        let share = |r: u64, a: u64| if a == 0 { 0.0 } else { r as f64 / a as f64 };
        shares[0].push(share(requested.cpu_milli, alloc.cpu_milli));
        shares[1].push(share(requested.memory_bytes, alloc.memory_bytes));
    }
    let sd = |v: &[f64]| {
        if v.is_empty() {
            return 0.0;
        }
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
    };
    -(sd(&shares[0]) + sd(&shares[1])) as f32
}

impl Scheduler for DrsScheduler {
    fn name(&self) -> &str {
        self.reward.arm_name()
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, view: &ClusterView<'_>) -> Placement {
        let nodes = view.nodes;
        let size = self.weights.nodes();
        let mut diagnosis = Diagnosis::new();
        let mut filter = filter_chain(crate::default::PROFILE);
        let nominated = Nominated::for_pod(pod, view);
        self.feasible.clear();
        let mut slotless = 0usize;
        for (i, node) in nodes.iter().enumerate() {
            match nominated.filter(&mut filter, pod.spec, node) {
                Ok(()) => match slot_of(i, size) {
                    Some(slot) => self.feasible.push(slot),
                    None => slotless += 1,
                },
                Err(failure) => diagnosis.record(failure),
            }
        }
        if self.feasible.is_empty() {
            if slotless > 0 {
                return Placement::Unschedulable {
                    reason: NO_SLOT_REASON.into(),
                };
            }
            let reason = diagnosis.message(nodes.len());
            if self.preemption
                && let Some((node, victims)) = preempt(pod, view, &nominated, &mut filter, &mut self.rng)
            {
                return Placement::Preempt {
                    node,
                    victims: victims.iter().map(|v| v.id).collect(),
                    reason: reason.into(),
                };
            }
            return Placement::Unschedulable { reason: reason.into() };
        }
        observe_into(pod, view, &mut self.observed, &mut self.obs);
        state_into(&self.obs, size, &mut self.state);
        self.weights.q_values_into(&self.state, &self.feasible, &mut self.q);
        // the feasible slot of highest value, the lowest slot on a tie (a NaN
        // from a broken network never wins)
        let mut best = self.feasible[0];
        for &s in &self.feasible[1..] {
            if self.q[s] > self.q[best] || (self.q[best].is_nan() && !self.q[s].is_nan()) {
                best = s;
            }
        }
        if let Some(explore) = &mut self.explore
            && explore.rng.random_bool(explore.epsilon)
        {
            best = self.feasible[explore.rng.random_range(0..self.feasible.len())];
        }
        if let Some(log) = &mut self.log {
            log.push(Logged {
                pod: pod.id,
                state: self.state.as_slice().into(),
                feasible: self.feasible.as_slice().into(),
                action: best,
                balance: balance_reward(pod, view, best),
            });
        }
        // slot s is view row s
        Placement::Bind(nodes[best].id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drs::network::{QNet, shapes};
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::testing::{GI, pod};

    /// A network whose output for slot i is `bias[i]` whatever the state.
    fn constant(bias: &[f32]) -> QWeights {
        let n = bias.len();
        let mut values: Vec<Vec<f32>> = shapes(n, 4).iter().map(|s| vec![0.0; s.iter().product()]).collect();
        values[3] = bias.to_vec();
        QNet::from_values(n, 4, values).unwrap().weights().unwrap()
    }

    #[test]
    fn arm_names_round_trip() {
        for r in DrsReward::ALL {
            assert_eq!(DrsReward::from_arm_name(r.arm_name()), Some(r));
        }
        let names: Vec<&str> = DrsReward::ALL.iter().map(|r| r.arm_name()).collect();
        assert_eq!(names, DRS_ARMS);
        assert_eq!(DrsReward::from_arm_name("agmarl"), None);
    }

    #[test]
    fn the_highest_value_among_feasible_nodes_wins_and_infeasible_ones_are_masked() {
        // node 1 has the highest value but cannot take the pod
        let nodes = cluster([node("a"), node("b").cpu("1"), node("c"), node("d")]);
        let spec = pod(2000, GI);
        let mut drs = DrsScheduler::new(DrsReward::Balance, constant(&[0.1, 9.0, 0.5, 0.5]), 1);
        assert_eq!(
            drs.schedule(&pending(&spec), &view(&nodes)),
            Placement::Bind(nodes[2].id)
        );
        // no feasible node and nothing to preempt: unschedulable
        let big = pod(64_000, GI);
        assert!(matches!(
            drs.schedule(&pending(&big), &view(&nodes)),
            Placement::Unschedulable { .. }
        ));
    }

    #[test]
    fn a_node_without_a_slot_is_never_chosen() {
        let nodes = cluster([node("a").cpu("1"), node("b"), node("c")]);
        let spec = pod(2000, GI);
        // two slots: node c (row 2) is outside the network
        let mut drs = DrsScheduler::new(DrsReward::Balance, constant(&[0.0, 0.0]), 1);
        assert_eq!(
            drs.schedule(&pending(&spec), &view(&nodes)),
            Placement::Bind(nodes[1].id)
        );
        let nodes = cluster([node("a").cpu("1"), node("b").cpu("1"), node("c")]);
        match drs.schedule(&pending(&spec), &view(&nodes)) {
            Placement::Unschedulable { reason } => assert_eq!(reason, NO_SLOT_REASON),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn exploring_logs_each_decision_and_greedy_logs_none() {
        let nodes = cluster([node("a"), node("b"), node("c")]);
        let spec = pod(500, GI);
        let mut drs = DrsScheduler::new(DrsReward::Balance, constant(&[0.0, 1.0, 0.0]), 1);
        drs.schedule(&pending(&spec), &view(&nodes));
        assert!(drs.take_log().is_empty());
        drs.explore(1.0, 5);
        let mut chosen = std::collections::BTreeSet::new();
        for _ in 0..40 {
            if let Placement::Bind(n) = drs.schedule(&pending(&spec), &view(&nodes)) {
                chosen.insert(n);
            }
        }
        assert_eq!(chosen.len(), 3, "ε = 1 tries every node");
        let log = drs.take_log();
        assert_eq!(log.len(), 40);
        assert_eq!(&*log[0].feasible, &[0, 1, 2]);
        assert_eq!(log[0].state.len(), crate::drs::network::input_dim(3));
        drs.explore(0.0, 5);
        drs.schedule(&pending(&spec), &view(&nodes));
        assert_eq!(drs.take_log()[0].action, 1, "ε = 0 is greedy");
    }

    #[test]
    fn balance_reward_is_minus_the_spread_of_requested_shares() {
        // two empty 4-core 16 GiB nodes; a 2-core 8 GiB pod on node 0 makes
        // the shares 0.5 and 0: sd 0.25 each resource
        let nodes = cluster([node("a"), node("b")]);
        let spec = pod(2000, 8 * GI);
        let r = balance_reward(&pending(&spec), &view(&nodes), 0);
        assert!((r + 0.5).abs() < 1e-6, "{r}");
        // a NotReady node does not count
        let nodes = cluster([node("a"), node("b").not_ready()]);
        assert_eq!(balance_reward(&pending(&spec), &view(&nodes), 0), 0.0);
    }
}
