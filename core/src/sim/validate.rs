//! Checks a timeline before it runs, so that running cannot fail.

use super::SimError;
use crate::behaviour::ModelConfig;
use crate::pod::PodSlot;
use crate::timeline::{Action, Timeline};

pub(super) fn validate(timeline: &mut Timeline, model: &ModelConfig) -> Result<(), SimError> {
    model.validate()?;
    if timeline.sample_interval.as_millis() == 0 {
        return Err(SimError::ZeroSampleInterval);
    }
    if u32::try_from(timeline.nodes.len()).is_err() {
        return Err(SimError::TooManyNodes {
            nodes: timeline.nodes.len(),
        });
    }
    for (index, w) in timeline.workloads.iter().enumerate() {
        if w.id.0 as usize != index {
            return Err(SimError::WorkloadIdMismatch { index, id: w.id });
        }
        for spec in std::iter::once(&w.spec).chain(&w.slot_specs) {
            let b = &spec.behaviour;
            let dists = [
                ("cpu_usage", Some(&b.cpu_usage)),
                ("memory_usage", Some(&b.memory_usage)),
                ("run_seconds", b.run_seconds.as_ref()),
            ];
            for (field, dist) in dists {
                if let Some(d) = dist {
                    d.validate().map_err(|source| SimError::InvalidDistribution {
                        workload: w.name.clone(),
                        field,
                        source,
                    })?;
                }
            }
        }
        let b = &w.spec.behaviour;
        if !(b.crash_rate_per_hour.is_finite() && b.crash_rate_per_hour >= 0.0) {
            return Err(SimError::InvalidCrashRate {
                workload: w.name.clone(),
                field: "crash_rate_per_hour",
                value: b.crash_rate_per_hour,
            });
        }
        if !(b.crash_rate_growth_per_hour.is_finite() && b.crash_rate_growth_per_hour >= 0.0) {
            return Err(SimError::InvalidCrashRate {
                workload: w.name.clone(),
                field: "crash_rate_growth_per_hour",
                value: b.crash_rate_growth_per_hour,
            });
        }
    }
    let workloads = timeline.workloads.len();
    let nodes = timeline.nodes.len();
    for (index, ta) in timeline.actions.iter().enumerate() {
        let slot = |s: &PodSlot| {
            if (s.workload.0 as usize) < workloads {
                Ok(())
            } else {
                Err(SimError::UnknownWorkload {
                    index,
                    at: ta.at,
                    workload: s.workload,
                    workloads,
                })
            }
        };
        match &ta.action {
            Action::CreatePod { slot: s } | Action::DeletePod { slot: s, .. } | Action::KillPod { slot: s } => slot(s)?,
            other => {
                let Some(node) = other.node() else {
                    continue;
                };
                let node = &node;
                if node.index() >= nodes {
                    return Err(SimError::UnknownNode {
                        index,
                        at: ta.at,
                        node: *node,
                        nodes,
                    });
                }
            }
        }
    }
    // the contract says sorted; a stable sort keeps equal times in order if not
    if !timeline.actions.is_sorted_by_key(|a| a.at) {
        tracing::debug!("timeline actions were not sorted by time; sorting them");
        timeline.actions.sort_by_key(|a| a.at);
    }
    Ok(())
}
