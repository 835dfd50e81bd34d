//! Statistics: quantiles, seeded percentile-bootstrap confidence intervals,
//! Pearson / Spearman / partial correlation, Kaplan–Meier quantiles, the Mann–Whitney U test, effect sizes and
//! the Holm adjustment. Every function returns `None` where the statistic is
//! undefined, so that no NaN reaches a report.

mod bootstrap;
mod correlation;
mod effect;
mod holm;
mod mann_whitney;
mod quantile;
mod survival;

pub use bootstrap::{BOOTSTRAP_RESAMPLES, CONFIDENCE, Interval, MeanEstimate, bootstrap_mean_ci, percentile_interval};
pub use correlation::{
    CorrelationEstimate, Estimate, PartialEstimate, average_ranks, correlation_ci, partial_correlation_ci,
    partial_pearson, pearson, pearson_of_counts, spearman,
};
pub use effect::{a12_from_delta, cliffs_delta, vargha_delaney_a12};
pub use holm::holm;
pub use mann_whitney::{EXACT_MAX_TOTAL, MannWhitney, PMethod, mann_whitney};
pub use quantile::{mean, median, nearest_rank, sample_std};
pub use survival::{Observation, kaplan_meier_quantile};

/// Significance level of every test in schedlab's reports (on Holm-adjusted
/// p-values).
pub const ALPHA: f64 = 0.05;
