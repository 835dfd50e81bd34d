//! Table D's figure: each arm's median decision-time p99 against the
//! cluster size, one line per scenario, and the foil's training cost against
//! the size, both on log axes, so a power law is a straight line whose slope
//! is its exponent.

use super::render::{DrawResult, Figure, draw_legend, draw_no_data, house_mesh, legend_line, title_font, to_plot};
use super::style::Palette;
use super::{Plot, PlotError};
use crate::scaling::ScalingTable;
use plotters::coord::Shift;
use plotters::prelude::*;

/// One line: a label, its arm (for the colour) and its points.
struct Line {
    label: String,
    arm: String,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

struct Panel {
    title: String,
    y_desc: &'static str,
    lines: Vec<Line>,
}

struct ScalingFigure<'a> {
    panels: [Panel; 2],
    palette: &'a Palette,
}

/// A tick label with three significant digits and no trailing noise.
fn significant(v: f64) -> String {
    if v <= 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (2 - v.log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

/// A log axis's tick label: 1, 2 and 5 times a power of ten are labelled,
/// the ticks between them are left bare so the labels never crowd.
fn log_tick(v: f64) -> String {
    if v <= 0.0 || !v.is_finite() {
        return String::new();
    }
    let mantissa = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0].iter().any(|k| (mantissa - k).abs() < 0.01 * k) {
        if v >= 1.0 { format!("{v:.0}") } else { significant(v) }
    } else {
        String::new()
    }
}

/// A log axis range around `values` (all positive), one decade of margin at most.
fn log_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    (lo.is_finite() && hi > 0.0).then(|| (lo / 1.5, hi * 1.5))
}

impl Panel {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, palette: &Palette) -> DrawResult<DB> {
        let all = || self.lines.iter().flat_map(|l| l.points.iter());
        let (Some((x0, x1)), Some((y0, y1))) = (log_range(all().map(|p| p.0)), log_range(all().map(|p| p.1))) else {
            return draw_no_data(area, &self.title);
        };
        // plotters puts a log axis's ticks from the first power of ten in
        // range on: start the values' axis at one, so no decade goes unmarked
        let y0 = 10f64.powf(y0.log10().floor());
        let area = area.titled(&self.title, title_font())?;
        let mut chart = ChartBuilder::on(&area)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
        house_mesh(&mut chart.configure_mesh())
            .x_desc("nodes (log)")
            .y_desc(self.y_desc)
            .x_labels(60)
            .y_labels(60)
            .x_label_formatter(&|n| log_tick(*n))
            .y_label_formatter(&|v| log_tick(*v))
            .draw()?;
        for line in &self.lines {
            let colour = palette.colour(&line.arm);
            let style = colour.stroke_width(2);
            if line.dashed {
                chart
                    .draw_series(DashedLineSeries::new(line.points.iter().copied(), 8, 5, style))?
                    .label(line.label.clone())
                    .legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (8, 0)], colour.stroke_width(3))
                            + PathElement::new(vec![(12, 0), (20, 0)], colour.stroke_width(3))
                    });
            } else {
                chart
                    .draw_series(LineSeries::new(line.points.iter().copied(), style))?
                    .label(line.label.clone())
                    .legend(legend_line(colour));
            }
            chart.draw_series(line.points.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}

impl Figure for ScalingFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (left, right) = root.split_horizontally(root.dim_in_pixel().0 / 2);
        self.panels[0].draw(&left, self.palette)?;
        self.panels[1].draw(&right, self.palette)
    }
}

/// The figure of `table`.
pub fn scaling_plot(table: &ScalingTable) -> Result<Plot, PlotError> {
    let arms: Vec<&str> = table
        .growth
        .iter()
        .flat_map(|g| g.exponents.iter().map(|e| e.arm.as_str()))
        .chain(table.training.iter().map(|t| t.arm.as_str()))
        .collect();
    let palette = Palette::new(arms.into_iter());
    let decision: Vec<Line> = table
        .growth
        .iter()
        .enumerate()
        .flat_map(|(k, g)| {
            g.exponents.iter().map(move |e| Line {
                label: format!(
                    "{} on {} (b = {})",
                    e.arm,
                    g.scenario,
                    e.exponent.map_or_else(|| "—".into(), |b| format!("{b:.2}"))
                ),
                arm: e.arm.clone(),
                dashed: k % 2 == 1,
                points: e
                    .sizes
                    .iter()
                    .zip(&e.p99_median_ms)
                    // in µs: plotters marks no decade of a log axis below 0.01
                    .map(|(&n, &ms)| (n as f64, ms * 1000.0))
                    .collect(),
            })
        })
        .collect();
    // per arm: wall time to converge (solid) and the whole training's (dashed)
    let mut by_arm: std::collections::BTreeMap<(&str, bool), Vec<(f64, f64)>> = Default::default();
    for t in &table.training {
        if let Some(c) = t.converged {
            by_arm
                .entry((&t.arm, false))
                .or_default()
                .push((t.nodes as f64, c.wall_seconds.max(1e-3)));
        }
        by_arm
            .entry((&t.arm, true))
            .or_default()
            .push((t.nodes as f64, t.wall_seconds.max(1e-3)));
    }
    let mut training: Vec<Line> = by_arm
        .into_iter()
        .map(|((arm, whole), mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Line {
                label: format!("{arm}, {}", if whole { "whole training" } else { "to converge" }),
                arm: arm.to_string(),
                dashed: whole,
                points,
            }
        })
        .collect();
    // the judged arm trains once for every size: a flat line over the sizes shown
    let sizes = table.training.iter().map(|t| t.nodes).chain(
        table
            .growth
            .iter()
            .flat_map(|g| g.exponents.iter().flat_map(|e| e.sizes.iter().copied())),
    );
    let (lo, hi) = sizes.fold((usize::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
    if let Some(wall) = table.judged_training.as_ref().and_then(|j| j.wall_seconds)
        && lo <= hi
    {
        training.push(Line {
            label: format!("{}, one training for every size", table.judged),
            arm: table.judged.clone(),
            dashed: true,
            points: vec![(lo as f64, wall), (hi as f64, wall)],
        });
    }
    let figure = ScalingFigure {
        panels: [
            Panel {
                title: "decision time p99 (median over seeds)".into(),
                y_desc: "µs (log)",
                lines: decision,
            },
            Panel {
                title: format!("training: {} one network per size", table.foil),
                y_desc: "seconds (log)",
                lines: training,
            },
        ],
        palette: &palette,
    };
    let mut plot = to_plot("scaling", "Table D: scaling", (1200, 520), &figure, None)?;
    plot.caption = Some(format!(
        "Left: each arm's median over seeds of the per-run decision-time p99 at each size (solid: the first \
         scenario, dashed: the second), with its fitted exponent b. Right: the wall time until {}'s validation \
         reward settles (amendment 9; solid) and of its whole training (dashed), one network per size; {} \
         trains once for every size (its whole training, flat).",
        table.foil, table.judged
    ));
    Ok(plot)
}

#[cfg(test)]
mod tests {
    use super::{log_tick, significant};

    #[test]
    fn only_one_two_and_five_are_labelled() {
        assert_eq!(log_tick(0.01), "0.0100");
        assert_eq!(log_tick(0.02), "0.0200");
        assert_eq!(log_tick(500.0), "500");
        assert_eq!(log_tick(10.0), "10");
        assert_eq!(log_tick(100.0), "100");
        assert_eq!(log_tick(0.03), "");
        assert_eq!(log_tick(90.0), "");
    }

    #[test]
    fn tick_labels_have_three_significant_digits() {
        assert_eq!(significant(0.6000000000001), "0.600");
        assert_eq!(significant(12.345), "12.3");
        assert_eq!(significant(2000.0), "2000");
        assert_eq!(significant(0.0123), "0.0123");
    }
}
