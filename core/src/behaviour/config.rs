//! The tunables of the pod-behaviour model, with the Kubernetes defaults they
//! stand for.

use serde::{Deserialize, Serialize};

/// Tunables of the pod-behaviour model and of the simulator's scheduling
/// queue. Every default mirrors a Kubernetes default where one exists; the
/// field docs name the source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Seconds from a pod's bind to its first container start. Default 1 s:
    /// well inside the 5 s p99 "pod startup latency" SLO of SIG Scalability
    /// (pre-pulled images, no init containers).
    pub container_start_seconds: f64,
    /// CrashLoopBackOff: delay before the first restart. Default 10 s
    /// (`backOffPeriod` in `pkg/kubelet/kubelet.go`).
    pub crash_backoff_initial_seconds: f64,
    /// CrashLoopBackOff: cap of the doubling delay. Default 300 s
    /// (`MaxContainerBackOff` in `pkg/kubelet/kubelet.go`).
    pub crash_backoff_max_seconds: f64,
    /// A container that ran this long before it exited restarts with the
    /// initial delay again. Default 600 s: the documented "10 minutes without
    /// any problems" (kubelet's back-off entries expire after twice
    /// `MaxContainerBackOff`).
    pub crash_backoff_reset_seconds: f64,
    /// Crash-hazard multiplier on a Degraded node. Default 5 (a modelling
    /// choice: a flaky node makes its pods crash several times as often).
    pub degraded_crash_factor: f64,
    /// Crash-hazard multiplier while the node is under memory pressure.
    /// Default 3 (a modelling choice: reclaim stalls and allocation failures).
    pub memory_pressure_crash_factor: f64,
    /// A node is under memory pressure while the memory used by its
    /// containers exceeds this fraction of its allocatable memory. Default 0.9.
    pub memory_pressure_threshold: f64,
    /// Mean seconds from the start of a container whose memory demand exceeds
    /// its limit to its OOM kill (exponentially distributed: the time the
    /// working set takes to grow past the limit). Default 20 s.
    pub oom_delay_mean_seconds: f64,
    /// tolerationSeconds the DefaultTolerationSeconds admission plugin gives
    /// pods without their own toleration for `node.kubernetes.io/unreachable`.
    /// Default 300 (`--default-unreachable-toleration-seconds`).
    pub default_toleration_seconds: u64,
    /// How often a growing container's memory use is brought up to date (and
    /// its node checked for pressure and OOM). Default 10 s: kubelet's
    /// housekeeping and eviction-manager period. The kill at the container's
    /// own limit is exact whatever this is.
    pub memory_growth_step_seconds: f64,
    /// Scheduling queue: back-off after the first failed attempt. Default 1 s
    /// (kube-scheduler's `podInitialBackoffSeconds`).
    pub scheduler_initial_backoff_seconds: f64,
    /// Scheduling queue: cap of the doubling back-off. Default 10 s
    /// (kube-scheduler's `podMaxBackoffSeconds`).
    pub scheduler_max_backoff_seconds: f64,
}

impl Default for ModelConfig {
    fn default() -> ModelConfig {
        ModelConfig {
            container_start_seconds: 1.0,
            crash_backoff_initial_seconds: 10.0,
            crash_backoff_max_seconds: 300.0,
            crash_backoff_reset_seconds: 600.0,
            degraded_crash_factor: 5.0,
            memory_pressure_crash_factor: 3.0,
            memory_pressure_threshold: 0.9,
            oom_delay_mean_seconds: 20.0,
            default_toleration_seconds: 300,
            memory_growth_step_seconds: 10.0,
            scheduler_initial_backoff_seconds: 1.0,
            scheduler_max_backoff_seconds: 10.0,
        }
    }
}

/// A [`ModelConfig`] field with a value the model cannot use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("model config: {field} = {value}: {reason}")]
pub struct ModelConfigError {
    pub field: &'static str,
    pub value: f64,
    pub reason: &'static str,
}

impl ModelConfig {
    /// Checks every field; a checked config cannot make the model misbehave.
    pub fn validate(&self) -> Result<(), ModelConfigError> {
        let non_negative = |field, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(ModelConfigError {
                    field,
                    value,
                    reason: "expected a finite number >= 0",
                })
            }
        };
        let positive = |field, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(ModelConfigError {
                    field,
                    value,
                    reason: "expected a finite number > 0",
                })
            }
        };
        non_negative("container_start_seconds", self.container_start_seconds)?;
        positive("crash_backoff_initial_seconds", self.crash_backoff_initial_seconds)?;
        positive("crash_backoff_max_seconds", self.crash_backoff_max_seconds)?;
        non_negative("crash_backoff_reset_seconds", self.crash_backoff_reset_seconds)?;
        non_negative("degraded_crash_factor", self.degraded_crash_factor)?;
        non_negative("memory_pressure_crash_factor", self.memory_pressure_crash_factor)?;
        positive("memory_pressure_threshold", self.memory_pressure_threshold)?;
        positive("oom_delay_mean_seconds", self.oom_delay_mean_seconds)?;
        positive("memory_growth_step_seconds", self.memory_growth_step_seconds)?;
        positive(
            "scheduler_initial_backoff_seconds",
            self.scheduler_initial_backoff_seconds,
        )?;
        positive("scheduler_max_backoff_seconds", self.scheduler_max_backoff_seconds)?;
        if self.crash_backoff_max_seconds < self.crash_backoff_initial_seconds {
            return Err(ModelConfigError {
                field: "crash_backoff_max_seconds",
                value: self.crash_backoff_max_seconds,
                reason: "must not be below crash_backoff_initial_seconds",
            });
        }
        if self.scheduler_max_backoff_seconds < self.scheduler_initial_backoff_seconds {
            return Err(ModelConfigError {
                field: "scheduler_max_backoff_seconds",
                value: self.scheduler_max_backoff_seconds,
                reason: "must not be below scheduler_initial_backoff_seconds",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_round_trip() {
        let c = ModelConfig::default();
        c.validate().unwrap();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<ModelConfig>(&json).unwrap(), c);
        let partial: ModelConfig = serde_json::from_str(r#"{"degraded_crash_factor": 2.0}"#).unwrap();
        assert_eq!(partial.degraded_crash_factor, 2.0);
        assert_eq!(partial.crash_backoff_max_seconds, 300.0);
    }

    #[test]
    fn rejects_bad_values() {
        let bad = ModelConfig {
            oom_delay_mean_seconds: 0.0,
            ..Default::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "oom_delay_mean_seconds");
        let inverted = ModelConfig {
            crash_backoff_max_seconds: 5.0,
            ..Default::default()
        };
        assert_eq!(inverted.validate().unwrap_err().field, "crash_backoff_max_seconds");
        assert!(serde_json::from_str::<ModelConfig>(r#"{"nope": 1}"#).is_err());
    }
}
