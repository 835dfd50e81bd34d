//! Properties of the correlation statistics on arbitrary data.

use proptest::prelude::*;
use results::stats::{average_ranks, pearson, spearman};

fn pairs() -> impl Strategy<Value = Vec<(i32, i32)>> {
    proptest::collection::vec((-50i32..50, -5i32..5), 3..40)
}

fn split(p: &[(i32, i32)]) -> (Vec<f64>, Vec<f64>) {
    p.iter().map(|&(x, y)| (f64::from(x), f64::from(y))).unzip()
}

proptest! {
    #[test]
    fn coefficients_are_bounded_and_symmetric(p in pairs()) {
        let (x, y) = split(&p);
        for (a, b) in [(pearson(&x, &y), pearson(&y, &x)), (spearman(&x, &y), spearman(&y, &x))] {
            prop_assert_eq!(a.is_some(), b.is_some());
            if let (Some(a), Some(b)) = (a, b) {
                prop_assert!((-1.0..=1.0).contains(&a));
                prop_assert!((a - b).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn spearman_ignores_increasing_transforms(p in pairs()) {
        let (x, y) = split(&p);
        let cubed: Vec<f64> = x.iter().map(|v| v * v * v + 3.0 * v).collect();
        match (spearman(&x, &y), spearman(&cubed, &y)) {
            (Some(a), Some(b)) => prop_assert!((a - b).abs() < 1e-12),
            (a, b) => prop_assert_eq!(a, b),
        }
    }

    #[test]
    fn ranks_sum_to_the_triangle_number(v in proptest::collection::vec(-5i32..5, 1..50)) {
        let v: Vec<f64> = v.into_iter().map(f64::from).collect();
        let n = v.len() as f64;
        let sum: f64 = average_ranks(&v).iter().sum();
        prop_assert!((sum - n * (n + 1.0) / 2.0).abs() < 1e-9);
    }
}
