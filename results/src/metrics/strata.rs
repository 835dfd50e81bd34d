//! Per priority class: how fast, how safely and where the mission-critical
//! pods were placed, against every other pod.

use super::{StrataMetrics, StratumMetrics};
use crate::stats::{Observation, kaplan_meier_quantile};
use schedlab_core::Time;

/// What the stratum metrics need of one pod incarnation.
#[derive(Debug, Clone, Copy)]
pub(super) struct StratumPod {
    pub priority: i32,
    pub created: Time,
    pub first_bound: Option<Time>,
    /// when a pod deleted before it was ever bound was deleted
    pub deleted_pending: Option<Time>,
    pub failures: u32,
    pub binds: u32,
    pub degraded_binds: u32,
}

fn stratum<'a>(pods: impl Iterator<Item = &'a StratumPod>, end: Time) -> StratumMetrics {
    let mut observations = Vec::new();
    let (mut bound, mut failures, mut binds, mut degraded) = (0u64, 0u64, 0u64, 0u64);
    for p in pods {
        observations.push(match p.first_bound {
            Some(t) => Observation {
                time: t.since(p.created).as_millis(),
                event: true,
            },
            // never bound: all we know is that it waited at least this long
            None => Observation {
                time: p.deleted_pending.unwrap_or(end).since(p.created).as_millis(),
                event: false,
            },
        });
        if p.first_bound.is_some() {
            bound += 1;
        }
        failures += u64::from(p.failures);
        binds += u64::from(p.binds);
        degraded += u64::from(p.degraded_binds);
    }
    let quantile_s = |q: f64| kaplan_meier_quantile(&observations, q).map(|ms| ms as f64 / 1000.0);
    StratumMetrics {
        pods: observations.len() as u64,
        bound,
        bind_p50_s: quantile_s(0.5),
        bind_p99_s: quantile_s(0.99),
        failures_per_pod: (bound > 0).then(|| failures as f64 / bound as f64),
        degraded_binds: degraded,
        degraded_bind_share: (binds > 0).then(|| degraded as f64 / binds as f64),
    }
}

/// "critical": the pods at the run's highest priority, when it is above 0
/// and some pod has a lower one; "rest": every other pod (all of them when
/// there is no critical stratum).
pub(super) fn strata(pods: &[StratumPod], end: Time) -> StrataMetrics {
    let highest = pods.iter().map(|p| p.priority).max();
    let critical_priority = highest.filter(|&h| h > 0 && pods.iter().any(|p| p.priority < h));
    match critical_priority {
        Some(h) => StrataMetrics {
            critical_priority: Some(h),
            critical: Some(stratum(pods.iter().filter(|p| p.priority == h), end)),
            rest: stratum(pods.iter().filter(|p| p.priority != h), end),
        },
        None => StrataMetrics {
            critical_priority: None,
            critical: None,
            rest: stratum(pods.iter(), end),
        },
    }
}
