//! Statistics: quantiles, seeded percentile-bootstrap confidence intervals,
//! and Pearson / Spearman correlation. Every function returns `None` where
//! the statistic is undefined, so that no NaN reaches a report.

mod bootstrap;
mod correlation;
mod quantile;

pub use bootstrap::{BOOTSTRAP_RESAMPLES, CONFIDENCE, Interval, MeanEstimate, bootstrap_mean_ci, percentile_interval};
pub use correlation::{CorrelationEstimate, Estimate, average_ranks, correlation_ci, pearson, spearman};
pub use quantile::{mean, nearest_rank, sample_std};
