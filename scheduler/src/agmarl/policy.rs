//! The AGMARL-DKS scheduler: one decision per pending pod.
//!
//! 1. Stress: the controller reads the cluster's stress signals and moves its
//!    [`StressMonitor`] (hysteresis across decisions).
//! 2. Feasibility: the default profile's filters ([`crate::filters`]) over
//!    every node, by default: every feasible node is an agent that gets to
//!    bid. [`AgmarlConfig::percentage_of_nodes_to_score`] turns on
//!    kube-scheduler's sampling instead (the rotating scan that stops at
//!    `numFeasibleNodesToFind` feasible nodes), so a large cluster scores a
//!    share of its nodes as the `default` arm does. As in kube-scheduler, a node must also leave room for the pods nominated to
//!    it of at least the pod's priority ([`Nominated`]), so a preemptor's
//!    nomination is respected. When no node passes, kube-scheduler's
//!    DefaultPreemption PostFilter, exactly as the `default` arm runs it
//!    ([`crate::preemption::preempt`] with the default profile's filter
//!    chain), answers Preempt when deleting pods of lower priority makes
//!    room; otherwise (or with [`AgmarlConfig::preemption`] off) the answer
//!    is Unschedulable with exactly the baselines' "0/N nodes are
//!    available: …" message. Either way no agent acted: the decision has
//!    no candidates, and training keeps it out of the replay.
//! 3. Scores: every node's agent observes ([`observe_into`]); the GNN runs
//!    over all nodes, the shared actor scores the feasible ones (for the
//!    `agmarl-analytic` control, hand-written formulas over the same
//!    observation do: [`crate::agmarl::analytic`]). Training may perturb
//!    these scores (exploration noise); they are then clamped to [0, 1].
//! 4. Selection: lexicographic by the stress level's objective order, each
//!    step keeping the candidates within `max(delta_lex × spread, tolerance)`
//!    of the objective's best, or the fixed weighted sum of the
//!    `agmarl-linear` ablation. The tolerance in score units is the scoring
//!    head's own held-out RMSE as the checkpoint records it
//!    ([`AgmarlConfig::score_tolerance`]), so a node never wins on a score
//!    difference smaller than the error of the head that made it. While
//!    training ([`AgmarlScheduler::explore_survivors`]) the choice among the
//!    filter's survivors is uniform at random instead of the tie-break, so
//!    the heads see placements the tie-break would never make.
//! 5. Restraint: under stress, an eligible pod is declined and stays
//!    pending when the wait head predicts more fault tolerance from
//!    waiting than the chosen node's score by more than the heads'
//!    combined error ([`learned_decline`], the default rule), or, under the
//!    threshold rule (`agmarl-analytic`'s), when the pod is unstable and its
//!    chosen node scores far below its workload's usual fault tolerance
//!    ([`should_decline`]); every bind adds the chosen node's
//!    fault-tolerance score to its workload's baseline. While training,
//!    eligible pods are also declined at random
//!    ([`AgmarlScheduler::explore_declines`]), drawn from the exploration
//!    stream.
//!
//! Outside training the policy draws random numbers only for preemption: DefaultPreemption's
//! scan offset (over 100 potential nodes) and its last tie-break come from
//! the run's scheduler stream (`stream(seed, [purpose::SCHEDULER])`, the
//! stream the profiles draw theirs from). Selection and its tie-breaks are
//! deterministic, so a view with a feasible node always gets the same
//! answer.
//!
//! Asked to explain ([`Scheduler::set_explain`]), a decision also records
//! the stress score and level, the level and objective order in force, the
//! candidates left after each selection step, the chosen and runner-up
//! nodes' scores (the runner-up is what the same selection picks without the
//! chosen node) and what made restraint decline ([`crate::explain`]). The
//! selection runs the same code either way; only the runner-up costs a
//! second selection, and only while explaining.

use crate::agmarl::analytic;
use crate::agmarl::features::{Observation, ObservationMemory, observe_into};
use crate::agmarl::lexicographic::{
    Candidate, Survivors, Tolerance, lexicographic_select_traced, lexicographic_survivors, weighted_select,
    weighted_select_traced,
};
use crate::agmarl::measured::MeasuredError;
use crate::agmarl::network::{AgmarlNet, Hyper};
use crate::agmarl::restraint::{
    Baseline, Baselines, EXPLORED_REASON, LEARNED_REASON, RESTRAINT_REASON, RestraintConfig, RestraintConfigError,
    RestraintRule, decline_margin, eligible, instability, learned_decline, should_decline, wait_could_win,
};
use crate::agmarl::scoring::{Reuse, Scorer};
use crate::agmarl::stress::{
    Objective, StressConfig, StressConfigError, StressLevel, StressMonitor, objective_order, signals,
};
use crate::api::Scheduler;
use crate::diagnosis::Diagnosis;
use crate::explain::{
    AgmarlTrace, DeclineBy, DeclineTrace, Explanation, NodeChoice, NodeScore, Selection, Steps, StressBasis,
    StressReading,
};
use crate::feasible::NodeScan;
use crate::preemption::{Nominated, preempt};
use crate::profile::{Sampling, filter_chain};
use rand::Rng;
use schedlab_core::rng::{SimRng, purpose, stream};
use schedlab_core::{ClusterView, PendingPod, Placement};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The arms: the full method and its three ablations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Variant {
    /// `agmarl`: the method as described.
    #[default]
    #[serde(rename = "agmarl", alias = "full")]
    Full,
    /// `agmarl-nognn`: the global embedding is zeroed, so each node's scores
    /// depend on its own features and the pod only (same checkpoint).
    #[serde(rename = "agmarl-nognn", alias = "nognn")]
    NoGnn,
    /// `agmarl-linear`: a fixed weighted sum of the three scores replaces the
    /// stress-ordered lexicographic selection; restraint is kept, so only the
    /// selection rule differs.
    #[serde(rename = "agmarl-linear", alias = "linear")]
    Linear,
    /// `agmarl-nostress`: no stress awareness: always the Calm objective
    /// order, and therefore no restraint (which needs stress).
    #[serde(rename = "agmarl-nostress", alias = "nostress")]
    NoStress,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Full, Variant::NoGnn, Variant::Linear, Variant::NoStress];

    /// The harness arm name.
    pub fn arm_name(self) -> &'static str {
        match self {
            Variant::Full => "agmarl",
            Variant::NoGnn => "agmarl-nognn",
            Variant::Linear => "agmarl-linear",
            Variant::NoStress => "agmarl-nostress",
        }
    }

    /// The variant of an arm name, if it is an AGMARL arm.
    pub fn from_arm_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.arm_name() == name)
    }

    /// Whether the global embedding is used.
    pub fn uses_gnn(self) -> bool {
        self != Variant::NoGnn
    }
}

/// The controls: a controller with scores nobody trained, so that what a
/// trained arm does beyond them is what learning adds. Each trained variant
/// has an untrained twin (its own controller: stress order, selection and
/// restraint as the variant runs them, with the initial weights its training
/// starts from); the analytic control runs the full method's controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Control {
    /// `<variant>-untrained` (`agmarl-untrained` for the full method): the
    /// variant's controller with the actor network's initial weights
    /// (`AgmarlNet::new(&Hyper::default(), init_seed)`, exactly where
    /// `schedlab train --variant <variant> --seed init_seed` starts from)
    /// and no update.
    Untrained(Variant),
    /// `agmarl-analytic`: the full method's controller fed by hand-written
    /// score formulas over the same observation ([`crate::agmarl::analytic`]).
    Analytic,
}

impl Control {
    /// The full method's two controls, then the ablations' untrained twins.
    pub const ALL: [Control; 5] = [
        Control::Untrained(Variant::Full),
        Control::Analytic,
        Control::Untrained(Variant::NoGnn),
        Control::Untrained(Variant::Linear),
        Control::Untrained(Variant::NoStress),
    ];

    /// The harness arm name.
    pub fn arm_name(self) -> &'static str {
        match self {
            Control::Untrained(Variant::Full) => "agmarl-untrained",
            Control::Untrained(Variant::NoGnn) => "agmarl-nognn-untrained",
            Control::Untrained(Variant::Linear) => "agmarl-linear-untrained",
            Control::Untrained(Variant::NoStress) => "agmarl-nostress-untrained",
            Control::Analytic => "agmarl-analytic",
        }
    }

    /// The control of an arm name, if it is one.
    pub fn from_arm_name(name: &str) -> Option<Control> {
        Control::ALL.into_iter().find(|c| c.arm_name() == name)
    }

    /// The variant whose controller it runs.
    pub fn variant(self) -> Variant {
        match self {
            Control::Untrained(variant) => variant,
            Control::Analytic => Variant::Full,
        }
    }

    /// Whether it is an untrained twin (it has an init seed).
    pub fn is_untrained(self) -> bool {
        matches!(self, Control::Untrained(_))
    }
}

/// Everything that steers the controller. The paper gives no numbers for
/// these; the defaults are ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgmarlConfig {
    pub variant: Variant,
    /// Lexicographic tolerance, a fraction of each objective's spread: at
    /// each objective, candidates within `delta_lex × (best − worst)` of the
    /// best stay in (default 0.25: with scores spread evenly each step keeps
    /// about the best quarter, so at the built-ins' 50 nodes all three
    /// objectives take part before the tie-break; see
    /// [`lexicographic_select`]).
    pub delta_lex: f32,
    /// The least tolerance of each selection step in score units,
    /// `[fault tolerance, utilisation, cost]`: a step keeps every candidate
    /// within `max(delta_lex × spread, score_tolerance[o])` of the best.
    /// None (the default): each head's held-out RMSE as the checkpoint
    /// records it (`training.validation.heads.rmse`, measured by `schedlab
    /// train` on the validation split), so the selection never decides on a
    /// score difference smaller than the head's own error; the controls run
    /// with the tolerance of the checkpoint they stand beside. A checkpoint
    /// that records none (trained before it was measured, or hand-made)
    /// selects on the spread alone, as `[0, 0, 0]` does.
    pub score_tolerance: Option<[f32; 3]>,
    /// `agmarl-linear`'s weights of `[fault tolerance, utilisation, cost]`
    /// (default equal thirds: no objective favoured).
    pub linear_weights: [f32; 3],
    pub stress: StressConfig,
    pub restraint: RestraintConfig,
    /// Whether a pod no node takes goes to kube-scheduler's DefaultPreemption
    /// PostFilter, as it does under every kube-scheduler profile (default
    /// true: the framework scheduler the method would run in preempts, so
    /// time to bind compares placement policies, not the PostFilter).
    pub preemption: bool,
    /// Which nodes a decision scores. None (the default, the paper's): every
    /// feasible node, each node being an agent. Otherwise kube-scheduler's
    /// `percentageOfNodesToScore`: from a start index that rotates across
    /// decisions, the filters stop once `numFeasibleNodesToFind` nodes pass
    /// (0: the adaptive `50 − nodes/125` percent, at least 5%; 1–100: that
    /// percent; never fewer than 100 nodes, every node below 100). The
    /// graph still reads every node; only the candidates are sampled.
    pub percentage_of_nodes_to_score: Option<u32>,
}

impl Default for AgmarlConfig {
    fn default() -> AgmarlConfig {
        AgmarlConfig {
            variant: Variant::Full,
            delta_lex: 0.25,
            score_tolerance: None,
            linear_weights: [1.0 / 3.0; 3],
            stress: StressConfig::default(),
            restraint: RestraintConfig::default(),
            preemption: true,
            percentage_of_nodes_to_score: None,
        }
    }
}

/// An [`AgmarlConfig`] that cannot work as documented.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgmarlConfigError {
    #[error("delta_lex must be in [0, 1] (a fraction of each objective's spread), got {0}")]
    DeltaLex(f32),
    #[error("score_tolerance must be in [0, 1] (score units), got {0:?}")]
    ScoreTolerance([f32; 3]),
    #[error("linear_weights must be finite and >= 0, got {0:?}")]
    LinearWeights([f32; 3]),
    #[error("percentage_of_nodes_to_score must be in 0..=100 (0: adaptive, as kube-scheduler), got {0}")]
    PercentageOfNodesToScore(u32),
    #[error(transparent)]
    Stress(#[from] StressConfigError),
    #[error(transparent)]
    Restraint(#[from] RestraintConfigError),
}

impl AgmarlConfig {
    /// Checks the documented constraints (the scheduler itself never panics
    /// on a config that fails them; see the selection functions for how
    /// out-of-range values are treated).
    pub fn validate(&self) -> Result<(), AgmarlConfigError> {
        if !(0.0..=1.0).contains(&self.delta_lex) {
            return Err(AgmarlConfigError::DeltaLex(self.delta_lex));
        }
        if let Some(t) = self.score_tolerance
            && !t.iter().all(|x| (0.0..=1.0).contains(x))
        {
            return Err(AgmarlConfigError::ScoreTolerance(t));
        }
        if !self.linear_weights.iter().all(|w| w.is_finite() && *w >= 0.0) {
            return Err(AgmarlConfigError::LinearWeights(self.linear_weights));
        }
        if let Some(p) = self.percentage_of_nodes_to_score
            && p > 100
        {
            return Err(AgmarlConfigError::PercentageOfNodesToScore(p));
        }
        self.stress.validate()?;
        self.restraint.validate()?;
        Ok(())
    }

    /// Which nodes a decision examines
    /// ([`AgmarlConfig::percentage_of_nodes_to_score`]).
    pub fn sampling(&self) -> Sampling {
        match self.percentage_of_nodes_to_score {
            None => Sampling::Every,
            Some(0) => Sampling::Adaptive,
            Some(p) => Sampling::Percentage(p.min(100)),
        }
    }

    /// The defaults for `variant`.
    pub fn for_variant(variant: Variant) -> AgmarlConfig {
        AgmarlConfig {
            variant,
            ..AgmarlConfig::default()
        }
    }
}

/// One decision and everything training needs to learn from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub placement: Placement,
    /// what every agent saw (all nodes of the view)
    pub obs: Observation,
    /// the feasible nodes, as indices into the view's nodes (ascending)
    pub candidates: Vec<usize>,
    /// each candidate's scores `[ft, util, cost]`, after noise and clamping
    pub scores: Vec<[f32; 3]>,
    /// the chosen candidate (index into `candidates`); None when
    /// unschedulable or declined
    pub chosen: Option<usize>,
    /// for a decline, the candidate the selection had chosen (index into
    /// `candidates`): the placement restraint refused
    pub refused: Option<usize>,
    /// the stress level the decision was made under (always Calm for
    /// [`Variant::NoStress`], which ignores stress)
    pub level: StressLevel,
}

/// What one pass of the policy produced; the scheduler's buffers hold the rest.
struct Outcome {
    placement: Placement,
    chosen: Option<usize>,
    refused: Option<usize>,
    level: StressLevel,
}

/// Exploration noise: perturbs the candidates' score triples in place.
pub type Noise<'a> = &'a mut dyn FnMut(&mut [[f32; 3]]);

/// Where the controller's scores come from. One per scheduler, made once and
/// never moved on the decision path, so its size costs nothing and boxing the
/// network would only add a pointer chase to every decision.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
enum Scores {
    /// the actor network; its decision path (None when the weights could not
    /// be read) remembers node encodings across decisions
    Network { net: AgmarlNet, scorer: Option<Scorer> },
    /// the `agmarl-analytic` formulas
    Analytic,
}

/// The AGMARL-DKS policy with its score source, controller state and scratch
/// buffers (reused across decisions).
#[derive(Debug)]
pub struct AgmarlScheduler {
    scores_from: Scores,
    /// Some for the control arms, whose name it gives
    control: Option<Control>,
    config: AgmarlConfig,
    monitor: StressMonitor,
    seed: u64,
    /// DefaultPreemption's draws (see the module docs)
    rng: SimRng,
    obs: Observation,
    /// the nodes' failure domains and state rows, remembered across decisions
    observed: ObservationMemory,
    /// kube-scheduler's rotating start index, when sampling
    scan: NodeScan,
    /// the feasible nodes examined, ascending
    candidates: Vec<usize>,
    scores: Vec<[f32; 3]>,
    cands: Vec<Candidate>,
    /// every workload's fault-tolerance scores at its binds, for restraint
    baselines: Baselines,
    /// the score heads' measured RMSE, the selection's tolerance unless the
    /// config sets one
    head_error: Option<[f32; 3]>,
    /// the wait head's measured RMSE, restraint's margin beside the fault
    /// tolerance head's (None: the learned rule never declines)
    wait_error: Option<f32>,
    /// Some while training: the choice among the selection's survivors is
    /// drawn from it, and so are exploratory declines
    explore: Option<SimRng>,
    /// while exploring, the probability of declining an eligible pod at
    /// random (learned rule only)
    explore_declines: f64,
    /// None while not explaining, else the last decision's
    explanation: Option<Option<Explanation>>,
}

impl AgmarlScheduler {
    /// The policy of `config.variant` with `net`. Preemption draws from the
    /// run's `seed` (see the module docs).
    pub fn new(net: AgmarlNet, config: AgmarlConfig, seed: u64) -> AgmarlScheduler {
        // a network whose weights cannot be read scores every candidate
        // neutrally (see `run`), as a failing network always has
        let scorer = match net.weights() {
            Ok(w) => Some(Scorer::new(w)),
            Err(error) => {
                tracing::error!(%error, "agmarl network weights unreadable");
                None
            }
        };
        AgmarlScheduler::with_scores(Scores::Network { net, scorer }, None, config, seed)
    }

    /// The untrained twin of `config.variant` (`agmarl-untrained` for the
    /// full method): that variant's controller with the actor's initial
    /// weights for `init_seed` at the default sizes, exactly the network
    /// `schedlab train --variant <variant> --seed init_seed` starts from
    /// ([`crate::agmarl::train::Trainer::new`]).
    pub fn untrained(init_seed: u64, config: AgmarlConfig, seed: u64) -> crate::Result<AgmarlScheduler> {
        let net = AgmarlNet::new(&Hyper::default(), init_seed)?;
        let variant = config.variant;
        let mut s = AgmarlScheduler::new(net, config, seed);
        s.control = Some(Control::Untrained(variant));
        Ok(s)
    }

    /// The `agmarl-analytic` control: the full method's controller fed by
    /// [`crate::agmarl::analytic`]'s formulas. `config.variant` is replaced
    /// by [`Variant::Full`].
    pub fn analytic(config: AgmarlConfig, seed: u64) -> AgmarlScheduler {
        let config = AgmarlConfig {
            variant: Variant::Full,
            ..config
        };
        AgmarlScheduler::with_scores(Scores::Analytic, Some(Control::Analytic), config, seed)
    }

    fn with_scores(scores_from: Scores, control: Option<Control>, config: AgmarlConfig, seed: u64) -> AgmarlScheduler {
        let monitor = StressMonitor::new(config.stress.clone());
        AgmarlScheduler {
            scores_from,
            control,
            config,
            monitor,
            seed,
            rng: stream(seed, &[purpose::SCHEDULER]),
            obs: Observation::default(),
            observed: ObservationMemory::default(),
            scan: NodeScan::new(),
            candidates: Vec::new(),
            scores: Vec::new(),
            cands: Vec::new(),
            baselines: Baselines::default(),
            explanation: None,
            head_error: None,
            wait_error: None,
            explore: None,
            explore_declines: 0.0,
        }
    }

    /// The measured RMSE of the score heads `[ft, util, cost]` (from a
    /// checkpoint's sidecar, [`crate::agmarl::CheckpointMeta::head_rmse`]):
    /// the selection's tolerance in score units unless
    /// [`AgmarlConfig::score_tolerance`] sets one. None: no floor.
    pub fn with_head_error(mut self, rmse: Option<[f32; 3]>) -> AgmarlScheduler {
        self.head_error = rmse.map(|r| r.map(|x| if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 }));
        self
    }

    /// The heads' measured errors (from a checkpoint's sidecar,
    /// [`crate::agmarl::CheckpointMeta::measured_error`]): the selection's
    /// tolerance as [`Self::with_head_error`], and the wait head's error,
    /// the learned restraint's margin beside the fault-tolerance head's.
    pub fn with_measured_error(mut self, error: Option<MeasuredError>) -> AgmarlScheduler {
        self = self.with_head_error(error.map(|e| e.heads));
        self.set_wait_error(error.and_then(|e| e.wait));
        self
    }

    /// The wait head's error in force (see [`Self::with_measured_error`]).
    pub fn set_wait_error(&mut self, rmse: Option<f32>) {
        self.wait_error = rmse.filter(|x| x.is_finite()).map(|x| x.clamp(0.0, 1.0));
    }

    /// The selection's tolerance: `delta_lex` of each objective's spread,
    /// at least the score tolerance in force.
    pub fn tolerance(&self) -> Tolerance {
        Tolerance {
            delta_lex: self.config.delta_lex,
            floor: self.config.score_tolerance.or(self.head_error).unwrap_or([0.0; 3]),
        }
    }

    /// Training's exploration of choices: with Some, every lexicographic
    /// selection picks uniformly at random among the candidates the filter
    /// keeps (instead of their tie-break), drawing from `rng`; None: the
    /// deterministic selection. The `agmarl-linear` ablation keeps its
    /// weighted choice.
    pub fn explore_survivors(&mut self, rng: Option<SimRng>) {
        self.explore = rng;
    }

    /// While exploring ([`Self::explore_survivors`]), decline each pod the
    /// learned restraint may decline ([`eligible`]) with probability `p`
    /// (clamped to [0, 1]), so the wait head learns from declines its own
    /// rule would not make.
    pub fn explore_declines(&mut self, p: f64) {
        self.explore_declines = if p.is_finite() { p.clamp(0.0, 1.0) } else { 0.0 };
    }

    /// The restraint rule in force: the configured one, but always the
    /// threshold for `agmarl-analytic`, which has no wait head.
    pub fn restraint_rule(&self) -> RestraintRule {
        match self.scores_from {
            Scores::Analytic => RestraintRule::Threshold,
            Scores::Network { .. } => self.config.restraint.rule,
        }
    }

    /// The network the scores come from (None for `agmarl-analytic`).
    pub fn net(&self) -> Option<&AgmarlNet> {
        match &self.scores_from {
            Scores::Network { net, .. } => Some(net),
            Scores::Analytic => None,
        }
    }

    /// The control this is, if it is one.
    pub fn control(&self) -> Option<Control> {
        self.control
    }

    /// What the last scored decision recomputed and remembered of the node
    /// encodings (nothing for `agmarl-analytic`).
    pub fn reuse(&self) -> Reuse {
        match &self.scores_from {
            Scores::Network {
                scorer: Some(scorer), ..
            } => scorer.reuse(),
            _ => Reuse::default(),
        }
    }

    pub fn config(&self) -> &AgmarlConfig {
        &self.config
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The controller's current stress level.
    pub fn level(&self) -> StressLevel {
        self.monitor.level()
    }

    /// The stress level the next decision starts from, as the variant uses
    /// it (always Calm for [`Variant::NoStress`]); for monitoring.
    pub fn decision_level(&self) -> StressLevel {
        match self.config.variant {
            Variant::NoStress => StressLevel::Calm,
            _ => self.monitor.level(),
        }
    }

    /// The objective order selection follows at [`Self::decision_level`],
    /// first objective first; None for [`Variant::Linear`], which weighs the
    /// objectives instead of ordering them. For monitoring.
    pub fn objective_order(&self) -> Option<[Objective; 3]> {
        match self.config.variant {
            Variant::Linear => None,
            _ => Some(objective_order(self.decision_level())),
        }
    }

    /// Back to a calm controller without baselines, e.g. at the start of an episode.
    pub fn reset(&mut self) {
        self.monitor.reset();
        self.baselines.clear();
    }

    /// One decision. `noise` perturbs the candidates' scores before
    /// restraint and selection (training exploration); the scores are then
    /// clamped to [0, 1].
    pub fn decide(&mut self, pod: &PendingPod<'_>, view: &ClusterView<'_>, noise: Option<Noise<'_>>) -> Decision {
        let out = self.run(pod, view, noise, true);
        let feasible = !matches!(
            out.placement,
            Placement::Unschedulable { .. } | Placement::Preempt { .. }
        );
        Decision {
            placement: out.placement,
            obs: std::mem::take(&mut self.obs),
            candidates: if feasible { self.candidates.clone() } else { Vec::new() },
            scores: if feasible { self.scores.clone() } else { Vec::new() },
            chosen: out.chosen,
            refused: out.refused,
            level: out.level,
        }
    }

    fn run(
        &mut self,
        pod: &PendingPod<'_>,
        view: &ClusterView<'_>,
        noise: Option<Noise<'_>>,
        always_observe: bool,
    ) -> Outcome {
        let monitored = self.monitor.update(&signals(view));
        let level = match self.config.variant {
            Variant::NoStress => StressLevel::Calm,
            _ => monitored,
        };
        let nodes = view.nodes;
        let mut diagnosis = Diagnosis::new();
        // the default profile's filters, with the room of nominated pods taken
        // as kube-scheduler takes it (`RunFilterPluginsWithNominatedPods`)
        let mut filter = filter_chain(crate::default::PROFILE);
        let nominated = Nominated::for_pod(pod, view);
        let sampling = self.config.sampling();
        self.scan.find_with(
            pod.spec,
            nodes,
            sampling.limit(nodes.len()),
            &mut self.candidates,
            &mut diagnosis,
            |spec, node| nominated.filter(&mut filter, spec, node),
        );
        if sampling != Sampling::Every {
            // a scan that wrapped around lists the nodes after the start
            // first; candidates are kept in node order (the tie-break's)
            self.candidates.sort_unstable();
        }
        if always_observe || !self.candidates.is_empty() {
            observe_into(pod, view, &mut self.observed, &mut self.obs);
        }
        if self.candidates.is_empty() {
            if self.explanation.is_some() {
                self.explain_last(level, 0, None, Steps::default(), None);
            }
            let reason = diagnosis.message(nodes.len());
            if self.config.preemption
                && let Some((node, victims)) = preempt(pod, view, &nominated, &mut filter, &mut self.rng)
            {
                tracing::trace!(pod = pod.id.0, node = node.0, victims = victims.len(), "preempt");
                return Outcome {
                    placement: Placement::Preempt {
                        node,
                        victims: victims.iter().map(|v| v.id).collect(),
                        reason: reason.into(),
                    },
                    chosen: None,
                    refused: None,
                    level,
                };
            }
            tracing::trace!(pod = pod.id.0, %reason, "unschedulable");
            return Outcome {
                placement: Placement::Unschedulable { reason: reason.into() },
                chosen: None,
                refused: None,
                level,
            };
        }

        let use_gnn = self.config.variant.uses_gnn();
        let scored = match &mut self.scores_from {
            Scores::Network {
                scorer: Some(scorer), ..
            } => scorer.scores_into(&self.obs, &self.candidates, use_gnn, &mut self.scores),
            Scores::Network { scorer: None, .. } => Err(crate::agmarl::error::AgmarlError::Hyper(
                "network weights unreadable".into(),
            )),
            Scores::Analytic => {
                analytic::scores_into(&self.obs, &self.candidates, &mut self.scores);
                Ok(())
            }
        };
        match scored {
            Ok(()) => {}
            Err(error) => {
                // every candidate is feasible: a broken network must not keep
                // pods pending, so fall back to neutral scores (the
                // deterministic tie-break then picks the lowest node id)
                tracing::error!(%error, "agmarl network failed; scoring every candidate 0.5");
                self.scores.clear();
                self.scores.resize(self.candidates.len(), [0.5; 3]);
            }
        }
        if let Some(noise) = noise {
            noise(&mut self.scores);
            for s in self.scores.iter_mut().flatten() {
                *s = s.clamp(0.0, 1.0);
            }
        }
        self.cands.clear();
        self.cands
            .extend(self.candidates.iter().zip(&self.scores).map(|(&i, &scores)| Candidate {
                node: nodes[i].id,
                scores,
            }));

        let mut kept = Steps::default();
        // the same selection either way; explaining only counts its steps
        let trace = self.explanation.is_some().then_some(&mut kept);
        let tolerance = self.tolerance();
        let chosen = match (self.config.variant, &mut self.explore) {
            (Variant::Linear, _) => weighted_select_traced(&self.cands, self.config.linear_weights, trace),
            (_, Some(rng)) => match lexicographic_survivors(&self.cands, &objective_order(level), tolerance, trace) {
                Some(Survivors::Kept(kept)) => Some(kept[rng.random_range(0..kept.len())]),
                Some(Survivors::Fallback(i)) => Some(i),
                None => None,
            },
            (_, None) => lexicographic_select_traced(&self.cands, &objective_order(level), tolerance, trace),
        };
        // cands is not empty, so a selection always exists
        let chosen = chosen.unwrap_or(0);
        let predicted = self.cands[chosen].score(Objective::FaultTolerance);
        let workload = pod.slot.workload;
        if let Some(decline) = self.restrain(level, pod, predicted, use_gnn) {
            if self.explanation.is_some() {
                self.explain_last(level, self.cands.len(), None, kept, Some(decline));
            }
            tracing::trace!(pod = pod.id.0, %level, "declined");
            return Outcome {
                placement: Placement::Decline {
                    reason: Cow::Borrowed(match decline.by {
                        DeclineBy::Learned => LEARNED_REASON,
                        DeclineBy::Explored => EXPLORED_REASON,
                        DeclineBy::Threshold => RESTRAINT_REASON,
                    }),
                },
                chosen: None,
                refused: Some(chosen),
                level,
            };
        }
        self.baselines.record(workload, predicted);
        if self.explanation.is_some() {
            self.explain_last(level, self.cands.len(), Some(chosen), kept, None);
        }
        let node = self.cands[chosen].node;
        tracing::trace!(pod = pod.id.0, node = node.0, %level, candidates = self.cands.len(), "bind");
        Outcome {
            placement: Placement::Bind(node),
            chosen: Some(chosen),
            refused: None,
            level,
        }
    }
}

impl AgmarlScheduler {
    /// Strategic restraint on the pod whose chosen node scores `predicted`
    /// on fault tolerance, with the scorer's last scoring of `self.obs`:
    /// Some when the pod is declined, and why.
    fn restrain(
        &mut self,
        level: StressLevel,
        pod: &PendingPod<'_>,
        predicted: f32,
        use_gnn: bool,
    ) -> Option<DeclineTrace> {
        let cfg = &self.config.restraint;
        let baseline = self.baselines.get(pod.slot.workload).copied();
        let trace = |by, wait: Option<f32>, bar: f32, baseline: Baseline| DeclineTrace {
            by,
            wait,
            instability: instability(&pod.history),
            predicted_fault_tolerance: predicted,
            workload_baseline: baseline.mean(),
            workload_spread: baseline.spread(),
            workload_binds: baseline.binds(),
            bar,
        };
        match self.restraint_rule() {
            RestraintRule::Threshold => should_decline(level, pod, predicted, baseline.as_ref(), cfg)
                .map(|why| trace(DeclineBy::Threshold, None, why.bar, why.baseline)),
            RestraintRule::Learned => {
                if !eligible(level, pod, cfg) {
                    return None;
                }
                let baseline = baseline.unwrap_or_default();
                if self.explore_declines > 0.0
                    && let Some(rng) = &mut self.explore
                    && rng.random_bool(self.explore_declines)
                {
                    return Some(trace(DeclineBy::Explored, None, predicted, baseline));
                }
                // the wait head is asked only where its answer could decline
                let ft_error = self.tolerance().floor[Objective::FaultTolerance as usize];
                let margin = decline_margin(self.wait_error, ft_error)?;
                if !wait_could_win(predicted, margin) {
                    return None;
                }
                let Scores::Network {
                    scorer: Some(scorer), ..
                } = &mut self.scores_from
                else {
                    return None;
                };
                let wait = match scorer.wait(&self.obs, use_gnn) {
                    Ok(wait) => wait,
                    Err(error) => {
                        tracing::error!(%error, "agmarl wait head failed; not declining");
                        return None;
                    }
                };
                learned_decline(wait, predicted, self.wait_error, ft_error)
                    .map(|w| trace(DeclineBy::Learned, Some(w.wait), w.wait - w.margin, baseline))
            }
        }
    }

    /// Records the explanation of the decision just made from the
    /// controller's state: `candidates` feasible nodes, and when there are
    /// any, `self.cands` holds them scored and `chosen` indexes them.
    fn explain_last(
        &mut self,
        level: StressLevel,
        candidates: usize,
        chosen: Option<usize>,
        kept: Steps,
        decline: Option<DeclineTrace>,
    ) {
        let basis = match self.config.variant {
            Variant::NoStress => StressBasis::Observed,
            _ => StressBasis::InForce,
        };
        let selection = match self.config.variant {
            Variant::Linear => Selection::Weighted(self.config.linear_weights),
            _ => {
                let tolerance = self.tolerance();
                Selection::Lexicographic {
                    order: objective_order(level),
                    delta_lex: tolerance.delta_lex,
                    floor: tolerance.floor,
                }
            }
        };
        let choice = |i: usize| {
            self.cands.get(i).map(|c| NodeChoice {
                node: c.node,
                score: NodeScore::Objectives(c.scores),
            })
        };
        let explanation = Explanation {
            chosen: chosen.and_then(choice),
            runner_up: chosen.and_then(|c| self.runner_up(level, c)).and_then(choice),
            stress: Some(StressReading {
                score: self.monitor.last_score(),
                level: self.monitor.level(),
                basis,
            }),
            agmarl: Some(AgmarlTrace {
                level,
                selection,
                kept,
                decline,
            }),
            ..Explanation::of_candidates(candidates)
        };
        self.explanation = Some(Some(explanation));
    }

    /// The candidate (index into `self.cands`) the same selection picks
    /// once `chosen` is left out; only computed while explaining.
    fn runner_up(&self, level: StressLevel, chosen: usize) -> Option<usize> {
        let others: Vec<Candidate> = self
            .cands
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != chosen)
            .map(|(_, c)| *c)
            .collect();
        let pick = match self.config.variant {
            Variant::Linear => weighted_select(&others, self.config.linear_weights),
            _ => lexicographic_select_traced(&others, &objective_order(level), self.tolerance(), None),
        }?;
        Some(if pick < chosen { pick } else { pick + 1 })
    }
}

impl Scheduler for AgmarlScheduler {
    fn name(&self) -> &str {
        match self.control {
            Some(control) => control.arm_name(),
            None => self.config.variant.arm_name(),
        }
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        self.run(pod, cluster, None, false).placement
    }

    fn set_explain(&mut self, on: bool) {
        self.explanation = on.then_some(None);
    }

    fn explanation(&self) -> Option<Explanation> {
        self.explanation.flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::features::observe;
    use crate::agmarl::network::Hyper;
    use crate::agmarl::scoring::Scorer;
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::rng::stream;
    use schedlab_core::testing::PodSpecChanges as _;
    use schedlab_core::testing::pod;

    #[test]
    fn variants_round_trip_their_arm_names() {
        for v in Variant::ALL {
            assert_eq!(Variant::from_arm_name(v.arm_name()), Some(v));
        }
        assert_eq!(Variant::from_arm_name("default"), None);
        assert!(!Variant::NoGnn.uses_gnn() && Variant::Full.uses_gnn());
    }

    #[test]
    fn config_reads_partial_json_with_defaults() {
        let cfg: AgmarlConfig = serde_json::from_str(r#"{"variant": "agmarl-linear"}"#).unwrap();
        assert_eq!(cfg.variant, Variant::Linear);
        assert_eq!(cfg.delta_lex, AgmarlConfig::default().delta_lex);
        assert!(serde_json::from_str::<AgmarlConfig>(r#"{"delta": 1}"#).is_err());
        let nognn: AgmarlConfig = serde_json::from_str(r#"{"variant": "nognn"}"#).unwrap();
        assert_eq!(nognn.variant, Variant::NoGnn);
        assert_eq!(
            serde_json::to_string(&Variant::NoStress).unwrap(),
            r#""agmarl-nostress""#
        );
    }

    #[test]
    fn config_validation() {
        for v in Variant::ALL {
            AgmarlConfig::for_variant(v).validate().unwrap();
        }
        let bad = |f: fn(&mut AgmarlConfig)| {
            let mut c = AgmarlConfig::default();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert!(matches!(bad(|c| c.delta_lex = -0.1), AgmarlConfigError::DeltaLex(_)));
        assert!(matches!(bad(|c| c.delta_lex = 1.5), AgmarlConfigError::DeltaLex(_)));
        assert!(matches!(
            bad(|c| c.delta_lex = f32::NAN),
            AgmarlConfigError::DeltaLex(_)
        ));
        assert!(matches!(
            bad(|c| c.linear_weights[1] = f32::INFINITY),
            AgmarlConfigError::LinearWeights(_)
        ));
        assert!(matches!(
            bad(|c| c.stress.enter_stressed = 2.0),
            AgmarlConfigError::Stress(_)
        ));
        assert!(matches!(
            bad(|c| c.restraint.risk_margin = -1.0),
            AgmarlConfigError::Restraint(_)
        ));
        let over = bad(|c| c.percentage_of_nodes_to_score = Some(101));
        assert_eq!(over, AgmarlConfigError::PercentageOfNodesToScore(101));
        assert!(over.to_string().contains("percentage_of_nodes_to_score") && over.to_string().contains("101"));
        for (p, sampling) in [
            (None, Sampling::Every),
            (Some(0), Sampling::Adaptive),
            (Some(100), Sampling::Percentage(100)),
        ] {
            let c = AgmarlConfig {
                percentage_of_nodes_to_score: p,
                ..AgmarlConfig::default()
            };
            c.validate().unwrap();
            assert_eq!(c.sampling(), sampling);
        }
    }

    #[test]
    fn every_feasible_node_is_a_candidate_unless_sampling_is_asked_for() {
        // 300 nodes, every third one too small for the pod: 200 feasible
        let nodes = cluster((0..300).map(|i| {
            let n = node(&format!("n{i}"));
            if i % 3 == 0 { n.cpu("1") } else { n.cpu("8") }
        }));
        let spec = pod(2000, 0);
        let v = view(&nodes);
        let feasible: Vec<usize> = (0..300).filter(|i| i % 3 != 0).collect();
        let mut every = AgmarlScheduler::analytic(AgmarlConfig::default(), 1);
        for _ in 0..2 {
            assert_eq!(every.decide(&pending(&spec), &v, None).candidates, feasible);
        }
        // kube-scheduler's rule: 300 nodes → max(300 × 10% = 30, 100) = 100
        // feasible nodes, from a start index that moves on by the nodes examined
        let sampled_config = AgmarlConfig {
            percentage_of_nodes_to_score: Some(10),
            ..AgmarlConfig::default()
        };
        let mut sampled = AgmarlScheduler::analytic(sampled_config, 1);
        let first = sampled.decide(&pending(&spec), &v, None).candidates;
        assert_eq!(first, feasible[..100]);
        // the first scan examined nodes 0..=149 (the 100th feasible is 149)
        let second = sampled.decide(&pending(&spec), &v, None).candidates;
        assert_eq!(second.len(), 100);
        assert!(second.is_sorted(), "{second:?}");
        let mut want: Vec<usize> = feasible.iter().copied().filter(|&i| i >= 150).collect();
        want.extend(feasible.iter().copied().filter(|&i| i < 150).take(100 - want.len()));
        want.sort_unstable();
        assert_eq!(second, want);
        // under 100 nodes every node is examined
        let small = cluster((0..50).map(|i| node(&format!("s{i}")).cpu("8")));
        let got = sampled.decide(&pending(&spec), &view(&small), None).candidates;
        assert_eq!(got, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn monitoring_accessors_follow_the_variant() {
        let net = || AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let full = AgmarlScheduler::new(net(), AgmarlConfig::default(), 0);
        assert_eq!(full.decision_level(), StressLevel::Calm);
        assert_eq!(full.objective_order(), Some(objective_order(StressLevel::Calm)));
        let linear = AgmarlScheduler::new(net(), AgmarlConfig::for_variant(Variant::Linear), 0);
        assert_eq!(linear.objective_order(), None);
        let nostress = AgmarlScheduler::new(net(), AgmarlConfig::for_variant(Variant::NoStress), 0);
        assert_eq!(nostress.decision_level(), StressLevel::Calm);
    }

    /// `scores` for the candidates in order, in place of the network's.
    fn fixed(scores: Vec<[f32; 3]>) -> impl FnMut(&mut [[f32; 3]]) {
        move |out: &mut [[f32; 3]]| out.copy_from_slice(&scores)
    }

    #[test]
    fn explains_the_lexicographic_steps_the_choice_and_the_runner_up() {
        let nodes = cluster([node("safe"), node("packed"), node("cheap")]);
        let spec = pod(1000, 0);
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let mut s = AgmarlScheduler::new(net, AgmarlConfig::default(), 0);
        assert_eq!(s.explanation(), None, "off by default");
        s.set_explain(true);
        let scores = vec![[0.95, 0.30, 0.20], [0.40, 0.90, 0.60], [0.30, 0.50, 0.95]];
        let d = s.decide(&pending(&spec), &view(&nodes), Some(&mut fixed(scores.clone())));
        assert_eq!(d.placement, Placement::Bind(schedlab_core::NodeId(2)));
        let e = s.explanation().unwrap();
        assert_eq!(e.candidates, 3);
        let choice = |node: u32, i: usize| NodeChoice {
            node: schedlab_core::NodeId(node),
            score: NodeScore::Objectives(scores[i]),
        };
        assert_eq!(e.chosen, Some(choice(2, 2)));
        // without the cheapest, cost first picks the packed node
        assert_eq!(e.runner_up, Some(choice(1, 1)));
        let stress = e.stress.unwrap();
        assert_eq!((stress.level, stress.basis), (StressLevel::Calm, StressBasis::InForce));
        let trace = e.agmarl.unwrap();
        assert_eq!(trace.level, StressLevel::Calm);
        assert_eq!(
            trace.selection,
            Selection::Lexicographic {
                order: objective_order(StressLevel::Calm),
                delta_lex: AgmarlConfig::default().delta_lex,
                floor: [0.0; 3],
            }
        );
        // cost keeps only the cheap node (0.95; the bar is 0.95 − 0.25 × 0.75)
        assert_eq!(trace.kept.as_slice(), &[1, 1, 1]);
        assert_eq!(trace.decline, None);

        // the same decision unexplained
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let mut plain = AgmarlScheduler::new(net, AgmarlConfig::default(), 0);
        let again = plain.decide(&pending(&spec), &view(&nodes), Some(&mut fixed(scores)));
        assert_eq!(again.placement, d.placement);
        assert_eq!(plain.explanation(), None);
    }

    #[test]
    fn the_heads_error_keeps_near_ties_together_and_training_draws_among_them() {
        let nodes = cluster([node("a"), node("b"), node("c")]);
        let spec = pod(1000, 0);
        // calm: cost first; nodes a and b differ in cost by 0.02, c is far behind
        let scores = vec![[0.5, 0.2, 0.92], [0.5, 0.8, 0.90], [0.5, 0.9, 0.40]];
        let decide = |s: &mut AgmarlScheduler| {
            s.decide(&pending(&spec), &view(&nodes), Some(&mut fixed(scores.clone())))
                .placement
        };
        let net = || AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let bind = |n: u32| Placement::Bind(schedlab_core::NodeId(n));
        let spread_only = AgmarlConfig {
            delta_lex: 0.0,
            ..AgmarlConfig::default()
        };
        // no measured error: the cheaper node wins by 0.02
        let mut plain = AgmarlScheduler::new(net(), spread_only.clone(), 0);
        assert_eq!(decide(&mut plain), bind(0));
        // a cost head with RMSE 0.05 cannot tell a from b: utilisation decides
        let mut measured = AgmarlScheduler::new(net(), spread_only.clone(), 0).with_head_error(Some([0.3, 0.1, 0.05]));
        assert_eq!(measured.tolerance().floor, [0.3, 0.1, 0.05]);
        assert_eq!(decide(&mut measured), bind(1));
        // the config's tolerance overrides the checkpoint's
        let mut fixed_tol = AgmarlScheduler::new(
            net(),
            AgmarlConfig {
                score_tolerance: Some([0.0; 3]),
                ..spread_only.clone()
            },
            0,
        )
        .with_head_error(Some([0.3, 0.1, 0.05]));
        assert_eq!(decide(&mut fixed_tol), bind(0));
        // exploring with a wide utilisation tolerance: a and b survive, the
        // draw picks among them (never c), the same way for the same stream
        let draws = |seed: u64| {
            let mut s = AgmarlScheduler::new(net(), spread_only.clone(), 0).with_head_error(Some([0.3, 1.0, 0.05]));
            s.explore_survivors(Some(stream(seed, &[purpose::TRAINING])));
            (0..40).map(|_| decide(&mut s)).collect::<Vec<_>>()
        };
        let first = draws(3);
        assert!(first.contains(&bind(0)) && first.contains(&bind(1)), "{first:?}");
        assert!(!first.contains(&bind(2)));
        assert_eq!(first, draws(3));
        // a tolerance outside [0, 1] is refused
        let bad = AgmarlConfig {
            score_tolerance: Some([0.1, 1.5, 0.0]),
            ..AgmarlConfig::default()
        };
        assert!(matches!(bad.validate(), Err(AgmarlConfigError::ScoreTolerance(_))));
    }

    #[test]
    fn the_learned_restraint_declines_when_waiting_beats_the_node_by_more_than_the_error() {
        let nodes = cluster([node("a"), node("b")]);
        let spec = pod(1000, 0);
        let p = pending(&spec);
        let mut config = AgmarlConfig::default();
        config.stress.enter_elevated = 0.0;
        config.stress.enter_stressed = 0.0;
        config.stress.exit_elevated = 0.0;
        config.stress.exit_stressed = 0.0;
        let net = || AgmarlNet::new(&Hyper::default(), 0).unwrap();
        // the untrained wait head predicts about 0.5 for this pod
        let wait = {
            let mut s = AgmarlScheduler::new(net(), config.clone(), 0);
            s.decide(&p, &view(&nodes), None);
            let obs = observe(&p, &view(&nodes));
            Scorer::new(net().weights().unwrap()).wait(&obs, true).unwrap()
        };
        let measured = |wait: Option<f32>| {
            Some(MeasuredError {
                heads: [0.1, 0.1, 0.1],
                wait,
            })
        };
        let decide = |s: &mut AgmarlScheduler, ft: f32, p: &PendingPod<'_>| {
            s.decide(p, &view(&nodes), Some(&mut fixed(vec![[ft, 0.5, 0.5], [ft, 0.5, 0.5]])))
        };
        let mut s = AgmarlScheduler::new(net(), config.clone(), 0).with_measured_error(measured(Some(0.1)));
        s.set_explain(true);
        // the node is worth far less than waiting: declined, the margin √(0.1² + 0.1²)
        let d = decide(&mut s, 0.0, &p);
        assert!(matches!(d.placement, Placement::Decline { .. }), "{:?}", d.placement);
        let decline = s.explanation().unwrap().agmarl.unwrap().decline.unwrap();
        assert_eq!(decline.by, DeclineBy::Learned);
        assert!((decline.wait.unwrap() - wait).abs() < 1e-5);
        assert!((decline.bar - (wait - 0.02f32.sqrt())).abs() < 1e-5, "{decline:?}");
        // within the error of waiting: placed
        assert!(matches!(decide(&mut s, wait - 0.1, &p).placement, Placement::Bind(_)));
        // a critical pod, or no measured wait error: placed
        let critical = pod(1000, 0).priority(config.restraint.critical_priority);
        assert!(matches!(
            decide(&mut s, 0.0, &pending(&critical)).placement,
            Placement::Bind(_)
        ));
        let mut unmeasured = AgmarlScheduler::new(net(), config.clone(), 0).with_measured_error(measured(None));
        assert!(matches!(decide(&mut unmeasured, 0.0, &p).placement, Placement::Bind(_)));
        // exploring declines at random, even where the rule would not
        let mut exploring = AgmarlScheduler::new(net(), config.clone(), 0);
        exploring.explore_survivors(Some(stream(1, &[2])));
        exploring.explore_declines(1.0);
        exploring.set_explain(true);
        assert!(matches!(
            decide(&mut exploring, 1.0, &p).placement,
            Placement::Decline { .. }
        ));
        let by = exploring.explanation().unwrap().agmarl.unwrap().decline.unwrap().by;
        assert_eq!(by, DeclineBy::Explored);
        // the analytic control runs the threshold rule whatever the config says
        assert_eq!(
            AgmarlScheduler::analytic(config.clone(), 0).restraint_rule(),
            RestraintRule::Threshold
        );
        assert_eq!(s.restraint_rule(), RestraintRule::Learned);
    }

    #[test]
    fn explains_a_decline_and_an_unschedulable_pod() {
        let nodes = cluster([node("a"), node("b")]);
        let spec = pod(1000, 0);
        let mut p = pending(&spec);
        p.history = schedlab_core::view::WorkloadHistory {
            pods: 10,
            restarts: 4,
            oom_kills: 0,
            failures: 4,
        };
        // every score is stressed
        let mut config = AgmarlConfig::default();
        config.stress.enter_elevated = 0.0;
        config.stress.enter_stressed = 0.0;
        config.stress.exit_elevated = 0.0;
        config.stress.exit_stressed = 0.0;
        config.restraint.rule = RestraintRule::Threshold;
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let mut s = AgmarlScheduler::new(net, config, 0);
        s.set_explain(true);
        // the workload's pods usually get a node scoring 0.9: no decline
        // before its baseline has five binds, nor at its usual score
        for _ in 0..6 {
            let d = s.decide(
                &p,
                &view(&nodes),
                Some(&mut fixed(vec![[0.9, 0.5, 0.5], [0.8, 0.5, 0.5]])),
            );
            assert_eq!(d.placement, Placement::Bind(schedlab_core::NodeId(0)));
            assert_eq!(d.refused, None);
        }
        // now its best node scores 0.45: far below the usual
        let d = s.decide(
            &p,
            &view(&nodes),
            Some(&mut fixed(vec![[0.3, 0.9, 0.9], [0.45, 0.2, 0.2]])),
        );
        assert!(matches!(d.placement, Placement::Decline { .. }), "{:?}", d.placement);
        assert_eq!((d.chosen, d.refused), (None, Some(1)));
        let e = s.explanation().unwrap();
        assert_eq!((e.candidates, e.chosen, e.runner_up), (2, None, None));
        let trace = e.agmarl.unwrap();
        assert_eq!(trace.level, StressLevel::Stressed);
        // the selection ran: fault tolerance first kept node b
        assert_eq!(trace.kept.as_slice(), &[1, 1, 1]);
        let decline = trace.decline.expect("a decline trace");
        assert_eq!((decline.by, decline.wait), (DeclineBy::Threshold, None));
        assert_eq!(
            (
                decline.instability,
                decline.predicted_fault_tolerance,
                decline.workload_binds
            ),
            (0.8, 0.45, 6)
        );
        assert!((decline.workload_baseline - 0.9).abs() < 1e-6);
        assert_eq!(decline.workload_spread, 0.0);
        // a flat baseline's bar is one point below it
        assert!((decline.bar - 0.89).abs() < 1e-6, "{decline:?}");
        // another workload has no baseline yet: placed
        let mut other = p;
        other.slot.workload = schedlab_core::pod::WorkloadId(99);
        let d = s.decide(
            &other,
            &view(&nodes),
            Some(&mut fixed(vec![[0.3, 0.9, 0.9], [0.45, 0.2, 0.2]])),
        );
        assert_eq!(d.placement, Placement::Bind(schedlab_core::NodeId(1)));

        let big = pod(64_000, 0);
        s.decide(&pending(&big), &view(&nodes), None);
        let e = s.explanation().unwrap();
        assert_eq!((e.candidates, e.chosen), (0, None));
        assert_eq!(e.agmarl.unwrap().decline, None);
    }

    #[test]
    fn nostress_reports_its_stress_as_observed_and_linear_its_weights() {
        let nodes = cluster([node("a"), node("b")]);
        let spec = pod(1000, 0);
        for (variant, basis) in [
            (Variant::NoStress, StressBasis::Observed),
            (Variant::Linear, StressBasis::InForce),
        ] {
            let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
            let mut s = AgmarlScheduler::new(net, AgmarlConfig::for_variant(variant), 0);
            s.set_explain(true);
            s.schedule(&pending(&spec), &view(&nodes));
            let e = s.explanation().unwrap();
            assert_eq!(e.stress.unwrap().basis, basis);
            let trace = e.agmarl.unwrap();
            match variant {
                Variant::Linear => {
                    assert_eq!(trace.selection, Selection::Weighted([1.0 / 3.0; 3]));
                    assert_eq!(trace.kept.as_slice().len(), 1);
                }
                _ => assert_eq!(trace.kept.as_slice().len(), 3),
            }
            assert!(e.runner_up.is_some() && e.runner_up != e.chosen, "{e:?}");
        }
    }

    /// Every agmarl arm's policy (the variants with an untrained network,
    /// and both controls) drawing from `seed`, with `config`'s settings.
    fn every_agmarl_policy(config: &AgmarlConfig, seed: u64) -> Vec<AgmarlScheduler> {
        let mut all: Vec<AgmarlScheduler> = Variant::ALL
            .into_iter()
            .map(|variant| {
                let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
                AgmarlScheduler::new(
                    net,
                    AgmarlConfig {
                        variant,
                        ..config.clone()
                    },
                    seed,
                )
            })
            .collect();
        all.push(AgmarlScheduler::untrained(1000, config.clone(), seed).unwrap());
        all.push(AgmarlScheduler::analytic(config.clone(), seed));
        all
    }

    /// The node and victims of a Preempt, None for anything else.
    fn preempted(placement: &Placement) -> Option<(schedlab_core::NodeId, Vec<schedlab_core::pod::PodId>)> {
        match placement {
            Placement::Preempt { node, victims, .. } => Some((*node, victims.clone())),
            _ => None,
        }
    }

    #[test]
    fn preemption_chooses_what_default_chooses() {
        use crate::default::DefaultScheduler;
        use crate::testing::{bound_pod, view_with_pods};
        use schedlab_core::pod::PodId;
        use schedlab_core::testing::PodSpecChanges;

        struct Case {
            name: &'static str,
            nodes: Vec<schedlab_core::NodeState>,
            pods: Vec<Vec<schedlab_core::BoundPod>>,
            cpu: u64,
            priority: i32,
            /// what default deletes (checked, so the case tests what it says)
            expect: Option<Vec<u64>>,
        }
        let four = || node("n").cpu("4").memory("16Gi");
        let cases = vec![
            Case {
                name: "one victim",
                nodes: cluster([four(), four()]),
                pods: vec![
                    vec![bound_pod(1, 0, 3000, 0), bound_pod(2, 50, 1000, 0)],
                    vec![bound_pod(3, 100, 4000, 0)],
                ],
                cpu: 2000,
                priority: 100,
                expect: Some(vec![1]),
            },
            Case {
                name: "several victims, the most important reprieved",
                nodes: cluster([four()]),
                pods: vec![vec![
                    bound_pod(1, 0, 1000, 5),
                    bound_pod(2, 0, 1000, 1),
                    bound_pod(3, 5, 1000, 2),
                    bound_pod(4, 10, 1000, 0),
                ]],
                cpu: 2000,
                priority: 10,
                expect: Some(vec![2, 1]),
            },
            Case {
                name: "none possible: only pods of equal or higher priority",
                nodes: cluster([four(), four()]),
                pods: vec![vec![bound_pod(1, 10, 4000, 0)], vec![bound_pod(2, 20, 4000, 0)]],
                cpu: 1000,
                priority: 10,
                expect: None,
            },
            Case {
                name: "equal victims on equal nodes: the tie is drawn",
                nodes: cluster([four(), four(), four(), four()]),
                pods: vec![
                    vec![bound_pod(1, 0, 4000, 3)],
                    vec![bound_pod(2, 0, 4000, 3)],
                    vec![bound_pod(3, 0, 4000, 3)],
                    vec![bound_pod(4, 0, 4000, 3)],
                ],
                cpu: 1000,
                priority: 1,
                expect: None,
            },
        ];
        let mut drawn = std::collections::BTreeSet::new();
        for case in cases {
            for seed in 0..8u64 {
                let mut nodes = case.nodes.clone();
                let view = view_with_pods(&mut nodes, &case.pods, &[]);
                let spec = pod(case.cpu, 0).priority(case.priority);
                let mut default = DefaultScheduler::new(seed);
                let want = preempted(&default.schedule(&pending(&spec), &view));
                match (&case.expect, &want) {
                    (Some(victims), Some((_, got))) => {
                        assert_eq!(
                            got,
                            &victims.iter().map(|&v| PodId(v)).collect::<Vec<_>>(),
                            "{}",
                            case.name
                        )
                    }
                    (Some(_), None) => panic!("{}: default does not preempt", case.name),
                    _ => {}
                }
                if case.name.starts_with("equal") {
                    drawn.insert(want.clone().expect("default preempts").0);
                }
                for mut arm in every_agmarl_policy(&AgmarlConfig::default(), seed) {
                    let got = arm.schedule(&pending(&spec), &view);
                    assert_eq!(preempted(&got), want, "{} seed {seed}: {}", case.name, arm.name());
                    if want.is_none() {
                        assert!(matches!(got, Placement::Unschedulable { .. }), "{}: {got:?}", case.name);
                    }
                }
            }
        }
        assert!(drawn.len() > 1, "the tie case never drew another node: {drawn:?}");
    }

    #[test]
    fn preemption_off_leaves_the_pod_unschedulable() {
        use crate::testing::{bound_pod, view_with_pods};
        use schedlab_core::testing::PodSpecChanges;

        let mut nodes = cluster([node("a").cpu("4").memory("16Gi")]);
        let pods = vec![vec![bound_pod(1, 0, 4000, 0)]];
        let view = view_with_pods(&mut nodes, &pods, &[]);
        let spec = pod(1000, 0).priority(10);
        let off: AgmarlConfig = serde_json::from_str(r#"{"preemption": false}"#).unwrap();
        for mut arm in every_agmarl_policy(&off, 1) {
            let got = arm.schedule(&pending(&spec), &view);
            assert_eq!(
                got,
                Placement::Unschedulable {
                    reason: "0/1 nodes are available: 1 Insufficient cpu.".into()
                },
                "{}",
                arm.name()
            );
        }
        for mut arm in every_agmarl_policy(&AgmarlConfig::default(), 1) {
            assert!(
                preempted(&arm.schedule(&pending(&spec), &view)).is_some(),
                "{}",
                arm.name()
            );
        }
    }

    #[test]
    fn a_nominated_pod_keeps_its_room() {
        use crate::testing::view_with_pods;
        use schedlab_core::testing::PodSpecChanges;
        use schedlab_core::{NodeId, Nomination, pod::PodId};

        // node a has the room, but a pod of priority 5 is nominated there
        let mut nodes = cluster([node("a").cpu("4").memory("16Gi"), node("b").cpu("4").memory("16Gi")]);
        nodes[1].requested.cpu_milli = 3500;
        let nominated = [Nomination {
            pod: PodId(9),
            node: NodeId(0),
            priority: 5,
            requests: schedlab_core::resources::Resources::new(3000, 0),
        }];
        let pods = vec![Vec::new(), Vec::new()];
        let view = view_with_pods(&mut nodes, &pods, &nominated);
        // at or below the nominee's priority: a is taken, b too small
        let low = pod(2000, 0).priority(5);
        for mut arm in every_agmarl_policy(&AgmarlConfig::default(), 1) {
            let got = arm.schedule(&pending(&low), &view);
            assert!(
                matches!(got, Placement::Unschedulable { .. }),
                "{}: {got:?}",
                arm.name()
            );
        }
        // above it, a takes the pod (kube-scheduler's rule; at equal
        // priority the nominee keeps its room)
        let high = pod(2000, 0).priority(6);
        for mut arm in every_agmarl_policy(&AgmarlConfig::default(), 1) {
            assert_eq!(
                arm.schedule(&pending(&high), &view),
                Placement::Bind(NodeId(0)),
                "{}",
                arm.name()
            );
        }
    }

    #[test]
    fn a_preempting_decision_explains_itself_as_no_candidate() {
        use crate::testing::{bound_pod, view_with_pods};
        use schedlab_core::testing::PodSpecChanges;

        let mut nodes = cluster([node("a").cpu("4").memory("16Gi")]);
        let pods = vec![vec![bound_pod(1, 0, 4000, 0)]];
        let view = view_with_pods(&mut nodes, &pods, &[]);
        let spec = pod(1000, 0).priority(10);
        for mut arm in every_agmarl_policy(&AgmarlConfig::default(), 1) {
            arm.set_explain(true);
            let got = arm.schedule(&pending(&spec), &view);
            assert!(preempted(&got).is_some(), "{}: {got:?}", arm.name());
            let e = arm.explanation().expect("explained");
            assert_eq!((e.candidates, e.chosen, e.runner_up), (0, None, None), "{}", arm.name());
            let stress = e.stress.expect("a stress reading");
            assert!((0.0..=1.0).contains(&stress.score), "{stress:?}");
            let trace = e.agmarl.expect("an agmarl trace");
            assert!(trace.kept.as_slice().is_empty() && trace.decline.is_none(), "{trace:?}");
        }
    }

    #[test]
    fn noise_is_applied_then_clamped() {
        let nodes = cluster([node("a"), node("b")]);
        let spec = pod(1000, 0);
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let mut s = AgmarlScheduler::new(net, AgmarlConfig::default(), 0);
        let mut noise = |scores: &mut [[f32; 3]]| {
            scores[0] = [5.0, -5.0, 0.5];
            scores[1] = [0.2, 0.2, 0.2];
        };
        let d = s.decide(&pending(&spec), &view(&nodes), Some(&mut noise));
        assert_eq!(d.scores, vec![[1.0, 0.0, 0.5], [0.2, 0.2, 0.2]]);
        // calm order: cost first, 0.5 beats 0.2
        assert_eq!(d.chosen, Some(0));
        assert_eq!(d.placement, Placement::Bind(schedlab_core::NodeId(0)));
    }
}
