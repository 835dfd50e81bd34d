//! What table D reads: the per-seed decision time (p50, p99), cost, failure
//! rate and node-pressure OOM events of every arm of a finished run folder (its `summary.json`), with the
//! folder's scenario and cluster size; and the facts of a `drs` training
//! folder (its sidecar and curves).

use super::error::ScalingError;
use crate::run_folder::layout::{INCOMPLETE_MARKER, MANIFEST_FILE, SUMMARY_JSON};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One run's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunPoint {
    pub seed: u64,
    pub decision_p50_ms: Option<f64>,
    pub decision_p99_ms: Option<f64>,
    pub cost_usd: Option<f64>,
    pub failures_per_running_pod_hour: Option<f64>,
    pub oom_pressure_events: Option<f64>,
}

/// Every arm of one folder: one scenario at one size.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeRuns {
    pub folder: String,
    pub scenario: String,
    pub nodes: usize,
    pub arms: BTreeMap<String, Vec<RunPoint>>,
}

fn read_json(path: &Path) -> Result<Value, ScalingError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScalingError::Io {
        file: file.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| ScalingError::Format {
        file,
        detail: e.to_string(),
    })
}

/// `metric`'s value per seed in one arm of `summary.json`.
fn per_seed(arm: &Value, metric: &str) -> BTreeMap<u64, f64> {
    arm["metrics"][metric]["values"]
        .as_array()
        .map(|values| {
            values
                .iter()
                .filter_map(|v| Some((v["seed"].as_u64()?, v["value"].as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a finished run folder.
pub fn read_folder(folder: &Path) -> Result<SizeRuns, ScalingError> {
    let name = folder.display().to_string();
    if folder.join(INCOMPLETE_MARKER).exists() {
        return Err(ScalingError::Incomplete { folder: name });
    }
    let manifest = read_json(&folder.join(MANIFEST_FILE))?;
    let summary_path = folder.join(SUMMARY_JSON);
    let summary = read_json(&summary_path)?;
    let bad = |detail: String| ScalingError::Format {
        file: summary_path.display().to_string(),
        detail,
    };
    let scenario = manifest["scenario"]
        .as_str()
        .ok_or_else(|| bad("the manifest names no scenario".into()))?
        .to_string();
    let arms_json = summary["arms"]
        .as_array()
        .ok_or_else(|| bad("no \"arms\" list".into()))?;
    let mut nodes = None;
    let mut arms = BTreeMap::new();
    for arm in arms_json {
        let arm_name = arm["arm"].as_str().ok_or_else(|| bad("an arm without a name".into()))?;
        // the cluster size every run of the folder started with
        for run in arm["runs"].as_array().into_iter().flatten() {
            if let Some(n) = run["nodes"].as_u64() {
                match nodes {
                    None => nodes = Some(n as usize),
                    Some(m) if m != n as usize => {
                        return Err(bad(format!("runs of {m} and {n} nodes in one folder")));
                    }
                    Some(_) => {}
                }
            }
        }
        let p50 = per_seed(arm, "decision_time_p50_ms");
        let p99 = per_seed(arm, "decision_time_p99_ms");
        let cost = per_seed(arm, "cost_usd");
        let failures = per_seed(arm, "failures_per_running_pod_hour");
        let oom = per_seed(arm, "oom_pressure_events");
        let seeds: std::collections::BTreeSet<u64> =
            p99.keys().chain(cost.keys()).chain(failures.keys()).copied().collect();
        let points = seeds
            .into_iter()
            .map(|seed| RunPoint {
                seed,
                decision_p50_ms: p50.get(&seed).copied(),
                decision_p99_ms: p99.get(&seed).copied(),
                cost_usd: cost.get(&seed).copied(),
                failures_per_running_pod_hour: failures.get(&seed).copied(),
                oom_pressure_events: oom.get(&seed).copied(),
            })
            .collect();
        arms.insert(arm_name.to_string(), points);
    }
    let nodes = nodes.ok_or_else(|| bad("no run says its cluster size".into()))?;
    Ok(SizeRuns {
        folder: name,
        scenario,
        nodes,
        arms,
    })
}

/// What one `drs` training folder says (D4).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrainingFacts {
    pub folder: String,
    /// the arm it trains (`drs` or `drs-agmarl-reward`)
    pub arm: String,
    pub nodes: usize,
    pub parameters: u64,
    pub episodes: u64,
    pub transitions: u64,
    pub wall_seconds: f64,
    pub peak_rss_bytes: Option<u64>,
    /// the validation point where it converged (amendment 9): episodes,
    /// transitions and wall seconds up to it; None when the curve is too
    /// short to say
    pub converged: Option<Converged>,
}

/// Where a training run converged.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Converged {
    pub episodes: u64,
    pub transitions: u64,
    pub wall_seconds: f64,
}

/// How close every later validation reward must stay to the mean of the
/// last three (amendment 9).
pub const CONVERGENCE_BAND: f64 = crate::claims::TABLE_D.convergence_band;

/// The first validation point after which every validation reward lies
/// within [`CONVERGENCE_BAND`] of the mean of the last three; `points` are
/// (episodes done, mean validation reward), in order. None with fewer than
/// three points.
pub fn converged_at(points: &[(u64, f64)]) -> Option<u64> {
    if points.len() < 3 {
        return None;
    }
    let tail = &points[points.len() - 3..];
    let level = tail.iter().map(|p| p.1).sum::<f64>() / 3.0;
    let mut first = points.len() - 1;
    for i in (0..points.len()).rev() {
        if (points[i].1 - level).abs() > CONVERGENCE_BAND {
            break;
        }
        first = i;
    }
    Some(points[first].0)
}

/// Reads a `drs` training folder (`checkpoint.json`, `validation_curve.csv`,
/// `training_curve.csv`).
pub fn read_training(folder: &Path) -> Result<TrainingFacts, ScalingError> {
    let sidecar_path = folder.join("checkpoint.json");
    let meta = read_json(&sidecar_path)?;
    let bad = |file: &Path, detail: String| ScalingError::Format {
        file: file.display().to_string(),
        detail,
    };
    if meta["kind"] != "drs" {
        return Err(bad(
            &sidecar_path,
            "not a DRS checkpoint sidecar (kind is not \"drs\")".into(),
        ));
    }
    let t = &meta["training"];
    let read_csv = |name: &str| -> Result<Vec<BTreeMap<String, String>>, ScalingError> {
        let path = folder.join(name);
        let text = std::fs::read_to_string(&path).map_err(|source| ScalingError::Io {
            file: path.display().to_string(),
            source,
        })?;
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
        Ok(lines
            .map(|l| {
                header
                    .iter()
                    .map(|h| h.to_string())
                    .zip(l.split(',').map(str::to_string))
                    .collect()
            })
            .collect())
    };
    let number = |row: &BTreeMap<String, String>, key: &str| row.get(key).and_then(|v| v.parse::<f64>().ok());
    // the validation reward per point: the mean over its scenarios
    let mut by_point: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for row in read_csv("validation_curve.csv")? {
        if let (Some(after), Some(r)) = (number(&row, "after_episodes"), number(&row, "reward_mean")) {
            by_point.entry(after as u64).or_default().push(r);
        }
    }
    let points: Vec<(u64, f64)> = by_point
        .into_iter()
        .map(|(k, v)| (k, v.iter().sum::<f64>() / v.len() as f64))
        .collect();
    let curve = read_csv("training_curve.csv")?;
    let converged = converged_at(&points).map(|episodes| {
        // the rows of the first `episodes` episodes
        let done: Vec<&BTreeMap<String, String>> = curve
            .iter()
            .filter(|r| number(r, "episode").is_some_and(|e| (e as u64) < episodes))
            .collect();
        Converged {
            episodes,
            transitions: done.iter().filter_map(|r| number(r, "transitions")).sum::<f64>() as u64,
            wall_seconds: done.iter().filter_map(|r| number(r, "wall_s")).fold(0.0, f64::max),
        }
    });
    Ok(TrainingFacts {
        folder: folder.display().to_string(),
        arm: meta["reward"].as_str().unwrap_or("drs").to_string(),
        nodes: meta["nodes"].as_u64().unwrap_or(0) as usize,
        parameters: meta["parameters"].as_u64().unwrap_or(0),
        episodes: t["episodes"].as_u64().unwrap_or(0),
        transitions: t["transitions"].as_u64().unwrap_or(0),
        wall_seconds: t["wall_seconds"].as_f64().unwrap_or(f64::NAN),
        peak_rss_bytes: t["peak_rss_bytes"].as_u64(),
        converged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convergence_is_the_first_point_after_which_the_curve_stays_in_the_band() {
        let pts = [
            (0, -0.9),
            (10, -0.5),
            (20, -0.41),
            (30, -0.40),
            (40, -0.39),
            (50, -0.40),
        ];
        assert_eq!(converged_at(&pts), Some(20));
        // a late excursion moves it past the excursion
        let pts = [
            (0, -0.9),
            (10, -0.40),
            (20, -0.5),
            (30, -0.40),
            (40, -0.40),
            (50, -0.40),
        ];
        assert_eq!(converged_at(&pts), Some(30));
        assert_eq!(converged_at(&pts[..2]), None);
    }
}
