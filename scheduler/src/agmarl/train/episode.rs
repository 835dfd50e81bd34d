//! One training episode on the policy's side: the exploring policy that
//! logs every decision, and the assembly of the log and the realised
//! metrics into rewards and transitions once the run is over.
//!
//! The backend that plays the episode (the simulator, in the harness) calls
//! [`Explorer::place`] for every scheduling attempt and feeds every record it
//! writes to a [`RealisedTracker`]; after the run's `End` record,
//! [`Explorer::finish`] joins the two by pod.
//!
//! - Censored fault-tolerance labels are replaced by their survival
//!   estimate first ([`super::censoring`]).
//! - A decision that bound a pod becomes a [`Transition`] whose reward
//!   compares the scores acted on with the pod's realised metrics.
//! - A strategic decline becomes a [`Transition`] too: its state says it was
//!   declined, its chosen agent is the node restraint refused, and its
//!   reward compares the refused node's fault-tolerance score with the
//!   realised fault tolerance of the pod's later placement (see
//!   [`super::reward`]).
//! - Unschedulable attempts (no feasible node: no agent acted) are counted
//!   but not stored: the critic's Q needs a chosen agent, and their reward
//!   is 0, so leaving them out changes no return. A preemption is such an
//!   attempt too (DefaultPreemption acted, no agent did) and is counted
//!   with them; [`Explorer::place`] still answers it, so the simulator
//!   deletes the victims and nominates the pod, as it does for `default`.
//! - The next state of a transition is the next decision of the episode that
//!   had candidates; the last one is terminal.
//! - A bind without a `PodBound` record after it (a backend that refused it)
//!   counts as unschedulable.

use crate::agmarl::network::AgmarlNet;
use crate::agmarl::policy::{AgmarlConfig, AgmarlScheduler};
use crate::agmarl::train::censoring::estimate_censored;
use crate::agmarl::train::error::TrainError;
use crate::agmarl::train::exploration::GaussianNoise;
use crate::agmarl::train::heads::{HeadSample, HeadStats};
use crate::agmarl::train::realised::Realised;
use crate::agmarl::train::reward::{Outcome, RewardConfig, reward};
use crate::agmarl::train::transition::{State, Transition};
use schedlab_core::pod::PodId;
use schedlab_core::rng::{purpose, stream};
use schedlab_core::time::Span;
use schedlab_core::{ClusterView, PendingPod, Placement};
use std::collections::HashMap;
use std::sync::Arc;

/// Stream key of the exploration noise (under `purpose::TRAINING`).
const NOISE_STREAM: u64 = 0x006e_6f69_7365; // "noise"

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bind,
    Unschedulable,
    Decline,
}

#[derive(Debug)]
struct Logged {
    pod: PodId,
    kind: Kind,
    /// None when there was no candidate
    state: Option<Arc<State>>,
    acted: Vec<[f32; 3]>,
    /// the network's scores before noise
    clean: Vec<[f32; 3]>,
    /// the candidate bound to, or for a decline the one refused
    chosen: Option<usize>,
}

/// What an episode taught, ready for the replay buffer, and how it went.
#[derive(Debug)]
pub struct Episode {
    pub transitions: Vec<Transition>,
    pub stats: EpisodeStats,
    /// how well the policy's noiseless scores predicted its placements
    pub heads: HeadStats,
}

/// Summary of one episode.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EpisodeStats {
    /// scheduling attempts
    pub decisions: usize,
    pub binds: usize,
    pub unschedulable: usize,
    pub declines: usize,
    /// mean reward over the attempts in which the agents acted (binds and
    /// declines); unschedulable attempts (reward 0) are left out because
    /// their number is mostly the backend's retry back-off at work
    pub reward_mean: f32,
    /// mean over binds of the network's own (noiseless) score error to the realised metrics
    pub score_mse: f32,
    /// the same error per objective `[ft, util, cost]`
    pub score_mse_by_objective: [f32; 3],
    /// share of binds that were fault tolerant (censored ones counted by
    /// their survival estimate)
    pub fault_tolerance: f32,
    /// binds whose fault tolerance was censored (deleted or still running
    /// before the horizon) and estimated
    pub censored: usize,
    /// mean over declines of the pod's later realised fault tolerance minus
    /// the refused node's score: what restraint bought (0 without declines)
    pub decline_gain: f32,
}

/// The exploring policy of one episode: an [`AgmarlScheduler`] with a frozen
/// copy of the actor, Gaussian noise on its scores, and a log of every
/// decision.
#[derive(Debug)]
pub struct Explorer {
    scheduler: AgmarlScheduler,
    noise: GaussianNoise,
    log: Vec<Logged>,
}

impl Explorer {
    /// `net` is used as is (pass a frozen copy); the noise of `sigma` comes
    /// from the episode's `seed`.
    pub fn new(net: AgmarlNet, policy: AgmarlConfig, seed: u64, sigma: f32) -> Explorer {
        Explorer::with_scheduler(AgmarlScheduler::new(net, policy, seed), seed, sigma)
    }

    /// Any AGMARL policy (a control's included) logged the same way, with
    /// the noise of `sigma` from `seed`: to measure a policy's scores
    /// against what its placements realise, give it no noise.
    pub fn with_scheduler(scheduler: AgmarlScheduler, seed: u64, sigma: f32) -> Explorer {
        Explorer {
            scheduler,
            noise: GaussianNoise::new(stream(seed, &[purpose::TRAINING, NOISE_STREAM]), sigma),
            log: Vec::new(),
        }
    }

    /// Decisions so far.
    pub fn decisions(&self) -> usize {
        self.log.len()
    }

    /// One scheduling attempt: decides with noise, logs, answers.
    pub fn place(&mut self, pod: &PendingPod<'_>, view: &ClusterView<'_>) -> Placement {
        let noise = &mut self.noise;
        let mut perturb = |scores: &mut [[f32; 3]]| noise.perturb(scores);
        let decision = self.scheduler.decide(pod, view, Some(&mut perturb));
        let kind = match decision.placement {
            Placement::Bind(_) => Kind::Bind,
            // no agent acted in a preemption: out of the replay, but answered
            // below so the backend carries it out
            Placement::Unschedulable { .. } | Placement::Preempt { .. } => Kind::Unschedulable,
            Placement::Decline { .. } => Kind::Decline,
        };
        let mut logged = Logged {
            pod: pod.id,
            kind,
            state: None,
            acted: Vec::new(),
            clean: Vec::new(),
            chosen: decision.chosen.or(decision.refused),
        };
        if !decision.candidates.is_empty() {
            let clean = self.noise.last_clean();
            logged.clean = if clean.len() == decision.scores.len() {
                clean.to_vec()
            } else {
                decision.scores.clone()
            };
            logged.acted = decision.scores;
            match State::new(decision.obs, decision.candidates, decision.level) {
                Ok(mut state) => {
                    state.declined = kind == Kind::Decline;
                    logged.state = Some(Arc::new(state));
                }
                Err(error) => tracing::warn!(%error, "decision not kept for training"),
            }
        }
        self.log.push(logged);
        decision.placement
    }

    /// Joins the log with the realised metrics of the run's placements,
    /// measured with `horizon`.
    pub fn finish(self, mut realised: Vec<Realised>, horizon: Span, cfg: &RewardConfig) -> crate::Result<Episode> {
        let censored = realised.iter().filter(|r| r.settled.censored()).count();
        estimate_censored(&mut realised, horizon);
        let mut episode = assemble(self.log, &realised, cfg)?;
        episode.stats.censored = censored;
        Ok(episode)
    }
}

fn assemble(log: Vec<Logged>, realised: &[Realised], cfg: &RewardConfig) -> Result<Episode, TrainError> {
    let by_pod: HashMap<PodId, &Realised> = realised.iter().map(|r| (r.pod, r)).collect();
    // next state with candidates after each position
    let mut next_state: Vec<Option<Arc<State>>> = vec![None; log.len()];
    let mut upcoming: Option<Arc<State>> = None;
    for (i, l) in log.iter().enumerate().rev() {
        next_state[i] = upcoming.clone();
        if let Some(s) = &l.state {
            upcoming = Some(s.clone());
        }
    }
    let mut stats = EpisodeStats {
        decisions: log.len(),
        ..EpisodeStats::default()
    };
    let mut transitions = Vec::new();
    let mut heads = HeadStats::default();
    let (mut reward_sum, mut ft_sum, mut gain_sum) = (0.0f64, 0.0f64, 0.0f64);
    let mut sq_sums = [0.0f64; 3];
    let mut known_counts = [0usize; 3];
    for (l, next) in log.into_iter().zip(next_state) {
        if l.state.is_some() {
            heads.push_decision(&l.clean);
        }
        let (Some(state), Some(chosen)) = (&l.state, l.chosen) else {
            if l.kind == Kind::Decline {
                stats.declines += 1;
            } else {
                stats.unschedulable += 1;
            }
            continue;
        };
        let (Some(&acted), Some(&clean)) = (l.acted.get(chosen), l.clean.get(chosen)) else {
            return Err(TrainError::Transition(format!(
                "chosen candidate {chosen} of {} scores",
                l.acted.len()
            )));
        };
        let level = state.level;
        let later = by_pod.get(&l.pod);
        match l.kind {
            Kind::Decline => {
                let later_ft = later.map(|r| r.metrics[0]);
                let r = reward(
                    &Outcome::Declined {
                        predicted: acted[0],
                        later: later_ft,
                    },
                    level,
                    cfg,
                );
                stats.declines += 1;
                reward_sum += f64::from(r);
                gain_sum += f64::from(later_ft.unwrap_or(0.0) - acted[0]);
                transitions.push(
                    Transition::new(state.clone(), l.acted, chosen, ([0.0; 3], [false; 3]), r, next)?
                        .with_wait_target(later_ft.unwrap_or(0.0))?,
                );
            }
            Kind::Bind => {
                let Some(realised) = later else {
                    stats.unschedulable += 1;
                    continue;
                };
                let (metrics, known) = (realised.metrics, realised.known);
                heads.push_placement(&HeadSample {
                    predicted: clean,
                    realised: metrics,
                    known,
                    censored: realised.settled.censored(),
                });
                let r = reward(
                    &Outcome::Bound {
                        predicted: acted,
                        realised: metrics,
                        known,
                    },
                    level,
                    cfg,
                );
                stats.binds += 1;
                reward_sum += f64::from(r);
                for (o, ((c, m), k)) in clean.iter().zip(metrics).zip(known).enumerate() {
                    if k {
                        sq_sums[o] += f64::from((c - m) * (c - m));
                        known_counts[o] += 1;
                    }
                }
                ft_sum += f64::from(metrics[0]);
                transitions.push(Transition::new(
                    state.clone(),
                    l.acted,
                    chosen,
                    (metrics, known),
                    r,
                    next,
                )?);
            }
            Kind::Unschedulable => stats.unschedulable += 1,
        }
    }
    let acted = stats.binds + stats.declines;
    if acted > 0 {
        stats.reward_mean = (reward_sum / acted as f64) as f32;
    }
    if stats.binds > 0 {
        for (o, (sum, n)) in sq_sums.iter().zip(known_counts).enumerate() {
            stats.score_mse_by_objective[o] = if n > 0 { (sum / n as f64) as f32 } else { 0.0 };
        }
        let known: usize = known_counts.iter().sum();
        if known > 0 {
            stats.score_mse = (sq_sums.iter().sum::<f64>() / known as f64) as f32;
        }
        stats.fault_tolerance = (ft_sum / stats.binds as f64) as f32;
    }
    if stats.declines > 0 {
        stats.decline_gain = (gain_sum / stats.declines as f64) as f32;
    }
    Ok(Episode {
        transitions,
        stats,
        heads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::features::{NODE_FEATURES, Observation, POD_FEATURES};
    use crate::agmarl::stress::StressLevel;
    use crate::agmarl::train::realised::Settled;
    use schedlab_core::node::NodeId;
    use schedlab_core::time::Time;

    fn state(n: usize) -> Arc<State> {
        let obs = Observation {
            n,
            node_features: vec![0.1; n * NODE_FEATURES],
            pod_features: vec![0.1; POD_FEATURES],
            queue: [0.25, 0.5],
            domains: (0..n).map(|i| (i % 3) as u32).collect(),
            domain_count: n.min(3),
            domain_features: vec![0.25; n.min(3) * crate::agmarl::features::DOMAIN_FEATURES],
        };
        Arc::new(State::new(obs, (0..n).collect(), StressLevel::Stressed).unwrap())
    }

    fn logged(pod: u64, kind: Kind, with_state: bool) -> Logged {
        let state = with_state.then(|| {
            let mut s = (*state(2)).clone();
            s.declined = kind == Kind::Decline;
            Arc::new(s)
        });
        let scores = if with_state {
            vec![[0.5; 3], [1.0; 3]]
        } else {
            Vec::new()
        };
        Logged {
            pod: PodId(pod),
            kind,
            state,
            acted: scores.clone(),
            clean: scores.iter().map(|s| s.map(|x| x - 0.5)).collect(),
            chosen: (kind != Kind::Unschedulable).then_some(1),
        }
    }

    fn realised(pod: u64, metrics: [f32; 3]) -> Realised {
        Realised {
            pod: PodId(pod),
            workload: schedlab_core::pod::WorkloadId(0),
            node: NodeId(1),
            bound_at: Time(0),
            metrics,
            known: [true; 3],
            settled: Settled::HorizonPassed,
            observed: Span(600_000),
        }
    }

    #[test]
    fn binds_and_declines_become_transitions_linked_to_the_next_state_with_candidates() {
        let log = vec![
            logged(0, Kind::Bind, true),
            logged(1, Kind::Unschedulable, false),
            logged(2, Kind::Decline, true),
            logged(3, Kind::Bind, true),
            // bound by the policy but never bound by the backend
            logged(4, Kind::Bind, true),
        ];
        let third = log[2].state.clone().unwrap();
        let fourth = log[3].state.clone().unwrap();
        let fifth = log[4].state.clone().unwrap();
        let cfg = RewardConfig::default();
        let ep = assemble(log, &[realised(0, [1.0; 3]), realised(3, [0.0, 1.0, 1.0])], &cfg).unwrap();
        assert_eq!(ep.transitions.len(), 3);
        let (a, d, b) = (&ep.transitions[0], &ep.transitions[1], &ep.transitions[2]);
        assert!(Arc::ptr_eq(a.next().unwrap(), &third));
        assert!(Arc::ptr_eq(d.state(), &third));
        assert!(Arc::ptr_eq(d.next().unwrap(), &fourth));
        assert!(Arc::ptr_eq(b.next().unwrap(), &fifth));
        assert!(Arc::ptr_eq(b.state(), &fourth));
        // acted [1,1,1] on realised [1,1,1], stressed: 1 + 0.25
        assert!((a.reward() - 1.25).abs() < 1e-6);
        // acted [1,1,1] on realised [0,1,1]: error 1/3, no stress bonus
        assert!((b.reward() - (1.0 - 1.0 / 3.0)).abs() < 1e-6);
        // the decline refused a node scoring 1.0 and the pod was never
        // bound: 0.5 + 0.25 × (0 − 1)
        assert_eq!((d.chosen(), d.known()), (1, [false; 3]));
        assert!((d.reward() - 0.25).abs() < 1e-6, "{}", d.reward());
        let s = ep.stats;
        assert_eq!((s.decisions, s.binds, s.unschedulable, s.declines), (5, 2, 2, 1));
        let expected_mean = (1.25 + 0.25 + (1.0 - 1.0 / 3.0)) / 3.0;
        assert!((s.reward_mean - expected_mean).abs() < 1e-6);
        assert!((s.decline_gain + 1.0).abs() < 1e-6);
        // clean scores were 0.5 everywhere: errors 0.25 and (0.25 + 0.25 + 0.25) / 3
        assert!((s.score_mse - 0.25).abs() < 1e-6);
        for (got, want) in s.score_mse_by_objective.iter().zip([0.25, 0.25, 0.25]) {
            assert!((got - want).abs() < 1e-6);
        }
        assert!((s.fault_tolerance - 0.5).abs() < 1e-6);
    }

    #[test]
    fn a_decline_is_valued_by_the_pods_later_placement() {
        let log = vec![logged(2, Kind::Decline, true), logged(2, Kind::Bind, true)];
        let cfg = RewardConfig::default();
        let ep = assemble(log, &[realised(2, [1.0, 0.5, 0.5])], &cfg).unwrap();
        // it later survived where the refused node scored 1.0: no gain
        assert!((ep.transitions[0].reward() - 0.5).abs() < 1e-6);
        assert!(ep.transitions[0].declined() && !ep.transitions[1].declined());
        assert_eq!(ep.stats.decline_gain, 0.0);
        // the wait head learns the later fault tolerance; a bind has no wait target
        assert_eq!(ep.transitions[0].wait_target(), Some(1.0));
        assert_eq!(ep.transitions[1].wait_target(), None);
        // a pod never bound later waited for nothing
        let never = assemble(vec![logged(3, Kind::Decline, true)], &[], &cfg).unwrap();
        assert_eq!(never.transitions[0].wait_target(), Some(0.0));
    }

    #[test]
    fn unknown_metrics_stay_out_of_the_score_error() {
        let mut r = realised(0, [1.0, 0.0, 0.5]);
        r.known = [true, false, true];
        let ep = assemble(vec![logged(0, Kind::Bind, true)], &[r], &RewardConfig::default()).unwrap();
        assert_eq!(ep.transitions[0].known(), [true, false, true]);
        // clean 0.5: ft 0.25, cost 0; utilisation unknown
        assert_eq!(ep.stats.score_mse_by_objective, [0.25, 0.0, 0.0]);
        assert!((ep.stats.score_mse - 0.125).abs() < 1e-6);
    }

    #[test]
    fn a_preemption_is_answered_and_kept_out_of_the_replay() {
        use crate::agmarl::network::Hyper;
        use crate::testing::{bound_pod, cluster, node, pending, view_with_pods};
        use schedlab_core::testing::{PodSpecChanges, pod};

        let mut nodes = cluster([node("a").cpu("2")]);
        let pods = vec![vec![bound_pod(7, 0, 2000, 0)]];
        let view = view_with_pods(&mut nodes, &pods, &[]);
        let spec = pod(1000, 0).priority(100);
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let mut explorer = Explorer::new(net, AgmarlConfig::default(), 1, 0.1);
        let placement = explorer.place(&pending(&spec), &view);
        assert!(
            matches!(&placement, Placement::Preempt { victims, .. } if victims == &[PodId(7)]),
            "{placement:?}"
        );
        let episode = explorer
            .finish(Vec::new(), Span::from_secs(600), &RewardConfig::default())
            .unwrap();
        assert!(episode.transitions.is_empty());
        assert_eq!((episode.stats.decisions, episode.stats.unschedulable), (1, 1));
    }

    #[test]
    fn the_last_transition_is_terminal() {
        let cfg = RewardConfig::default();
        let ep = assemble(vec![logged(7, Kind::Bind, true)], &[realised(7, [1.0; 3])], &cfg).unwrap();
        assert!(ep.transitions[0].next().is_none());
        let empty = assemble(Vec::new(), &[], &cfg).unwrap();
        assert_eq!(empty.stats, EpisodeStats::default());
    }
}
