//! Picking the host among scored nodes, after `pkg/scheduler/schedule_one.go`
//! `selectHost`: the highest total wins; ties are broken uniformly at random
//! by reservoir sampling (the k-th node seen with the top score replaces the
//! current choice with probability 1/k). The random draws come from the
//! scheduler's own seeded stream.

use rand::Rng;

/// The key (typically a node index) with the highest score, ties broken
/// uniformly at random; `None` for no candidates. Draws from `rng` only when
/// a tie is met, so an untied decision leaves the stream untouched.
pub fn select_host<K, R: Rng + ?Sized>(scored: impl IntoIterator<Item = (K, i64)>, rng: &mut R) -> Option<K> {
    let mut best: Option<(K, i64)> = None;
    let mut count_of_max = 0u32;
    for (key, score) in scored {
        match &mut best {
            Some((_, top)) if score < *top => {}
            Some((chosen, top)) if score == *top => {
                count_of_max += 1;
                if rng.random_range(0..count_of_max) == 0 {
                    *chosen = key;
                }
            }
            _ => {
                best = Some((key, score));
                count_of_max = 1;
            }
        }
    }
    best.map(|(key, _)| key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::rng::{purpose, stream};

    #[test]
    fn highest_score_wins_without_draws() {
        let mut rng = stream(1, &[purpose::SCHEDULER]);
        let untouched = rng.clone();
        assert_eq!(select_host([(0, 10), (1, 30), (2, 20)], &mut rng), Some(1));
        assert_eq!(select_host(Vec::<(usize, i64)>::new(), &mut rng), None);
        assert_eq!(rng, untouched);
    }

    #[test]
    fn ties_are_uniform() {
        let mut rng = stream(7, &[purpose::SCHEDULER]);
        let mut hits = [0u32; 4];
        let trials = 40_000;
        for _ in 0..trials {
            // node 3 scores lower and must never win
            let chosen = select_host([(0, 50), (1, 50), (2, 50), (3, 49)], &mut rng).unwrap();
            hits[chosen] += 1;
        }
        assert_eq!(hits[3], 0);
        let expected = f64::from(trials) / 3.0;
        for h in &hits[..3] {
            // binomial sd = sqrt(40000 * 1/3 * 2/3) ~ 94; allow 5 sd
            assert!((f64::from(*h) - expected).abs() < 470.0, "{hits:?}");
        }
    }
}
