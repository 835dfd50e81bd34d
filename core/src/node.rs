//! Nodes: what a node is (its spec, fixed for a run) and what it is doing now
//! (its state, which schedulers read through [`crate::ClusterView`]).

use crate::resources::Resources;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Index of a node within its cluster (stable for a run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How a node is bought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Provisioning {
    #[default]
    OnDemand,
    Spot,
}

/// The node pool a node belongs to: its machine type and price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePool {
    pub name: String,
    pub machine_type: String,
    /// US dollars per hour while the node is billed.
    pub hourly_price: f64,
    pub provisioning: Provisioning,
}

/// The effect of a taint, as in core/v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

/// A node taint, as in core/v1.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Taint {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub effect: TaintEffect,
}

impl std::fmt::Display for Taint {
    /// `key[=value]:Effect`, as kubectl, the kubelet's `--register-with-taints`
    /// and gcloud's `--node-taints` write a taint.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let effect = match self.effect {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        };
        match &self.value {
            Some(v) => write!(f, "{}={v}:{effect}", self.key),
            None => write!(f, "{}:{effect}", self.key),
        }
    }
}

/// What a node is, fixed for the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub pool: NodePool,
    pub capacity: Resources,
    /// capacity minus system and kube reservations: what pods may request
    pub allocatable: Resources,
    /// the node's pod limit (kubelet's maxPods)
    pub max_pods: u32,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub taints: Vec<Taint>,
}

impl NodeSpec {
    /// An on-demand node of pool "pool" (machine type "m") at `hourly_price`,
    /// all of `allocatable` usable, 110 pods, no labels or taints: the node
    /// tests, examples and benchmarks build clusters from.
    pub fn plain(name: impl Into<String>, allocatable: Resources, hourly_price: f64) -> NodeSpec {
        NodeSpec {
            name: name.into(),
            pool: NodePool {
                name: "pool".into(),
                machine_type: "m".into(),
                hourly_price,
                provisioning: Provisioning::OnDemand,
            },
            capacity: allocatable,
            allocatable,
            max_pods: 110,
            labels: BTreeMap::new(),
            taints: Vec::new(),
        }
    }
}

/// A node's health as the cluster sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum NodeCondition {
    /// Ready and healthy.
    #[default]
    Ready,
    /// Ready, but pods on it crash more often (a flaky disk, a noisy
    /// neighbour, kernel trouble). The default scheduler does not see this.
    Degraded,
    /// Not ready: its kubelet stopped reporting. Pods on it stop running and
    /// are evicted after their toleration time.
    NotReady,
}

impl NodeCondition {
    /// Ready in the core/v1 sense (Degraded nodes still report Ready).
    pub fn is_ready(self) -> bool {
        !matches!(self, NodeCondition::NotReady)
    }
}

/// Counts of recent trouble on a node, kept over a sliding window
/// ([`NodeState::RECENT_WINDOW`]) so schedulers can see where pods fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RecentTrouble {
    pub restarts: u32,
    pub oom_kills: u32,
    pub failures: u32,
}

/// What a node is doing now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeState {
    pub id: NodeId,
    pub spec: NodeSpec,
    pub condition: NodeCondition,
    /// cordoned (spec.unschedulable)
    pub unschedulable: bool,
    /// sum of the requests of pods bound to the node
    pub requested: Resources,
    /// kube-scheduler's `NonZeroRequested`: the same sum with each pod's
    /// missing cpu or memory request counted as 100m or 200Mi, which is what
    /// its NodeResourcesFit scores with. Every backend keeps it (the
    /// simulator and the kube cache); a hand-built state may leave it zero,
    /// so readers take the larger of it and `requested` per resource.
    #[serde(default)]
    pub non_zero_requested: Resources,
    /// sum of the actual usage of the node's running containers
    pub used: Resources,
    /// pods bound to the node (running, restarting or waiting to start)
    pub pod_count: u32,
    /// when the node joined the cluster
    pub since: Time,
    /// restarts, OOM kills and failures of pods on this node over the last
    /// [`NodeState::RECENT_WINDOW`]
    pub recent: RecentTrouble,
    /// when `condition` last changed (the join time until it does)
    #[serde(default)]
    pub condition_since: Time,
    /// the node's pods that set no memory limit
    #[serde(default)]
    pub unlimited: UnlimitedMemory,
    /// the node's memory use, smoothed, for its trend
    #[serde(default)]
    pub memory_trend: MemoryTrend,
}

/// The pods of a node that set no memory limit. Nothing stops their memory
/// from growing until the node itself runs short, so they are where a
/// node's memory-pressure kills come from. A backend that cannot see pod
/// usage leaves `excess_bytes` at 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UnlimitedMemory {
    pub pods: u32,
    /// Σ over those pods of max(0, memory used − memory requested): how far
    /// they have grown past what the scheduler reserved for them
    pub excess_bytes: u64,
}

/// A node's memory use smoothed exponentially with time constant
/// [`NodeState::MEMORY_TREND_TAU`], as of `at` (the last change of use).
/// `used − smoothed` is the recent trend: positive while use climbs.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryTrend {
    pub smoothed_bytes: f64,
    pub at: Time,
}

impl NodeState {
    /// How far back [`NodeState::recent`] looks.
    pub const RECENT_WINDOW: crate::Span = crate::Span(10 * 60 * 1000);
    /// Time constant of [`NodeState::memory_trend`] (five minutes).
    pub const MEMORY_TREND_TAU: crate::Span = crate::Span(5 * 60 * 1000);

    pub fn new(id: NodeId, spec: NodeSpec, since: Time) -> NodeState {
        NodeState {
            id,
            spec,
            condition: NodeCondition::Ready,
            unschedulable: false,
            requested: Resources::ZERO,
            non_zero_requested: Resources::ZERO,
            used: Resources::ZERO,
            pod_count: 0,
            since,
            recent: RecentTrouble::default(),
            condition_since: since,
            unlimited: UnlimitedMemory::default(),
            memory_trend: MemoryTrend {
                smoothed_bytes: 0.0,
                at: since,
            },
        }
    }

    /// Sets the condition, and `condition_since` when it changes.
    pub fn set_condition(&mut self, condition: NodeCondition, now: Time) {
        if self.condition != condition {
            self.condition = condition;
            self.condition_since = now;
        }
    }

    /// Sets the memory and cpu in use at `now`, first folding the use held
    /// since the last change into the smoothed memory.
    pub fn set_used(&mut self, used: Resources, now: Time) {
        let t = &mut self.memory_trend;
        if now > t.at {
            let dt = (now.0 - t.at.0) as f64 / NodeState::MEMORY_TREND_TAU.0 as f64;
            let keep = (-dt).exp();
            t.smoothed_bytes =
                self.used.memory_bytes as f64 + (t.smoothed_bytes - self.used.memory_bytes as f64) * keep;
            t.at = now;
        }
        self.used = used;
    }

    /// Memory in use minus its smoothed value (bytes; negative while use falls).
    pub fn memory_trend_bytes(&self) -> f64 {
        self.used.memory_bytes as f64 - self.memory_trend.smoothed_bytes
    }

    /// Allocatable minus requested (never negative).
    pub fn free(&self) -> Resources {
        self.spec.allocatable.saturating_sub(self.requested)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> NodeState {
        NodeState::new(
            NodeId(0),
            NodeSpec::plain("n", Resources::new(1000, 1 << 30), 1.0),
            Time(0),
        )
    }

    #[test]
    fn the_smoothed_memory_follows_use_with_its_time_constant() {
        let mut n = plain();
        n.set_used(Resources::new(0, 1000), Time(0));
        assert_eq!(n.memory_trend_bytes(), 1000.0);
        // one time constant later the smoothed value has come 1 − 1/e of the way
        let tau = NodeState::MEMORY_TREND_TAU.0;
        n.set_used(Resources::new(0, 1000), Time(tau));
        let want = 1000.0 * (1.0 - (-1.0f64).exp());
        assert!((n.memory_trend.smoothed_bytes - want).abs() < 1e-6);
        assert!(n.memory_trend_bytes() > 0.0);
        // use falling below the smoothed value reads as a negative trend
        n.set_used(Resources::new(0, 0), Time(tau + 1));
        assert!(n.memory_trend_bytes() < 0.0);
    }

    #[test]
    fn the_condition_remembers_when_it_changed() {
        let mut n = plain();
        n.set_condition(NodeCondition::Degraded, Time(5));
        n.set_condition(NodeCondition::Degraded, Time(9));
        assert_eq!((n.condition, n.condition_since), (NodeCondition::Degraded, Time(5)));
        n.set_condition(NodeCondition::Ready, Time(12));
        assert_eq!(n.condition_since, Time(12));
    }

    #[test]
    fn a_taint_reads_as_kubectl_writes_it() {
        let spot = Taint {
            key: "cloud.google.com/gke-spot".into(),
            value: Some("true".into()),
            effect: TaintEffect::NoSchedule,
        };
        assert_eq!(spot.to_string(), "cloud.google.com/gke-spot=true:NoSchedule");
        let bare = Taint {
            key: "dedicated".into(),
            value: None,
            effect: TaintEffect::NoExecute,
        };
        assert_eq!(bare.to_string(), "dedicated:NoExecute");
    }
}
