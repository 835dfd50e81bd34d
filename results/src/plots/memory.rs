//! Memory request vs failures per bound pod incarnation (the pairs behind
//! `mem_failure_pearson`), all seeds pooled, with each arm's least-squares
//! line and Pearson r over the pooled pairs.

use super::render::{DrawResult, Figure, draw_legend, draw_no_data, house_mesh, legend_line, title_font, to_plot};
use super::style::{Palette, padded_range};
use super::{ArmSeries, Plot, PlotError};
use crate::stats::pearson;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// Least-squares line y = a + b·x; `None` when x does not vary.
fn least_squares(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mx = x.iter().take(n).sum::<f64>() / n as f64;
    let my = y.iter().take(n).sum::<f64>() / n as f64;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (xi, yi) in x.iter().zip(y) {
        sxy += (xi - mx) * (yi - my);
        sxx += (xi - mx) * (xi - mx);
    }
    let b = sxy / sxx;
    (sxx > 0.0 && b.is_finite()).then_some((my - b * mx, b))
}

/// One arm's pooled pairs.
struct ArmPairs<'a> {
    arm: &'a str,
    /// memory in the plot's unit, failures
    x: Vec<f64>,
    y: Vec<f64>,
}

impl ArmPairs<'_> {
    /// Distinct pairs with how often each occurs: drawn as one marker whose
    /// size grows with the count, since many pods share a request.
    fn bubbles(&self) -> BTreeMap<(u64, u64), (f64, f64, u64)> {
        let mut out: BTreeMap<(u64, u64), (f64, f64, u64)> = BTreeMap::new();
        for (&x, &y) in self.x.iter().zip(&self.y) {
            out.entry((x.to_bits(), y.to_bits())).or_insert((x, y, 0)).2 += 1;
        }
        out
    }
}

struct MemoryFigure<'a> {
    title: String,
    unit: &'static str,
    arms: Vec<ArmPairs<'a>>,
    palette: &'a Palette,
}

impl Figure for MemoryFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        if self.arms.iter().all(|a| a.x.is_empty()) {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        let xs = || self.arms.iter().flat_map(|a| a.x.iter().copied());
        let ys = || self.arms.iter().flat_map(|a| a.y.iter().copied());
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
            if a.x.is_empty() {
                continue;
            }
            let colour = self.palette.colour(a.arm);
            chart.draw_series(a.bubbles().into_values().map(|(x, y, count)| {
                let r = (3.0 + 1.5 * (count as f64).sqrt()).min(16.0).round() as i32;
                Circle::new((x, y), r, colour.mix(0.8).stroke_width(1))
            }))?;
            let r = pearson(&a.x, &a.y).filter(|r| r.is_finite());
            let r_text = r.map_or_else(|| "n/a".to_string(), |r| format!("{r:.3}"));
            let label = format!("{}: r = {r_text}, n = {}", a.arm, a.x.len());
            let line = least_squares(&a.x, &a.y).map(|(c, b)| vec![(x0, c + b * x0), (x1, c + b * x1)]);
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
    let largest = arms
        .iter()
        .flat_map(|a| &a.runs)
        .flat_map(|r| r.series.pod_outcomes())
        .map(|p| p.memory_request_bytes)
        .max()
        .unwrap_or(0);
    let (unit, bytes) = if largest >= 8 << 30 {
        ("GiB", (1u64 << 30) as f64)
    } else {
        ("MiB", (1u64 << 20) as f64)
    };
    let arms = arms
        .iter()
        .map(|a| {
            let (x, y) = a
                .runs
                .iter()
                .flat_map(|r| r.series.pod_outcomes())
                .map(|p| (p.memory_request_bytes as f64 / bytes, f64::from(p.failures)))
                .unzip();
            ArmPairs { arm: &a.arm, x, y }
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

    #[test]
    fn least_squares_recovers_a_line() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y: Vec<f64> = x.iter().map(|v| 0.5 + 2.0 * v).collect();
        let (a, b) = least_squares(&x, &y).unwrap();
        assert!((a - 0.5).abs() < 1e-12 && (b - 2.0).abs() < 1e-12);
        assert_eq!(least_squares(&[1.0, 1.0], &[0.0, 3.0]), None);
        assert_eq!(least_squares(&[1.0], &[0.0]), None);
    }

    #[test]
    fn bubbles_count_repeated_pairs() {
        let a = ArmPairs {
            arm: "a",
            x: vec![1.0, 1.0, 2.0],
            y: vec![0.0, 0.0, 1.0],
        };
        let counts: Vec<u64> = a.bubbles().into_values().map(|b| b.2).collect();
        assert_eq!(counts, vec![2, 1]);
    }
}
