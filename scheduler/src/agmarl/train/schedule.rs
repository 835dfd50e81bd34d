//! The adaptive learning rate: reduce on plateau of the critic's loss.
//!
//! After every learning round the trainer reports the round's mean critic
//! loss. When it has not improved on the best seen by more than
//! `threshold` (relative) for more than `patience` rounds, both learning
//! rates are multiplied by `factor`, never below `min_scale` of their start.
//! The critic's TD error is what drives both networks (the actor follows the
//! critic's gradient), so once it stops falling, smaller steps let the
//! networks settle instead of chasing noise in the bootstrapped targets.
//! A plateau rule needs no knowledge of the run's length, unlike a cosine
//! decay, so a longer or shorter `--episodes` keeps the same behaviour.

use serde::{Deserialize, Serialize};

/// Settings of [`ReduceOnPlateau`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlateauConfig {
    /// multiplier applied at each plateau
    pub factor: f64,
    /// rounds without improvement tolerated before a cut
    pub patience: u32,
    /// relative improvement that counts as one
    pub threshold: f64,
    /// the scale never falls below this
    pub min_scale: f64,
}

impl Default for PlateauConfig {
    fn default() -> Self {
        PlateauConfig {
            factor: 0.5,
            patience: 8,
            threshold: 0.01,
            min_scale: 0.05,
        }
    }
}

/// Reduce-on-plateau state: the current learning-rate scale (starts at 1).
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceOnPlateau {
    cfg: PlateauConfig,
    best: f64,
    bad_rounds: u32,
    scale: f64,
}

impl ReduceOnPlateau {
    pub fn new(cfg: PlateauConfig) -> ReduceOnPlateau {
        ReduceOnPlateau {
            cfg,
            best: f64::INFINITY,
            bad_rounds: 0,
            scale: 1.0,
        }
    }

    /// The factor to apply to the base learning rates now.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Reports a round's loss; returns true when the scale was cut. A
    /// non-finite loss counts as no improvement.
    pub fn observe(&mut self, loss: f64) -> bool {
        if loss.is_finite() && loss < self.best * (1.0 - self.cfg.threshold) {
            self.best = loss;
            self.bad_rounds = 0;
            return false;
        }
        self.bad_rounds += 1;
        if self.bad_rounds <= self.cfg.patience {
            return false;
        }
        self.bad_rounds = 0;
        let next = (self.scale * self.cfg.factor).max(self.cfg.min_scale);
        let cut = next < self.scale;
        self.scale = next;
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_after_patience_rounds_without_improvement() {
        let mut s = ReduceOnPlateau::new(PlateauConfig {
            factor: 0.5,
            patience: 2,
            threshold: 0.01,
            min_scale: 0.2,
        });
        assert!(!s.observe(1.0));
        assert!(!s.observe(0.5)); // improved
        assert!(!s.observe(0.499)); // under 1 %: no improvement (1)
        assert!(!s.observe(0.6)); // (2)
        assert_eq!(s.scale(), 1.0);
        assert!(s.observe(0.7)); // (3) > patience: cut
        assert_eq!(s.scale(), 0.5);
        assert!(!s.observe(f64::NAN));
        assert!(!s.observe(0.9));
        assert!(s.observe(0.9));
        assert_eq!(s.scale(), 0.25);
        for _ in 0..3 {
            s.observe(1.0);
        }
        // floored
        assert_eq!(s.scale(), 0.2);
        for _ in 0..10 {
            assert!(!s.observe(1.0));
        }
        assert_eq!(s.scale(), 0.2);
    }

    #[test]
    fn steady_improvement_never_cuts() {
        let mut s = ReduceOnPlateau::new(PlateauConfig::default());
        let mut loss = 1.0;
        for _ in 0..50 {
            assert!(!s.observe(loss));
            loss *= 0.95;
        }
        assert_eq!(s.scale(), 1.0);
    }
}
