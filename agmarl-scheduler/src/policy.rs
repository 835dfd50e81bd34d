//! The policy the bind loop asks: AGMARL-DKS from the bundled checkpoint or
//! a file, or the monolithic foil (a DRS network trained for this cluster's
//! size), timed and counted into the metrics.

use crate::metrics::{Answer, Metrics};
use schedlab_core::{ClusterView, PendingPod, Placement};
use scheduler::Scheduler;
use scheduler::agmarl::{AgmarlConfig, AgmarlScheduler, CheckpointError, checkpoint};
use scheduler::drs::{DrsError, DrsMeta, DrsScheduler};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What decides.
pub enum Policy {
    /// AGMARL-DKS, the full method
    Agmarl(Box<AgmarlScheduler>),
    /// the monolithic foil (`drs` or `drs-agmarl-reward`): one Q-network over
    /// every node, for a cluster of the size it was trained for
    Drs(Box<DrsScheduler>),
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Policy").field(&self.arm()).finish()
    }
}

impl Policy {
    fn scheduler(&mut self) -> &mut dyn Scheduler {
        match self {
            Policy::Agmarl(p) => p.as_mut(),
            Policy::Drs(p) => p.as_mut(),
        }
    }

    /// The arm's name (`agmarl`, `drs`, `drs-agmarl-reward`).
    pub fn arm(&self) -> &str {
        match self {
            Policy::Agmarl(p) => p.name(),
            Policy::Drs(p) => p.name(),
        }
    }

    /// Puts AGMARL's stress level and objective order into `metrics` (the
    /// foil has neither: its gauges stay at their calm, unranked start).
    pub fn export_state(&self, metrics: &Metrics) {
        if let Policy::Agmarl(p) = self {
            metrics.set_policy_state(p.decision_level(), p.objective_order());
        }
    }
}

/// The policy, shared by the bind loops of successive leadership terms so
/// the controller's stress state carries over.
pub type SharedPolicy = Arc<Mutex<Policy>>;

/// AGMARL-DKS (the full method) with the checkpoint at `path`, or the one
/// built into the binary, and the controller settings `config` (with
/// DefaultPreemption unless they turn it off: the bind loop carries
/// preemptions out as kube-scheduler does). Errors name the file at fault.
pub fn load(path: Option<&Path>, config: AgmarlConfig, seed: u64) -> scheduler::Result<SharedPolicy> {
    let (net, meta) = match path {
        Some(p) if !p.exists() => {
            return Err(CheckpointError::Missing {
                file: p.display().to_string(),
            }
            .into());
        }
        Some(p) => checkpoint::load(p)?,
        None => checkpoint::bundled()?,
    };
    tracing::info!(
        checkpoint = %path.map_or_else(|| checkpoint::BUNDLED_ORIGIN.to_string(), |p| p.display().to_string()),
        hyper = ?meta.hyper,
        preemption = config.preemption,
        "policy loaded"
    );
    // the heads' measured errors: the selection's tolerance and the learned restraint's margin
    let measured = meta.measured_error();
    Ok(Arc::new(Mutex::new(Policy::Agmarl(Box::new(
        AgmarlScheduler::new(net, config, seed).with_measured_error(measured),
    )))))
}

/// The monolithic foil from the DRS checkpoint at `path` (with
/// DefaultPreemption, as every arm of the lab), and what its sidecar says:
/// the caller checks the cluster's size against it
/// ([`DrsMeta::check_cluster`]) before the first decision. Errors name the
/// file.
pub fn load_drs(path: &Path, seed: u64) -> Result<(SharedPolicy, DrsMeta), DrsError> {
    let (net, meta) = scheduler::drs::checkpoint::load(path)?;
    let weights = net.weights()?;
    tracing::info!(
        checkpoint = %path.display(),
        arm = meta.reward.arm_name(),
        nodes = meta.nodes,
        "policy loaded (the monolithic foil)"
    );
    let policy = DrsScheduler::new(meta.reward, weights, seed);
    Ok((Arc::new(Mutex::new(Policy::Drs(Box::new(policy)))), meta))
}

/// One decision with `policy`, recorded in `metrics`.
pub fn decide(policy: &mut Policy, metrics: &Metrics, pod: &PendingPod<'_>, view: &ClusterView<'_>) -> Placement {
    let started = Instant::now();
    let placement = policy.scheduler().schedule(pod, view);
    let answer = match &placement {
        Placement::Bind(_) => Answer::Bind,
        Placement::Decline { .. } => Answer::Decline,
        Placement::Unschedulable { .. } => Answer::Unschedulable,
        Placement::Preempt { .. } => Answer::Preempt,
    };
    metrics.record_decision(answer, started.elapsed());
    policy.export_state(metrics);
    placement
}

/// The shared policy as one bind loop calls it, its decisions counted.
struct Counted {
    policy: SharedPolicy,
    metrics: Arc<Metrics>,
}

impl Scheduler for Counted {
    fn name(&self) -> &str {
        "agmarl"
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, view: &ClusterView<'_>) -> Placement {
        // A poisoned lock means an earlier decision panicked; the policy's
        // state is plain data and still usable.
        let mut policy = self.policy.lock().unwrap_or_else(|p| p.into_inner());
        decide(&mut policy, &self.metrics, pod, view)
    }
}

/// The policy of one bind loop.
pub fn placer(policy: SharedPolicy, metrics: Arc<Metrics>) -> Box<dyn Scheduler> {
    Box::new(Counted { policy, metrics })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_checkpoint_names_the_file() {
        let err = load(
            Some(Path::new("/nonexistent/agmarl.safetensors")),
            AgmarlConfig::default(),
            0,
        )
        .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/agmarl.safetensors"), "{err}");
    }

    #[test]
    fn a_damaged_checkpoint_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let weights = dir.path().join("bad.safetensors");
        std::fs::write(&weights, b"not safetensors").unwrap();
        std::fs::write(dir.path().join("bad.json"), b"{}").unwrap();
        let err = load(Some(&weights), AgmarlConfig::default(), 0).unwrap_err();
        assert!(err.to_string().contains("bad."), "{err}");
    }

    #[test]
    fn decisions_are_timed_and_counted() {
        use scheduler::testing::{cluster, node, pending, pod, view};
        let policy = load(None, AgmarlConfig::default(), 0).unwrap();
        let metrics = Metrics::new();
        let nodes = cluster([node("a"), node("b")]);
        let small = pod().cpu("1").build();
        let huge = pod().cpu("1000").build();
        let mut p = policy.lock().unwrap();
        assert!(matches!(
            decide(&mut p, &metrics, &pending(&small), &view(&nodes)),
            Placement::Bind(_)
        ));
        assert!(matches!(
            decide(&mut p, &metrics, &pending(&huge), &view(&nodes)),
            Placement::Unschedulable { .. }
        ));
        let text = metrics.encode().unwrap();
        let value = |series: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse::<f64>().ok())
        };
        assert_eq!(value("agmarl_decisions_total"), Some(2.0));
        assert_eq!(value("agmarl_unschedulable_total"), Some(1.0));
        assert_eq!(value("agmarl_declines_total"), Some(0.0));
        assert_eq!(value("agmarl_decision_latency_seconds_count"), Some(2.0));
        // a calm two-node cluster: the calm order, cost first
        assert_eq!(value(r#"agmarl_objective_rank{objective="cost"}"#), Some(1.0));
        assert_eq!(value("agmarl_stress_level"), Some(0.0));
    }

    #[test]
    fn a_pod_no_node_takes_preempts_unless_the_config_says_not() {
        use schedlab_core::testing::{PodSpecChanges, pod};
        use scheduler::testing::{bound_pod, cluster, node, pending, view_with_pods};
        let pods = vec![vec![bound_pod(7, 0, 3000, 1)]];
        let urgent = pod(2000, 0).priority(100);
        let answer = |config: AgmarlConfig| {
            let policy = load(None, config, 0).unwrap();
            let metrics = Metrics::new();
            let mut nodes = cluster([node("a").cpu("4").memory("16Gi")]);
            let view = view_with_pods(&mut nodes, &pods, &[]);
            let mut p = policy.lock().unwrap();
            let placement = decide(&mut p, &metrics, &pending(&urgent), &view);
            (placement, metrics.encode().unwrap())
        };
        let (placement, text) = answer(AgmarlConfig::default());
        let Placement::Preempt { node, victims, .. } = placement else {
            panic!("no preemption: {placement:?}");
        };
        assert_eq!(
            (node, victims),
            (schedlab_core::NodeId(0), vec![schedlab_core::PodId(7)])
        );
        let value = |text: &str, series: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse::<f64>().ok())
        };
        assert_eq!(value(&text, "agmarl_preemptions_total"), Some(1.0));
        assert_eq!(value(&text, "agmarl_unschedulable_total"), Some(0.0));
        let (placement, text) = answer(AgmarlConfig {
            preemption: false,
            ..AgmarlConfig::default()
        });
        assert!(matches!(placement, Placement::Unschedulable { .. }), "{placement:?}");
        assert_eq!(value(&text, "agmarl_preemptions_total"), Some(0.0));
        assert_eq!(value(&text, "agmarl_unschedulable_total"), Some(1.0));
    }

    #[test]
    fn the_foil_decides_and_is_counted_without_a_stress_state() {
        use scheduler::testing::{cluster, node, pending, pod, view};
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scheduler/checkpoints/drs/drs-n10.safetensors");
        let (policy, meta) = load_drs(&file, 0).unwrap();
        assert_eq!((meta.nodes, policy.lock().unwrap().arm()), (10, "drs"));
        assert!(meta.check_cluster("f", 10).is_ok());
        assert!(
            meta.check_cluster("f", 11)
                .unwrap_err()
                .to_string()
                .contains("trained for 10 nodes")
        );
        let metrics = Metrics::new();
        let nodes = cluster([node("a"), node("b")]);
        let small = pod().cpu("1").build();
        let placement = decide(&mut policy.lock().unwrap(), &metrics, &pending(&small), &view(&nodes));
        assert!(matches!(placement, Placement::Bind(_)), "{placement:?}");
        let text = metrics.encode().unwrap();
        assert!(text.contains("agmarl_decisions_total 1"), "{text}");
        assert!(text.contains("agmarl_stress_level 0"), "{text}");
        let missing = load_drs(Path::new("/nonexistent/drs.safetensors"), 0).unwrap_err();
        assert!(
            missing.to_string().contains("/nonexistent/drs.safetensors"),
            "{missing}"
        );
    }

    #[test]
    fn the_bundled_checkpoint_loads() {
        let policy = load(None, AgmarlConfig::default(), 3).unwrap();
        let Policy::Agmarl(p) = &*policy.lock().unwrap() else {
            panic!("not AGMARL")
        };
        assert_eq!(p.seed(), 3);
        assert_eq!(p.name(), "agmarl");
    }
}
