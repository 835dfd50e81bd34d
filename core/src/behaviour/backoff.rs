//! kubelet's CrashLoopBackOff: the delay before an exited container is
//! started again.
//!
//! kubelet keys a `flowcontrol.Backoff` per container with `backOffPeriod`
//! (10 s) doubling up to `MaxContainerBackOff` (300 s), both in
//! `pkg/kubelet/kubelet.go`. The Kubernetes documentation ("Container restart
//! policy") states the resulting behaviour, which is what this models: delays
//! of 10 s, 20 s, 40 s, … capped at five minutes, and back to 10 s once a
//! container has run for 10 minutes without a problem. Upstream restarts the
//! very first exit at the next pod sync; the model, like the documentation,
//! waits the initial delay from the first exit on.

use super::config::ModelConfig;
use crate::time::Span;

/// The back-off state of one container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CrashBackOff {
    /// the delay used for the previous restart, if any
    last: Option<Span>,
}

impl CrashBackOff {
    pub fn new() -> CrashBackOff {
        CrashBackOff::default()
    }

    /// The delay before restarting a container that exited after running for
    /// `ran_for`; advances the back-off.
    pub fn on_exit(&mut self, ran_for: Span, config: &ModelConfig) -> Span {
        let initial = Span::from_secs_f64(config.crash_backoff_initial_seconds);
        let max = Span::from_secs_f64(config.crash_backoff_max_seconds);
        let reset = Span::from_secs_f64(config.crash_backoff_reset_seconds);
        let delay = match self.last {
            Some(prev) if ran_for < reset => Span(prev.0.saturating_mul(2)).min(max),
            _ => initial,
        };
        self.last = Some(delay);
        delay
    }

    /// The delay the previous restart waited, if there was one.
    pub fn last(&self) -> Option<Span> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_ten_seconds_to_a_five_minute_cap() {
        let config = ModelConfig::default();
        let mut b = CrashBackOff::new();
        let delays: Vec<u64> = (0..8)
            .map(|_| b.on_exit(Span::from_secs(1), &config).as_millis() / 1000)
            .collect();
        assert_eq!(delays, [10, 20, 40, 80, 160, 300, 300, 300]);
    }

    #[test]
    fn resets_after_ten_minutes_of_running() {
        let config = ModelConfig::default();
        let mut b = CrashBackOff::new();
        for _ in 0..4 {
            b.on_exit(Span::from_secs(5), &config);
        }
        assert_eq!(b.last(), Some(Span::from_secs(80)));
        // just short of ten minutes keeps doubling
        assert_eq!(b.on_exit(Span::from_secs(599), &config), Span::from_secs(160));
        // ten minutes of running is trouble-free: back to the initial delay
        assert_eq!(b.on_exit(Span::from_secs(600), &config), Span::from_secs(10));
        assert_eq!(b.on_exit(Span::from_secs(3), &config), Span::from_secs(20));
    }

    #[test]
    fn follows_the_configured_constants() {
        let config = ModelConfig {
            crash_backoff_initial_seconds: 1.0,
            crash_backoff_max_seconds: 4.0,
            ..Default::default()
        };
        let mut b = CrashBackOff::new();
        let delays: Vec<u64> = (0..5).map(|_| b.on_exit(Span::ZERO, &config).as_millis()).collect();
        assert_eq!(delays, [1000, 2000, 4000, 4000, 4000]);
    }
}
