//! Reading manifests back: the part of a run folder's manifest.json a
//! report needs, and the check that ties each run's records to its folder.
//! The writer ([`super::manifests`]) writes more; unknown fields are ignored
//! so older readers keep working.

use super::layout::RUN_MANIFEST_FILE;
use super::manifests::MANIFEST_VERSION;
use crate::report::ReportError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Manifest {
    #[serde(default)]
    pub manifest_version: Option<u32>,
    pub scenario: String,
    #[serde(default)]
    pub resolved_scenario: serde_json::Value,
    pub arms: Vec<String>,
    pub seeds: Vec<u64>,
    pub backend: String,
    #[serde(default)]
    pub git_revision: Option<String>,
    #[serde(default)]
    pub complete: bool,
    /// what the run folder says about each arm; absent in folders written
    /// before it existed: unknown
    #[serde(default)]
    pub arm_facts: Option<BTreeMap<String, FolderArmFacts>>,
}

/// What the invocation manifest's `arm_facts.<arm>` says about an arm, as the
/// reports read it back: every field optional, so a folder whose writer
/// left one out reads as unknown rather than refused (the writer's type,
/// `manifests::ArmFacts`, always writes all four).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FolderArmFacts {
    /// the arm runs kube-scheduler's DefaultPreemption (or its equal) as
    /// its PostFilter; `None`: unknown
    #[serde(default)]
    pub preempts: Option<bool>,
    /// `"untrained"`, `"analytic"` for the controls of the learned arm
    #[serde(default)]
    pub control: Option<String>,
    /// the AGMARL variant whose controller the arm runs
    #[serde(default)]
    pub variant: Option<String>,
    /// one training run of a learned arm (`"seed:1000"`, `"init:1000"`,
    /// `"sha256:…"`); `None` for arms without one
    #[serde(default)]
    pub training_run: Option<String>,
}

/// An arm name becomes a folder name: refuse anything that could leave the
/// run folder or is not one path component.
fn plain_component(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

/// The largest manifest read: a folder's manifest holds its resolved
/// scenario (a replayed trace's pods among it), a run's a few lines. A file
/// past this is not one `schedlab scenario` wrote, and is not read on.
pub const MAX_MANIFEST_BYTES: u64 = 256 << 20;

pub(super) fn read(path: &Path) -> Result<Manifest, ReportError> {
    let text = schedlab_core::input::read_bounded_string(path, MAX_MANIFEST_BYTES).map_err(|error| {
        ReportError::ManifestRead {
            path: path.to_path_buf(),
            error,
        }
    })?;
    let manifest: Manifest =
        schedlab_core::json_input::parse_object(&text).map_err(|error| ReportError::ManifestParse {
            path: path.to_path_buf(),
            error,
        })?;
    let invalid = |reason: String| ReportError::ManifestInvalid {
        path: path.to_path_buf(),
        reason,
    };
    check_version(manifest.manifest_version).map_err(invalid)?;
    if manifest.arms.is_empty() || manifest.seeds.is_empty() {
        return Err(invalid("the manifest lists no arms or no seeds".into()));
    }
    if let Some(bad) = manifest.arms.iter().find(|a| !plain_component(a)) {
        return Err(invalid(format!("arm name {bad:?} is not a plain folder name")));
    }
    for (i, arm) in manifest.arms.iter().enumerate() {
        if manifest.arms[..i].contains(arm) {
            return Err(invalid(format!("arm {arm} is listed twice")));
        }
    }
    let mut seeds = manifest.seeds.clone();
    seeds.sort_unstable();
    if seeds.windows(2).any(|w| w[0] == w[1]) {
        return Err(invalid("a seed is listed twice".into()));
    }
    Ok(manifest)
}

fn check_version(version: Option<u32>) -> Result<(), String> {
    match version {
        None | Some(MANIFEST_VERSION) => Ok(()),
        Some(v) => Err(format!(
            "manifest version {v}: this build reads version {MANIFEST_VERSION} (a newer or unknown schedlab wrote it)"
        )),
    }
}

/// The part of a run's own manifest (`runs/<arm>/seed-<n>/manifest.json`)
/// that ties its records to it.
#[derive(Debug, Clone, Deserialize)]
struct RunManifest {
    #[serde(default)]
    manifest_version: Option<u32>,
    scenario: String,
    arm: String,
    seed: u64,
    /// absent in folders written before records were digested
    #[serde(default)]
    records_sha256: Option<String>,
}

/// Checks that the run at `run_dir` is the run (`scenario`, `arm`, `seed`) of
/// its folder's manifest and that `records` are the records it wrote.
pub(super) fn check_run(
    run_dir: &Path,
    records: &Path,
    scenario: &str,
    arm: &str,
    seed: u64,
) -> Result<(), ReportError> {
    let path = run_dir.join(RUN_MANIFEST_FILE);
    if !path.is_file() {
        return Err(ReportError::MissingRunManifest {
            path,
            arm: arm.to_string(),
            seed,
        });
    }
    let bad = |reason: String| ReportError::RunManifest {
        path: path.clone(),
        reason,
    };
    let text = schedlab_core::input::read_bounded_string(&path, MAX_MANIFEST_BYTES)
        .map_err(|e| bad(format!("cannot be read: {e}")))?;
    let run: RunManifest = schedlab_core::json_input::parse_object(&text)
        .map_err(|e| bad(format!("not a run manifest ({e}); the run is damaged")))?;
    check_version(run.manifest_version).map_err(&bad)?;
    if (run.scenario.as_str(), run.arm.as_str(), run.seed) != (scenario, arm, seed) {
        return Err(bad(format!(
            "it is the run of scenario {}, arm {}, seed {}, where the folder's manifest expects scenario {scenario}, \
             arm {arm}, seed {seed}: a run copied from elsewhere",
            run.scenario, run.arm, run.seed
        )));
    }
    if let Some(expected) = run.records_sha256 {
        let found = schedlab_core::digest::file_sha256(records).map_err(|e| ReportError::RunManifest {
            path: records.to_path_buf(),
            reason: format!("cannot be read: {e}"),
        })?;
        if found != expected {
            return Err(ReportError::RecordsDigest {
                path: records.to_path_buf(),
                expected,
                found,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_that_is_no_regular_file_is_refused_unread() {
        let err = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(err.contains("/dev/zero") && err.contains("not a regular file"), "{err}");
    }
}
