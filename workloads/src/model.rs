//! A scenario after params were substituted and every value checked: what
//! `expand` turns into a timeline.

use crate::error::Loc;
use schedlab_core::{ClaimUse, Dist, NodePool, PodSpec, Resources, Span, Taint};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Model {
    pub name: String,
    pub description: String,
    pub duration: Span,
    pub sample_interval: Span,
    pub pools: Vec<Pool>,
    /// in the order of their names; a template's index is its workload id
    pub templates: Vec<Template>,
    pub phases: Vec<Phase>,
    /// the claims the scenario declares it tests, in the order written
    pub claims: Vec<ClaimUse>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pool {
    pub pool: NodePool,
    pub count: u32,
    pub capacity: Resources,
    pub allocatable: Resources,
    pub max_pods: u32,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    pub name: String,
    pub spec: PodSpec,
    pub recreate: bool,
    /// made by a `replay` phase from its pods (so the resolved form leaves
    /// it out: the phase makes it again on load)
    pub from_trace: bool,
    /// how each pod's requests and usage are drawn, when they vary by pod
    pub sizing: Sizing,
}

/// Where a pod's use of one resource comes from.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum UsageSource {
    /// the template's `usage` distribution (in `spec.behaviour`), whatever
    /// the pod requests; also a trace workload's, already scaled
    #[default]
    Written,
    /// the pod's own request (the default when `usage` is left out)
    Requests,
    /// a multiple of the pod's own request (`usage_ratio`)
    Ratio(Dist),
}

/// A template's requests drawn per pod slot, and how its pods' limits and
/// usage follow them. With nothing drawn, every pod uses the template's spec.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Sizing {
    /// the cpu request's distribution (millicores); None: the constant in the spec
    pub cpu: Option<Dist>,
    /// the memory request's distribution (bytes); None: the constant in the spec
    pub memory: Option<Dist>,
    pub cpu_usage: UsageSource,
    pub memory_usage: UsageSource,
}

impl Sizing {
    /// Whether some request is drawn per pod (and so may differ between pods).
    pub(crate) fn draws(&self) -> bool {
        self.cpu.is_some() || self.memory.is_some()
    }
}

/// How a trace's qos class becomes a pod spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct QosClass {
    pub priority: i32,
    /// limits equal to the requests (Kubernetes' Guaranteed QoS); otherwise
    /// no limits (Burstable)
    pub guaranteed: bool,
}

/// One pod of a trace, in scenario time from the phase's start.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReplayPod {
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub qos: String,
    pub template: usize,
    pub at: Span,
    /// deleted for good then; None: runs to the scenario's end
    pub until: Option<Span>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Replay {
    pub format: String,
    /// the classes the phase maps, by trace qos value
    pub classes: BTreeMap<String, QosClass>,
    /// usage as a multiple of the requests (cpu, memory)
    pub usage_ratio: (schedlab_core::Dist, schedlab_core::Dist),
    pub gpu_rows: String,
    /// sorted by `at`
    pub pods: Vec<ReplayPod>,
}

/// How a create phase spaces its pods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Pacing {
    AllAtOnce,
    /// pods per second
    Rate(f64),
    /// evenly over this span
    Over(Span),
    /// the rate moves linearly from `from` to `to` pods per second
    Ramp {
        from: f64,
        to: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NodeFault {
    pub count: u32,
    pub pool: Option<usize>,
    pub recover_after: Option<Span>,
    /// degrade_nodes only: the nodes fail this long after they degrade
    pub fail_after: Option<Span>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NodeLoss {
    pub pool: Option<usize>,
    pub rate_per_node_hour: f64,
    pub period: Span,
    pub replace_after: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PhaseKind {
    Create {
        template: usize,
        count: u32,
        pacing: Pacing,
    },
    Churn {
        template: usize,
        fraction: f64,
        every: Span,
        period: Span,
    },
    KillPods {
        template: usize,
        count: u32,
    },
    DeletePods {
        template: usize,
        count: u32,
    },
    FailNodes(NodeFault),
    DegradeNodes(NodeFault),
    RecoverNodes {
        count: Option<u32>,
        pool: Option<usize>,
    },
    LoseNodes(NodeLoss),
    ZoneOutage {
        zone: String,
        recover_after: Option<Span>,
    },
    Replay(Box<Replay>),
    Wait(Span),
}

/// Where a phase was written, for the errors found while expanding it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PhaseSource {
    /// `phases[3].kill_pods`
    pub path: String,
    /// the count as written (with its expression's result), if the phase has one
    pub count_shown: Option<String>,
    pub count_loc: Option<Loc>,
    pub at_loc: Option<Loc>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Phase {
    /// absolute start; None: when the previous phase ends
    pub at: Option<Span>,
    pub kind: PhaseKind,
    pub source: PhaseSource,
}
