//! `schedlab heads`: how well each score source of the AGMARL controller
//! predicts what its own placements realise, on any scenarios and seeds —
//! the fault-tolerance head's AUC, each head's RMSE, R² and Brier score, and
//! the share of each head's variance across the candidate nodes of one pod
//! (`scheduler::agmarl::train::heads`).
//!
//! Each model (a checkpoint, the untrained network of an init seed, the
//! analytic formulas) plays every scenario × seed on the simulator with
//! the full controller and no exploration noise, exactly as an evaluation
//! run does, and its placements are labelled by the realised metrics that
//! training uses. Writes `heads.csv` (one row per model and scenario, and
//! per model over all scenarios) and `heads.json`, and prints the table.

use crate::cli::HeadsArgs;
use crate::exit::InputError;
use crate::out::outln;
use crate::train_validation::play_probe;
use anyhow::{Context, Result, bail};
use results::run_folder::RunFolder;
use scheduler::agmarl::train::{Explorer, HeadReport, HeadStats, RealisedTracker, RewardConfig};
use scheduler::agmarl::{AgmarlConfig, AgmarlNet, AgmarlScheduler};
use std::fmt::Write as _;
use std::path::PathBuf;

/// One score source under test, with the selection tolerance it runs with
/// (a checkpoint's own measured head error; the controls take the first
/// checkpoint's, else the bundled `agmarl`'s, as in a scenario run).
enum Model {
    Checkpoint {
        path: PathBuf,
        net: AgmarlNet,
        head_error: Option<scheduler::agmarl::MeasuredError>,
    },
    Untrained {
        init_seed: u64,
        head_error: Option<scheduler::agmarl::MeasuredError>,
    },
    Analytic {
        head_error: Option<scheduler::agmarl::MeasuredError>,
    },
}

impl Model {
    fn label(&self) -> String {
        match self {
            Model::Checkpoint { path, .. } => format!("checkpoint {}", path.display()),
            Model::Untrained { init_seed, .. } => format!("agmarl-untrained init {init_seed}"),
            Model::Analytic { .. } => "agmarl-analytic".to_string(),
        }
    }

    /// The noiseless policy this model scores with.
    fn explorer(&self, seed: u64) -> Result<Explorer> {
        let config = AgmarlConfig::default();
        Ok(match self {
            Model::Checkpoint { net, head_error, .. } => Explorer::with_scheduler(
                AgmarlScheduler::new(net.deep_clone()?, config, seed).with_measured_error(*head_error),
                seed,
                0.0,
            ),
            Model::Untrained { init_seed, head_error } => Explorer::with_scheduler(
                AgmarlScheduler::untrained(*init_seed, config, seed)?.with_measured_error(*head_error),
                seed,
                0.0,
            ),
            Model::Analytic { head_error } => Explorer::with_scheduler(
                AgmarlScheduler::analytic(config, seed).with_measured_error(*head_error),
                seed,
                0.0,
            ),
        })
    }
}

/// One (model, scenario) cell of the table.
struct Cell {
    model: String,
    scenario: String,
    report: HeadReport,
}

pub fn run(args: HeadsArgs) -> Result<()> {
    if args.seeds == 0 {
        bail!(InputError("--seeds must be at least 1".into()));
    }
    let mut models = Vec::new();
    let mut beside = None;
    // an untrained twin stands beside the checkpoint trained from its
    // weights (training seed = init seed), and selects with its tolerance
    let mut by_training_seed = Vec::new();
    for path in &args.checkpoints {
        let (net, meta) = scheduler::agmarl::checkpoint::load(path)
            .map_err(|e| InputError(format!("--checkpoint {}: {e}", path.display())))?;
        let head_error = meta.measured_error();
        beside.get_or_insert(head_error);
        if let Some(seed) = meta.training.get("seed").and_then(|s| s.as_u64()) {
            by_training_seed.push((seed, head_error));
        }
        models.push(Model::Checkpoint {
            path: path.clone(),
            net,
            head_error,
        });
    }
    if !args.init_seeds.is_empty() || args.analytic {
        let head_error = match beside {
            Some(e) => e,
            None => scheduler::control_head_error(scheduler::agmarl::Variant::Full)?,
        };
        for &init_seed in &args.init_seeds {
            let head_error = twin_head_error(init_seed, &by_training_seed, head_error);
            models.push(Model::Untrained { init_seed, head_error });
        }
        if args.analytic {
            models.push(Model::Analytic { head_error });
        }
    }
    if models.is_empty() {
        bail!(InputError(
            "nothing to measure: give --checkpoint FILE, --init-seed S or --analytic".into()
        ));
    }
    let names = if args.scenarios.is_empty() {
        vec!["pressure".to_string(), "churn".to_string()]
    } else {
        args.scenarios.clone()
    };
    let scenarios = names
        .iter()
        .map(|n| workloads::load_allowing(n, &args.set, &args.allow_trace).with_context(|| format!("scenario {n}")))
        .collect::<Result<Vec<_>>>()?;
    let seeds: Vec<u64> = (0..args.seeds).map(|i| args.first_seed + i).collect();
    let folder = match &args.out {
        Some(out) => Some(RunFolder::create(out)?),
        None => None,
    };

    let mut cells = Vec::new();
    for model in &models {
        let mut all = HeadStats::default();
        for scenario in &scenarios {
            let mut stats = HeadStats::default();
            // the seeds of one scenario, two at a time
            for pair in seeds.chunks(2) {
                let played = crate::threads::one_thread_each(pair.to_vec(), "a run", |seed| {
                    let explorer = model.explorer(seed)?;
                    let probe = play_probe(
                        scenario,
                        seed,
                        explorer,
                        RealisedTracker::default(),
                        &RewardConfig::default(),
                    )?;
                    Ok(probe.heads)
                });
                for (seed, heads) in pair.iter().zip(played) {
                    let heads =
                        heads.with_context(|| format!("{} on {} seed {seed}", model.label(), scenario.name()))?;
                    stats.merge(&heads);
                }
            }
            all.merge(&stats);
            cells.push(Cell {
                model: model.label(),
                scenario: scenario.name().to_string(),
                report: stats.report(),
            });
        }
        cells.push(Cell {
            model: model.label(),
            scenario: "(all)".to_string(),
            report: all.report(),
        });
    }

    let table = render(&cells);
    outln!("{table}")?;
    if let Some(folder) = folder {
        folder.write("heads.csv", &csv(&cells))?;
        let json = serde_json::json!({
            "seeds": seeds,
            "scenarios": names,
            "set": args.set,
            "cells": cells.iter().map(|c| serde_json::json!({
                "model": c.model, "scenario": c.scenario, "heads": c.report,
            })).collect::<Vec<_>>(),
        });
        folder.write("heads.json", &serde_json::to_string_pretty(&json)?)?;
        folder.mark_complete()?;
    }
    Ok(())
}

fn number(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:.3}"),
        _ => "–".to_string(),
    }
}

const COLUMNS: &str = "model,scenario,placements,ft_observed,ft_failures,auc_ft,rmse_ft,rmse_util,rmse_cost,r2_ft,\
r2_util,r2_cost,brier_ft,across_ft,across_util,across_cost";

fn row(c: &Cell) -> Vec<String> {
    let r = &c.report;
    let mut out = vec![
        c.model.clone(),
        c.scenario.clone(),
        r.placements.to_string(),
        r.ft_observed.to_string(),
        r.ft_failures.to_string(),
        number(r.auc_ft),
    ];
    out.extend(r.rmse.map(number));
    out.extend(r.r2.map(number));
    out.push(number(r.brier[0]));
    out.extend(r.across_candidates.map(number));
    out
}

fn csv(cells: &[Cell]) -> String {
    let mut s = String::from(COLUMNS);
    s.push('\n');
    for c in cells {
        let fields: Vec<String> = row(c)
            .into_iter()
            .map(|f| {
                let f = if f == "–" { String::new() } else { f };
                if f.contains([',', '"', '\n']) {
                    format!("\"{}\"", f.replace('"', "\"\""))
                } else {
                    f
                }
            })
            .collect();
        let _ = writeln!(s, "{}", fields.join(","));
    }
    s
}

fn render(cells: &[Cell]) -> String {
    let header: Vec<String> = COLUMNS.split(',').map(str::to_string).collect();
    let rows: Vec<Vec<String>> = std::iter::once(header).chain(cells.iter().map(row)).collect();
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = String::new();
    for (n, r) in rows.iter().enumerate() {
        let cells: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
        if n == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            let _ = writeln!(s, "| {} |", rule.join(" | "));
        }
    }
    s
}

/// The tolerance an untrained twin with `init_seed` selects with: that of
/// the checkpoint trained from its weights (training seed = init seed)
/// where one is measured beside it, else `fallback` (the first
/// checkpoint's, or the bundled `agmarl`'s).
fn twin_head_error<E: Copy>(init_seed: u64, by_training_seed: &[(u64, Option<E>)], fallback: Option<E>) -> Option<E> {
    by_training_seed
        .iter()
        .find(|(seed, _)| *seed == init_seed)
        .map_or(fallback, |(_, e)| *e)
}

#[cfg(test)]
mod tests {
    use super::twin_head_error;

    #[test]
    fn a_twin_selects_with_the_tolerance_of_its_own_training_run() {
        let runs = [
            (1000, Some([0.4, 0.1, 0.05])),
            (2000, Some([0.3, 0.2, 0.01])),
            (3000, None),
        ];
        let fallback = Some([0.9; 3]);
        assert_eq!(twin_head_error(2000, &runs, fallback), Some([0.3, 0.2, 0.01]));
        assert_eq!(twin_head_error(1000, &runs, fallback), Some([0.4, 0.1, 0.05]));
        // its run records no RMSE: the spread-only rule, as that run selects
        assert_eq!(twin_head_error(3000, &runs, fallback), None);
        // no checkpoint of its seed measured beside it
        assert_eq!(twin_head_error(7000, &runs, fallback), fallback);
    }
}
