//! The A/B summary: every arm's metrics over its seeds, with seeded bootstrap
//! intervals, tests and effect sizes against the reference arm and the
//! Pareto front, as CSV, JSON, Markdown, LaTeX and a terminal table.

mod brief;
mod comparison;
mod csv;
pub(crate) mod format;
mod headline;
mod json;
mod latex;
mod markdown;
mod terminal;

pub(crate) use brief::clip;
pub use brief::{KEY_METRICS, MAX_HEADLINE, MAX_WIDTH};
pub use comparison::{VS_REFERENCE, VsReference};
pub use csv::HEADER as CSV_HEADER;
pub use format::{csv_field, csv_number, latex_escape};
pub use headline::{Collapsed, collapsed_rows, headline};
pub use json::SummaryDocument;

use crate::definitions::{METRICS, MetricDef};
use crate::metrics::{RunMetrics, TemplateCorrelation};
use crate::pareto::{ParetoEntry, ParetoPoint, pareto_front};
use crate::stats::{
    BOOTSTRAP_RESAMPLES, CONFIDENCE, CorrelationEstimate, MeanEstimate, PartialEstimate, bootstrap_mean_ci, median,
};
use schedlab_core::rng::{purpose, stream};

/// Keys that keep the summary's random streams apart (after
/// [`purpose::STATISTICS`]).
const STREAM_MEAN: u64 = 1;
const STREAM_CORRELATION: u64 = 2;
const STREAM_PARTIAL_CORRELATION: u64 = 3;
/// the forest plot's bootstrap of each arm's difference from the reference
pub(crate) const STREAM_DIFFERENCE: u64 = 4;
const STREAM_TEMPLATE_CORRELATION: u64 = 4;

/// Whether the memory/failure correlation of a run survives within its
/// templates.
#[derive(Debug, Clone)]
pub struct Decoupling {
    /// controlling for the template (see `mem_failure_partial_pearson`)
    pub partial: PartialEstimate,
    /// within each template with a pod bound at least once, in template order
    pub templates: Vec<TemplateCorrelation>,
}

/// One run: an arm (scheduler) on one seed.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub arm: String,
    pub seed: u64,
    /// the training run of a learned arm's checkpoint (the invocation
    /// manifest's `arm_facts.<arm>.training_run`); `None` when it has none or
    /// it is unknown
    pub training_run: Option<String>,
    pub metrics: RunMetrics,
    /// the run's correlations, when they were computed as it was read (see
    /// [`RunCorrelations`]); `None`: computed from `metrics.pod_outcomes`
    pub correlations: Option<RunCorrelations>,
}

/// A run's memory/failure correlations with their bootstrap intervals. A run
/// folder's reader computes them as it reads each run and then lets go of
/// the run's per-pod pairs, so that a summary of thousands of runs holds
/// only these.
#[derive(Debug, Clone)]
pub struct RunCorrelations {
    /// the statistics seed they were drawn with: the summary's, or they are
    /// not used
    pub stats_seed: u64,
    pub correlation: CorrelationEstimate,
    pub decoupling: Decoupling,
}

impl RunCorrelations {
    /// The correlations of the run of `seed`, from streams of `stats_seed`
    /// that depend on the run's seed (and the template) only.
    pub fn of(metrics: &RunMetrics, seed: u64, stats_seed: u64) -> RunCorrelations {
        let mut rng = stream(stats_seed, &[purpose::STATISTICS, STREAM_CORRELATION, seed]);
        let correlation = metrics.mem_failure_correlation(BOOTSTRAP_RESAMPLES, &mut rng);
        let mut rng = stream(stats_seed, &[purpose::STATISTICS, STREAM_PARTIAL_CORRELATION, seed]);
        let decoupling = Decoupling {
            partial: metrics.mem_failure_partial_correlation(BOOTSTRAP_RESAMPLES, &mut rng),
            templates: metrics.template_correlations(BOOTSTRAP_RESAMPLES, |w| {
                stream(
                    stats_seed,
                    &[purpose::STATISTICS, STREAM_TEMPLATE_CORRELATION, seed, u64::from(w.0)],
                )
            }),
        };
        RunCorrelations {
            stats_seed,
            correlation,
            decoupling,
        }
    }
}

/// One metric of one arm over its seeds.
#[derive(Debug, Clone)]
pub struct MetricStats {
    pub def: &'static MetricDef,
    /// (seed, value) of every run of the arm, in seed order; `None` where
    /// the metric is undefined for that run
    pub values: Vec<(u64, Option<f64>)>,
    /// runs left out because the metric is undefined there
    pub undefined: usize,
    /// `None` when the metric is undefined in every run
    pub estimate: Option<MeanEstimate>,
    /// median of the defined values; `None` when there are none
    pub median: Option<f64>,
    /// the test and effect sizes against the reference arm; `None` for the
    /// reference arm itself and where either side has no defined value
    pub vs_reference: Option<VsReference>,
}

/// Everything the summary says about one arm.
#[derive(Debug, Clone)]
pub struct ArmSummary {
    pub arm: String,
    /// the arm's runs, in seed order
    pub runs: Vec<RunResult>,
    /// one per [`METRICS`] entry, in that order
    pub metrics: Vec<MetricStats>,
    /// the memory/failure correlation of each run, parallel to `runs`
    pub correlations: Vec<CorrelationEstimate>,
    /// the same within templates, parallel to `runs`
    pub decoupling: Vec<Decoupling>,
}

impl ArmSummary {
    /// (seed, template correlation) of every run and template, in seed and
    /// template order: the rows of the within-template tables.
    pub fn template_correlations(&self) -> impl Iterator<Item = (u64, &TemplateCorrelation)> {
        self.runs
            .iter()
            .zip(&self.decoupling)
            .flat_map(|(run, d)| d.templates.iter().map(move |t| (run.seed, t)))
    }

    pub fn seeds(&self) -> Vec<u64> {
        self.runs.iter().map(|r| r.seed).collect()
    }
    pub fn metric(&self, key: &str) -> Option<&MetricStats> {
        self.metrics.iter().find(|m| m.def.key == key)
    }
    /// The arm's means of the Pareto objectives.
    pub fn pareto_point(&self) -> ParetoPoint {
        let mean = |key| self.metric(key).and_then(|m| m.estimate).map(|e| e.mean);
        ParetoPoint {
            arm: self.arm.clone(),
            cost_usd: mean("cost_usd"),
            failure_rate: mean("failure_rate"),
            restarts: mean("restarts"),
        }
    }
}

/// The comparison of a scenario's arms across seeds.
#[derive(Debug, Clone)]
pub struct Summary {
    scenario: String,
    stats_seed: u64,
    arms: Vec<ArmSummary>,
    /// index into `arms`; `None` only without arms
    reference: Option<usize>,
    pareto: Vec<ParetoEntry>,
}

/// The arm that the others are tested against when present.
pub const REFERENCE_ARM: &str = "default";

/// FNV-1a: a fixed hash of a metric key, so that a metric's bootstrap stream
/// does not move when metrics are added or reordered.
pub(crate) fn key_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Summary {
    /// Groups `runs` by arm (arms in first-seen order, runs by seed) and
    /// computes every statistic. Random draws come from streams of
    /// `stats_seed` under [`purpose::STATISTICS`]: a metric's stream depends
    /// on the metric only, so arms with the same seeds resample the same seed
    /// positions (common random numbers); a run's correlation stream depends
    /// on its seed.
    ///
    /// The reference arm is [`REFERENCE_ARM`] when there is one, otherwise
    /// the first arm; every other arm is tested against it (see
    /// [`VS_REFERENCE`]).
    pub fn new(scenario: &str, runs: Vec<RunResult>, stats_seed: u64) -> Summary {
        let mut grouped: Vec<(String, Vec<RunResult>)> = Vec::new();
        for run in runs {
            match grouped.iter_mut().find(|(arm, _)| *arm == run.arm) {
                Some((_, list)) => list.push(run),
                None => grouped.push((run.arm.clone(), vec![run])),
            }
        }
        let hv_reference = grouped
            .iter()
            .find(|(arm, _)| arm == REFERENCE_ARM)
            .and_then(|(_, runs)| pareto_reference(runs));
        let mut arms: Vec<ArmSummary> = grouped
            .into_iter()
            .map(|(arm, mut runs)| {
                runs.sort_by_key(|r| r.seed);
                if runs
                    .windows(2)
                    .any(|w| w[0].seed == w[1].seed && w[0].training_run == w[1].training_run)
                {
                    tracing::warn!(%arm, "an arm has several runs with the same seed; each counts as a run");
                }
                let metrics = METRICS
                    .iter()
                    .map(|def| metric_stats(def, &runs, stats_seed, hv_reference))
                    .collect();
                let (correlations, decoupling) = runs
                    .iter()
                    .map(|r| {
                        let c = match &r.correlations {
                            Some(c) if c.stats_seed == stats_seed => c.clone(),
                            _ => {
                                debug_assert!(
                                    r.metrics.pods_bound == 0 || !r.metrics.pod_outcomes.is_empty(),
                                    "a run whose pods were let go takes its correlations from the reader"
                                );
                                RunCorrelations::of(&r.metrics, r.seed, stats_seed)
                            }
                        };
                        (c.correlation, c.decoupling)
                    })
                    .unzip();
                ArmSummary {
                    arm,
                    runs,
                    metrics,
                    correlations,
                    decoupling,
                }
            })
            .collect();
        let reference = arms
            .iter()
            .position(|a| a.arm == REFERENCE_ARM)
            .or((!arms.is_empty()).then_some(0));
        if let Some(r) = reference {
            let reference_arm = arms[r].clone();
            for (i, arm) in arms.iter_mut().enumerate() {
                if i != r {
                    comparison::compare(arm, &reference_arm);
                }
            }
        }
        let points: Vec<ParetoPoint> = arms.iter().map(ArmSummary::pareto_point).collect();
        Summary {
            scenario: scenario.to_string(),
            stats_seed,
            pareto: pareto_front(&points),
            arms,
            reference,
        }
    }

    /// The name of the arm the others are tested against.
    pub fn reference(&self) -> Option<&str> {
        self.reference_arm().map(|a| a.arm.as_str())
    }
    pub fn reference_arm(&self) -> Option<&ArmSummary> {
        self.reference.and_then(|r| self.arms.get(r))
    }
    /// Every arm's place relative to the Pareto front over
    /// [`crate::pareto::OBJECTIVES`], in arm order.
    pub fn pareto(&self) -> &[ParetoEntry] {
        &self.pareto
    }
    /// The seeds, when every arm ran the same ones.
    pub fn common_seeds(&self) -> Option<Vec<u64>> {
        let first = self.arms.first()?.seeds();
        self.arms.iter().all(|a| a.seeds() == first).then_some(first)
    }

    pub fn scenario(&self) -> &str {
        &self.scenario
    }
    pub fn stats_seed(&self) -> u64 {
        self.stats_seed
    }
    /// Arms in first-seen order.
    pub fn arms(&self) -> &[ArmSummary] {
        &self.arms
    }
    pub fn arm(&self, name: &str) -> Option<&ArmSummary> {
        self.arms.iter().find(|a| a.arm == name)
    }

    /// Arms with the best mean of metric `index` (of [`METRICS`]), where its
    /// definition names a better direction, at least two arms have a mean
    /// and they are not all equal.
    pub(crate) fn best_arms(&self, index: usize) -> Vec<bool> {
        let def = &METRICS[index];
        let means: Vec<Option<f64>> = self
            .arms
            .iter()
            .map(|a| a.metrics.get(index).and_then(|m| m.estimate).map(|e| e.mean))
            .collect();
        let defined: Vec<f64> = means.iter().flatten().copied().collect();
        let best = match def.better {
            crate::definitions::Better::Lower => defined.iter().copied().reduce(f64::min),
            crate::definitions::Better::Higher => defined.iter().copied().reduce(f64::max),
            crate::definitions::Better::Neither => None,
        };
        let all_equal = defined.windows(2).all(|w| w[0] == w[1]);
        match best {
            Some(best) if defined.len() >= 2 && !all_equal => means.iter().map(|m| *m == Some(best)).collect(),
            _ => vec![false; self.arms.len()],
        }
    }
}

/// A run's Pareto objectives ([`crate::pareto::OBJECTIVES`]), where all are defined.
fn objectives(m: &RunMetrics) -> Option<[f64; 3]> {
    Some([m.value("cost_usd")?, m.value("failure_rate")?, m.value("restarts")?])
}

/// The reference arm's means over its seeds of each Pareto objective, over
/// the runs that define it: the scale of `pareto_hv`.
fn pareto_reference(runs: &[RunResult]) -> Option<[f64; 3]> {
    let mean_of = |key: &str| {
        let v: Vec<f64> = runs.iter().filter_map(|r| r.metrics.value(key)).collect();
        crate::stats::mean(&v)
    };
    Some([mean_of("cost_usd")?, mean_of("failure_rate")?, mean_of("restarts")?])
}

/// A run's value of metric `def`: its own, or for `pareto_hv` its point
/// scaled by the reference arm's means (undefined without a reference arm).
fn run_value(def: &MetricDef, run: &RunResult, hv_reference: Option<[f64; 3]>) -> Option<f64> {
    match def.key {
        "pareto_hv" => crate::metrics::pareto_hv(objectives(&run.metrics)?, hv_reference?),
        key => run.metrics.value(key),
    }
}

fn metric_stats(
    def: &'static MetricDef,
    runs: &[RunResult],
    stats_seed: u64,
    hv_reference: Option<[f64; 3]>,
) -> MetricStats {
    let values: Vec<(u64, Option<f64>)> = runs.iter().map(|r| (r.seed, run_value(def, r, hv_reference))).collect();
    let defined: Vec<f64> = values.iter().filter_map(|(_, v)| *v).collect();
    let mut rng = stream(stats_seed, &[purpose::STATISTICS, STREAM_MEAN, key_hash(def.key)]);
    MetricStats {
        def,
        undefined: values.len() - defined.len(),
        estimate: bootstrap_mean_ci(&defined, CONFIDENCE, BOOTSTRAP_RESAMPLES, &mut rng),
        median: median(&defined),
        vs_reference: None,
        values,
    }
}
