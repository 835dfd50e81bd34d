//! The scheduling queue's rules as kube-scheduler has them, one copy for
//! the simulator and the bind loop both: PrioritySort's order of the active
//! pods (higher priority, then earlier arrival) and the back-off a pod waits
//! out after a failed attempt (`calculateBackoffDuration` in
//! `pkg/scheduler/backend/queue`). How each keeps its waiting pods is its
//! own: the simulator in its event queue, the bind loop in a queue that a
//! cluster change can cut short.

use crate::behaviour::ModelConfig;
use crate::pod::PodId;
use crate::time::{Span, Time};
use std::cmp::Ordering;

/// A pod's place in the active queue: the greatest pops first, that is the
/// highest priority, then the earliest arrival, then the lowest id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueRank {
    pub priority: i32,
    pub arrived: Time,
    pub pod: PodId,
}

impl Ord for QueueRank {
    fn cmp(&self, other: &QueueRank) -> Ordering {
        self.priority
            .cmp(&other.priority)
            .then(other.arrived.cmp(&self.arrived))
            .then(other.pod.cmp(&self.pod))
    }
}

impl PartialOrd for QueueRank {
    fn partial_cmp(&self, other: &QueueRank) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The back-off after `attempts` failed attempts (>= 1): the initial
/// back-off doubled per further attempt, capped.
pub fn scheduling_backoff(attempts: u32, config: &ModelConfig) -> Span {
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
    fn priority_then_arrival_then_id() {
        let rank = |pod, priority, arrived| QueueRank {
            priority,
            arrived: Time(arrived),
            pod: PodId(pod),
        };
        let mut ranks = [
            rank(1, 0, 10),
            rank(2, 5, 20),
            rank(3, 0, 5),
            rank(0, 0, 10),
            rank(4, 5, 20),
        ];
        ranks.sort_by(|a, b| b.cmp(a));
        let order: Vec<u64> = ranks.iter().map(|r| r.pod.0).collect();
        assert_eq!(order, [2, 4, 3, 0, 1]);
    }

    #[test]
    fn backoff_doubles_from_one_to_ten_seconds() {
        let c = ModelConfig::default();
        let ms: Vec<u64> = (1..=6).map(|a| scheduling_backoff(a, &c).as_millis()).collect();
        assert_eq!(ms, [1000, 2000, 4000, 8000, 10_000, 10_000]);
        assert_eq!(scheduling_backoff(u32::MAX, &c), Span::from_secs(10));
    }
}
