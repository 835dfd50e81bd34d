//! The MADDPG learner: centralised critic, shared decentralised actor,
//! target networks with soft updates, Adam with an adaptive learning rate.
//!
//! One update on a minibatch of transitions `(s, a, chosen, r, s')`:
//!
//! 1. **Critic.** `y = r + γ · Q'(s', a'(s'), c')` with the target actor's
//!    scores `a'(s')` on the next state's candidates (the other agents
//!    abstain, see [`super::transition`]) and `c'` the candidate the
//!    controller would pick from them: lexicographic selection under the
//!    next state's stress level with `delta_lex`, or the weighted sum when
//!    training the `agmarl-linear` variant; `y = r` at the end of an
//!    episode. A decline is a transition like a bind: its state says it
//!    was declined (the critic's context), its chosen agent is the node
//!    restraint refused, and the next state's decline flag is the one the
//!    episode took (restraint is a rule on the scores, replayed as taken).
//!    Loss: mean of `(Q(s, a, chosen) − y)²`; the target is held fixed (no
//!    gradient).
//! 2. **Actor.** For the chosen agent of each bind, the actor's current
//!    scores `μ(s)_c` replace its action from the buffer while every other
//!    agent keeps its buffered action (MADDPG's per-agent policy gradient;
//!    the agents share one actor, so this is the gradient for all of them).
//!    Loss: `−mean_binds Q(s, a with μ(s)_c, chosen) + β · mean over the
//!    measured metrics of (μ(s)_c − realised)² + β_wait · mean_declines
//!    (w(s) − later)²`: declines have no acting agent and no measured
//!    metric of the refused node, but they teach the wait head `w` the
//!    fault tolerance the pod realised where it was bound later (0 if it
//!    never was).
//!    The β term is the reward's own measure: the reward pays for scores
//!    that equal the realised metrics, and the critic can only learn that
//!    through bootstrapped, noisy values; giving the actor the measured
//!    target directly turns most of each transition's information into a
//!    low-variance supervised gradient, while `−Q` keeps the MADDPG signal
//!    (including the stress term and the longer-run effects of a choice).
//!    β = 5 by default: at β = 1 the critic's gradient, which mixes how good
//!    the chosen node's scores are with how good the state is, pulled the
//!    fault-tolerance scores up (40 episodes on the built-ins: 0.98
//!    predicted against 0.90 realised for stable pods) and left the
//!    utilisation and cost scores ten times less accurate; at β = 5 they are
//!    calibrated to within a few points and the `−Q` term still shapes them.
//! 3. **Targets.** `θ' ← τ·θ + (1−τ)·θ'` for the actor and the critic.
//!
//! Both optimisers are Adam (`candle_nn::AdamW` with weight decay 0, which is
//! exactly Adam). The learning rates follow the run's progress
//! ([`CosineSchedule`]), set once per learning round.
//!
//! γ = 0.9 by default. A decision is one pod's placement and a simulated
//! minute holds dozens of them, so what a choice does to the cluster (a
//! node filled up, a pool woken) shows in the next handful of decisions,
//! which is the horizon `1 / (1 − γ)` = 10 gives; longer ones mostly add
//! variance from unrelated pods.

use crate::agmarl::lexicographic::{Candidate, Tolerance, lexicographic_select_traced, weighted_select};
use crate::agmarl::network::{AgmarlNet, Critic, soft_update};
use crate::agmarl::stress::objective_order;
use crate::agmarl::train::batch::{ActorParams, Batch, CriticParams};
use crate::agmarl::train::error::TrainError;
use crate::agmarl::train::schedule::{CosineSchedule, LrScheduleConfig};
use crate::agmarl::train::transition::{State, Transition};
use candle_core::{Device, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use schedlab_core::node::NodeId;
use serde::{Deserialize, Serialize};

/// Settings of the learner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MaddpgConfig {
    /// discount γ of the TD target
    pub gamma: f64,
    /// soft target update rate τ
    pub tau: f64,
    /// transitions per minibatch
    pub batch_size: usize,
    /// Adam's initial learning rate for the actor
    pub actor_lr: f64,
    /// Adam's initial learning rate for the critic
    pub critic_lr: f64,
    /// weight β of the direct score-prediction loss in the actor's loss
    pub beta: f64,
    /// weight of the wait head's squared error on declines in the actor's loss
    pub wait_beta: f64,
    /// the lexicographic tolerance the controller selects with (for `c'`);
    /// not serialised: a training run takes it from its policy settings
    #[serde(skip)]
    pub delta_lex: f32,
    /// run the actor with the graph network (false: the `agmarl-nognn`
    /// ablation); not serialised, taken from the policy's variant
    #[serde(skip)]
    pub use_gnn: bool,
    /// select `c'` by this weighted sum instead of lexicographically (the
    /// `agmarl-linear` ablation); not serialised, taken from the policy
    #[serde(skip)]
    pub linear_weights: Option<[f32; 3]>,
    /// the least tolerance of each selection step for `c'`, in score units
    /// (the heads' latest measured RMSE, see
    /// [`crate::agmarl::policy::AgmarlConfig::score_tolerance`]); not
    /// serialised, the trainer sets it as it measures
    #[serde(skip)]
    pub score_tolerance: [f32; 3],
    /// the learning rates' decay over the run
    pub lr_schedule: LrScheduleConfig,
}

impl Default for MaddpgConfig {
    fn default() -> Self {
        MaddpgConfig {
            gamma: 0.9,
            tau: 0.01,
            batch_size: 64,
            actor_lr: 1e-3,
            critic_lr: 1e-3,
            beta: 5.0,
            wait_beta: 5.0,
            delta_lex: 0.05,
            use_gnn: true,
            linear_weights: None,
            score_tolerance: [0.0; 3],
            lr_schedule: LrScheduleConfig::default(),
        }
    }
}

impl MaddpgConfig {
    /// Refuses a setting outside its range, naming the field, the value and
    /// the range.
    pub fn validate(&self) -> Result<(), TrainError> {
        use crate::agmarl::train::config::{out_of_range, within, within_f};
        if !(0.0..1.0).contains(&self.gamma) {
            return Err(out_of_range("gamma", self.gamma, "[0, 1)"));
        }
        if !(self.tau > 0.0 && self.tau <= 1.0) {
            return Err(out_of_range("tau", self.tau, "(0, 1]"));
        }
        within("batch_size", self.batch_size, 1, MAX_BATCH_SIZE)?;
        for (field, lr) in [("actor_lr", self.actor_lr), ("critic_lr", self.critic_lr)] {
            if !(lr > 0.0 && lr <= 1.0) {
                return Err(out_of_range(field, lr, "(0, 1]"));
            }
        }
        within_f("beta", self.beta, 0.0, MAX_BETA)?;
        within_f("wait_beta", self.wait_beta, 0.0, MAX_BETA)?;
        if !self.lr_schedule.is_valid() {
            return Err(out_of_range(
                "lr_schedule.min_scale",
                self.lr_schedule.min_scale,
                "(0, 1]",
            ));
        }
        Ok(())
    }
}

/// Transitions in one minibatch (64 by default).
pub const MAX_BATCH_SIZE: usize = 65_536;
/// The weight β of the score-prediction loss (5 by default).
pub const MAX_BETA: f64 = 1_000.0;

/// What one update measured (before its steps).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UpdateStats {
    /// mean squared TD error
    pub critic_loss: f32,
    /// `−Q + β · score MSE`
    pub actor_loss: f32,
    /// mean squared error of the chosen agents' noiseless scores to the realised metrics
    pub score_mse: f32,
    /// mean Q of the buffered joint actions
    pub q_mean: f32,
}

/// The actor, the critic, their targets and optimisers.
pub struct Learner {
    cfg: MaddpgConfig,
    actor: AgmarlNet,
    critic: Critic,
    target_actor: AgmarlNet,
    target_critic: Critic,
    actor_opt: AdamW,
    critic_opt: AdamW,
    schedule: CosineSchedule,
    lr_scale: f64,
    updates: u64,
    // batched views of the four networks' variables
    actor_params: ActorParams,
    critic_params: CriticParams,
    target_actor_params: ActorParams,
    target_critic_params: CriticParams,
}

impl std::fmt::Debug for Learner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Learner")
            .field("cfg", &self.cfg)
            .field("updates", &self.updates)
            .field("lr_scale", &self.lr_scale)
            .finish_non_exhaustive()
    }
}

fn adam(vars: Vec<candle_core::Var>, lr: f64) -> Result<AdamW, TrainError> {
    Ok(AdamW::new(
        vars,
        ParamsAdamW {
            lr,
            weight_decay: 0.0,
            ..ParamsAdamW::default()
        },
    )?)
}

fn load_actor(net: &AgmarlNet) -> Result<ActorParams, TrainError> {
    ActorParams::load(net.varmap())
}

impl Learner {
    /// A learner starting from `actor` and `critic`; the targets start as copies.
    pub fn new(actor: AgmarlNet, critic: Critic, cfg: MaddpgConfig) -> Result<Learner, TrainError> {
        cfg.validate()?;
        let target_actor = actor.deep_clone()?;
        let target_critic = critic.deep_clone()?;
        let actor_opt = adam(actor.varmap().all_vars(), cfg.actor_lr)?;
        let critic_opt = adam(critic.varmap().all_vars(), cfg.critic_lr)?;
        let schedule = CosineSchedule::new(cfg.lr_schedule);
        let actor_params = load_actor(&actor)?;
        let target_actor_params = load_actor(&target_actor)?;
        let critic_params = CriticParams::load(critic.varmap())?;
        let target_critic_params = CriticParams::load(target_critic.varmap())?;
        Ok(Learner {
            actor_params,
            critic_params,
            target_actor_params,
            target_critic_params,
            cfg,
            actor,
            critic,
            target_actor,
            target_critic,
            actor_opt,
            critic_opt,
            schedule,
            lr_scale: 1.0,
            updates: 0,
        })
    }

    pub fn config(&self) -> &MaddpgConfig {
        &self.cfg
    }

    /// The actor being trained.
    pub fn actor(&self) -> &AgmarlNet {
        &self.actor
    }

    pub fn critic(&self) -> &Critic {
        &self.critic
    }

    /// Updates done so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The current learning rates `(actor, critic)`.
    pub fn learning_rates(&self) -> (f64, f64) {
        (self.actor_opt.learning_rate(), self.critic_opt.learning_rate())
    }

    /// Sets both learning rates for the run's `progress` (episodes played ÷
    /// planned) by the cosine schedule; returns the scale.
    pub fn set_progress(&mut self, progress: f64) -> f64 {
        self.lr_scale = self.schedule.scale(progress);
        self.actor_opt.set_learning_rate(self.cfg.actor_lr * self.lr_scale);
        self.critic_opt.set_learning_rate(self.cfg.critic_lr * self.lr_scale);
        self.lr_scale
    }

    /// The selection tolerance of `c'` in score units (the heads' latest
    /// measured RMSE).
    pub fn set_score_tolerance(&mut self, tolerance: [f32; 3]) {
        self.cfg.score_tolerance = tolerance;
    }

    /// The TD targets of `batch` (no gradient): `r`, plus `γ·Q'(s', a'(s'), c')`
    /// where there is a next state.
    fn td_targets(&self, batch: &[&Transition]) -> Result<Vec<f32>, TrainError> {
        let mut targets: Vec<f32> = batch.iter().map(|t| t.reward()).collect();
        let (which, next): (Vec<usize>, Vec<&State>) = batch
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.next().map(|n| (i, n.as_ref())))
            .unzip();
        if next.is_empty() {
            return Ok(targets);
        }
        let b = Batch::new(&next)?;
        let scores = self.target_actor_params.forward(&b, self.cfg.use_gnn)?.detach();
        let rows = scores.to_vec2::<f32>()?;
        let mut joint = Vec::with_capacity(b.rows() * 3);
        let mut chosen = Vec::with_capacity(next.len());
        for (g, state) in next.iter().enumerate() {
            let candidates: Vec<Candidate> = state
                .candidates
                .iter()
                .filter_map(|&r| {
                    rows.get(b.row(g, r)).map(|s| Candidate {
                        node: NodeId(r as u32),
                        scores: [s[0], s[1], s[2]],
                    })
                })
                .collect();
            let pick = match self.cfg.linear_weights {
                Some(weights) => weighted_select(&candidates, weights),
                None => lexicographic_select_traced(
                    &candidates,
                    &objective_order(state.level),
                    Tolerance {
                        delta_lex: self.cfg.delta_lex,
                        floor: self.cfg.score_tolerance,
                    },
                    None,
                ),
            }
            .unwrap_or(0);
            let row = candidates.get(pick).map_or(0, |c| c.node.index());
            chosen.push(b.row(g, row));
            let own: Vec<[f32; 3]> = candidates.iter().map(|c| c.scores).collect();
            joint.extend(state.joint_action(&own));
        }
        let joint = Tensor::from_vec(joint, (b.rows(), 3), &Device::Cpu)?;
        let q = self
            .target_critic_params
            .q(&b, &joint, &Batch::index(&chosen)?)?
            .detach()
            .to_vec1::<f32>()?;
        let gamma = self.cfg.gamma as f32;
        for (i, q) in which.into_iter().zip(q) {
            targets[i] += gamma * q;
        }
        Ok(targets)
    }

    /// One update of the critic, then the actor, then the targets.
    pub fn update(&mut self, batch: &[&Transition]) -> Result<UpdateStats, TrainError> {
        if batch.is_empty() {
            return Err(TrainError::Config("an update needs at least one transition".into()));
        }
        let dev = Device::Cpu;
        let targets = self.td_targets(batch)?;
        let states: Vec<&State> = batch.iter().map(|t| t.state().as_ref()).collect();
        let b = Batch::new(&states)?;
        let mut joint = Vec::with_capacity(b.rows() * 3);
        let mut realised = Vec::with_capacity(batch.len() * 3);
        let mut known = Vec::with_capacity(batch.len() * 3);
        let mut binds = Vec::with_capacity(batch.len());
        let mut mask = vec![0f32; b.rows()];
        let mut chosen = Vec::with_capacity(batch.len());
        let (mut waited, mut wait_targets) = (Vec::with_capacity(batch.len()), Vec::with_capacity(batch.len()));
        for (g, t) in batch.iter().enumerate() {
            waited.push(f32::from(u8::from(t.wait_target().is_some())));
            wait_targets.push(t.wait_target().unwrap_or(0.0));
            joint.extend(t.state().joint_action(t.actions()));
            realised.extend_from_slice(&t.realised());
            known.extend(t.known().map(|k| f32::from(u8::from(k))));
            binds.push(f32::from(u8::from(!t.declined())));
            let row = b.row(g, t.chosen_row());
            mask[row] = 1.0;
            chosen.push(row);
        }
        let known_count: f32 = known.iter().sum();
        let wait_count: f32 = waited.iter().sum();
        let waited = Tensor::from_vec(waited, (batch.len(), 1), &dev)?;
        let wait_targets = Tensor::from_vec(wait_targets, (batch.len(), 1), &dev)?;
        let bind_count: f32 = binds.iter().sum();
        let joint = Tensor::from_vec(joint, (b.rows(), 3), &dev)?;
        let realised = Tensor::from_vec(realised, (batch.len(), 3), &dev)?;
        let known = Tensor::from_vec(known, (batch.len(), 3), &dev)?;
        let binds = Tensor::from_vec(binds, batch.len(), &dev)?;
        let mask = Tensor::from_vec(mask, (b.rows(), 1), &dev)?;
        let chosen = Batch::index(&chosen)?;

        // critic
        let q = self.critic_params.q(&b, &joint, &chosen)?;
        let y = Tensor::from_vec(targets, batch.len(), &dev)?;
        let critic_loss = (&q - &y)?.sqr()?.mean_all()?;
        let q_mean = q.mean_all()?.to_scalar::<f32>()?;
        let critic_value = critic_loss.to_scalar::<f32>()?;
        self.critic_opt.backward_step(&critic_loss)?;

        // actor: the chosen agents' rows come from the current actor
        let embedding = self.actor_params.embed(&b, self.cfg.use_gnn)?;
        let own = self.actor_params.act(&b, &embedding, &chosen)?;
        let others = joint.broadcast_mul(&(1.0 - &mask)?)?;
        let mixed = others.index_add(&chosen, &own, 0)?;
        // the policy gradient of binds only: a decline's chosen agent did not
        // act, and its scores are taught by the binds of the same states
        let q_actor =
            (self.critic_params.q(&b, &mixed, &chosen)? * &binds)?.sum_all()? / f64::from(bind_count.max(1.0));
        let q_actor = q_actor?;
        // the score error over the measured metrics only
        let score_mse = ((&own - &realised)?.sqr()? * &known)?.sum_all()? / f64::from(known_count.max(1.0));
        let score_mse = score_mse?;
        // the wait head's error over the declines with a target
        let waits = self.actor_params.wait(&b, &embedding, self.cfg.use_gnn)?;
        let wait_mse = ((&waits - &wait_targets)?.sqr()? * &waited)?.sum_all()? / f64::from(wait_count.max(1.0));
        let actor_loss = (((&score_mse * self.cfg.beta)? + (wait_mse? * self.cfg.wait_beta)?)? - &q_actor)?;
        let stats = UpdateStats {
            critic_loss: critic_value,
            actor_loss: actor_loss.to_scalar::<f32>()?,
            score_mse: score_mse.to_scalar::<f32>()?,
            q_mean,
        };
        // the loss's gradient reaches the critic's weights too; only the
        // actor's optimiser steps, so they stay as the critic step left them;
        // a minibatch without binds teaches the actor only through the wait head
        if bind_count > 0.0 || wait_count > 0.0 {
            self.actor_opt.backward_step(&actor_loss)?;
        }

        soft_update(self.target_critic.varmap(), self.critic.varmap(), self.cfg.tau)?;
        soft_update(self.target_actor.varmap(), self.actor.varmap(), self.cfg.tau)?;
        self.updates += 1;
        Ok(stats)
    }

    /// The chosen agents' score MSE over `batch` with the current actor, no update.
    pub fn score_mse(&self, batch: &[&Transition]) -> Result<f32, TrainError> {
        if batch.is_empty() {
            return Ok(0.0);
        }
        // one scorer for the batch: the actor's weights are copied out once,
        // not once per transition
        let mut scorer = crate::agmarl::scoring::Scorer::new(self.actor.weights()?);
        let mut s = Vec::with_capacity(1);
        let mut sum = 0.0f64;
        let mut binds = 0usize;
        for t in batch.iter().filter(|t| !t.declined()) {
            scorer.scores_into(&t.state().obs, &[t.chosen_row()], self.cfg.use_gnn, &mut s)?;
            let Some(s) = s.first() else { continue };
            sum += f64::from(crate::agmarl::train::reward::score_error_known(
                s,
                &t.realised(),
                &t.known(),
            ));
            binds += 1;
        }
        Ok(if binds == 0 { 0.0 } else { (sum / binds as f64) as f32 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::features::{NODE_FEATURES, Observation, POD_FEATURES};
    use crate::agmarl::lexicographic::lexicographic_select;
    use crate::agmarl::network::Hyper;
    use crate::agmarl::stress::StressLevel;
    use std::sync::Arc;

    fn state(n: usize, value: f32) -> Arc<State> {
        let obs = Observation {
            n,
            node_features: (0..n * NODE_FEATURES).map(|i| value * ((i % 7) as f32) / 7.0).collect(),
            pod_features: vec![value; POD_FEATURES],
            queue: [0.25, 0.5],
            domains: (0..n).map(|i| (i % 3) as u32).collect(),
            domain_count: n.min(3),
            domain_features: vec![0.25; n.min(3) * crate::agmarl::features::DOMAIN_FEATURES],
        };
        Arc::new(State::new(obs, (0..n).collect(), StressLevel::Calm).unwrap())
    }

    #[test]
    fn terminal_targets_are_the_reward_and_others_bootstrap() {
        let h = Hyper::default();
        let learner = Learner::new(
            AgmarlNet::new(&h, 1).unwrap(),
            Critic::new(&h, 1).unwrap(),
            MaddpgConfig::default(),
        )
        .unwrap();
        let s = state(3, 0.5);
        let end = Transition::new(s.clone(), vec![[0.5; 3]; 3], 0, ([1.0; 3], [true; 3]), 0.7, None).unwrap();
        let next = state(4, 0.3);
        let mid = Transition::new(
            s.clone(),
            vec![[0.5; 3]; 3],
            0,
            ([1.0; 3], [true; 3]),
            0.7,
            Some(next.clone()),
        )
        .unwrap();
        let y = learner.td_targets(&[&end, &mid, &end]).unwrap();
        assert_eq!((y[0], y[2]), (0.7, 0.7));
        assert!(y[1].is_finite());
        assert_ne!(y[1], 0.7);
        // the bootstrap is γ·Q' of the target critic at the target policy's choice
        let scores = learner.target_actor.scores(&next.obs, &next.candidates, true).unwrap();
        let cands: Vec<Candidate> = next
            .candidates
            .iter()
            .zip(&scores)
            .map(|(&r, &s)| Candidate {
                node: NodeId(r as u32),
                scores: s,
            })
            .collect();
        let pick = lexicographic_select(&cands, &objective_order(next.level), 0.05).unwrap();
        let nodes = Tensor::from_slice(&next.obs.node_features, (4, NODE_FEATURES), &Device::Cpu).unwrap();
        let pod = Tensor::from_slice(&next.obs.pod_features, (1, POD_FEATURES), &Device::Cpu).unwrap();
        let joint = Tensor::from_vec(next.joint_action(&scores), (4, 3), &Device::Cpu).unwrap();
        let context = crate::agmarl::network::critic_context(&next.obs, next.level, next.declined);
        let context = Tensor::from_slice(&context, (1, context.len()), &Device::Cpu).unwrap();
        let q = learner
            .target_critic
            .q(&nodes, &pod, &context, &joint, cands[pick].node.index())
            .unwrap();
        let q = q.to_vec1::<f32>().unwrap()[0];
        assert!((y[1] - (0.7 + 0.9 * q)).abs() < 1e-5, "{} vs {}", y[1], 0.7 + 0.9 * q);
    }

    #[test]
    fn declines_teach_the_wait_head_their_later_fault_tolerance() {
        let h = Hyper::default();
        let mut learner = Learner::new(
            AgmarlNet::new(&h, 3).unwrap(),
            Critic::new(&h, 3).unwrap(),
            MaddpgConfig::default(),
        )
        .unwrap();
        let declined = |value: f32, later: f32| {
            let mut s = (*state(3, value)).clone();
            s.declined = true;
            Transition::new(Arc::new(s), vec![[0.5; 3]; 3], 0, ([0.0; 3], [false; 3]), 0.5, None)
                .unwrap()
                .with_wait_target(later)
                .unwrap()
        };
        // pods like the first always failed later, pods like the second survived
        let (bad, good) = (declined(0.2, 0.0), declined(0.9, 1.0));
        let wait = |l: &Learner, t: &Transition| {
            let mut scorer = crate::agmarl::scoring::Scorer::new(l.actor().weights().unwrap());
            scorer.wait(&t.state().obs, true).unwrap()
        };
        let before = (wait(&learner, &bad), wait(&learner, &good));
        for _ in 0..200 {
            learner.update(&[&bad, &good]).unwrap();
        }
        let after = (wait(&learner, &bad), wait(&learner, &good));
        assert!(after.0 < before.0 && after.1 > before.1, "{before:?} -> {after:?}");
        assert!(after.1 - after.0 > 0.5, "{after:?}");
        // a bind carries no wait target, whatever it is given
        let bind = Transition::new(state(3, 0.5), vec![[0.5; 3]; 3], 0, ([1.0; 3], [true; 3]), 0.7, None).unwrap();
        assert_eq!(bind.with_wait_target(1.0).unwrap().wait_target(), None);
        assert!(declined(0.5, 0.0).with_wait_target(1.5).is_err());
    }

    #[test]
    fn bad_settings_are_rejected() {
        for cfg in [
            MaddpgConfig {
                gamma: 1.0,
                ..MaddpgConfig::default()
            },
            MaddpgConfig {
                tau: 0.0,
                ..MaddpgConfig::default()
            },
            MaddpgConfig {
                batch_size: 0,
                ..MaddpgConfig::default()
            },
            MaddpgConfig {
                critic_lr: f64::NAN,
                ..MaddpgConfig::default()
            },
        ] {
            assert!(matches!(cfg.validate(), Err(TrainError::Config(_))), "{cfg:?}");
        }
        assert!(MaddpgConfig::default().validate().is_ok());
    }

    #[test]
    fn learning_rates_follow_the_run_not_the_critic() {
        let h = Hyper::default();
        let cfg = MaddpgConfig {
            lr_schedule: LrScheduleConfig { min_scale: 0.1 },
            ..MaddpgConfig::default()
        };
        let mut learner = Learner::new(AgmarlNet::new(&h, 1).unwrap(), Critic::new(&h, 1).unwrap(), cfg).unwrap();
        assert_eq!(learner.learning_rates(), (1e-3, 1e-3));
        let close = |(a, c): (f64, f64), want: f64| (a - want).abs() < 1e-12 && (c - want).abs() < 1e-12;
        assert!((learner.set_progress(0.5) - 0.55).abs() < 1e-12);
        assert!(close(learner.learning_rates(), 5.5e-4));
        learner.set_progress(1.0);
        assert!(close(learner.learning_rates(), 1e-4));
    }
}
