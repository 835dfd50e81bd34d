//! What a run of a timeline will write, estimated before it runs, so that a
//! scenario that would fill the disk is refused with the reason instead of
//! discovered gigabytes later.
//!
//! The estimate counts what is certain from the timeline alone: the samples
//! (one per node and one for the cluster at every sample time, from 0 to the
//! end) and the events every pod creation and scenario action writes at
//! least (creation, bind, start; one per action). Crashes and restarts come
//! on top, so the estimate is a floor: a scenario refused by it would write
//! more still. Bytes per record are the mean sizes of the JSON lines of
//! `churn`'s records.

use crate::timeline::{Action, Timeline};

/// Mean bytes of a `node_sample` line (with its newline).
pub const NODE_SAMPLE_BYTES: u64 = 180;
/// Mean bytes of a `cluster_sample` line.
pub const CLUSTER_SAMPLE_BYTES: u64 = 306;
/// Mean bytes of an `event` line.
pub const EVENT_BYTES: u64 = 133;
/// Events each pod writes at least: created, bound, container started.
pub const EVENTS_PER_POD: u64 = 3;

/// The floor of what one run of a timeline writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordEstimate {
    pub nodes: u64,
    /// sample times, 0 to the end
    pub sample_times: u64,
    pub pods: u64,
    pub actions: u64,
    pub bytes: u64,
}

impl RecordEstimate {
    pub fn of(timeline: &Timeline) -> RecordEstimate {
        let nodes = timeline.nodes.len() as u64;
        let interval = timeline.sample_interval.as_millis().max(1);
        let sample_times = timeline.end.as_millis() / interval + 1;
        let pods = timeline
            .actions
            .iter()
            .filter(|a| matches!(a.action, Action::CreatePod { .. }))
            .count() as u64;
        let actions = timeline.actions.len() as u64;
        let events = pods
            .saturating_mul(EVENTS_PER_POD)
            .saturating_add(actions.saturating_sub(pods))
            .saturating_mul(EVENT_BYTES);
        let mut estimate = RecordEstimate {
            nodes,
            sample_times,
            pods,
            actions,
            bytes: 0,
        };
        // the samples' share is one formula, shared with `sample_bytes`
        estimate.bytes = estimate.sample_bytes().saturating_add(events);
        estimate
    }

    /// Bytes of the samples alone.
    pub fn sample_bytes(&self) -> u64 {
        self.sample_times.saturating_mul(
            self.nodes
                .saturating_mul(NODE_SAMPLE_BYTES)
                .saturating_add(CLUSTER_SAMPLE_BYTES),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NodeSpec;
    use crate::resources::Resources;
    use crate::time::{Span, Time};
    use crate::timeline::TimedAction;

    fn timeline(nodes: usize, end_s: u64, interval_s: u64, actions: Vec<TimedAction>) -> Timeline {
        Timeline {
            nodes: (0..nodes)
                .map(|i| NodeSpec::plain(format!("n{i}"), Resources::new(4000, 1 << 34), 0.1))
                .collect(),
            workloads: Vec::new(),
            actions,
            end: Time(end_s * 1000),
            sample_interval: Span::from_secs(interval_s),
        }
    }

    #[test]
    fn samples_and_events_are_counted() {
        // 10 nodes, 60 s sampled every 15 s: 5 sample times
        let t = timeline(10, 60, 15, Vec::new());
        let e = RecordEstimate::of(&t);
        assert_eq!((e.nodes, e.sample_times, e.pods, e.actions), (10, 5, 0, 0));
        assert_eq!(e.bytes, 5 * (10 * NODE_SAMPLE_BYTES + CLUSTER_SAMPLE_BYTES));
        assert_eq!(e.sample_bytes(), e.bytes);
        // a year sampled every 15 s on 40 nodes: the 6 GB the issue saw, and more
        let year = RecordEstimate::of(&timeline(40, 366 * 86_400, 15, Vec::new()));
        assert!(year.bytes > 6_000_000_000, "{}", year.bytes);
        // two pods and a kill: three events each, one for the kill
        let slot = crate::pod::PodSlot {
            workload: crate::pod::WorkloadId(0),
            ordinal: 0,
        };
        let at = |action| TimedAction { at: Time(0), action };
        let t = timeline(
            0,
            0,
            15,
            vec![
                at(Action::CreatePod { slot }),
                at(Action::CreatePod { slot }),
                at(Action::KillPod { slot }),
            ],
        );
        let e = RecordEstimate::of(&t);
        assert_eq!((e.pods, e.actions), (2, 3));
        assert_eq!(e.bytes, CLUSTER_SAMPLE_BYTES + 7 * EVENT_BYTES);
        // absurd sizes saturate instead of wrapping
        let huge = timeline(1, u64::MAX / 1000, 1, Vec::new());
        assert!(RecordEstimate::of(&huge).bytes > 1 << 60);
    }
}
