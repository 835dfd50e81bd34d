//! Statistics: quantiles, seeded percentile-bootstrap confidence intervals,
//! Pearson / Spearman correlation, the Mann–Whitney U test, effect sizes and
//! the Holm adjustment. Every function returns `None` where the statistic is
//! undefined, so that no NaN reaches a report.

mod bootstrap;
mod correlation;
mod effect;
mod holm;
mod mann_whitney;
mod quantile;

pub use bootstrap::{BOOTSTRAP_RESAMPLES, CONFIDENCE, Interval, MeanEstimate, bootstrap_mean_ci, percentile_interval};
pub use correlation::{CorrelationEstimate, Estimate, average_ranks, correlation_ci, pearson, spearman};
pub use effect::{a12_from_delta, cliffs_delta, vargha_delaney_a12};
pub use holm::holm;
pub use mann_whitney::{EXACT_MAX_TOTAL, MannWhitney, PMethod, mann_whitney};
pub use quantile::{mean, median, nearest_rank, sample_std};

/// Significance level of every test in schedlab's reports (on Holm-adjusted
/// p-values).
pub const ALPHA: f64 = 0.05;
