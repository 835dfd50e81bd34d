//! The scheduling queue's active part, as kube-scheduler's PrioritySort
//! orders it: higher priority first, then earlier creation. Pods that failed
//! an attempt wait out a back-off in the event queue before they come back.

use crate::behaviour::ModelConfig;
use crate::pod::PodId;
use crate::time::{Span, Time};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    priority: i32,
    created: Time,
    pod: PodId,
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        // the greatest key pops first: high priority, then old, then low id
        self.priority
            .cmp(&other.priority)
            .then(other.created.cmp(&self.created))
            .then(other.pod.cmp(&self.pod))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Default)]
pub(crate) struct ActiveQueue {
    heap: BinaryHeap<Key>,
}

impl ActiveQueue {
    pub(crate) fn push(&mut self, pod: PodId, priority: i32, created: Time) {
        self.heap.push(Key { priority, created, pod });
    }

    pub(crate) fn pop(&mut self) -> Option<PodId> {
        self.heap.pop().map(|k| k.pod)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// kube-scheduler's back-off after `attempts` failed attempts (>= 1): the
/// initial back-off doubled per further attempt, capped
/// (`calculateBackoffDuration` in `pkg/scheduler/backend/queue`).
pub(crate) fn scheduling_backoff(attempts: u32, config: &ModelConfig) -> Span {
    let initial = Span::from_secs_f64(config.scheduler_initial_backoff_seconds);
    let max = Span::from_secs_f64(config.scheduler_max_backoff_seconds);
    let mut delay = initial;
    for _ in 1..attempts {
        delay = Span(delay.0.saturating_mul(2));
        if delay >= max {
            return max;
        }
    }
    delay.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_then_creation_then_id() {
        let mut q = ActiveQueue::default();
        q.push(PodId(1), 0, Time(10));
        q.push(PodId(2), 5, Time(20));
        q.push(PodId(3), 0, Time(5));
        q.push(PodId(0), 0, Time(10));
        q.push(PodId(4), 5, Time(20));
        let order: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|p| p.0).collect();
        assert_eq!(order, [2, 4, 3, 0, 1]);
        assert!(q.is_empty());
    }

    #[test]
    fn backoff_doubles_from_one_to_ten_seconds() {
        let c = ModelConfig::default();
        let secs: Vec<u64> = (1..=6).map(|a| scheduling_backoff(a, &c).as_millis()).collect();
        assert_eq!(secs, [1000, 2000, 4000, 8000, 10_000, 10_000]);
        assert_eq!(scheduling_backoff(u32::MAX, &c), Span::from_secs(10));
    }
}
