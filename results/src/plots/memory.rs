//! Memory request vs failures per bound pod incarnation (the pairs behind
//! `mem_failure_pearson`), all seeds pooled, with each arm's least-squares
//! line and Pearson r over the pooled pairs.

use super::render::{DrawResult, Figure, draw_legend, draw_no_data, house_mesh, legend_line, title_font, to_plot};
use super::style::{Palette, padded_range};
use super::{ArmSeries, Plot, PlotError};
use crate::stats::pearson_of_counts;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// Least-squares line y = a + b·x through points that each stand for
/// `w` equal pairs; `None` when x does not vary.
fn least_squares(points: &[Bubble]) -> Option<(f64, f64)> {
    let n: f64 = points.iter().map(|p| p.pods as f64).sum();
    if n < 2.0 {
        return None;
    }
    let mx = points.iter().map(|p| p.pods as f64 * p.x).sum::<f64>() / n;
    let my = points.iter().map(|p| p.pods as f64 * p.y).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for p in points {
        let w = p.pods as f64;
        sxy += w * (p.x - mx) * (p.y - my);
        sxx += w * (p.x - mx) * (p.x - mx);
    }
    let b = sxy / sxx;
    (sxx > 0.0 && b.is_finite()).then_some((my - b * mx, b))
}

/// Pods with one memory request (in the plot's unit) and failure count,
/// drawn as one marker whose size grows with the count, since many pods
/// share a request.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bubble {
    x: f64,
    y: f64,
    pods: u64,
}

/// One arm's pods over every seed, by distinct (memory request, failures),
/// ascending.
struct ArmPairs<'a> {
    arm: &'a str,
    bubbles: Vec<Bubble>,
}

impl ArmPairs<'_> {
    fn pods(&self) -> u64 {
        self.bubbles.iter().map(|b| b.pods).sum()
    }
    fn pearson(&self) -> Option<f64> {
        let x: Vec<f64> = self.bubbles.iter().map(|b| b.x).collect();
        let y: Vec<f64> = self.bubbles.iter().map(|b| b.y).collect();
        let w: Vec<u64> = self.bubbles.iter().map(|b| b.pods).collect();
        pearson_of_counts(&x, &y, &w)
    }
}

/// Pods by (memory request bytes, failures).
type Pooled = BTreeMap<(u64, u32), u64>;

/// The runs' outcome counts pooled.
fn pooled(arm: &ArmSeries) -> Pooled {
    let mut out = BTreeMap::new();
    for c in arm.runs.iter().flat_map(|r| &r.series.outcome_counts) {
        *out.entry((c.memory_request_bytes, c.failures)).or_default() += c.pods;
    }
    out
}

struct MemoryFigure<'a> {
    title: String,
    unit: &'static str,
    arms: Vec<ArmPairs<'a>>,
    palette: &'a Palette,
}

impl Figure for MemoryFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        if self.arms.iter().all(|a| a.bubbles.is_empty()) {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        let xs = || self.arms.iter().flat_map(|a| a.bubbles.iter().map(|b| b.x));
        let ys = || self.arms.iter().flat_map(|a| a.bubbles.iter().map(|b| b.y));
        let (x0, x1) = padded_range(xs().fold(f64::INFINITY, f64::min), xs().fold(0.0, f64::max));
        let (_, y1) = padded_range(0.0, ys().fold(0.0, f64::max).max(1.0));
        let (x0, y0) = (x0.min(0.0), -0.05 * y1);
        let mut chart = ChartBuilder::on(&area)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        house_mesh(&mut chart.configure_mesh())
            .x_desc(format!("memory request ({})", self.unit))
            .y_desc("failures per pod incarnation")
            .draw()?;
        for a in &self.arms {
            if a.bubbles.is_empty() {
                continue;
            }
            let colour = self.palette.colour(a.arm);
            chart.draw_series(a.bubbles.iter().map(|b| {
                let r = (3.0 + 1.5 * (b.pods as f64).sqrt()).min(16.0).round() as i32;
                Circle::new((b.x, b.y), r, colour.mix(0.8).stroke_width(1))
            }))?;
            let r = a.pearson().filter(|r| r.is_finite());
            let r_text = r.map_or_else(|| "n/a".to_string(), |r| format!("{r:.3}"));
            let label = format!("{}: r = {r_text}, n = {}", a.arm, a.pods());
            let line = least_squares(&a.bubbles).map(|(c, b)| vec![(x0, c + b * x0), (x1, c + b * x1)]);
            chart
                .draw_series(LineSeries::new(line.unwrap_or_default(), colour.stroke_width(2)))?
                .label(label)
                .legend(legend_line(colour));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}

/// The memory/failure scatter of every arm.
pub(super) fn render(
    scenario: &str,
    arms: &[ArmSeries],
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let pooled: Vec<(&str, Pooled)> = arms.iter().map(|a| (a.arm.as_str(), pooled(a))).collect();
    let largest = pooled
        .iter()
        .flat_map(|(_, counts)| counts.keys().map(|k| k.0))
        .max()
        .unwrap_or(0);
    let (unit, bytes) = if largest >= 8 << 30 {
        ("GiB", (1u64 << 30) as f64)
    } else {
        ("MiB", (1u64 << 20) as f64)
    };
    let arms = pooled
        .into_iter()
        .map(|(arm, counts)| ArmPairs {
            arm,
            bubbles: counts
                .into_iter()
                .map(|((memory, failures), pods)| Bubble {
                    x: memory as f64 / bytes,
                    y: f64::from(failures),
                    pods,
                })
                .collect(),
        })
        .collect();
    let title = format!("{scenario}: memory request vs failures (all seeds pooled, least-squares line)");
    let figure = MemoryFigure {
        title: title.clone(),
        unit,
        arms,
        palette,
    };
    to_plot("mem-vs-failures", &title, (1100, 600), &figure, stamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bubble(x: f64, y: f64, pods: u64) -> Bubble {
        Bubble { x, y, pods }
    }

    #[test]
    fn least_squares_recovers_a_line() {
        let points: Vec<Bubble> = [1.0, 2.0, 3.0, 4.0]
            .iter()
            .map(|&x| bubble(x, 0.5 + 2.0 * x, 1))
            .collect();
        let (a, b) = least_squares(&points).unwrap();
        assert!((a - 0.5).abs() < 1e-12 && (b - 2.0).abs() < 1e-12);
        // a point of two pods pulls as two points do
        let counted = least_squares(&[bubble(0.0, 0.0, 2), bubble(1.0, 3.0, 1)]).unwrap();
        let spelt = least_squares(&[bubble(0.0, 0.0, 1), bubble(0.0, 0.0, 1), bubble(1.0, 3.0, 1)]).unwrap();
        assert!((counted.0 - spelt.0).abs() < 1e-12 && (counted.1 - spelt.1).abs() < 1e-12);
        assert_eq!(least_squares(&[bubble(1.0, 0.0, 1), bubble(1.0, 3.0, 1)]), None);
        assert_eq!(least_squares(&[bubble(1.0, 0.0, 1)]), None);
    }

    #[test]
    fn the_runs_pods_pool_by_request_and_failures() {
        use crate::series::{OutcomeCount, RunSeriesBuilder};
        let run = |seed: u64, counts: Vec<OutcomeCount>| {
            let mut b = RunSeriesBuilder::new();
            for r in crate::test_records::hand_run() {
                b.push(&r);
            }
            let mut series = b.finish().unwrap();
            series.outcome_counts = counts;
            super::super::SeedSeries {
                seed,
                series: std::sync::Arc::new(series),
            }
        };
        let count = |memory_request_bytes, failures, pods| OutcomeCount {
            memory_request_bytes,
            failures,
            pods,
        };
        let arm = ArmSeries {
            arm: "a".into(),
            runs: vec![
                run(1, vec![count(1 << 20, 0, 3), count(2 << 20, 1, 1)]),
                run(2, vec![count(1 << 20, 0, 2), count(1 << 20, 2, 1)]),
            ],
        };
        let pooled: Vec<_> = pooled(&arm).into_iter().collect();
        assert_eq!(pooled, vec![((1 << 20, 0), 5), ((1 << 20, 2), 1), ((2 << 20, 1), 1)]);
    }
}
