//! The end of a scenario invocation, once every run's records and manifest
//! are written: the runs are read back once, the summary is built once, and
//! from it the summaries at the folder's root and the report below it are
//! written; only then does the manifest say `complete` and the INCOMPLETE
//! marker go, in that order, so that a folder that looks complete has every
//! output. When anything fails (a full disk, an unwritable report folder)
//! or the process is stopped on the way, the folder stays INCOMPLETE.

use super::layout::{INCOMPLETE_MARKER, MANIFEST_FILE, REPORT_DIR, SUMMARY_CSV, SUMMARY_JSON, SUMMARY_MD};
use super::manifests::InvocationManifest;
use super::reader::{LoadOptions, RunFolderData};
use super::writer::{FolderError, RunFolder, write_atomic};
use crate::claims::DEFAULT_ARM;
use crate::report::{OutputFile, ReportError, render_report_with};
use crate::summary::Summary;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why a finished scenario's folder could not be completed. The runs'
/// records are kept; the folder stays INCOMPLETE.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    #[error("arm {arm} seed {seed} cannot be reported on: {reason}")]
    RunMissing { arm: String, seed: u64, reason: String },
    #[error("reading back the runs of {}: {error}", dir.display())]
    Read { dir: PathBuf, error: Box<crate::Error> },
    #[error("writing the report of {}: the runs' records are kept, but the folder stays INCOMPLETE: {error}", dir.display())]
    Report { dir: PathBuf, error: Box<FinishStep> },
}

/// The step of the report that failed.
#[derive(Debug, thiserror::Error)]
pub enum FinishStep {
    #[error(transparent)]
    Render(ReportError),
    #[error(transparent)]
    Write(crate::Error),
}

/// Completes `folder`, whose runs have all finished: the summaries at its
/// root and the report in `report/`, as `schedlab report DIR` would write it
/// on the complete folder; then `manifest` (with `finished_at`) says
/// complete and the marker goes. Returns the summary, for the terminal.
pub fn finish<C: Serialize>(
    folder: &RunFolder,
    manifest: &mut InvocationManifest<C>,
    finished_at: jiff::Timestamp,
) -> crate::Result<Summary> {
    finish_with(folder, manifest, finished_at, true)
}

/// [`finish`], with the report folder written or not (`report`): a sweep's cells leave it to the one report over
/// the sweep, which `schedlab report DIR` also writes for a single folder at any time.
pub fn finish_with<C: Serialize>(
    folder: &RunFolder,
    manifest: &mut InvocationManifest<C>,
    finished_at: jiff::Timestamp,
    report: bool,
) -> crate::Result<Summary> {
    let dir = folder.root();
    let mut data =
        RunFolderData::load_with(dir, LoadOptions { allow_incomplete: true }).map_err(|error| FinishError::Read {
            dir: dir.to_path_buf(),
            error: Box::new(error),
        })?;
    if let Some(s) = data.skipped.first() {
        return Err(FinishError::RunMissing {
            arm: s.arm.clone(),
            seed: s.seed,
            reason: s.reason.clone(),
        }
        .into());
    }
    // Every run finished; the folder is marked complete right after its report is written, and the
    // report says what `schedlab report DIR` on the complete folder would.
    for facts in &mut data.folders {
        facts.complete = true;
    }
    let summary = data.summary();
    // serde_json's own layout, byte for byte the report's summary.json
    let json = summary
        .json_document()
        .to_pretty_text()
        .map_err(|error| FolderError::Json {
            what: "the summary",
            error,
        })?;
    folder.write(SUMMARY_CSV, &summary.to_csv())?;
    folder.write(SUMMARY_JSON, &json)?;
    folder.write(SUMMARY_MD, &summary.to_markdown())?;
    let report_failed = |error: FinishStep| FinishError::Report {
        dir: dir.to_path_buf(),
        error: Box::new(error),
    };
    if report {
        let report = render_report_with(std::slice::from_ref(&data), std::slice::from_ref(&summary), DEFAULT_ARM)
            .map_err(|e| report_failed(FinishStep::Render(e)))?;
        write_report(report.files, &dir.join(REPORT_DIR)).map_err(|e| report_failed(FinishStep::Write(e)))?;
    }
    manifest.finished_at = Some(finished_at);
    manifest.complete = true;
    folder.write_json(MANIFEST_FILE, "the manifest", manifest)?;
    folder.mark_complete()?;
    Ok(summary)
}

/// Writes every file of a report into `out`, each whole or not at all (see
/// [`crate::atomic`]). Until the last is written the folder holds an
/// `INCOMPLETE` marker, so a report cut short (a kill, a full disk) says so.
pub fn write_report(files: Vec<OutputFile>, out: &Path) -> crate::Result<()> {
    std::fs::create_dir_all(out).map_err(|error| FolderError::CreateDir {
        path: out.to_path_buf(),
        error,
    })?;
    let marker = out.join(INCOMPLETE_MARKER);
    write_atomic(&marker, b"this report is being written, or its writing was cut short\n")?;
    for file in files {
        let path = out.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|error| FolderError::CreateDir {
                path: parent.to_path_buf(),
                error,
            })?;
        }
        write_atomic(&path, &file.bytes)?;
    }
    std::fs::remove_file(&marker).map_err(|error| FolderError::Remove { path: marker, error })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_folder::manifests::{Build, MANIFEST_VERSION};
    use crate::run_folder::reader::tests::write_folder;
    use std::fs;

    #[test]
    fn a_report_cut_short_keeps_its_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let file = |path: &str| OutputFile {
            path: path.into(),
            bytes: b"x".to_vec(),
        };
        let out = tmp.path().join("done");
        write_report(vec![file("a.md"), file("plots/b.svg")], &out).unwrap();
        assert!(out.join("plots/b.svg").is_file());
        assert!(!out.join(INCOMPLETE_MARKER).exists());
        // the second file cannot be written (its folder is a file): the marker stays
        let cut = tmp.path().join("cut");
        fs::create_dir_all(&cut).unwrap();
        fs::write(cut.join("plots"), "in the way").unwrap();
        assert!(write_report(vec![file("a.md"), file("plots/b.svg")], &cut).is_err());
        assert!(cut.join(INCOMPLETE_MARKER).is_file());
    }

    fn manifest() -> InvocationManifest<()> {
        InvocationManifest {
            manifest_version: MANIFEST_VERSION,
            scenario: "synthetic".into(),
            origin: "t.yaml".into(),
            params: Default::default(),
            resolved_scenario: serde_json::json!({"nodes": 3}),
            arms: vec!["default".into(), "binpack".into()],
            seeds: vec![1, 2],
            backend: "sim",
            cluster: None,
            checkpoint: None,
            drs_checkpoint: None,
            agmarl_config: None,
            arm_facts: Default::default(),
            profile_files: Default::default(),
            extenders: Default::default(),
            explain: false,
            build: Build {
                schedlab_version: "0",
                git_revision: "abc123",
            },
            command_line: vec![],
            started_at: jiff::Timestamp::UNIX_EPOCH,
            finished_at: None,
            complete: false,
        }
    }

    fn read_manifest(root: &Path) -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(root.join(MANIFEST_FILE)).unwrap()).unwrap()
    }

    /// A folder as `schedlab scenario` leaves it when every run is written: the marker, the runs, and a
    /// manifest saying not complete.
    fn started(root: &Path) -> (RunFolder, InvocationManifest<()>) {
        let folder = RunFolder::create(root).unwrap();
        write_folder(root, &["default", "binpack"], &[1, 2], 3);
        let manifest = manifest();
        folder.write_json(MANIFEST_FILE, "the manifest", &manifest).unwrap();
        (folder, manifest)
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_folder_is_marked_complete_after_the_summaries_and_the_report() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let (folder, mut manifest) = started(&root);
        let summary = finish(&folder, &mut manifest, jiff::Timestamp::UNIX_EPOCH).unwrap();
        assert!(!root.join(INCOMPLETE_MARKER).exists());
        let written = read_manifest(&root);
        assert_eq!(written["complete"], true);
        assert!(written["finished_at"].is_string());
        // every output is under its final name, none left under a temporary one
        assert_eq!(
            names_in(&root),
            [
                "manifest.json",
                "report",
                "report.md",
                "runs",
                "summary.csv",
                "summary.json"
            ]
        );
        assert!(root.join(REPORT_DIR).join("report.html").is_file());
        // the root's summaries and the report's come from the one summary
        assert_eq!(fs::read_to_string(root.join(SUMMARY_CSV)).unwrap(), summary.to_csv());
        assert_eq!(
            fs::read(root.join(SUMMARY_CSV)).unwrap(),
            fs::read(root.join(REPORT_DIR).join(SUMMARY_CSV)).unwrap()
        );
        assert_eq!(
            fs::read(root.join(SUMMARY_JSON)).unwrap(),
            fs::read(root.join(REPORT_DIR).join(SUMMARY_JSON)).unwrap()
        );
        // and the report is the one `schedlab report DIR` builds from the complete folder
        let again = crate::report::render(&RunFolderData::load(&root).unwrap()).unwrap();
        for file in again {
            assert_eq!(
                fs::read(root.join(REPORT_DIR).join(&file.path)).unwrap(),
                file.bytes,
                "{}",
                file.path
            );
        }
    }

    #[test]
    fn a_report_that_fails_leaves_the_folder_incomplete_and_names_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let (folder, mut manifest) = started(&root);
        // a folder where report.html should go: the rename into place fails
        let failing_file = root.join(REPORT_DIR).join("report.html");
        fs::create_dir_all(failing_file.join("x")).unwrap();
        let err = finish(&folder, &mut manifest, jiff::Timestamp::UNIX_EPOCH).unwrap_err();
        let msg = schedlab_core::error_text::one_line(&err);
        assert!(msg.contains(&failing_file.display().to_string()), "{msg}");
        assert!(msg.contains("INCOMPLETE"), "{msg}");
        assert!(root.join(INCOMPLETE_MARKER).is_file(), "marker kept");
        assert_eq!(read_manifest(&root)["complete"], false);
    }

    #[test]
    fn a_summary_that_cannot_be_written_stops_before_the_report() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let (folder, mut manifest) = started(&root);
        fs::create_dir_all(root.join(SUMMARY_CSV).join("x")).unwrap();
        let err = finish(&folder, &mut manifest, jiff::Timestamp::UNIX_EPOCH).unwrap_err();
        assert!(err.to_string().contains(SUMMARY_CSV), "{err}");
        assert!(!root.join(REPORT_DIR).exists(), "no report after a failure");
        assert!(root.join(INCOMPLETE_MARKER).is_file());
        assert_eq!(read_manifest(&root)["complete"], false);
    }

    #[test]
    fn a_run_without_its_records_is_named_and_nothing_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let (folder, mut manifest) = started(&root);
        let records = crate::run_folder::layout::run_dir(&root, "binpack", 2).join(crate::run_folder::RECORDS_FILE);
        fs::remove_file(&records).unwrap();
        let err = finish(&folder, &mut manifest, jiff::Timestamp::UNIX_EPOCH).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("arm binpack seed 2"), "{msg}");
        assert!(!root.join(SUMMARY_CSV).exists());
        assert!(root.join(INCOMPLETE_MARKER).is_file());
    }
}
