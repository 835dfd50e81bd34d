//! schedlab's results: a run's raw records (JSON Lines), the metrics computed
//! from them, statistics across seeds, and the reports built from those.
//! It may use only `schedlab-core` below it (the record types); what it
//! reads comes from run folders, whoever wrote them.
//!
//! - [`atomic`]: output files written whole under a temporary name, then renamed.
//! - [`records`]: writing and streaming records files.
//! - [`metrics`]: every metric of one run, from its records alone.
//! - [`decision_time`]: the wall-clock time of each scheduling decision, a
//!   file beside the records (the one metric input that is not a record).
//! - [`decisions`]: decision records on request (`--explain`), a file beside
//!   the records that reports plot and tabulate but no metric reads.
//! - [`definitions`]: what each metric means, word for word as reports print it.
//! - [`evaluations_index`]: the book's index of the committed evaluations.
//! - [`stats`]: quantiles, seeded bootstrap intervals, correlations.
//! - [`summary`]: the A/B comparison of arms over seeds, as CSV, JSON,
//!   Markdown, LaTeX and a terminal table.
//! - [`pareto`]: the Pareto front of the arms over cost, failure rate and restarts.
//! - [`series`]: a run's time series, for plots.
//! - [`plots`]: SVG and PNG plots with a bundled font.
//! - [`run_folder`]: the run folder's layout, writer, reader and manifests.
//! - [`report`]: the report of run folders, and its self-contained HTML page.
//! - [`compare`]: the regression gate between two run folders.
//!
//! Nothing else in schedlab computes a metric.

// Lets the unit tests share tests/common with the integration tests, which
// name this crate `results`.
#[cfg(test)]
extern crate self as results;

pub mod atomic;
pub mod claims;
pub mod compare;
pub mod decision_time;
pub mod decisions;
pub mod definitions;
mod error;
pub mod evaluations_index;
pub mod hdr;
pub mod jsonl;
pub mod metrics;
pub mod pareto;
pub mod plots;
pub mod records;
pub mod report;
pub mod run_folder;
pub mod scaling;
pub mod series;
pub mod stats;
pub mod summary;

/// Hand-written record sequences, shared with the integration tests.
#[cfg(test)]
#[path = "../tests/common/mod.rs"]
mod test_records;

pub use error::{Error, Result};
pub use metrics::{MetricsError, RunMetrics, RunMetricsBuilder};
pub use records::{JsonlSink, RecordsError};
pub use summary::{RunResult, Summary};
