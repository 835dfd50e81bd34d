//! What the emulator did, counted as it goes (shared by its tasks).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What an emulator did, for reports and capacity measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct EmulatorStats {
    /// pod status patches the API server accepted
    pub status_writes: u64,
    /// node Leases renewed (or created)
    pub lease_renewals: u64,
    /// requests and watches that failed and were tried again
    pub api_errors_retried: u64,
    /// the most a pod's timer fired after its scenario time, in wall ms
    pub lag_ms_max: u64,
}

/// The live counters behind [`EmulatorStats`].
#[derive(Debug, Default)]
pub struct Counters {
    status_writes: AtomicU64,
    lease_renewals: AtomicU64,
    api_errors_retried: AtomicU64,
    lag_ms_max: AtomicU64,
    nodes: AtomicUsize,
    pods: AtomicUsize,
}

impl Counters {
    pub fn status_written(&self) {
        self.status_writes.fetch_add(1, Ordering::Relaxed);
    }
    pub fn lease_renewed(&self) {
        self.lease_renewals.fetch_add(1, Ordering::Relaxed);
    }
    pub fn retried(&self) {
        self.api_errors_retried.fetch_add(1, Ordering::Relaxed);
    }
    pub fn lag(&self, lag: std::time::Duration) {
        let ms = u64::try_from(lag.as_millis()).unwrap_or(u64::MAX);
        self.lag_ms_max.fetch_max(ms, Ordering::Relaxed);
    }
    pub fn set_sizes(&self, nodes: usize, pods: usize) {
        self.nodes.store(nodes, Ordering::Relaxed);
        self.pods.store(pods, Ordering::Relaxed);
    }
    pub fn nodes(&self) -> usize {
        self.nodes.load(Ordering::Relaxed)
    }
    pub fn pods(&self) -> usize {
        self.pods.load(Ordering::Relaxed)
    }
    pub fn snapshot(&self) -> EmulatorStats {
        EmulatorStats {
            status_writes: self.status_writes.load(Ordering::Relaxed),
            lease_renewals: self.lease_renewals.load(Ordering::Relaxed),
            api_errors_retried: self.api_errors_retried.load(Ordering::Relaxed),
            lag_ms_max: self.lag_ms_max.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_keeps_the_maximum() {
        let c = Counters::default();
        c.lag(std::time::Duration::from_millis(30));
        c.lag(std::time::Duration::from_millis(10));
        c.status_written();
        c.retried();
        let s = c.snapshot();
        assert_eq!((s.lag_ms_max, s.status_writes, s.api_errors_retried), (30, 1, 1));
    }
}
