//! A sweep's plan: the checked sweep with every input it reads copied beside
//! it, so the plan runs the same wherever it is unpacked (this machine, or
//! a pod with the plan mounted), and its cells, each with a stable id.
//!
//! The plan holds the grid, not the cells: cell `i` is computed from it
//! ([`Plan::cell`]) in the order scenario points × arm runs × seeds, then
//! the training runs.

use crate::Result;
use crate::error::{While, input};
use crate::sweep::file::{ArmInput, ScenarioSource, Sweep};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The plan's file in its folder.
pub const PLAN_FILE: &str = "plan.json";
/// The version of the plan's format.
pub const PLAN_FORMAT: u32 = 1;

/// The program that makes and runs a plan's cells: part of every cell's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    pub schedlab_version: String,
    pub git_revision: String,
}

impl Program {
    pub fn of(build: results::run_folder::Build) -> Program {
        Program {
            schedlab_version: build.schedlab_version.to_string(),
            git_revision: build.git_revision.to_string(),
        }
    }
}

impl std::fmt::Display for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "schedlab {} ({})", self.schedlab_version, self.git_revision)
    }
}

/// A file the plan carries: its name in the plan's folder and its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanInput {
    pub key: String,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedPoint {
    /// the scenario's name
    pub scenario: String,
    /// `base`, the point's overrides, or its size: the points of one label are reported together
    pub label: String,
    /// a built-in's name, or the resolved scenario in the plan
    pub builtin: Option<String>,
    pub resolved: Option<PlanInput>,
    /// the point's overrides (for a built-in; a file's are in its resolved form)
    pub set: Vec<String>,
    /// SHA-256 of the resolved scenario: what the point plays
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedArm {
    pub name: String,
    pub checkpoint: Option<PlanInput>,
    pub drs_checkpoint: Option<PlanInput>,
    pub init_seed: Option<u64>,
    pub profile: Option<PlanInput>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedTrain {
    pub variant: String,
    pub seed: u64,
    /// each training scenario resolved (its overrides applied), in the plan
    pub scenarios: Vec<PlanInput>,
    pub episodes: u32,
    pub envs: u32,
    pub config: Option<PlanInput>,
}

/// A sweep's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub format: u32,
    /// derived from everything below: the same sweep by the same program has the same id
    pub sweep_id: String,
    pub name: String,
    pub program: Program,
    pub points: Vec<PlannedPoint>,
    pub arms: Vec<PlannedArm>,
    pub seeds: Vec<u64>,
    pub agmarl_config: Option<PlanInput>,
    pub train: Vec<PlannedTrain>,
}

/// One cell: its index in the plan, its id, and what it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub index: usize,
    pub id: String,
    pub work: CellWork,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellWork {
    /// one arm (with its checkpoint or init seed) on one seed of one scenario point
    Scenario { point: usize, arm: usize, seed: u64 },
    /// one training run
    Train { run: usize },
}

fn short_digest(value: &serde_json::Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    schedlab_core::digest::sha256_hex(text.as_bytes())[..16].to_string()
}

/// A name a ConfigMap key and a file name may both be.
fn key_safe(text: &str) -> String {
    let safe: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    safe.trim_matches('.').to_string()
}

/// The plan's files (its inputs, then `plan.json`), by name: what its folder holds, or a ConfigMap.
pub type PlanFiles = std::collections::BTreeMap<String, Vec<u8>>;

/// Gathers the inputs a plan carries, each once, named by its digest.
#[derive(Default)]
struct Inputs {
    files: PlanFiles,
}

impl Inputs {
    fn bytes(&mut self, stem: &str, ext: &str, bytes: Vec<u8>) -> PlanInput {
        let sha256 = schedlab_core::digest::sha256_hex(&bytes);
        let key = format!("{}-{}.{ext}", key_safe(stem), &sha256[..12]);
        self.files.entry(key.clone()).or_insert(bytes);
        PlanInput { key, sha256 }
    }

    fn file(&mut self, stem: &str, path: &Path) -> Result<PlanInput> {
        let bytes = std::fs::read(path).while_doing(|| format!("reading {}", path.display()))?;
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map_or("bin".to_string(), key_safe);
        Ok(self.bytes(stem, &ext, bytes))
    }

    /// A checkpoint and its sidecar, under names the loader pairs (`X.safetensors`, `X.json`).
    fn checkpoint(&mut self, stem: &str, path: &Path) -> Result<PlanInput> {
        let weights = self.file(stem, path)?;
        let sidecar = scheduler::agmarl::checkpoint::sidecar_path(path);
        let bytes = std::fs::read(&sidecar).while_doing(|| format!("reading {}", sidecar.display()))?;
        let key = Path::new(&weights.key).with_extension("json").display().to_string();
        self.files.insert(key, bytes);
        Ok(weights)
    }

    fn scenario(&mut self, scenario: &workloads::Scenario) -> Result<PlanInput> {
        let text =
            serde_json::to_string_pretty(&scenario.resolved()).while_doing(|| "writing a resolved scenario".into())?;
        Ok(self.bytes(&format!("scenario-{}", scenario.name()), "json", text.into_bytes()))
    }
}

/// Writes a plan's files into `dir` (which exists), each whole or not at all.
pub fn write_files(dir: &Path, files: &PlanFiles) -> Result<()> {
    for (name, bytes) in files {
        results::run_folder::write_atomic(&dir.join(name), bytes)?;
    }
    Ok(())
}

impl Plan {
    /// The plan of `sweep`, and its files: every input it carries and `plan.json`.
    pub fn build(sweep: &Sweep, program: Program) -> Result<(Plan, PlanFiles)> {
        let mut inputs = Inputs::default();
        let mut points = Vec::new();
        for point in &sweep.points {
            let digest = schedlab_core::digest::sha256_hex(
                serde_json::to_string(&point.scenario.resolved())
                    .unwrap_or_default()
                    .as_bytes(),
            );
            let (builtin, resolved, set) = match &point.source {
                ScenarioSource::Builtin(name) => (Some(name.clone()), None, point.set.clone()),
                ScenarioSource::File(_) => (None, Some(inputs.scenario(&point.scenario)?), Vec::new()),
            };
            points.push(PlannedPoint {
                scenario: point.scenario.name().to_string(),
                label: point.label.clone(),
                builtin,
                resolved,
                set,
                digest,
            });
        }
        let mut arms = Vec::new();
        for run in &sweep.arms {
            let mut arm = PlannedArm {
                name: run.name.clone(),
                checkpoint: None,
                drs_checkpoint: None,
                init_seed: None,
                profile: None,
            };
            match &run.input {
                ArmInput::Plain => {}
                ArmInput::Checkpoint(path) => {
                    arm.checkpoint = Some(inputs.checkpoint(&format!("checkpoint-{}", run.name), path)?)
                }
                ArmInput::DrsCheckpoint(path) => {
                    arm.drs_checkpoint = Some(inputs.checkpoint(&format!("checkpoint-{}", run.name), path)?)
                }
                ArmInput::InitSeed(seed) => arm.init_seed = Some(*seed),
                ArmInput::Profile(path) => arm.profile = Some(inputs.file(&format!("profile-{}", run.name), path)?),
            }
            arms.push(arm);
        }
        let agmarl_config = sweep
            .agmarl_config
            .as_deref()
            .map(|p| inputs.file("agmarl-config", p))
            .transpose()?;
        let mut train = Vec::new();
        for run in &sweep.train {
            let mut scenarios = Vec::new();
            for s in &run.scenarios {
                scenarios.push(inputs.scenario(s)?);
            }
            let config = match run.config.as_deref() {
                Some(p) => Some(inputs.file("train-config", p)?),
                None => None,
            };
            train.push(PlannedTrain {
                variant: run.variant.clone(),
                seed: run.seed,
                scenarios,
                episodes: run.episodes,
                envs: run.envs,
                config,
            });
        }
        let mut plan = Plan {
            format: PLAN_FORMAT,
            sweep_id: String::new(),
            name: sweep.name.clone(),
            program,
            points,
            arms,
            seeds: sweep.seeds.clone(),
            agmarl_config,
            train,
        };
        plan.sweep_id = short_digest(&serde_json::to_value(&plan).while_doing(|| "writing the plan".into())?);
        let text = serde_json::to_string_pretty(&plan).while_doing(|| "writing the plan".into())?;
        let mut files = inputs.files;
        files.insert(PLAN_FILE.to_string(), text.into_bytes());
        Ok((plan, files))
    }

    /// Reads the plan in `dir`, checks that it is whole (its inputs there with their digests) and that
    /// `program` is the one that made it: another program's cells would have other ids.
    pub fn read(dir: &Path, program: &Program) -> Result<Plan> {
        Self::read_made_by(dir, Some(program))
    }

    /// [`Plan::read`], with the program that made it checked only when `program` is given: deleting a sweep's
    /// objects from its cluster needs no cell id.
    pub fn read_made_by(dir: &Path, program: Option<&Program>) -> Result<Plan> {
        let path = dir.join(PLAN_FILE);
        let text = schedlab_core::input::read_bounded_string(&path, 64 << 20)
            .map_err(|e| input(format!("{}: {e}: not a sweep's plan", path.display())))?;
        let plan: Plan = serde_json::from_str(&text).map_err(|e| input(format!("{}: {e}", path.display())))?;
        if plan.format != PLAN_FORMAT {
            return Err(input(format!(
                "{}: format {} (this program reads {PLAN_FORMAT})",
                path.display(),
                plan.format
            )));
        }
        if let Some(program) = program
            && &plan.program != program
        {
            return Err(input(format!(
                "{}: made by {}, and this is {program}: its cells' ids name the program that runs them; run it with \
                 that program, or start a new sweep",
                path.display(),
                plan.program
            )));
        }
        for input_file in plan.inputs() {
            let file = dir.join(&input_file.key);
            let found = schedlab_core::digest::file_sha256(&file)
                .map_err(|e| input(format!("{}: {e} (the plan lists it)", file.display())))?;
            if found != input_file.sha256 {
                return Err(input(format!(
                    "{}: its SHA-256 is {found}, and the plan says {}: changed after the plan was made",
                    file.display(),
                    input_file.sha256
                )));
            }
        }
        Ok(plan)
    }

    /// Every file the plan carries.
    pub fn inputs(&self) -> Vec<&PlanInput> {
        let mut out: Vec<&PlanInput> = Vec::new();
        out.extend(self.points.iter().filter_map(|p| p.resolved.as_ref()));
        for arm in &self.arms {
            out.extend(
                [&arm.checkpoint, &arm.drs_checkpoint, &arm.profile]
                    .into_iter()
                    .flatten(),
            );
        }
        out.extend(self.agmarl_config.iter());
        for run in &self.train {
            out.extend(run.scenarios.iter());
            out.extend(run.config.iter());
        }
        out
    }

    pub fn scenario_cells(&self) -> usize {
        self.points.len() * self.arms.len() * self.seeds.len()
    }

    pub fn len(&self) -> usize {
        self.scenario_cells() + self.train.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cell `index`, or None past the last.
    pub fn cell(&self, index: usize) -> Option<Cell> {
        let scenario_cells = self.scenario_cells();
        let work = if index < scenario_cells {
            let seeds = self.seeds.len();
            let per_point = self.arms.len() * seeds;
            CellWork::Scenario {
                point: index / per_point,
                arm: (index % per_point) / seeds,
                seed: self.seeds[index % seeds],
            }
        } else {
            let run = index - scenario_cells;
            if run >= self.train.len() {
                return None;
            }
            CellWork::Train { run }
        };
        Some(Cell {
            index,
            id: self.cell_id(&work),
            work,
        })
    }

    pub fn cells(&self) -> impl Iterator<Item = Cell> + '_ {
        (0..self.len()).filter_map(|i| self.cell(i))
    }

    /// The id of what `work` runs: digests of its scenario and inputs, the arm, the seed and the program.
    fn cell_id(&self, work: &CellWork) -> String {
        let value = match *work {
            CellWork::Scenario { point, arm, seed } => {
                let a = &self.arms[arm];
                let config = self
                    .agmarl_config
                    .as_ref()
                    .filter(|_| scheduler::agmarl::AGMARL_ARMS.contains(&a.name.as_str()));
                serde_json::json!({
                    "program": self.program,
                    "scenario": self.points[point].digest,
                    "arm": a.name,
                    "checkpoint": a.checkpoint.as_ref().map(|c| &c.sha256),
                    "drs_checkpoint": a.drs_checkpoint.as_ref().map(|c| &c.sha256),
                    "init_seed": a.init_seed,
                    "profile": a.profile.as_ref().map(|c| &c.sha256),
                    "agmarl_config": config.map(|c| &c.sha256),
                    "seed": seed,
                })
            }
            CellWork::Train { run } => {
                let t = &self.train[run];
                serde_json::json!({
                    "program": self.program,
                    "train": t.variant,
                    "seed": t.seed,
                    "scenarios": t.scenarios.iter().map(|s| &s.sha256).collect::<Vec<_>>(),
                    "episodes": t.episodes,
                    "envs": t.envs,
                    "config": t.config.as_ref().map(|c| &c.sha256),
                })
            }
        };
        short_digest(&value)
    }

    /// The command line (after the program's name) that runs `cell` with the plan unpacked in `plan_dir`,
    /// writing its folder at `out`: `schedlab scenario …` or `schedlab train …`, as a user would type it.
    pub fn command(&self, cell: &Cell, plan_dir: &Path, out: &Path) -> Vec<String> {
        let at = |i: &PlanInput| plan_dir.join(&i.key).display().to_string();
        let mut args: Vec<String> = Vec::new();
        match cell.work {
            CellWork::Scenario { point, arm, seed } => {
                let p = &self.points[point];
                let a = &self.arms[arm];
                args.push("scenario".into());
                match (&p.builtin, &p.resolved) {
                    (Some(name), _) => args.push(name.clone()),
                    (None, Some(resolved)) => args.push(at(resolved)),
                    (None, None) => args.push(p.scenario.clone()),
                }
                for set in &p.set {
                    args.extend(["--set".into(), set.clone()]);
                }
                let arm_flag = match &a.profile {
                    Some(file) => format!("profile:{}={}", a.name, at(file)),
                    None => a.name.clone(),
                };
                args.extend(["--arms".into(), arm_flag]);
                args.extend(["--first-seed".into(), seed.to_string(), "--seeds".into(), "1".into()]);
                // the sweep's report is written over every cell at once
                args.extend(["--jobs".into(), "1".into(), "--no-report".into()]);
                if let Some(c) = &a.checkpoint {
                    args.extend(["--checkpoint".into(), at(c)]);
                }
                if let Some(c) = &a.drs_checkpoint {
                    args.extend(["--drs-checkpoint".into(), at(c)]);
                }
                if let Some(s) = a.init_seed {
                    args.extend(["--init-seed".into(), s.to_string()]);
                }
                if let Some(c) = &self.agmarl_config
                    && scheduler::agmarl::AGMARL_ARMS.contains(&a.name.as_str())
                {
                    args.extend(["--agmarl-config".into(), at(c)]);
                }
            }
            CellWork::Train { run } => {
                let t = &self.train[run];
                args.push("train".into());
                args.extend([
                    "--variant".into(),
                    t.variant.clone(),
                    "--seed".into(),
                    t.seed.to_string(),
                ]);
                args.extend([
                    "--episodes".into(),
                    t.episodes.to_string(),
                    "--envs".into(),
                    t.envs.to_string(),
                ]);
                for s in &t.scenarios {
                    args.extend(["--scenario".into(), at(s)]);
                }
                if let Some(c) = &t.config {
                    args.extend(["--config".into(), at(c)]);
                }
            }
        }
        args.extend(["--out".into(), out.display().to_string()]);
        args
    }

    /// One line saying what `cell` runs, for status and errors.
    pub fn describe(&self, cell: &Cell) -> String {
        match cell.work {
            CellWork::Scenario { point, arm, seed } => {
                let p = &self.points[point];
                let a = &self.arms[arm];
                let mut what = p.scenario.clone();
                if !p.set.is_empty() {
                    what.push_str(&format!(" [{}]", p.set.join(", ")));
                }
                let mut arm_text = a.name.clone();
                if let Some(c) = &a.checkpoint.as_ref().or(a.drs_checkpoint.as_ref()) {
                    arm_text.push_str(&format!(" ({})", c.key));
                }
                if let Some(s) = a.init_seed {
                    arm_text.push_str(&format!(" (init seed {s})"));
                }
                format!("{what} · {arm_text} · seed {seed}")
            }
            CellWork::Train { run } => {
                let t = &self.train[run];
                format!("train {} · seed {} · {} episodes", t.variant, t.seed, t.episodes)
            }
        }
    }

    /// Where the plan's inputs are, as a path a pod or this machine reads them at.
    pub fn input_path(plan_dir: &Path, input: &PlanInput) -> PathBuf {
        plan_dir.join(&input.key)
    }
}
