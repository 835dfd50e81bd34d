//! Latencies of the bind loop (decisions, bind requests) in microseconds:
//! a log-linear histogram with about 3% resolution, so a long run keeps a
//! fixed amount of memory.

/// Values below this are counted exactly.
const EXACT: u64 = 64;
/// Sub-buckets per power of two above [`EXACT`].
const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
const FIRST_EXP: u32 = 6;
const BUCKETS: usize = EXACT as usize + (64 - FIRST_EXP as usize) * SUB;

/// Counts of latencies.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    max: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: vec![0; BUCKETS],
            count: 0,
            sum: 0,
            max: 0,
        }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    let exp = 63 - v.leading_zeros();
    let sub = ((v >> (exp - SUB_BITS)) as usize) & (SUB - 1);
    EXACT as usize + (exp - FIRST_EXP) as usize * SUB + sub
}

/// The middle of a bucket's range.
fn value_of(bucket: usize) -> u64 {
    if bucket < EXACT as usize {
        return bucket as u64;
    }
    let i = bucket - EXACT as usize;
    let exp = FIRST_EXP + (i / SUB) as u32;
    let sub = (i % SUB) as u64;
    let width = 1u64 << (exp - SUB_BITS);
    ((SUB as u64 + sub) << (exp - SUB_BITS)).saturating_add(width / 2)
}

impl LatencyHistogram {
    pub fn record(&mut self, micros: u64) {
        self.counts[bucket_of(micros)] += 1;
        self.count += 1;
        self.sum += u128::from(micros);
        self.max = self.max.max(micros);
    }

    pub fn record_duration(&mut self, d: std::time::Duration) {
        self.record(u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    }

    /// The value at quantile `q` (0..=1), within the bucket resolution and
    /// never above the largest value recorded; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        if rank >= self.count {
            return self.max;
        }
        let mut seen = 0;
        for (bucket, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value_of(bucket).min(self.max);
            }
        }
        self.max
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            mean_micros: if self.count == 0 {
                0.0
            } else {
                self.sum as f64 / self.count as f64
            },
            p50_micros: self.quantile(0.5),
            p90_micros: self.quantile(0.9),
            p99_micros: self.quantile(0.99),
            max_micros: self.max,
        }
    }
}

/// Percentiles of a latency, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_micros: f64,
    pub p50_micros: u64,
    pub p90_micros: u64,
    pub p99_micros: u64,
    pub max_micros: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for v in (0..200_000u64).chain([u64::MAX / 3, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b >= last && b < BUCKETS, "{v}");
            last = b;
            let mid = value_of(b) as f64;
            if v > 0 {
                assert!((mid - v as f64).abs() / v as f64 <= 0.035, "{v} -> {mid}");
            }
        }
    }

    #[test]
    fn quantiles_of_a_uniform_sample() {
        let mut h = LatencyHistogram::default();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let s = h.summary();
        assert_eq!(s.count, 10_000);
        assert_eq!(s.max_micros, 10_000);
        assert!((s.mean_micros - 5000.5).abs() < 1e-9);
        for (got, want) in [(s.p50_micros, 5000.0), (s.p90_micros, 9000.0), (s.p99_micros, 9900.0)] {
            assert!((got as f64 - want).abs() / want < 0.035, "{got} vs {want}");
        }
        assert_eq!(LatencyHistogram::default().summary(), LatencySummary::default());
    }

    #[test]
    fn one_outlier_shows_in_max_and_not_in_the_median() {
        let mut h = LatencyHistogram::default();
        for _ in 0..99 {
            h.record(10);
        }
        h.record_duration(std::time::Duration::from_secs(2));
        assert_eq!(h.quantile(0.5), 10);
        assert_eq!(h.quantile(0.99), 10);
        assert_eq!(h.quantile(1.0), 2_000_000);
        assert_eq!(h.summary().max_micros, 2_000_000);
    }
}
