//! The simulator's active queue, in [`crate::queue::QueueRank`] order. Pods
//! that failed an attempt wait out their back-off in the event queue before
//! they come back.

use crate::pod::PodId;
use crate::queue::QueueRank;
use crate::time::Time;
use std::collections::BinaryHeap;

#[derive(Debug, Default)]
pub(crate) struct ActiveQueue {
    heap: BinaryHeap<QueueRank>,
}

impl ActiveQueue {
    pub(crate) fn push(&mut self, pod: PodId, priority: i32, created: Time) {
        self.heap.push(QueueRank {
            priority,
            arrived: created,
            pod,
        });
    }

    pub(crate) fn pop(&mut self) -> Option<PodId> {
        self.heap.pop().map(|k| k.pod)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_queue_rank_order() {
        let mut q = ActiveQueue::default();
        q.push(PodId(1), 0, Time(10));
        q.push(PodId(2), 5, Time(20));
        q.push(PodId(3), 0, Time(5));
        let order: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|p| p.0).collect();
        assert_eq!(order, [2, 3, 1]);
        assert!(q.is_empty());
    }
}
