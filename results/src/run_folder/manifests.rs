//! The manifests a run folder is written with: what was run, so a folder
//! explains itself. What a backend says about its cluster and about each
//! run is its own type (`C`, `R`), written as it serialises; this crate
//! reads back only the fields a report needs ([`super::manifest_check`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the manifests `schedlab scenario` writes (the run
/// folder's and each run's). A manifest without one was written before
/// versions and is read as version 1; any other version is refused.
pub const MANIFEST_VERSION: u32 = 1;

/// Build facts shared by every manifest: the binary's, given by it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Build {
    pub schedlab_version: &'static str,
    pub git_revision: &'static str,
}

/// The manifest of the whole invocation (`manifest.json` at the folder's root).
/// `C` is what the backend says about its cluster.
#[derive(Debug, Clone, Serialize)]
pub struct InvocationManifest<C> {
    /// [`MANIFEST_VERSION`]
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
    pub cluster: Option<C>,
    /// the agmarl arms' checkpoint: "bundled" or a path
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// the DRS arms' networks, by arm: the checkpoint (`--drs-checkpoint`'s
    /// path or the bundled one's origin), its cluster size and weights digest
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drs_checkpoint: Option<serde_json::Value>,
    /// `--agmarl-config`: the agmarl arms' controller settings, when not the defaults
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agmarl_config: Option<serde_json::Value>,
    /// what each arm of `arms` is, by arm name (see [`ArmFacts`]); a folder
    /// written before it has none, which means unknown
    pub arm_facts: BTreeMap<String, ArmFacts>,
    /// the arms read from a kube-scheduler configuration file
    /// (`--arms profile:FILE`), by arm name: the file as given, its SHA-256
    /// and the profile the simulator ran
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub profile_files: BTreeMap<String, serde_json::Value>,
    /// the arms that call a kube-scheduler extender (`--arms extender:URL`),
    /// by arm name: the URL, weight, timeout and base profile
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extenders: BTreeMap<String, serde_json::Value>,
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

/// What an arm is, for reading its results beside the others' (e.g. the
/// claims table compares critical-pod time to bind only between arms that
/// both preempt, and sets the controls' verdicts beside the trained arm's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArmFacts {
    /// whether a pod no node takes gets DefaultPreemption in this invocation:
    /// the arm's policy asks for it and the backend carries it out (the
    /// simulator does; on a real cluster only the cluster's kube-scheduler
    /// does, not schedlab's bind loop nor the in-cluster agmarl scheduler)
    pub preempts: bool,
    /// for a control arm, what stands in for training
    pub control: Option<ArmControl>,
    /// the AGMARL variant whose controller and learned part the arm runs
    /// (`agmarl`, `agmarl-nognn`, …; an untrained twin runs its variant's,
    /// `agmarl-analytic` runs `agmarl`'s); None for the baselines
    pub variant: Option<String>,
    /// one training run of a learned arm: `seed:<training seed>` as the
    /// checkpoint's sidecar records it (else `sha256:<first 12 hex digits of
    /// the weights' digest>`), `init:<init seed>` for an untrained twin;
    /// None for the baselines and `agmarl-analytic`
    pub training_run: Option<String>,
}

/// The kind of control an arm is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArmControl {
    /// the network's initial weights, never updated (`agmarl-untrained` and
    /// the ablations' twins, `agmarl-nognn-untrained`, …)
    Untrained,
    /// hand-written score formulas (`agmarl-analytic`)
    Analytic,
}

/// The manifest of one (arm, seed) run, beside its records. `R` is what
/// the backend says the run did on its cluster.
#[derive(Debug, Clone, Serialize)]
pub struct RunManifest<R> {
    /// [`MANIFEST_VERSION`]
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
    pub explain: Option<RunExplain>,
    pub wall_seconds: f64,
    pub simulated_seconds: f64,
    /// on a real cluster: the run's id (its namespace and label), scheduler name and what each part did
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_run: Option<R>,
    /// an extender arm's calls: how many were made and how many failed (a
    /// failed filter call made its attempt unschedulable)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extender: Option<serde_json::Value>,
}

/// What the run manifest says about `--explain` for one run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunExplain {
    /// the decisions file beside the records, and how many lines it holds
    Written { file: &'static str, decisions: u64 },
    /// why this run has none: its arm ran in the cluster's own scheduler
    NotApplicable { reason: String },
}

/// A manifest's text: `serde_json`'s pretty JSON with a final newline,
/// except that an array of plain values (numbers, strings, booleans, nulls)
/// stays on one line: a replayed trace's pods are such rows, and one value
/// a line made its manifest several times larger.
pub fn to_pretty_json<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let mut text = collapse_plain_arrays(&serde_json::to_string_pretty(value)?);
    text.push('\n');
    Ok(text)
}

/// Where the string that starts at `bytes[start]` (a `"`) ends: the index
/// just past its closing quote.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Rewrites every array of `json` (valid JSON) that holds no array or
/// object as `[a, b, c]`; everything else is kept byte for byte.
fn collapse_plain_arrays(json: &str) -> String {
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b'[' => {
                // find the matching ']' if nothing nested comes first
                let mut j = i + 1;
                let mut plain = true;
                while j < bytes.len() {
                    match bytes[j] {
                        b'"' => j = string_end(bytes, j),
                        b'[' | b'{' => {
                            plain = false;
                            break;
                        }
                        b']' => break,
                        _ => j += 1,
                    }
                }
                if !plain || j >= bytes.len() {
                    i += 1;
                    continue;
                }
                out.push_str(&json[copied..i]);
                out.push('[');
                let mut k = i + 1;
                while k < j {
                    match bytes[k] {
                        b' ' | b'\n' | b'\r' | b'\t' => k += 1,
                        b',' => {
                            out.push_str(", ");
                            k += 1;
                        }
                        _ => {
                            // one value: a string, or a run of non-space, non-comma bytes
                            let end = if bytes[k] == b'"' {
                                string_end(bytes, k)
                            } else {
                                let mut e = k;
                                while e < j && !matches!(bytes[e], b' ' | b'\n' | b'\r' | b'\t' | b',') {
                                    e += 1;
                                }
                                e
                            };
                            out.push_str(&json[k..end]);
                            k = end;
                        }
                    }
                }
                out.push(']');
                i = j + 1;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&json[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_plain_values_stay_on_one_line_and_the_text_reads_back() {
        let value = serde_json::json!({
            "name": "t",
            "empty": [],
            "none": {},
            "pods": [[1000, 512, "ls", 0, null], [250, 64, "be", 1500, 9000]],
            "nested": {"flags": [true, false], "list": [{"a": 1}]}
        });
        let text = to_pretty_json(&value).unwrap();
        assert!(text.contains("    [1000, 512, \"ls\", 0, null],\n"), "{text}");
        assert!(text.contains("\"flags\": [true, false]"), "{text}");
        assert!(
            text.contains("\"empty\": []") && text.contains("\"none\": {}"),
            "{text}"
        );
        assert!(text.ends_with("}\n"));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn arm_facts_serialise_every_field_with_nulls_and_read_back() {
        let facts = BTreeMap::from([
            (
                "agmarl-untrained".to_string(),
                ArmFacts {
                    preempts: true,
                    control: Some(ArmControl::Untrained),
                    variant: Some("agmarl".into()),
                    training_run: Some("init:1000".into()),
                },
            ),
            (
                "random".to_string(),
                ArmFacts {
                    preempts: false,
                    control: None,
                    variant: None,
                    training_run: None,
                },
            ),
        ]);
        let json = serde_json::to_value(&facts).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "agmarl-untrained": {"preempts": true, "control": "untrained", "variant": "agmarl", "training_run": "init:1000"},
                "random": {"preempts": false, "control": null, "variant": null, "training_run": null},
            })
        );
        let back: BTreeMap<String, ArmFacts> = serde_json::from_value(json).unwrap();
        assert_eq!(back, facts);
        assert_eq!(
            serde_json::to_value(ArmControl::Analytic).unwrap(),
            serde_json::json!("analytic")
        );
    }
}
