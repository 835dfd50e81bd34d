//! Cluster stress over time, one line per arm, from the runs'
//! decisions.jsonl: the stress score and the stress level AGMARL-DKS's
//! monitor gave each decision's cluster view, per time bucket the mean over
//! the bucket's decisions, then the mean over the seeds that decided in it.
//! A mean over seeds (rather than the first seed alone) because stress
//! moves with the faults, which every seed of a scenario plays; a bucket
//! without any decision is a gap, not a zero.

use super::render::{DrawResult, Figure, draw_legend, draw_no_data, house_mesh, legend_line, title_font, to_plot};
use super::style::{Palette, TimeUnit, bucket_width_ms, describe_width};
use super::{Plot, PlotError};
use crate::decisions::{Basis, Level, StressPoint};
use plotters::coord::Shift;
use plotters::prelude::*;
use schedlab_core::time::Time;

/// About this many buckets over the longest run.
const BUCKETS: u64 = 60;

/// The file stem of the plot.
pub const NAME: &str = "stress-over-time";

/// One seed's decisions of an arm.
#[derive(Debug, Clone)]
pub struct SeedStress {
    pub seed: u64,
    /// the run's end (its End record), so that every arm shares the time axis
    pub end: Time,
    pub points: Vec<StressPoint>,
}

/// An arm's decisions over seeds, for the stress plot.
#[derive(Debug, Clone)]
pub struct ArmStress {
    pub arm: String,
    /// in force for the AGMARL arms acting on it, else observed
    pub basis: Basis,
    pub runs: Vec<SeedStress>,
}

/// Per bucket: the mean stress score and the mean level (calm 0, elevated
/// 1, stressed 2), each the mean over seeds of the seed's mean over its
/// decisions in the bucket; None where no seed decided.
type Means = Vec<Option<(f64, f64)>>;

fn means_per_bucket(arm: &ArmStress, width_ms: u64, buckets: usize) -> Means {
    // (sum of the seeds' mean scores, of their mean levels, seeds)
    let mut over_seeds = vec![(0.0f64, 0.0f64, 0u32); buckets];
    for run in &arm.runs {
        let mut within = vec![(0.0f64, 0.0f64, 0u32); buckets];
        for p in &run.points {
            let i = ((p.t.0 / width_ms) as usize).min(buckets.saturating_sub(1));
            if let Some(b) = within.get_mut(i) {
                b.0 += f64::from(p.score);
                b.1 += p.level.index() as f64;
                b.2 += 1;
            }
        }
        for (acc, (score, level, n)) in over_seeds.iter_mut().zip(within) {
            if n > 0 {
                acc.0 += score / f64::from(n);
                acc.1 += level / f64::from(n);
                acc.2 += 1;
            }
        }
    }
    over_seeds
        .into_iter()
        .map(|(score, level, seeds)| (seeds > 0).then(|| (score / f64::from(seeds), level / f64::from(seeds))))
        .collect()
}

struct StressFigure<'a> {
    title: String,
    width_ms: u64,
    /// arm, basis, seeds, means per bucket
    lines: Vec<(&'a str, Basis, usize, Means)>,
    palette: &'a Palette,
}

impl Figure for StressFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        if self.lines.iter().all(|(_, _, _, m)| m.iter().all(Option::is_none)) {
            return draw_no_data(root, &self.title);
        }
        let area = root.titled(&self.title, title_font())?;
        let buckets = self.lines.iter().map(|(_, _, _, m)| m.len()).max().unwrap_or(0) as u64;
        let unit = TimeUnit::for_span((buckets * self.width_ms) as f64 / 1000.0);
        let x_end = unit.of_ms(buckets * self.width_ms).max(f64::MIN_POSITIVE);
        type Panel = (&'static str, f64, fn(&(f64, f64)) -> f64);
        let panels: [Panel; 2] = [("stress score", 1.0, |m| m.0), ("stress level", 2.0, |m| m.1)];
        for (k, (panel, (label, top, value))) in area.split_evenly((2, 1)).iter().zip(panels).enumerate() {
            let mut chart = ChartBuilder::on(panel)
                .margin(8)
                .x_label_area_size(if k == 1 { 38 } else { 22 })
                .y_label_area_size(90)
                .build_cartesian_2d(0.0..x_end, -0.05 * top..1.05 * top)?;
            let mut mesh = chart.configure_mesh();
            house_mesh(&mut mesh).y_desc(label);
            let level_name = |v: &f64| {
                Level::ALL
                    .iter()
                    .find(|l| (l.index() as f64 - v).abs() < 1e-9)
                    .map_or_else(String::new, |l| l.name().to_string())
            };
            if k == 1 {
                mesh.x_desc(unit.axis_label())
                    .y_labels(3)
                    .y_label_formatter(&level_name);
            }
            mesh.draw()?;
            for (arm, basis, seeds, means) in &self.lines {
                let colour = self.palette.colour(arm);
                // step segments, broken where a bucket had no decision
                let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
                for (i, m) in means.iter().enumerate() {
                    let i = i as u64;
                    match m {
                        Some(m) => {
                            if let Some(s) = segments.last_mut() {
                                s.push((unit.of_ms(i * self.width_ms), value(m)));
                                s.push((unit.of_ms((i + 1) * self.width_ms), value(m)));
                            }
                        }
                        None => segments.push(Vec::new()),
                    }
                }
                if k == 0 {
                    chart
                        .draw_series(LineSeries::new(Vec::new(), colour.stroke_width(2)))?
                        .label(format!(
                            "{arm} ({}, {seeds} seed{})",
                            basis.name(),
                            if *seeds == 1 { "" } else { "s" }
                        ))
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

/// What the plot shows, for its caption in the reports.
pub fn caption(width_ms: u64, with: usize, runs: usize) -> String {
    format!(
        "Cluster stress as AGMARL-DKS's stress monitor estimates it from each decision's cluster view (score in [0, 1], \
         and the level after its hysteresis): in force for the AGMARL arms that act on it, observed passively for \
         every other arm (agmarl-nostress computes it and ignores it). Each line: per {} bucket, the mean over the \
         bucket's decisions, then the mean over the seeds that made a decision in it (all seeds, not the first \
         seed); a gap where no seed decided. From decisions.jsonl ({with} of {runs} runs have one).",
        describe_width(width_ms)
    )
}

/// The bucket width the plot of `arms` uses.
pub fn width_ms(arms: &[ArmStress]) -> u64 {
    let end_ms = arms
        .iter()
        .flat_map(|a| a.runs.iter().map(|r| r.end.0))
        .max()
        .unwrap_or(0);
    bucket_width_ms(end_ms, BUCKETS)
}

/// Stress score and level over time, one step line per arm.
pub(super) fn render(
    scenario: &str,
    arms: &[ArmStress],
    all_runs: usize,
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let width_ms = width_ms(arms);
    let end_ms = arms
        .iter()
        .flat_map(|a| a.runs.iter().map(|r| r.end.0))
        .max()
        .unwrap_or(0);
    let buckets = end_ms.div_ceil(width_ms).max(1) as usize;
    let title = format!(
        "{scenario}: cluster stress over time (per {} bucket, mean over seeds)",
        describe_width(width_ms)
    );
    let lines = arms
        .iter()
        .filter(|a| !a.runs.is_empty())
        .map(|a| {
            (
                a.arm.as_str(),
                a.basis,
                a.runs.len(),
                means_per_bucket(a, width_ms, buckets),
            )
        })
        .collect();
    let figure = StressFigure {
        title: title.clone(),
        width_ms,
        lines,
        palette,
    };
    let runs: usize = arms.iter().map(|a| a.runs.len()).sum();
    let mut plot = to_plot(NAME, &title, (1100, 640), &figure, stamp)?;
    plot.caption = Some(caption(width_ms, runs, all_runs.max(runs)));
    Ok(plot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t: u64, score: f32, level: Level) -> StressPoint {
        StressPoint {
            t: Time(t),
            score,
            level,
        }
    }

    #[test]
    fn buckets_average_within_a_seed_then_over_the_seeds_that_decided() {
        let arm = ArmStress {
            arm: "agmarl".into(),
            basis: Basis::InForce,
            runs: vec![
                SeedStress {
                    seed: 1,
                    end: Time(3000),
                    // bucket 0: two decisions, bucket 2: one
                    points: vec![
                        point(0, 0.2, Level::Calm),
                        point(900, 0.4, Level::Elevated),
                        point(2500, 0.6, Level::Stressed),
                    ],
                },
                SeedStress {
                    seed: 2,
                    end: Time(3000),
                    points: vec![point(100, 0.6, Level::Stressed)],
                },
            ],
        };
        let means = means_per_bucket(&arm, 1000, 3);
        // bucket 0: seed 1 (0.3, 0.5), seed 2 (0.6, 2): mean (0.45, 1.25)
        let (score, level) = means[0].unwrap();
        assert!((score - 0.45).abs() < 1e-6 && (level - 1.25).abs() < 1e-9, "{means:?}");
        assert_eq!(means[1], None, "no decision: a gap");
        let (score, level) = means[2].unwrap();
        assert!((score - 0.6).abs() < 1e-6 && level == 2.0);
        // a decision at the very end falls into the last bucket
        let late = ArmStress {
            runs: vec![SeedStress {
                seed: 1,
                end: Time(3000),
                points: vec![point(3000, 0.1, Level::Calm)],
            }],
            ..arm
        };
        assert!(means_per_bucket(&late, 1000, 3)[2].is_some());
    }
}
