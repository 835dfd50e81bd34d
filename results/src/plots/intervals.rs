//! The key metrics at a glance: one panel per metric, each arm's difference
//! from the reference arm (arm − reference, in the metric's unit) with the
//! 95% bootstrap interval of that difference (a forest plot), zero (the
//! reference) as a dashed line, and the arms that differ from the reference
//! (Mann–Whitney, Holm, as in the tables) drawn filled. An interval that
//! leaves out zero and a filled dot say the same thing by two methods; they
//! can disagree near the edge.

use super::render::{DrawResult, FONT, Figure, draw_no_data, small_font, title_font, to_plot};
use super::style::Palette;
use super::{Plot, PlotError};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One arm's difference from the reference on one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmInterval {
    pub arm: String,
    /// mean(arm) − mean(reference)
    pub diff: f64,
    /// the percentile-bootstrap interval of `diff`
    pub low: f64,
    pub high: f64,
    /// differs from the reference arm (Holm p < 0.05)
    pub differs: bool,
}

/// One panel: a metric and every other arm that defines it with the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricIntervals {
    pub key: String,
    pub unit: String,
    /// "lower is better" and the like, or empty
    pub better: String,
    /// the reference arm's name
    pub reference: String,
    pub arms: Vec<ArmInterval>,
}

/// Panels per row.
const COLUMNS: usize = 2;

struct IntervalsFigure<'a> {
    title: String,
    panels: &'a [MetricIntervals],
    palette: &'a Palette,
}

/// The x range: every interval and zero, padded.
fn range(panel: &MetricIntervals) -> (f64, f64) {
    let lo = panel.arms.iter().map(|a| a.low.min(a.diff)).fold(0.0, f64::min);
    let hi = panel.arms.iter().map(|a| a.high.max(a.diff)).fold(0.0, f64::max);
    let pad = if hi > lo {
        (hi - lo) * 0.08
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (lo - pad, hi + pad)
}

impl Figure for IntervalsFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let panels: Vec<&MetricIntervals> = self.panels.iter().filter(|p| !p.arms.is_empty()).collect();
        if panels.is_empty() {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        let rows = panels.len().div_ceil(COLUMNS);
        let cells = area.split_evenly((rows, COLUMNS));
        for (panel, cell) in panels.iter().zip(cells) {
            let (x0, x1) = range(panel);
            let n = panel.arms.len();
            // the first arm on top: segment n − 1 − i holds arm i
            let label = |i: &usize| {
                panel
                    .arms
                    .get(n.wrapping_sub(1).wrapping_sub(*i))
                    .map_or_else(String::new, |a| a.arm.clone())
            };
            let caption = if panel.better.is_empty() {
                format!("{} − {} ({})", panel.key, panel.reference, panel.unit)
            } else {
                format!("{} − {} ({}; {})", panel.key, panel.reference, panel.unit, panel.better)
            };
            let mut chart = ChartBuilder::on(&cell)
                .margin(8)
                .caption(caption, (FONT, 14))
                .x_label_area_size(24)
                .y_label_area_size(130)
                .build_cartesian_2d(x0..x1, (0..n).into_segmented())?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .light_line_style(RGBColor(235, 235, 235))
                .x_labels(5)
                .y_labels(n)
                .y_label_formatter(&|v: &SegmentValue<usize>| match v {
                    SegmentValue::CenterOf(i) => label(i),
                    _ => String::new(),
                })
                .label_style(small_font())
                .draw()?;
            chart.draw_series(DashedLineSeries::new(
                [(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Exact(n))],
                4,
                3,
                BLACK.mix(0.5).stroke_width(1),
            ))?;
            for (i, a) in panel.arms.iter().enumerate() {
                let colour = self.palette.colour(&a.arm);
                let y = SegmentValue::CenterOf(n - 1 - i);
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(a.low, y.clone()), (a.high, y.clone())],
                    colour.stroke_width(2),
                )))?;
                let style = if a.differs {
                    colour.filled()
                } else {
                    colour.stroke_width(2)
                };
                chart.draw_series(std::iter::once(Circle::new((a.diff, y), 5, style)))?;
            }
        }
        Ok(())
    }
}

/// The forest plot of `panels`; arms in their given order, top to bottom.
pub(super) fn render(
    scenario: &str,
    panels: &[MetricIntervals],
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let rows = panels
        .iter()
        .filter(|p| !p.arms.is_empty())
        .count()
        .div_ceil(COLUMNS)
        .max(1);
    let arms = panels.iter().map(|p| p.arms.len()).max().unwrap_or(1);
    let height = 60 + rows as u32 * (70 + 22 * arms as u32);
    let reference = panels.first().map_or("the reference", |p| p.reference.as_str());
    let title = format!("{scenario}: key metrics, difference from {reference} with its 95% interval");
    let mut plot = to_plot(
        "key-metrics",
        &title,
        (1000, height),
        &IntervalsFigure {
            title: title.clone(),
            panels,
            palette,
        },
        stamp,
    )?;
    plot.caption = Some(
        "Each arm's mean over its runs minus the reference arm's, in the metric's unit, with the 95% \
         percentile-bootstrap interval of that difference (each arm's seeds resampled on their own, seeded); the \
         dashed line is zero, the reference; a filled dot differs from the reference (two-sided Mann–Whitney U, \
         Holm over every metric of the arm, p < 0.05), a hollow one does not."
            .into(),
    );
    Ok(plot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel() -> MetricIntervals {
        MetricIntervals {
            key: "cost_usd".into(),
            unit: "USD".into(),
            better: "lower is better".into(),
            reference: "default".into(),
            arms: vec![
                ArmInterval {
                    arm: "binpack".into(),
                    diff: 0.4,
                    low: 0.2,
                    high: 0.6,
                    differs: false,
                },
                ArmInterval {
                    arm: "agmarl".into(),
                    diff: -1.7,
                    low: -1.9,
                    high: -1.5,
                    differs: true,
                },
            ],
        }
    }

    #[test]
    fn the_axis_holds_every_interval_and_zero() {
        let (lo, hi) = range(&panel());
        assert!(lo < -1.9 && hi > 0.6, "{lo} {hi}");
        // zero is on the axis even when every difference is on one side
        let mut above = panel();
        above.arms.truncate(1);
        let (lo, hi) = range(&above);
        assert!(lo < 0.0 && hi > 0.6, "{lo} {hi}");
        // a single point at zero still gets a width
        above.arms[0] = ArmInterval {
            diff: 0.0,
            low: 0.0,
            high: 0.0,
            ..above.arms[0].clone()
        };
        let (lo, hi) = range(&above);
        assert!(lo < 0.0 && hi > 0.0);
    }

    #[test]
    fn it_renders_and_says_what_it_shows() {
        let palette = Palette::new(["default", "binpack", "agmarl"].into_iter());
        let plot = render("churn", &[panel(), panel()], &palette, None).unwrap();
        assert_eq!(plot.name, "key-metrics");
        assert!(plot.svg.contains("cost_usd − default"));
        assert!(plot.svg.contains("agmarl") && plot.svg.contains("binpack"));
        assert!(plot.title.contains("difference from default"), "{}", plot.title);
        assert!(plot.png.starts_with(&[0x89, b'P', b'N', b'G']));
        assert!(plot.caption.unwrap().contains("interval of that difference"));
        // nothing to show: the no-data figure, not an error
        let empty = render("churn", &[], &palette, None).unwrap();
        assert!(
            empty.svg.contains("no data") || empty.svg.contains("No data"),
            "{}",
            &empty.svg[..200.min(empty.svg.len())]
        );
    }
}
