//! A kube-scheduler configuration file as a profile arm: the
//! `kubescheduler.config.k8s.io/v1` `KubeSchedulerConfiguration` a platform
//! engineer gives kube-scheduler, read into a [`Profile`] the simulator runs
//! (`--arms profile:FILE` or `profile:NAME=FILE`).
//!
//! Only what the profile machinery can express is read, and anything else is
//! refused with the file, the field path and the value, never ignored:
//!
//! - one profile (`profiles[0]`; none is kube-scheduler's default profile),
//!   its `schedulerName` recorded but not used;
//! - `plugins` at `multiPoint`, `filter`, `preScore`, `score` and
//!   `postFilter`, each with `enabled` and `disabled` (`name: "*"` included),
//!   merged with the default profile as kube-scheduler merges them
//!   (`mergePlugins`, then the framework's `expandMultiPointPlugins`), and
//!   score `weight`s of 1..=100;
//! - `pluginConfig` for `NodeResourcesFit` (`scoringStrategy`: `type`
//!   `LeastAllocated`, `MostAllocated` or `RequestedToCapacityRatio` with its
//!   `shape`, and `resources` cpu and memory with weights 1..=100),
//!   `NodeResourcesBalancedAllocation` (`resources`: cpu and memory, weight 1)
//!   and `DefaultPreemption` (its defaults only: 10% and 100 candidates);
//! - `percentageOfNodesToScore` (0..=100), the profile's over the top level's.
//!
//! The plugins the model has data for are NodeUnschedulable,
//! TaintToleration, NodeResourcesFit, NodeResourcesBalancedAllocation and
//! DefaultPreemption. The other plugins of kube-scheduler's default profile
//! ([`INERT_PLUGINS`]) may be enabled, disabled and weighted, and do
//! nothing: their inputs (node affinity, ports, volumes, topology spread,
//! images, ...) are not in the cluster model, so for its pods they pass every
//! node and score every node alike (see [`crate::default`]); their args are
//! refused, since those could change that.
//!
//! The profile follows the rules of the `default` arm's release
//! ([`DefaultScheduler::RELEASE`], v1.20 on the simulator), and a plugin left
//! as the default profile has it takes `default`'s weight: TaintToleration
//! weighs 1 (v1's default profile says 3; write `weight: 3` for that). So a
//! file differs from `default` in what it says and nothing else: the default
//! profile written out runs exactly as `default`, and `MostAllocated` exactly
//! as `binpack` (`scheduler/tests/profile_files.rs`).
//!
//! `apiVersion` must be `kubescheduler.config.k8s.io/v1`. v1beta3 (and
//! older) is refused rather than read as v1: the fields modelled here are
//! spelled the same, but the betas' default plugins and weights differ
//! between versions, and a file is only read one way.
//!
//! A profile read from a file lives as long as the program: its plugin lists
//! are leaked into `'static` (a few hundred bytes for each file arm of an
//! invocation), so it is the same `Copy` [`Profile`] the built-in arms are.

use super::{FilterPlugin, FitArgs, Normalize, Profile, Sampling, ScorePlugin, Scored};
use crate::default::DefaultScheduler;
use crate::preemption::{MIN_CANDIDATE_NODES_ABSOLUTE, MIN_CANDIDATE_NODES_PERCENTAGE};
use crate::registry::ARM_NAMES;
use crate::scores::{FitStrategy, MAX_CUSTOM_PRIORITY_SCORE, ResourceWeights, ShapePoint};
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::path::Path;

/// The one `apiVersion` read.
pub const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
/// The one `kind` read.
pub const KIND: &str = "KubeSchedulerConfiguration";
/// The prefix of a file arm in `--arms`.
pub const ARM_PREFIX: &str = "profile:";
/// Largest configuration file read.
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// The range kube-scheduler takes a score plugin's weight in.
pub const WEIGHT_RANGE: std::ops::RangeInclusive<i64> = 1..=100;

/// The plugins the simulator models.
pub const MODELLED_PLUGINS: &[&str] = &[
    NODE_UNSCHEDULABLE,
    TAINT_TOLERATION,
    NODE_RESOURCES_FIT,
    BALANCED_ALLOCATION,
    DEFAULT_PREEMPTION,
];

/// The other plugins of kube-scheduler's default profile: accepted, and
/// without effect in the simulator (the model lacks their inputs).
pub const INERT_PLUGINS: &[&str] = &[
    "SchedulingGates",
    "PrioritySort",
    "NodeName",
    "NodeAffinity",
    "NodePorts",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "ImageLocality",
    "DefaultBinder",
];

const NODE_UNSCHEDULABLE: &str = "NodeUnschedulable";
const TAINT_TOLERATION: &str = "TaintToleration";
const NODE_RESOURCES_FIT: &str = "NodeResourcesFit";
const BALANCED_ALLOCATION: &str = "NodeResourcesBalancedAllocation";
const DEFAULT_PREEMPTION: &str = "DefaultPreemption";

/// The extension points read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    Filter,
    PreScore,
    Score,
    PostFilter,
}

impl Point {
    const ALL: [Point; 4] = [Point::Filter, Point::PreScore, Point::Score, Point::PostFilter];

    fn field(self) -> &'static str {
        match self {
            Point::Filter => "filter",
            Point::PreScore => "preScore",
            Point::Score => "score",
            Point::PostFilter => "postFilter",
        }
    }
}

/// The extension points (of those read) each known plugin implements, as
/// kube-scheduler v1.33's in-tree plugins do.
fn points_of(name: &str) -> Option<&'static [Point]> {
    use Point::*;
    Some(match name {
        NODE_UNSCHEDULABLE | "NodeName" | "NodePorts" | "VolumeRestrictions" | "NodeVolumeLimits" | "VolumeZone" => {
            &[Filter]
        }
        TAINT_TOLERATION | NODE_RESOURCES_FIT | "NodeAffinity" | "VolumeBinding" | "PodTopologySpread"
        | "InterPodAffinity" => &[Filter, PreScore, Score],
        BALANCED_ALLOCATION => &[PreScore, Score],
        "ImageLocality" => &[Score],
        DEFAULT_PREEMPTION => &[PostFilter],
        "SchedulingGates" | "PrioritySort" | "DefaultBinder" => &[],
        _ => return None,
    })
}

fn is_modelled(name: &str) -> bool {
    MODELLED_PLUGINS.contains(&name)
}

/// kube-scheduler's default profile (`apis/config/v1/default_plugins.go`,
/// v1.33, feature-gated plugins left out) as `multiPoint`, with `default`'s
/// TaintToleration weight.
fn default_multi_point() -> Vec<Entry> {
    let taint_weight = crate::default::PROFILE
        .scores
        .iter()
        .find(|s| s.plugin == ScorePlugin::TaintToleration)
        .map_or(1, |s| s.weight);
    [
        ("SchedulingGates", None),
        ("PrioritySort", None),
        (NODE_UNSCHEDULABLE, None),
        ("NodeName", None),
        (TAINT_TOLERATION, Some(taint_weight)),
        ("NodeAffinity", Some(2)),
        ("NodePorts", None),
        (NODE_RESOURCES_FIT, Some(1)),
        ("VolumeRestrictions", None),
        ("NodeVolumeLimits", None),
        ("VolumeBinding", None),
        ("VolumeZone", None),
        ("PodTopologySpread", Some(2)),
        ("InterPodAffinity", Some(2)),
        (DEFAULT_PREEMPTION, None),
        (BALANCED_ALLOCATION, Some(1)),
        ("ImageLocality", Some(1)),
        ("DefaultBinder", None),
    ]
    .into_iter()
    .map(|(name, weight)| Entry {
        name: name.to_string(),
        weight,
    })
    .collect()
}

/// A configuration file that cannot be an arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileFileError {
    /// The arm as `--arms` gives it (`profile:NAME=FILE`).
    #[error("arm {spec:?}: {message}")]
    Spec { spec: String, message: String },
    /// The file cannot be read (the I/O error's text is the message, not a
    /// source, so it is printed once).
    #[error("profile file {file}: {message}")]
    Read { file: String, message: String },
    /// Not YAML, or not a configuration the simulator models.
    #[error("profile file {file}: {field}{}{message}", if field.is_empty() { "" } else { ": " })]
    Invalid {
        file: String,
        /// the field path, e.g. `profiles[0].plugins.score.enabled[1].weight`;
        /// empty for the document as a whole
        field: String,
        message: String,
    },
}

/// A file arm: the profile read from a configuration file, and what the run
/// folder's manifest records to run it again.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProfileFile {
    /// the arm's name in the run folder: the one given, else the file stem
    pub arm: String,
    /// the file as given
    pub file: String,
    /// the file's absolute path when it was read
    pub absolute_path: String,
    /// the SHA-256 of the file's bytes, as read
    pub sha256: String,
    /// `profiles[0].schedulerName`, recorded, not used
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// the profile the simulator runs
    pub profile: Profile,
}

/// Whether `spec`, an `--arms` entry, is a file arm.
pub fn is_file_arm(spec: &str) -> bool {
    spec.starts_with(ARM_PREFIX)
}

/// Reads the file arm `spec` (`profile:FILE` or `profile:NAME=FILE`): the
/// name given, else the file's stem, which must not be a built-in arm's.
pub fn load_arm(spec: &str) -> Result<ProfileFile, ProfileFileError> {
    let bad = |message: String| ProfileFileError::Spec {
        spec: spec.to_string(),
        message,
    };
    let rest = spec
        .strip_prefix(ARM_PREFIX)
        .ok_or_else(|| bad(format!("a profile arm starts with {ARM_PREFIX:?}")))?;
    let (name, file) = match rest.split_once('=') {
        Some((name, file)) => (name.to_string(), file),
        None => {
            let stem = Path::new(rest).file_stem().and_then(|s| s.to_str()).unwrap_or("");
            (stem.to_string(), rest)
        }
    };
    if file.is_empty() {
        return Err(bad("no file: write profile:FILE or profile:NAME=FILE".to_string()));
    }
    check_arm_name(&name).map_err(|why| bad(format!("{why}; name it with profile:NAME={file}")))?;
    let file_name = file.to_string();
    let text =
        schedlab_core::input::read_bounded(Path::new(file), MAX_FILE_BYTES).map_err(|e| ProfileFileError::Read {
            file: file_name.clone(),
            message: e.to_string(),
        })?;
    let sha256 = schedlab_core::digest::sha256_hex(&text);
    let text = String::from_utf8(text).map_err(|_| ProfileFileError::Read {
        file: file_name.clone(),
        message: "not UTF-8 text".to_string(),
    })?;
    let (profile, scheduler_name) = parse(&file_name, &name, &text)?;
    let absolute_path = std::path::absolute(file).map_or_else(|_| file_name.clone(), |p| p.display().to_string());
    Ok(ProfileFile {
        arm: name,
        file: file_name,
        absolute_path,
        sha256,
        scheduler_name,
        profile,
    })
}

/// An arm name: a plain folder name (letters, digits, `-`, `_`, `.`, not
/// starting with `.`) that no built-in arm has.
pub(crate) fn check_arm_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !plain {
        return Err(format!(
            "the arm name {name:?} is not 1 to 64 letters, digits, '-', '_' or '.' (not starting with '.')"
        ));
    }
    if ARM_NAMES.contains(&name) {
        return Err(format!("the arm name {name:?} is a built-in arm's"));
    }
    Ok(())
}

/// The profile named `arm` that the configuration `text` (from `file`, for
/// messages) describes, and its `schedulerName`.
pub fn parse(file: &str, arm: &str, text: &str) -> Result<(Profile, Option<String>), ProfileFileError> {
    let invalid = |field: &str, message: String| ProfileFileError::Invalid {
        file: file.to_string(),
        field: field.to_string(),
        message,
    };
    let value: serde_json::Value = serde_saphyr::from_str(text).map_err(|e| {
        // one line: the reader's own words, without its snippet of the file
        let message = e.without_snippet().to_string();
        // advice meant for programs that embed the reader, not for the file's author
        let message = message.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
        invalid("", message.lines().next().unwrap_or("not YAML").to_string())
    })?;
    if !value.is_object() {
        let what = match value {
            serde_json::Value::Null => "empty",
            serde_json::Value::Array(_) => "a list",
            _ => "a single value",
        };
        return Err(invalid("", format!("{what}, not a {KIND} mapping")));
    }
    let raw: RawConfig = typed(&value).map_err(|(field, message)| invalid(&field, message))?;
    build(&raw, arm).map_err(|Refusal { field, message }| invalid(&field, message))
}

/// `value` read as `T`, or the field path and serde's message.
fn typed<T: serde::de::DeserializeOwned>(value: &serde_json::Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        (path, e.into_inner().to_string())
    })
}

/// A refusal: the field path and why.
#[derive(Debug)]
struct Refusal {
    field: String,
    message: String,
}

fn refuse<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        field: field.into(),
        message: message.into(),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawConfig {
    api_version: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    profiles: Vec<RawProfile>,
    percentage_of_nodes_to_score: Option<i64>,
    extenders: Option<Vec<IgnoredAny>>,
    pod_initial_backoff_seconds: Option<IgnoredAny>,
    pod_max_backoff_seconds: Option<IgnoredAny>,
    // how kube-scheduler runs, not where it places a pod: accepted, not read
    #[allow(dead_code)]
    parallelism: Option<IgnoredAny>,
    #[allow(dead_code)]
    leader_election: Option<IgnoredAny>,
    #[allow(dead_code)]
    client_connection: Option<IgnoredAny>,
    #[allow(dead_code)]
    healthz_bind_address: Option<IgnoredAny>,
    #[allow(dead_code)]
    metrics_bind_address: Option<IgnoredAny>,
    #[allow(dead_code)]
    enable_profiling: Option<IgnoredAny>,
    #[allow(dead_code)]
    enable_contention_profiling: Option<IgnoredAny>,
    #[allow(dead_code)]
    delay_cache_until_active: Option<IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawProfile {
    scheduler_name: Option<String>,
    percentage_of_nodes_to_score: Option<i64>,
    #[serde(default)]
    plugins: RawPlugins,
    #[serde(default)]
    plugin_config: Vec<RawPluginConfig>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPlugins {
    #[serde(default)]
    multi_point: RawPluginSet,
    #[serde(default)]
    filter: RawPluginSet,
    #[serde(default)]
    pre_score: RawPluginSet,
    #[serde(default)]
    score: RawPluginSet,
    #[serde(default)]
    post_filter: RawPluginSet,
}

impl RawPlugins {
    fn at(&self, point: Point) -> &RawPluginSet {
        match point {
            Point::Filter => &self.filter,
            Point::PreScore => &self.pre_score,
            Point::Score => &self.score,
            Point::PostFilter => &self.post_filter,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPluginSet {
    #[serde(default)]
    enabled: Vec<RawPlugin>,
    #[serde(default)]
    disabled: Vec<RawPlugin>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    name: String,
    weight: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPluginConfig {
    name: String,
    args: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawFitArgs {
    scoring_strategy: Option<RawScoringStrategy>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawScoringStrategy {
    #[serde(rename = "type")]
    type_: Option<String>,
    resources: Option<Vec<RawResource>>,
    requested_to_capacity_ratio: Option<RawRequestedToCapacityRatio>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResource {
    name: String,
    weight: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequestedToCapacityRatio {
    #[serde(default)]
    shape: Vec<RawShapePoint>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShapePoint {
    utilization: i64,
    score: i64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBalancedArgs {
    resources: Option<Vec<RawResource>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPreemptionArgs {
    min_candidate_nodes_percentage: Option<i64>,
    min_candidate_nodes_absolute: Option<i64>,
}

/// A plugin in an `enabled` list: its name and weight as given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    weight: Option<i64>,
}

fn known_plugins() -> String {
    format!(
        "the simulator models {}; these others of kube-scheduler's default profile are accepted and have no effect \
         in it: {}",
        MODELLED_PLUGINS.join(", "),
        INERT_PLUGINS.join(", ")
    )
}

fn build(raw: &RawConfig, arm: &str) -> Result<(Profile, Option<String>), Refusal> {
    match raw.api_version.as_deref() {
        Some(API_VERSION) => {}
        Some(other) if other.starts_with("kubescheduler.config.k8s.io/") => {
            return refuse(
                "apiVersion",
                format!(
                    "{other:?} is not read: only {API_VERSION:?} is (kube-scheduler v1.25 on); the betas' default \
                     plugins and weights differ between versions, so a beta file is not read as v1"
                ),
            );
        }
        Some(other) => return refuse("apiVersion", format!("{other:?}: a profile file is {API_VERSION:?}")),
        None => return refuse("apiVersion", format!("missing: a profile file is {API_VERSION:?}")),
    }
    match raw.kind.as_deref() {
        Some(KIND) => {}
        Some(other) => return refuse("kind", format!("{other:?}: a profile file is a {KIND}")),
        None => return refuse("kind", format!("missing: a profile file is a {KIND}")),
    }
    if raw.extenders.as_ref().is_some_and(|e| !e.is_empty()) {
        return refuse(
            "extenders",
            "extenders are not modelled: the simulator runs no HTTP extender",
        );
    }
    for (field, given) in [
        ("podInitialBackoffSeconds", raw.pod_initial_backoff_seconds.is_some()),
        ("podMaxBackoffSeconds", raw.pod_max_backoff_seconds.is_some()),
    ] {
        if given {
            return refuse(
                field,
                "not modelled: the simulator retries an unschedulable pod on its own schedule; leave it out",
            );
        }
    }
    let default_profile = RawProfile::default();
    let profile = match raw.profiles.as_slice() {
        [] => &default_profile,
        [one] => one,
        more => {
            return refuse(
                "profiles",
                format!(
                    "{} profiles: an arm is one profile; put each in its own file and give each as an arm",
                    more.len()
                ),
            );
        }
    };
    let at = "profiles[0]";
    let percentage = match profile.percentage_of_nodes_to_score {
        Some(p) => Some((format!("{at}.percentageOfNodesToScore"), p)),
        None => raw
            .percentage_of_nodes_to_score
            .map(|p| ("percentageOfNodesToScore".to_string(), p)),
    };
    let sampling = match percentage {
        None | Some((_, 0)) => Sampling::Adaptive,
        Some((_, p @ 1..=100)) => Sampling::Percentage(p as u32),
        Some((field, p)) => return refuse(field, format!("{p} is not a percentage in 0..=100 (0: adaptive)")),
    };
    let plugins = Plugins::merge(&profile.plugins, &format!("{at}.plugins"))?;
    let args = Args::read(&profile.plugin_config, &plugins, &format!("{at}.pluginConfig"))?;

    let filters: Vec<FilterPlugin> = plugins
        .enabled(Point::Filter)
        .filter_map(|name| match name {
            NODE_UNSCHEDULABLE => Some(FilterPlugin::NodeUnschedulable),
            TAINT_TOLERATION => Some(FilterPlugin::TaintToleration),
            NODE_RESOURCES_FIT => Some(FilterPlugin::NodeResourcesFit),
            _ => None,
        })
        .collect();
    let rules = DefaultScheduler::RELEASE;
    let scores: Vec<Scored> = plugins
        .enabled(Point::Score)
        .filter_map(|name| {
            let (plugin, normalize) = match name {
                TAINT_TOLERATION => (ScorePlugin::TaintToleration, Normalize::Reversed),
                NODE_RESOURCES_FIT => (
                    ScorePlugin::NodeResourcesFit(FitArgs {
                        strategy: args.strategy,
                        rules,
                        resources: args.resources,
                    }),
                    Normalize::None,
                ),
                BALANCED_ALLOCATION => (ScorePlugin::BalancedAllocation { rules }, Normalize::None),
                _ => return None,
            };
            Some(Scored {
                plugin,
                weight: plugins.score_weight(name),
                normalize,
            })
        })
        .collect();
    let preemption = plugins.enabled(Point::PostFilter).any(|n| n == DEFAULT_PREEMPTION);
    let profile_out = Profile {
        name: Box::leak(arm.to_string().into_boxed_str()),
        release: rules,
        sampling,
        filters: Box::leak(filters.into_boxed_slice()),
        preferences: &[],
        scores: Box::leak(scores.into_boxed_slice()),
        preemption,
    };
    Ok((profile_out, profile.scheduler_name.clone()))
}

/// The plugins of each extension point once merged with the default profile.
struct Plugins {
    /// the plugins each point runs, in order
    points: [Vec<String>; 4],
    /// weights of the score plugins (`score` first, then `multiPoint`)
    weights: Vec<(String, i64)>,
}

impl Plugins {
    fn enabled(&self, point: Point) -> impl Iterator<Item = &str> {
        let i = Point::ALL.iter().position(|p| *p == point).unwrap_or(0);
        self.points[i].iter().map(String::as_str)
    }

    fn score_weight(&self, name: &str) -> i64 {
        self.weights.iter().find(|(n, _)| n == name).map_or(1, |(_, w)| *w)
    }

    /// `mergePlugins` with the default profile, then `expandMultiPointPlugins`.
    fn merge(raw: &RawPlugins, at: &str) -> Result<Plugins, Refusal> {
        let multi_at = format!("{at}.multiPoint");
        let custom_multi = check_set(&raw.multi_point, &multi_at, None)?;
        let multi = merge_set(default_multi_point(), &custom_multi);
        let mut points: [Vec<String>; 4] = Default::default();
        for (i, point) in Point::ALL.into_iter().enumerate() {
            let set_at = format!("{at}.{}", point.field());
            let specific = check_set(raw.at(point), &set_at, Some(point))?;
            if specific.disabled.iter().any(|d| d == "*") {
                points[i] = specific.enabled.iter().map(|e| e.name.clone()).collect();
                continue;
            }
            let implements = |name: &str| points_of(name).is_some_and(|p| p.contains(&point));
            let mut overrides = Vec::new();
            let mut from_multi = Vec::new();
            for entry in &multi {
                if !implements(&entry.name) || specific.disabled.contains(&entry.name) {
                    continue;
                }
                if specific.enabled.iter().any(|e| e.name == entry.name) {
                    overrides.push(entry.name.clone());
                } else {
                    from_multi.push(entry.name.clone());
                }
            }
            let names = &mut points[i];
            names.extend(
                specific
                    .enabled
                    .iter()
                    .filter(|e| overrides.contains(&e.name))
                    .map(|e| e.name.clone()),
            );
            names.extend(from_multi);
            names.extend(
                specific
                    .enabled
                    .iter()
                    .filter(|e| !overrides.contains(&e.name))
                    .map(|e| e.name.clone()),
            );
        }
        // getScoreWeights: a plugin's weight at `score` wins over `multiPoint`'s
        let score_set = check_set(&raw.score, &format!("{at}.score"), Some(Point::Score))?;
        let mut weights: Vec<(String, i64)> = Vec::new();
        for entry in score_set.enabled.iter().chain(&multi) {
            if !weights.iter().any(|(n, _)| *n == entry.name) {
                weights.push((entry.name.clone(), entry.weight.unwrap_or(1)));
            }
        }
        let plugins = Plugins { points, weights };
        // a modelled Score plugin reads what its PreScore left
        for name in plugins.enabled(Point::Score) {
            let has_pre_score = points_of(name).is_some_and(|p| p.contains(&Point::PreScore));
            if is_modelled(name) && has_pre_score && !plugins.enabled(Point::PreScore).any(|n| n == name) {
                return refuse(
                    format!("{at}.preScore"),
                    format!(
                        "{name} scores but its PreScore is disabled: not modelled (kube-scheduler's Score reads the \
                         state its PreScore writes); disable it at score too, or enable its PreScore"
                    ),
                );
            }
        }
        Ok(plugins)
    }
}

/// A plugin set as given, checked.
struct CheckedSet {
    enabled: Vec<Entry>,
    disabled: Vec<String>,
}

/// Checks one `enabled`/`disabled` set at `at`: known plugin names, each
/// enabled once, weights only where a score plugin's weight is read and in
/// 1..=100, and, at a specific extension point, only plugins that extend it.
fn check_set(set: &RawPluginSet, at: &str, point: Option<Point>) -> Result<CheckedSet, Refusal> {
    let mut enabled: Vec<Entry> = Vec::new();
    for (i, plugin) in set.enabled.iter().enumerate() {
        let here = format!("{at}.enabled[{i}]");
        let name = plugin.name.as_str();
        if name == "*" {
            return refuse(format!("{here}.name"), "\"*\" is for disabled lists only");
        }
        let Some(points) = points_of(name) else {
            return refuse(
                format!("{here}.name"),
                format!("unknown plugin {name:?}: {}", known_plugins()),
            );
        };
        if let Some(p) = point
            && !points.contains(&p)
        {
            return refuse(
                format!("{here}.name"),
                format!("{name} is not a {} plugin in kube-scheduler", p.field()),
            );
        }
        if enabled.iter().any(|e| e.name == name) {
            return refuse(format!("{here}.name"), format!("{name} is listed twice"));
        }
        if let Some(weight) = plugin.weight {
            let read = match point {
                None => points.contains(&Point::Score),
                Some(p) => p == Point::Score,
            };
            if !read {
                return refuse(
                    format!("{here}.weight"),
                    format!("{weight}: {name} does not score here, so its weight would not be read"),
                );
            }
            if !WEIGHT_RANGE.contains(&weight) {
                return refuse(
                    format!("{here}.weight"),
                    format!(
                        "{weight} is out of range: kube-scheduler takes score weights {}..={}",
                        WEIGHT_RANGE.start(),
                        WEIGHT_RANGE.end()
                    ),
                );
            }
        }
        enabled.push(Entry {
            name: name.to_string(),
            weight: plugin.weight,
        });
    }
    let mut disabled = Vec::new();
    for (i, plugin) in set.disabled.iter().enumerate() {
        let here = format!("{at}.disabled[{i}]");
        let name = plugin.name.as_str();
        if name != "*" && points_of(name).is_none() {
            return refuse(
                format!("{here}.name"),
                format!("unknown plugin {name:?}: {}", known_plugins()),
            );
        }
        if let Some(weight) = plugin.weight {
            return refuse(
                format!("{here}.weight"),
                format!("{weight}: a disabled plugin's weight is not read"),
            );
        }
        disabled.push(name.to_string());
    }
    Ok(CheckedSet { enabled, disabled })
}

/// `mergePluginSet`: the defaults not disabled (none under `"*"`), a default
/// the custom set enables again replaced in place, then the custom rest.
fn merge_set(defaults: Vec<Entry>, custom: &CheckedSet) -> Vec<Entry> {
    let all_disabled = custom.disabled.iter().any(|d| d == "*");
    let mut out = Vec::new();
    let mut replaced = Vec::new();
    if !all_disabled {
        for default in defaults {
            if custom.disabled.contains(&default.name) {
                continue;
            }
            match custom.enabled.iter().position(|e| e.name == default.name) {
                Some(i) => {
                    out.push(custom.enabled[i].clone());
                    replaced.push(i);
                }
                None => out.push(default),
            }
        }
    }
    out.extend(
        custom
            .enabled
            .iter()
            .enumerate()
            .filter(|(i, _)| !replaced.contains(i))
            .map(|(_, e)| e.clone()),
    );
    out
}

/// What `pluginConfig` sets.
struct Args {
    strategy: FitStrategy,
    resources: ResourceWeights,
}

impl Args {
    fn read(configs: &[RawPluginConfig], plugins: &Plugins, at: &str) -> Result<Args, Refusal> {
        let mut args = Args {
            strategy: FitStrategy::LeastAllocated,
            resources: ResourceWeights::CPU_MEMORY,
        };
        let mut seen: Vec<&str> = Vec::new();
        for (i, config) in configs.iter().enumerate() {
            let here = format!("{at}[{i}]");
            let name = config.name.as_str();
            if points_of(name).is_none() {
                return refuse(
                    format!("{here}.name"),
                    format!("unknown plugin {name:?}: {}", known_plugins()),
                );
            }
            if seen.contains(&name) {
                return refuse(format!("{here}.name"), format!("a second config for {name}"));
            }
            seen.push(name);
            let args_at = format!("{here}.args");
            let Some(value) = config.args.as_ref().filter(|v| !v.is_null()) else {
                continue;
            };
            let read_as = |point: Point| plugins.enabled(point).any(|n| n == name);
            match name {
                NODE_RESOURCES_FIT => {
                    let raw: RawFitArgs = typed_at(value, &args_at)?;
                    if let Some(strategy) = &raw.scoring_strategy {
                        if !read_as(Point::Score) {
                            return refuse(
                                format!("{args_at}.scoringStrategy"),
                                "NodeResourcesFit does not score in this profile, so its scoringStrategy would not \
                                 be read",
                            );
                        }
                        (args.strategy, args.resources) =
                            scoring_strategy(strategy, &format!("{args_at}.scoringStrategy"))?;
                    }
                }
                BALANCED_ALLOCATION => {
                    let raw: RawBalancedArgs = typed_at(value, &args_at)?;
                    if let Some(resources) = &raw.resources {
                        if !read_as(Point::Score) {
                            return refuse(
                                format!("{args_at}.resources"),
                                "NodeResourcesBalancedAllocation does not score in this profile, so its resources \
                                 would not be read",
                            );
                        }
                        balanced_resources(resources, &format!("{args_at}.resources"))?;
                    }
                }
                DEFAULT_PREEMPTION => {
                    let raw: RawPreemptionArgs = typed_at(value, &args_at)?;
                    for (field, given, modelled) in [
                        (
                            "minCandidateNodesPercentage",
                            raw.min_candidate_nodes_percentage,
                            MIN_CANDIDATE_NODES_PERCENTAGE,
                        ),
                        (
                            "minCandidateNodesAbsolute",
                            raw.min_candidate_nodes_absolute,
                            MIN_CANDIDATE_NODES_ABSOLUTE,
                        ),
                    ] {
                        match given {
                            Some(v) if v != modelled as i64 => {
                                return refuse(
                                    format!("{args_at}.{field}"),
                                    format!("{v}: not modelled; the simulator's DefaultPreemption uses {modelled}"),
                                );
                            }
                            Some(_) if !read_as(Point::PostFilter) => {
                                return refuse(
                                    format!("{args_at}.{field}"),
                                    "DefaultPreemption is disabled in this profile, so its args would not be read",
                                );
                            }
                            _ => {}
                        }
                    }
                }
                _ if is_modelled(name) => {
                    return refuse(args_at, format!("{name} takes no args in kube-scheduler"));
                }
                _ => {
                    return refuse(
                        args_at,
                        format!(
                            "{name}'s args are not modelled: the simulator leaves {name} out (the cluster model lacks \
                             its inputs), and args could make it matter"
                        ),
                    );
                }
            }
        }
        Ok(args)
    }
}

/// `value` as `T`, a refusal naming the field below `at` otherwise.
fn typed_at<T: serde::de::DeserializeOwned>(value: &serde_json::Value, at: &str) -> Result<T, Refusal> {
    typed(value).map_err(|(field, message)| Refusal {
        field: if field.is_empty() {
            at.to_string()
        } else {
            format!("{at}.{field}")
        },
        message,
    })
}

const MODELLED_RESOURCES: &str = "the cluster model has cpu and memory only";

/// NodeResourcesFit's `scoringStrategy`.
fn scoring_strategy(raw: &RawScoringStrategy, at: &str) -> Result<(FitStrategy, ResourceWeights), Refusal> {
    let mut resources = ResourceWeights::CPU_MEMORY;
    if let Some(list) = raw.resources.as_ref().filter(|l| !l.is_empty()) {
        resources = ResourceWeights { cpu: 0, memory: 0 };
        for (i, resource) in list.iter().enumerate() {
            let here = format!("{at}.resources[{i}]");
            let slot = match resource.name.as_str() {
                "cpu" => &mut resources.cpu,
                "memory" => &mut resources.memory,
                other => return refuse(format!("{here}.name"), format!("{other:?}: {MODELLED_RESOURCES}")),
            };
            if *slot != 0 {
                return refuse(format!("{here}.name"), format!("{} is listed twice", resource.name));
            }
            let weight = resource.weight.unwrap_or(1);
            if !WEIGHT_RANGE.contains(&weight) {
                return refuse(
                    format!("{here}.weight"),
                    format!(
                        "{weight} is out of range: kube-scheduler takes resource weights {}..={}",
                        WEIGHT_RANGE.start(),
                        WEIGHT_RANGE.end()
                    ),
                );
            }
            *slot = weight;
        }
    }
    let type_ = raw.type_.as_deref().unwrap_or("LeastAllocated");
    let ratio_at = format!("{at}.requestedToCapacityRatio");
    let strategy = match type_ {
        "LeastAllocated" | "MostAllocated" => {
            if raw.requested_to_capacity_ratio.is_some() {
                return refuse(
                    ratio_at,
                    format!("read only with type RequestedToCapacityRatio, not {type_}"),
                );
            }
            if type_ == "LeastAllocated" {
                FitStrategy::LeastAllocated
            } else {
                FitStrategy::MostAllocated
            }
        }
        "RequestedToCapacityRatio" => {
            let Some(ratio) = &raw.requested_to_capacity_ratio else {
                return refuse(ratio_at, "missing: RequestedToCapacityRatio needs its shape");
            };
            FitStrategy::RequestedToCapacityRatio(shape(&ratio.shape, &format!("{ratio_at}.shape"))?)
        }
        other => {
            return refuse(
                format!("{at}.type"),
                format!("{other:?}: the types are LeastAllocated, MostAllocated and RequestedToCapacityRatio"),
            );
        }
    };
    Ok((strategy, resources))
}

/// RequestedToCapacityRatio's `shape`, checked as kube-scheduler does:
/// at least one point, utilisation 0..=100 and increasing, score 0..=10.
fn shape(raw: &[RawShapePoint], at: &str) -> Result<&'static [ShapePoint], Refusal> {
    if raw.is_empty() {
        return refuse(at, "empty: give at least one point");
    }
    let mut points = Vec::with_capacity(raw.len());
    for (i, point) in raw.iter().enumerate() {
        let here = format!("{at}[{i}]");
        if !(0..=100).contains(&point.utilization) {
            return refuse(
                format!("{here}.utilization"),
                format!("{} is not in 0..=100", point.utilization),
            );
        }
        if i > 0 && point.utilization <= raw[i - 1].utilization {
            return refuse(
                format!("{here}.utilization"),
                format!(
                    "{} after {}: utilization must increase from point to point",
                    point.utilization,
                    raw[i - 1].utilization
                ),
            );
        }
        if !(0..=MAX_CUSTOM_PRIORITY_SCORE).contains(&point.score) {
            return refuse(
                format!("{here}.score"),
                format!("{} is not in 0..={MAX_CUSTOM_PRIORITY_SCORE}", point.score),
            );
        }
        points.push(ShapePoint {
            utilization: point.utilization,
            score: point.score,
        });
    }
    Ok(Box::leak(points.into_boxed_slice()))
}

/// NodeResourcesBalancedAllocation's `resources`: the model balances cpu
/// against memory, so exactly those two, each weight 1 (kube-scheduler
/// requires 1).
fn balanced_resources(list: &[RawResource], at: &str) -> Result<(), Refusal> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, resource) in list.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let name = resource.name.as_str();
        if !matches!(name, "cpu" | "memory") {
            return refuse(format!("{here}.name"), format!("{name:?}: {MODELLED_RESOURCES}"));
        }
        if seen.contains(&name) {
            return refuse(format!("{here}.name"), format!("{name} is listed twice"));
        }
        seen.push(name);
        if let Some(weight) = resource.weight.filter(|w| *w != 1) {
            return refuse(
                format!("{here}.weight"),
                format!("{weight}: kube-scheduler requires weight 1 here"),
            );
        }
    }
    if seen.len() != 2 {
        return refuse(
            at,
            "the simulator balances cpu against memory: list both (or leave resources out)",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{binpack, default};

    const HEAD: &str = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

    fn profile(body: &str) -> Profile {
        match parse("my.yaml", "mine", &format!("{HEAD}{body}")) {
            Ok((p, _)) => p,
            Err(e) => panic!("{e}"),
        }
    }

    fn err(text: &str) -> String {
        match parse("my.yaml", "mine", text) {
            Ok((p, _)) => panic!("read {p:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// The error for `body` after the header.
    fn refused(body: &str) -> String {
        err(&format!("{HEAD}{body}"))
    }

    fn sorted_scores(p: &Profile) -> Vec<String> {
        let mut v: Vec<String> = p.scores.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    }

    /// `p` is `want` but for its name and the order of its score plugins
    /// (a total does not depend on it).
    fn assert_same_as(p: &Profile, want: &Profile) {
        assert_eq!(p.release, want.release);
        assert_eq!(p.sampling, want.sampling);
        assert_eq!(p.filters, want.filters);
        assert_eq!(p.preferences, want.preferences);
        assert_eq!(p.preemption, want.preemption);
        assert_eq!(sorted_scores(p), sorted_scores(want));
    }

    #[test]
    fn no_profile_is_the_default_arm() {
        let p = profile("");
        assert_eq!(p.name, "mine");
        assert_same_as(&p, &default::PROFILE);
        assert_same_as(&profile("profiles: []\n"), &default::PROFILE);
        assert_same_as(&profile("profiles: [{schedulerName: x}]\n"), &default::PROFILE);
    }

    #[test]
    fn the_golden_files_are_default_and_binpack() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/profiles");
        for (file, want) in [("default.yaml", default::PROFILE), ("binpack.yaml", binpack::PROFILE)] {
            let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
            let (p, _) = parse(file, "x", &text).unwrap();
            assert_same_as(&p, &want);
        }
    }

    #[test]
    fn plugins_merge_as_kube_scheduler_merges_them() {
        // disabling at score keeps the filter; a score weight beats multiPoint's
        let p = profile(
            "profiles:\n- plugins:\n    score:\n      disabled: [{name: NodeResourcesBalancedAllocation}]\n      \
             enabled: [{name: TaintToleration, weight: 7}]\n    multiPoint:\n      enabled: [{name: TaintToleration, \
             weight: 3}]\n",
        );
        assert_eq!(p.filters, default::PROFILE.filters);
        let scores: Vec<(String, i64)> = p
            .scores
            .iter()
            .map(|s| (s.plugin.name().to_string(), s.weight))
            .collect();
        // the override first, then the multiPoint plugins
        assert_eq!(
            scores,
            [("TaintToleration".to_string(), 7), ("NodeResourcesFit".to_string(), 1)]
        );
        // multiPoint re-enabling a default replaces it in place, unweighted: 1
        let p = profile("profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: TaintToleration}]\n");
        assert!(p.scores.iter().all(|s| s.weight == 1));
        // "*" at one point leaves only what it enables there
        let p = profile(
            "profiles:\n- plugins:\n    filter:\n      disabled: [{name: \"*\"}]\n      enabled: [{name: NodeResourcesFit}, \
             {name: NodeUnschedulable}]\n",
        );
        assert_eq!(
            p.filters,
            [FilterPlugin::NodeResourcesFit, FilterPlugin::NodeUnschedulable]
        );
        assert_eq!(p.scores.len(), 3);
        // "*" at multiPoint leaves only its own enabled list
        let p = profile(
            "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: \"*\"}]\n      enabled: [{name: \
             NodeResourcesFit, weight: 4}]\n",
        );
        assert_eq!(p.filters, [FilterPlugin::NodeResourcesFit]);
        assert_eq!(p.scores.len(), 1);
        assert_eq!(p.scores[0].weight, 4);
        assert!(!p.preemption);
        // DefaultPreemption off at postFilter
        let p = profile("profiles:\n- plugins:\n    postFilter:\n      disabled: [{name: DefaultPreemption}]\n");
        assert!(!p.preemption);
        assert_same_as(&Profile { preemption: true, ..p }, &default::PROFILE);
        // inert plugins are accepted and change nothing
        let p = profile(
            "profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, weight: 50}]\n      disabled: \
             [{name: NodeAffinity}]\n",
        );
        assert_same_as(&p, &default::PROFILE);
    }

    #[test]
    fn plugin_config_and_sampling() {
        let p = profile(
            "percentageOfNodesToScore: 30\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      \
             scoringStrategy:\n        type: RequestedToCapacityRatio\n        resources: [{name: memory, weight: \
             3}]\n        requestedToCapacityRatio:\n          shape: [{utilization: 0, score: 0}, {utilization: 100, \
             score: 10}]\n",
        );
        assert_eq!(p.sampling, Sampling::Percentage(30));
        let ScorePlugin::NodeResourcesFit(args) = p.scores[1].plugin else {
            panic!("{:?}", p.scores)
        };
        assert_eq!(args.resources, ResourceWeights { cpu: 0, memory: 3 });
        assert_eq!(
            args.strategy,
            FitStrategy::RequestedToCapacityRatio(&[
                ShapePoint {
                    utilization: 0,
                    score: 0
                },
                ShapePoint {
                    utilization: 100,
                    score: 10
                }
            ])
        );
        assert_eq!(
            p.scores[1].to_string(),
            "NodeResourcesFit RequestedToCapacityRatio [0:0 100:10] cpu 0 memory 3 v1.20 (1)"
        );
        // the profile's percentage wins over the top level's; 0 is adaptive
        let p = profile("percentageOfNodesToScore: 30\nprofiles:\n- percentageOfNodesToScore: 0\n");
        assert_eq!(p.sampling, Sampling::Adaptive);
    }

    #[test]
    fn what_is_not_modelled_is_refused_with_file_field_and_value() {
        let cases: &[(&str, &str)] = &[
            (
                "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeResourcesFitt}]\n",
                "profile file my.yaml: profiles[0].plugins.score.enabled[0].name: unknown plugin \"NodeResourcesFitt\": \
                 the simulator models NodeUnschedulable, TaintToleration, NodeResourcesFit, \
                 NodeResourcesBalancedAllocation, DefaultPreemption; these others",
            ),
            (
                "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Coscheduling}]\n",
                "profiles[0].plugins.multiPoint.enabled[0].name: unknown plugin \"Coscheduling\"",
            ),
            (
                "profiles:\n- plugins:\n    score:\n      enabled: [{name: TaintToleration, weight: 101}]\n",
                "profiles[0].plugins.score.enabled[0].weight: 101 is out of range: kube-scheduler takes score weights \
                 1..=100",
            ),
            (
                "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: TaintToleration, weight: 0}]\n",
                "profiles[0].plugins.multiPoint.enabled[0].weight: 0 is out of range",
            ),
            (
                "profiles:\n- plugins:\n    score:\n      enabled: [{name: TaintToleration}, {name: TaintToleration}]\n",
                "profiles[0].plugins.score.enabled[1].name: TaintToleration is listed twice",
            ),
            (
                "profiles:\n- plugins:\n    filter:\n      enabled: [{name: NodeResourcesFit, weight: 2}]\n",
                "profiles[0].plugins.filter.enabled[0].weight: 2: NodeResourcesFit does not score here",
            ),
            (
                "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: NodeUnschedulable, weight: 2}]\n",
                "profiles[0].plugins.multiPoint.enabled[0].weight: 2: NodeUnschedulable does not score here",
            ),
            (
                "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeUnschedulable}]\n",
                "profiles[0].plugins.score.enabled[0].name: NodeUnschedulable is not a score plugin",
            ),
            (
                "profiles:\n- plugins:\n    bind:\n      enabled: [{name: DefaultBinder}]\n",
                "profiles[0].plugins.bind: unknown field `bind`, expected one of `multiPoint`, `filter`, `preScore`, \
                 `score`, `postFilter`",
            ),
            (
                "profiles:\n- plugins:\n    preScore:\n      disabled: [{name: TaintToleration}]\n",
                "profiles[0].plugins.preScore: TaintToleration scores but its PreScore is disabled: not modelled",
            ),
            (
                "profiles: [{schedulerName: a}, {schedulerName: b}]\n",
                "profile file my.yaml: profiles: 2 profiles: an arm is one profile",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {ignoredResources: [nvidia.com/gpu]}\n",
                "profiles[0].pluginConfig[0].args.ignoredResources: unknown field `ignoredResources`, expected \
                 `scoringStrategy`",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        \
                 type: MostAllocated\n        resources: [{name: nvidia.com/gpu, weight: 3}]\n",
                "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].name: \"nvidia.com/gpu\": the cluster \
                 model has cpu and memory only",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        \
                 resources: [{name: cpu, weight: 200}]\n",
                "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: 200 is out of range",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy: {type: \
                 Balanced}\n",
                "profiles[0].pluginConfig[0].args.scoringStrategy.type: \"Balanced\": the types are LeastAllocated, \
                 MostAllocated and RequestedToCapacityRatio",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        \
                 type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n          shape: [{utilization: \
                 50, score: 5}, {utilization: 40, score: 10}]\n",
                "requestedToCapacityRatio.shape[1].utilization: 40 after 50: utilization must increase",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        \
                 type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n          shape: [{utilization: \
                 0, score: 11}]\n",
                "requestedToCapacityRatio.shape[0].score: 11 is not in 0..=10",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy: {type: \
                 RequestedToCapacityRatio}\n",
                "scoringStrategy.requestedToCapacityRatio: missing: RequestedToCapacityRatio needs its shape",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        \
                 type: MostAllocated\n        requestedToCapacityRatio: {shape: [{utilization: 0, score: 1}]}\n",
                "scoringStrategy.requestedToCapacityRatio: read only with type RequestedToCapacityRatio, not \
                 MostAllocated",
            ),
            (
                "profiles:\n- plugins:\n    score:\n      disabled: [{name: NodeResourcesFit}]\n  pluginConfig:\n  - \
                 name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated}}\n",
                "profiles[0].pluginConfig[0].args.scoringStrategy: NodeResourcesFit does not score in this profile",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: \
                 cpu}]}\n",
                "profiles[0].pluginConfig[0].args.resources: the simulator balances cpu against memory",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesAbsolute: 5}\n",
                "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: 5: not modelled; the simulator's \
                 DefaultPreemption uses 100",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args: {addedAffinity: {}}\n",
                "profiles[0].pluginConfig[0].args: NodeAffinity's args are not modelled",
            ),
            (
                "profiles:\n- pluginConfig:\n  - name: TaintToleration\n    args: {weight: 3}\n",
                "profiles[0].pluginConfig[0].args: TaintToleration takes no args",
            ),
            (
                "profiles:\n- pluginConfig:\n  - {name: DefaultPreemption}\n  - {name: DefaultPreemption}\n",
                "profiles[0].pluginConfig[1].name: a second config for DefaultPreemption",
            ),
            (
                "percentageOfNodesToScore: 101\n",
                "profile file my.yaml: percentageOfNodesToScore: 101 is not a percentage in 0..=100",
            ),
            (
                "profiles: [{percentageOfNodesToScore: -1}]\n",
                "profiles[0].percentageOfNodesToScore: -1 is not a percentage",
            ),
            (
                "extenders: [{urlPrefix: \"http://x\"}]\n",
                "extenders: extenders are not modelled",
            ),
            ("podMaxBackoffSeconds: 10\n", "podMaxBackoffSeconds: not modelled"),
            (
                "profiles: [{schedulerName: a, plugin: {}}]\n",
                "profiles[0].plugin: unknown field `plugin`",
            ),
        ];
        for (body, want) in cases {
            let e = refused(body);
            assert!(e.contains(want), "{body}\n  gave: {e}\n  want: {want}");
            assert!(e.starts_with("profile file my.yaml: "), "{e}");
        }
    }

    #[test]
    fn the_api_version_and_kind_are_v1s() {
        let beta = err("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n");
        assert!(
            beta.starts_with(
                "profile file my.yaml: apiVersion: \"kubescheduler.config.k8s.io/v1beta3\" is not read: only \
                 \"kubescheduler.config.k8s.io/v1\" is"
            ),
            "{beta}"
        );
        let none = err("kind: KubeSchedulerConfiguration\n");
        assert!(none.contains("apiVersion: missing"), "{none}");
        let kind = err("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeProxyConfiguration\n");
        assert!(kind.contains("kind: \"KubeProxyConfiguration\""), "{kind}");
        let yaml = err("apiVersion: [\n");
        assert!(yaml.starts_with("profile file my.yaml: "), "{yaml}");
        assert!(!yaml.contains('\n'), "one line: {yaml}");
        let list = err("- a\n");
        assert_eq!(
            list,
            "profile file my.yaml: a list, not a KubeSchedulerConfiguration mapping"
        );
        assert_eq!(
            err(""),
            "profile file my.yaml: empty, not a KubeSchedulerConfiguration mapping"
        );
    }

    #[test]
    fn arm_specs_name_the_arm() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("packed.yaml");
        std::fs::write(&file, format!("{HEAD}profiles: [{{schedulerName: s}}]\n")).unwrap();
        let f = load_arm(&format!("profile:{}", file.display())).unwrap();
        assert_eq!((f.arm.as_str(), f.profile.name), ("packed", "packed"));
        assert_eq!(f.scheduler_name.as_deref(), Some("s"));
        assert_eq!(
            f.sha256,
            schedlab_core::digest::sha256_hex(&std::fs::read(&file).unwrap())
        );
        let named = load_arm(&format!("profile:mine=={}", file.display()));
        assert!(named.is_err(), "{named:?}");
        let f = load_arm(&format!("profile:mine={}", file.display())).unwrap();
        assert_eq!(f.arm, "mine");
        let clash = load_arm(&format!("profile:binpack={}", file.display())).unwrap_err();
        assert!(
            clash
                .to_string()
                .contains("the arm name \"binpack\" is a built-in arm's"),
            "{clash}"
        );
        let missing = load_arm("profile:/nonexistent/x.yaml").unwrap_err();
        assert!(
            missing.to_string().starts_with("profile file /nonexistent/x.yaml: "),
            "{missing}"
        );
        assert!(load_arm("profile:").is_err());
        assert!(load_arm(&format!("profile:{}", dir.path().display())).is_err());
    }
}
