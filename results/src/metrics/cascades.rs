//! Cascades: how many containers one node-pressure OOM event kills, and
//! failures that follow each other closely on one node.

use super::CascadeMetrics;
use schedlab_core::{NodeId, Span, Time};
use std::collections::{BTreeMap, HashMap};

/// Failures on one node at most this far apart belong to one chain.
pub const BURST_GAP: Span = Span(60_000);

/// The running chain of failures on one node.
#[derive(Debug, Clone, Copy)]
struct Chain {
    last: Time,
    len: u32,
}

#[derive(Debug, Default)]
pub(super) struct Cascades {
    // One OOM event is the node-pressure kills on one node at one time; the
    // OOM killer picks its victims at once.
    oom_events: BTreeMap<(NodeId, Time), u32>,
    chains: HashMap<NodeId, Chain>,
    bursts: u64,
    burst_max: u32,
}

impl Cascades {
    /// A ContainerExited with oom_cause NodePressure.
    pub fn oom_pressure_victim(&mut self, t: Time, node: NodeId) {
        *self.oom_events.entry((node, t)).or_default() += 1;
    }

    /// A failure (as `failures` counts them) on `node`.
    pub fn failure(&mut self, t: Time, node: NodeId) {
        match self.chains.get_mut(&node) {
            Some(chain) if t.since(chain.last) <= BURST_GAP => {
                chain.last = t;
                chain.len += 1;
            }
            Some(chain) => {
                let ended = *chain;
                *chain = Chain { last: t, len: 1 };
                self.close(ended);
            }
            None => {
                self.chains.insert(node, Chain { last: t, len: 1 });
            }
        }
    }

    fn close(&mut self, chain: Chain) {
        if chain.len >= 2 {
            self.bursts += 1;
            self.burst_max = self.burst_max.max(chain.len);
        }
    }

    pub fn finish(mut self) -> CascadeMetrics {
        let open: Vec<Chain> = self.chains.values().copied().collect();
        for chain in open {
            self.close(chain);
        }
        let events = self.oom_events.len() as u64;
        let victims: u64 = self.oom_events.values().map(|&v| u64::from(v)).sum();
        CascadeMetrics {
            oom_pressure_events: events,
            oom_victims_per_event_mean: (events > 0).then(|| victims as f64 / events as f64),
            oom_victims_per_event_max: self.oom_events.values().copied().max().unwrap_or(0),
            failure_bursts: self.bursts,
            failure_burst_max: self.burst_max,
        }
    }
}
