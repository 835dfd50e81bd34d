//! Where everything lives in a run folder. Every path of the format is made
//! here, so a writer and a reader cannot disagree about it.

use std::path::{Path, PathBuf};

/// The invocation manifest at a run folder's root: a folder holding it is a run folder.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The file whose presence marks an unfinished run folder.
pub const INCOMPLETE_MARKER: &str = "INCOMPLETE";
/// The folder of the runs, one folder per arm below it and one per seed below that.
pub const RUNS_DIR: &str = "runs";
/// A run's raw records, in runs/<arm>/seed-<n>/.
pub const RECORDS_FILE: &str = "records.jsonl";
/// A run's own manifest, beside its records.
pub const RUN_MANIFEST_FILE: &str = "manifest.json";
/// The report folder of a run folder, where `schedlab scenario` writes it and `schedlab report DIR` rebuilds it.
pub const REPORT_DIR: &str = "report";
/// The summaries at a run folder's root, beside the manifest.
pub const SUMMARY_CSV: &str = "summary.csv";
pub const SUMMARY_JSON: &str = "summary.json";
pub const SUMMARY_MD: &str = "report.md";

/// The folder of one arm's runs.
pub fn arm_dir(root: &Path, arm: &str) -> PathBuf {
    root.join(RUNS_DIR).join(arm)
}

/// The folder of the (arm, seed) run.
pub fn run_dir(root: &Path, arm: &str, seed: u64) -> PathBuf {
    arm_dir(root, arm).join(seed_dir_name(seed))
}

/// The name of a seed's folder below its arm's.
pub fn seed_dir_name(seed: u64) -> String {
    format!("seed-{seed}")
}

/// The seed a folder name below an arm's stands for, if it is a seed folder's name.
pub fn seed_of_dir_name(name: &str) -> Option<u64> {
    name.strip_prefix("seed-").and_then(|s| s.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_folder_name_reads_back_as_its_seed() {
        for seed in [0, 1, 999, u64::MAX] {
            assert_eq!(seed_of_dir_name(&seed_dir_name(seed)), Some(seed));
        }
        for name in ["seed-", "seed-x", "7", "seed--1"] {
            assert_eq!(seed_of_dir_name(name), None, "{name}");
        }
        assert_eq!(run_dir(Path::new("f"), "agmarl", 3), Path::new("f/runs/agmarl/seed-3"));
    }
}
