//! The key metrics at a glance: one panel per metric, each arm's mean with
//! its 95% bootstrap interval (a forest plot), the reference arm's mean as
//! a dashed line, and the arms that differ from the reference (Mann–Whitney,
//! Holm, as in the tables) drawn filled. The intervals are those of the
//! means the tables print, not of the differences: two intervals that
//! overlap can still belong to arms that differ.

use super::render::{DrawResult, FONT, Figure, draw_no_data, small_font, title_font, to_plot};
use super::style::Palette;
use super::{Plot, PlotError};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One arm's estimate of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmInterval {
    pub arm: String,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// differs from the reference arm (Holm p < 0.05)
    pub differs: bool,
}

/// One panel: a metric and every arm that defines it.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricIntervals {
    pub key: String,
    pub unit: String,
    /// "lower is better" and the like, or empty
    pub better: String,
    /// the reference arm's mean, if it defines the metric
    pub reference: Option<f64>,
    pub arms: Vec<ArmInterval>,
}

/// Panels per row.
const COLUMNS: usize = 2;

struct IntervalsFigure<'a> {
    title: String,
    panels: &'a [MetricIntervals],
    palette: &'a Palette,
}

fn range(panel: &MetricIntervals) -> (f64, f64) {
    let lo = panel
        .arms
        .iter()
        .map(|a| a.low.min(a.mean))
        .fold(f64::INFINITY, f64::min);
    let hi = panel
        .arms
        .iter()
        .map(|a| a.high.max(a.mean))
        .fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = match panel.reference {
        Some(r) => (lo.min(r), hi.max(r)),
        None => (lo, hi),
    };
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
            // the first arm (the reference) on top: segment n − 1 − i holds arm i
            let label = |i: &usize| {
                panel
                    .arms
                    .get(n.wrapping_sub(1).wrapping_sub(*i))
                    .map_or_else(String::new, |a| a.arm.clone())
            };
            let caption = if panel.better.is_empty() {
                format!("{} ({})", panel.key, panel.unit)
            } else {
                format!("{} ({}; {})", panel.key, panel.unit, panel.better)
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
            if let Some(r) = panel.reference {
                chart.draw_series(DashedLineSeries::new(
                    [(r, SegmentValue::Exact(0)), (r, SegmentValue::Exact(n))],
                    4,
                    3,
                    BLACK.mix(0.5).stroke_width(1),
                ))?;
            }
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
                chart.draw_series(std::iter::once(Circle::new((a.mean, y), 5, style)))?;
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
    let title = format!("{scenario}: key metrics, mean and 95% interval per arm");
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
        "Each arm's mean over its runs with the 95% percentile-bootstrap interval of that mean; the dashed line is \
         the reference arm's mean; a filled dot differs from the reference (two-sided Mann–Whitney U, Holm over \
         every metric of the arm, p < 0.05), a hollow one does not. The intervals are of the means, not of the \
         differences."
            .into(),
    );
    Ok(plot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(reference: Option<f64>) -> MetricIntervals {
        MetricIntervals {
            key: "cost_usd".into(),
            unit: "USD".into(),
            better: "lower is better".into(),
            reference,
            arms: vec![
                ArmInterval {
                    arm: "default".into(),
                    mean: 9.4,
                    low: 9.2,
                    high: 9.6,
                    differs: false,
                },
                ArmInterval {
                    arm: "agmarl".into(),
                    mean: 7.7,
                    low: 7.5,
                    high: 7.9,
                    differs: true,
                },
            ],
        }
    }

    #[test]
    fn the_axis_holds_every_interval_and_the_reference() {
        let (lo, hi) = range(&panel(Some(10.5)));
        assert!(lo < 7.5 && hi > 10.5, "{lo} {hi}");
        // a single point still gets a width
        let mut flat = panel(None);
        flat.arms.truncate(1);
        flat.arms[0].low = 9.4;
        flat.arms[0].high = 9.4;
        let (lo, hi) = range(&flat);
        assert!(lo < 9.4 && hi > 9.4);
    }

    #[test]
    fn it_renders_and_says_what_it_shows() {
        let palette = Palette::new(["default", "agmarl"].into_iter());
        let plot = render("churn", &[panel(Some(9.4)), panel(None)], &palette, None).unwrap();
        assert_eq!(plot.name, "key-metrics");
        assert!(plot.svg.contains("cost_usd"));
        assert!(plot.svg.contains("agmarl") && plot.svg.contains("default"));
        assert!(plot.png.starts_with(&[0x89, b'P', b'N', b'G']));
        assert!(plot.caption.unwrap().contains("not of the differences"));
        // nothing to show: the no-data figure, not an error
        let empty = render("churn", &[], &palette, None).unwrap();
        assert!(
            empty.svg.contains("no data") || empty.svg.contains("No data"),
            "{}",
            &empty.svg[..200.min(empty.svg.len())]
        );
    }
}
