//! Cluster utilisation and pending pods over time, one line per arm (each
//! arm's first seed: seeds sample at different times once runs diverge, so a
//! mean over seeds would have to resample and would smooth away the bursts).

use super::render::{DrawResult, Figure, draw_legend, draw_no_data, house_mesh, legend_line, title_font, to_plot};
use super::style::{Palette, TimeUnit, padded_range};
use super::{ArmSeries, Plot, PlotError, first_run};
use crate::series::ClusterPoint;
use plotters::coord::Shift;
use plotters::prelude::*;

type Line<'a> = (&'a str, u64, &'a [ClusterPoint]);

struct ClusterFigure<'a> {
    title: String,
    lines: Vec<Line<'a>>,
    end_ms: u64,
    palette: &'a Palette,
}

/// A panel: its y label, whether the values are shares (0 to 100 %), and the
/// value of a sample.
type Panel = (&'static str, bool, fn(&ClusterPoint) -> Option<f64>);

const PANELS: [Panel; 3] = [
    ("CPU requested (%)", true, |p| p.cpu_util),
    ("memory requested (%)", true, |p| p.mem_util),
    ("pending pods", false, |p| Some(f64::from(p.pending))),
];

impl Figure for ClusterFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        if self.lines.iter().all(|(_, _, points)| points.is_empty()) {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        let unit = TimeUnit::for_span(self.end_ms as f64 / 1000.0);
        let x_end = unit.of_ms(self.end_ms).max(f64::MIN_POSITIVE);
        for (k, (panel, (label, share, value))) in area.split_evenly((3, 1)).iter().zip(PANELS).enumerate() {
            let scale = if share { 100.0 } else { 1.0 };
            let values = self
                .lines
                .iter()
                .flat_map(|(_, _, pts)| pts.iter().filter_map(value))
                .filter(|v| v.is_finite());
            let hi = values.fold(0.0f64, f64::max) * scale;
            let (_, hi) = padded_range(0.0, if share { hi.max(100.0) } else { hi });
            let mut chart = ChartBuilder::on(panel)
                .margin(8)
                .x_label_area_size(if k == 2 { 38 } else { 22 })
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..x_end, 0.0..hi)?;
            let mut mesh = chart.configure_mesh();
            house_mesh(&mut mesh).y_desc(label);
            if k == 2 {
                mesh.x_desc(unit.axis_label());
            }
            let whole = |v: &f64| format!("{v:.0}");
            if share {
                mesh.y_label_formatter(&whole);
            }
            mesh.draw()?;
            for (arm, seed, points) in &self.lines {
                let colour = self.palette.colour(arm);
                // a gap in the line where the value is undefined (no Ready node)
                let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
                for p in points.iter() {
                    match value(p).filter(|v| v.is_finite()) {
                        Some(v) => {
                            if let Some(s) = segments.last_mut() {
                                s.push((unit.of_ms(p.t.0), v * scale));
                            }
                        }
                        None => segments.push(Vec::new()),
                    }
                }
                if k == 0 {
                    // the legend entry, whether or not this panel has a line
                    chart
                        .draw_series(LineSeries::new(Vec::new(), colour.stroke_width(2)))?
                        .label(format!("{arm} (seed {seed})"))
                        .legend(legend_line(colour));
                }
                for segment in segments.into_iter().filter(|s| !s.is_empty()) {
                    chart.draw_series(LineSeries::new(segment, colour.stroke_width(2)))?;
                }
            }
            if k == 0 {
                draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
            }
        }
        Ok(())
    }
}

/// Utilisation and pending pods over time for every arm's first seed.
pub(super) fn render(
    scenario: &str,
    arms: &[ArmSeries],
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let title = format!("{scenario}: cluster utilisation and pending pods (first seed per arm)");
    let lines: Vec<Line> = arms
        .iter()
        .filter_map(|a| first_run(a).map(|r| (a.arm.as_str(), r.seed, r.series.cluster.as_slice())))
        .collect();
    let end_ms = arms
        .iter()
        .filter_map(first_run)
        .map(|r| r.series.end().0)
        .max()
        .unwrap_or(0);
    let figure = ClusterFigure {
        title: title.clone(),
        lines,
        end_ms,
        palette,
    };
    to_plot("cluster-over-time", &title, (1100, 820), &figure, stamp)
}
