//! Requested CPU and memory per node over time: where an arm puts its pods
//! (tight packing shows as a few bright rows and many dark ones).

use super::render::{DrawResult, FONT, Figure, draw_no_data, label_font, small_font, title_font, to_plot};
use super::style::{NOT_READY, TimeUnit, heat};
use super::{ArmSeries, Plot, PlotError, first_run};
use crate::series::{NodePoint, RunSeries};
use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// Utilisation steps that count as the same colour: neighbouring cells of
/// one step merge into one rectangle, which keeps long runs' SVGs small
/// without a visible change.
const STEPS: f64 = 64.0;

/// A node sample's utilisation of one resource.
type Util = fn(&NodePoint) -> Option<f64>;

/// One drawn cell: a node's row from `t0` to `t1` (ms) in one colour.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cell {
    row: u32,
    t0: u64,
    t1: u64,
    /// quantised utilisation, or `None` for a node that is not Ready
    level: Option<u32>,
}

fn level(p: &NodePoint, util: Util) -> Option<u32> {
    if !p.condition.is_ready() {
        return None;
    }
    let u = util(p).unwrap_or(0.0);
    let u = if u.is_finite() { u.clamp(0.0, 1.0) } else { 0.0 };
    Some((u * STEPS).round() as u32)
}

/// The cells of one resource: each sample holds until the node's next sample
/// (the End record for its last one).
fn cells(series: &RunSeries, util: Util) -> Vec<Cell> {
    let rows: BTreeMap<_, u32> = series
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.node, i as u32))
        .collect();
    let mut per_node: BTreeMap<u32, Vec<&NodePoint>> = BTreeMap::new();
    for p in &series.node_points {
        if let Some(&row) = rows.get(&p.node) {
            per_node.entry(row).or_default().push(p);
        }
    }
    let end = series.end().0;
    let mut out = Vec::new();
    for (row, points) in per_node {
        let mut current: Option<Cell> = None;
        for (k, p) in points.iter().enumerate() {
            let t1 = points.get(k + 1).map_or(end, |q| q.t.0).max(p.t.0);
            let lvl = level(p, util);
            match current.as_mut() {
                Some(c) if c.level == lvl && c.t1 == p.t.0 => c.t1 = t1,
                _ => {
                    out.extend(current.take());
                    current = Some(Cell {
                        row,
                        t0: p.t.0,
                        t1,
                        level: lvl,
                    });
                }
            }
        }
        out.extend(current);
    }
    out
}

struct Heatmap<'a> {
    title: String,
    series: Option<&'a RunSeries>,
}

impl Figure for Heatmap<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let Some(series) = self.series.filter(|s| !s.nodes.is_empty() && !s.node_points.is_empty()) else {
            return draw_no_data(root, &self.title);
        };
        let area = root.titled(&self.title, title_font())?;
        let (w, _) = area.dim_in_pixel();
        let (main, legend) = area.split_horizontally(w.saturating_sub(120));
        let panels = main.split_evenly((2, 1));
        let unit = TimeUnit::for_span(series.end().as_secs_f64());
        let resources: [(&str, Util); 2] = [
            ("requested CPU / allocatable", |p| p.cpu_util),
            ("requested memory / allocatable", |p| p.mem_util),
        ];
        for (panel, (caption, util)) in panels.iter().zip(resources) {
            draw_panel(panel, series, caption, util, unit)?;
        }
        draw_colour_bar(&legend)
    }
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    series: &RunSeries,
    caption: &str,
    util: Util,
    unit: TimeUnit,
) -> DrawResult<DB> {
    let n = series.nodes.len() as u32;
    let end = unit.of_ms(series.end().0).max(f64::MIN_POSITIVE);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, label_font())
        .margin(8)
        .x_label_area_size(38)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..end, (0..n.saturating_sub(1)).into_segmented())?;
    let names: Vec<&str> = series.nodes.iter().map(|n| n.name.as_str()).collect();
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(unit.axis_label())
        .y_labels(names.len().min(24))
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                names.get(*i as usize).map_or_else(String::new, |s| (*s).to_string())
            }
            SegmentValue::Last => String::new(),
        })
        .label_style(small_font())
        .axis_desc_style(label_font())
        .draw()?;
    chart.draw_series(cells(series, util).into_iter().map(|c| {
        let colour = c.level.map_or(NOT_READY, |l| heat(f64::from(l) / STEPS));
        Rectangle::new(
            [
                (unit.of_ms(c.t0), SegmentValue::Exact(c.row)),
                (unit.of_ms(c.t1), SegmentValue::Exact(c.row + 1)),
            ],
            colour.filled(),
        )
    }))?;
    Ok(())
}

fn draw_colour_bar<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
    let (_, h) = area.dim_in_pixel();
    let (x0, x1) = (20i32, 44i32);
    let (top, bottom) = (60i32, (h as i32 - 120).max(120));
    let steps = 64;
    for k in 0..steps {
        let u = f64::from(k) / f64::from(steps - 1);
        let y1 = bottom - (f64::from(bottom - top) * f64::from(k) / f64::from(steps)) as i32;
        let y0 = bottom - (f64::from(bottom - top) * f64::from(k + 1) / f64::from(steps)) as i32;
        area.draw(&Rectangle::new([(x0, y0), (x1, y1)], heat(u).filled()))?;
    }
    area.draw(&Rectangle::new([(x0, top), (x1, bottom)], BLACK.stroke_width(1)))?;
    let font = small_font();
    for (u, text) in [(0.0, "0%"), (0.5, "50%"), (1.0, "100%")] {
        let y = bottom - (f64::from(bottom - top) * u) as i32;
        area.draw(&Text::new(text, (x1 + 6, y - 7), font.clone()))?;
    }
    area.draw(&Text::new("requested", (x0 - 10, top - 40), font.clone()))?;
    area.draw(&Text::new("share", (x0 - 10, top - 24), font.clone()))?;
    let sy = bottom + 24;
    area.draw(&Rectangle::new([(x0, sy), (x1, sy + 16)], NOT_READY.filled()))?;
    area.draw(&Rectangle::new([(x0, sy), (x1, sy + 16)], BLACK.stroke_width(1)))?;
    area.draw(&Text::new("not", (x1 + 6, sy - 4), (FONT, 13).into_font()))?;
    area.draw(&Text::new("ready", (x1 + 6, sy + 9), (FONT, 13).into_font()))?;
    Ok(())
}

/// The heatmap of `arm`'s first seed.
pub(super) fn render(name: &str, scenario: &str, arm: &ArmSeries, stamp: Option<&str>) -> Result<Plot, PlotError> {
    let run = first_run(arm);
    let title = match run {
        Some(r) => format!("{scenario}: requests per node, arm {} (seed {})", arm.arm, r.seed),
        None => format!("{scenario}: requests per node, arm {}", arm.arm),
    };
    let nodes = run.map_or(0, |r| r.series.nodes.len() as u32);
    let panel = (nodes * 16).clamp(140, 560);
    let height = 70 + 2 * (panel + 70);
    let figure = Heatmap {
        title: title.clone(),
        series: run.map(|r| &*r.series),
    };
    to_plot(name, &title, (1100, height), &figure, stamp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::RunSeriesBuilder;
    use crate::test_records::*;
    use schedlab_core::NodeCondition::*;

    fn series(records: &[schedlab_core::Record]) -> RunSeries {
        let mut b = RunSeriesBuilder::new();
        for r in records {
            b.push(r);
        }
        b.finish().unwrap()
    }

    #[test]
    fn cells_hold_until_the_next_sample_and_merge_equal_neighbours() {
        let s = series(&[
            node(0, 1000, 1000, 1.0),
            node(1, 1000, 1000, 1.0),
            node_sample(0, 0, (500, 0), (0, 0), 1, Ready),
            node_sample(0, 1, (0, 0), (0, 0), 0, Ready),
            node_sample(10, 0, (500, 0), (0, 0), 1, Ready),
            node_sample(10, 1, (0, 0), (0, 0), 0, NotReady),
            node_sample(20, 0, (1000, 0), (0, 0), 1, Ready),
            end(30),
        ]);
        let c = cells(&s, |p| p.cpu_util);
        let half = Some(32);
        assert_eq!(
            c,
            vec![
                Cell {
                    row: 0,
                    t0: 0,
                    t1: 20,
                    level: half
                },
                Cell {
                    row: 0,
                    t0: 20,
                    t1: 30,
                    level: Some(64)
                },
                Cell {
                    row: 1,
                    t0: 0,
                    t1: 10,
                    level: Some(0)
                },
                Cell {
                    row: 1,
                    t0: 10,
                    t1: 30,
                    level: None
                },
            ]
        );
    }
}
