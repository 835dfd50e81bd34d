//! The Pareto view two objectives at a time: one panel per pair of cost,
//! failure rate and restarts (all lower is better), each arm's means as a
//! point, the arms on that pair's front filled and joined by the front's
//! staircase, the others hollow. The three-objective front of the `pareto`
//! scatter is wider than any pair's: an arm off every 2-D front may still be
//! on it.

use super::ParetoPoint;
use super::pareto::{LabelBox, draw_labels};
use super::render::{DrawResult, Figure, draw_no_data, house_mesh, small_font, title_font, to_plot};
use super::style::{Palette, padded_range};
use super::{Plot, PlotError};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One objective: its axis label and its value of a point.
#[derive(Clone, Copy)]
struct Objective {
    label: &'static str,
    of: fn(&ParetoPoint) -> f64,
}

const COST: Objective = Objective {
    label: "cost (USD)",
    of: |p| p.cost_usd,
};
const FAILURE_RATE: Objective = Objective {
    label: "failure rate (%)",
    of: |p| p.failure_rate * 100.0,
};
const RESTARTS: Objective = Objective {
    label: "restarts",
    of: |p| p.restarts,
};
const PAIRS: [(Objective, Objective); 3] = [(COST, FAILURE_RATE), (COST, RESTARTS), (FAILURE_RATE, RESTARTS)];

/// Which of `points` (x, y; both lower is better) no other point dominates:
/// none is at least as good on both and better on one. Equal points are all
/// on the front.
fn front(points: &[(f64, f64)]) -> Vec<bool> {
    points
        .iter()
        .map(|&(x, y)| !points.iter().any(|&(ox, oy)| ox <= x && oy <= y && (ox < x || oy < y)))
        .collect()
}

/// The front's staircase through `on` (the front's points): in x order, each
/// step goes across to the next point's x, then down to its y.
fn staircase(mut on: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    on.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut path = Vec::with_capacity(on.len() * 2);
    for (i, &(x, y)) in on.iter().enumerate() {
        if i > 0 {
            path.push((x, on[i - 1].1));
        }
        path.push((x, y));
    }
    path
}

struct PairsFigure<'a> {
    title: String,
    points: Vec<&'a ParetoPoint>,
    palette: &'a Palette,
}

impl Figure for PairsFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        if self.points.is_empty() {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        for ((a, b), cell) in PAIRS.iter().zip(area.split_evenly((1, PAIRS.len()))) {
            let xy: Vec<(f64, f64)> = self.points.iter().map(|p| ((a.of)(p), (b.of)(p))).collect();
            let on = front(&xy);
            let fold = |f: fn(&(f64, f64)) -> f64, init: f64, op: fn(f64, f64) -> f64| xy.iter().map(f).fold(init, op);
            let (x0, x1) = padded_range(fold(|p| p.0, f64::INFINITY, f64::min), fold(|p| p.0, 0.0, f64::max));
            let (y0, y1) = padded_range(fold(|p| p.1, f64::INFINITY, f64::min), fold(|p| p.1, 0.0, f64::max));
            // labels need room to the right of the rightmost points
            let (x0, x1) = (x0 - (x1 - x0) * 0.05, x1 + (x1 - x0) * 0.35);
            let mut chart = ChartBuilder::on(&cell)
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(x0..x1, y0..y1)?;
            house_mesh(&mut chart.configure_mesh())
                .x_desc(a.label)
                .y_desc(b.label)
                .x_labels(4)
                .draw()?;
            let steps = staircase(xy.iter().zip(&on).filter(|(_, on)| **on).map(|(p, _)| *p).collect());
            chart.draw_series(std::iter::once(PathElement::new(
                steps,
                BLACK.mix(0.45).stroke_width(1),
            )))?;
            let mut labels = Vec::with_capacity(xy.len());
            for ((p, &at), &on_front) in self.points.iter().zip(&xy).zip(&on) {
                let colour = self.palette.colour(&p.arm);
                let style = if on_front {
                    colour.mix(0.8).filled()
                } else {
                    colour.stroke_width(2)
                };
                chart.draw_series(std::iter::once(Circle::new(at, 5, style)))?;
                let (x, y) = chart.backend_coord(&at);
                let (w, h) = cell.estimate_text_size(&p.arm, &small_font())?;
                labels.push((
                    at,
                    p.arm.clone(),
                    LabelBox {
                        x: x + 8,
                        y: y - 7,
                        w: w as i32,
                        h: h as i32,
                    },
                ));
            }
            draw_labels(&mut chart, labels)?;
        }
        Ok(())
    }
}

/// The three pair panels; points with a non-finite objective are left out.
pub(super) fn render(
    scenario: &str,
    points: &[ParetoPoint],
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let title = format!("{scenario}: Pareto fronts of each pair of cost, failure rate and restarts");
    let points = points
        .iter()
        .filter(|p| p.cost_usd.is_finite() && p.failure_rate.is_finite() && p.restarts.is_finite())
        .collect();
    let figure = PairsFigure {
        title: title.clone(),
        points,
        palette,
    };
    let mut plot = to_plot("pareto-pairs", &title, (1200, 440), &figure, stamp)?;
    plot.caption = Some(
        "Each arm's means over its runs, two objectives at a time (lower is better on all three). Filled and \
         joined by the staircase: the arms no other arm beats on both of the panel's objectives; hollow: \
         dominated in that pair."
            .into(),
    );
    Ok(plot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_keeps_what_nothing_beats_on_both() {
        // (1, 5) and (3, 2) trade off; (4, 6) is beaten by both; (3, 2) twice is on it twice
        assert_eq!(
            front(&[(1.0, 5.0), (3.0, 2.0), (4.0, 6.0), (3.0, 2.0)]),
            [true, true, false, true]
        );
        // equal on one axis, better on the other: beaten
        assert_eq!(front(&[(1.0, 1.0), (1.0, 2.0)]), [true, false]);
    }

    #[test]
    fn the_staircase_steps_across_then_down() {
        assert_eq!(
            staircase(vec![(3.0, 2.0), (1.0, 5.0)]),
            [(1.0, 5.0), (3.0, 5.0), (3.0, 2.0)]
        );
        assert!(staircase(Vec::new()).is_empty());
    }

    #[test]
    fn it_renders_every_pair() {
        let point = |arm: &str, cost, failure_rate, restarts| ParetoPoint {
            arm: arm.into(),
            cost_usd: cost,
            failure_rate,
            restarts,
            on_front: true,
        };
        let points = [
            point("default", 7.0, 0.2, 470.0),
            point("agmarl", 5.6, 0.29, 1260.0),
            point("random", f64::NAN, 0.3, 1.0),
        ];
        let palette = Palette::new(["default", "agmarl", "random"].into_iter());
        let plot = render("churn", &points, &palette, None).unwrap();
        assert_eq!(plot.name, "pareto-pairs");
        for want in ["cost (USD)", "failure rate (%)", "restarts", "agmarl", "default"] {
            assert!(plot.svg.contains(want), "{want}");
        }
        assert!(!plot.svg.contains("random"), "a point without a cost is left out");
        assert!(plot.png.starts_with(&[0x89, b'P', b'N', b'G']));
        let empty = render("churn", &[], &palette, None).unwrap();
        assert!(empty.svg.to_lowercase().contains("no data"));
    }
}
