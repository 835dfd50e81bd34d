//! Manifests: what was run, so a run folder explains itself.

use serde::Serialize;
use std::collections::BTreeMap;

/// Build facts shared by every manifest.
#[derive(Debug, Clone, Serialize)]
pub struct Build {
    pub schedlab_version: &'static str,
    pub git_revision: &'static str,
}

impl Build {
    pub fn current() -> Build {
        Build {
            schedlab_version: env!("CARGO_PKG_VERSION"),
            git_revision: env!("SCHEDLAB_GIT_REVISION"),
        }
    }
}

/// The manifest of the whole invocation (`manifest.json` at the folder's root).
#[derive(Debug, Clone, Serialize)]
pub struct InvocationManifest {
    /// [`results::report::MANIFEST_VERSION`]
    pub manifest_version: u32,
    pub scenario: String,
    pub origin: String,
    pub params: BTreeMap<String, serde_json::Value>,
    /// the scenario with its params substituted
    pub resolved_scenario: serde_json::Value,
    pub arms: Vec<String>,
    pub seeds: Vec<u64>,
    pub backend: &'static str,
    /// the real cluster's server, time scale and client rate limits (absent on the simulator)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::kube_play::ClusterFacts>,
    /// the agmarl arms' checkpoint: "bundled" or a path
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// `--agmarl-config`: the agmarl arms' controller settings, when not the defaults
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agmarl_config: Option<serde_json::Value>,
    /// `--explain`: every run beside its records has decisions.jsonl (see the
    /// run manifests for arms where that does not apply)
    pub explain: bool,
    #[serde(flatten)]
    pub build: Build,
    pub command_line: Vec<String>,
    pub started_at: jiff::Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<jiff::Timestamp>,
    pub complete: bool,
}

/// The manifest of one (arm, seed) run, beside its records.
#[derive(Debug, Clone, Serialize)]
pub struct RunManifest {
    /// [`results::report::MANIFEST_VERSION`]
    pub manifest_version: u32,
    pub scenario: String,
    pub origin: String,
    pub params: BTreeMap<String, serde_json::Value>,
    pub resolved_scenario: serde_json::Value,
    pub arm: String,
    pub seed: u64,
    pub backend: &'static str,
    #[serde(flatten)]
    pub build: Build,
    pub records: &'static str,
    /// SHA-256 of the records file: a report refuses records that are not these
    pub records_sha256: String,
    /// with `--explain`: the decisions file, or why this run has none
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::explain::RunExplain>,
    pub wall_seconds: f64,
    pub simulated_seconds: f64,
    /// on a real cluster: the run's id (its namespace and label), scheduler name and what each part did
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_run: Option<crate::kube_play::KubeRunFacts>,
}
