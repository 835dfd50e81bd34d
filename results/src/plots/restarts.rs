//! Restarts over time: per bucket, mean over the arm's seeds.

use super::render::{DrawResult, Figure, draw_legend, draw_no_data, house_mesh, legend_line, title_font, to_plot};
use super::style::{Palette, TimeUnit, bucket_width_ms, describe_width, padded_range};
use super::{ArmSeries, Plot, PlotError};
use plotters::coord::Shift;
use plotters::prelude::*;
use schedlab_core::Span;

/// About this many buckets over the longest run.
const BUCKETS: u64 = 40;

/// An arm's mean restarts per bucket; a bucket's mean is over the seeds whose
/// run reached it.
fn mean_per_bucket(arm: &ArmSeries, width_ms: u64) -> Vec<f64> {
    let mut sums: Vec<(u64, u64)> = Vec::new();
    for run in &arm.runs {
        for (i, b) in run.series.restarts_per_bucket(Span(width_ms)).iter().enumerate() {
            if sums.len() <= i {
                sums.resize(i + 1, (0, 0));
            }
            if let Some(s) = sums.get_mut(i) {
                s.0 += b.count;
                s.1 += 1;
            }
        }
    }
    sums.into_iter()
        .map(|(total, runs)| if runs == 0 { 0.0 } else { total as f64 / runs as f64 })
        .collect()
}

struct RestartsFigure<'a> {
    title: String,
    width_ms: u64,
    /// arm, seeds, means per bucket
    lines: Vec<(&'a str, usize, Vec<f64>)>,
    palette: &'a Palette,
}

impl Figure for RestartsFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        if self.lines.iter().all(|(_, _, v)| v.is_empty()) {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        let buckets = self.lines.iter().map(|(_, _, v)| v.len()).max().unwrap_or(0) as u64;
        let unit = TimeUnit::for_span((buckets * self.width_ms) as f64 / 1000.0);
        let x_end = unit.of_ms(buckets * self.width_ms).max(f64::MIN_POSITIVE);
        let hi = self
            .lines
            .iter()
            .flat_map(|(_, _, v)| v.iter().copied())
            .fold(0.0, f64::max);
        let (_, y_hi) = padded_range(0.0, hi.max(1.0));
        let mut chart = ChartBuilder::on(&area)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..x_end, 0.0..y_hi)?;
        house_mesh(&mut chart.configure_mesh())
            .x_desc(unit.axis_label())
            .y_desc(format!(
                "restarts per {} (mean over seeds)",
                describe_width(self.width_ms)
            ))
            .draw()?;
        for (arm, seeds, means) in &self.lines {
            let colour = self.palette.colour(arm);
            // a step line: each bucket's value held across the bucket
            let mut points = Vec::with_capacity(means.len() * 2);
            for (i, &m) in means.iter().enumerate() {
                let i = i as u64;
                points.push((unit.of_ms(i * self.width_ms), m));
                points.push((unit.of_ms((i + 1) * self.width_ms), m));
            }
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
                .label(format!("{arm} ({seeds} seeds)"))
                .legend(legend_line(colour));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}

/// Restarts per bucket over time, one step line per arm.
pub(super) fn render(
    scenario: &str,
    arms: &[ArmSeries],
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let end_ms = arms
        .iter()
        .flat_map(|a| a.runs.iter().map(|r| r.series.end().0))
        .max()
        .unwrap_or(0);
    let width_ms = bucket_width_ms(end_ms, BUCKETS);
    let title = format!("{scenario}: container restarts over time");
    let lines = arms
        .iter()
        .filter(|a| !a.runs.is_empty())
        .map(|a| (a.arm.as_str(), a.runs.len(), mean_per_bucket(a, width_ms)))
        .collect();
    let figure = RestartsFigure {
        title: title.clone(),
        width_ms,
        lines,
        palette,
    };
    to_plot("restarts-over-time", &title, (1100, 560), &figure, stamp)
}
