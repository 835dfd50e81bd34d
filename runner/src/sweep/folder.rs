//! The sweep folder: the plan, each accepted cell's folder, and what each
//! failed attempt left to say why. It says complete only when every cell is.
//!
//! ```text
//! SWEEP/sweep.yaml        the sweep file as given
//! SWEEP/plan/             plan.json and every input it names
//! SWEEP/cells/<id>/       a cell's folder, accepted (a run folder, or a training folder)
//! SWEEP/work/<id>/        a cell being run here
//! SWEEP/logs/<id>.log     the output of the cell's last attempt here
//! SWEEP/failed/<id>.json  why its last attempt failed
//! SWEEP/sweep.json        the sweep's state: cells done, failed, pending; complete
//! SWEEP/INCOMPLETE        present until every cell is done
//! SWEEP/cells.csv         one row per cell and metric, once complete
//! ```

use crate::Result;
use crate::error::{While, input};
use crate::sweep::plan::{Cell, CellWork, Plan, PlanFiles, Program};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

pub const SWEEP_FILE: &str = "sweep.yaml";
pub const PLAN_DIR: &str = "plan";
pub const CELLS_DIR: &str = "cells";
pub const WORK_DIR: &str = "work";
pub const LOGS_DIR: &str = "logs";
pub const FAILED_DIR: &str = "failed";
pub const STATE_FILE: &str = "sweep.json";
pub const INCOMPLETE_MARKER: &str = "INCOMPLETE";
pub const LOCK_FILE: &str = ".lock";

/// A sweep folder.
#[derive(Debug, Clone)]
pub struct SweepFolder {
    pub root: PathBuf,
}

/// Why a cell's last attempt failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub cell: String,
    pub index: usize,
    pub attempts: u32,
    pub reason: String,
    pub at: jiff::Timestamp,
}

/// Where a cell stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellState {
    Pending,
    /// its work folder is here: being run, or left by a run that was stopped
    Started,
    Failed(Failure),
    Done,
}

impl CellState {
    pub fn word(&self) -> &'static str {
        match self {
            CellState::Pending => "pending",
            CellState::Started => "started",
            CellState::Failed(_) => "failed",
            CellState::Done => "done",
        }
    }
}

/// The sweep's state as `sweep.json` says it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepState {
    pub sweep_id: String,
    pub name: String,
    pub program: Program,
    pub cells: usize,
    pub done: usize,
    pub failed: usize,
    pub pending: usize,
    pub complete: bool,
    pub updated_at: jiff::Timestamp,
}

/// Holds the sweep folder for one process at a time; released when dropped.
#[derive(Debug)]
pub struct SweepLock {
    _file: fs::File,
}

impl SweepFolder {
    pub fn at(root: &Path) -> SweepFolder {
        SweepFolder {
            root: root.to_path_buf(),
        }
    }

    /// Makes a new sweep folder at `root` (which must not exist, or be empty): the sweep file as given, and the
    /// plan built from it ([`Plan::build`]) with its files.
    pub fn create(root: &Path, sweep_text: &str, plan: &Plan, files: &PlanFiles) -> Result<SweepFolder> {
        results::run_folder::RunFolder::preflight(root)?;
        let folder = SweepFolder::at(root);
        for dir in [PLAN_DIR, CELLS_DIR, WORK_DIR, LOGS_DIR, FAILED_DIR] {
            fs::create_dir_all(root.join(dir)).while_doing(|| format!("creating {}", root.join(dir).display()))?;
        }
        results::run_folder::write_atomic(&root.join(INCOMPLETE_MARKER), b"the sweep has cells not done\n")?;
        results::run_folder::write_atomic(&root.join(SWEEP_FILE), sweep_text.as_bytes())?;
        crate::sweep::plan::write_files(&folder.plan_dir(), files)?;
        folder.write_state(plan)?;
        Ok(folder)
    }

    /// Opens an existing sweep folder and its plan, made by `program`.
    pub fn open(root: &Path, program: &Program) -> Result<(SweepFolder, Plan)> {
        Self::open_made_by(root, Some(program))
    }

    /// [`SweepFolder::open`], by whichever program made the plan when `program` is None.
    pub fn open_made_by(root: &Path, program: Option<&Program>) -> Result<(SweepFolder, Plan)> {
        if !root.join(PLAN_DIR).join(crate::sweep::plan::PLAN_FILE).is_file() {
            return Err(input(format!(
                "{}: not a sweep folder (no {PLAN_DIR}/{}): `schedlab sweep run FILE --out DIR` makes one",
                root.display(),
                crate::sweep::plan::PLAN_FILE
            )));
        }
        let folder = SweepFolder::at(root);
        let plan = Plan::read_made_by(&folder.plan_dir(), program)?;
        Ok((folder, plan))
    }

    /// Takes the folder for this process, or says who has it.
    pub fn lock(&self) -> Result<SweepLock> {
        let path = self.root.join(LOCK_FILE);
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .while_doing(|| format!("opening {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(SweepLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => Err(input(format!(
                "{}: another schedlab is running this sweep; wait for it, or stop it first",
                self.root.display()
            ))),
            Err(fs::TryLockError::Error(e)) => Err(e).while_doing(|| format!("locking {}", path.display())),
        }
    }

    pub fn plan_dir(&self) -> PathBuf {
        self.root.join(PLAN_DIR)
    }

    pub fn cell_dir(&self, cell: &Cell) -> PathBuf {
        self.root.join(CELLS_DIR).join(&cell.id)
    }

    pub fn work_dir(&self, cell: &Cell) -> PathBuf {
        self.root.join(WORK_DIR).join(&cell.id)
    }

    pub fn log_file(&self, cell: &Cell) -> PathBuf {
        self.root.join(LOGS_DIR).join(format!("{}.log", cell.id))
    }

    fn failure_file(&self, cell: &Cell) -> PathBuf {
        self.root.join(FAILED_DIR).join(format!("{}.json", cell.id))
    }

    pub fn state_of(&self, cell: &Cell) -> CellState {
        if self.cell_dir(cell).is_dir() {
            return CellState::Done;
        }
        if let Some(failure) = self.failure(cell) {
            return CellState::Failed(failure);
        }
        if self.work_dir(cell).exists() {
            return CellState::Started;
        }
        CellState::Pending
    }

    pub fn failure(&self, cell: &Cell) -> Option<Failure> {
        let text = fs::read_to_string(self.failure_file(cell)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Records a failed attempt of `cell` (counting the earlier ones).
    pub fn record_failure(&self, cell: &Cell, reason: String) -> Result<Failure> {
        let attempts = self.failure(cell).map_or(0, |f| f.attempts) + 1;
        let failure = Failure {
            cell: cell.id.clone(),
            index: cell.index,
            attempts,
            reason,
            at: jiff::Timestamp::now(),
        };
        results::run_folder::write_json(&self.failure_file(cell), "a cell's failure", &failure)?;
        Ok(failure)
    }

    /// Checks the finished folder at `from` as `cell`'s and moves it in place; a folder that does not check out is
    /// refused with the reason.
    pub fn accept(&self, cell: &Cell, from: &Path) -> Result<()> {
        verify_cell_folder(cell, from)?;
        let to = self.cell_dir(cell);
        fs::rename(from, &to).while_doing(|| format!("moving {} to {}", from.display(), to.display()))?;
        let _ = fs::remove_file(self.failure_file(cell));
        Ok(())
    }

    /// Every cell with its state, in plan order.
    pub fn states(&self, plan: &Plan) -> Vec<(Cell, CellState)> {
        plan.cells()
            .map(|cell| {
                let state = self.state_of(&cell);
                (cell, state)
            })
            .collect()
    }

    /// Writes `sweep.json` from the cells' states; the folder is marked complete only when every cell is done.
    pub fn write_state(&self, plan: &Plan) -> Result<SweepState> {
        let states = self.states(plan);
        let count = |w: &str| states.iter().filter(|(_, s)| s.word() == w).count();
        let done = count("done");
        let state = SweepState {
            sweep_id: plan.sweep_id.clone(),
            name: plan.name.clone(),
            program: plan.program.clone(),
            cells: states.len(),
            done,
            failed: count("failed"),
            pending: count("pending") + count("started"),
            complete: done == states.len(),
            updated_at: jiff::Timestamp::now(),
        };
        results::run_folder::write_json(&self.root.join(STATE_FILE), "the sweep's state", &state)?;
        let marker = self.root.join(INCOMPLETE_MARKER);
        if state.complete {
            match fs::remove_file(&marker) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).while_doing(|| format!("removing {}", marker.display()));
                }
                _ => {}
            }
        } else if !marker.exists() {
            results::run_folder::write_atomic(&marker, b"the sweep has cells not done\n")?;
        }
        Ok(state)
    }

    /// The accepted scenario cells' run folders, in plan order.
    pub fn run_folders(&self, plan: &Plan) -> Vec<PathBuf> {
        plan.cells()
            .filter(|c| matches!(c.work, CellWork::Scenario { .. }))
            .map(|c| self.cell_dir(&c))
            .filter(|d| d.is_dir())
            .collect()
    }
}

/// Whether `path` is a sweep folder.
pub fn is_sweep_folder(path: &Path) -> bool {
    path.join(PLAN_DIR).join(crate::sweep::plan::PLAN_FILE).is_file()
}

/// A cell's finished folder: a scenario cell's is a complete run folder whose records match its manifests; a training
/// cell's is complete with its checkpoint matching its sidecar's digest.
pub fn verify_cell_folder(cell: &Cell, dir: &Path) -> Result<()> {
    match cell.work {
        CellWork::Scenario { .. } => {
            results::run_folder::verify_complete(dir)?;
            Ok(())
        }
        CellWork::Train { .. } => {
            let refuse = |why: String| input(format!("{}: {why}", dir.display()));
            if dir.join(results::run_folder::INCOMPLETE_MARKER).exists() {
                return Err(refuse("the training folder is marked incomplete".into()));
            }
            let weights = dir.join(TRAINED_CHECKPOINT);
            let sidecar = weights.with_extension("json");
            let text = fs::read_to_string(&sidecar).map_err(|e| refuse(format!("{}: {e}", sidecar.display())))?;
            let meta: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| refuse(format!("{}: {e}", sidecar.display())))?;
            let expected = meta
                .get("weights_sha256")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| refuse(format!("{}: no weights_sha256", sidecar.display())))?;
            let found = schedlab_core::digest::file_sha256(&weights)
                .map_err(|e| refuse(format!("{}: {e}", weights.display())))?;
            if expected.trim_start_matches("sha256:") != found {
                return Err(refuse(format!(
                    "{}: its SHA-256 is {found}, and its sidecar says {expected}",
                    weights.display()
                )));
            }
            Ok(())
        }
    }
}

/// The checkpoint a training folder holds (`schedlab train --out`).
pub const TRAINED_CHECKPOINT: &str = "checkpoint.safetensors";
