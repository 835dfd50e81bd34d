//! The wall-clock time of every scheduling decision, measured around the
//! policy call, and (opt-in) charged to virtual time.
//!
//! Scheduling takes no virtual time in the simulator unless charged. When
//! charged, the scheduler is one serial worker, as kube-scheduler's
//! scheduling cycle is: a decision that starts at `now` and took `d` of wall
//! time takes effect at `now + d`, against the cluster as it is then; until
//! then no other decision starts. Sub-millisecond decisions accumulate on the
//! scheduler's own nanosecond clock, so a thousand 0.3 ms decisions take
//! 0.3 s of virtual time, not zero.

use super::SimError;
use crate::pod::PodId;
use crate::time::Time;
use crate::view::Placement;
use hdrhistogram::Histogram;
use std::time::Duration;

#[derive(Debug)]
pub(crate) struct Decisions {
    histogram: Histogram<u64>,
    charge: bool,
    /// the scheduler's own clock, ns since the run's start
    clock_ns: u128,
    /// the time the decision in flight takes effect
    busy_until: Time,
    in_flight: Option<(PodId, Placement)>,
}

impl Decisions {
    pub(crate) fn new(charge: bool) -> Result<Decisions, SimError> {
        Ok(Decisions {
            histogram: crate::timing::histogram().map_err(|e| SimError::Histogram(format!("{e:?}")))?,
            charge,
            clock_ns: 0,
            busy_until: Time::ZERO,
            in_flight: None,
        })
    }

    pub(crate) fn set_charge(&mut self, charge: bool) {
        self.charge = charge;
    }

    pub(crate) fn histogram(&self) -> &Histogram<u64> {
        &self.histogram
    }

    pub(crate) fn charged(&self) -> bool {
        self.charge
    }

    /// Whether a decision is still in flight at `now`.
    pub(crate) fn busy(&self, now: Time) -> bool {
        self.charge && (self.in_flight.is_some() || self.busy_until > now)
    }

    /// Notes a decision made at `now` that took `took`; returns when it
    /// takes effect (`now` unless charged).
    pub(crate) fn decided(&mut self, now: Time, took: Duration) -> Time {
        crate::timing::record(&mut self.histogram, took);
        if !self.charge {
            return now;
        }
        let now_ns = u128::from(now.as_millis()) * 1_000_000;
        self.clock_ns = self.clock_ns.max(now_ns) + took.as_nanos();
        let done_ms = self.clock_ns.div_ceil(1_000_000);
        self.busy_until = Time(u64::try_from(done_ms).unwrap_or(u64::MAX)).max(now);
        self.busy_until
    }

    pub(crate) fn hold(&mut self, pod: PodId, placement: Placement) {
        self.in_flight = Some((pod, placement));
    }

    pub(crate) fn take_in_flight(&mut self) -> Option<(PodId, Placement)> {
        self.in_flight.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncharged_decisions_take_effect_at_once() {
        let mut d = Decisions::new(false).unwrap();
        assert_eq!(d.decided(Time(5), Duration::from_millis(40)), Time(5));
        assert!(!d.busy(Time(5)));
        assert_eq!(d.histogram().len(), 1);
    }

    #[test]
    fn charged_decisions_queue_on_the_schedulers_clock() {
        let mut d = Decisions::new(true).unwrap();
        // three 0.4 ms decisions at t = 10 ms: 0.4, 0.8 and 1.2 ms of scheduler time
        assert_eq!(d.decided(Time(10), Duration::from_micros(400)), Time(11));
        assert_eq!(d.decided(Time(10), Duration::from_micros(400)), Time(11));
        assert_eq!(d.decided(Time(10), Duration::from_micros(400)), Time(12));
        assert!(d.busy(Time(11)));
        assert!(!d.busy(Time(12)));
        // an idle scheduler starts from the current time, not from its past
        assert_eq!(d.decided(Time(100), Duration::from_millis(3)), Time(103));
    }
}
