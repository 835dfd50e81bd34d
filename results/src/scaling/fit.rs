//! The decision-time exponent: least squares of ln p99 on ln N, and its
//! percentile interval from resampling the seeds within each size.

use rand::Rng;

/// Points `(N, p99)` grouped by size (ascending N, every p99 > 0).
pub type BySize = Vec<(usize, Vec<f64>)>;

/// The least-squares slope of ln y on ln x over every point; None with fewer
/// than two distinct x or a non-positive value.
pub fn log_log_slope(by_size: &[(usize, Vec<f64>)]) -> Option<f64> {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for (n, values) in by_size {
        for &v in values {
            if *n == 0 || !(v > 0.0 && v.is_finite()) {
                return None;
            }
            xs.push((*n as f64).ln());
            ys.push(v.ln());
        }
    }
    let k = xs.len() as f64;
    if xs.is_empty() {
        return None;
    }
    let (mx, my) = (xs.iter().sum::<f64>() / k, ys.iter().sum::<f64>() / k);
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    Some(sxy / sxx)
}

/// One resample: each size's values drawn with replacement, as many as it has.
pub fn resample(by_size: &[(usize, Vec<f64>)], rng: &mut impl Rng) -> BySize {
    by_size
        .iter()
        .map(|(n, v)| (*n, (0..v.len()).map(|_| v[rng.random_range(0..v.len())]).collect()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_of_a_power_law_is_its_exponent() {
        let by_size: BySize = [10usize, 40, 160, 640]
            .iter()
            .map(|&n| (n, vec![0.003 * (n as f64).powf(1.5), 0.003 * (n as f64).powf(1.5)]))
            .collect();
        assert!((log_log_slope(&by_size).unwrap() - 1.5).abs() < 1e-9);
        // flat: 0
        let flat: BySize = [10usize, 40, 160].iter().map(|&n| (n, vec![0.1, 0.1])).collect();
        assert!(log_log_slope(&flat).unwrap().abs() < 1e-12);
        // one size, or a zero, says nothing
        assert_eq!(log_log_slope(&[(10, vec![0.1, 0.2])]), None);
        assert_eq!(log_log_slope(&[(10, vec![0.1]), (40, vec![0.0])]), None);
    }
}
