//! Transitions: one scheduling decision that bound or declined a pod, with
//! what it led to, as the replay buffer stores it.
//!
//! A state is the observation of every node agent at a decision, the
//! candidates (feasible nodes: only they act) and the stress level the
//! controller selected under. Consecutive transitions of an episode share
//! their states through [`Arc`], so the buffer holds each observation once.
//!
//! In the critic's joint action, the agents of infeasible nodes abstain:
//! their action row is zero. A candidate's row is its three scores. For a
//! decline (strategic restraint) the state says so and the chosen agent is
//! the node the selection picked and restraint refused.

use crate::agmarl::features::{NODE_FEATURES, Observation, POD_FEATURES};
use crate::agmarl::stress::StressLevel;
use crate::agmarl::train::error::TrainError;
use std::sync::Arc;

/// What the agents saw at one decision.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub obs: Observation,
    /// rows of `obs` (node indices) of the feasible nodes, in the policy's order
    pub candidates: Vec<usize>,
    pub level: StressLevel,
    /// the controller declined the pod (strategic restraint)
    pub declined: bool,
}

impl State {
    /// Checks that the observation's sizes agree and every candidate is a row of it.
    pub fn new(obs: Observation, candidates: Vec<usize>, level: StressLevel) -> Result<State, TrainError> {
        if obs.node_features.len() != obs.n * NODE_FEATURES || obs.pod_features.len() != POD_FEATURES {
            return Err(TrainError::Transition(format!(
                "observation of {} nodes holds {} node and {} pod features",
                obs.n,
                obs.node_features.len(),
                obs.pod_features.len()
            )));
        }
        if let Some(&bad) = candidates.iter().find(|&&r| r >= obs.n) {
            return Err(TrainError::Transition(format!(
                "candidate row {bad} outside an observation of {} nodes",
                obs.n
            )));
        }
        Ok(State {
            obs,
            candidates,
            level,
            declined: false,
        })
    }

    /// The joint action with `scores` (one per candidate) on the candidates'
    /// rows and zeros elsewhere, row-major `n × 3`.
    pub fn joint_action(&self, scores: &[[f32; 3]]) -> Vec<f32> {
        let mut out = vec![0.0; self.obs.n * 3];
        for (&row, s) in self.candidates.iter().zip(scores) {
            out[row * 3..row * 3 + 3].copy_from_slice(s);
        }
        out
    }

    /// 1 on the candidates' rows, 0 elsewhere (`n` values).
    pub fn candidate_mask(&self) -> Vec<f32> {
        let mut out = vec![0.0; self.obs.n];
        for &row in &self.candidates {
            out[row] = 1.0;
        }
        out
    }
}

/// One learnable decision: a bind or a decline, and its outcome.
#[derive(Debug, Clone)]
pub struct Transition {
    state: Arc<State>,
    actions: Vec<[f32; 3]>,
    chosen: usize,
    realised: [f32; 3],
    known: [bool; 3],
    reward: f32,
    next: Option<Arc<State>>,
    /// for a decline: the wait head's target, the fault tolerance the pod
    /// realised where it was bound later (0 if it never was)
    wait_target: Option<f32>,
}

impl Transition {
    /// `actions`: the scores acted on, one per candidate of `state`;
    /// `chosen`: index into the candidates of the node bound to (or refused);
    /// `realised`: its measured metrics, `known` which of them were measured
    /// (none for a decline); `next`: the episode's next state with
    /// candidates, None at the end of the episode (terminal).
    pub fn new(
        state: Arc<State>,
        actions: Vec<[f32; 3]>,
        chosen: usize,
        (realised, known): ([f32; 3], [bool; 3]),
        reward: f32,
        next: Option<Arc<State>>,
    ) -> Result<Transition, TrainError> {
        if actions.len() != state.candidates.len() {
            return Err(TrainError::Transition(format!(
                "{} actions for {} candidates",
                actions.len(),
                state.candidates.len()
            )));
        }
        if chosen >= state.candidates.len() {
            return Err(TrainError::Transition(format!(
                "chosen candidate {chosen} of {}",
                state.candidates.len()
            )));
        }
        let finite = |v: &[f32]| v.iter().all(|x| x.is_finite());
        if !finite(actions.as_flattened()) || !finite(&realised) || !reward.is_finite() {
            return Err(TrainError::Transition("a score, metric or reward is not finite".into()));
        }
        if let Some(next) = &next
            && next.candidates.is_empty()
        {
            return Err(TrainError::Transition("the next state has no candidate".into()));
        }
        Ok(Transition {
            state,
            actions,
            chosen,
            realised,
            known,
            reward,
            next,
            wait_target: None,
        })
    }

    /// A decline's wait-head target (ignored on a bind; a value outside
    /// [0, 1] or not finite is an error).
    pub fn with_wait_target(mut self, target: f32) -> Result<Transition, TrainError> {
        if !(0.0..=1.0).contains(&target) {
            return Err(TrainError::Transition(format!(
                "a wait target of {target}, not in [0, 1]"
            )));
        }
        if self.declined() {
            self.wait_target = Some(target);
        }
        Ok(self)
    }

    /// The wait head's target: Some for a decline that has one.
    pub fn wait_target(&self) -> Option<f32> {
        self.wait_target
    }

    pub fn state(&self) -> &Arc<State> {
        &self.state
    }
    pub fn actions(&self) -> &[[f32; 3]] {
        &self.actions
    }
    /// Index into the state's candidates.
    pub fn chosen(&self) -> usize {
        self.chosen
    }
    /// The chosen node's row in the observation.
    pub fn chosen_row(&self) -> usize {
        self.state.candidates[self.chosen]
    }
    pub fn realised(&self) -> [f32; 3] {
        self.realised
    }
    /// Which of [`Self::realised`] were measured.
    pub fn known(&self) -> [bool; 3] {
        self.known
    }
    /// The controller declined the pod; the chosen candidate is the node refused.
    pub fn declined(&self) -> bool {
        self.state.declined
    }
    pub fn reward(&self) -> f32 {
        self.reward
    }
    pub fn next(&self) -> Option<&Arc<State>> {
        self.next.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(n: usize) -> Observation {
        Observation {
            n,
            node_features: vec![0.5; n * NODE_FEATURES],
            pod_features: vec![0.5; POD_FEATURES],
            queue: [0.25, 0.5],
            domains: (0..n).map(|i| (i % 3) as u32).collect(),
            domain_count: n.min(3),
            domain_features: vec![0.25; n.min(3) * crate::agmarl::features::DOMAIN_FEATURES],
        }
    }

    #[test]
    fn joint_actions_put_scores_on_candidate_rows() {
        let s = State::new(obs(3), vec![2, 0], StressLevel::Calm).unwrap();
        assert_eq!(
            s.joint_action(&[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]),
            vec![0.4, 0.5, 0.6, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3]
        );
        assert_eq!(s.candidate_mask(), vec![1.0, 0.0, 1.0]);
    }

    #[test]
    fn inconsistent_parts_are_rejected() {
        assert!(State::new(obs(2), vec![2], StressLevel::Calm).is_err());
        let mut short = obs(2);
        short.node_features.pop();
        assert!(State::new(short, vec![0], StressLevel::Calm).is_err());
        let s = Arc::new(State::new(obs(3), vec![1, 2], StressLevel::Calm).unwrap());
        let ok = Transition::new(s.clone(), vec![[0.5; 3]; 2], 1, ([1.0; 3], [true; 3]), 1.0, None).unwrap();
        assert_eq!(ok.chosen_row(), 2);
        assert!(Transition::new(s.clone(), vec![[0.5; 3]; 1], 0, ([1.0; 3], [true; 3]), 1.0, None).is_err());
        assert!(Transition::new(s.clone(), vec![[0.5; 3]; 2], 2, ([1.0; 3], [true; 3]), 1.0, None).is_err());
        assert!(Transition::new(s.clone(), vec![[f32::NAN; 3]; 2], 0, ([1.0; 3], [true; 3]), 1.0, None).is_err());
        let dead_end = Arc::new(State::new(obs(3), vec![], StressLevel::Calm).unwrap());
        assert!(Transition::new(s, vec![[0.5; 3]; 2], 0, ([1.0; 3], [true; 3]), 1.0, Some(dead_end)).is_err());
    }
}
