//! The run's pods as the player knows them: which pod each slot has now,
//! where each pod is in its life, and the owner's replacements. Pod ids are
//! handed out in creation order, as the simulator does.

use crate::objects::PodIdentity;
use schedlab_core::behaviour::{PodEnd, owner_recreates};
use schedlab_core::pod::{PodId, PodSlot};
use schedlab_core::record::DeleteCause;
use std::collections::{BTreeMap, HashMap};

/// Where one pod of the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PodState {
    /// Neither has its create call returned nor has the watch shown it.
    /// `delete`: the scenario deleted it meanwhile; the delete goes out once
    /// the pod exists.
    Creating { delete: Option<DeleteCause> },
    /// In the API, not ended.
    Live,
    /// Ended (succeeded, failed or evicted) and maybe still in the API.
    Ended,
    /// The scenario's delete is on its way; the watch is no longer heeded.
    Deleting(DeleteCause),
    /// Gone for good.
    Gone,
}

#[derive(Debug, Clone)]
pub(crate) struct PodEntry {
    pub(crate) ident: PodIdentity,
    pub(crate) name: String,
    pub(crate) state: PodState,
}

#[derive(Debug, Clone, Copy, Default)]
struct SlotState {
    current: Option<PodId>,
    incarnations: u32,
}

#[derive(Debug, Default)]
pub(crate) struct Pods {
    entries: Vec<PodEntry>,
    slots: BTreeMap<PodSlot, SlotState>,
    by_name: HashMap<String, PodId>,
}

impl Pods {
    /// The slot's next pod, named by `name`, now Creating; None (and
    /// nothing changes) while the slot still has a pod.
    pub(crate) fn create(&mut self, slot: PodSlot, name: impl FnOnce(&PodIdentity) -> String) -> Option<PodIdentity> {
        let state = self.slots.entry(slot).or_default();
        if let Some(current) = state.current {
            tracing::warn!(?slot, pod = current.0, "slot already has a pod; create ignored");
            return None;
        }
        let ident = PodIdentity {
            pod: PodId(self.entries.len() as u64),
            slot,
            incarnation: state.incarnations,
        };
        state.incarnations = state.incarnations.saturating_add(1);
        state.current = Some(ident.pod);
        let name = name(&ident);
        self.by_name.insert(name.clone(), ident.pod);
        self.entries.push(PodEntry {
            ident,
            name,
            state: PodState::Creating { delete: None },
        });
        Some(ident)
    }

    pub(crate) fn current(&self, slot: PodSlot) -> Option<PodId> {
        self.slots.get(&slot).and_then(|s| s.current)
    }

    pub(crate) fn get(&self, pod: PodId) -> Option<&PodEntry> {
        self.entries.get(pod.0 as usize)
    }

    pub(crate) fn get_mut(&mut self, pod: PodId) -> Option<&mut PodEntry> {
        self.entries.get_mut(pod.0 as usize)
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<PodId> {
        self.by_name.get(name).copied()
    }

    /// The pod ended with `end` (its state is the caller's to set): the slot
    /// loses it; returns the slot when its owner creates a replacement.
    pub(crate) fn ended(&mut self, pod: PodId, end: PodEnd, recreate: bool) -> Option<PodSlot> {
        let slot = self.get(pod)?.ident.slot;
        if let Some(state) = self.slots.get_mut(&slot)
            && state.current == Some(pod)
        {
            state.current = None;
        }
        owner_recreates(recreate, end).then_some(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::pod::WorkloadId;

    fn slot(w: u32, o: u32) -> PodSlot {
        PodSlot {
            workload: WorkloadId(w),
            ordinal: o,
        }
    }

    #[test]
    fn ids_follow_creation_order_and_incarnations_count_per_slot() {
        let mut pods = Pods::default();
        let name = |i: &PodIdentity| format!("p-{}-{}", i.slot.ordinal, i.incarnation);
        let a = pods.create(slot(0, 0), name).unwrap();
        let b = pods.create(slot(0, 1), name).unwrap();
        assert_eq!((a.pod, b.pod), (PodId(0), PodId(1)));
        assert!(pods.create(slot(0, 0), name).is_none(), "the slot has a pod");
        assert_eq!(pods.by_name("p-0-0"), Some(PodId(0)));
        assert_eq!(
            pods.ended(a.pod, PodEnd::Deleted(DeleteCause::Churn), true),
            Some(slot(0, 0))
        );
        assert_eq!(pods.current(slot(0, 0)), None);
        let c = pods.create(slot(0, 0), name).unwrap();
        assert_eq!((c.pod, c.incarnation), (PodId(2), 1));
        assert_eq!(pods.get(c.pod).map(|e| e.name.as_str()), Some("p-0-1"));
    }

    #[test]
    fn the_owner_replaces_lost_pods_only() {
        let mut pods = Pods::default();
        let name = |i: &PodIdentity| format!("p-{}", i.pod.0);
        let a = pods.create(slot(1, 0), name).unwrap();
        assert_eq!(pods.ended(a.pod, PodEnd::Succeeded, true), None);
        let b = pods.create(slot(1, 0), name).unwrap();
        assert_eq!(pods.ended(b.pod, PodEnd::Deleted(DeleteCause::Scenario), true), None);
        let c = pods.create(slot(1, 0), name).unwrap();
        assert_eq!(pods.ended(c.pod, PodEnd::Evicted, false), None);
        assert_eq!(pods.current(slot(1, 0)), None);
        let d = pods.create(slot(1, 0), name).unwrap();
        // a pod that is no longer the slot's current one does not clear the slot
        assert_eq!(pods.ended(c.pod, PodEnd::Evicted, true), Some(slot(1, 0)));
        assert_eq!(pods.current(slot(1, 0)), Some(d.pod));
    }
}
