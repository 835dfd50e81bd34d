//! Exploration: Gaussian noise on the candidates' scores while training,
//! with a standard deviation that decays over the episodes.
//!
//! The noise perturbs the scores the controller selects on (not the
//! networks' weights), as DDPG perturbs its actions: a node whose score is
//! close to the best gets picked now and then, its realised metrics are
//! measured, and the actors learn about placements they would not make yet.
//! The policy clamps the perturbed scores to `[0, 1]`.
//!
//! Schedule: `σ(e) = start × (end ÷ start)^min(1, e ÷ (decay_fraction × (E − 1)))`
//! for episode `e` of `E`: geometric decay from `start` to `end` over the
//! first `decay_fraction` of the run, then `end` for the rest, so the last
//! episodes fine-tune almost on-policy while some exploration remains.

use rand::Rng;
use schedlab_core::rng::SimRng;
use serde::{Deserialize, Serialize};

/// How σ decays over the episodes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NoiseSchedule {
    /// σ of the first episode
    pub start: f32,
    /// σ once the decay is over
    pub end: f32,
    /// share of the episodes over which σ decays
    pub decay_fraction: f32,
}

impl Default for NoiseSchedule {
    fn default() -> Self {
        NoiseSchedule {
            start: 0.2,
            end: 0.02,
            decay_fraction: 0.8,
        }
    }
}

impl NoiseSchedule {
    /// σ for episode `episode` (0-based) of `episodes`.
    pub fn sigma(&self, episode: usize, episodes: usize) -> f32 {
        let start = self.start.max(0.0);
        let end = self.end.max(0.0);
        let span = self.decay_fraction.max(0.0) * episodes.saturating_sub(1) as f32;
        let progress = if span > 0.0 {
            (episode as f32 / span).min(1.0)
        } else {
            1.0
        };
        if start <= 0.0 || end <= 0.0 {
            // a geometric decay cannot reach or leave zero: go linearly
            return start + (end - start) * progress;
        }
        start * (end / start).powf(progress)
    }
}

/// A standard normal draw (Box–Muller; `rand` 0.9 alone has no normal
/// distribution and two uniforms per draw are cheap next to a forward pass).
pub fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    // 1 - u lies in (0, 1], so the logarithm is finite
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
}

/// Adds `N(0, σ²)` to every score and remembers the scores as they were
/// before, so the trainer can tell the networks' own predictions from the
/// actions taken.
#[derive(Debug, Clone)]
pub struct GaussianNoise {
    rng: SimRng,
    sigma: f32,
    clean: Vec<[f32; 3]>,
}

impl GaussianNoise {
    pub fn new(rng: SimRng, sigma: f32) -> GaussianNoise {
        GaussianNoise {
            rng,
            sigma: sigma.max(0.0),
            clean: Vec::new(),
        }
    }

    pub fn sigma(&self) -> f32 {
        self.sigma
    }

    /// Perturbs `scores` in place (one draw per score, row by row).
    pub fn perturb(&mut self, scores: &mut [[f32; 3]]) {
        self.clean.clear();
        self.clean.extend_from_slice(scores);
        if self.sigma == 0.0 {
            return;
        }
        for row in scores.iter_mut() {
            for s in row.iter_mut() {
                *s += self.sigma * standard_normal(&mut self.rng);
            }
        }
    }

    /// The scores as they were before the last [`GaussianNoise::perturb`].
    pub fn last_clean(&self) -> &[[f32; 3]] {
        &self.clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::rng::{purpose, stream};

    #[test]
    fn sigma_decays_geometrically_then_holds() {
        let s = NoiseSchedule {
            start: 0.2,
            end: 0.02,
            decay_fraction: 0.5,
        };
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        assert!(close(s.sigma(0, 101), 0.2));
        // halfway through the decay: the geometric mean
        assert!(close(s.sigma(25, 101), (0.2f32 * 0.02).sqrt()));
        assert!(close(s.sigma(50, 101), 0.02));
        assert!(close(s.sigma(100, 101), 0.02));
        let mut last = f32::INFINITY;
        for e in 0..101 {
            let now = s.sigma(e, 101);
            assert!(now <= last);
            last = now;
        }
        // a single episode gets the final σ
        assert!(close(s.sigma(0, 1), 0.02));
    }

    #[test]
    fn zero_noise_decays_linearly() {
        let s = NoiseSchedule {
            start: 0.1,
            end: 0.0,
            decay_fraction: 1.0,
        };
        assert!((s.sigma(5, 11) - 0.05).abs() < 1e-6);
        assert_eq!(s.sigma(10, 11), 0.0);
    }

    #[test]
    fn noise_has_the_asked_spread_and_replays_for_a_seed() {
        let mut noise = GaussianNoise::new(stream(5, &[purpose::TRAINING, 9]), 0.1);
        let mut scores = vec![[0.5f32; 3]; 4000];
        noise.perturb(&mut scores);
        assert_eq!(noise.last_clean(), &vec![[0.5f32; 3]; 4000][..]);
        let d: Vec<f32> = scores.iter().flatten().map(|s| s - 0.5).collect();
        let mean = d.iter().sum::<f32>() / d.len() as f32;
        let var = d.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / d.len() as f32;
        assert!(mean.abs() < 0.005, "{mean}");
        assert!((var.sqrt() - 0.1).abs() < 0.005, "{}", var.sqrt());

        let mut again = GaussianNoise::new(stream(5, &[purpose::TRAINING, 9]), 0.1);
        let mut replay = vec![[0.5f32; 3]; 4000];
        again.perturb(&mut replay);
        assert_eq!(scores, replay);
    }

    #[test]
    fn zero_sigma_leaves_scores_alone() {
        let mut noise = GaussianNoise::new(stream(1, &[purpose::TRAINING]), 0.0);
        let mut scores = vec![[0.25, 0.5, 0.75]];
        noise.perturb(&mut scores);
        assert_eq!(scores, vec![[0.25, 0.5, 0.75]]);
    }
}
