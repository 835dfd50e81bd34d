//! Scenario time on the wall clock. Timelines are written in scenario time;
//! a real cluster runs in wall time, compressed by a time scale (60 plays a
//! scenario hour in a wall minute).

use schedlab_core::time::{Span, Time};
use std::time::{Duration, Instant};

/// Maps wall-clock instants to scenario time and back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScenarioClock {
    start: Instant,
    scale: f64,
}

/// A time scale that is not a positive finite number.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("time-scale {0}: give a positive number (1 is real time, 60 plays an hour in a minute)")]
pub struct BadTimeScale(pub f64);

/// Checks a time scale before anything starts.
pub fn check_scale(scale: f64) -> crate::Result<()> {
    if scale.is_finite() && scale > 0.0 {
        Ok(())
    } else {
        Err(BadTimeScale(scale).into())
    }
}

impl ScenarioClock {
    /// A clock whose scenario time zero is `start`.
    pub fn new(start: Instant, scale: f64) -> crate::Result<ScenarioClock> {
        check_scale(scale)?;
        Ok(ScenarioClock { start, scale })
    }

    /// A clock starting now.
    pub fn starting_now(scale: f64) -> crate::Result<ScenarioClock> {
        ScenarioClock::new(Instant::now(), scale)
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }

    pub fn start(&self) -> Instant {
        self.start
    }

    /// Scenario time at wall instant `at` (zero before the start).
    pub fn at(&self, at: Instant) -> Time {
        let wall = at.saturating_duration_since(self.start);
        Time((wall.as_secs_f64() * 1000.0 * self.scale).floor() as u64)
    }

    /// Scenario time now.
    pub fn now(&self) -> Time {
        self.at(Instant::now())
    }

    /// The wall instant at which scenario time reaches `t`.
    pub fn instant_of(&self, t: Time) -> Instant {
        self.start + self.wall_span(Span(t.as_millis()))
    }

    /// How long `span` of scenario time lasts on the wall clock.
    pub fn wall_span(&self, span: Span) -> Duration {
        Duration::from_secs_f64(span.as_secs_f64() / self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compresses_and_round_trips() {
        let start = Instant::now();
        let clock = ScenarioClock::new(start, 60.0).unwrap();
        assert_eq!(clock.at(start), Time::ZERO);
        assert_eq!(clock.at(start + Duration::from_secs(1)), Time(60_000));
        let t = Time(3_600_000);
        assert_eq!(clock.instant_of(t), start + Duration::from_secs(60));
        assert_eq!(clock.at(clock.instant_of(t)), t);
        assert_eq!(clock.wall_span(Span::from_secs(120)), Duration::from_secs(2));
    }

    #[test]
    fn refuses_scales_that_are_not_positive() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(ScenarioClock::new(Instant::now(), bad).is_err());
        }
    }
}
