//! The arms' means in cost and failure rate, marker area for restarts;
//! dominated arms hollow. The front is over all three objectives, so a
//! dominated arm may look undominated in these two dimensions.

use super::ParetoPoint;
use super::render::{DrawResult, FONT, Figure, draw_no_data, house_mesh, small_font, title_font, to_plot};
use super::style::{Palette, padded_range};
use super::{Plot, PlotError};
use plotters::coord::Shift;
use plotters::prelude::*;

const MIN_RADIUS: f64 = 5.0;
const MAX_RADIUS: f64 = 22.0;

/// Marker radius: area proportional to restarts, relative to the most.
fn radius(restarts: f64, most: f64) -> i32 {
    if !(most > 0.0 && restarts.is_finite()) {
        return MIN_RADIUS as i32;
    }
    let share = (restarts.max(0.0) / most).sqrt();
    (MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * share).round() as i32
}

struct ParetoFigure<'a> {
    title: String,
    points: Vec<&'a ParetoPoint>,
    palette: &'a Palette,
}

impl Figure for ParetoFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        if self.points.is_empty() {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        let (w, h) = area.dim_in_pixel();
        let (plot_area, note) = area.split_vertically(h.saturating_sub(30));
        let fold = |f: fn(&ParetoPoint) -> f64, init: f64, op: fn(f64, f64) -> f64| {
            self.points.iter().map(|p| f(p)).fold(init, op)
        };
        let (x0, x1) = padded_range(
            fold(|p| p.cost_usd, f64::INFINITY, f64::min),
            fold(|p| p.cost_usd, 0.0, f64::max),
        );
        let fr = |p: &ParetoPoint| p.failure_rate * 100.0;
        let (y0, y1) = padded_range(fold(fr, f64::INFINITY, f64::min), fold(fr, 0.0, f64::max));
        // markers and labels need room beyond the extreme points
        let (x0, x1) = (x0 - (x1 - x0) * 0.08, x1 + (x1 - x0) * 0.45);
        let (y0, y1) = (y0 - (y1 - y0) * 0.1, y1 + (y1 - y0) * 0.1);
        let most = fold(|p| p.restarts, 0.0, f64::max);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        house_mesh(&mut chart.configure_mesh())
            .x_desc("cost (USD, mean over seeds)")
            .y_desc("failure rate (%, mean over seeds)")
            .draw()?;
        let mut labels = Vec::with_capacity(self.points.len());
        for p in &self.points {
            let colour = self.palette.colour(&p.arm);
            let at = (p.cost_usd, fr(p));
            let r = radius(p.restarts, most);
            let style = if p.on_front {
                colour.mix(0.75).filled()
            } else {
                colour.stroke_width(2)
            };
            chart.draw_series(std::iter::once(Circle::new(at, r, style)))?;
            let label = format!(
                "{}{}: {:.1} restarts",
                p.arm,
                if p.on_front { "" } else { " (dominated)" },
                p.restarts
            );
            let (x, y) = chart.backend_coord(&at);
            let (w, h) = plot_area.estimate_text_size(&label, &small_font())?;
            labels.push((
                at,
                label,
                LabelBox {
                    x: x + r + 4,
                    y: y - 7,
                    w: w as i32,
                    h: h as i32,
                },
            ));
        }
        draw_labels(&mut chart, labels)?;
        let text = "filled: on the Pareto front over cost, failure rate and restarts; hollow: dominated; marker area ~ mean restarts";
        note.draw(&Text::new(text, (12.min(w as i32), 4), (FONT, 13).into_font()))?;
        Ok(())
    }
}

/// A point's label, where it is wanted (beside the point, in pixels).
pub(super) type Label = ((f64, f64), String, LabelBox);

/// Draws `labels`, those of points close together moved down until none
/// overlaps another ([`place_labels`]).
pub(super) fn draw_labels<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    labels: Vec<Label>,
) -> DrawResult<DB> {
    let boxes: Vec<LabelBox> = labels.iter().map(|(_, _, b)| *b).collect();
    for ((at, label, wanted), placed) in labels.into_iter().zip(place_labels(&boxes)) {
        let (x, y) = chart.backend_coord(&at);
        chart.draw_series(std::iter::once(
            EmptyElement::at(at) + Text::new(label, (wanted.x - x, placed.y - y), small_font()),
        ))?;
    }
    Ok(())
}

/// A label's box in pixels: its top left corner, width and height.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LabelBox {
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) w: i32,
    pub(super) h: i32,
}

impl LabelBox {
    fn overlaps(&self, other: &LabelBox) -> bool {
        self.x < other.x + other.w
            && other.x < self.x + self.w
            && self.y < other.y + other.h
            && other.y < self.y + self.h
    }
}

/// Where each label goes: top to bottom, a label that would overlap one
/// already placed moves down below it (a line at a time), so that no two
/// overlap; its x stays.
pub(super) fn place_labels(wanted: &[LabelBox]) -> Vec<LabelBox> {
    let mut order: Vec<usize> = (0..wanted.len()).collect();
    order.sort_by_key(|&i| (wanted[i].y, wanted[i].x));
    let mut placed = wanted.to_vec();
    let mut done: Vec<LabelBox> = Vec::with_capacity(wanted.len());
    for i in order {
        let mut b = wanted[i];
        // y only grows, past one placed box at a time: this ends
        while let Some(hit) = done.iter().find(|d| d.overlaps(&b)) {
            b.y = hit.y + hit.h + 2;
        }
        done.push(b);
        placed[i] = b;
    }
    placed
}

/// The Pareto scatter; points with a non-finite coordinate are left out.
pub(super) fn render(
    scenario: &str,
    points: &[ParetoPoint],
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let title = format!("{scenario}: cost vs failure rate per arm");
    let points = points
        .iter()
        .filter(|p| p.cost_usd.is_finite() && p.failure_rate.is_finite())
        .collect();
    let figure = ParetoFigure {
        title: title.clone(),
        points,
        palette,
    };
    to_plot("pareto", &title, (1000, 640), &figure, stamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_close_together_are_stacked_and_others_stay() {
        let at = |x, y| LabelBox { x, y, w: 100, h: 12 };
        // two points almost on one spot, one far away
        let placed = place_labels(&[at(10, 50), at(15, 52), at(400, 50)]);
        assert_eq!(placed[0], at(10, 50));
        assert_eq!(placed[1], at(15, 64));
        assert_eq!(placed[2], at(400, 50));
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} {b:?}");
            }
        }
        // a chain: each moved label may push the next further down
        let placed = place_labels(&[at(0, 0), at(0, 1), at(0, 2)]);
        assert_eq!(placed.iter().map(|b| b.y).collect::<Vec<_>>(), [0, 14, 28]);
    }

    #[test]
    fn marker_area_grows_with_restarts() {
        assert_eq!(radius(0.0, 10.0), MIN_RADIUS as i32);
        assert_eq!(radius(10.0, 10.0), MAX_RADIUS as i32);
        assert!(radius(2.5, 10.0) < radius(5.0, 10.0));
        assert_eq!(radius(3.0, 0.0), MIN_RADIUS as i32);
        assert_eq!(radius(f64::NAN, 1.0), MIN_RADIUS as i32);
    }
}
