//! The fault intervals of each node (failed or degraded from a time until a
//! recovery), so that faults do not overlap on a node and a recovery finds
//! the nodes that are down.

use schedlab_core::Time;

#[derive(Debug, Clone, Copy)]
struct Interval {
    from: Time,
    /// None: until a recover_nodes phase
    until: Option<Time>,
    /// the index of the scheduled RecoverNode action, if any
    recovery: Option<usize>,
    /// false for a lost node: only its replacement brings it back, never a
    /// recover_nodes phase
    recoverable: bool,
}

impl Interval {
    fn end(&self) -> Time {
        self.until.unwrap_or(Time(u64::MAX))
    }
}

#[derive(Debug)]
pub(crate) struct Faults {
    by_node: Vec<Vec<Interval>>,
}

impl Faults {
    pub(crate) fn new(nodes: usize) -> Faults {
        Faults {
            by_node: vec![Vec::new(); nodes],
        }
    }

    /// Whether a fault over [from, until) would overlap none already planned.
    pub(crate) fn is_free(&self, node: usize, from: Time, until: Option<Time>) -> bool {
        let end = until.unwrap_or(Time(u64::MAX));
        self.by_node
            .get(node)
            .is_some_and(|ivs| ivs.iter().all(|iv| iv.end() <= from || iv.from >= end))
    }

    /// Whether the node is down (failed or degraded, not lost) at `at`: what
    /// a recover_nodes phase may bring back.
    pub(crate) fn is_down(&self, node: usize, at: Time) -> bool {
        self.by_node
            .get(node)
            .is_some_and(|ivs| ivs.iter().any(|iv| iv.recoverable && iv.from <= at && at < iv.end()))
    }

    pub(crate) fn add(&mut self, node: usize, from: Time, until: Option<Time>, recovery: Option<usize>) {
        if let Some(ivs) = self.by_node.get_mut(node) {
            ivs.push(Interval {
                from,
                until,
                recovery,
                recoverable: true,
            });
        }
    }

    /// A loss from `from` until its replacement at `until`.
    pub(crate) fn add_loss(&mut self, node: usize, from: Time, until: Time) {
        if let Some(ivs) = self.by_node.get_mut(node) {
            ivs.push(Interval {
                from,
                until: Some(until),
                recovery: None,
                recoverable: false,
            });
        }
    }

    /// Ends the fault covering `at` there; returns the recovery it had
    /// scheduled, which the caller cancels.
    pub(crate) fn end_at(&mut self, node: usize, at: Time) -> Option<usize> {
        let iv = self
            .by_node
            .get_mut(node)?
            .iter_mut()
            .find(|iv| iv.recoverable && iv.from <= at && at < iv.end())?;
        iv.until = Some(at);
        iv.recovery.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_do_not_overlap_and_recoveries_cut_them_short() {
        let mut f = Faults::new(2);
        f.add(0, Time(10), Some(Time(20)), Some(7));
        assert!(!f.is_free(0, Time(15), None));
        assert!(!f.is_free(0, Time(0), Some(Time(11))));
        assert!(f.is_free(0, Time(20), None));
        assert!(f.is_free(0, Time(0), Some(Time(10))));
        assert!(f.is_free(1, Time(15), None));
        assert!(f.is_down(0, Time(10)) && !f.is_down(0, Time(20)));
        assert_eq!(f.end_at(0, Time(12)), Some(7));
        assert!(!f.is_down(0, Time(12)));
        assert!(f.is_free(0, Time(12), None));
        assert_eq!(f.end_at(1, Time(12)), None);
    }
}
