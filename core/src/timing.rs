//! Wall-clock durations of a scheduling loop (a policy's decisions, a
//! bind's round trip), in nanoseconds, as HdrHistograms: the simulator and
//! the watch-and-bind loop measure the same way, and `results` reads the
//! histograms back from the run folder.

use hdrhistogram::{CreationError, Histogram};
use serde::Serialize;
use std::time::Duration;

/// Significant digits: values are kept within 0.1%.
pub const SIGNIFICANT_DIGITS: u8 = 3;
/// The longest duration told apart (one hour); longer ones count as this.
pub const MAX_NS: u64 = 3_600_000_000_000;

/// An empty histogram of nanoseconds from 1 ns to [`MAX_NS`].
pub fn histogram() -> Result<Histogram<u64>, CreationError> {
    Histogram::new_with_bounds(1, MAX_NS, SIGNIFICANT_DIGITS)
}

/// Adds `took` to `h`, clamped to its range.
pub fn record(h: &mut Histogram<u64>, took: Duration) {
    let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
    h.saturating_record(ns.clamp(1, MAX_NS));
}

/// Percentiles of a latency, in microseconds, for manifests and logs.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_micros: f64,
    pub p50_micros: u64,
    pub p90_micros: u64,
    pub p99_micros: u64,
    pub max_micros: u64,
}

impl LatencySummary {
    /// The summary of a histogram of nanoseconds (quantiles by nearest rank,
    /// each the upper bound of its bucket).
    pub fn of(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let micros = |ns: u64| ns.div_ceil(1000);
        LatencySummary {
            count: h.len(),
            mean_micros: h.mean() / 1000.0,
            p50_micros: micros(h.value_at_quantile(0.5)),
            p90_micros: micros(h.value_at_quantile(0.9)),
            p99_micros: micros(h.value_at_quantile(0.99)),
            max_micros: micros(h.max()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_of_a_uniform_sample() {
        let mut h = histogram().unwrap();
        for us in 1..=10_000u64 {
            record(&mut h, Duration::from_micros(us));
        }
        let s = LatencySummary::of(&h);
        assert_eq!(s.count, 10_000);
        // within the histogram's 0.1%
        assert!((s.mean_micros - 5000.5).abs() < 5.0, "{s:?}");
        for (got, want) in [
            (s.p50_micros, 5000),
            (s.p90_micros, 9000),
            (s.p99_micros, 9900),
            (s.max_micros, 10_000),
        ] {
            assert!(got.abs_diff(want) <= want / 1000 + 1, "{got} vs {want}");
        }
        assert_eq!(LatencySummary::of(&histogram().unwrap()), LatencySummary::default());
    }

    #[test]
    fn out_of_range_durations_are_clamped_not_lost() {
        let mut h = histogram().unwrap();
        record(&mut h, Duration::ZERO);
        record(&mut h, Duration::from_secs(7200));
        assert_eq!(h.len(), 2);
        assert!(h.max() >= MAX_NS - MAX_NS / 1000);
    }
}
