//! Pods: their spec (what a workload template asks for) and identity.

use crate::dist::Dist;
use crate::node::TaintEffect;
use crate::resources::Resources;
use serde::{Deserialize, Serialize};

/// A pod incarnation, unique within a run. A pod recreated by its owner gets
/// a new id but keeps its [`PodSlot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PodId(pub u64);

/// Index of a workload within a timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WorkloadId(pub u32);

/// A replica slot of a workload: stays the same when the owner recreates the
/// pod, so the same slot gets the same random draws in every arm of a seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PodSlot {
    pub workload: WorkloadId,
    pub ordinal: u32,
}

/// Quality of service class, derived from requests and limits as in
/// `pkg/apis/core/v1/helper/qos/qos.go`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum QosClass {
    Guaranteed,
    Burstable,
    BestEffort,
}

/// core/v1 restart policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum RestartPolicy {
    #[default]
    Always,
    OnFailure,
    Never,
}

/// The operator of a toleration, as in core/v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum TolerationOperator {
    #[default]
    Equal,
    Exists,
}

/// A toleration, as in core/v1.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Toleration {
    /// empty with `Exists` tolerates every taint
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub operator: TolerationOperator,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// None tolerates every effect
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
    /// for NoExecute: how long the pod stays after the taint appears
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<u64>,
}

impl Toleration {
    /// Whether this toleration tolerates `taint`, following
    /// `k8s.io/api/core/v1/toleration.go` `ToleratesTaint`.
    pub fn tolerates(&self, taint: &crate::node::Taint) -> bool {
        if let Some(effect) = self.effect
            && effect != taint.effect
        {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.operator {
            TolerationOperator::Exists => true,
            TolerationOperator::Equal => self.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        }
    }
}

/// How a pod's containers behave once started: drawn afresh at every
/// container start from the pod's own seeded random stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Behaviour {
    /// actual cpu use in millicores
    pub cpu_usage: Dist,
    /// actual memory use in bytes (may exceed the request, and the limit)
    pub memory_usage: Dist,
    /// seconds until the container completes successfully; None: runs until deleted
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_seconds: Option<Dist>,
    /// how fast a running container's memory grows (a leak), bytes per hour
    /// of running, drawn at each start; it grows from its start value until
    /// the container's memory limit OOM-kills it, or without a limit until
    /// the node's OOM killer picks a victim. None: memory use is flat
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_growth_per_hour: Option<Dist>,
    /// base crash hazard, crashes per hour of running on a healthy node
    #[serde(default)]
    pub crash_rate_per_hour: f64,
    /// how the crash hazard grows with the container's age: at `a` hours of
    /// running it is `crash_rate_per_hour × (1 + g·a)` (a wear-out process);
    /// 0: constant over the container's life
    #[serde(default, skip_serializing_if = "is_zero")]
    pub crash_rate_growth_per_hour: f64,
    /// marked unstable by its workload (the scenario's "unstable" pods); the
    /// model does not use this, schedulers may
    #[serde(default)]
    pub unstable: bool,
}

/// What a pod asks for. Every pod of a workload shares one spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PodSpec {
    pub requests: Resources,
    /// None: no limit on either resource; a zero dimension means no limit on it
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Resources>,
    #[serde(default)]
    pub priority: i32,
    pub scheduler_name: String,
    #[serde(default)]
    pub restart_policy: RestartPolicy,
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    pub behaviour: Behaviour,
}

impl PodSpec {
    /// QoS class as kubelet derives it for a single-container pod.
    pub fn qos_class(&self) -> QosClass {
        if self.requests.is_zero() && self.limits.is_none_or(|l| l.is_zero()) {
            return QosClass::BestEffort;
        }
        match self.limits {
            Some(l)
                if l.cpu_milli > 0
                    && l.memory_bytes > 0
                    && l.cpu_milli == self.requests.cpu_milli
                    && l.memory_bytes == self.requests.memory_bytes =>
            {
                QosClass::Guaranteed
            }
            _ => QosClass::Burstable,
        }
    }

    /// The memory limit in bytes, if any.
    pub fn memory_limit(&self) -> Option<u64> {
        self.limits.map(|l| l.memory_bytes).filter(|&m| m > 0)
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Taint;

    fn spec(requests: Resources, limits: Option<Resources>) -> PodSpec {
        // a pod(0, 0) uses nothing, whatever it requests
        PodSpec {
            requests,
            limits,
            ..crate::testing::pod(0, 0)
        }
    }

    #[test]
    fn qos_classes() {
        assert_eq!(spec(Resources::ZERO, None).qos_class(), QosClass::BestEffort);
        let r = Resources::new(100, 1 << 20);
        assert_eq!(spec(r, Some(r)).qos_class(), QosClass::Guaranteed);
        assert_eq!(spec(r, None).qos_class(), QosClass::Burstable);
        assert_eq!(
            spec(r, Some(Resources::new(200, 1 << 20))).qos_class(),
            QosClass::Burstable
        );
    }

    #[test]
    fn tolerations_match_taints() {
        let taint = Taint {
            key: "spot".into(),
            value: Some("true".into()),
            effect: TaintEffect::NoSchedule,
        };
        let exists_all = Toleration {
            operator: TolerationOperator::Exists,
            ..Default::default()
        };
        assert!(exists_all.tolerates(&taint));
        let equal = Toleration {
            key: "spot".into(),
            value: Some("true".into()),
            ..Default::default()
        };
        assert!(equal.tolerates(&taint));
        let wrong_value = Toleration {
            key: "spot".into(),
            value: Some("false".into()),
            ..Default::default()
        };
        assert!(!wrong_value.tolerates(&taint));
        let wrong_effect = Toleration {
            effect: Some(TaintEffect::NoExecute),
            ..equal.clone()
        };
        assert!(!wrong_effect.tolerates(&taint));
    }
}
