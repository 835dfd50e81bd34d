//! When each pod of a create phase is created, relative to the phase's start.

use crate::model::Pacing;
use schedlab_core::Span;

/// Seconds after the phase's start at which pod `k` (0-based) of `count` is created.
pub(crate) fn offset_secs(pacing: Pacing, k: u32, count: u32) -> f64 {
    let k = k as f64;
    match pacing {
        Pacing::AllAtOnce => 0.0,
        Pacing::Rate(rate) => k / rate,
        Pacing::Over(span) => k * span.as_secs_f64() / count.max(1) as f64,
        Pacing::Ramp { from, to } => {
            if k == 0.0 {
                return 0.0;
            }
            // The rate rises (or falls) linearly from `from` to `to` over
            // T = 2n / (from + to); pod k is due when the integral of the
            // rate reaches k: from*t + a*t^2 = k with a = (to - from) / 2T.
            // This form of the quadratic's root stays exact when a is near 0.
            let total = 2.0 * count as f64 / (from + to);
            let a = (to - from) / (2.0 * total);
            2.0 * k / (from + (from * from + 4.0 * a * k).max(0.0).sqrt())
        }
    }
}

/// How long the phase takes: until the next pod would have been due.
pub(crate) fn length(pacing: Pacing, count: u32) -> Span {
    let n = count as f64;
    match pacing {
        Pacing::AllAtOnce => Span::ZERO,
        Pacing::Rate(rate) => Span::from_secs_f64(n / rate),
        Pacing::Over(span) => span,
        Pacing::Ramp { from, to } => Span::from_secs_f64(2.0 * n / (from + to)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_over_space_pods_evenly() {
        assert_eq!(offset_secs(Pacing::Rate(2.0), 3, 10), 1.5);
        assert_eq!(length(Pacing::Rate(2.0), 10), Span::from_secs(5));
        assert_eq!(offset_secs(Pacing::Over(Span::from_secs(100)), 5, 10), 50.0);
        assert_eq!(length(Pacing::Over(Span::from_secs(100)), 10), Span::from_secs(100));
        assert_eq!(offset_secs(Pacing::AllAtOnce, 7, 10), 0.0);
    }

    #[test]
    fn ramps_accelerate_and_end_on_time() {
        let up = Pacing::Ramp { from: 1.0, to: 9.0 };
        let n = 100;
        let times: Vec<f64> = (0..n).map(|k| offset_secs(up, k, n)).collect();
        assert!(times.windows(2).all(|w| w[1] > w[0]));
        // gaps shrink as the rate grows
        assert!(times[1] - times[0] > times[99] - times[98]);
        // the (n+1)-th pod would be due exactly at the end
        let total = length(up, n).as_secs_f64();
        assert!((offset_secs(up, n, n) - total).abs() < 1e-9);
        // from = to is a constant rate
        let flat = Pacing::Ramp { from: 4.0, to: 4.0 };
        assert!((offset_secs(flat, 8, 20) - 2.0).abs() < 1e-12);
        // from zero and down to zero stay finite
        let from_zero = Pacing::Ramp { from: 0.0, to: 2.0 };
        assert!((1..50).all(|k| offset_secs(from_zero, k, 50).is_finite()));
        let to_zero = Pacing::Ramp { from: 2.0, to: 0.0 };
        assert!((offset_secs(to_zero, 50, 50) - length(to_zero, 50).as_secs_f64()).abs() < 1e-6);
    }
}
