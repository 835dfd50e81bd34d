//! DRS's learner: DQN (Mnih et al.) with experience replay and a target
//! network, as DRS trains its Q-network.
//!
//! - **Kept from DRS:** the network ([`super::network`], hidden width 50),
//!   Adam, minibatches of 32, the target network copied from the online one
//!   every 100 updates, the squared TD error
//!   `(Q(s,a) − (r + γ max_{a'} Q_target(s',a')))²`, ε-greedy exploration,
//!   and (for `drs`) its reward ([`super::policy::balance_reward`]).
//! - **Changed:** the learning rate is 0.001, not DRS's 0.01, and γ is 0
//!   (DRS gives none): with them, and only with them among the eight
//!   settings tried on validation seeds (pre-registration, amendment 10),
//!   the greedy network at 10 nodes balanced better than random placement;
//!   DRS's 0.01 was for a 30-input network, ours has `22·N + 10` inputs, and
//!   its reward is immediate, so a discounted future only adds the next
//!   states' noise to the small difference one placement makes. The
//!   maximum over next actions runs over the next
//!   decision's feasible nodes only (as the policy masks them); the replay
//!   holds 10,000 transitions, not 100, because the updates come after each
//!   round of episodes (one per new transition, [`DqnConfig::updates_per_transition`])
//!   rather than one per step inside the episode, and the realised reward
//!   of `drs-agmarl-reward` is known only when the episode ends; ε falls
//!   linearly from 1 to 0.05 over the first half of the episodes. DRS's
//!   published loop never calls its learning step, so there is no trained
//!   schedule to copy.
//! - A transition's next state is the episode's next decision with a
//!   candidate; the last is terminal.

use crate::agmarl::train::censoring::estimate_censored;
use crate::agmarl::train::realised::Realised;
use crate::drs::error::DrsError;
use crate::drs::network::{DEFAULT_HIDDEN, QNet, QWeights};
use crate::drs::policy::{DrsReward, Logged};
use candle_core::{DType, Device, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::Rng;
use schedlab_core::pod::PodId;
use schedlab_core::rng::{SimRng, purpose, stream};
use schedlab_core::time::Span;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// Stream key of the replay sampling (under `purpose::TRAINING`).
const REPLAY_STREAM: u64 = 0x0064_7273_5f72; // "drs_r"

/// The learner's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DqnConfig {
    /// hidden width (DRS: 50)
    pub hidden: usize,
    /// Adam's learning rate (DRS: 0.01; see the module's notes)
    pub learning_rate: f64,
    /// minibatch size (DRS: 32)
    pub batch: usize,
    /// replay capacity in transitions (DRS: 100; see the module's notes)
    pub replay: usize,
    /// updates between copies of the online network into the target (DRS: 100)
    pub target_sync: usize,
    /// discount (DRS gives none; see the module's notes)
    pub gamma: f64,
    /// gradient updates per transition added
    pub updates_per_transition: f64,
    /// ε at the first episode
    pub epsilon_start: f64,
    /// ε from the end of the decay on
    pub epsilon_end: f64,
    /// the fraction of the episodes over which ε falls
    pub epsilon_decay: f64,
}

impl Default for DqnConfig {
    fn default() -> DqnConfig {
        DqnConfig {
            hidden: DEFAULT_HIDDEN,
            learning_rate: 0.001,
            batch: 32,
            replay: 10_000,
            target_sync: 100,
            gamma: 0.0,
            updates_per_transition: 1.0,
            epsilon_start: 1.0,
            epsilon_end: 0.05,
            epsilon_decay: 0.5,
        }
    }
}

impl DqnConfig {
    /// Rejects settings the learner cannot run with, naming the field.
    pub fn validate(&self) -> Result<(), DrsError> {
        let bad = |field, value: String, why| Err(DrsError::Config { field, value, why });
        let unit = |x: f64| x.is_finite() && (0.0..=1.0).contains(&x);
        if self.hidden == 0 || self.hidden > crate::drs::network::MAX_HIDDEN {
            return bad("hidden", self.hidden.to_string(), "must be in 1..=4096");
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad("learning_rate", self.learning_rate.to_string(), "must be above 0");
        }
        if self.batch == 0 {
            return bad("batch", "0".into(), "must be at least 1");
        }
        if self.replay < self.batch {
            return bad("replay", self.replay.to_string(), "must hold at least one batch");
        }
        if self.target_sync == 0 {
            return bad("target_sync", "0".into(), "must be at least 1");
        }
        if !unit(self.gamma) || self.gamma >= 1.0 {
            return bad("gamma", self.gamma.to_string(), "must be in [0, 1)");
        }
        if !(self.updates_per_transition.is_finite() && self.updates_per_transition >= 0.0) {
            return bad(
                "updates_per_transition",
                self.updates_per_transition.to_string(),
                "must be 0 or more",
            );
        }
        for (field, x) in [
            ("epsilon_start", self.epsilon_start),
            ("epsilon_end", self.epsilon_end),
            ("epsilon_decay", self.epsilon_decay),
        ] {
            if !unit(x) {
                return bad(field, x.to_string(), "must be in [0, 1]");
            }
        }
        Ok(())
    }

    /// ε for episode `e` (from 0) of `episodes`.
    pub fn epsilon(&self, e: usize, episodes: usize) -> f64 {
        let span = self.epsilon_decay * episodes as f64;
        if span <= 0.0 || e as f64 >= span {
            return self.epsilon_end;
        }
        self.epsilon_start + (self.epsilon_end - self.epsilon_start) * (e as f64 / span)
    }
}

/// The decision after a transition's: its state and feasible slots.
#[derive(Debug, Clone)]
pub struct Next {
    pub state: Arc<[f32]>,
    pub feasible: Arc<[usize]>,
}

/// One step of experience.
#[derive(Debug, Clone)]
pub struct Transition {
    pub state: Arc<[f32]>,
    pub action: usize,
    pub reward: f32,
    /// None when terminal
    pub next: Option<Next>,
}

/// What an episode's decisions became.
#[derive(Debug, Default)]
pub struct Assembled {
    pub transitions: Vec<Transition>,
    /// binds whose realised metrics were missing (`drs-agmarl-reward` only):
    /// no reward, no transition
    pub unrewarded: usize,
    pub reward_mean: f64,
}

/// The realised `[fault tolerance, utilisation, cost]` of each bound pod and
/// which of them were measured.
pub type RealisedByPod = HashMap<PodId, ([f32; 3], [bool; 3])>;

/// The realised metrics of an episode's placements by pod, censored fault
/// tolerances replaced by their survival estimate as AGMARL's training does
/// ([`crate::agmarl::train::censoring`]).
pub fn realised_by_pod(mut realised: Vec<Realised>, horizon: Span) -> RealisedByPod {
    estimate_censored(&mut realised, horizon);
    realised.into_iter().map(|r| (r.pod, (r.metrics, r.known))).collect()
}

/// The transitions of one episode's decision log, rewarded as `reward`
/// says (`realised` is read for [`DrsReward::Objectives`] only).
pub fn assemble(log: Vec<Logged>, reward: DrsReward, realised: &RealisedByPod) -> Assembled {
    let mut out = Assembled::default();
    let mut sum = 0.0f64;
    let nexts: Vec<Option<Next>> = (0..log.len())
        .map(|i| {
            log.get(i + 1).map(|n| Next {
                state: n.state.clone(),
                feasible: n.feasible.clone(),
            })
        })
        .collect();
    for (l, next) in log.into_iter().zip(nexts) {
        let r = match reward {
            DrsReward::Balance => Some(l.balance),
            DrsReward::Objectives => realised.get(&l.pod).and_then(|(metrics, known)| {
                let vals: Vec<f32> = metrics
                    .iter()
                    .zip(known)
                    .filter(|(_, k)| **k)
                    .map(|(m, _)| *m)
                    .collect();
                (!vals.is_empty()).then(|| vals.iter().sum::<f32>() / vals.len() as f32)
            }),
        };
        let Some(r) = r else {
            out.unrewarded += 1;
            continue;
        };
        sum += f64::from(r);
        out.transitions.push(Transition {
            state: l.state,
            action: l.action,
            reward: r,
            next,
        });
    }
    if !out.transitions.is_empty() {
        out.reward_mean = sum / out.transitions.len() as f64;
    }
    out
}

/// The DQN learner: online and target networks, their optimiser and the replay.
pub struct Dqn {
    cfg: DqnConfig,
    online: QNet,
    target: QNet,
    opt: AdamW,
    replay: Vec<Transition>,
    /// where the next transition goes once the replay is full
    cursor: usize,
    rng: SimRng,
    updates: usize,
}

impl std::fmt::Debug for Dqn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dqn")
            .field("cfg", &self.cfg)
            .field("nodes", &self.online.nodes())
            .field("replay", &self.replay.len())
            .field("updates", &self.updates)
            .finish_non_exhaustive()
    }
}

impl Dqn {
    /// A learner for a cluster of `nodes`, its networks initialised from `seed`.
    pub fn new(nodes: usize, cfg: DqnConfig, seed: u64) -> Result<Dqn, DrsError> {
        cfg.validate()?;
        let online = QNet::new(nodes, cfg.hidden, seed)?;
        let target = QNet::new(nodes, cfg.hidden, seed)?;
        let opt = AdamW::new(
            online.vars(),
            ParamsAdamW {
                lr: cfg.learning_rate,
                weight_decay: 0.0,
                ..ParamsAdamW::default()
            },
        )?;
        Ok(Dqn {
            online,
            target,
            opt,
            replay: Vec::new(),
            cursor: 0,
            rng: stream(seed, &[purpose::TRAINING, REPLAY_STREAM]),
            updates: 0,
            cfg,
        })
    }

    pub fn config(&self) -> &DqnConfig {
        &self.cfg
    }

    pub fn online(&self) -> &QNet {
        &self.online
    }

    pub fn updates(&self) -> usize {
        self.updates
    }

    pub fn replay_len(&self) -> usize {
        self.replay.len()
    }

    /// The online network's weights, for the next episodes' policies.
    pub fn weights(&self) -> Result<QWeights, DrsError> {
        self.online.weights()
    }

    /// Adds transitions to the replay, the oldest leaving when it is full.
    pub fn add(&mut self, transitions: Vec<Transition>) {
        for t in transitions {
            if self.replay.len() < self.cfg.replay {
                self.replay.push(t);
            } else {
                self.replay[self.cursor] = t;
                self.cursor = (self.cursor + 1) % self.cfg.replay;
            }
        }
    }

    /// `steps` updates on minibatches drawn uniformly from the replay (none
    /// before it holds a batch); the mean loss, None without an update.
    pub fn learn(&mut self, steps: usize) -> Result<Option<f64>, DrsError> {
        if self.replay.len() < self.cfg.batch || steps == 0 {
            return Ok(None);
        }
        let mut total = 0.0;
        for _ in 0..steps {
            let batch: Vec<usize> = (0..self.cfg.batch)
                .map(|_| self.rng.random_range(0..self.replay.len()))
                .collect();
            total += f64::from(self.update(&batch)?);
        }
        Ok(Some(total / steps as f64))
    }

    /// The TD targets `r + γ max_{a' feasible} Q_target(s', a')` of `batch`.
    fn targets(&self, batch: &[usize]) -> Result<Vec<f32>, DrsError> {
        let input = crate::drs::network::input_dim(self.online.nodes());
        let nexts: Vec<&Next> = batch.iter().filter_map(|&i| self.replay[i].next.as_ref()).collect();
        let mut next_best = Vec::with_capacity(nexts.len());
        if !nexts.is_empty() {
            let flat: Vec<f32> = nexts.iter().flat_map(|n| n.state.iter().copied()).collect();
            let q = self
                .target
                .forward(&Tensor::from_vec(flat, (nexts.len(), input), &Device::Cpu)?)?
                .to_vec2::<f32>()?;
            for (n, row) in nexts.iter().zip(q) {
                next_best.push(n.feasible.iter().map(|&a| row[a]).fold(f32::NEG_INFINITY, f32::max));
            }
        }
        let gamma = self.cfg.gamma as f32;
        let mut next_best = next_best.into_iter();
        Ok(batch
            .iter()
            .map(|&i| {
                let t = &self.replay[i];
                match &t.next {
                    Some(_) => t.reward + gamma * next_best.next().unwrap_or(0.0),
                    None => t.reward,
                }
            })
            .collect())
    }

    /// One gradient step on the transitions at `batch`; the loss before it.
    fn update(&mut self, batch: &[usize]) -> Result<f32, DrsError> {
        let input = crate::drs::network::input_dim(self.online.nodes());
        let y = self.targets(batch)?;
        let flat: Vec<f32> = batch
            .iter()
            .flat_map(|&i| self.replay[i].state.iter().copied())
            .collect();
        let actions: Vec<u32> = batch.iter().map(|&i| self.replay[i].action as u32).collect();
        let b = batch.len();
        let states = Tensor::from_vec(flat, (b, input), &Device::Cpu)?;
        let actions = Tensor::from_vec(actions, (b, 1), &Device::Cpu)?;
        let y = Tensor::from_vec(y, (b, 1), &Device::Cpu)?;
        let q = self.online.forward(&states)?.gather(&actions, 1)?;
        let loss = (q - y)?.sqr()?.mean_all()?;
        let value = loss.to_dtype(DType::F32)?.to_scalar::<f32>()?;
        self.opt.backward_step(&loss)?;
        self.updates += 1;
        if self.updates.is_multiple_of(self.cfg.target_sync) {
            self.target.copy_from(&self.online)?;
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drs::network::{input_dim, shapes};

    fn logged(pod: u64, action: usize, balance: f32, feasible: &[usize]) -> Logged {
        Logged {
            pod: PodId(pod),
            state: vec![pod as f32; input_dim(2)].into(),
            feasible: feasible.into(),
            action,
            balance,
        }
    }

    #[test]
    fn an_episode_log_becomes_transitions_chained_to_the_next_decision() {
        let log = vec![
            logged(1, 0, -0.5, &[0, 1]),
            logged(2, 1, -0.2, &[1]),
            logged(3, 0, -0.1, &[0]),
        ];
        let a = assemble(log.clone(), DrsReward::Balance, &RealisedByPod::new());
        assert_eq!(a.transitions.len(), 3);
        let t = &a.transitions[0];
        assert_eq!((t.action, t.reward), (0, -0.5));
        let next = t.next.as_ref().unwrap();
        assert_eq!(next.state[0], 2.0);
        assert_eq!(&*next.feasible, &[1]);
        assert!(a.transitions[2].next.is_none(), "the last is terminal");
        assert!((a.reward_mean + 0.8 / 3.0).abs() < 1e-6);

        // the objectives' reward: the mean of the measured realised metrics
        let realised = RealisedByPod::from([
            (PodId(1), ([1.0, 0.5, 0.0], [true, true, false])),
            (PodId(3), ([0.2, 0.2, 0.2], [false, false, false])),
        ]);
        let a = assemble(log, DrsReward::Objectives, &realised);
        assert_eq!(a.transitions.len(), 1);
        assert_eq!(a.transitions[0].reward, 0.75);
        assert_eq!(a.unrewarded, 2, "pod 2 has no record, pod 3 nothing measured");
    }

    #[test]
    fn the_bellman_target_uses_the_target_network_over_feasible_next_actions() {
        let cfg = DqnConfig {
            batch: 1,
            replay: 4,
            target_sync: 2,
            gamma: 0.5,
            learning_rate: 0.01,
            ..DqnConfig::default()
        };
        let mut dqn = Dqn::new(2, cfg, 1).unwrap();
        // target network: Q(s', ·) = [3, 7] whatever s'
        let mut values: Vec<Vec<f32>> = shapes(2, 50).iter().map(|s| vec![0.0; s.iter().product()]).collect();
        values[3] = vec![3.0, 7.0];
        dqn.target
            .copy_from(&QNet::from_values(2, 50, values).unwrap())
            .unwrap();
        let s: Arc<[f32]> = vec![0.1; input_dim(2)].into();
        dqn.add(vec![
            Transition {
                state: s.clone(),
                action: 0,
                reward: 1.0,
                next: Some(Next {
                    state: s.clone(),
                    feasible: vec![0].into(),
                }),
            },
            Transition {
                state: s.clone(),
                action: 1,
                reward: 1.0,
                next: Some(Next {
                    state: s.clone(),
                    feasible: vec![0, 1].into(),
                }),
            },
            Transition {
                state: s.clone(),
                action: 1,
                reward: 2.0,
                next: None,
            },
        ]);
        // only slot 0 feasible next: 1 + 0.5 × 3; both: 1 + 0.5 × 7; terminal: 2
        assert_eq!(dqn.targets(&[0, 1, 2]).unwrap(), vec![2.5, 4.5, 2.0]);

        // an update moves Q(s, a) toward its target, and every second one
        // copies the online network into the target
        let before = dqn.online.weights().unwrap();
        let q = |w: &mut QWeights| {
            let mut q = Vec::new();
            w.q_values_into(&s, &[0, 1], &mut q);
            q
        };
        let q0 = q(&mut before.clone())[1];
        for _ in 0..50 {
            dqn.update(&[2]).unwrap();
        }
        let q1 = q(&mut dqn.weights().unwrap())[1];
        assert!((q1 - 2.0).abs() < (q0 - 2.0).abs() / 2.0, "{q0} → {q1}");
        assert_eq!(
            dqn.target.values().unwrap(),
            dqn.online.values().unwrap(),
            "synced at update 50"
        );
        dqn.update(&[2]).unwrap();
        assert_ne!(dqn.target.values().unwrap(), dqn.online.values().unwrap(), "not at 51");
    }

    #[test]
    fn the_replay_keeps_the_newest_and_learning_waits_for_a_batch() {
        let cfg = DqnConfig {
            batch: 2,
            replay: 2,
            ..DqnConfig::default()
        };
        let mut dqn = Dqn::new(2, cfg, 1).unwrap();
        let t = |r: f32| Transition {
            state: vec![0.0; input_dim(2)].into(),
            action: 0,
            reward: r,
            next: None,
        };
        dqn.add(vec![t(1.0)]);
        assert_eq!(dqn.learn(3).unwrap(), None);
        dqn.add(vec![t(2.0), t(3.0)]);
        let rewards: Vec<f32> = dqn.replay.iter().map(|t| t.reward).collect();
        assert_eq!(rewards, vec![3.0, 2.0]);
        assert!(dqn.learn(3).unwrap().is_some());
        assert_eq!(dqn.updates(), 3);
    }

    #[test]
    fn settings_are_checked_and_epsilon_decays() {
        let cfg = DqnConfig::default();
        cfg.validate().unwrap();
        assert_eq!(cfg.epsilon(0, 100), 1.0);
        assert!((cfg.epsilon(25, 100) - 0.525).abs() < 1e-9);
        assert_eq!(cfg.epsilon(50, 100), 0.05);
        assert_eq!(cfg.epsilon(99, 100), 0.05);
        let bad = DqnConfig {
            gamma: 1.0,
            ..DqnConfig::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("gamma = 1"));
        let bad = DqnConfig {
            replay: 8,
            ..DqnConfig::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("replay = 8"));
    }
}
