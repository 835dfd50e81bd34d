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

/// The time buckets of the stress plot, which every arm and seed shares:
/// about [`BUCKETS`] of a "nice" width over the longest run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StressAxis {
    pub width_ms: u64,
    pub buckets: usize,
}

impl StressAxis {
    /// The buckets over runs that end at `end` at the latest.
    pub fn until(end: Time) -> StressAxis {
        let width_ms = bucket_width_ms(end.0, BUCKETS);
        StressAxis {
            width_ms,
            buckets: end.0.div_ceil(width_ms).max(1) as usize,
        }
    }

    /// The bucket of a decision at `t`; one at the very end (or past it)
    /// falls into the last.
    fn bucket(&self, t: Time) -> usize {
        ((t.0 / self.width_ms) as usize).min(self.buckets.saturating_sub(1))
    }
}

/// One bucket's decisions of one seed: sums, so that a report holds a
/// bucket's worth of numbers per run however many decisions it made.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BucketSums {
    pub score: f64,
    /// of the levels' indices (calm 0, elevated 1, stressed 2)
    pub level: f64,
    pub decisions: u64,
}

/// One seed's decisions of an arm, summed per bucket of the plot's axis.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedStress {
    pub seed: u64,
    /// the run's end (its End record)
    pub end: Time,
    axis: StressAxis,
    sums: Vec<BucketSums>,
}

impl SeedStress {
    /// A seed without decisions yet, summed on `axis`.
    pub fn new(seed: u64, end: Time, axis: StressAxis) -> SeedStress {
        SeedStress {
            seed,
            end,
            axis,
            sums: vec![BucketSums::default(); axis.buckets],
        }
    }

    /// Counts one decision in (in file order, so that the sums, and the
    /// plot, do not depend on anything but the file).
    pub fn add(&mut self, p: StressPoint) {
        if let Some(b) = self.sums.get_mut(self.axis.bucket(p.t)) {
            b.score += f64::from(p.score);
            b.level += p.level.index() as f64;
            b.decisions += 1;
        }
    }

    /// The decisions counted in.
    pub fn decisions(&self) -> u64 {
        self.sums.iter().map(|b| b.decisions).sum()
    }
}

/// An arm's decisions over seeds, for the stress plot.
#[derive(Debug, Clone)]
pub struct ArmStress {
    pub arm: String,
    /// in force for the AGMARL arms acting on it, else observed
    pub basis: Basis,
    pub runs: Vec<SeedStress>,
}

/// What the stress plot is drawn from: the arms' seeds, every one summed on
/// `axis`.
#[derive(Debug, Clone)]
pub struct StressInput {
    pub axis: StressAxis,
    pub arms: Vec<ArmStress>,
}

impl StressInput {
    /// No arm yet, on the axis of runs that end at `end` at the latest.
    pub fn until(end: Time) -> StressInput {
        StressInput {
            axis: StressAxis::until(end),
            arms: Vec::new(),
        }
    }

    /// Whether any seed of any arm has decisions to draw.
    pub fn has_runs(&self) -> bool {
        self.arms.iter().any(|a| !a.runs.is_empty())
    }
}

/// Per bucket: the mean stress score and the mean level (calm 0, elevated
/// 1, stressed 2), each the mean over seeds of the seed's mean over its
/// decisions in the bucket; None where no seed decided.
type Means = Vec<Option<(f64, f64)>>;

fn means_per_bucket(arm: &ArmStress, buckets: usize) -> Means {
    // (sum of the seeds' mean scores, of their mean levels, seeds)
    let mut over_seeds = vec![(0.0f64, 0.0f64, 0u32); buckets];
    for run in &arm.runs {
        for (acc, b) in over_seeds.iter_mut().zip(&run.sums) {
            if b.decisions > 0 {
                acc.0 += b.score / b.decisions as f64;
                acc.1 += b.level / b.decisions as f64;
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

/// Stress score and level over time, one step line per arm.
pub(super) fn render(
    scenario: &str,
    input: &StressInput,
    all_runs: usize,
    palette: &Palette,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    let StressAxis { width_ms, buckets } = input.axis;
    let title = format!(
        "{scenario}: cluster stress over time (per {} bucket, mean over seeds)",
        describe_width(width_ms)
    );
    let lines = input
        .arms
        .iter()
        .filter(|a| !a.runs.is_empty())
        .map(|a| (a.arm.as_str(), a.basis, a.runs.len(), means_per_bucket(a, buckets)))
        .collect();
    let figure = StressFigure {
        title: title.clone(),
        width_ms,
        lines,
        palette,
    };
    let runs: usize = input.arms.iter().map(|a| a.runs.len()).sum();
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

    fn seed(seed: u64, axis: StressAxis, points: &[StressPoint]) -> SeedStress {
        let mut s = SeedStress::new(seed, Time(3000), axis);
        for p in points {
            s.add(*p);
        }
        s
    }

    #[test]
    fn buckets_average_within_a_seed_then_over_the_seeds_that_decided() {
        let axis = StressAxis {
            width_ms: 1000,
            buckets: 3,
        };
        let arm = ArmStress {
            arm: "agmarl".into(),
            basis: Basis::InForce,
            runs: vec![
                // bucket 0: two decisions, bucket 2: one
                seed(
                    1,
                    axis,
                    &[
                        point(0, 0.2, Level::Calm),
                        point(900, 0.4, Level::Elevated),
                        point(2500, 0.6, Level::Stressed),
                    ],
                ),
                seed(2, axis, &[point(100, 0.6, Level::Stressed)]),
            ],
        };
        assert_eq!(arm.runs[0].decisions(), 3);
        let means = means_per_bucket(&arm, 3);
        // bucket 0: seed 1 (0.3, 0.5), seed 2 (0.6, 2): mean (0.45, 1.25)
        let (score, level) = means[0].unwrap();
        assert!((score - 0.45).abs() < 1e-6 && (level - 1.25).abs() < 1e-9, "{means:?}");
        assert_eq!(means[1], None, "no decision: a gap");
        let (score, level) = means[2].unwrap();
        assert!((score - 0.6).abs() < 1e-6 && level == 2.0);
        // a decision at the very end, or past it, falls into the last bucket
        let late = seed(1, axis, &[point(3000, 0.1, Level::Calm), point(9000, 0.1, Level::Calm)]);
        assert_eq!(late.sums[2].decisions, 2);
    }

    #[test]
    fn a_seed_holds_one_bucket_of_sums_per_bucket_however_many_decisions() {
        let axis = StressAxis::until(Time(3_600_000));
        assert_eq!((axis.width_ms, axis.buckets), (60_000, 60));
        let mut s = SeedStress::new(1, Time(3_600_000), axis);
        for i in 0..100_000u64 {
            s.add(point(i * 36, 0.5, Level::Elevated));
        }
        assert_eq!((s.sums.len(), s.decisions()), (60, 100_000));
        // a run shorter than a bucket still has one
        assert_eq!(StressAxis::until(Time(0)).buckets, 1);
    }
}
