//! What both trainers (`schedlab train` of AGMARL and of the DRS foil)
//! share: the default output folder, the progress bar and the common part
//! of a checkpoint sidecar's `training` record.

use crate::cli::TrainArgs;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// What every training run records in its sidecar's `training` object: the
/// scenarios, seeds and schedule, the episodes and environments, the build,
/// the command line, when it ran and its wall time; each trainer adds its own.
pub(crate) fn training_record(
    args: &TrainArgs,
    scenarios: &[workloads::Scenario],
    (episodes, envs, last_seed): (usize, usize, u64),
    started_at: jiff::Timestamp,
    wall: f64,
) -> serde_json::Map<String, serde_json::Value> {
    let build = crate::build_info::current();
    let record = serde_json::json!({
        "scenarios": scenarios.iter().map(|s| serde_json::json!({
            "name": s.name(),
            "origin": s.origin(),
            "params": s.params(),
        })).collect::<Vec<_>>(),
        "set": args.set,
        "seed": args.seed,
        "seeds": {"first": args.seed, "last": last_seed},
        "schedule": "episode e (from 0) plays scenarios[e mod len] with seed first + e",
        "episodes": episodes,
        "envs": envs,
        "schedlab_version": build.schedlab_version,
        "git_revision": build.git_revision,
        "command_line": std::env::args().collect::<Vec<_>>(),
        "started_at": started_at,
        "finished_at": jiff::Timestamp::now(),
        "wall_seconds": wall,
    });
    record.as_object().cloned().unwrap_or_default()
}

pub(crate) fn default_out() -> PathBuf {
    let now = jiff::Zoned::now();
    PathBuf::from("runs").join(format!("train-{}", now.strftime("%Y%m%d-%H%M%S")))
}

pub(crate) fn progress_bar(len: u64) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} episodes (eta {eta}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
