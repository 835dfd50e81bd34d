//! `schedlab sweep`: run a sweep file's cells (scenarios × arms × seeds ×
//! checkpoints, and training runs) into one sweep folder, resumably; see
//! each cell's state; run one cell of a plan, as an executor does.

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
    Run(Box<RunArgs>),
    /// Each cell's state in a sweep folder: done, failed (with why), started, pending.
    Status(StatusArgs),
    /// Run the cells of a sweep folder that are not done: pending, stopped or failed ones.
    Resume(ResumeArgs),
    /// Take finished cells into a sweep folder: from its pods on a cluster (`--on kube`), or from a folder of cell
    /// folders (`--from`: a copy of a volume claim, or cells run elsewhere), each checked before it is taken.
    Fetch(FetchArgs),
    /// Delete a sweep's Jobs and their pods from its cluster; what was fetched stays.
    Cancel(CancelArgs),
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

    /// Cells at once, each a process of its own (--on local). Default: the machine's cores.
    #[arg(long)]
    pub jobs: Option<usize>,

    /// Where the cells run: this machine (child processes) or a cluster (Kubernetes Jobs, one pod a cell).
    #[arg(long, value_enum, default_value_t = Executor::Local)]
    pub on: Executor,

    /// Print the cells and what each runs (with --on kube, every object it would create); write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub kube: crate::sweep_kube_cmd::KubeArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Executor {
    /// this machine: `--jobs N` cells at once
    Local,
    /// any cluster through a kubeconfig: one pod a cell
    Kube,
}

#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The sweep folder.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// A local copy of the volume claim's folder, for a sweep run with --volume-claim.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The sweep folder.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
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

    /// Cells at once (a sweep run here). Default: the machine's cores.
    #[arg(long)]
    pub jobs: Option<usize>,

    /// A sweep run on a cluster: return once the missing cells are submitted instead of following them.
    #[arg(long)]
    pub detach: bool,
}

#[derive(Debug, Args)]
pub struct CellArgs {
    /// The plan's folder (plan.json and its inputs).
    #[arg(long, value_name = "DIR")]
    pub plan: PathBuf,

    /// The cell's index in the plan. Without it: the JOB_COMPLETION_INDEX-th entry of --cells-file (an Indexed
    /// Job's pod).
    #[arg(long)]
    pub index: Option<usize>,

    /// The plan indexes of the submission, one a line.
    #[arg(long, value_name = "FILE")]
    pub cells_file: Option<PathBuf>,

    /// The folder the cell's folder is written under, as OUT/<cell id>.
    #[arg(long, value_name = "OUT")]
    pub out: PathBuf,

    /// Then print the finished cell's folder to standard output as a framed archive (`schedlab sweep fetch` reads
    /// it from the pod's log).
    #[arg(long)]
    pub stream: bool,
}

pub fn run(args: SweepArgs) -> Result<()> {
    match args.command {
        SweepCommand::Run(a) => run_sweep(*a),
        SweepCommand::Status(a) => status(a),
        SweepCommand::Resume(a) => resume(a),
        SweepCommand::Fetch(a) => {
            let (folder, plan) = SweepFolder::open(&a.dir, &program())?;
            let _lock = folder.lock()?;
            crate::sweep_kube_cmd::fetch(&folder, &plan, a.from.as_deref())
        }
        SweepCommand::Cancel(a) => {
            // a sweep's objects go by its id, whichever build made it
            let (folder, plan) = SweepFolder::open_made_by(&a.dir, None)?;
            crate::sweep_kube_cmd::cancel(&folder, &plan)
        }
        SweepCommand::Cell(a) => cell(a),
    }
}

fn program() -> Program {
    Program::of(crate::build_info::current())
}

fn jobs(given: Option<usize>) -> Result<usize> {
    crate::threads::jobs(given, "cells run", "a process")
}

fn run_sweep(args: RunArgs) -> Result<()> {
    let jobs = jobs(args.jobs)?;
    let sweep = schedlab_runner::sweep::file::read(&args.file)?;
    let (plan, files) = Plan::build(&sweep, program())?;
    if args.on == Executor::Kube && args.jobs.is_some() {
        bail!(InputError(
            "--jobs is for --on local; on a cluster, --parallelism says how many cells run at once".into()
        ));
    }
    if args.on == Executor::Local && args.kube_given() {
        bail!(InputError(
            "the Kubernetes executor's flags (--namespace, --image, …) are for --on kube".into()
        ));
    }
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
        if args.on == Executor::Kube {
            crate::sweep_kube_cmd::dry_run(&plan, files, &args.kube)?;
        }
        return Ok(());
    }
    let out = args.out.clone().unwrap_or_else(|| default_out(&plan.name));
    let folder = SweepFolder::create(&out, &sweep.text, &plan, &files)?;
    let _lock = folder.lock()?;
    if args.on == Executor::Kube {
        return crate::sweep_kube_cmd::run(&folder, &plan, &args.kube);
    }
    let cells: Vec<Cell> = plan.cells().collect();
    play(&folder, &plan, cells, jobs)
}

fn resume(args: ResumeArgs) -> Result<()> {
    let jobs = jobs(args.jobs)?;
    let (folder, plan) = SweepFolder::open(&args.dir, &program())?;
    let _lock = folder.lock()?;
    if schedlab_runner::sweep::kube::KubeRecord::read(&folder)?.is_some() {
        if args.jobs.is_some() {
            bail!(InputError(format!(
                "--jobs: {} runs on a cluster, with the --parallelism it was submitted with",
                args.dir.display()
            )));
        }
        return crate::sweep_kube_cmd::resume(&folder, &plan, args.detach);
    }
    if args.detach {
        bail!(InputError(format!(
            "--detach is for a sweep on a cluster, and {} runs here",
            args.dir.display()
        )));
    }
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
    // a sweep on a cluster: what its pods say about every cell not done here
    let cluster = match schedlab_runner::sweep::kube::KubeRecord::read(&folder)? {
        Some(record) => crate::sweep_kube_cmd::cluster_lines(&folder, &plan, &record)?,
        None => Default::default(),
    };
    for (cell, state) in &states {
        if let Some(line) = cluster.get(&cell.index) {
            outln!("  {:>5}  {}  {}: {line}", cell.index, cell.id, plan.describe(cell))?;
            continue;
        }
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

/// One cell of a plan, run in this process as its command line says, into OUT/<cell id>: written under another name
/// first and moved in place once it checks out, so a retried cell never finds half a folder.
fn cell(args: CellArgs) -> Result<()> {
    use schedlab_runner::sweep::{archive, folder};
    let plan = Plan::read(&args.plan, &program())?;
    let index = cell_index(&args)?;
    let Some(cell) = plan.cell(index) else {
        bail!(InputError(format!(
            "cell index {index}: the plan has {} cells (0..{})",
            plan.len(),
            plan.len()
        )));
    };
    let done = args.out.join(&cell.id);
    if folder::verify_cell_folder(&cell, &done).is_err() {
        let partial = args.out.join(format!(".{}.partial", cell.id));
        if partial.exists() {
            std::fs::remove_dir_all(&partial).with_context(|| format!("removing {}", partial.display()))?;
        }
        if done.exists() {
            std::fs::remove_dir_all(&done).with_context(|| format!("removing {}", done.display()))?;
        }
        let command = plan.command(&cell, &args.plan, &partial);
        tracing::info!(cell = %cell.id, "{}", plan.describe(&cell));
        // the cell's command line as a process of its own, as the local executor runs it: the same program, the
        // same folder
        let program = std::env::current_exe().context("finding the schedlab executable")?;
        let status = std::process::Command::new(&program)
            .args(&command)
            .stdin(std::process::Stdio::null())
            .status()
            .with_context(|| format!("starting {}", program.display()))?;
        if !status.success() {
            bail!(
                "cell {} ({}): `schedlab {}` {status}",
                cell.id,
                plan.describe(&cell),
                command.join(" ")
            );
        }
        folder::verify_cell_folder(&cell, &partial)?;
        std::fs::rename(&partial, &done)
            .with_context(|| format!("moving {} to {}", partial.display(), done.display()))?;
    }
    if args.stream {
        let bytes = archive::pack(&done)?;
        let mut stdout = std::io::stdout().lock();
        archive::write_framed(&cell.id, &bytes, &mut stdout).context("writing the cell's archive")?;
    }
    Ok(())
}

/// The plan index of the cell to run: --index, else the JOB_COMPLETION_INDEX-th line of --cells-file.
fn cell_index(args: &CellArgs) -> Result<usize> {
    let listed = match &args.cells_file {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let list = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.trim().parse::<usize>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| InputError(format!("--cells-file {}: {e}", path.display())))?;
            Some(list)
        }
        None => None,
    };
    match (args.index, listed) {
        (Some(index), Some(list)) if !list.contains(&index) => bail!(InputError(format!(
            "--index {index}: not among the cells of --cells-file"
        ))),
        (Some(index), _) => Ok(index),
        (None, Some(list)) => {
            let position: usize = std::env::var("JOB_COMPLETION_INDEX")
                .map_err(|_| InputError("give --index, or run in an Indexed Job (JOB_COMPLETION_INDEX)".into()))?
                .parse()
                .map_err(|e| InputError(format!("JOB_COMPLETION_INDEX: {e}")))?;
            list.get(position).copied().ok_or_else(|| {
                InputError(format!(
                    "JOB_COMPLETION_INDEX {position}: --cells-file lists {} cells",
                    list.len()
                ))
                .into()
            })
        }
        (None, None) => bail!(InputError("give --index, or --cells-file in an Indexed Job".into())),
    }
}

impl RunArgs {
    /// Whether a flag of the Kubernetes executor was given.
    fn kube_given(&self) -> bool {
        let k = &self.kube;
        k.kubeconfig.is_some()
            || k.context.is_some()
            || k.namespace != "default"
            || k.image.is_some()
            || k.import_image
            || k.kind.is_some()
            || k.queue.is_some()
            || k.volume_claim.is_some()
            || !k.node_selector.is_empty()
            || k.detach
    }
}

fn default_out(name: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    Path::new("runs").join(format!("sweep-{safe}-{}", jiff::Zoned::now().strftime("%Y%m%d-%H%M%S")))
}
