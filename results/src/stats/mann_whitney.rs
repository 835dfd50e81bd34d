//! The Mann–Whitney U test (Wilcoxon rank-sum), two-sided.
//!
//! Seeds per arm are few (typically 3–10), where the normal approximation is
//! poor, so small samples get the exact permutation distribution of U. Counts
//! such as restarts tie often, so the exact distribution is that of the
//! observed mid-ranks (the permutation test conditional on the ties), which
//! is the classical exact distribution when nothing is tied. Larger samples
//! use the normal approximation with the tie and continuity corrections.

use super::correlation::average_ranks;
use serde::Serialize;

/// Pooled samples up to this size get the exact distribution, however
/// unevenly they split (3 against 30 is where the normal approximation is
/// worst). Its subset counts, at most C(50, 25) < 2^53, are exact in f64, and
/// counting them costs O(N·m·N²) at worst: harmless at this size.
pub const EXACT_MAX_TOTAL: usize = 50;

/// How a p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PMethod {
    /// exact permutation distribution of U given the observed ties (both
    /// samples together at most [`EXACT_MAX_TOTAL`])
    Exact,
    /// normal approximation with tie and continuity correction
    Normal,
}

impl PMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            PMethod::Exact => "exact",
            PMethod::Normal => "normal",
        }
    }
}

/// The outcome of [`mann_whitney`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// U of the first sample: pairs (x, y) with x > y, plus half the ties
    pub u: f64,
    pub n_x: usize,
    pub n_y: usize,
    /// two-sided p-value, in [0, 1]
    pub p: f64,
    pub method: PMethod,
}

/// Two-sided Mann–Whitney U test of `x` against `y`. `None` when a side is
/// empty or holds a non-finite value.
///
/// Exact: p = min(1, 2 · min(P(U <= u), P(U >= u))) over the C(m + n, m)
/// equally likely ways to split the pooled mid-ranks. Normal: z = (|U − mn/2| − 1/2) / σ with
/// σ² = mn/12 · ((N + 1) − Σ(t³ − t) / (N(N − 1))) over tie groups of size t,
/// z clamped at 0, p = erfc(z/√2); all values tied (σ = 0) gives p = 1.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let ranks = average_ranks(&pooled);
    let mf = m as f64;
    let u = ranks[..m].iter().sum::<f64>() - mf * (mf + 1.0) / 2.0;
    let ties = tie_term(&pooled);
    let (p, method) = if m + n <= EXACT_MAX_TOTAL {
        (exact_p(m, &ranks), PMethod::Exact)
    } else {
        (normal_p(m, n, u, ties), PMethod::Normal)
    };
    Some(MannWhitney {
        u,
        n_x: m,
        n_y: n,
        p: p.clamp(0.0, 1.0),
        method,
    })
}

/// Σ(t³ − t) over the groups of tied values.
fn tie_term(pooled: &[f64]) -> f64 {
    let mut sorted = pooled.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut total = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i + 1;
        // `==` so that -0.0 and 0.0 tie, as in average_ranks
        while j < sorted.len() && sorted[j] == sorted[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        total += t * t * t - t;
        i = j;
    }
    total
}

/// The exact two-sided p of the rank sum of the first `m` of the pooled
/// mid-`ranks` (U differs from it by a constant). Doubled mid-ranks are whole
/// numbers; `counts[k][s]` counts the k-subsets of the ranks seen so far
/// whose doubled sum is s.
fn exact_p(m: usize, ranks: &[f64]) -> f64 {
    let doubled: Vec<usize> = ranks.iter().map(|r| (2.0 * r).round() as usize).collect();
    let observed: usize = doubled[..m].iter().sum();
    let max: usize = doubled.iter().sum();
    let mut counts = vec![vec![0.0f64; max + 1]; m + 1];
    counts[0][0] = 1.0;
    for &r in &doubled {
        for k in (1..=m).rev() {
            let (lower, upper) = counts.split_at_mut(k);
            let (from, to) = (&lower[k - 1], &mut upper[0]);
            for s in (r..=max).rev() {
                to[s] += from[s - r];
            }
        }
    }
    let dist = &counts[m];
    let total: f64 = dist.iter().sum();
    let below: f64 = dist[..=observed].iter().sum();
    let above: f64 = dist[observed..].iter().sum();
    (2.0 * below.min(above) / total).min(1.0)
}

fn normal_p(m: usize, n: usize, u: f64, ties: f64) -> f64 {
    let (mf, nf) = (m as f64, n as f64);
    let total = mf + nf;
    let variance = mf * nf / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
    if variance.is_nan() || variance <= 0.0 {
        return 1.0;
    }
    let z = ((u - mf * nf / 2.0).abs() - 0.5).max(0.0) / variance.sqrt();
    erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, for x >= 0, with relative error below
/// 1.2e-7 (Numerical Recipes' Chebyshev fit `erfcc`): ample for p-values
/// printed to 3 significant digits.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn three_vs_three_separated_is_one_tenth() {
        // 20 equally likely splits; U = 0 in one of them: p = 2/20
        let r = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(r.method, PMethod::Exact);
        assert_eq!(r.u, 0.0);
        assert!(close(r.p, 0.1, 1e-12), "{r:?}");
        let flipped = mann_whitney(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(flipped.u, 9.0);
        assert!(close(flipped.p, 0.1, 1e-12));
    }

    #[test]
    fn exact_small_cases_by_hand() {
        // 2 vs 2: 6 splits, U ∈ {0,1,2,2,3,4}; U = 1: P(U <= 1) = 2/6 → p = 2/3
        let r = mann_whitney(&[1.0, 3.0], &[2.0, 4.0]).unwrap();
        assert_eq!(r.u, 1.0);
        assert!(close(r.p, 2.0 / 3.0, 1e-12), "{r:?}");
        // 4 vs 4 separated: 2/70
        let r = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert!(close(r.p, 2.0 / 70.0, 1e-12), "{r:?}");
        // 3 vs 30 separated, exact where the normal approximation is 14x off: 2/C(33,3)
        let small: Vec<f64> = (31..34).map(f64::from).collect();
        let large: Vec<f64> = (0..30).map(f64::from).collect();
        let r = mann_whitney(&small, &large).unwrap();
        assert_eq!(r.method, PMethod::Exact);
        assert!(close(r.p, 2.0 / 5456.0, 1e-12), "{r:?}");
        // 5 vs 5 separated: 2/252
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [6.0, 7.0, 8.0, 9.0, 10.0];
        assert!(close(mann_whitney(&x, &y).unwrap().p, 2.0 / 252.0, 1e-12));
        // the middle of the distribution caps at 1
        let r = mann_whitney(&[1.0, 4.0], &[2.0, 3.0]).unwrap();
        assert_eq!((r.u, r.p), (2.0, 1.0));
        // one value each: U is 0 or 1 with probability 1/2
        assert_eq!(mann_whitney(&[1.0], &[2.0]).unwrap().p, 1.0);
    }

    #[test]
    fn ties_stay_exact_for_small_samples() {
        // x = 1,2,2 ; y = 2,3,4. Mid-ranks of 1,2,2,2,3,4: 1, 3,3,3, 5, 6;
        // R_x = 7, U = 1. Of the 20 splits, rank sums <= 7: {1,3,3} three
        // ways (which two of the three 3s): P = 3/20, p = 6/20.
        let r = mann_whitney(&[1.0, 2.0, 2.0], &[2.0, 3.0, 4.0]).unwrap();
        assert_eq!(r.method, PMethod::Exact);
        assert_eq!(r.u, 1.0);
        assert!(close(r.p, 0.3, 1e-12), "{r:?}");
        // counts as restarts tie: 2,3,3,2 against 8,12,12,8 still separate
        let r = mann_whitney(&[2.0, 3.0, 3.0, 2.0], &[8.0, 12.0, 12.0, 8.0]).unwrap();
        assert_eq!(r.method, PMethod::Exact);
        assert!(close(r.p, 2.0 / 70.0, 1e-12), "{r:?}");
        // all tied: no evidence either way
        let r = mann_whitney(&[2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap();
        assert_eq!((r.p, r.u), (1.0, 3.0));
    }

    #[test]
    fn ties_in_large_samples_use_the_corrected_normal_approximation() {
        // 26 ones and 26 twos against 26 twos and 26 threes … built so that
        // the correction is checked by hand: x = 13×1, 13×2; y = 13×2, 13×3.
        let x: Vec<f64> = (0..26).map(|i| if i < 13 { 1.0 } else { 2.0 }).collect();
        let y: Vec<f64> = (0..26).map(|i| if i < 13 { 2.0 } else { 3.0 }).collect();
        let r = mann_whitney(&x, &y).unwrap();
        assert_eq!(r.method, PMethod::Normal);
        // U = 13·0 + 13·(13·0.5) = 84.5; mn/2 = 338
        assert!(close(r.u, 84.5, 1e-9), "{r:?}");
        // ties: groups of 13, 26, 13 → 2·(13³ − 13) + (26³ − 26) = 4368 + 17550
        let var: f64 = 676.0 / 12.0 * (53.0 - 21_918.0 / (52.0 * 51.0));
        let z = (338.0 - 84.5 - 0.5) / var.sqrt();
        assert!(close(r.p, erfc(z / std::f64::consts::SQRT_2), 1e-12), "{r:?}");
        assert!(r.p < 1e-6);
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let x: Vec<f64> = (0..30).map(f64::from).collect();
        let y: Vec<f64> = (0..30).map(|v| f64::from(v) + 100.0).collect();
        let r = mann_whitney(&x, &y).unwrap();
        assert_eq!(r.method, PMethod::Normal);
        assert!(r.p < 1e-9 && r.p >= 0.0, "{r:?}");
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!(close(erfc(0.0), 1.0, 1e-7));
        assert!(close(erfc(1.0), 0.157_299_207, 1e-7));
        assert!(close(erfc(2.0), 0.004_677_735, 1e-8));
    }

    #[test]
    fn undefined_inputs() {
        assert!(mann_whitney(&[], &[1.0]).is_none());
        assert!(mann_whitney(&[1.0], &[f64::NAN]).is_none());
    }
}
