//! The node-level OOM killer: which containers the kernel kills when the
//! containers of a node use more memory than the node has.
//!
//! kubelet sets each container's `oom_score_adj` from its QoS class
//! (`GetContainerOOMScoreAdjust` in `pkg/kubelet/qos/policy.go`); the kernel's
//! `oom_badness()` (mm/oom_kill.c) scores a task by its memory use in
//! thousandths of the machine plus that adjustment and kills the highest score
//! first, again and again while memory stays short.

use crate::pod::{PodId, QosClass};

/// `guaranteedOOMScoreAdj` in `pkg/kubelet/qos/policy.go`.
pub const GUARANTEED_OOM_SCORE_ADJ: i64 = -997;
/// `besteffortOOMScoreAdj` in `pkg/kubelet/qos/policy.go`.
pub const BESTEFFORT_OOM_SCORE_ADJ: i64 = 1000;

/// A running container as the OOM killer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OomCandidate {
    pub qos: QosClass,
    /// the container's memory request in bytes
    pub memory_request: u64,
    /// the container's current memory use in bytes
    pub usage: u64,
}

/// The `oom_score_adj` kubelet gives a container of `qos` requesting
/// `memory_request` bytes on a node with `memory_capacity` bytes.
pub fn oom_score_adj(qos: QosClass, memory_request: u64, memory_capacity: u64) -> i64 {
    match qos {
        QosClass::Guaranteed => GUARANTEED_OOM_SCORE_ADJ,
        QosClass::BestEffort => BESTEFFORT_OOM_SCORE_ADJ,
        QosClass::Burstable => {
            let capacity = i128::from(memory_capacity.max(1));
            let adj = 1000 - (1000 * i128::from(memory_request)) / capacity;
            // upstream: burstable stays above guaranteed (>= 1000 - 997 = 3)
            // and below best effort (1000 becomes 999)
            let adj = adj.max(i128::from(1000 + GUARANTEED_OOM_SCORE_ADJ));
            let adj = if adj == i128::from(BESTEFFORT_OOM_SCORE_ADJ) {
                adj - 1
            } else {
                adj
            };
            i64::try_from(adj).unwrap_or(BESTEFFORT_OOM_SCORE_ADJ - 1)
        }
    }
}

/// The kernel's badness of `c` on a node with `memory_capacity` bytes: its
/// use in thousandths of the node's memory plus its `oom_score_adj`.
pub fn badness(c: &OomCandidate, memory_capacity: u64) -> i64 {
    let capacity = u128::from(memory_capacity.max(1));
    let per_mille = (u128::from(c.usage) * 1000 / capacity).min(i64::MAX as u128) as i64;
    per_mille.saturating_add(oom_score_adj(c.qos, c.memory_request, memory_capacity))
}

/// The containers the OOM killer kills, in kill order (indices into
/// `candidates`), so that the survivors' memory fits in `memory_capacity`.
/// Highest badness first; equal badness kills the one listed first, so the
/// caller's order is the tie-break. Empty when memory already fits.
pub fn select_oom_victims(candidates: &[OomCandidate], memory_capacity: u64) -> Vec<usize> {
    let mut total: u128 = candidates.iter().map(|c| u128::from(c.usage)).sum();
    let capacity = u128::from(memory_capacity);
    if total <= capacity {
        return Vec::new();
    }
    let mut order: Vec<(i64, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (badness(c, memory_capacity), i))
        .collect();
    // stable sort by descending badness keeps the caller's order among ties
    order.sort_by_key(|&(badness, _)| std::cmp::Reverse(badness));
    let mut victims = Vec::new();
    for (_, i) in order {
        if total <= capacity {
            break;
        }
        total -= u128::from(candidates[i].usage);
        victims.push(i);
    }
    victims
}

/// The pods whose containers the OOM killer kills on a node with
/// `memory_capacity` bytes, in kill order. `running` lists the node's running
/// containers with their pods, in any order: equal badness kills the older
/// pod (the smaller id) first, so every driver (the simulator, the node
/// emulator) breaks ties the same way whatever its node lists look like.
pub fn oom_victim_pods(running: &mut [(PodId, OomCandidate)], memory_capacity: u64) -> Vec<PodId> {
    let total: u128 = running.iter().map(|(_, c)| u128::from(c.usage)).sum();
    if total <= u128::from(memory_capacity) {
        return Vec::new();
    }
    running.sort_by_key(|(pod, _)| *pod);
    let candidates: Vec<OomCandidate> = running.iter().map(|(_, c)| *c).collect();
    select_oom_victims(&candidates, memory_capacity)
        .into_iter()
        .map(|i| running[i].0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GI: u64 = 1 << 30;

    fn c(qos: QosClass, request_gi: u64, usage_gi: u64) -> OomCandidate {
        OomCandidate {
            qos,
            memory_request: request_gi * GI,
            usage: usage_gi * GI,
        }
    }

    #[test]
    fn score_adj_follows_kubelet_policy() {
        let cap = 16 * GI;
        assert_eq!(oom_score_adj(QosClass::Guaranteed, 8 * GI, cap), -997);
        assert_eq!(oom_score_adj(QosClass::BestEffort, 0, cap), 1000);
        // 1000 - 1000 * 4/16 = 750
        assert_eq!(oom_score_adj(QosClass::Burstable, 4 * GI, cap), 750);
        // a tiny request would give 1000: kept below best effort
        assert_eq!(oom_score_adj(QosClass::Burstable, 1, cap), 999);
        // a request of the whole node would give 0: kept above guaranteed
        assert_eq!(oom_score_adj(QosClass::Burstable, cap, cap), 3);
        assert_eq!(oom_score_adj(QosClass::Burstable, 2 * cap, cap), 3);
    }

    #[test]
    fn kills_best_effort_then_burstable_then_guaranteed() {
        let cap = 100 * GI;
        // badness: usage per mille of 100 GiB + adj (burstable requesting 20 GiB: 800)
        let mut containers = [
            c(QosClass::Guaranteed, 40, 40), // 400 - 997 = -597
            c(QosClass::Burstable, 20, 22),  // 220 + 800 = 1020
            c(QosClass::BestEffort, 0, 10),  // 100 + 1000 = 1100
            c(QosClass::Burstable, 20, 25),  // 250 + 800 = 1050
            c(QosClass::BestEffort, 0, 15),  // 150 + 1000 = 1150
        ];
        // 112 GiB in use: killing the biggest best-effort container is enough
        assert_eq!(select_oom_victims(&containers, cap), vec![4]);
        // 152 GiB in use: best effort (bigger first), then burstable (bigger
        // first); the guaranteed container survives
        containers[0] = c(QosClass::Guaranteed, 80, 80);
        assert_eq!(select_oom_victims(&containers, cap), vec![4, 2, 3, 1]);
    }

    #[test]
    fn guaranteed_dies_when_nothing_else_is_left() {
        let containers = [c(QosClass::Guaranteed, 4, 4), c(QosClass::Guaranteed, 6, 6)];
        assert_eq!(select_oom_victims(&containers, 8 * GI), vec![1]);
    }

    #[test]
    fn nothing_dies_when_memory_fits() {
        let containers = [c(QosClass::BestEffort, 0, 4), c(QosClass::Burstable, 1, 4)];
        assert!(select_oom_victims(&containers, 8 * GI).is_empty());
        assert!(select_oom_victims(&[], 0).is_empty());
    }

    #[test]
    fn victim_pods_break_ties_by_pod_id() {
        let cap = 4 * GI;
        let mut running = [
            (PodId(9), c(QosClass::BestEffort, 0, 3)),
            (PodId(2), c(QosClass::BestEffort, 0, 3)),
        ];
        assert_eq!(oom_victim_pods(&mut running, cap), vec![PodId(2)]);
        let mut fits = [(PodId(1), c(QosClass::BestEffort, 0, 3))];
        assert!(oom_victim_pods(&mut fits, cap).is_empty());
    }

    #[test]
    fn ties_keep_the_callers_order() {
        let containers = [c(QosClass::BestEffort, 0, 3), c(QosClass::BestEffort, 0, 3)];
        assert_eq!(select_oom_victims(&containers, 4 * GI), vec![0]);
    }
}
