//! A run folder (or several of the same scenario) read back from disk:
//! its manifest, and every run's records, read once into the run's series
//! and metrics.
//!
//! What is kept of a run is bounded by one run's needs, not by its size:
//! every folder's manifest is read first, for the statistics seed, so that
//! each run's correlations are computed as it is read and its per-pod pairs
//! let go; and only each arm's first seed keeps its node and cluster
//! samples, the ones the plots draw. Thousands of runs then fit in memory.

use super::layout::{INCOMPLETE_MARKER, MANIFEST_FILE, RECORDS_FILE, RUNS_DIR, run_dir, seed_of_dir_name};
use super::manifest_check::{self, FolderArmFacts, Manifest};
use crate::claims::catalogue::{ClaimUse, uses_of};
use crate::metrics::{MetricsError, RunMetrics};
use crate::report::ReportError;
use crate::series::RunSeries;
use crate::summary::{RunCorrelations, RunResult, Summary};
use schedlab_core::rng::{derive_seed, purpose};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// report on an unfinished folder's finished runs instead of refusing;
    /// every output then says "INCOMPLETE: n of m runs"
    pub allow_incomplete: bool,
}

/// One run whose records were read to the End record.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    pub arm: String,
    pub seed: u64,
    pub records: PathBuf,
    /// what its folder's manifest says about its arm; `None` when it says
    /// nothing (a folder written before arm facts): unknown
    pub facts: Option<FolderArmFacts>,
    /// everything the reports take from the records, from one reading of
    /// them (see the module's note for what is let go)
    pub series: std::sync::Arc<RunSeries>,
    /// computed as the run was read, with the statistics seed of the
    /// folders it was read with
    pub correlations: RunCorrelations,
}

impl LoadedRun {
    pub fn metrics(&self) -> &RunMetrics {
        &self.series.metrics
    }
    /// The training run of the arm's checkpoint, when its folder names one.
    pub fn training_run(&self) -> Option<&str> {
        self.facts.as_ref().and_then(|f| f.training_run.as_deref())
    }
}

/// A run the manifest promises that could not be used (only with
/// [`LoadOptions::allow_incomplete`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRun {
    pub arm: String,
    pub seed: u64,
    /// as [`LoadedRun::training_run`]
    pub training_run: Option<String>,
    /// why, naming the file (and line)
    pub reason: String,
}

/// What a report says about each folder it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderFacts {
    pub dir: PathBuf,
    pub git_revision: Option<String>,
    /// the manifest says complete and there is no INCOMPLETE marker
    pub complete: bool,
}

/// One or more run folders of the same scenario, loaded.
#[derive(Debug, Clone)]
pub struct RunFolderData {
    pub scenario: String,
    /// the scenario with its parameters substituted, as the manifest holds it
    pub resolved_scenario: serde_json::Value,
    /// the claims the scenario declares it tests, and in which role
    /// (`resolved_scenario.claims`)
    pub claims: Vec<ClaimUse>,
    pub backend: String,
    /// in the first folder's order (its first arm is the reference), then
    /// arms only later folders have
    pub arms: Vec<String>,
    /// every seed of any folder, ascending
    pub seeds: Vec<u64>,
    pub folders: Vec<FolderFacts>,
    /// in arm order, then seed order
    pub runs: Vec<LoadedRun>,
    pub skipped: Vec<SkippedRun>,
}

impl RunFolderData {
    /// Loads one complete run folder; anything missing or damaged is an error.
    pub fn load(dir: &Path) -> crate::Result<RunFolderData> {
        Self::load_with(dir, LoadOptions::default())
    }

    pub fn load_with(dir: &Path, options: LoadOptions) -> crate::Result<RunFolderData> {
        Self::load_many(&[dir.to_path_buf()], options)
    }

    /// Loads and merges folders of one scenario (equal resolved scenarios
    /// and backends); a run (arm, seed) may appear in one folder only.
    pub fn load_many(dirs: &[PathBuf], options: LoadOptions) -> crate::Result<RunFolderData> {
        let heads = dirs
            .iter()
            .map(|dir| read_head(dir, options))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(load_group(heads, options)?)
    }

    /// Loads folders of one or more scenarios: grouped by scenario name,
    /// each group merged as [`RunFolderData::load_many`] merges (so folders
    /// of one name with different parameters are refused), the groups in
    /// the order of their names.
    pub fn load_grouped(dirs: &[PathBuf], options: LoadOptions) -> crate::Result<Vec<RunFolderData>> {
        let mut groups: Vec<(String, Vec<FolderHead>)> = Vec::new();
        for dir in dirs {
            let next = read_head(dir, options)?;
            match groups.iter_mut().find(|(name, _)| *name == next.manifest.scenario) {
                Some((_, list)) => list.push(next),
                None => groups.push((next.manifest.scenario.clone(), vec![next])),
            }
        }
        if groups.is_empty() {
            return Err(ReportError::NoFolders.into());
        }
        groups.sort_by(|a, b| a.0.cmp(&b.0));
        let merged: Result<Vec<_>, ReportError> = groups
            .into_iter()
            .map(|(_, heads)| load_group(heads, options))
            .collect();
        Ok(merged?)
    }

    /// Runs the manifests promise.
    pub fn expected_runs(&self) -> usize {
        self.runs.len() + self.skipped.len()
    }

    pub fn is_incomplete(&self) -> bool {
        !self.skipped.is_empty() || self.folders.iter().any(|f| !f.complete)
    }

    /// "INCOMPLETE: 3 of 4 runs", for every output of a partial report.
    pub fn incomplete_banner(&self) -> Option<String> {
        self.is_incomplete().then(|| {
            let unfinished = self.folders.iter().filter(|f| !f.complete).count();
            let marked = if unfinished > 0 {
                format!(
                    "; {unfinished} of {} run folder(s) marked unfinished",
                    self.folders.len()
                )
            } else {
                String::new()
            };
            format!(
                "INCOMPLETE: {} of {} runs{marked}",
                self.runs.len(),
                self.expected_runs()
            )
        })
    }

    /// The statistics seed: derived from the lowest seed, as `schedlab
    /// scenario` does, so a rebuilt summary equals the original one.
    pub fn stats_seed(&self) -> u64 {
        stats_seed_of(self.seeds.first().copied())
    }

    pub fn run_results(&self) -> Vec<RunResult> {
        self.runs
            .iter()
            .map(|r| RunResult {
                arm: r.arm.clone(),
                seed: r.seed,
                training_run: r.training_run().map(str::to_string),
                metrics: r.metrics().clone(),
                correlations: Some(r.correlations.clone()),
            })
            .collect()
    }

    pub fn summary(&self) -> Summary {
        Summary::new(&self.scenario, self.run_results(), self.stats_seed())
    }

    /// The distinct git revisions of the folders, in folder order.
    pub fn git_revisions(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for rev in self.folders.iter().filter_map(|f| f.git_revision.as_deref()) {
            if !out.contains(&rev) {
                out.push(rev);
            }
        }
        out
    }
}

/// Checks that the run folder at `dir` is complete and whole without reading
/// its records' lines: its manifest says complete, no run is missing, and
/// every run's records have the digest its run manifest recorded. What a
/// sweep checks before it accepts a cell's folder.
pub fn verify_complete(dir: &Path) -> crate::Result<()> {
    let head = read_head(
        dir,
        LoadOptions {
            allow_incomplete: false,
        },
    )?;
    for arm in &head.manifest.arms {
        for &seed in &head.manifest.seeds {
            let run_dir = run_dir(dir, arm, seed);
            let path = run_dir.join(RECORDS_FILE);
            if !path.is_file() {
                return Err(ReportError::MissingRecords {
                    path,
                    arm: arm.clone(),
                    seed,
                }
                .into());
            }
            manifest_check::check_run(&run_dir, &path, &head.manifest.scenario, arm, seed)?;
        }
    }
    Ok(())
}

/// Merges loaded folders of one scenario, in the order given.
fn merge_all(loaded: Vec<(PathBuf, RunFolderData)>) -> Result<RunFolderData, ReportError> {
    let mut merged: Option<(PathBuf, RunFolderData)> = None;
    for (dir, next) in loaded {
        merged = Some(match merged {
            None => (dir, next),
            Some((first_dir, mut data)) => {
                merge(&mut data, &first_dir, next, &dir)?;
                (first_dir, data)
            }
        });
    }
    let (_, mut data) = merged.ok_or(ReportError::NoFolders)?;
    let arms = data.arms.clone();
    let arm_index = |a: &str| arms.iter().position(|x| x == a).unwrap_or(usize::MAX);
    data.runs.sort_by_key(|x| (arm_index(&x.arm), x.seed));
    data.skipped.sort_by_key(|x| (arm_index(&x.arm), x.seed));
    data.seeds.sort_unstable();
    data.seeds.dedup();
    // each arm's first run (its lowest seed, the first of several training runs) keeps its samples
    let mut previous_arm: Option<String> = None;
    for run in &mut data.runs {
        if previous_arm.as_deref() == Some(run.arm.as_str()) {
            if !run.series.node_points.is_empty() || !run.series.cluster.is_empty() {
                std::sync::Arc::make_mut(&mut run.series).shed_samples();
            }
        } else {
            previous_arm = Some(run.arm.clone());
        }
    }
    Ok(data)
}

/// The statistics seed of runs whose lowest seed is `lowest`: derived from
/// it, as `schedlab scenario` does, so a rebuilt summary equals the original.
fn stats_seed_of(lowest: Option<u64>) -> u64 {
    derive_seed(lowest.unwrap_or(0), &[purpose::STATISTICS])
}

/// A folder's manifest, read and checked, before its runs are read.
struct FolderHead {
    dir: PathBuf,
    manifest: Manifest,
    claims: Vec<ClaimUse>,
    complete: bool,
}

/// Reads the runs of folders of one scenario and merges them, with the
/// statistics seed of all their seeds.
fn load_group(heads: Vec<FolderHead>, options: LoadOptions) -> Result<RunFolderData, ReportError> {
    let stats_seed = stats_seed_of(heads.iter().flat_map(|h| h.manifest.seeds.iter().copied()).min());
    let mut loaded = Vec::new();
    for head in heads {
        let dir = head.dir.clone();
        loaded.push((dir, load_runs(head, options, stats_seed)?));
    }
    merge_all(loaded)
}

fn read_head(dir: &Path, options: LoadOptions) -> Result<FolderHead, ReportError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest: Manifest = manifest_check::read(&manifest_path)?;
    let marker = dir.join(INCOMPLETE_MARKER).exists();
    let complete = manifest.complete && !marker;
    if !complete && !options.allow_incomplete {
        let reason = if marker {
            format!("{INCOMPLETE_MARKER} marker present: interrupted, failed or still running")
        } else {
            "its manifest says \"complete\": false".to_string()
        };
        return Err(ReportError::Incomplete {
            dir: dir.to_path_buf(),
            reason,
        });
    }
    refuse_unlisted_runs(dir, &manifest.arms, &manifest.seeds)?;
    let claims = uses_of(&manifest.resolved_scenario).map_err(|(field, why)| ReportError::ManifestInvalid {
        path: manifest_path.clone(),
        reason: format!("field resolved_scenario.{field}: {why}"),
    })?;
    Ok(FolderHead {
        dir: dir.to_path_buf(),
        manifest,
        claims,
        complete,
    })
}

/// Reads the runs of a folder whose manifest `head` holds, each run's
/// correlations drawn from `stats_seed`.
fn load_runs(head: FolderHead, options: LoadOptions, stats_seed: u64) -> Result<RunFolderData, ReportError> {
    let FolderHead {
        dir,
        manifest,
        claims,
        complete,
    } = head;
    let dir = dir.as_path();
    let facts_of = |arm: &str| manifest.arm_facts.as_ref().and_then(|f| f.get(arm)).cloned();
    let mut runs: Vec<LoadedRun> = Vec::new();
    let mut skipped = Vec::new();
    for arm in &manifest.arms {
        // the arm's run that keeps its samples so far: the lowest seed read
        let mut sampled: Option<usize> = None;
        for &seed in &manifest.seeds {
            let run_dir = run_dir(dir, arm, seed);
            let path = run_dir.join(RECORDS_FILE);
            let loaded = load_run(&path, arm, seed).and_then(|series| {
                manifest_check::check_run(&run_dir, &path, &manifest.scenario, arm, seed).map(|()| series)
            });
            match loaded {
                Ok(mut series) => {
                    let correlations = RunCorrelations::of(&series.metrics, seed, stats_seed);
                    series.shed_pod_outcomes();
                    match sampled {
                        Some(i) if runs[i].seed <= seed => series.shed_samples(),
                        _ => {
                            if let Some(i) = sampled {
                                std::sync::Arc::make_mut(&mut runs[i].series).shed_samples();
                            }
                            sampled = Some(runs.len());
                        }
                    }
                    runs.push(LoadedRun {
                        arm: arm.clone(),
                        seed,
                        records: path,
                        facts: facts_of(arm),
                        series: std::sync::Arc::new(series),
                        correlations,
                    });
                }
                Err(err) if options.allow_incomplete && is_partial(&err) => {
                    tracing::warn!(%arm, seed, "left out: {err}");
                    skipped.push(SkippedRun {
                        arm: arm.clone(),
                        seed,
                        training_run: facts_of(arm).and_then(|f| f.training_run),
                        reason: err.to_string(),
                    });
                }
                Err(err) => return Err(err),
            }
        }
    }
    if runs.is_empty() {
        return Err(ReportError::NoRuns { dir: dir.to_path_buf() });
    }
    Ok(RunFolderData {
        scenario: manifest.scenario,
        resolved_scenario: manifest.resolved_scenario,
        claims,
        backend: manifest.backend,
        arms: manifest.arms,
        seeds: manifest.seeds,
        folders: vec![FolderFacts {
            dir: dir.to_path_buf(),
            git_revision: manifest.git_revision,
            complete,
        }],
        runs,
        skipped,
    })
}

/// The run's series and metrics, from one reading of its records.
fn load_run(path: &Path, arm: &str, seed: u64) -> Result<RunSeries, ReportError> {
    if !path.is_file() {
        return Err(ReportError::MissingRecords {
            path: path.to_path_buf(),
            arm: arm.to_string(),
            seed,
        });
    }
    Ok(crate::series::from_file(path)?)
}

/// Refuses a folder holding runs its manifest does not list: an arm folder
/// of another arm, or a seed folder of a seed not in its list.
fn refuse_unlisted_runs(dir: &Path, arms: &[String], seeds: &[u64]) -> Result<(), ReportError> {
    let Ok(entries) = std::fs::read_dir(dir.join(RUNS_DIR)) else {
        return Ok(());
    };
    let folders = |entries: std::fs::ReadDir| -> Vec<(String, PathBuf)> {
        let mut out: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        out.sort();
        out
    };
    for (arm, arm_dir) in folders(entries) {
        if !arms.contains(&arm) {
            return Err(ReportError::UnlistedRun { path: arm_dir });
        }
        let Ok(runs) = std::fs::read_dir(&arm_dir) else {
            continue;
        };
        for (name, run_dir) in folders(runs) {
            let listed = seed_of_dir_name(&name).is_some_and(|seed| seeds.contains(&seed));
            if !listed {
                return Err(ReportError::UnlistedRun { path: run_dir });
            }
        }
    }
    Ok(())
}

/// What an interrupted run leaves: no records yet, a last line cut short,
/// no End record, no run manifest yet. Inconsistent records are damage,
/// never skipped.
fn is_partial(err: &ReportError) -> bool {
    matches!(
        err,
        ReportError::MissingRecords { .. }
            | ReportError::MissingRunManifest { .. }
            | ReportError::Metrics(MetricsError::Incomplete { .. })
            | ReportError::Metrics(MetricsError::Records(crate::records::RecordsError::Parse { .. }))
    )
}

fn merge(into: &mut RunFolderData, into_dir: &Path, next: RunFolderData, next_dir: &Path) -> Result<(), ReportError> {
    if into.resolved_scenario != next.resolved_scenario || into.scenario != next.scenario {
        return Err(ReportError::DifferentScenarios {
            a: into_dir.to_path_buf(),
            b: next_dir.to_path_buf(),
            a_name: into.scenario.clone(),
            b_name: next.scenario,
        });
    }
    if into.backend != next.backend {
        return Err(ReportError::DifferentBackends {
            a: into_dir.to_path_buf(),
            b: next_dir.to_path_buf(),
            a_backend: into.backend.clone(),
            b_backend: next.backend,
        });
    }
    // One arm may come from several training runs (checkpoints), each its
    // own invocation over the same seeds: a run is (arm, training run, seed).
    let taken = |arm: &str, run: Option<&str>, seed: u64| {
        into.runs
            .iter()
            .any(|r| r.arm == arm && r.training_run() == run && r.seed == seed)
            || into
                .skipped
                .iter()
                .any(|r| r.arm == arm && r.training_run.as_deref() == run && r.seed == seed)
    };
    let dup = next
        .runs
        .iter()
        .map(|r| (&r.arm, r.training_run(), r.seed))
        .chain(next.skipped.iter().map(|r| (&r.arm, r.training_run.as_deref(), r.seed)))
        .find(|(arm, run, seed)| taken(arm, *run, *seed));
    if let Some((arm, _, seed)) = dup {
        // name the folder holding the first copy
        let first = into
            .folders
            .iter()
            .find(|f| run_dir(&f.dir, arm, seed).exists())
            .map_or_else(|| into_dir.to_path_buf(), |f| f.dir.clone());
        return Err(ReportError::DuplicateRun {
            arm: arm.clone(),
            seed,
            a: first,
            b: next_dir.to_path_buf(),
        });
    }
    for arm in next.arms {
        if !into.arms.contains(&arm) {
            into.arms.push(arm);
        }
    }
    into.seeds.extend(next.seeds);
    into.folders.extend(next.folders);
    into.runs.extend(next.runs);
    into.skipped.extend(next.skipped);
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::test_records::synthetic_run;
    use schedlab_core::Record;
    use std::fs;

    fn write_records(path: &Path, records: &[Record]) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text: String = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        fs::write(path, text).unwrap();
    }

    /// A folder as `schedlab scenario` leaves it.
    pub(crate) fn write_folder(dir: &Path, arms: &[&str], seeds: &[u64], nodes: u64) {
        write_folder_of(dir, "synthetic", arms, seeds, nodes);
    }

    /// [`write_folder`] of a scenario called `scenario`.
    pub(crate) fn write_folder_of(dir: &Path, scenario: &str, arms: &[&str], seeds: &[u64], nodes: u64) {
        write_folder_declaring(dir, scenario, serde_json::Value::Null, arms, seeds, nodes);
    }

    /// [`write_folder_of`] whose scenario declares `claims` (its
    /// `resolved_scenario.claims`; null: none).
    pub(crate) fn write_folder_declaring(
        dir: &Path,
        scenario: &str,
        claims: serde_json::Value,
        arms: &[&str],
        seeds: &[u64],
        nodes: u64,
    ) {
        let manifest = serde_json::json!({
            "scenario": scenario,
            "resolved_scenario": {"nodes": nodes, "claims": claims},
            "arms": arms,
            "seeds": seeds,
            "backend": "sim",
            "git_revision": "abc123",
            "complete": true,
        });
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join(MANIFEST_FILE), manifest.to_string()).unwrap();
        for (i, arm) in arms.iter().enumerate() {
            for &seed in seeds {
                let path = dir
                    .join("runs")
                    .join(arm)
                    .join(format!("seed-{seed}"))
                    .join(RECORDS_FILE);
                write_records(&path, &synthetic_run(seed, i as u32));
                write_run_manifest(&path, scenario, arm, seed);
            }
        }
    }

    /// The run's manifest beside `records`, naming its run and its records' digest.
    fn write_run_manifest(records: &Path, scenario: &str, arm: &str, seed: u64) {
        let run = serde_json::json!({
            "manifest_version": 1,
            "scenario": scenario,
            "arm": arm,
            "seed": seed,
            "records": RECORDS_FILE,
            "records_sha256": schedlab_core::digest::file_sha256(records).unwrap(),
        });
        fs::write(records.with_file_name("manifest.json"), run.to_string()).unwrap();
    }

    #[test]
    fn a_folder_holds_exactly_the_runs_its_manifest_names() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write_folder(dir, &["default", "binpack"], &[1, 2], 4);
        assert!(RunFolderData::load(dir).is_ok());
        let one = records_path(dir, "default", 1);
        let two = records_path(dir, "default", 2);
        let original = fs::read(&two).unwrap();

        // records of another run copied over this one's: refused by the digest
        fs::copy(&one, &two).unwrap();
        let err = RunFolderData::load(dir).unwrap_err();
        assert!(
            matches!(err, crate::Error::Report(ReportError::RecordsDigest { .. })),
            "{err}"
        );
        assert!(
            err.to_string().contains("seed-2") && err.to_string().contains("SHA-256"),
            "{err}"
        );
        fs::write(&two, &original).unwrap();

        // a run manifest of another run, or garbage
        let run_manifest = two.with_file_name("manifest.json");
        let kept = fs::read_to_string(&run_manifest).unwrap();
        fs::write(&run_manifest, kept.replace("\"seed\":2", "\"seed\":7")).unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        assert!(err.contains("seed 7") && err.contains("copied from elsewhere"), "{err}");
        fs::write(&run_manifest, "[1, 2").unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        assert!(
            err.contains("seed-2/manifest.json") && err.contains("not a run manifest"),
            "{err}"
        );
        // serde's words for a Rust struct never reach the user
        for (text, words) in [
            ("[]", "holds a JSON array"),
            ("[\"a\"]", "holds a JSON array"),
            (
                r#"{"manifest_version": "one"}"#,
                "field `manifest_version`: invalid type: string",
            ),
        ] {
            fs::write(&run_manifest, text).unwrap();
            let err = RunFolderData::load(dir).unwrap_err().to_string();
            assert!(err.contains(words), "{text}: {err}");
            assert!(!err.contains("struct") && !err.contains("elements"), "{text}: {err}");
        }
        fs::write(&run_manifest, &kept).unwrap();
        assert!(RunFolderData::load(dir).is_ok());

        // a seed taken out of the folder's list, an arm it does not name
        let manifest_path = dir.join(MANIFEST_FILE);
        let folder_manifest = fs::read_to_string(&manifest_path).unwrap();
        let mut m: serde_json::Value = serde_json::from_str(&folder_manifest).unwrap();
        m["seeds"] = serde_json::json!([1]);
        fs::write(&manifest_path, m.to_string()).unwrap();
        let err = RunFolderData::load(dir).unwrap_err();
        assert!(
            matches!(&err, crate::Error::Report(ReportError::UnlistedRun { path }) if path.ends_with("seed-2")),
            "{err}"
        );
        m["seeds"] = serde_json::json!([1, 2]);
        m["arms"] = serde_json::json!(["default"]);
        fs::write(&manifest_path, m.to_string()).unwrap();
        let err = RunFolderData::load(dir).unwrap_err();
        assert!(
            matches!(&err, crate::Error::Report(ReportError::UnlistedRun { path }) if path.ends_with("runs/binpack")),
            "{err}"
        );

        // the folder's manifest as an array, or with a field of the wrong type
        fs::write(&manifest_path, "[1, 2, 3]").unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        assert!(err.contains("holds a JSON array") && !err.contains("struct"), "{err}");
        fs::write(
            &manifest_path,
            folder_manifest.replacen("\"seeds\":[", "\"seeds\":[\"x\",", 1),
        )
        .unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        assert!(err.contains("field `seeds[0]`"), "{err}");

        // a manifest version this build does not know
        m["arms"] = serde_json::json!(["default", "binpack"]);
        m["manifest_version"] = serde_json::json!(99);
        fs::write(&manifest_path, m.to_string()).unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        assert!(err.contains("manifest version 99"), "{err}");
        fs::write(&manifest_path, &folder_manifest).unwrap();
        assert!(RunFolderData::load(dir).is_ok());
    }

    fn records_path(dir: &Path, arm: &str, seed: u64) -> PathBuf {
        dir.join("runs")
            .join(arm)
            .join(format!("seed-{seed}"))
            .join(RECORDS_FILE)
    }

    #[test]
    fn loads_every_run_in_arm_then_seed_order() {
        let tmp = tempfile::tempdir().unwrap();
        write_folder(tmp.path(), &["default", "binpack"], &[2, 1], 4);
        let data = RunFolderData::load(tmp.path()).unwrap();
        let order: Vec<(&str, u64)> = data.runs.iter().map(|r| (r.arm.as_str(), r.seed)).collect();
        assert_eq!(order, [("default", 1), ("default", 2), ("binpack", 1), ("binpack", 2)]);
        assert_eq!(data.seeds, [1, 2]);
        assert!(!data.is_incomplete() && data.incomplete_banner().is_none());
        assert_eq!(data.git_revisions(), ["abc123"]);
        let summary = data.summary();
        assert_eq!(summary.arms()[0].arm, "default");
        assert_eq!(summary.stats_seed(), derive_seed(1, &[purpose::STATISTICS]));
    }

    /// What a run keeps once read does not grow with its samples or pods: only each arm's first run
    /// keeps its samples, none its per-pod pairs, and the correlations are those the full run gives
    /// with the statistics seed of every folder read together.
    #[test]
    fn a_read_run_keeps_its_samples_only_when_it_is_its_arms_first() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        write_folder(&a, &["default", "binpack"], &[3, 1, 2], 4);
        // a later folder with a lower seed: its run becomes default's first
        write_folder(&b, &["default"], &[0], 4);
        let data = RunFolderData::load_many(&[a.clone(), b], LoadOptions::default()).unwrap();
        assert_eq!(data.stats_seed(), derive_seed(0, &[purpose::STATISTICS]));
        let sampled: Vec<(&str, u64)> = data
            .runs
            .iter()
            .filter(|r| !r.series.node_points.is_empty() || !r.series.cluster.is_empty() || !r.series.nodes.is_empty())
            .map(|r| (r.arm.as_str(), r.seed))
            .collect();
        assert_eq!(sampled, [("default", 0), ("binpack", 1)]);
        for run in &data.runs {
            let full = crate::series::from_file(&run.records).unwrap();
            assert!(!full.node_points.is_empty() && !full.pod_outcomes().is_empty());
            assert!(run.series.pod_outcomes().is_empty(), "{} {}", run.arm, run.seed);
            assert_eq!(run.series.outcome_counts, full.outcome_counts);
            assert_eq!(run.series.restarts, full.restarts);
            let expected = RunCorrelations::of(&full.metrics, run.seed, data.stats_seed());
            assert_eq!(format!("{:?}", run.correlations), format!("{expected:?}"));
        }
        // the summary takes them, and equals one built from the full runs
        let full_runs: Vec<RunResult> = data
            .runs
            .iter()
            .map(|r| RunResult {
                arm: r.arm.clone(),
                seed: r.seed,
                training_run: None,
                metrics: crate::series::from_file(&r.records).unwrap().metrics,
                correlations: None,
            })
            .collect();
        let from_full = Summary::new(&data.scenario, full_runs, data.stats_seed());
        assert_eq!(data.summary().to_json(), from_full.to_json());
    }

    #[test]
    fn damaged_folders_are_refused_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write_folder(dir, &["default"], &[1, 2], 4);

        // a records file cut before its End record
        let path = records_path(dir, "default", 2);
        let text = fs::read_to_string(&path).unwrap();
        let cut: String = text
            .lines()
            .take(text.lines().count() - 1)
            .map(|l| format!("{l}\n"))
            .collect();
        fs::write(&path, &cut).unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        assert!(err.contains("seed-2") && err.contains("End"), "{err}");

        // a malformed line: named with its line number
        fs::write(&path, format!("{cut}{{not json\n")).unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        let line = cut.lines().count() + 1;
        assert!(err.contains("seed-2") && err.contains(&format!("line {line}")), "{err}");

        // a missing records file
        fs::remove_file(&path).unwrap();
        let err = RunFolderData::load(dir).unwrap_err();
        assert!(
            matches!(err, crate::Error::Report(ReportError::MissingRecords { seed: 2, .. })),
            "{err}"
        );

        // garbled and missing manifests
        fs::write(dir.join(MANIFEST_FILE), "{\"scenario\": ").unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        assert!(err.contains("manifest.json") && err.contains("line 1"), "{err}");
        fs::remove_file(dir.join(MANIFEST_FILE)).unwrap();
        let err = RunFolderData::load(dir).unwrap_err().to_string();
        assert!(err.contains("manifest.json"), "{err}");
    }

    #[test]
    fn an_incomplete_folder_is_refused_unless_allowed_and_then_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write_folder(dir, &["default", "binpack"], &[1, 2], 4);
        fs::write(dir.join(INCOMPLETE_MARKER), "unfinished\n").unwrap();
        let path = records_path(dir, "binpack", 2);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, &text[..text.len() / 2]).unwrap();

        let err = RunFolderData::load(dir).unwrap_err();
        assert!(
            matches!(err, crate::Error::Report(ReportError::Incomplete { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("--allow-incomplete"), "{err}");

        let data = RunFolderData::load_with(dir, LoadOptions { allow_incomplete: true }).unwrap();
        assert_eq!(data.runs.len(), 3);
        assert_eq!(data.skipped.len(), 1);
        assert!(data.skipped[0].reason.contains("seed-2"), "{:?}", data.skipped);
        let banner = data.incomplete_banner().unwrap();
        assert!(banner.starts_with("INCOMPLETE: 3 of 4 runs"), "{banner}");
    }

    /// Sets the folder manifest's `arm_facts`.
    fn set_arm_facts(dir: &Path, facts: serde_json::Value) {
        let path = dir.join(MANIFEST_FILE);
        let mut m: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        m["arm_facts"] = facts;
        fs::write(&path, m.to_string()).unwrap();
    }

    #[test]
    fn a_scenarios_claims_are_read_and_an_unknown_one_names_the_manifest_field_and_value() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let claims = serde_json::json!([{"claim": "restraint", "role": "churn-faults"}]);
        write_folder_declaring(dir, "mine", claims, &["default"], &[1], 4);
        let data = RunFolderData::load(dir).unwrap();
        assert_eq!(data.claims.len(), 1);
        assert_eq!(data.claims[0].role.as_str(), "churn-faults");

        let bad = tmp.path().join("bad");
        let claims =
            serde_json::json!([{"claim": "restraint", "role": "churn-faults"}, {"claim": "speed", "role": "stress"}]);
        write_folder_declaring(&bad, "mine", claims, &["default"], &[1], 4);
        let err = RunFolderData::load(&bad).unwrap_err();
        assert!(err.is_input_error());
        let text = err.to_string();
        assert!(
            text.contains(&bad.join(MANIFEST_FILE).display().to_string())
                && text.contains("resolved_scenario.claims[1].claim")
                && text.contains("`speed`"),
            "{text}"
        );
        let role = tmp.path().join("role");
        write_folder_declaring(
            &role,
            "mine",
            serde_json::json!([{"claim": "packing", "role": "stress"}]),
            &["default"],
            &[1],
            4,
        );
        let text = RunFolderData::load(&role).unwrap_err().to_string();
        assert!(
            text.contains("resolved_scenario.claims[0].role") && text.contains("stress"),
            "{text}"
        );
    }

    #[test]
    fn several_training_runs_of_one_arm_merge_and_carry_their_facts() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("c"));
        for (dir, run) in [(&a, "seed:1000"), (&b, "seed:2000"), (&c, "seed:2000")] {
            write_folder(dir, &["default", "agmarl"], &[1, 2], 4);
            set_arm_facts(
                dir,
                serde_json::json!({
                    "default": {"preempts": true, "control": null, "variant": null, "training_run": null},
                    "agmarl": {"preempts": true, "control": null, "variant": "agmarl", "training_run": run},
                }),
            );
        }
        // default's runs are the same in a and b: refused, as before
        let err = RunFolderData::load_many(&[a.clone(), b.clone()], LoadOptions::default()).unwrap_err();
        assert!(
            matches!(err, crate::Error::Report(ReportError::DuplicateRun { .. })),
            "{err}"
        );
        // b without default: agmarl's seeds 1 and 2 of another training run merge
        let manifest = b.join(MANIFEST_FILE);
        let mut m: serde_json::Value = serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
        m["arms"] = serde_json::json!(["agmarl"]);
        fs::write(&manifest, m.to_string()).unwrap();
        fs::remove_dir_all(b.join("runs/default")).unwrap();
        let data = RunFolderData::load_many(&[a.clone(), b.clone()], LoadOptions::default()).unwrap();
        let runs: Vec<(&str, Option<&str>, u64)> = data
            .runs
            .iter()
            .map(|r| (r.arm.as_str(), r.training_run(), r.seed))
            .collect();
        assert_eq!(
            runs,
            [
                ("default", None, 1),
                ("default", None, 2),
                ("agmarl", Some("seed:1000"), 1),
                ("agmarl", Some("seed:2000"), 1),
                ("agmarl", Some("seed:1000"), 2),
                ("agmarl", Some("seed:2000"), 2),
            ]
        );
        assert!(
            data.runs
                .iter()
                .all(|r| r.facts.as_ref().and_then(|f| f.preempts) == Some(true))
        );
        let summary = data.summary();
        let agmarl = summary.arm("agmarl").unwrap();
        assert_eq!(agmarl.runs.len(), 4);
        assert_eq!(
            agmarl
                .runs
                .iter()
                .filter(|r| r.training_run.as_deref() == Some("seed:2000"))
                .count(),
            2
        );
        // the same training run twice is the same run twice: refused
        let err = RunFolderData::load_many(&[b.clone(), c.clone()], LoadOptions::default()).unwrap_err();
        assert!(
            matches!(err, crate::Error::Report(ReportError::DuplicateRun { .. })),
            "{err}"
        );
        // a folder without arm facts: unknown
        write_folder(&tmp.path().join("old"), &["default"], &[1], 4);
        let old = RunFolderData::load(&tmp.path().join("old")).unwrap();
        assert!(old.runs[0].facts.is_none() && old.runs[0].training_run().is_none());
    }

    #[test]
    fn folders_of_one_scenario_merge_and_others_do_not() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c, d) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
            tmp.path().join("d"),
        );
        write_folder(&a, &["default"], &[1, 2], 4);
        write_folder(&b, &["default", "binpack"], &[3], 4);
        write_folder(&c, &["default"], &[1], 8);
        write_folder(&d, &["default"], &[2], 4);
        let data = RunFolderData::load_many(&[a.clone(), b.clone()], LoadOptions::default()).unwrap();
        assert_eq!(data.arms, ["default", "binpack"]);
        assert_eq!(data.seeds, [1, 2, 3]);
        assert_eq!(data.runs.len(), 4);

        let err = RunFolderData::load_many(&[a.clone(), c.clone()], LoadOptions::default()).unwrap_err();
        let text = err.to_string();
        assert!(matches!(
            err,
            crate::Error::Report(ReportError::DifferentScenarios { .. })
        ));
        assert!(
            text.contains(&a.display().to_string()) && text.contains(&c.display().to_string()),
            "{text}"
        );

        let err = RunFolderData::load_many(&[a.clone(), d], LoadOptions::default()).unwrap_err();
        assert!(
            matches!(err, crate::Error::Report(ReportError::DuplicateRun { seed: 2, .. })),
            "{err}"
        );
        assert!(matches!(
            RunFolderData::load_many(&[], LoadOptions::default()),
            Err(crate::Error::Report(ReportError::NoFolders))
        ));
    }
}
