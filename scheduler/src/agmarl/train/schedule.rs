//! The learning-rate schedule: cosine decay over the run's episodes.
//!
//! `scale(p) = min_scale + (1 − min_scale) · (1 + cos(π·p)) / 2` at progress
//! `p` = episodes played ÷ episodes planned: full rates at the start, a slow
//! fall in the middle, `min_scale` of them at the end. Both learning rates
//! are the base rates times this scale.
//!
//! Before, the rates were halved whenever the critic's loss stopped falling.
//! The critic's TD targets move with the actor and the replay's mix, so its
//! loss does not settle while the actor still learns: on the v2 runs it rose
//! from 0.084 to 0.206 and the rule drove the rates to their floor by
//! episode 98 of 300, after which the actor hardly moved. A schedule of the
//! run's progress does not listen to that noise, and the same run length
//! always gets the same rates, so runs of different seeds are comparable.

use serde::{Deserialize, Serialize};

/// Settings of [`CosineSchedule`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LrScheduleConfig {
    /// the scale at the end of the run, in (0, 1]; 1 keeps the rates constant
    pub min_scale: f64,
}

impl Default for LrScheduleConfig {
    fn default() -> Self {
        LrScheduleConfig { min_scale: 0.1 }
    }
}

impl LrScheduleConfig {
    pub fn is_valid(&self) -> bool {
        self.min_scale > 0.0 && self.min_scale <= 1.0
    }
}

/// Cosine decay of the learning-rate scale over the run's progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CosineSchedule {
    cfg: LrScheduleConfig,
}

impl CosineSchedule {
    pub fn new(cfg: LrScheduleConfig) -> CosineSchedule {
        CosineSchedule { cfg }
    }

    /// The scale at `progress` (clamped to [0, 1]; NaN counts as 0).
    pub fn scale(&self, progress: f64) -> f64 {
        let p = if progress.is_nan() {
            0.0
        } else {
            progress.clamp(0.0, 1.0)
        };
        let floor = self.cfg.min_scale;
        floor + (1.0 - floor) * (1.0 + (std::f64::consts::PI * p).cos()) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decays_from_one_to_the_floor_and_never_rises() {
        let s = CosineSchedule::new(LrScheduleConfig { min_scale: 0.1 });
        assert_eq!(s.scale(0.0), 1.0);
        assert!((s.scale(0.5) - 0.55).abs() < 1e-12);
        assert!((s.scale(1.0) - 0.1).abs() < 1e-12);
        // out of range and NaN progress are clamped
        assert!((s.scale(7.0) - 0.1).abs() < 1e-12);
        assert_eq!(s.scale(-1.0), 1.0);
        assert_eq!(s.scale(f64::NAN), 1.0);
        let mut last = f64::INFINITY;
        for k in 0..=100 {
            let now = s.scale(k as f64 / 100.0);
            assert!(now <= last && now >= 0.1 - 1e-12);
            last = now;
        }
    }

    #[test]
    fn a_floor_of_one_keeps_the_rates() {
        let s = CosineSchedule::new(LrScheduleConfig { min_scale: 1.0 });
        for k in 0..=10 {
            assert_eq!(s.scale(k as f64 / 10.0), 1.0);
        }
        assert!(!LrScheduleConfig { min_scale: 0.0 }.is_valid());
        assert!(!LrScheduleConfig { min_scale: 1.5 }.is_valid());
        assert!(!LrScheduleConfig { min_scale: f64::NAN }.is_valid());
    }
}
