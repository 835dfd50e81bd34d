//! Strategic restraint: under stress the controller declines a pod when
//! waiting is predicted to serve it better than the node it would get, so
//! the pod waits for a safer moment.
//!
//! Two rules ([`RestraintRule`]). The default, [`RestraintRule::Learned`],
//! is the network's: its wait head predicts the fault tolerance the pod
//! would realise if declined now (where it is bound later, 0 if it never
//! is), and the pod is declined when that exceeds the chosen node's
//! fault-tolerance score by more than their combined measured error,
//! `sqrt(rmse_wait² + rmse_ft²)` ([`learned_decline`]): a decline is made
//! only where the heads tell the two apart. Without a measured wait error
//! it never declines. Training explores declines at random among eligible
//! pods, so the wait head learns from declines its own rule would not make.
//!
//! [`RestraintRule::Threshold`] is the hand-written rule the analytic
//! control runs, described below.
//!
//! The paper declines unstable pods under heavy churn but gives no rule.
//! A fixed fault-tolerance threshold (what this module held before) only
//! fires if the learned scores happen to fall below it, which they never did
//! on a flat score distribution. The rule is instead relative to what the
//! network predicts for the same workload: each workload keeps a
//! [`Baseline`], the running mean and standard deviation of the
//! fault-tolerance score of the nodes its pods were bound to, and a pod is
//! declined when the node the selection picked scores below
//! `mean − risk_margin × max(sd, MIN_SPREAD)`: its predicted risk is well
//! above its workload's usual. What restraint then bought is learned and
//! measured in training (a decline is a transition whose reward compares the
//! pod's later fate with this prediction, see
//! [`crate::agmarl::train::reward`]).

use super::stress::StressLevel;
use schedlab_core::pod::WorkloadId;
use schedlab_core::view::{PendingPod, WorkloadHistory};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The reason given with a [`schedlab_core::Placement::Decline`] by the learned rule.
pub const LEARNED_REASON: &str = "strategic restraint: under cluster stress, waiting is predicted to serve the pod \
     better than the node it would get";

/// The reason given with a random decline of training's exploration.
pub const EXPLORED_REASON: &str = "strategic restraint: a random decline of training's exploration";

/// The reason given with a [`schedlab_core::Placement::Decline`] by the threshold rule.
pub const RESTRAINT_REASON: &str = "strategic restraint: unstable pod under cluster stress, and the node it would get \
     is predicted far less fault tolerant than its workload's usual";

/// A workload's spread of fault-tolerance scores below this (one point on
/// the [0, 1] scale) counts as this: differences smaller than that are not
/// a risk the scores resolve.
pub const MIN_SPREAD: f32 = 0.01;

/// Which rule declines ([module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RestraintRule {
    /// the wait head against the chosen node's fault tolerance (default)
    #[default]
    Learned,
    /// the chosen node's fault tolerance against its workload's usual
    /// (the analytic control's rule; needs an unstable workload)
    Threshold,
}

/// When AGMARL-DKS declines a pod; the paper gives no numbers, the defaults
/// are ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RestraintConfig {
    /// false: never decline (default true)
    pub enabled: bool,
    /// which rule declines (default `learned`; the analytic control, which
    /// has no wait head, always runs `threshold`)
    pub rule: RestraintRule,
    /// the lowest stress level at which restraint applies (default
    /// Stressed, the paper's "heavy churn")
    pub min_level: StressLevel,
    /// a pod is declined when its chosen node's fault-tolerance score is more
    /// than this many of its workload's standard deviations below the
    /// workload's mean (default 1: about the worst sixth of the workload's
    /// usual placements, were the scores normal)
    pub risk_margin: f32,
    /// ... once the workload has had at least this many binds (default 5)
    pub min_baseline_binds: u32,
    /// a pod is unstable when its workload's (restarts + failures) per pod
    /// created is ≥ this (default 0.5). A crash counts once as a failure
    /// (the Error exit) and once as a restart, so 0.5 is about one crash per
    /// four pods created.
    pub unstable_ratio: f32,
    /// ... once at least this many pods of the workload have been created
    /// (default 3), so that one unlucky pod does not brand its workload
    pub min_pods_observed: u32,
    /// pods with priority ≥ this are never declined (default 1 000 000, the
    /// `high-priority` PriorityClass of the Kubernetes documentation's
    /// example): mission-critical pods must run even on risky nodes
    pub critical_priority: i32,
    /// a pod that has already had this many scheduling attempts is never
    /// declined (default 20, with kube-scheduler's back-off of 1 s doubling
    /// to 10 s about three minutes of waiting): restraint delays a pod
    /// through a storm, it must not starve it when stress persists
    pub max_attempts: u32,
}

impl Default for RestraintConfig {
    fn default() -> Self {
        RestraintConfig {
            enabled: true,
            rule: RestraintRule::Learned,
            min_level: StressLevel::Stressed,
            risk_margin: 1.0,
            min_baseline_binds: 5,
            unstable_ratio: 0.5,
            min_pods_observed: 3,
            critical_priority: 1_000_000,
            max_attempts: 20,
        }
    }
}

/// A [`RestraintConfig`] that cannot work as documented.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RestraintConfigError {
    #[error("restraint risk_margin must be finite and >= 0, got {0}")]
    RiskMargin(f32),
    #[error("restraint unstable_ratio must be finite and >= 0, got {0}")]
    UnstableRatio(f32),
}

impl RestraintConfig {
    pub fn validate(&self) -> Result<(), RestraintConfigError> {
        if !(self.risk_margin.is_finite() && self.risk_margin >= 0.0) {
            return Err(RestraintConfigError::RiskMargin(self.risk_margin));
        }
        if !(self.unstable_ratio.is_finite() && self.unstable_ratio >= 0.0) {
            return Err(RestraintConfigError::UnstableRatio(self.unstable_ratio));
        }
        Ok(())
    }
}

/// (restarts + failures) ÷ max(1, pods created) of a workload's observed
/// history. Not the scenario's `behaviour.unstable` flag: that is ground
/// truth a real scheduler does not see.
pub fn instability(history: &WorkloadHistory) -> f32 {
    let trouble = u64::from(history.restarts) + u64::from(history.failures);
    (trouble as f64 / f64::from(history.pods.max(1))) as f32
}

/// Whether the history brands the workload unstable: at least
/// `min_pods_observed` pods created and [`instability`] ≥ `unstable_ratio`.
pub fn is_unstable(history: &WorkloadHistory, cfg: &RestraintConfig) -> bool {
    history.pods >= cfg.min_pods_observed && instability(history) >= cfg.unstable_ratio
}

/// Running mean and standard deviation (Welford) of the fault-tolerance
/// scores a workload's pods were bound with.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Baseline {
    binds: u32,
    mean: f64,
    m2: f64,
}

impl Baseline {
    /// Adds one bind's score; a NaN or infinite one is left out.
    pub fn push(&mut self, score: f32) {
        if !score.is_finite() {
            return;
        }
        self.binds = self.binds.saturating_add(1);
        let x = f64::from(score);
        let d = x - self.mean;
        self.mean += d / f64::from(self.binds);
        self.m2 += d * (x - self.mean);
    }

    pub fn binds(&self) -> u32 {
        self.binds
    }

    pub fn mean(&self) -> f32 {
        self.mean as f32
    }

    /// The sample standard deviation (0 below two binds).
    pub fn spread(&self) -> f32 {
        if self.binds < 2 {
            return 0.0;
        }
        (self.m2 / f64::from(self.binds - 1)).max(0.0).sqrt() as f32
    }

    /// The score below which a pod of the workload is declined.
    pub fn bar(&self, risk_margin: f32) -> f32 {
        self.mean() - risk_margin * self.spread().max(MIN_SPREAD)
    }
}

/// Every workload's [`Baseline`], as the controller learns them from its own binds.
#[derive(Debug, Clone, Default)]
pub struct Baselines(HashMap<WorkloadId, Baseline>);

impl Baselines {
    pub fn get(&self, workload: WorkloadId) -> Option<&Baseline> {
        self.0.get(&workload)
    }

    /// Records that a pod of `workload` was bound to a node scoring `ft`.
    pub fn record(&mut self, workload: WorkloadId, ft: f32) {
        self.0.entry(workload).or_default().push(ft);
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// Why restraint declined a pod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Restrained {
    pub instability: f32,
    /// the chosen node's fault-tolerance score
    pub predicted: f32,
    pub baseline: Baseline,
    /// the score the node needed
    pub bar: f32,
}

/// Whether restraint may decline `pod` at all, whatever its rule: it is
/// enabled, `level` ≥ `min_level`, the pod's priority is below
/// `critical_priority` and it has had fewer than `max_attempts` attempts.
pub fn eligible(level: StressLevel, pod: &PendingPod<'_>, cfg: &RestraintConfig) -> bool {
    cfg.enabled
        && level >= cfg.min_level
        && pod.spec.priority < cfg.critical_priority
        && pod.attempts < cfg.max_attempts
}

/// How far the wait head must beat the chosen node's score for the learned
/// rule to decline: `sqrt(wait_error² + ft_error²)`; None without a
/// measured `wait_error`.
pub fn decline_margin(wait_error: Option<f32>, ft_error: f32) -> Option<f32> {
    let wait_error = wait_error?;
    Some((wait_error * wait_error + ft_error * ft_error).sqrt())
}

/// Whether any wait in [0, 1] could beat a node scoring `predicted` by more
/// than `margin`: when not, the wait head need not be asked.
pub fn wait_could_win(predicted: f32, margin: f32) -> bool {
    1.0 - predicted > margin
}

/// Why the learned rule declined a pod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waited {
    /// the wait head's prediction
    pub wait: f32,
    /// the chosen node's fault-tolerance score
    pub predicted: f32,
    /// how far `wait` had to exceed `predicted`
    pub margin: f32,
}

/// The learned rule on an [`eligible`] pod: Some when `wait` exceeds the
/// chosen node's fault-tolerance score `predicted` by more than
/// `sqrt(wait_error² + ft_error²)`. Never without a measured `wait_error`,
/// and never on a NaN: a broken network must not keep pods pending.
pub fn learned_decline(wait: f32, predicted: f32, wait_error: Option<f32>, ft_error: f32) -> Option<Waited> {
    let margin = decline_margin(wait_error, ft_error)?;
    (wait - predicted > margin).then_some(Waited {
        wait,
        predicted,
        margin,
    })
}

/// Strategic restraint: Some when the pod should stay pending although it
/// has a chosen node, whose fault-tolerance score is `predicted`. Some only
/// when all of: restraint is enabled; `level` ≥ `min_level`; the pod's
/// priority is < `critical_priority`; it has had fewer than `max_attempts`
/// attempts; its workload [`is_unstable`]; its workload has a baseline of at
/// least `min_baseline_binds` binds; and `predicted` is below the baseline's
/// [`Baseline::bar`]. A NaN `predicted` never declines: a broken network
/// must not keep pods pending.
pub fn should_decline(
    level: StressLevel,
    pod: &PendingPod<'_>,
    predicted: f32,
    baseline: Option<&Baseline>,
    cfg: &RestraintConfig,
) -> Option<Restrained> {
    let baseline = *baseline?;
    let bar = baseline.bar(cfg.risk_margin);
    let declines = eligible(level, pod, cfg)
        && is_unstable(&pod.history, cfg)
        && baseline.binds >= cfg.min_baseline_binds
        && predicted < bar;
    declines.then(|| Restrained {
        instability: instability(&pod.history),
        predicted,
        baseline,
        bar,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pending;
    use StressLevel::{Calm, Elevated, Stressed};
    use schedlab_core::testing::{PodSpecChanges, pod};

    fn unstable_history() -> WorkloadHistory {
        WorkloadHistory {
            pods: 10,
            restarts: 4,
            oom_kills: 0,
            failures: 4,
        }
    }

    /// Six binds scoring 0.8 ± 0.1 (mean 0.8, sd 0.0894).
    fn usual() -> Baseline {
        let mut b = Baseline::default();
        for s in [0.7, 0.9, 0.7, 0.9, 0.8, 0.8] {
            b.push(s);
        }
        b
    }

    #[test]
    fn the_learned_rule_declines_only_beyond_the_heads_error() {
        // margin sqrt(0.3² + 0.4²) = 0.5
        assert_eq!(learned_decline(0.9, 0.3, Some(0.3), 0.4).map(|w| w.margin), Some(0.5));
        assert_eq!(learned_decline(0.8, 0.3, Some(0.3), 0.4), None);
        // no measured wait error, a NaN: never
        assert_eq!(learned_decline(1.0, 0.0, None, 0.0), None);
        assert_eq!(learned_decline(f32::NAN, 0.0, Some(0.0), 0.0), None);
        assert_eq!(learned_decline(1.0, f32::NAN, Some(0.0), 0.0), None);
        assert!(learned_decline(0.2, 0.1, Some(0.0), 0.0).is_some());
    }

    #[test]
    fn the_wait_head_is_asked_only_where_it_could_win() {
        assert_eq!(decline_margin(None, 0.4), None);
        let margin = decline_margin(Some(0.3), 0.4).unwrap();
        assert!((margin - 0.5).abs() < 1e-6);
        assert!(wait_could_win(0.4, margin) && !wait_could_win(0.5, margin) && !wait_could_win(f32::NAN, margin));
        // where it could not, no wait in [0, 1] declines
        assert_eq!(learned_decline(1.0, 0.5, Some(0.3), 0.4), None);
    }

    #[test]
    fn eligibility_is_stress_priority_and_attempts() {
        let cfg = RestraintConfig::default();
        let spec = pod(100, 0);
        let p = pending(&spec);
        assert!(eligible(Stressed, &p, &cfg));
        assert!(!eligible(Elevated, &p, &cfg));
        let critical = pod(100, 0).priority(cfg.critical_priority);
        assert!(!eligible(Stressed, &pending(&critical), &cfg));
        let mut tried = pending(&spec);
        tried.attempts = cfg.max_attempts;
        assert!(!eligible(Stressed, &tried, &cfg));
        let off = RestraintConfig { enabled: false, ..cfg };
        assert!(!eligible(Stressed, &p, &off));
    }

    #[test]
    fn the_baseline_is_the_running_mean_and_spread() {
        let b = usual();
        assert_eq!(b.binds(), 6);
        assert!((b.mean() - 0.8).abs() < 1e-6);
        assert!((b.spread() - (0.04f32 / 5.0).sqrt()).abs() < 1e-5, "{}", b.spread());
        let mut flat = Baseline::default();
        for _ in 0..10 {
            flat.push(0.9);
        }
        flat.push(f32::NAN);
        assert_eq!((flat.binds(), flat.spread()), (10, 0.0));
        // a flat workload still has a bar, one point below its mean
        assert!((flat.bar(1.0) - 0.89).abs() < 1e-6);
    }

    #[test]
    fn declines_an_unstable_pod_whose_node_is_far_below_its_workloads_usual() {
        let spec = pod(100, 0);
        let mut p = pending(&spec);
        p.history = unstable_history();
        let cfg = RestraintConfig::default();
        let b = usual();
        let r = should_decline(Stressed, &p, 0.6, Some(&b), &cfg).expect("declined");
        assert!((r.bar - (0.8 - b.spread())).abs() < 1e-6);
        assert_eq!((r.predicted, r.instability), (0.6, 0.8));
        // within one spread of the usual: placed
        assert!(should_decline(Stressed, &p, 0.75, Some(&b), &cfg).is_none());
    }

    #[test]
    fn each_condition_is_needed() {
        let spec = pod(100, 0);
        let mut p = pending(&spec);
        p.history = unstable_history();
        let cfg = RestraintConfig::default();
        let b = usual();
        let declines = |p: &PendingPod<'_>, level, b: Option<&Baseline>, cfg: &RestraintConfig| {
            should_decline(level, p, 0.5, b, cfg).is_some()
        };
        assert!(declines(&p, Stressed, Some(&b), &cfg));
        assert!(!declines(&p, Calm, Some(&b), &cfg));
        assert!(!declines(&p, Elevated, Some(&b), &cfg));
        // no baseline yet, or too short a one
        assert!(!declines(&p, Stressed, None, &cfg));
        let short = RestraintConfig {
            min_baseline_binds: 7,
            ..cfg.clone()
        };
        assert!(!declines(&p, Stressed, Some(&b), &short));
        let off = RestraintConfig {
            enabled: false,
            ..cfg.clone()
        };
        assert!(!declines(&p, Stressed, Some(&b), &off));
        let mut tried = p;
        tried.attempts = cfg.max_attempts;
        assert!(!declines(&tried, Stressed, Some(&b), &cfg));
        tried.attempts = cfg.max_attempts - 1;
        assert!(declines(&tried, Stressed, Some(&b), &cfg));
        let mut stable = p;
        stable.history = WorkloadHistory {
            pods: 10,
            restarts: 1,
            oom_kills: 0,
            failures: 1,
        };
        assert!(!declines(&stable, Stressed, Some(&b), &cfg));
        let earlier = RestraintConfig {
            min_level: Elevated,
            ..cfg.clone()
        };
        assert!(declines(&p, Elevated, Some(&b), &earlier));
        // a broken score never declines
        assert!(should_decline(Stressed, &p, f32::NAN, Some(&b), &cfg).is_none());
    }

    #[test]
    fn critical_pods_are_never_declined() {
        let critical = pod(0, 0).priority(1_000_000);
        let mut p = pending(&critical);
        p.history = unstable_history();
        let cfg = RestraintConfig::default();
        assert!(should_decline(Stressed, &p, 0.0, Some(&usual()), &cfg).is_none());
        let high = pod(0, 0).priority(999_999);
        let mut p = pending(&high);
        p.history = unstable_history();
        assert!(should_decline(Stressed, &p, 0.0, Some(&usual()), &cfg).is_some());
    }

    #[test]
    fn baselines_are_per_workload() {
        let mut all = Baselines::default();
        all.record(WorkloadId(1), 0.9);
        all.record(WorkloadId(1), 0.7);
        all.record(WorkloadId(2), 0.1);
        assert_eq!(all.get(WorkloadId(1)).map(Baseline::binds), Some(2));
        assert!((all.get(WorkloadId(1)).unwrap().mean() - 0.8).abs() < 1e-6);
        assert!(all.get(WorkloadId(3)).is_none());
        all.clear();
        assert!(all.get(WorkloadId(1)).is_none());
    }

    #[test]
    fn instability_comes_from_observed_history_only() {
        let h = |pods, restarts, failures| WorkloadHistory {
            pods,
            restarts,
            oom_kills: 0,
            failures,
        };
        let cfg = RestraintConfig::default();
        assert_eq!(instability(&h(0, 0, 0)), 0.0);
        assert_eq!(instability(&h(0, 2, 1)), 3.0);
        assert_eq!(instability(&h(8, 2, 2)), 0.5);
        assert!(is_unstable(&h(8, 2, 2), &cfg));
        assert!(!is_unstable(&h(8, 2, 1), &cfg));
        assert!(!is_unstable(&h(2, 50, 50), &cfg));
        assert!(is_unstable(&h(3, 50, 50), &cfg));
        // the scenario's ground-truth flag is not consulted
        let mut spec = pod(0, 0);
        spec.behaviour.unstable = true;
        let mut p = pending(&spec);
        p.history = h(10, 0, 0);
        assert!(should_decline(Stressed, &p, 0.0, Some(&usual()), &cfg).is_none());
        assert!(instability(&h(1, u32::MAX, u32::MAX)) > 1e9);
    }

    #[test]
    fn restraint_config_validates_and_round_trips() {
        let cfg = RestraintConfig::default();
        assert_eq!(cfg.validate(), Ok(()));
        let bad = RestraintConfig {
            risk_margin: -1.0,
            ..cfg.clone()
        };
        assert_eq!(bad.validate(), Err(RestraintConfigError::RiskMargin(-1.0)));
        let bad = RestraintConfig {
            unstable_ratio: f32::NAN,
            ..cfg.clone()
        };
        assert!(bad.validate().is_err());
        let json = serde_json::to_string(&cfg).expect("serialise");
        assert_eq!(
            serde_json::from_str::<RestraintConfig>(&json).expect("deserialise"),
            cfg
        );
        let partial: RestraintConfig =
            serde_json::from_str(r#"{"min_level": "elevated", "risk_margin": 2}"#).expect("partial");
        assert_eq!((partial.min_level, partial.risk_margin), (Elevated, 2.0));
        // the old fixed threshold is refused by name
        assert!(serde_json::from_str::<RestraintConfig>(r#"{"ft_threshold": 0.5}"#).is_err());
    }
}
