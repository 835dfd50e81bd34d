//! The local executor: cells run on this machine, `jobs` at a time, each as
//! a child process of the same program running the cell's command line
//! (`schedlab scenario …`, `schedlab train …`). A child per cell is what a
//! pod of the Kubernetes executor runs too, so both give the same folders;
//! and a cell that fails, panics or runs out of memory fails alone.

use crate::Result;
use crate::sweep::folder::{CellState, Failure, SweepFolder};
use crate::sweep::plan::{Cell, Plan};
use indicatif::ProgressBar;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How cells run here.
#[derive(Debug)]
pub struct LocalExecutor<'a> {
    /// the schedlab program each cell runs
    pub program: PathBuf,
    /// cells at once
    pub jobs: usize,
    /// raised on Ctrl-C: no cell starts after it, and running ones are stopped
    pub stop: &'a AtomicBool,
}

/// What one pass over the cells did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub done: usize,
    pub failed: Vec<(Cell, Failure)>,
    /// cells left pending because the pass was stopped
    pub stopped: usize,
}

/// How long a stopped cell's child has to end by itself (a Ctrl-C at the terminal reaches it too) before it is
/// killed; its work folder is discarded either way, and the cell runs again on resume.
const STOP_GRACE: Duration = Duration::from_secs(2);

impl LocalExecutor<'_> {
    /// Runs `cells` of `plan` into `folder`, with `progress` ticking once per cell.
    pub fn run(&self, folder: &SweepFolder, plan: &Plan, cells: Vec<Cell>, progress: &ProgressBar) -> Result<Outcome> {
        let root = std::path::absolute(&folder.root)
            .map_err(|e| crate::error::input(format!("{}: {e}", folder.root.display())))?;
        let folder = SweepFolder::at(&root);
        let queue = Mutex::new(cells.into_iter().collect::<VecDeque<_>>());
        let outcome = Mutex::new(Outcome::default());
        let errors: Mutex<Vec<crate::RunnerError>> = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..self.jobs.max(1) {
                scope.spawn(|| {
                    loop {
                        if self.stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let Some(cell) = queue.lock().map_or(None, |mut q| q.pop_front()) else {
                            break;
                        };
                        progress.set_message(plan.describe(&cell));
                        match self.run_cell(&folder, plan, &cell) {
                            Ok(CellEnd::Done) => outcome.lock().map(|mut o| o.done += 1).unwrap_or(()),
                            Ok(CellEnd::Failed(f)) => {
                                outcome.lock().map(|mut o| o.failed.push((cell, f))).unwrap_or(())
                            }
                            Ok(CellEnd::Stopped) => outcome.lock().map(|mut o| o.stopped += 1).unwrap_or(()),
                            Err(e) => {
                                if let Ok(mut list) = errors.lock() {
                                    list.push(e);
                                }
                                self.stop.store(true, Ordering::SeqCst);
                            }
                        }
                        progress.inc(1);
                    }
                });
            }
        });
        if let Some(e) = errors
            .into_inner()
            .ok()
            .and_then(|mut l| (!l.is_empty()).then(|| l.remove(0)))
        {
            return Err(e);
        }
        let mut outcome = outcome
            .into_inner()
            .map_err(|_| crate::RunnerError::Failed("a sweep worker panicked".into()))?;
        outcome.stopped += queue.into_inner().map(|q| q.len()).unwrap_or(0);
        Ok(outcome)
    }

    fn run_cell(&self, folder: &SweepFolder, plan: &Plan, cell: &Cell) -> Result<CellEnd> {
        use crate::error::While;
        if folder.state_of(cell) == CellState::Done {
            return Ok(CellEnd::Done);
        }
        let work = folder.work_dir(cell);
        // a stopped attempt's leftovers, made by this sweep
        if work.exists() {
            std::fs::remove_dir_all(&work).while_doing(|| format!("removing {}", work.display()))?;
        }
        let log_path = folder.log_file(cell);
        let log = std::fs::File::create(&log_path).while_doing(|| format!("creating {}", log_path.display()))?;
        let log_err = log
            .try_clone()
            .while_doing(|| format!("opening {}", log_path.display()))?;
        let args = plan.command(cell, &folder.plan_dir(), &work);
        tracing::debug!(cell = %cell.id, ?args, "running a cell");
        let mut child = Command::new(&self.program)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .while_doing(|| format!("starting {}", self.program.display()))?;
        let mut stopping_since = None;
        let status = loop {
            if let Some(status) = child
                .try_wait()
                .while_doing(|| format!("waiting for cell {}", cell.id))?
            {
                break status;
            }
            if self.stop.load(Ordering::SeqCst) {
                let since = *stopping_since.get_or_insert_with(std::time::Instant::now);
                if since.elapsed() > STOP_GRACE {
                    let _ = child.kill();
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        if self.stop.load(Ordering::SeqCst) && !status.success() {
            remove_quietly(&work);
            return Ok(CellEnd::Stopped);
        }
        let reason = if status.success() {
            match folder.accept(cell, &work) {
                Ok(()) => return Ok(CellEnd::Done),
                Err(e) => format!("its folder was refused: {e}"),
            }
        } else {
            format!("{status}: {}", last_lines(&log_path, 3))
        };
        remove_quietly(&work);
        Ok(CellEnd::Failed(folder.record_failure(cell, reason)?))
    }
}

enum CellEnd {
    Done,
    Failed(Failure),
    Stopped,
}

fn remove_quietly(dir: &Path) {
    if let Err(e) = std::fs::remove_dir_all(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("could not remove {}: {e}", dir.display());
    }
}

/// The last `n` non-empty lines of a log, joined, for a failure's reason.
fn last_lines(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = &lines[lines.len().saturating_sub(n)..];
    if tail.is_empty() {
        format!("no output (see {})", path.display())
    } else {
        tail.join(" / ")
    }
}
