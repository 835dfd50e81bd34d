//! The writes waiting for the API server, coalesced per object: a newer
//! status replaces one not yet sent, and one object's writes never overtake
//! each other (one in flight per object). Node and Lease writes go before
//! pod writes, so heartbeats do not starve behind a wave of pod statuses.

use super::driver::PodKey;
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use tokio::sync::Notify;

/// The object a write is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    Pod(PodKey),
    Node(String),
    Lease(String),
}

impl Target {
    fn urgent(&self) -> bool {
        !matches!(self, Target::Pod(_))
    }
}

/// One write.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// strategic merge patch on pods/status
    PodStatus(Value),
    /// delete with grace period 0, if the pod still has this uid
    PodDelete { uid: String },
    /// strategic merge patch on nodes/status
    NodeStatus(Value),
    /// JSON merge patch on the node (its taints)
    NodeSpec(Value),
    /// renew the node's Lease (create it, owned by the node, when missing)
    LeaseRenew { node_uid: String },
}

impl Op {
    fn same_kind(&self, other: &Op) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

#[derive(Debug, Default)]
struct State {
    urgent: VecDeque<Target>,
    normal: VecDeque<Target>,
    queued: HashMap<Target, Vec<Op>>,
    in_flight: HashSet<Target>,
}

/// The queue between the driver and the writers.
#[derive(Debug, Default)]
pub struct Outbox {
    state: Mutex<State>,
    notify: Notify,
}

impl Outbox {
    pub fn new() -> Outbox {
        Outbox::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // a writer that panicked holding the lock left consistent data behind
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `op` for `target`; a queued op of the same kind is replaced
    /// (its place in the object's order is kept).
    pub fn push(&self, target: Target, op: Op) {
        let mut guard = self.lock();
        let st = &mut *guard;
        match st.queued.get_mut(&target) {
            Some(ops) => match ops.iter_mut().find(|o| o.same_kind(&op)) {
                Some(slot) => *slot = op,
                None => ops.push(op),
            },
            None => {
                st.queued.insert(target.clone(), vec![op]);
                // an object in flight is queued again when its write is done
                if !st.in_flight.contains(&target) {
                    if target.urgent() {
                        st.urgent.push_back(target);
                    } else {
                        st.normal.push_back(target);
                    }
                    drop(guard);
                    self.notify.notify_one();
                }
            }
        }
    }

    /// The next object to write and its ops, if any is ready now.
    pub fn try_next(&self) -> Option<(Target, Vec<Op>)> {
        let mut st = self.lock();
        let st = &mut *st;
        let target = st.urgent.pop_front().or_else(|| st.normal.pop_front())?;
        let ops = st.queued.remove(&target).unwrap_or_default();
        st.in_flight.insert(target.clone());
        Some((target, ops))
    }

    /// Waits for the next object to write.
    pub async fn next(&self) -> (Target, Vec<Op>) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(next) = self.try_next() {
                // more may be waiting: let another writer look
                self.notify.notify_one();
                return next;
            }
            notified.await;
        }
    }

    /// The write of `target` is over; what was queued for it meanwhile goes
    /// to the back of the line.
    pub fn done(&self, target: &Target) {
        let mut st = self.lock();
        st.in_flight.remove(target);
        if st.queued.contains_key(target) {
            if target.urgent() {
                st.urgent.push_back(target.clone());
            } else {
                st.normal.push_back(target.clone());
            }
            drop(st);
            self.notify.notify_one();
        }
    }

    /// Objects with writes waiting (not counting those in flight).
    pub fn backlog(&self) -> usize {
        self.lock().queued.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str) -> Target {
        Target::Pod(PodKey {
            namespace: "ns".into(),
            name: name.into(),
        })
    }

    #[test]
    fn newer_status_replaces_older_and_keeps_the_delete_after_it() {
        let ob = Outbox::new();
        ob.push(pod("a"), Op::PodStatus(json!(1)));
        ob.push(pod("a"), Op::PodDelete { uid: "u".into() });
        ob.push(pod("a"), Op::PodStatus(json!(2)));
        let (t, ops) = ob.try_next().unwrap();
        assert_eq!(t, pod("a"));
        assert_eq!(ops, vec![Op::PodStatus(json!(2)), Op::PodDelete { uid: "u".into() }]);
        assert!(ob.try_next().is_none());
    }

    #[test]
    fn one_write_in_flight_per_object() {
        let ob = Outbox::new();
        ob.push(pod("a"), Op::PodStatus(json!(1)));
        let (t, _) = ob.try_next().unwrap();
        ob.push(pod("a"), Op::PodStatus(json!(2)));
        ob.push(pod("b"), Op::PodStatus(json!(3)));
        // a is in flight: b goes first
        assert_eq!(ob.try_next().unwrap().0, pod("b"));
        assert!(ob.try_next().is_none());
        ob.done(&t);
        let (t2, ops) = ob.try_next().unwrap();
        assert_eq!((t2, ops), (pod("a"), vec![Op::PodStatus(json!(2))]));
    }

    #[test]
    fn nodes_and_leases_go_first() {
        let ob = Outbox::new();
        ob.push(pod("a"), Op::PodStatus(json!(1)));
        ob.push(
            Target::Lease("n".into()),
            Op::LeaseRenew {
                node_uid: String::new(),
            },
        );
        ob.push(Target::Node("n".into()), Op::NodeStatus(json!(0)));
        assert_eq!(ob.try_next().unwrap().0, Target::Lease("n".into()));
        assert_eq!(ob.try_next().unwrap().0, Target::Node("n".into()));
        assert_eq!(ob.try_next().unwrap().0, pod("a"));
        assert_eq!(ob.backlog(), 0);
    }

    #[tokio::test]
    async fn a_waiting_writer_wakes_on_push() {
        let ob = std::sync::Arc::new(Outbox::new());
        let waiter = {
            let ob = ob.clone();
            tokio::spawn(async move { ob.next().await })
        };
        tokio::task::yield_now().await;
        ob.push(pod("x"), Op::PodStatus(json!(1)));
        let (t, _) = tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(t, pod("x"));
    }
}
