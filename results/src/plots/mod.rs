//! SVG and PNG plots of a scenario's runs, drawn with plotters and the
//! bundled DejaVu Sans (no system font is looked up). Every plot is computed
//! from the runs' [`RunSeries`] and the Pareto points handed in; the same
//! input gives byte-identical SVG and PNG.
//!
//! - `key-metrics`: each arm's difference from the reference on the key
//!   metrics, with the 95% interval of the difference (a
//!   forest plot), when the input has them.
//! - `heatmap-<arm>`: requested CPU and memory per node over time, first seed
//!   (the lowest seed number) of each arm.
//! - `cluster-over-time`: cluster CPU and memory utilisation and pending pods,
//!   one line per arm, first seed.
//! - `restarts-over-time`: restarts per time bucket, mean over the arm's seeds.
//! - `sched-latency-cdf`: scheduling latency CDF per arm, all seeds pooled.
//! - `pareto`: cost vs failure rate, marker area for restarts, dominated arms
//!   hollow.
//! - `pareto-pairs`: the 2-D Pareto front of each pair of cost, failure rate
//!   and restarts, one panel each.
//! - `mem-vs-failures`: memory request vs failures per bound pod incarnation,
//!   all seeds pooled, with each arm's least-squares line and Pearson r.
//! - `stress-over-time`: the stress score and level of each decision's
//!   cluster view, per time bucket mean over seeds; only when the runs have
//!   decision records (`--explain`).

mod baseline;
mod cluster;
mod heatmap;
mod intervals;
mod latency;
mod memory;
mod pareto;
mod pareto_pairs;
mod render;
mod restarts;
mod scaling;
pub mod stress;
mod style;

pub use scaling::scaling_plot;

use crate::series::RunSeries;
pub use intervals::{ArmInterval, MetricIntervals};
use std::path::{Path, PathBuf};
pub use stress::{ArmStress, BucketSums, SeedStress, StressAxis, StressInput};

/// An arm's means over seeds and its place relative to the Pareto front over
/// (cost, failure rate, restarts), as computed by the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoPoint {
    pub arm: String,
    pub cost_usd: f64,
    pub failure_rate: f64,
    pub restarts: f64,
    pub on_front: bool,
}

/// One seed's series of an arm. Shared, not copied: a report's plots draw
/// from the series its run folder was loaded with.
#[derive(Debug, Clone)]
pub struct SeedSeries {
    pub seed: u64,
    pub series: std::sync::Arc<RunSeries>,
}

/// An arm and its runs, one per seed (any order; plots of "the first seed"
/// take the lowest seed number).
#[derive(Debug, Clone)]
pub struct ArmSeries {
    pub arm: String,
    pub runs: Vec<SeedSeries>,
}

/// What the plots are drawn from. Arms keep their order (the reference arm
/// first) in legends and colours.
#[derive(Debug, Clone, Default)]
pub struct PlotInput {
    pub scenario: String,
    pub arms: Vec<ArmSeries>,
    pub pareto: Vec<ParetoPoint>,
    /// the arms' decisions, for the stress plot: only arms with a run that
    /// has decisions.jsonl; the plot is left out without any run
    pub stress: Option<StressInput>,
    /// each arm's difference from the reference on the key metrics, with its
    /// interval, for the forest plot;
    /// empty, and the plot is left out
    pub intervals: Vec<MetricIntervals>,
    /// "INCOMPLETE: n of m runs" for a partial report: drawn into every
    /// plot, in a band above the figure, so that a plot copied out of the report
    /// still says so
    pub incomplete: Option<String>,
}

/// One rendered plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// file stem: `<name>.svg`, `<name>.png`
    pub name: String,
    pub title: String,
    pub svg: String,
    pub png: Vec<u8>,
    /// what the plot shows and from which runs, where the title cannot say
    /// it all; the reports print it under the figure
    pub caption: Option<String>,
}

/// Why plots could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("the bundled font could not be loaded")]
    Font,
    #[error("drawing plot {plot}: {reason}")]
    Draw { plot: String, reason: String },
    #[error("encoding plot {plot} as PNG: {reason}")]
    Png { plot: String, reason: String },
    #[error("writing {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Draws every plot of `input`, in the order listed in the module docs.
pub fn render_all(input: &PlotInput) -> Result<Vec<Plot>, PlotError> {
    let palette = style::Palette::new(input.arms.iter().map(|a| a.arm.as_str()));
    let mut plots = Vec::new();
    let mut stems = Vec::new();
    let stamp = input.incomplete.as_deref();
    if !input.intervals.is_empty() {
        plots.push(intervals::render(&input.scenario, &input.intervals, &palette, stamp)?);
    }
    for (i, arm) in input.arms.iter().enumerate() {
        let stem = unique_stem(&format!("heatmap-{}", style::file_stem(&arm.arm)), &mut stems, i);
        plots.push(heatmap::render(&stem, &input.scenario, arm, stamp)?);
    }
    plots.push(cluster::render(&input.scenario, &input.arms, &palette, stamp)?);
    plots.push(restarts::render(&input.scenario, &input.arms, &palette, stamp)?);
    plots.push(latency::render(&input.scenario, &input.arms, &palette, stamp)?);
    plots.push(pareto::render(&input.scenario, &input.pareto, &palette, stamp)?);
    plots.push(pareto_pairs::render(&input.scenario, &input.pareto, &palette, stamp)?);
    plots.push(memory::render(&input.scenario, &input.arms, &palette, stamp)?);
    if let Some(stress) = input.stress.as_ref().filter(|s| s.has_runs()) {
        let all_runs = input.arms.iter().map(|a| a.runs.len()).sum();
        plots.push(stress::render(&input.scenario, stress, all_runs, &palette, stamp)?);
    }
    Ok(plots)
}

// Two arm names may map to the same file stem ("a b" and "a/b"); the
// second gets its arm index appended.
fn unique_stem(stem: &str, taken: &mut Vec<String>, index: usize) -> String {
    let stem = if taken.iter().any(|s| s == stem) {
        format!("{stem}-{index}")
    } else {
        stem.to_string()
    };
    taken.push(stem.clone());
    stem
}

/// Writes `<name>.svg` and `<name>.png` of every plot into `dir`, creating it.
pub fn write_plots(plots: &[Plot], dir: &Path) -> Result<(), PlotError> {
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    for plot in plots {
        for (ext, bytes) in [("svg", plot.svg.as_bytes()), ("png", plot.png.as_slice())] {
            let path = dir.join(format!("{}.{ext}", plot.name));
            crate::atomic::write(&path, bytes).map_err(|source| PlotError::Write { path, source })?;
        }
    }
    Ok(())
}

/// The lowest-seed run of an arm.
fn first_run(arm: &ArmSeries) -> Option<&SeedSeries> {
    arm.runs.iter().min_by_key(|r| r.seed)
}
