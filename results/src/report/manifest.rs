//! The part of a run folder's manifest.json a report needs. The harness
//! writes more; unknown fields are ignored so older readers keep working.

use super::ReportError;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Manifest {
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
}

/// An arm name becomes a folder name: refuse anything that could leave the
/// run folder or is not one path component.
fn plain_component(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

pub(super) fn read(path: &Path) -> Result<Manifest, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|error| ReportError::ManifestRead {
        path: path.to_path_buf(),
        error,
    })?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|error| ReportError::ManifestParse {
        path: path.to_path_buf(),
        error,
    })?;
    let invalid = |reason: String| ReportError::ManifestInvalid {
        path: path.to_path_buf(),
        reason,
    };
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
