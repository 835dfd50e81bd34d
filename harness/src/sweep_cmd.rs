//! `schedlab sweep`: run a sweep file's cells (scenarios × arms × seeds ×
//! checkpoints, and training runs) into one sweep folder, resumably; see
//! each cell's state; run one cell of a plan, as an executor does.

use crate::cli::MAX_JOBS;
use crate::exit::InputError;
use crate::out::outln;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use schedlab_runner::sweep::folder::{CellState, SweepFolder};
use schedlab_runner::sweep::local::LocalExecutor;
use schedlab_runner::sweep::{Cell, Plan, Program};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: SweepCommand,
}

#[derive(Debug, Subcommand)]
pub enum SweepCommand {
    /// Run every cell of a sweep file into a new sweep folder (docs: "Sweeps").
    Run(RunArgs),
    /// Each cell's state in a sweep folder: done, failed (with why), started, pending.
    Status(StatusArgs),
    /// Run the cells of a sweep folder that are not done: pending, stopped or failed ones.
    Resume(ResumeArgs),
    /// Run one cell of a plan into a folder: what an executor runs for a cell.
    #[command(hide = true)]
    Cell(CellArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The sweep file (YAML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The sweep folder to make (must not exist, or be empty). Default: runs/sweep-<name>-<time>.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Cells at once, each a process of its own. Default: the machine's cores.
    #[arg(long)]
    pub jobs: Option<usize>,

    /// Print the cells and what each runs; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The sweep folder.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// One line per cell, done ones included.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The sweep folder.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Cells at once. Default: the machine's cores.
    #[arg(long)]
    pub jobs: Option<usize>,
}

#[derive(Debug, Args)]
pub struct CellArgs {
    /// The plan's folder (plan.json and its inputs).
    #[arg(long, value_name = "DIR")]
    pub plan: PathBuf,

    /// The cell's index in the plan.
    #[arg(long)]
    pub index: usize,

    /// The folder to write the cell's run into (must not exist, or be empty).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: SweepArgs) -> Result<()> {
    match args.command {
        SweepCommand::Run(a) => run_sweep(a),
        SweepCommand::Status(a) => status(a),
        SweepCommand::Resume(a) => resume(a),
        SweepCommand::Cell(a) => cell(a),
    }
}

fn program() -> Program {
    Program::of(crate::build_info::current())
}

fn jobs(given: Option<usize>) -> Result<usize> {
    match given {
        Some(0) => bail!(InputError("--jobs 0: give at least 1".into())),
        Some(n) if n > MAX_JOBS => bail!(InputError(format!("--jobs {n}: give 1..={MAX_JOBS}"))),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS))),
    }
}

fn run_sweep(args: RunArgs) -> Result<()> {
    let jobs = jobs(args.jobs)?;
    let sweep = schedlab_runner::sweep::file::read(&args.file)?;
    let (plan, files) = Plan::build(&sweep, program())?;
    if args.dry_run {
        outln!(
            "Dry run of `schedlab sweep run {}`: nothing is executed, nothing is written.",
            args.file.display()
        )?;
        outln!(
            "Sweep {} ({}): {} cells, {} input files ({} bytes in all), by {}",
            plan.name,
            plan.sweep_id,
            plan.len(),
            files.len(),
            files.values().map(Vec::len).sum::<usize>(),
            plan.program
        )?;
        for cell in plan.cells() {
            outln!("  {:>5}  {}  {}", cell.index, cell.id, plan.describe(&cell))?;
        }
        return Ok(());
    }
    let out = args.out.clone().unwrap_or_else(|| default_out(&plan.name));
    let folder = SweepFolder::create(&out, &sweep.text, &plan, &files)?;
    let _lock = folder.lock()?;
    let cells: Vec<Cell> = plan.cells().collect();
    play(&folder, &plan, cells, jobs)
}

fn resume(args: ResumeArgs) -> Result<()> {
    let jobs = jobs(args.jobs)?;
    let (folder, plan) = SweepFolder::open(&args.dir, &program())?;
    let _lock = folder.lock()?;
    let cells: Vec<Cell> = folder
        .states(&plan)
        .into_iter()
        .filter(|(_, s)| *s != CellState::Done)
        .map(|(c, _)| c)
        .collect();
    if cells.is_empty() {
        folder.write_state(&plan)?;
        outln!("Every cell of {} is done: nothing to resume.", args.dir.display())?;
        return Ok(());
    }
    play(&folder, &plan, cells, jobs)
}

/// Runs `cells` here and says how the sweep stands.
fn play(folder: &SweepFolder, plan: &Plan, cells: Vec<Cell>, jobs: usize) -> Result<()> {
    let interrupt = provisioning::interrupt::Interrupt::install()?;
    let flag = interrupt.flag();
    let program = std::env::current_exe().context("finding the schedlab executable")?;
    let executor = LocalExecutor {
        program,
        jobs,
        stop: &flag,
    };
    tracing::info!(cells = cells.len(), jobs, "running sweep {}", plan.name);
    let progress = ProgressBar::new(cells.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} cells {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let outcome = executor.run(folder, plan, cells, &progress);
    progress.finish_and_clear();
    let state = folder.write_state(plan)?;
    let outcome = outcome?;
    let dir = folder.root.display();
    for (cell, failure) in &outcome.failed {
        crate::out::noteln!("cell {} ({}) failed: {}", cell.id, plan.describe(cell), failure.reason);
    }
    outln!(
        "Sweep {} ({}): {} of {} cells done, {} failed, {} not run",
        plan.name,
        plan.sweep_id,
        state.done,
        state.cells,
        state.failed,
        state.pending
    )?;
    outln!("Sweep folder: {dir}")?;
    if state.complete {
        if plan.scenario_cells() > 0 {
            outln!("Report: schedlab report {dir}")?;
        }
        return Ok(());
    }
    if outcome.stopped > 0 {
        bail!(
            "stopped with {} cells not run: `schedlab sweep resume {dir}` runs them",
            state.pending
        );
    }
    bail!(
        "{} cells failed: `schedlab sweep status {dir}` says why, and `schedlab sweep resume {dir}` runs them again",
        state.failed
    )
}

fn status(args: StatusArgs) -> Result<()> {
    let (folder, plan) = SweepFolder::open(&args.dir, &program())?;
    let states = folder.states(&plan);
    let count = |w: &str| states.iter().filter(|(_, s)| s.word() == w).count();
    outln!(
        "Sweep {} ({}) by {}: {} cells: {} done, {} failed, {} started, {} pending",
        plan.name,
        plan.sweep_id,
        plan.program,
        states.len(),
        count("done"),
        count("failed"),
        count("started"),
        count("pending")
    )?;
    for (cell, state) in &states {
        if !args.all && matches!(state, CellState::Done | CellState::Pending) {
            continue;
        }
        let why = match state {
            CellState::Failed(f) => format!(" — attempt {}: {}", f.attempts, f.reason),
            CellState::Started => " — a work folder is here: running, or stopped (resume runs it again)".to_string(),
            _ => String::new(),
        };
        outln!(
            "  {:>5}  {}  {:<8} {}{why}",
            cell.index,
            cell.id,
            state.word(),
            plan.describe(cell)
        )?;
    }
    Ok(())
}

/// One cell of a plan, run in this process as its command line says.
fn cell(args: CellArgs) -> Result<()> {
    let plan = Plan::read(&args.plan, &program())?;
    let Some(cell) = plan.cell(args.index) else {
        bail!(InputError(format!(
            "--index {}: the plan has {} cells (0..{})",
            args.index,
            plan.len(),
            plan.len()
        )));
    };
    let command = plan.command(&cell, &args.plan, &args.out);
    tracing::info!(cell = %cell.id, "{}", plan.describe(&cell));
    let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(
        std::iter::once("schedlab".to_string()).chain(command.iter().cloned()),
    )
    .with_context(|| format!("cell {}: the plan's command line {command:?}", cell.id))?;
    crate::dispatch(cli.command)
}

fn default_out(name: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    Path::new("runs").join(format!("sweep-{safe}-{}", jiff::Zoned::now().strftime("%Y%m%d-%H%M%S")))
}
