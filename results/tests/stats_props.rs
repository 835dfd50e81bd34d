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

mod comparison {
    use proptest::prelude::*;
    use rand::seq::SliceRandom;
    use results::stats::{
        BOOTSTRAP_RESAMPLES, CONFIDENCE, PMethod, bootstrap_mean_ci, cliffs_delta, holm, mann_whitney,
        vargha_delaney_a12,
    };

    fn sample(max: usize) -> impl Strategy<Value = Vec<f64>> {
        proptest::collection::vec(-20i32..20, 1..max).prop_map(|v| v.into_iter().map(f64::from).collect())
    }

    /// Few distinct values: many ties.
    fn small_ints(max: usize) -> impl Strategy<Value = Vec<f64>> {
        proptest::collection::vec(0i32..4, 1..max).prop_map(|v| v.into_iter().map(f64::from).collect())
    }

    /// Distinct values split into two samples: no ties anywhere.
    fn untied(max_total: usize) -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
        (2..=max_total)
            .prop_flat_map(|n| {
                (
                    Just(n),
                    1..n,
                    Just(()).prop_perturb(move |_, mut rng| {
                        let mut v: Vec<f64> = (0..n).map(|i| i as f64 * 1.5 - 3.0).collect();
                        v.shuffle(&mut rng);
                        v
                    }),
                )
            })
            .prop_map(|(_, m, v)| (v[..m].to_vec(), v[m..].to_vec()))
    }

    /// U of every way to pick |x| of the pooled values as "x".
    fn brute_force_p(x: &[f64], y: &[f64]) -> f64 {
        let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
        let (m, total) = (x.len(), pooled.len());
        let u = |xs: &[f64], ys: &[f64]| -> f64 {
            xs.iter()
                .map(|a| {
                    ys.iter()
                        .map(|b| {
                            if a > b {
                                1.0
                            } else if a == b {
                                0.5
                            } else {
                                0.0
                            }
                        })
                        .sum::<f64>()
                })
                .sum()
        };
        let observed = u(x, y);
        let (mut low, mut high, mut all) = (0u64, 0u64, 0u64);
        for mask in 0u32..(1 << total) {
            if mask.count_ones() as usize != m {
                continue;
            }
            let (xs, ys): (Vec<_>, Vec<_>) = (0..total).partition(|i| mask & (1 << i) != 0);
            let xs: Vec<f64> = xs.into_iter().map(|i| pooled[i]).collect();
            let ys: Vec<f64> = ys.into_iter().map(|i| pooled[i]).collect();
            let v = u(&xs, &ys);
            all += 1;
            low += u64::from(v <= observed);
            high += u64::from(v >= observed);
        }
        (2.0 * low.min(high) as f64 / all as f64).min(1.0)
    }

    proptest! {
        #[test]
        fn bootstrap_interval_holds_the_mean(v in sample(15), seed in any::<u64>()) {
            let mut rng = schedlab_core::rng::stream(seed, &[schedlab_core::rng::purpose::STATISTICS]);
            let e = bootstrap_mean_ci(&v, CONFIDENCE, BOOTSTRAP_RESAMPLES, &mut rng).unwrap();
            prop_assert!(e.ci.contains(e.mean), "{:?}", e);
        }

        #[test]
        fn p_values_lie_in_the_unit_interval_and_ignore_the_order_of_arms(x in sample(30), y in sample(30)) {
            let a = mann_whitney(&x, &y).unwrap();
            let b = mann_whitney(&y, &x).unwrap();
            prop_assert!((0.0..=1.0).contains(&a.p), "{:?}", a);
            prop_assert!((a.p - b.p).abs() < 1e-12);
            prop_assert!((a.u + b.u - (x.len() * y.len()) as f64).abs() < 1e-9);
        }

        #[test]
        fn swapping_samples_mirrors_the_effect_sizes(x in sample(12), y in sample(12)) {
            let d = cliffs_delta(&x, &y).unwrap();
            prop_assert!((-1.0..=1.0).contains(&d));
            prop_assert_eq!(cliffs_delta(&y, &x).unwrap(), -d);
            let a = vargha_delaney_a12(&x, &y).unwrap();
            prop_assert!((a + vargha_delaney_a12(&y, &x).unwrap() - 1.0).abs() < 1e-12);
            prop_assert!((a - (d + 1.0) / 2.0).abs() < 1e-12);
            // A12 is U over the number of pairs
            let u = mann_whitney(&x, &y).unwrap().u;
            prop_assert!((a - u / (x.len() * y.len()) as f64).abs() < 1e-9);
        }

        #[test]
        fn exact_p_with_ties_matches_enumeration(x in small_ints(6), y in small_ints(6)) {
            let r = mann_whitney(&x, &y).unwrap();
            prop_assert_eq!(r.method, PMethod::Exact);
            let expected = brute_force_p(&x, &y);
            prop_assert!((r.p - expected).abs() < 1e-9, "{:?} vs {}", r, expected);
        }

        #[test]
        fn exact_p_matches_enumeration((x, y) in untied(11)) {
            let r = mann_whitney(&x, &y).unwrap();
            prop_assert_eq!(r.method, PMethod::Exact);
            let expected = brute_force_p(&x, &y);
            prop_assert!((r.p - expected).abs() < 1e-9, "{:?} vs {}", r, expected);
        }

        #[test]
        fn holm_is_no_smaller_and_keeps_the_order(p in proptest::collection::vec(proptest::option::of(0.0f64..=1.0), 0..30)) {
            let adj = holm(&p);
            prop_assert_eq!(adj.len(), p.len());
            for (i, (raw, a)) in p.iter().zip(&adj).enumerate() {
                prop_assert_eq!(raw.is_some(), a.is_some());
                if let (Some(raw), Some(a)) = (raw, a) {
                    prop_assert!(*a >= *raw && *a <= 1.0);
                    for (other, b) in p.iter().zip(&adj).skip(i + 1) {
                        if let (Some(other), Some(b)) = (other, b) {
                            if raw < other { prop_assert!(a <= b); }
                            if raw > other { prop_assert!(a >= b); }
                        }
                    }
                }
            }
        }
    }
}
