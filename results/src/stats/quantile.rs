//! Means, standard deviations and quantiles of plain samples.

/// Arithmetic mean; `None` for an empty or non-finite sample.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample standard deviation (denominator n − 1); `None` below two values.
pub fn sample_std(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// The median: the middle value of the sorted sample, or the mean of the two
/// middle values for an even count. `None` for an empty or non-finite sample.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    Some(if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    })
}

/// The nearest-rank quantile of an ascending sample: the smallest value with
/// at least a fraction `q` of the sample at or below it (rank ⌈q·n⌉, at least
/// 1). It is always an observed value, and it is the rule HdrHistogram's
/// `value_at_quantile` follows, so every quantile in schedlab means the same.
pub fn nearest_rank(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let n = sorted.len();
    // The tolerance keeps a product such as 0.95 × 20 that lands a rounding
    // error above an integer from moving one rank up.
    let rank = (q * n as f64 - 1e-9).ceil().max(1.0) as usize;
    sorted.get(rank.min(n) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_std_by_hand() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        // deviations -2, -1, 3: squares 4 + 1 + 9 = 14, / 2 = 7
        assert!((sample_std(&[1.0, 2.0, 6.0]).unwrap() - 7f64.sqrt()).abs() < 1e-12);
        assert_eq!(mean(&[]), None);
        assert_eq!(sample_std(&[5.0]), None);
        assert_eq!(mean(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn median_by_hand() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn nearest_rank_picks_observed_values() {
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        // 0.95 × 20 = 19 → 19th value
        assert_eq!(nearest_rank(&xs, 0.95), Some(19.0));
        assert_eq!(nearest_rank(&xs, 0.5), Some(10.0));
        assert_eq!(nearest_rank(&xs, 0.0), Some(1.0));
        assert_eq!(nearest_rank(&xs, 1.0), Some(20.0));
        // 0.95 × 10 = 9.5 → rank 10
        assert_eq!(nearest_rank(&xs[..10], 0.95), Some(10.0));
        assert_eq!(nearest_rank(&[], 0.5), None);
        assert_eq!(nearest_rank(&xs, 1.5), None);
    }
}
