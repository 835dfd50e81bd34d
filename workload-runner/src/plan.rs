//! What one start of the container does, computed purely from the settings
//! and the start number with the model's own draws
//! (`schedlab_core::behaviour::draw_container`), so that a real pod and the node
//! emulator playing the same slot agree on usage and on how and when each
//! start ends.
//!
//! How a start ends follows `PodLifecycle::start_container`: a completion
//! after the drawn run time, an OOM kill after the drawn OOM delay when the
//! memory demand exceeds the limit or when its leak reaches the limit (held
//! flat until then, then grown past it at once), a crash once the crash hazard used up the
//! drawn budget; the earliest wins, ties in the order the lifecycle sets its
//! timers (completion, OOM, crash). The crash hazard is the healthy-node rate:
//! a real container cannot tell that its node is Degraded or under memory
//! pressure, which the model's hazard factors stand for.

use crate::settings::Settings;
use schedlab_core::behaviour::{crash_after_start, draw_container, leak_reaches_limit};
use schedlab_core::pod::{PodSpec, RestartPolicy};
use schedlab_core::resources::Resources;
use schedlab_core::time::Span;
use serde::{Serialize, Serializer};
use std::time::Duration;

/// Memory left free below a memory limit for the program itself (code,
/// stacks, allocator), so that holding the model's usage — which the limit
/// caps — does not trip the limit by itself.
pub const RUNTIME_RESERVE: u64 = 8 << 20;

/// How a start ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndKind {
    /// the run time is over: exit 0
    Complete,
    /// the memory demand passes the limit: grow until the kernel kills it
    OomLimit,
    /// the crash hazard used up its budget: exit 1
    Crash,
}

/// When and how a start ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct End {
    pub kind: EndKind,
    /// after this much scenario time since the start, in milliseconds
    pub scenario_ms: u64,
    /// after this much wall time since the start (scenario time / time scale)
    #[serde(rename = "wall_seconds", serialize_with = "seconds")]
    pub wall: Duration,
}

fn seconds<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// One start of the container.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub pod_id: u64,
    /// the start's number (0 for the first), the model's restart count
    pub start: u32,
    /// cpu to burn, in millicores (the model's usage: the draw capped at the limit)
    pub cpu_milli: u64,
    /// memory the model accounts (the draw capped at the limit)
    pub memory_bytes: u64,
    /// memory the draw wants, limit or not
    pub memory_demand: u64,
    pub memory_limit: Option<u64>,
    /// memory held from the start: the model's usage, kept
    /// [`RUNTIME_RESERVE`] below a limit
    pub hold_bytes: u64,
    /// for an OOM end: memory to grow to, past the limit
    pub grow_to_bytes: Option<u64>,
    /// None: runs until stopped
    pub end: Option<End>,
    pub time_scale: f64,
}

impl Plan {
    /// The plan of start number `start` of the pod `settings` describe.
    pub fn new(settings: &Settings, start: u32) -> Plan {
        let spec = pod_spec(settings);
        let draw = draw_container(
            settings.seed,
            settings.slot,
            settings.incarnation,
            start,
            &spec,
            &settings.model,
        );
        let memory_limit = spec.memory_limit();
        let oom = draw.exceeds_memory_limit(&spec);

        // in the order the lifecycle sets its timers: earlier ones win ties
        let mut ends: Vec<(EndKind, Span)> = Vec::with_capacity(3);
        if let Some(run) = draw.run_time {
            ends.push((EndKind::Complete, run));
        }
        if oom {
            ends.push((EndKind::OomLimit, draw.oom_delay));
        } else if let Some(after) = leak_reaches_limit(&draw, &spec) {
            // the leak reaches the limit then: the start holds its usage
            // until that moment and then grows past the limit at once
            ends.push((EndKind::OomLimit, after));
        }
        if let Some(crash) = crash_after_start(&spec, draw.crash_budget) {
            ends.push((EndKind::Crash, crash));
        }
        let end = ends
            .iter()
            .enumerate()
            .min_by_key(|(i, (_, at))| (*at, *i))
            .and_then(|(_, &(kind, at))| {
                // a wall time too far out to represent never comes
                let wall = Duration::try_from_secs_f64(at.as_secs_f64() / settings.time_scale).ok()?;
                Some(End {
                    kind,
                    scenario_ms: at.as_millis(),
                    wall,
                })
            });

        let hold_bytes = match memory_limit {
            Some(limit) => draw.usage.memory_bytes.min(limit.saturating_sub(reserve_below(limit))),
            None => draw.usage.memory_bytes,
        };
        let grow_to_bytes = match (end, memory_limit) {
            (
                Some(End {
                    kind: EndKind::OomLimit,
                    ..
                }),
                Some(limit),
            ) => Some(limit.saturating_add(RUNTIME_RESERVE.max(limit / 8))),
            _ => None,
        };
        Plan {
            pod_id: settings.pod.0,
            start,
            cpu_milli: draw.usage.cpu_milli,
            memory_bytes: draw.usage.memory_bytes,
            memory_demand: draw.memory_demand,
            memory_limit,
            hold_bytes,
            grow_to_bytes,
            end,
            time_scale: settings.time_scale,
        }
    }

    /// The model's usage of this start.
    pub fn usage(&self) -> Resources {
        Resources::new(self.cpu_milli, self.memory_bytes)
    }
}

/// What the model needs of the pod's spec: its limits and behaviour (the
/// requests and the rest do not enter the draws).
fn pod_spec(settings: &Settings) -> PodSpec {
    PodSpec {
        requests: Resources::ZERO,
        limits: (!settings.limits.is_zero()).then_some(settings.limits),
        priority: 0,
        scheduler_name: String::new(),
        restart_policy: RestartPolicy::Always,
        tolerations: Vec::new(),
        behaviour: settings.behaviour.clone(),
    }
}

/// The space kept free below `limit`: [`RUNTIME_RESERVE`], or half of a tiny limit.
fn reserve_below(limit: u64) -> u64 {
    RUNTIME_RESERVE.min(limit / 2)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
