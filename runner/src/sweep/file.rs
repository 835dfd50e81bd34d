//! The sweep file (docs/src/sweeps.md): what a sweep runs, described once,
//! read and checked into a [`Sweep`] before anything is written.
//!
//! Every error names the file, the field and the value.

use crate::Result;
use crate::error::input;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest sweep file read.
const MAX_SWEEP_FILE_BYTES: u64 = 1 << 20;

/// Most cells one sweep may have: what one Kubernetes Indexed Job with a
/// retry limit per index can run.
pub const MAX_CELLS: usize = 100_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    name: Option<String>,
    #[serde(default)]
    scenarios: Vec<RawScenario>,
    #[serde(default)]
    sizes: Vec<f64>,
    #[serde(default)]
    arms: Vec<String>,
    seeds: Option<RawSeeds>,
    #[serde(default)]
    checkpoints: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    init_seeds: Vec<u64>,
    agmarl_config: Option<String>,
    #[serde(default)]
    train: Vec<RawTrain>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawScenario {
    Name(String),
    Grid(RawGrid),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGrid {
    scenario: String,
    #[serde(default)]
    set: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawSeeds {
    List(Vec<u64>),
    Range(RawRange),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRange {
    first: u64,
    count: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrain {
    variant: String,
    seeds: Vec<u64>,
    #[serde(default)]
    scenarios: Vec<String>,
    episodes: Option<u32>,
    #[serde(default)]
    set: BTreeMap<String, serde_json::Value>,
    config: Option<String>,
    envs: Option<u32>,
}

/// A checked sweep: every scenario loaded at every grid point, every arm and
/// input file read, every training cell's settings checked.
#[derive(Debug)]
pub struct Sweep {
    /// the sweep file as given
    pub file: PathBuf,
    /// its text, kept beside the plan
    pub text: String,
    pub name: String,
    pub points: Vec<ScenarioPoint>,
    pub arms: Vec<ArmRun>,
    pub seeds: Vec<u64>,
    /// `--agmarl-config` of the AGMARL arms' cells
    pub agmarl_config: Option<PathBuf>,
    pub train: Vec<TrainRun>,
}

/// One scenario at one point of its grid.
#[derive(Debug)]
pub struct ScenarioPoint {
    /// a built-in's name, or the scenario file (resolved against the sweep file's folder)
    pub source: ScenarioSource,
    /// the point's `key=value` overrides, sorted by key
    pub set: Vec<String>,
    /// what the point is across scenarios: `base`, its overrides (`faults=2`), and `size=F` for a size's
    /// nodes; the points of one label are reported together
    pub label: String,
    pub scenario: workloads::Scenario,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioSource {
    Builtin(String),
    File(PathBuf),
}

/// One arm with one of its inputs: each checkpoint of a trained arm, each
/// init seed of an untrained twin, is a run of its own.
#[derive(Debug)]
pub struct ArmRun {
    /// the arm's name in the run folders
    pub name: String,
    pub input: ArmInput,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArmInput {
    /// a built-in, a control with its defaults, or a trained variant's bundled checkpoint
    Plain,
    /// a trained AGMARL variant's checkpoint (its `.json` sidecar beside it)
    Checkpoint(PathBuf),
    /// a DRS foil's network (its sidecar beside it)
    DrsCheckpoint(PathBuf),
    /// an untrained twin's init seed
    InitSeed(u64),
    /// a kube-scheduler configuration file (`profile:NAME=FILE`)
    Profile(PathBuf),
}

/// One training cell: a variant trained from one seed.
#[derive(Debug)]
pub struct TrainRun {
    pub variant: String,
    pub seed: u64,
    pub scenarios: Vec<workloads::Scenario>,
    pub episodes: u32,
    pub envs: u32,
    pub config: Option<PathBuf>,
}

/// What `schedlab train` plays when a training entry says nothing.
pub const DEFAULT_EPISODES: u32 = 300;
pub const DEFAULT_ENVS: u32 = 2;

/// Reads and checks the sweep file at `path`.
pub fn read(path: &Path) -> Result<Sweep> {
    let file = path.display().to_string();
    let text = schedlab_core::input::read_bounded_string(path, MAX_SWEEP_FILE_BYTES)
        .map_err(|e| input(format!("sweep file {file}: {e}")))?;
    let raw = parse(&file, &text)?;
    let beside = path.parent().unwrap_or(Path::new("."));
    let name = match raw.name.clone() {
        Some(name) => name,
        None => path
            .file_stem()
            .map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned()),
    };
    check(&file, beside, raw, name, text, path)
}

fn parse(file: &str, text: &str) -> Result<RawSweep> {
    let text = schedlab_core::text::strip_bom(text);
    let mut at = String::new();
    serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_path_to_error::deserialize::<_, RawSweep>(de).map_err(|e| {
            at = e.path().to_string();
            e.into_inner()
        })
    })
    .map_err(|e| {
        let field = if at.is_empty() || at == "." {
            String::new()
        } else {
            format!(" field {at}:")
        };
        input(format!("sweep file {file}:{field} {e}"))
    })
}

fn check(file: &str, beside: &Path, raw: RawSweep, name: String, text: String, path: &Path) -> Result<Sweep> {
    let bad = |field: &str, what: String| input(format!("sweep file {file}: field {field}: {what}"));
    if name.trim().is_empty() || name.len() > 200 || name.chars().any(char::is_control) {
        return Err(bad(
            "name",
            format!("{name:?} is not a name (1 to 200 printable characters)"),
        ));
    }
    let seeds = match raw.seeds {
        None if raw.scenarios.is_empty() => Vec::new(),
        None => {
            return Err(bad(
                "seeds",
                "missing: give a list ([1, 2, 3]) or {first: 1, count: 10}".into(),
            ));
        }
        Some(RawSeeds::List(list)) => list,
        Some(RawSeeds::Range(RawRange { first, count })) => {
            if count == 0 || count > MAX_CELLS as u64 {
                return Err(bad("seeds.count", format!("{count}: give 1..={MAX_CELLS}")));
            }
            let last = first
                .checked_add(count - 1)
                .ok_or_else(|| bad("seeds", format!("first {first} with count {count} passes {}", u64::MAX)))?;
            (first..=last).collect()
        }
    };
    if let Some(dup) = first_duplicate(&seeds) {
        return Err(bad("seeds", format!("{dup} is listed twice")));
    }
    if raw.scenarios.is_empty() && raw.train.is_empty() {
        return Err(bad(
            "scenarios",
            "empty, and so is train: a sweep needs at least one cell".into(),
        ));
    }
    if !raw.scenarios.is_empty() && seeds.is_empty() {
        return Err(bad("seeds", "empty: give at least one evaluation seed".into()));
    }
    if !raw.scenarios.is_empty() && raw.arms.is_empty() {
        return Err(bad(
            "arms",
            "empty: give at least one arm to run the scenarios on".into(),
        ));
    }
    for (i, size) in raw.sizes.iter().enumerate() {
        if !(size.is_finite() && *size > 0.0 && *size <= 1000.0) {
            return Err(bad(
                &format!("sizes[{i}]"),
                format!("{size}: a size is a factor of the scenario's nodes, above 0 and at most 1000"),
            ));
        }
    }
    let mut points = Vec::new();
    for (i, entry) in raw.scenarios.iter().enumerate() {
        let (given, grid) = match entry {
            RawScenario::Name(name) => (name.as_str(), BTreeMap::new()),
            RawScenario::Grid(g) => (g.scenario.as_str(), g.set.clone()),
        };
        let field = format!("scenarios[{i}]");
        points.extend(scenario_points(file, &field, beside, given, &grid, &raw.sizes)?);
    }
    let arms = check_arms(file, beside, &raw.arms, &raw.checkpoints, &raw.init_seeds)?;
    let agmarl_config = match &raw.agmarl_config {
        None => None,
        Some(given) => {
            if !raw
                .arms
                .iter()
                .any(|a| scheduler::agmarl::AGMARL_ARMS.contains(&a.as_str()))
            {
                return Err(bad(
                    "agmarl_config",
                    format!(
                        "{given}: for the AGMARL arms ({}), and arms lists none",
                        scheduler::agmarl::AGMARL_ARMS.join(", ")
                    ),
                ));
            }
            let path = beside.join(given);
            let text = schedlab_core::input::read_bounded_string(&path, 4 << 20)
                .map_err(|e| bad("agmarl_config", format!("{given}: {e}")))?;
            let config: scheduler::agmarl::AgmarlConfig = schedlab_core::json_input::parse_object(&text)
                .map_err(|e| bad("agmarl_config", format!("{given}: {e}")))?;
            config
                .validate()
                .map_err(|e| bad("agmarl_config", format!("{given}: {e}")))?;
            Some(path)
        }
    };
    let mut train = Vec::new();
    for (i, entry) in raw.train.iter().enumerate() {
        train.extend(check_train(file, &format!("train[{i}]"), beside, entry)?);
    }
    let cells = points
        .len()
        .saturating_mul(arms.len())
        .saturating_mul(seeds.len())
        .saturating_add(train.len());
    if cells > MAX_CELLS {
        return Err(input(format!(
            "sweep file {file}: {cells} cells ({} scenario points × {} arm runs × {} seeds + {} training runs), \
             over the {MAX_CELLS} one sweep may have: split it into several sweeps",
            points.len(),
            arms.len(),
            seeds.len(),
            train.len()
        )));
    }
    Ok(Sweep {
        file: path.to_path_buf(),
        text,
        name,
        points,
        arms,
        seeds,
        agmarl_config,
        train,
    })
}

fn first_duplicate<T: PartialEq + Copy>(list: &[T]) -> Option<T> {
    list.iter()
        .enumerate()
        .find(|(i, x)| list[..*i].contains(x))
        .map(|(_, x)| *x)
}

/// A built-in name, else a file beside the sweep file.
fn source_of(beside: &Path, given: &str) -> ScenarioSource {
    match workloads::builtin(given) {
        Some(b) => ScenarioSource::Builtin(b.name.to_string()),
        None => ScenarioSource::File(beside.join(given)),
    }
}

fn load(source: &ScenarioSource, set: &[String]) -> Result<workloads::Scenario> {
    let name = match source {
        ScenarioSource::Builtin(name) => name.clone(),
        ScenarioSource::File(path) => path.display().to_string(),
    };
    Ok(workloads::load_allowing(&name, set, &[])?)
}

/// A scalar param value as `--set` takes it.
fn scalar_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Every point of one scenario's grid: the product of its `set` lists, each
/// at every size.
fn scenario_points(
    file: &str,
    field: &str,
    beside: &Path,
    given: &str,
    grid: &BTreeMap<String, serde_json::Value>,
    sizes: &[f64],
) -> Result<Vec<ScenarioPoint>> {
    let bad = |field: String, what: String| input(format!("sweep file {file}: field {field}: {what}"));
    let source = source_of(beside, given);
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for (key, value) in grid {
        let values = match value {
            serde_json::Value::Array(list) if list.is_empty() => {
                return Err(bad(
                    format!("{field}.set.{key}"),
                    "an empty list: give at least one value".into(),
                ));
            }
            serde_json::Value::Array(list) => list.iter().map(scalar_text).collect::<Option<Vec<_>>>(),
            one => scalar_text(one).map(|v| vec![v]),
        }
        .ok_or_else(|| {
            bad(
                format!("{field}.set.{key}"),
                format!("{value}: give a value or a list of values"),
            )
        })?;
        axes.push((key.clone(), values));
    }
    if !sizes.is_empty() && grid.contains_key("nodes") {
        return Err(bad(
            format!("{field}.set.nodes"),
            "given with sizes, which set nodes too: give one or the other".into(),
        ));
    }
    let mut combos: Vec<Vec<String>> = vec![Vec::new()];
    for (key, values) in &axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(format!("{key}={v}"));
                    c
                })
            })
            .collect();
    }
    let mut points = Vec::new();
    for set in combos {
        let scenario =
            load(&source, &set).map_err(|e| input(format!("sweep file {file}: field {field} ({given}): {e}")))?;
        if sizes.is_empty() {
            let label = point_label(&set, None);
            points.push(ScenarioPoint {
                source: source.clone(),
                set,
                label,
                scenario,
            });
            continue;
        }
        let nodes = scenario
            .params()
            .get("nodes")
            .and_then(serde_json::Value::as_f64)
            .ok_or_else(|| {
                bad(
                    "sizes".into(),
                    format!("scenario {given} has no numeric nodes param for a size to multiply"),
                )
            })?;
        for size in sizes {
            let label = point_label(&set, Some(*size));
            let mut set = set.clone();
            set.push(format!("nodes={}", ((nodes * size).round() as u64).max(1)));
            set.sort();
            let scenario = load(&source, &set)
                .map_err(|e| input(format!("sweep file {file}: field sizes ({given} at {size}×): {e}")))?;
            points.push(ScenarioPoint {
                source: source.clone(),
                set,
                label,
                scenario,
            });
        }
    }
    Ok(points)
}

/// A point's label from its overrides and its size, if it has one.
fn point_label(set: &[String], size: Option<f64>) -> String {
    let mut parts: Vec<String> = set.to_vec();
    if let Some(size) = size {
        parts.push(format!("size={size}"));
    }
    if parts.is_empty() {
        "base".to_string()
    } else {
        parts.join(",")
    }
}

fn check_arms(
    file: &str,
    beside: &Path,
    arms: &[String],
    checkpoints: &BTreeMap<String, Vec<String>>,
    init_seeds: &[u64],
) -> Result<Vec<ArmRun>> {
    use scheduler::agmarl::{Control, Variant};
    let bad = |field: String, what: String| input(format!("sweep file {file}: field {field}: {what}"));
    if arms.is_empty() {
        return Ok(Vec::new());
    }
    // profile files are read beside the sweep file
    let located: Vec<String> = arms
        .iter()
        .map(|a| match profile_file_of(a) {
            Some((name, path)) => {
                let path = beside.join(path);
                match name {
                    Some(name) => format!("profile:{name}={}", path.display()),
                    None => format!("profile:{}", path.display()),
                }
            }
            None => a.clone(),
        })
        .collect();
    let checked = crate::arms::check(&located, &format!("sweep file {file}: field arms"))?;
    if let Some(name) = checked.external.first() {
        return Err(bad(
            "arms".into(),
            format!("external:{name}: a sweep's cells run on the simulator, which has no scheduler of its own to call"),
        ));
    }
    if let Some(name) = checked.extenders.keys().next() {
        return Err(bad(
            "arms".into(),
            format!(
                "{name}: an extender arm calls a URL, which a sweep's cells (on any machine) cannot promise to reach"
            ),
        ));
    }
    for arm in checkpoints.keys() {
        if !checked.names.contains(arm) {
            return Err(bad(
                format!("checkpoints.{arm}"),
                format!("{arm} is not one of arms ({})", checked.names.join(", ")),
            ));
        }
    }
    let twins: Vec<&String> = checked
        .names
        .iter()
        .filter(|a| Control::from_arm_name(a).is_some_and(Control::is_untrained))
        .collect();
    if !init_seeds.is_empty() && twins.is_empty() {
        return Err(bad(
            "init_seeds".into(),
            format!("{init_seeds:?}: for the untrained twins, and arms lists none"),
        ));
    }
    if let Some(dup) = first_duplicate(init_seeds) {
        return Err(bad("init_seeds".into(), format!("{dup} is listed twice")));
    }
    let mut runs = Vec::new();
    for (name, given) in checked.names.iter().zip(arms) {
        if let Some(file) = checked.profile_files.get(name) {
            runs.push(ArmRun {
                name: name.clone(),
                input: ArmInput::Profile(PathBuf::from(&file.file)),
            });
            continue;
        }
        let drs = crate::drs_input::is_drs_arm(name);
        let files = checkpoints.get(name);
        if let Some(files) = files {
            let trained = Variant::from_arm_name(name).is_some() && Control::from_arm_name(name).is_none();
            if !(trained || drs) {
                return Err(bad(
                    format!("checkpoints.{name}"),
                    format!(
                        "{given} takes no checkpoint: only the trained variants ({}) and the DRS foils do",
                        scheduler::agmarl::VARIANT_ARMS.join(", ")
                    ),
                ));
            }
            if files.is_empty() {
                return Err(bad(
                    format!("checkpoints.{name}"),
                    "an empty list: give at least one file".into(),
                ));
            }
        }
        match (files, drs) {
            (None, true) => {
                return Err(bad(
                    "arms".into(),
                    format!("{name}: a DRS foil runs a trained network: give it under checkpoints.{name}"),
                ));
            }
            (Some(files), _) => {
                for (i, f) in files.iter().enumerate() {
                    let path = beside.join(f);
                    let field = format!("checkpoints.{name}[{i}]");
                    if drs {
                        scheduler::drs::checkpoint::load(&path).map_err(|e| bad(field, format!("{f}: {e}")))?;
                        runs.push(ArmRun {
                            name: name.clone(),
                            input: ArmInput::DrsCheckpoint(path),
                        });
                    } else {
                        let (_, meta) = scheduler::agmarl::checkpoint::load(&path)
                            .map_err(|e| bad(field.clone(), format!("{f}: {e}")))?;
                        if let Some(trained) = meta.trained_variant()
                            && trained.arm_name() != name
                        {
                            return Err(bad(
                                field,
                                format!("{f} was trained as {}, not {name}", trained.arm_name()),
                            ));
                        }
                        runs.push(ArmRun {
                            name: name.clone(),
                            input: ArmInput::Checkpoint(path),
                        });
                    }
                }
            }
            (None, false) if twins.contains(&name) && !init_seeds.is_empty() => {
                runs.extend(init_seeds.iter().map(|&s| ArmRun {
                    name: name.clone(),
                    input: ArmInput::InitSeed(s),
                }));
            }
            (None, false) => runs.push(ArmRun {
                name: name.clone(),
                input: ArmInput::Plain,
            }),
        }
    }
    Ok(runs)
}

/// `profile:FILE` or `profile:NAME=FILE`: the name given, if any, and the file.
fn profile_file_of(arm: &str) -> Option<(Option<&str>, &str)> {
    let rest = arm.trim().strip_prefix("profile:")?;
    Some(match rest.split_once('=') {
        Some((name, path)) => (Some(name), path),
        None => (None, rest),
    })
}

fn check_train(file: &str, field: &str, beside: &Path, entry: &RawTrain) -> Result<Vec<TrainRun>> {
    use scheduler::agmarl::train::{DEFAULT_SCENARIOS, MIN_TRAINING_SEED};
    let bad = |sub: &str, what: String| input(format!("sweep file {file}: field {field}.{sub}: {what}"));
    let variant = entry.variant.trim();
    let trainable = scheduler::agmarl::VARIANT_ARMS.contains(&variant) || scheduler::drs::DRS_ARMS.contains(&variant);
    if !trainable {
        return Err(bad(
            "variant",
            format!(
                "{variant:?}: the variants to train are {} and the DRS foil's {}",
                scheduler::agmarl::VARIANT_ARMS.join(", "),
                scheduler::drs::DRS_ARMS.join(", ")
            ),
        ));
    }
    if entry.seeds.is_empty() {
        return Err(bad("seeds", "empty: give at least one training seed".into()));
    }
    if let Some(seed) = entry.seeds.iter().find(|&&s| s < MIN_TRAINING_SEED) {
        return Err(bad(
            "seeds",
            format!("{seed}: training seeds start at {MIN_TRAINING_SEED} (seeds below are kept for evaluation)"),
        ));
    }
    if let Some(dup) = first_duplicate(&entry.seeds) {
        return Err(bad("seeds", format!("{dup} is listed twice")));
    }
    let episodes = entry.episodes.unwrap_or(DEFAULT_EPISODES);
    if !(1..=1_000_000).contains(&episodes) {
        return Err(bad("episodes", format!("{episodes}: give 1..=1000000")));
    }
    let envs = entry.envs.unwrap_or(DEFAULT_ENVS);
    if !(1..=64).contains(&envs) {
        return Err(bad("envs", format!("{envs}: give 1..=64")));
    }
    let mut set = Vec::new();
    for (key, value) in &entry.set {
        let text = scalar_text(value).ok_or_else(|| bad(&format!("set.{key}"), format!("{value}: give one value")))?;
        set.push(format!("{key}={text}"));
    }
    let names: Vec<String> = if entry.scenarios.is_empty() {
        DEFAULT_SCENARIOS.iter().map(|s| s.to_string()).collect()
    } else {
        entry.scenarios.clone()
    };
    let mut scenarios = Vec::new();
    for (i, given) in names.iter().enumerate() {
        let source = source_of(beside, given);
        if let ScenarioSource::File(path) = &source
            && let Some(folder) = workloads::heldout_folder(&path.display().to_string())
        {
            return Err(bad(
                &format!("scenarios[{i}]"),
                format!(
                    "{given}: a held-out scenario ({} is marked by {}); training never reads the work a model is judged on",
                    folder.display(),
                    workloads::HELDOUT_MARKER
                ),
            ));
        }
        scenarios.push(load(&source, &set).map_err(|e| bad(&format!("scenarios[{i}]"), format!("{given}: {e}")))?);
    }
    let config = match &entry.config {
        None => None,
        Some(given) => {
            let path = beside.join(given);
            let text = schedlab_core::input::read_bounded_string(&path, 4 << 20)
                .map_err(|e| bad("config", format!("{given}: {e}")))?;
            let config: scheduler::agmarl::train::TrainConfig =
                schedlab_core::json_input::parse_object(&text).map_err(|e| bad("config", format!("{given}: {e}")))?;
            config.validate().map_err(|e| bad("config", format!("{given}: {e}")))?;
            Some(path)
        }
    };
    Ok(entry
        .seeds
        .iter()
        .map(|&seed| TrainRun {
            variant: variant.to_string(),
            seed,
            scenarios: scenarios.clone(),
            episodes,
            envs,
            config: config.clone(),
        })
        .collect())
}
