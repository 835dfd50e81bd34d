//! The pending pods of the bind loop, as kube-scheduler's scheduling queue
//! keeps them: an active part ordered by PrioritySort (higher priority, then
//! earlier arrival), and pods that failed an attempt waiting out a per-pod
//! back-off in scenario time, which a cluster change cuts short.

use schedlab_core::behaviour::ModelConfig;
use schedlab_core::pod::PodId;
use schedlab_core::queue::{QueueRank, scheduling_backoff};
use schedlab_core::time::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

/// A pod by namespace and name, as the API knows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodKey {
    pub namespace: String,
    pub name: String,
}

impl PodKey {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> PodKey {
        PodKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl std::fmt::Display for PodKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Active,
    Waiting {
        due: Time,
    },
    /// handed out by [`PendingQueue::pop`]: being decided or bound
    Busy,
}

#[derive(Debug, Clone)]
struct Entry {
    priority: i32,
    arrived: Time,
    pod: PodId,
    attempts: u32,
    last_attempt: Option<Time>,
    /// not before this, whatever happens (a server's Retry-After)
    floor: Time,
    state: State,
    /// bumped whenever the entry is pushed onto a heap, so older heap items are skipped
    generation: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rank {
    rank: QueueRank,
    key: PodKey,
    generation: u64,
}

impl Ord for Rank {
    fn cmp(&self, other: &Rank) -> Ordering {
        // two pods of one id (a name reused) in name order
        self.rank.cmp(&other.rank).then(other.key.cmp(&self.key))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Rank) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A pod handed out for a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Popped {
    pub key: PodKey,
    /// failed attempts before this one
    pub attempts: u32,
}

/// The pending pods of one scheduler. Heaps are lazy: removed and moved
/// entries leave stale items behind that are skipped when they surface.
#[derive(Debug, Default)]
pub struct PendingQueue {
    entries: HashMap<PodKey, Entry>,
    active: BinaryHeap<Rank>,
    waiting: BinaryHeap<Reverse<(Time, u64, PodKey)>>,
    next_generation: u64,
}

impl PendingQueue {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains(&self, key: &PodKey) -> bool {
        self.entries.contains_key(key)
    }

    /// A pending pod seen: it joins the active part. Returns false (and
    /// changes nothing) when it is already queued.
    pub fn add(&mut self, key: PodKey, priority: i32, arrived: Time, pod: PodId) -> bool {
        if self.entries.contains_key(&key) {
            return false;
        }
        let generation = self.bump();
        self.entries.insert(
            key.clone(),
            Entry {
                priority,
                arrived,
                pod,
                attempts: 0,
                last_attempt: None,
                floor: Time::ZERO,
                state: State::Active,
                generation,
            },
        );
        self.active.push(Rank {
            rank: QueueRank { priority, arrived, pod },
            key,
            generation,
        });
        true
    }

    /// The pod is no longer pending (bound, deleted, or not ours).
    pub fn remove(&mut self, key: &PodKey) -> bool {
        self.entries.remove(key).is_some()
    }

    /// Moves the pods whose back-off is over by `now` to the active part.
    pub fn promote(&mut self, now: Time) {
        while let Some(Reverse((due, generation, _))) = self.waiting.peek() {
            if *due > now {
                break;
            }
            let (due, generation) = (*due, *generation);
            let Some(Reverse((_, _, key))) = self.waiting.pop() else {
                break;
            };
            let fresh = self
                .entries
                .get(&key)
                .is_some_and(|e| e.generation == generation && e.state == State::Waiting { due });
            if fresh {
                self.activate(key);
            }
        }
    }

    fn activate(&mut self, key: PodKey) {
        let generation = self.bump();
        if let Some(e) = self.entries.get_mut(&key) {
            e.state = State::Active;
            e.generation = generation;
            self.active.push(Rank {
                rank: QueueRank {
                    priority: e.priority,
                    arrived: e.arrived,
                    pod: e.pod,
                },
                key,
                generation,
            });
        }
    }

    /// Whether a pod is ready for a decision (after [`Self::promote`]).
    pub fn has_active(&mut self) -> bool {
        self.skip_stale_active();
        !self.active.is_empty()
    }

    fn skip_stale_active(&mut self) {
        while let Some(top) = self.active.peek() {
            let fresh = self
                .entries
                .get(&top.key)
                .is_some_and(|e| e.generation == top.generation && e.state == State::Active);
            if fresh {
                return;
            }
            self.active.pop();
        }
    }

    /// The next pod to decide (after [`Self::promote`]); it stays queued,
    /// busy, until [`Self::failed`], [`Self::retry`] or [`Self::remove`].
    pub fn pop(&mut self) -> Option<Popped> {
        self.skip_stale_active();
        let top = self.active.pop()?;
        let e = self.entries.get_mut(&top.key)?;
        e.state = State::Busy;
        Some(Popped {
            key: top.key,
            attempts: e.attempts,
        })
    }

    /// The attempt at `now` failed: wait out the back-off, at least until `not_before`.
    pub fn failed(&mut self, key: &PodKey, now: Time, not_before: Time, config: &ModelConfig) {
        let Some(e) = self.entries.get_mut(key) else {
            return;
        };
        e.attempts = e.attempts.saturating_add(1);
        e.last_attempt = Some(now);
        e.floor = not_before;
        let due = (now + scheduling_backoff(e.attempts, config)).max(not_before);
        self.wait(key.clone(), due);
    }

    /// A busy pod goes back without counting an attempt (a request that
    /// never reached a verdict), due at `due`.
    pub fn retry(&mut self, key: &PodKey, due: Time) {
        if let Some(e) = self.entries.get_mut(key) {
            e.floor = due;
            self.wait(key.clone(), due);
        }
    }

    fn wait(&mut self, key: PodKey, due: Time) {
        let generation = self.bump();
        if let Some(e) = self.entries.get_mut(&key) {
            e.state = State::Waiting { due };
            e.generation = generation;
            self.waiting.push(Reverse((due, generation, key)));
        }
    }

    /// The cluster changed in a way that may make room (a pod left a node, a
    /// node appeared or changed): waiting pods retry as soon as their
    /// initial back-off since their last attempt is over, instead of at the
    /// end of their doubled back-off (never before a server's Retry-After).
    pub fn cluster_changed(&mut self, now: Time, config: &ModelConfig) {
        let initial = scheduling_backoff(1, config);
        let mut moved = Vec::new();
        for (key, e) in &self.entries {
            if let State::Waiting { due } = e.state {
                let since_attempt = e.last_attempt.map_or(now, |t| t + initial);
                let sooner = since_attempt.max(now).max(e.floor);
                if sooner < due {
                    moved.push((key.clone(), sooner));
                }
            }
        }
        for (key, due) in moved {
            self.wait(key, due);
        }
    }

    /// When the earliest waiting pod is due.
    pub fn next_due(&mut self) -> Option<Time> {
        while let Some(Reverse((due, generation, key))) = self.waiting.peek() {
            let fresh = self
                .entries
                .get(key)
                .is_some_and(|e| e.generation == *generation && e.state == State::Waiting { due: *due });
            if fresh {
                return Some(*due);
            }
            self.waiting.pop();
        }
        None
    }

    /// Failed attempts of a queued pod so far.
    pub fn attempts(&self, key: &PodKey) -> Option<u32> {
        self.entries.get(key).map(|e| e.attempts)
    }

    fn bump(&mut self) -> u64 {
        self.next_generation += 1;
        self.next_generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: &str) -> PodKey {
        PodKey::new("ns", n)
    }

    fn drain(q: &mut PendingQueue) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(p) = q.pop() {
            out.push(p.key.name.clone());
            q.remove(&p.key);
        }
        out
    }

    #[test]
    fn priority_then_arrival_then_id() {
        let mut q = PendingQueue::default();
        q.add(key("a"), 0, Time(10), PodId(1));
        q.add(key("b"), 5, Time(20), PodId(2));
        q.add(key("c"), 0, Time(5), PodId(3));
        q.add(key("d"), 0, Time(10), PodId(0));
        q.add(key("e"), 5, Time(20), PodId(4));
        assert!(!q.add(key("a"), 100, Time(0), PodId(1)), "a pod is queued once");
        assert_eq!(drain(&mut q), ["b", "e", "c", "d", "a"]);
        assert!(q.is_empty());
    }

    #[test]
    fn failed_pods_wait_a_doubling_backoff() {
        let c = ModelConfig::default();
        let mut q = PendingQueue::default();
        q.add(key("a"), 0, Time(0), PodId(0));
        let mut now = Time(0);
        let mut delays = Vec::new();
        for attempt in 0..6 {
            q.promote(now);
            let p = q.pop().unwrap();
            assert_eq!(p.attempts, attempt);
            q.failed(&p.key, now, Time::ZERO, &c);
            assert!(!q.has_active(), "nothing is active while the pod backs off");
            let due = q.next_due().unwrap();
            q.promote(Time(due.0 - 1));
            assert!(!q.has_active(), "not due a millisecond early");
            delays.push(due.since(now).as_millis());
            now = due;
        }
        assert_eq!(delays, [1000, 2000, 4000, 8000, 10_000, 10_000]);
    }

    #[test]
    fn a_retry_after_outlasts_the_backoff() {
        let c = ModelConfig::default();
        let mut q = PendingQueue::default();
        q.add(key("a"), 0, Time(0), PodId(0));
        let p = q.pop().unwrap();
        q.failed(&p.key, Time(0), Time(5000), &c);
        assert_eq!(q.next_due(), Some(Time(5000)));
        q.promote(Time(5000));
        let p = q.pop().unwrap();
        assert_eq!(p.attempts, 1);
        q.retry(&p.key, Time(5100));
        q.cluster_changed(Time(5050), &c);
        assert_eq!(
            q.next_due(),
            Some(Time(5100)),
            "a change does not cut a Retry-After short"
        );
        q.promote(Time(5100));
        assert_eq!(q.pop().unwrap().attempts, 1, "a retry is not an attempt");
    }

    #[test]
    fn a_cluster_change_cuts_the_backoff_to_the_initial_one() {
        let c = ModelConfig::default();
        let mut q = PendingQueue::default();
        q.add(key("a"), 0, Time(0), PodId(0));
        q.add(key("b"), 0, Time(1), PodId(1));
        // a fails four times: its next back-off is 8 s
        let mut now = Time(0);
        for _ in 0..4 {
            q.promote(now);
            let p = q.pop().unwrap();
            assert_eq!(p.key, key("a"));
            q.failed(&p.key, now, Time::ZERO, &c);
            now = q.next_due().unwrap();
        }
        // b is still active; a waits until now + ... (last attempt at 7 s, due at 15 s)
        assert_eq!(q.next_due(), Some(Time(15_000)));
        q.cluster_changed(Time(7_200), &c);
        assert_eq!(q.next_due(), Some(Time(8_000)), "last attempt 7 s + initial 1 s");
        q.cluster_changed(Time(9_000), &c);
        assert_eq!(q.next_due(), Some(Time(8_000)), "never later than before");
        q.promote(Time(8_000));
        assert_eq!(drain(&mut q), ["a", "b"]);
    }

    #[test]
    fn removed_and_busy_pods_never_pop() {
        let c = ModelConfig::default();
        let mut q = PendingQueue::default();
        q.add(key("a"), 0, Time(0), PodId(0));
        q.add(key("b"), 0, Time(1), PodId(1));
        let a = q.pop().unwrap();
        assert_eq!(a.key, key("a"));
        q.cluster_changed(Time(0), &c);
        assert_eq!(q.pop().unwrap().key, key("b"));
        assert_eq!(q.pop(), None, "busy pods stay out of the active part");
        q.failed(&key("b"), Time(0), Time::ZERO, &c);
        q.remove(&key("b"));
        assert_eq!(q.next_due(), None, "a removed pod is not due");
        q.promote(Time(1_000_000));
        assert_eq!(q.pop(), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.attempts(&key("a")), Some(0));
    }
}
