//! Wall-clock schedules of per-node chores (Lease renewals, node status
//! reports), spread over the interval so a thousand nodes do not all renew
//! in the same instant, as a thousand kubelets started at different times
//! would not.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::time::{Duration, Instant};

/// A repeating chore per node.
#[derive(Debug)]
pub struct Heartbeats {
    every: Duration,
    due: BinaryHeap<Reverse<(Instant, u64, String)>>,
    live: HashSet<String>,
    seq: u64,
}

/// Where in the interval a node's chores fall: a stable fraction in [0, 1)
/// from its name (FNV-1a), so the spread does not depend on adoption order.
pub fn phase_of(name: &str) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % 10_000) as f64 / 10_000.0
}

impl Heartbeats {
    pub fn new(every: Duration) -> Heartbeats {
        Heartbeats {
            every: every.max(Duration::from_millis(1)),
            due: BinaryHeap::new(),
            live: HashSet::new(),
            seq: 0,
        }
    }

    /// Starts `name`'s chore: first due at its phase of the interval after `now`.
    pub fn add(&mut self, name: &str, now: Instant) {
        if self.live.insert(name.to_string()) {
            let first = now + self.every.mul_f64(phase_of(name));
            self.push(first, name.to_string());
        }
    }

    pub fn remove(&mut self, name: &str) {
        self.live.remove(name);
    }

    fn push(&mut self, at: Instant, name: String) {
        self.due.push(Reverse((at, self.seq, name)));
        self.seq += 1;
    }

    /// The nodes whose chore is due at `now`; each is due again an interval
    /// later (an interval after now when it fell behind by more than that).
    pub fn due(&mut self, now: Instant, out: &mut Vec<String>) {
        while let Some(Reverse((at, _, _))) = self.due.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, _, name))) = self.due.pop() else {
                break;
            };
            if !self.live.contains(&name) {
                continue;
            }
            let mut next = at + self.every;
            if next <= now {
                next = now + self.every;
            }
            out.push(name.clone());
            self.push(next, name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_comes_round_once_per_interval() {
        let every = Duration::from_secs(10);
        let mut hb = Heartbeats::new(every);
        let t0 = Instant::now();
        let names: Vec<String> = (0..100).map(|i| format!("node-{i}")).collect();
        for n in &names {
            hb.add(n, t0);
        }
        let mut seen = Vec::new();
        // one interval later every node was due exactly once
        hb.due(t0 + every - Duration::from_millis(1), &mut seen);
        seen.sort();
        let mut expected = names.clone();
        expected.sort();
        assert_eq!(seen, expected);
        // and spread: no single second holds more than a third of them
        let mut per_second = [0usize; 10];
        for n in &names {
            per_second[(phase_of(n) * 10.0) as usize] += 1;
        }
        assert!(per_second.iter().all(|&c| c < 34), "{per_second:?}");
        let mut again = Vec::new();
        hb.due(t0 + every * 2 - Duration::from_millis(1), &mut again);
        assert_eq!(again.len(), 100);
    }

    #[test]
    fn removed_nodes_stop() {
        let mut hb = Heartbeats::new(Duration::from_secs(1));
        let t0 = Instant::now();
        hb.add("a", t0);
        hb.add("b", t0);
        hb.remove("a");
        let mut out = Vec::new();
        hb.due(t0 + Duration::from_secs(5), &mut out);
        assert_eq!(out, vec!["b".to_string()]);
    }
}
