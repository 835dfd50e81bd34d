//! Distributions of a pod's behaviour (usage, run time), sampled from an
//! explicit random stream.

use rand::Rng;
use rand_distr::{Distribution, Exp, LogNormal, Normal};
use serde::{Deserialize, Serialize};

/// A distribution over non-negative reals, in the unit of whatever it
/// describes (millicores, bytes, seconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Dist {
    Const {
        value: f64,
    },
    Uniform {
        min: f64,
        max: f64,
    },
    /// truncated at zero
    Normal {
        mean: f64,
        std: f64,
    },
    /// parametrised by the median and the multiplicative spread (sigma of ln)
    LogNormal {
        median: f64,
        sigma: f64,
    },
    Exponential {
        mean: f64,
    },
}

/// Parameters that do not define a distribution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct DistError(pub String);

impl Dist {
    /// Checks the parameters; sampling a checked distribution cannot fail.
    pub fn validate(&self) -> Result<(), DistError> {
        let finite_nonneg = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(DistError(format!("{name} must be finite and >= 0, got {v}")))
            }
        };
        match *self {
            Dist::Const { value } => finite_nonneg("value", value),
            Dist::Uniform { min, max } => {
                finite_nonneg("min", min)?;
                finite_nonneg("max", max)?;
                if min > max {
                    Err(DistError(format!("min ({min}) must not exceed max ({max})")))
                } else {
                    Ok(())
                }
            }
            Dist::Normal { mean, std } => {
                finite_nonneg("mean", mean)?;
                finite_nonneg("std", std)
            }
            Dist::LogNormal { median, sigma } => {
                finite_nonneg("sigma", sigma)?;
                if median.is_finite() && median > 0.0 {
                    Ok(())
                } else {
                    Err(DistError(format!("median must be > 0, got {median}")))
                }
            }
            Dist::Exponential { mean } => {
                if mean.is_finite() && mean > 0.0 {
                    Ok(())
                } else {
                    Err(DistError(format!("mean must be > 0, got {mean}")))
                }
            }
        }
    }

    /// Draws one value (never negative). Invalid parameters (see
    /// [`Dist::validate`]) yield the distribution's location instead of panicking.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let v = match *self {
            Dist::Const { value } => value,
            Dist::Uniform { min, max } => {
                if max > min {
                    rng.random_range(min..max)
                } else {
                    min
                }
            }
            Dist::Normal { mean, std } => Normal::new(mean, std).map(|d| d.sample(rng)).unwrap_or(mean),
            Dist::LogNormal { median, sigma } => LogNormal::new(median.max(f64::MIN_POSITIVE).ln(), sigma)
                .map(|d| d.sample(rng))
                .unwrap_or(median),
            Dist::Exponential { mean } => Exp::new(1.0 / mean).map(|d| d.sample(rng)).unwrap_or(mean),
        };
        if v.is_finite() { v.max(0.0) } else { 0.0 }
    }

    /// The distribution's mean (for the truncated normal, the untruncated mean).
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Const { value } => value,
            Dist::Uniform { min, max } => (min + max) / 2.0,
            Dist::Normal { mean, .. } => mean,
            Dist::LogNormal { median, sigma } => median * (sigma * sigma / 2.0).exp(),
            Dist::Exponential { mean } => mean,
        }
    }

    /// A value the distribution rarely exceeds (its 99.9th percentile, or
    /// max for bounded ones). Used by scenario validation.
    pub fn high(&self) -> f64 {
        match *self {
            Dist::Const { value } => value,
            Dist::Uniform { max, .. } => max,
            Dist::Normal { mean, std } => mean + 3.09 * std,
            Dist::LogNormal { median, sigma } => median * (3.09 * sigma).exp(),
            Dist::Exponential { mean } => mean * 6.91,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn samples_are_non_negative_and_near_the_mean() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for d in [
            Dist::Const { value: 3.0 },
            Dist::Uniform { min: 1.0, max: 5.0 },
            Dist::Normal { mean: 3.0, std: 0.5 },
            Dist::LogNormal {
                median: 3.0,
                sigma: 0.1,
            },
            Dist::Exponential { mean: 3.0 },
        ] {
            d.validate().unwrap();
            let n = 20_000;
            let mean: f64 = (0..n)
                .map(|_| d.sample(&mut rng))
                .inspect(|v| assert!(*v >= 0.0))
                .sum::<f64>()
                / n as f64;
            assert!((mean - d.mean()).abs() / d.mean() < 0.05, "{d:?}: {mean}");
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(Dist::Uniform { min: 2.0, max: 1.0 }.validate().is_err());
        assert!(Dist::Normal { mean: -1.0, std: 1.0 }.validate().is_err());
        assert!(Dist::Exponential { mean: 0.0 }.validate().is_err());
        assert!(Dist::Const { value: f64::NAN }.validate().is_err());
    }
}
