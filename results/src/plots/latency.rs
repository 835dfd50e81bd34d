//! Scheduling latency (creation to first bind) CDF per arm, all seeds pooled.

use super::render::{DrawResult, Figure, draw_legend, draw_no_data, house_mesh, legend_line, title_font, to_plot};
use super::style::Palette;
use super::{ArmSeries, Plot, PlotError};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The log axis starts here: a pod bound in the millisecond it was created
/// is drawn at 1 ms.
const FLOOR_S: f64 = 0.001;

/// The empirical CDF of an arm's pooled latencies: (latency s, cumulative
/// share), ascending, one point per distinct value.
fn cdf(arm: &ArmSeries) -> Vec<(f64, f64)> {
    let mut values: Vec<(f64, u64)> = arm.runs.iter().flat_map(|r| r.series.sched_latencies_s()).collect();
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = values.iter().map(|v| v.1).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut seen = 0u64;
    for (v, c) in values {
        seen += c;
        let share = seen as f64 / total as f64;
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 = share,
            _ => out.push((v, share)),
        }
    }
    out
}

/// An arm, its bound pods over all seeds, its CDF.
type ArmCdf<'a> = (&'a str, u64, Vec<(f64, f64)>);

struct CdfFigure<'a> {
    title: String,
    lines: Vec<ArmCdf<'a>>,
    palette: &'a Palette,
}

impl Figure for CdfFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        if self.lines.iter().all(|(_, _, c)| c.is_empty()) {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        let all = || {
            self.lines
                .iter()
                .flat_map(|(_, _, c)| c.iter().map(|p| p.0.max(FLOOR_S)))
        };
        let lo = all().fold(f64::INFINITY, f64::min);
        let hi = all().fold(0.0, f64::max);
        // a decade of room on each side keeps the steps off the frame
        let (lo, hi) = (lo / 2.0, if hi > lo { hi * 2.0 } else { lo * 10.0 });
        let mut chart = ChartBuilder::on(&area)
            .margin(10)
            // room for the last tick label
            .margin_right(30)
            .x_label_area_size(40)
            .y_label_area_size(70)
            // log10 on a linear axis: plotters' log axis labels no tick below 1
            .build_cartesian_2d(lo.log10()..hi.log10(), 0.0..100.0)?;
        house_mesh(&mut chart.configure_mesh())
            .x_desc("scheduling latency, creation to first bind (log scale; under 1 ms drawn at 1 ms)")
            .y_desc("bound pods (%)")
            .x_label_formatter(&|v| format_seconds(10f64.powf(*v)))
            .draw()?;
        for (arm, pods, c) in &self.lines {
            if c.is_empty() {
                continue;
            }
            let colour = self.palette.colour(arm);
            // a step function: flat until the next latency, then up
            let mut points = Vec::with_capacity(c.len() * 2 + 1);
            let mut prev = 0.0;
            for &(v, share) in c {
                let x = v.max(FLOOR_S).log10();
                points.push((x, prev));
                points.push((x, share * 100.0));
                prev = share * 100.0;
            }
            points.push((hi.log10(), prev));
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
                .label(format!("{arm} ({pods} pods)"))
                .legend(legend_line(colour));
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}

/// A tick label: seconds from 1 s up, milliseconds below, with as many
/// digits as the log axis needs to keep neighbouring ticks apart.
fn format_seconds(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0} s")
    } else if v >= 1.0 {
        format!("{v:.1} s")
    } else if v >= 0.01 {
        format!("{:.0} ms", v * 1000.0)
    } else {
        format!("{:.1} ms", v * 1000.0)
    }
}

/// The pooled latency CDF of every arm.
pub(super) fn render(
    scenario: &str,
    arms: &[ArmSeries],
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let title = format!("{scenario}: scheduling latency CDF (all seeds pooled)");
    let lines = arms
        .iter()
        .map(|a| {
            let c = cdf(a);
            let pods = a.runs.iter().map(|r| r.series.metrics.pods_bound).sum();
            (a.arm.as_str(), pods, c)
        })
        .collect();
    let figure = CdfFigure {
        title: title.clone(),
        lines,
        palette,
    };
    to_plot("sched-latency-cdf", &title, (1100, 560), &figure, stamp)
}
