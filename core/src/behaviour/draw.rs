//! The random draws of one container start.
//!
//! Each start of a container has its own stream, keyed by the pod's slot, the
//! slot's incarnation (how many pods the owner made for the slot before this
//! one) and the start number, never by the [`crate::PodId`]: PodIds depend on
//! the order in which things happened in an arm, slots do not. All arms of a
//! seed therefore draw the same usage, run time and crash budget for the same
//! start of the same slot ("common random numbers").

use super::config::ModelConfig;
use crate::dist::Dist;
use crate::pod::{PodSlot, PodSpec};
use crate::resources::Resources;
use crate::rng::{purpose, stream};
use crate::time::Span;
use rand_distr::{Distribution, Exp1};

/// What one container start draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContainerDraw {
    /// usage as the node accounts it: cpu capped at the cpu limit (the cgroup
    /// throttles above it), memory capped at the memory limit (the cgroup
    /// never grants more; the container is OOM-killed instead)
    pub usage: Resources,
    /// the memory the container wants, limit or not
    pub memory_demand: u64,
    /// time to successful completion; None for long-running containers
    pub run_time: Option<Span>,
    /// a unit-exponential draw: the container crashes once its accumulated
    /// crash hazard reaches it
    pub crash_budget: f64,
    /// time from the start to the OOM kill, used when the demand exceeds the
    /// memory limit
    pub oom_delay: Span,
    /// memory growth while running, bytes per millisecond (0: flat)
    pub memory_growth_per_ms: f64,
}

impl ContainerDraw {
    /// Whether the container wants more memory than its limit grants.
    pub fn exceeds_memory_limit(&self, spec: &PodSpec) -> bool {
        spec.memory_limit().is_some_and(|limit| self.memory_demand > limit)
    }
}

/// The draws of start number `start` (0 for the first) of incarnation
/// `incarnation` of `slot`.
pub fn draw_container(
    seed: u64,
    slot: PodSlot,
    incarnation: u32,
    start: u32,
    spec: &PodSpec,
    config: &ModelConfig,
) -> ContainerDraw {
    let mut rng = stream(
        seed,
        &[
            purpose::POD_BEHAVIOUR,
            u64::from(slot.workload.0),
            u64::from(slot.ordinal),
            u64::from(incarnation),
            u64::from(start),
        ],
    );
    // fixed draw order: every field always consumes its draws
    let cpu = spec.behaviour.cpu_usage.sample(&mut rng).round() as u64;
    let memory_demand = spec.behaviour.memory_usage.sample(&mut rng).round() as u64;
    let crash_budget: f64 = Exp1.sample(&mut rng);
    let oom_delay = Span::from_secs_f64(
        Dist::Exponential {
            mean: config.oom_delay_mean_seconds,
        }
        .sample(&mut rng),
    );
    let run_time = spec
        .behaviour
        .run_seconds
        .as_ref()
        .map(|d| Span::from_secs_f64(d.sample(&mut rng)));
    // drawn last, and only when asked for, so scenarios without growth keep
    // every draw they had before growth existed
    let memory_growth_per_ms = spec
        .behaviour
        .memory_growth_per_hour
        .as_ref()
        .map_or(0.0, |d| d.sample(&mut rng).max(0.0) / 3_600_000.0);
    let cpu_limit = spec.limits.map(|l| l.cpu_milli).filter(|&c| c > 0);
    let usage = Resources::new(
        cpu_limit.map_or(cpu, |l| cpu.min(l)),
        spec.memory_limit().map_or(memory_demand, |l| memory_demand.min(l)),
    );
    ContainerDraw {
        usage,
        memory_demand,
        run_time,
        crash_budget,
        oom_delay,
        memory_growth_per_ms: if memory_growth_per_ms.is_finite() {
            memory_growth_per_ms
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::WorkloadId;
    use crate::testing::PodSpecChanges;

    fn spec(limits: Option<Resources>) -> PodSpec {
        let spec = crate::testing::pod(100, 100 << 20)
            .usage(
                Dist::Uniform { min: 50.0, max: 500.0 },
                Dist::Uniform {
                    min: 50.0 * 1048576.0,
                    max: 400.0 * 1048576.0,
                },
            )
            .run_seconds(Dist::Exponential { mean: 60.0 })
            .crash_rate(1.0);
        PodSpec { limits, ..spec }
    }

    fn slot(ordinal: u32) -> PodSlot {
        PodSlot {
            workload: WorkloadId(3),
            ordinal,
        }
    }

    #[test]
    fn same_keys_same_draws_other_keys_other_draws() {
        let c = ModelConfig::default();
        let s = spec(None);
        let a = draw_container(7, slot(1), 0, 0, &s, &c);
        assert_eq!(a, draw_container(7, slot(1), 0, 0, &s, &c));
        assert_ne!(a, draw_container(7, slot(2), 0, 0, &s, &c));
        assert_ne!(a, draw_container(7, slot(1), 1, 0, &s, &c));
        assert_ne!(a, draw_container(7, slot(1), 0, 1, &s, &c));
        assert_ne!(a, draw_container(8, slot(1), 0, 0, &s, &c));
    }

    #[test]
    fn limits_cap_usage_but_not_demand() {
        let c = ModelConfig::default();
        let limited = spec(Some(Resources::new(60, 60 << 20)));
        let mut capped = 0;
        for ordinal in 0..200 {
            let d = draw_container(1, slot(ordinal), 0, 0, &limited, &c);
            assert!(d.usage.cpu_milli <= 60);
            assert!(d.usage.memory_bytes <= 60 << 20);
            assert_eq!(d.exceeds_memory_limit(&limited), d.memory_demand > 60 << 20);
            if d.exceeds_memory_limit(&limited) {
                capped += 1;
                assert_eq!(d.usage.memory_bytes, 60 << 20);
            }
        }
        // uniform 50..400 MiB passes 60 MiB most of the time
        assert!(capped > 150, "{capped}");
        // a zero dimension is no limit
        let mem_only = spec(Some(Resources::new(0, 1 << 40)));
        let d = draw_container(1, slot(0), 0, 0, &mem_only, &c);
        assert!(d.usage.cpu_milli >= 50);
        assert!(!d.exceeds_memory_limit(&mem_only));
    }
}
