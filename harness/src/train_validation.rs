//! The curves `schedlab train` draws of a policy it does not learn from:
//! every `validate_every` episodes the frozen actor plays fixed probe
//! episodes without exploration noise, and their outcomes go to
//! `validation_curve.csv`, never into the replay buffer.
//!
//! Two splits:
//! - `validation`: each training scenario at seeds from
//!   [`VALIDATION_FIRST_SEED`], in the training range (≥ 1000) but outside
//!   any run's own episodes. The heads' errors measured here (the last
//!   point's) go into the checkpoint's sidecar: they are what a selection
//!   that must not decide below a head's own error reads.
//! - `heldout`: built-ins no training scenario is ([`HELDOUT_CURVE_SCENARIOS`]),
//!   at seeds from [`HELDOUT_CURVE_FIRST_SEED`], below 1000 and apart from
//!   the evaluation seeds 1–10. Nothing selects on this split: it shows how
//!   the policy does on work training never reads, as training goes.
//!
//! The same probes every time, so the points of a curve compare.

use crate::episode_play::play_episode;
use anyhow::{Context, Result, bail};
use results::metrics::RunMetricsBuilder;
use scheduler::agmarl::train::{EpisodeStats, Explorer, HeadReport, HeadStats, RealisedTracker, RewardConfig, Trainer};
use std::fmt::Write as _;

/// First seed of the validation split (one per training scenario).
pub const VALIDATION_FIRST_SEED: u64 = 900_000;
/// First seed of the held-out split (one per held-out scenario).
pub const HELDOUT_CURVE_FIRST_SEED: u64 = 900;
/// Built-ins the held-out split plays, less any that training reads.
pub const HELDOUT_CURVE_SCENARIOS: &[&str] = &["mixed", "trace"];
/// The run metrics each probe reports: the training objective's own.
const OUTCOME_METRICS: [&str; 3] = ["cost_usd", "failures_per_running_pod_hour", "oom_pressure_events"];

/// The header of `validation_curve.csv`.
pub const VALIDATION_HEADER: &str = "trained_episodes,split,scenario,seed,decisions,binds,declines,auc_ft,rmse_ft,\
rmse_util,rmse_cost,r2_ft,r2_util,r2_cost,across_ft,across_util,across_cost,cost_usd,\
failures_per_running_pod_hour,oom_pressure_events";

/// Which probes a point of the curve belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    Validation,
    Heldout,
}

impl Split {
    fn name(self) -> &'static str {
        match self {
            Split::Validation => "validation",
            Split::Heldout => "heldout",
        }
    }
}

/// One probe episode.
pub struct Probe<'a> {
    pub split: Split,
    pub scenario: &'a workloads::Scenario,
    pub seed: u64,
}

/// The held-out built-ins for a run training on `training` (by name).
pub fn heldout_scenarios(training: &[workloads::Scenario]) -> Result<Vec<workloads::Scenario>> {
    HELDOUT_CURVE_SCENARIOS
        .iter()
        .filter(|name| training.iter().all(|s| s.name() != **name))
        .map(|name| workloads::load(name, &[]).with_context(|| format!("held-out curve scenario {name}")))
        .collect()
}

/// The probes of every point: the training scenarios at validation seeds,
/// then the held-out ones. Refuses a training run whose own seeds reach the
/// validation seeds.
pub fn probes<'a>(
    training: &'a [workloads::Scenario],
    heldout: &'a [workloads::Scenario],
    training_seeds: (u64, u64),
) -> Result<Vec<Probe<'a>>> {
    let last_validation = VALIDATION_FIRST_SEED + training.len() as u64;
    if training_seeds.0 < last_validation && training_seeds.1 >= VALIDATION_FIRST_SEED {
        bail!(crate::exit::InputError(format!(
            "training seeds {}..={} reach the validation seeds {VALIDATION_FIRST_SEED}..{last_validation}: start \
             below or after them",
            training_seeds.0, training_seeds.1
        )));
    }
    let validation = training.iter().enumerate().map(|(i, scenario)| Probe {
        split: Split::Validation,
        scenario,
        seed: VALIDATION_FIRST_SEED + i as u64,
    });
    let held = heldout.iter().enumerate().map(|(i, scenario)| Probe {
        split: Split::Heldout,
        scenario,
        seed: HELDOUT_CURVE_FIRST_SEED + i as u64,
    });
    Ok(validation.chain(held).collect())
}

/// One point of the curve.
pub struct Point {
    /// one CSV line per probe, each ending in a newline
    pub rows: String,
    /// the heads over every validation probe together
    pub validation: HeadReport,
}

/// What one noiseless episode showed.
pub struct Probed {
    pub heads: HeadStats,
    pub stats: EpisodeStats,
    /// [`OUTCOME_METRICS`] of the run
    pub outcomes: [Option<f64>; 3],
}

/// Plays `scenario` at `seed` with `explorer` (give it no noise) and
/// measures its heads and the run's outcomes.
pub fn play_probe(
    scenario: &workloads::Scenario,
    seed: u64,
    explorer: Explorer,
    tracker: RealisedTracker,
    reward: &RewardConfig,
) -> Result<Probed> {
    let mut metrics = RunMetricsBuilder::for_source(format!("probe {} seed {seed}", scenario.name()));
    let episode = play_episode(scenario, seed, explorer, tracker, reward, Some(&mut metrics))?;
    let run = metrics.finish().context("measuring a probe episode")?;
    Ok(Probed {
        heads: episode.heads,
        stats: episode.stats,
        outcomes: OUTCOME_METRICS.map(|k| run.value(k)),
    })
}

/// Plays every probe with the trainer's current actor, noiseless, one
/// thread each, and returns the point `trained_episodes` into training.
pub fn measure(trainer: &Trainer, probes: &[Probe<'_>], trained_episodes: usize) -> Result<Point> {
    let reward = trainer.config().reward;
    let work: Vec<_> = probes
        .iter()
        .map(|probe| (probe, trainer.probe(probe.seed), trainer.tracker()))
        .collect();
    let played = crate::threads::one_thread_each(work, "a probe", |(probe, explorer, tracker)| {
        play_probe(probe.scenario, probe.seed, explorer?, tracker, &reward)
    });
    let mut rows = String::new();
    let mut validation = HeadStats::default();
    for (probe, result) in probes.iter().zip(played) {
        let Probed { heads, stats, outcomes } =
            result.with_context(|| format!("probe {} seed {}", probe.scenario.name(), probe.seed))?;
        let r = heads.report();
        let cells: Vec<Option<f64>> = [r.auc_ft]
            .into_iter()
            .chain(r.rmse)
            .chain(r.r2)
            .chain(r.across_candidates)
            .chain(outcomes)
            .collect();
        let _ = write!(
            rows,
            "{trained_episodes},{},{},{},{},{},{}",
            probe.split.name(),
            csv_field(probe.scenario.name()),
            probe.seed,
            stats.decisions,
            stats.binds,
            stats.declines
        );
        for c in cells {
            let _ = match c {
                Some(x) if x.is_finite() => write!(rows, ",{x:.6}"),
                _ => write!(rows, ","),
            };
        }
        rows.push('\n');
        if probe.split == Split::Validation {
            validation.merge(&heads);
        }
    }
    Ok(Point {
        rows,
        validation: validation.report(),
    })
}

/// A scenario name as one CSV field.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Whether a point is due after `done` of `total` episodes, the previous
/// one having been taken after `last` (None: none yet).
pub fn due(every: usize, done: usize, total: usize, last: Option<usize>) -> bool {
    if every == 0 {
        return false;
    }
    match last {
        None => true,
        Some(last) => done / every > last / every || (done == total && last != done),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_come_at_the_start_every_k_episodes_and_at_the_end() {
        let mut last = None;
        let mut taken = Vec::new();
        // rounds of two episodes, 9 episodes, a point every 4
        for done in [0, 2, 4, 6, 8, 9] {
            if due(4, done, 9, last) {
                taken.push(done);
                last = Some(done);
            }
        }
        assert_eq!(taken, [0, 4, 8, 9]);
        assert!(!due(0, 0, 9, None), "0 turns the curve off");
    }

    #[test]
    fn training_seeds_that_reach_the_validation_seeds_are_refused() {
        let training = vec![
            workloads::load("pressure", &[]).unwrap(),
            workloads::load("churn", &[]).unwrap(),
        ];
        let heldout = heldout_scenarios(&training).unwrap();
        let names: Vec<&str> = heldout.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["mixed", "trace"]);
        let p = probes(&training, &heldout, (1000, 1299)).unwrap();
        let seeds: Vec<(Split, &str, u64)> = p.iter().map(|p| (p.split, p.scenario.name(), p.seed)).collect();
        assert_eq!(
            seeds,
            [
                (Split::Validation, "pressure", 900_000),
                (Split::Validation, "churn", 900_001),
                (Split::Heldout, "mixed", 900),
                (Split::Heldout, "trace", 901)
            ]
        );
        let err = probes(&training, &heldout, (899_990, 900_000))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("900000"), "{err}");
        assert!(probes(&training, &heldout, (900_002, 900_100)).is_ok());
        // a held-out built-in that is trained on leaves the held-out split
        let with_mixed = vec![workloads::load("mixed", &[]).unwrap()];
        let names: Vec<String> = heldout_scenarios(&with_mixed)
            .unwrap()
            .iter()
            .map(|s| s.name().to_string())
            .collect();
        assert_eq!(names, ["trace"]);
    }
}
