//! The simulator's event queue: a binary heap ordered by time, ties broken by
//! insertion order, so a run never depends on heap internals.

use crate::behaviour::TimerKind;
use crate::pod::PodId;
use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Something due at a point in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Queued {
    /// a pod-lifecycle timer
    Timer {
        pod: PodId,
        kind: TimerKind,
        generation: u64,
    },
    /// a pending pod's scheduling back-off is over
    Retry { pod: PodId, generation: u32 },
    /// the decision in flight takes effect (decision time charged)
    DecisionDone,
}

#[derive(Debug, PartialEq, Eq)]
struct Entry {
    at: Time,
    seq: u64,
    item: Queued,
}

impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> Ordering {
        // reversed: BinaryHeap pops the greatest, we want the earliest
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    peak: usize,
}

impl EventQueue {
    pub(crate) fn push(&mut self, at: Time, item: Queued) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, item });
        self.peak = self.peak.max(self.heap.len());
    }

    pub(crate) fn next_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at)
    }

    /// The earliest item due at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Time) -> Option<Queued> {
        if self.heap.peek()?.at <= now {
            self.heap.pop().map(|e| e.item)
        } else {
            None
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// The most items the queue held at once.
    pub(crate) fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry(n: u64) -> Queued {
        Queued::Retry {
            pod: PodId(n),
            generation: 0,
        }
    }

    #[test]
    fn pops_by_time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time(5), retry(1));
        q.push(Time(3), retry(2));
        q.push(Time(5), retry(3));
        q.push(Time(3), retry(4));
        assert_eq!(q.next_time(), Some(Time(3)));
        assert_eq!(q.pop_due(Time(2)), None);
        let order: Vec<Queued> = std::iter::from_fn(|| q.pop_due(Time(10))).collect();
        assert_eq!(order, vec![retry(2), retry(4), retry(1), retry(3)]);
        assert_eq!(q.len(), 0);
        assert_eq!(q.peak(), 4);
    }
}
