//! Cluster stress: the signals AGMARL-DKS's central controller reads, the
//! stress score they add up to, the hysteresis that turns the score into a
//! [`StressLevel`], and the objective order each level imposes.
//!
//! The paper orders the objectives by cluster stress but does not define
//! stress; everything below is our choice, documented where it is made.
//!
//! Flow per scheduling decision: [`signals`] reads the [`ClusterView`],
//! [`StressMonitor::update`] squashes and weighs the signals into a score in
//! [0, 1] and moves the level with hysteresis, [`objective_order`] gives the
//! order in which [`super::lexicographic::lexicographic_select`] filters the
//! candidates.

use schedlab_core::node::{NodeCondition, NodeState};
use schedlab_core::view::ClusterView;
use serde::{Deserialize, Serialize};

pub use schedlab_core::explanation::{Objective, StressLevel};

/// The order in which the controller filters candidates by objective.
///
/// - Calm: `[Cost, Utilization, FaultTolerance]` (the paper).
/// - Elevated (our choice): `[Cost, FaultTolerance, Utilization]`. Each step
///   up in stress moves fault tolerance up one rank (third, second, first),
///   so the order changes gradually: while trouble is only emerging the
///   cluster keeps its savings (cost still decides first, most elevated
///   phases are short), but among nodes of about the same cost (within
///   `delta_lex`, e.g. the nodes of one pool) the safer node now wins over
///   the better-packed one.
/// - Stressed: `[FaultTolerance, Cost, Utilization]` (the paper).
pub fn objective_order(level: StressLevel) -> [Objective; 3] {
    use Objective::{Cost, FaultTolerance, Utilization};
    match level {
        StressLevel::Calm => [Cost, Utilization, FaultTolerance],
        StressLevel::Elevated => [Cost, FaultTolerance, Utilization],
        StressLevel::Stressed => [FaultTolerance, Cost, Utilization],
    }
}

/// A node counts as under memory pressure when its used memory exceeds this
/// fraction of its allocatable memory (kubelet's eviction thresholds sit in
/// the same region: the default `memory.available<100Mi` is a few percent of
/// a node, operators commonly set 5 to 10 %).
pub const MEMORY_PRESSURE_THRESHOLD: f64 = 0.9;

/// The raw stress signals of one moment. All are non-negative; the two
/// fractions and the ratio lie in [0, 1], the two rates may exceed 1.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StressSignals {
    /// pending ÷ (pending + bound) pods, from [`ClusterView::pending_pods`]
    /// and [`ClusterView::bound_pods`]; 0 when there are no pods. The pod
    /// being scheduled counts as pending.
    pub pending_ratio: f32,
    /// (NotReady + Degraded nodes) ÷ all nodes of the view (cordoned nodes
    /// count in the denominator only: cordoning is not ill health); 0 with
    /// no nodes.
    pub unhealthy_node_fraction: f32,
    /// Σ over all nodes of [`NodeState::recent`]`.restarts` (container
    /// restarts over the last [`NodeState::RECENT_WINDOW`], 10 minutes)
    /// ÷ max(1, bound pods): restarts per bound pod in the window.
    pub restart_rate: f32,
    /// Σ over all nodes of `recent.oom_kills` ÷ max(1, bound pods): OOM kills
    /// per bound pod over the same window.
    pub oom_rate: f32,
    /// Fraction of the ready nodes ([`NodeCondition::is_ready`]: Ready or
    /// Degraded) whose used memory exceeds [`MEMORY_PRESSURE_THRESHOLD`] of
    /// their allocatable memory; 0 with no ready node. A per-node fraction
    /// rather than the cluster's used ÷ allocatable because memory pressure
    /// is local: OOM kills and kubelet evictions happen on the node that runs
    /// out, and a cluster at 60 % overall can have a quarter of its nodes
    /// about to evict. NotReady nodes are left out: their usage is stale.
    pub memory_pressure: f32,
}

impl StressSignals {
    /// The signals in the order of [`PerSignal::as_array`].
    pub fn as_array(&self) -> [f32; 5] {
        [
            self.pending_ratio,
            self.unhealthy_node_fraction,
            self.restart_rate,
            self.oom_rate,
            self.memory_pressure,
        ]
    }
}

/// The stress signals of `view`, each as defined on [`StressSignals`].
pub fn signals(view: &ClusterView<'_>) -> StressSignals {
    let pending = u64::from(view.pending_pods);
    let bound = u64::from(view.bound_pods);
    let pods = pending + bound;
    let pending_ratio = if pods == 0 { 0.0 } else { pending as f64 / pods as f64 };

    // one pass over the nodes (every count is an integer, so the order of
    // the additions cannot change a signal); at thousands of nodes a pass
    // per signal cost a tenth of a decision
    let nodes = view.nodes.len();
    let (mut unhealthy, mut restarts, mut oom_kills, mut ready, mut pressured) = (0usize, 0u64, 0u64, 0usize, 0usize);
    for n in view.nodes {
        unhealthy += usize::from(matches!(n.condition, NodeCondition::NotReady | NodeCondition::Degraded));
        restarts += u64::from(n.recent.restarts);
        oom_kills += u64::from(n.recent.oom_kills);
        if n.condition.is_ready() {
            ready += 1;
            pressured += usize::from(under_memory_pressure(n));
        }
    }
    let unhealthy_node_fraction = if nodes == 0 {
        0.0
    } else {
        unhealthy as f64 / nodes as f64
    };
    let per_pod = bound.max(1) as f64;
    let memory_pressure = if ready == 0 {
        0.0
    } else {
        pressured as f64 / ready as f64
    };

    StressSignals {
        pending_ratio: pending_ratio as f32,
        unhealthy_node_fraction: unhealthy_node_fraction as f32,
        restart_rate: (restarts as f64 / per_pod) as f32,
        oom_rate: (oom_kills as f64 / per_pod) as f32,
        memory_pressure: memory_pressure as f32,
    }
}

/// Used memory above [`MEMORY_PRESSURE_THRESHOLD`] of allocatable. A node
/// with no allocatable memory is under pressure as soon as anything uses
/// memory on it.
fn under_memory_pressure(node: &NodeState) -> bool {
    let used = node.used.memory_bytes as f64;
    let allocatable = node.spec.allocatable.memory_bytes as f64;
    used > MEMORY_PRESSURE_THRESHOLD * allocatable
}

/// One number per stress signal, in the order of [`StressSignals`]; used for
/// the signals' weights and saturation points.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerSignal {
    pub pending_ratio: f32,
    pub unhealthy_node_fraction: f32,
    pub restart_rate: f32,
    pub oom_rate: f32,
    pub memory_pressure: f32,
}

impl PerSignal {
    /// `[pending_ratio, unhealthy_node_fraction, restart_rate, oom_rate, memory_pressure]`
    pub fn as_array(&self) -> [f32; 5] {
        [
            self.pending_ratio,
            self.unhealthy_node_fraction,
            self.restart_rate,
            self.oom_rate,
            self.memory_pressure,
        ]
    }
}

/// Names of the signals in [`PerSignal::as_array`] order, for messages.
const SIGNAL_NAMES: [&str; 5] = [
    "pending_ratio",
    "unhealthy_node_fraction",
    "restart_rate",
    "oom_rate",
    "memory_pressure",
];

/// How signals become a stress score and the score a level.
///
/// **Score.** Each signal is squashed to [0, 1] by a saturating ramp,
/// `min(1, signal ÷ saturation)`: the signal counts fully from its saturation
/// point on, so one runaway rate cannot outweigh the others, and a rate that
/// can exceed 1 (restarts per pod) still maps into [0, 1]. The score is the
/// weighted sum of the squashed signals, the weights normalised by their sum
/// (the defaults sum to 1), so the score is in [0, 1].
///
/// **Levels, with hysteresis.** Going up: Calm → Elevated once the score is
/// ≥ `enter_elevated`, to Stressed once ≥ `enter_stressed` (directly from
/// Calm on a big score). Going down only below the lower exit thresholds:
/// Stressed → Elevated once the score is < `exit_stressed`, to Calm once
/// < `exit_elevated` (directly from Stressed on a small score). A score
/// between a level's exit and enter thresholds keeps the current level, so a
/// score hovering around one threshold cannot make the level flap.
///
/// **Dwell.** A change must also be indicated by `enter_dwell` (going up) or
/// `exit_dwell` (going down) consecutive updates; the level then moves only as
/// far as every update of that run agreed on. Defaults: up at once (1), down
/// after 3 updates: reacting late to trouble costs failed pods, relaxing
/// late only costs a little money. Updates happen once per scheduling
/// decision, so the dwell counts decisions, not time.
///
/// Defaults (the paper gives none):
/// - weights: unhealthy nodes 0.30 (node failures and degradation are the
///   most direct threat to fault tolerance), restarts 0.25, pending 0.15,
///   OOM kills 0.15, memory pressure 0.15. The pending ratio is weighted low
///   because a burst of new pods (the start of every run, a scale-up) makes
///   it high without anything being wrong: alone it never reaches
///   `enter_elevated`.
/// - saturation: pending ratio 0.5 (half of all pods waiting), unhealthy
///   fraction 0.2 (a fifth of the nodes down or degraded), restart rate 0.5
///   (half as many restarts as bound pods in 10 minutes; crash-loop
///   back-off caps a pod at a few restarts in that time), OOM rate 0.2 (OOM
///   kills are rarer and each one is a failure), memory pressure 0.5 (half
///   of the ready nodes above 90 %).
/// - thresholds: enter 0.25 / 0.5, exit 0.15 / 0.35: a gap of 0.10 and 0.15,
///   larger than the change one event (a node failing in a 40-node cluster
///   moves the score by 0.0375) makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StressConfig {
    /// relative weight of each squashed signal (non-negative, not all zero)
    pub weights: PerSignal,
    /// signal value from which each signal counts fully (positive)
    pub saturation: PerSignal,
    /// Calm → Elevated when the score is ≥ this
    pub enter_elevated: f32,
    /// → Stressed when the score is ≥ this
    pub enter_stressed: f32,
    /// Elevated (or Stressed) → Calm when the score is < this
    pub exit_elevated: f32,
    /// Stressed → Elevated when the score is < this
    pub exit_stressed: f32,
    /// consecutive updates a rise must hold before the level goes up (≥ 1)
    pub enter_dwell: u32,
    /// consecutive updates a fall must hold before the level goes down (≥ 1)
    pub exit_dwell: u32,
}

impl Default for StressConfig {
    fn default() -> Self {
        StressConfig {
            weights: PerSignal {
                pending_ratio: 0.15,
                unhealthy_node_fraction: 0.30,
                restart_rate: 0.25,
                oom_rate: 0.15,
                memory_pressure: 0.15,
            },
            saturation: PerSignal {
                pending_ratio: 0.5,
                unhealthy_node_fraction: 0.2,
                restart_rate: 0.5,
                oom_rate: 0.2,
                memory_pressure: 0.5,
            },
            enter_elevated: 0.25,
            enter_stressed: 0.5,
            exit_elevated: 0.15,
            exit_stressed: 0.35,
            enter_dwell: 1,
            exit_dwell: 3,
        }
    }
}

/// A [`StressConfig`] that cannot work as documented.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StressConfigError {
    #[error("stress weight of {signal} must be finite and >= 0, got {value}")]
    BadWeight { signal: &'static str, value: f32 },
    #[error("stress weights must not all be zero")]
    ZeroWeights,
    #[error("stress saturation of {signal} must be finite and > 0, got {value}")]
    BadSaturation { signal: &'static str, value: f32 },
    #[error(
        "stress thresholds must satisfy 0 <= exit_elevated <= enter_elevated <= enter_stressed <= 1, \
         exit_elevated <= exit_stressed <= enter_stressed and enter_elevated <= enter_stressed; got enter \
         {enter_elevated}/{enter_stressed}, exit {exit_elevated}/{exit_stressed}"
    )]
    Thresholds {
        enter_elevated: f32,
        enter_stressed: f32,
        exit_elevated: f32,
        exit_stressed: f32,
    },
}

impl StressConfig {
    /// Checks the documented constraints. [`StressMonitor`] never panics on
    /// a config that fails them (bad weights count as 0, bad saturation
    /// points make a signal a step at 0), but its levels may then flap.
    pub fn validate(&self) -> Result<(), StressConfigError> {
        let weights = self.weights.as_array();
        for (signal, value) in SIGNAL_NAMES.into_iter().zip(weights) {
            if !(value.is_finite() && value >= 0.0) {
                return Err(StressConfigError::BadWeight { signal, value });
            }
        }
        if weights.iter().all(|&w| w == 0.0) {
            return Err(StressConfigError::ZeroWeights);
        }
        for (signal, value) in SIGNAL_NAMES.into_iter().zip(self.saturation.as_array()) {
            if !(value.is_finite() && value > 0.0) {
                return Err(StressConfigError::BadSaturation { signal, value });
            }
        }
        let ordered = 0.0 <= self.exit_elevated
            && self.exit_elevated <= self.enter_elevated
            && self.enter_elevated <= self.enter_stressed
            && self.enter_stressed <= 1.0
            && self.exit_elevated <= self.exit_stressed
            && self.exit_stressed <= self.enter_stressed;
        if !ordered {
            return Err(StressConfigError::Thresholds {
                enter_elevated: self.enter_elevated,
                enter_stressed: self.enter_stressed,
                exit_elevated: self.exit_elevated,
                exit_stressed: self.exit_stressed,
            });
        }
        Ok(())
    }
}

/// `min(1, x ÷ saturation)` for x > 0; 0 for x ≤ 0 or NaN. A saturation
/// point that is not a positive number makes the signal a step: any positive
/// value counts fully.
fn squash(x: f32, saturation: f32) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return 0.0;
    }
    if saturation.is_nan() || saturation <= 0.0 {
        return 1.0;
    }
    (f64::from(x) / f64::from(saturation)).min(1.0)
}

/// A run of consecutive updates that all asked to leave the current level in
/// the same direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Streak {
    up: bool,
    /// the smallest move every update of the run asked for
    target: StressLevel,
    count: u32,
}

/// Tracks the stress level across decisions (see [`StressConfig`] for the
/// rules). Starts Calm.
#[derive(Debug, Clone)]
pub struct StressMonitor {
    cfg: StressConfig,
    level: StressLevel,
    last_score: f32,
    streak: Option<Streak>,
}

impl StressMonitor {
    pub fn new(cfg: StressConfig) -> Self {
        StressMonitor {
            cfg,
            level: StressLevel::Calm,
            last_score: 0.0,
            streak: None,
        }
    }

    pub fn config(&self) -> &StressConfig {
        &self.cfg
    }

    /// The stress score of `s` in [0, 1]: the normalised weighted sum of the
    /// squashed signals. Weights that are negative or not finite count as 0;
    /// with no positive weight the score is 0.
    pub fn score(&self, s: &StressSignals) -> f32 {
        // f64: finite f32 weights cannot overflow the sums
        let weights = self
            .cfg
            .weights
            .as_array()
            .map(|w| if w.is_finite() && w > 0.0 { f64::from(w) } else { 0.0 });
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return 0.0;
        }
        let weighted: f64 = s
            .as_array()
            .iter()
            .zip(self.cfg.saturation.as_array())
            .zip(weights)
            .map(|((&x, sat), w)| w * squash(x, sat))
            .sum();
        (weighted / total).clamp(0.0, 1.0) as f32
    }

    /// Scores `s`, moves the level by the hysteresis and dwell rules of
    /// [`StressConfig`], and returns the (possibly new) level.
    pub fn update(&mut self, s: &StressSignals) -> StressLevel {
        let score = self.score(s);
        self.last_score = score;
        let target = self.target(score);
        if target == self.level {
            self.streak = None;
            return self.level;
        }
        let up = target > self.level;
        let streak = match self.streak {
            Some(prev) if prev.up == up => Streak {
                up,
                // only as far as every update of the run agreed on
                target: if up {
                    prev.target.min(target)
                } else {
                    prev.target.max(target)
                },
                count: prev.count.saturating_add(1),
            },
            _ => Streak { up, target, count: 1 },
        };
        let dwell = if up { self.cfg.enter_dwell } else { self.cfg.exit_dwell }.max(1);
        if streak.count >= dwell {
            tracing::debug!(from = %self.level, to = %streak.target, score, "stress level changed");
            self.level = streak.target;
            self.streak = None;
        } else {
            self.streak = Some(streak);
        }
        self.level
    }

    pub fn level(&self) -> StressLevel {
        self.level
    }

    /// The score computed by the last [`StressMonitor::update`] (0 before the
    /// first).
    pub fn last_score(&self) -> f32 {
        self.last_score
    }

    /// Back to Calm with no history, e.g. at the start of an episode.
    pub fn reset(&mut self) {
        self.level = StressLevel::Calm;
        self.last_score = 0.0;
        self.streak = None;
    }

    /// The level `score` asks for from the current level, ignoring dwell.
    /// Rising is checked first, so a misordered config can never move the
    /// level down on a score that passes an enter threshold.
    fn target(&self, score: f32) -> StressLevel {
        let c = &self.cfg;
        let up = if score >= c.enter_stressed {
            StressLevel::Stressed
        } else if score >= c.enter_elevated {
            StressLevel::Elevated
        } else {
            StressLevel::Calm
        };
        if up > self.level {
            return up;
        }
        let down = if score < c.exit_elevated {
            StressLevel::Calm
        } else if score < c.exit_stressed {
            StressLevel::Elevated
        } else {
            StressLevel::Stressed
        };
        if down < self.level {
            return down;
        }
        self.level
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, node, view};
    use schedlab_core::node::RecentTrouble;
    use schedlab_core::resources::Resources;
    use schedlab_core::time::Time;

    const GI: u64 = 1 << 30;

    /// `cfg` with a score that is exactly the pending ratio (weight and
    /// saturation 1, the other signals weighted 0), so that tests can feed
    /// exact scores, thresholds included.
    fn direct(mut cfg: StressConfig) -> StressConfig {
        cfg.weights = PerSignal {
            pending_ratio: 1.0,
            unhealthy_node_fraction: 0.0,
            restart_rate: 0.0,
            oom_rate: 0.0,
            memory_pressure: 0.0,
        };
        cfg.saturation.pending_ratio = 1.0;
        cfg
    }

    fn no_dwell() -> StressConfig {
        direct(StressConfig {
            exit_dwell: 1,
            ..StressConfig::default()
        })
    }

    fn with_weights(w: [f32; 5]) -> StressConfig {
        StressConfig {
            weights: PerSignal {
                pending_ratio: w[0],
                unhealthy_node_fraction: w[1],
                restart_rate: w[2],
                oom_rate: w[3],
                memory_pressure: w[4],
            },
            ..StressConfig::default()
        }
    }

    fn at(score: f32) -> StressSignals {
        StressSignals {
            pending_ratio: score,
            ..Default::default()
        }
    }

    fn all(x: f32) -> StressSignals {
        StressSignals {
            pending_ratio: x,
            unhealthy_node_fraction: x,
            restart_rate: x,
            oom_rate: x,
            memory_pressure: x,
        }
    }

    fn run(monitor: &mut StressMonitor, scores: &[f32]) -> Vec<StressLevel> {
        scores.iter().map(|&x| monitor.update(&at(x))).collect()
    }

    use StressLevel::{Calm, Elevated, Stressed};

    #[test]
    fn orders_follow_the_paper_and_move_fault_tolerance_up_with_stress() {
        use Objective::*;
        assert_eq!(objective_order(Calm), [Cost, Utilization, FaultTolerance]);
        assert_eq!(objective_order(Stressed), [FaultTolerance, Cost, Utilization]);
        let rank = |l: StressLevel| objective_order(l).iter().position(|&o| o == FaultTolerance);
        assert!(rank(Calm) > rank(Elevated) && rank(Elevated) > rank(Stressed));
        for level in StressLevel::ALL {
            let mut order = objective_order(level).map(Objective::index);
            order.sort_unstable();
            assert_eq!(order, [0, 1, 2], "{level}: a permutation of the objectives");
        }
    }

    #[test]
    fn objective_indices_match_the_score_layout() {
        assert_eq!(Objective::ALL.map(Objective::index), [0, 1, 2]);
        assert_eq!(Objective::FaultTolerance.index(), 0);
        assert_eq!(Objective::Cost.index(), 2);
        assert!(Calm < Elevated && Elevated < Stressed);
    }

    #[test]
    fn signals_of_a_quiet_cluster_are_zero() {
        let nodes = cluster([node("a").pod_count(3), node("b").pod_count(2)]);
        let mut v = view(&nodes);
        v.pending_pods = 0;
        assert_eq!(signals(&v), StressSignals::default());
    }

    #[test]
    fn signals_of_an_empty_view_are_zero_and_finite() {
        let v = ClusterView::of_nodes(Time::ZERO, &[], 0, 0);
        assert_eq!(signals(&v), StressSignals::default());
    }

    #[test]
    fn signals_follow_their_definitions() {
        let mut nodes = cluster([
            node("ready").memory("10Gi"),
            node("degraded").degraded().memory("10Gi"),
            node("down").not_ready().memory("10Gi"),
            node("cordoned").cordoned().memory("10Gi"),
            node("ready2").memory("10Gi"),
        ]);
        // restarts and OOM kills count on every node, NotReady included
        nodes[0].recent = RecentTrouble {
            restarts: 3,
            oom_kills: 1,
            failures: 7,
        };
        nodes[2].recent = RecentTrouble {
            restarts: 2,
            oom_kills: 1,
            failures: 0,
        };
        // above 90 % of 10Gi: ready (and degraded); the NotReady one is left
        // out although it reports high usage; exactly 90 % is not above
        nodes[0].used = Resources::new(0, 10 * GI);
        nodes[1].used = Resources::new(0, 95 * GI / 10);
        nodes[2].used = Resources::new(0, 10 * GI);
        nodes[4].used = Resources::new(0, 9 * GI);
        let v = ClusterView::of_nodes(Time::ZERO, &nodes, 5, 15);
        let s = signals(&v);
        assert_eq!(s.pending_ratio, 5.0 / 20.0);
        assert_eq!(s.unhealthy_node_fraction, 2.0 / 5.0);
        assert_eq!(s.restart_rate, 5.0 / 15.0);
        assert_eq!(s.oom_rate, 2.0 / 15.0);
        // ready nodes: ready, degraded, cordoned, ready2; pressured: 2 of 4
        assert_eq!(s.memory_pressure, 0.5);
    }

    #[test]
    fn rates_divide_by_at_least_one_pod() {
        let mut nodes = cluster([node("a")]);
        nodes[0].recent.restarts = 4;
        nodes[0].recent.oom_kills = 2;
        let v = ClusterView::of_nodes(Time::ZERO, &nodes, 3, 0);
        let s = signals(&v);
        assert_eq!((s.restart_rate, s.oom_rate), (4.0, 2.0));
        assert_eq!(s.pending_ratio, 1.0);
    }

    #[test]
    fn a_node_without_allocatable_memory_is_pressured_only_when_used() {
        let mut nodes = cluster([node("empty").memory("0"), node("used").memory("0")]);
        nodes[1].used = Resources::new(0, 1);
        let s = signals(&view(&nodes));
        assert_eq!(s.memory_pressure, 0.5);
    }

    #[test]
    fn default_config_is_valid_and_weights_sum_to_one() {
        let cfg = StressConfig::default();
        assert_eq!(cfg.validate(), Ok(()));
        let sum: f32 = cfg.weights.as_array().iter().sum();
        assert!((sum - 1.0).abs() < 1e-6, "{sum}");
    }

    #[test]
    fn validate_rejects_bad_configs() {
        let base = StressConfig::default();
        let mut c = base.clone();
        c.weights.oom_rate = -0.1;
        assert!(matches!(
            c.validate(),
            Err(StressConfigError::BadWeight { signal: "oom_rate", .. })
        ));
        let mut c = base.clone();
        c.weights = PerSignal {
            pending_ratio: 0.0,
            unhealthy_node_fraction: 0.0,
            restart_rate: 0.0,
            oom_rate: 0.0,
            memory_pressure: 0.0,
        };
        assert_eq!(c.validate(), Err(StressConfigError::ZeroWeights));
        let mut c = base.clone();
        c.saturation.restart_rate = 0.0;
        assert!(matches!(
            c.validate(),
            Err(StressConfigError::BadSaturation {
                signal: "restart_rate",
                ..
            })
        ));
        let mut c = base.clone();
        c.exit_elevated = 0.3; // above enter_elevated: would flap
        assert!(matches!(c.validate(), Err(StressConfigError::Thresholds { .. })));
        let mut c = base.clone();
        c.exit_stressed = 0.6;
        assert!(c.validate().is_err());
        let mut c = base;
        c.enter_stressed = f32::NAN;
        assert!(c.validate().is_err());
    }

    #[test]
    fn config_round_trips_and_fills_defaults() {
        let cfg = StressConfig::default();
        let json = serde_json::to_string(&cfg).expect("serialise");
        let back: StressConfig = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back, cfg);
        let partial: StressConfig = serde_json::from_str(r#"{"enter_stressed": 0.6}"#).expect("partial");
        assert_eq!(partial.enter_stressed, 0.6);
        assert_eq!(partial.exit_stressed, cfg.exit_stressed);
        assert!(serde_json::from_str::<StressConfig>(r#"{"enter_stresed": 0.6}"#).is_err());
        assert_eq!(serde_json::to_string(&Stressed).expect("level"), r#""stressed""#);
        assert_eq!(
            serde_json::to_string(&Objective::FaultTolerance).expect("objective"),
            r#""fault-tolerance""#
        );
    }

    #[test]
    fn score_is_the_normalised_weighted_sum_of_saturating_ramps() {
        let m = StressMonitor::new(StressConfig::default());
        assert_eq!(m.score(&StressSignals::default()), 0.0);
        // one signal at half its saturation point: half its weight
        let s = StressSignals {
            unhealthy_node_fraction: 0.1,
            ..Default::default()
        };
        assert!((m.score(&s) - 0.15).abs() < 1e-6, "{}", m.score(&s));
        // past saturation it counts fully and no more
        let s = StressSignals {
            restart_rate: 50.0,
            ..Default::default()
        };
        assert!((m.score(&s) - 0.25).abs() < 1e-6);
        let maxed = StressSignals {
            pending_ratio: 1.0,
            unhealthy_node_fraction: 1.0,
            restart_rate: 9.0,
            oom_rate: 9.0,
            memory_pressure: 1.0,
        };
        assert!((m.score(&maxed) - 1.0).abs() < 1e-6);
        assert!((m.score(&all(0.1)) - (0.15 * 0.2 + 0.3 * 0.5 + 0.25 * 0.2 + 0.15 * 0.5 + 0.15 * 0.2)).abs() < 1e-6);
        // weights are relative
        let d = StressMonitor::new(with_weights([0.3, 0.6, 0.5, 0.3, 0.3]));
        let s = StressSignals {
            pending_ratio: 0.2,
            unhealthy_node_fraction: 0.04,
            restart_rate: 0.4,
            oom_rate: 0.0,
            memory_pressure: 0.1,
        };
        // 0.15·0.4 + 0.3·0.2 + 0.25·0.8 + 0 + 0.15·0.2
        assert!((m.score(&s) - 0.35).abs() < 1e-6, "{}", m.score(&s));
        assert!((d.score(&s) - m.score(&s)).abs() < 1e-6);
    }

    #[test]
    fn the_pending_ratio_alone_never_elevates() {
        let mut m = StressMonitor::new(StressConfig::default());
        let burst = StressSignals {
            pending_ratio: 1.0,
            ..Default::default()
        };
        assert!(m.score(&burst) < m.config().enter_elevated);
        assert_eq!(m.update(&burst), Calm);
    }

    #[test]
    fn score_never_panics_or_leaves_the_unit_interval_on_bad_input() {
        let mut cfg = StressConfig::default();
        cfg.weights.oom_rate = f32::NAN;
        cfg.weights.restart_rate = -1.0;
        cfg.saturation.pending_ratio = 0.0;
        cfg.saturation.memory_pressure = f32::NAN;
        let m = StressMonitor::new(cfg);
        for s in [
            StressSignals {
                pending_ratio: f32::NAN,
                unhealthy_node_fraction: f32::INFINITY,
                restart_rate: -3.0,
                oom_rate: f32::NAN,
                memory_pressure: 0.2,
            },
            StressSignals {
                pending_ratio: 1e-9,
                ..Default::default()
            },
            StressSignals::default(),
        ] {
            let x = m.score(&s);
            assert!((0.0..=1.0).contains(&x), "{x}");
        }
        // a zero saturation point makes the signal a step
        let step = StressSignals {
            pending_ratio: 1e-9,
            ..Default::default()
        };
        assert!(m.score(&step) > 0.0);
        let zero = with_weights([0.0, f32::NAN, -1.0, 0.0, 0.0]);
        assert_eq!(StressMonitor::new(zero).score(&all(1.0)), 0.0);
        let huge = with_weights([f32::MAX; 5]);
        assert!((StressMonitor::new(huge).score(&all(1.0)) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn rising_sequence_climbs_level_by_level() {
        let mut m = StressMonitor::new(no_dwell());
        assert_eq!(m.level(), Calm);
        let levels = run(&mut m, &[0.0, 0.1, 0.24, 0.25, 0.4, 0.49, 0.5, 0.8]);
        assert_eq!(
            levels,
            [Calm, Calm, Calm, Elevated, Elevated, Elevated, Stressed, Stressed]
        );
        assert_eq!(m.level(), Stressed);
        assert!((m.last_score() - 0.8).abs() < 1e-6);
    }

    #[test]
    fn falling_sequence_leaves_each_level_only_below_its_exit_threshold() {
        let mut m = StressMonitor::new(no_dwell());
        run(&mut m, &[0.9]);
        let levels = run(&mut m, &[0.45, 0.36, 0.35, 0.34, 0.2, 0.16, 0.15, 0.14, 0.0]);
        assert_eq!(
            levels,
            [
                Stressed, Stressed, Stressed, Elevated, Elevated, Elevated, Elevated, Calm, Calm
            ]
        );
    }

    #[test]
    fn a_score_hovering_around_a_threshold_does_not_flap() {
        let mut m = StressMonitor::new(no_dwell());
        let levels = run(&mut m, &[0.24, 0.26, 0.24, 0.26, 0.2, 0.26, 0.16, 0.24]);
        assert_eq!(levels[0], Calm);
        assert!(levels[1..].iter().all(|&l| l == Elevated), "{levels:?}");
        let mut m = StressMonitor::new(no_dwell());
        let levels = run(&mut m, &[0.6, 0.49, 0.51, 0.4, 0.5, 0.36]);
        assert!(levels.iter().all(|&l| l == Stressed), "{levels:?}");
    }

    #[test]
    fn big_jumps_skip_the_middle_level_both_ways() {
        let mut m = StressMonitor::new(no_dwell());
        assert_eq!(run(&mut m, &[0.0, 0.7]), [Calm, Stressed]);
        assert_eq!(run(&mut m, &[0.05]), [Calm]);
    }

    #[test]
    fn default_dwell_rises_at_once_and_falls_after_three_updates() {
        let mut m = StressMonitor::new(direct(StressConfig::default()));
        assert_eq!(run(&mut m, &[0.6]), [Stressed]);
        assert_eq!(run(&mut m, &[0.1, 0.1, 0.1]), [Stressed, Stressed, Calm]);
        // an interrupted fall starts counting again
        let mut m = StressMonitor::new(direct(StressConfig::default()));
        run(&mut m, &[0.6]);
        assert_eq!(
            run(&mut m, &[0.1, 0.1, 0.4, 0.1, 0.1, 0.1]),
            [Stressed, Stressed, Stressed, Stressed, Stressed, Calm]
        );
    }

    #[test]
    fn a_dwelled_move_goes_only_as_far_as_every_update_agreed() {
        let mut m = StressMonitor::new(direct(StressConfig::default()));
        run(&mut m, &[0.6]);
        // below exit_stressed three times, below exit_elevated only twice
        assert_eq!(run(&mut m, &[0.1, 0.3, 0.1]), [Stressed, Stressed, Elevated]);
        assert_eq!(run(&mut m, &[0.1, 0.1, 0.1]), [Elevated, Elevated, Calm]);

        let cfg = direct(StressConfig {
            enter_dwell: 2,
            ..StressConfig::default()
        });
        let mut m = StressMonitor::new(cfg);
        assert_eq!(run(&mut m, &[0.3, 0.9]), [Calm, Elevated]);
        assert_eq!(run(&mut m, &[0.9, 0.9]), [Elevated, Stressed]);
        // a single spike does not count
        let mut m = StressMonitor::new(m.config().clone());
        assert_eq!(run(&mut m, &[0.9, 0.0, 0.9, 0.0]), [Calm, Calm, Calm, Calm]);
    }

    #[test]
    fn dwell_zero_acts_as_one_and_reset_returns_to_calm() {
        let cfg = direct(StressConfig {
            exit_dwell: 0,
            ..StressConfig::default()
        });
        let mut m = StressMonitor::new(cfg);
        assert_eq!(run(&mut m, &[0.9, 0.0]), [Stressed, Calm]);
        run(&mut m, &[0.9]);
        m.reset();
        assert_eq!((m.level(), m.last_score()), (Calm, 0.0));
    }

    #[test]
    fn signals_feed_the_monitor_end_to_end() {
        // a fifth of the nodes down and the rest crash-looping: stressed
        let mut nodes = cluster((0..10).map(|i| {
            let b = node(&format!("n{i}")).pod_count(10);
            if i < 2 { b.not_ready() } else { b }
        }));
        for n in &mut nodes {
            n.recent.restarts = 10;
        }
        let mut m = StressMonitor::new(StressConfig::default());
        assert_eq!(m.update(&signals(&view(&nodes))), Stressed);
        // all healthy again, no trouble in the window: calm after the dwell
        for n in &mut nodes {
            n.condition = NodeCondition::Ready;
            n.recent = RecentTrouble::default();
        }
        let calm = signals(&view(&nodes));
        let levels: Vec<_> = (0..3).map(|_| m.update(&calm)).collect();
        assert_eq!(levels, [Stressed, Stressed, Calm]);
    }
}
