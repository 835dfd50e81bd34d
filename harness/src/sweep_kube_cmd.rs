//! `schedlab sweep … --on kube`: a sweep's cells as Jobs on any cluster
//! (schedlab_runner::sweep::kube), followed until every cell is fetched or
//! failed for good; Ctrl-C leaves the Jobs running.

use crate::exit::InputError;
use crate::out::outln;
use anyhow::{Context, Result, bail};
use clap::Args;
use provisioning::sweep_job::{self, JobShape};
use schedlab_runner::sweep::folder::{CellState, SweepFolder};
use schedlab_runner::sweep::kube::{self as exec, KubeRecord, KubeSettings, PodState};
use schedlab_runner::sweep::plan::PlanFiles;
use schedlab_runner::sweep::{Cell, Plan};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where and how a sweep's cells run on a cluster (`--on kube`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Kubernetes executor (--on kube)")]
pub struct KubeArgs {
    /// The kubeconfig (default: KUBECONFIG, else ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context (default: its current one).
    #[arg(long)]
    pub context: Option<String>,

    /// The namespace of the sweep's Jobs.
    #[arg(long, default_value = "default")]
    pub namespace: String,

    /// The image the cell pods run (holding this program at /usr/local/bin/schedlab), from a registry the
    /// cluster pulls from (GKE: Artifact Registry).
    #[arg(long, value_name = "REF", conflicts_with_all = ["import_image", "kind"])]
    pub image: Option<String>,

    /// A kind cluster: the image is built from this program and loaded into its nodes (`kind load
    /// image-archive`), and its context `kind-NAME` is used unless --context is given.
    #[arg(long, value_name = "NAME", conflicts_with = "import_image")]
    pub kind: Option<String>,

    /// Build the image from this program and import it into the real nodes of this machine's local control plane
    /// (`schedlab cluster up --local --real-nodes N`); the pods never pull it.
    #[arg(long)]
    pub import_image: bool,

    /// The local control plane's state folder, for --import-image (default: the one `cluster up --local` uses).
    #[arg(long, value_name = "DIR", requires = "import_image")]
    pub local_state: Option<PathBuf>,

    /// Cell pods at once (Kubernetes 1.29 and later; older servers get a Job per cell, which run as room allows).
    #[arg(long, default_value_t = 4)]
    pub parallelism: u32,

    /// Retries of a cell before it counts as failed.
    #[arg(long, default_value_t = 2)]
    pub retries: u32,

    /// Each cell pod's CPU request, e.g. 1 or 500m.
    #[arg(long, default_value = "1")]
    pub cpu: String,

    /// Each cell pod's memory request and limit, e.g. 2Gi.
    #[arg(long, default_value = "2Gi")]
    pub memory: String,

    /// Kueue's LocalQueue for the Jobs (the kueue.x-k8s.io/queue-name label); Kueue is never required.
    #[arg(long, value_name = "NAME")]
    pub queue: Option<String>,

    /// A ReadWriteMany PersistentVolumeClaim the cells write their folders to, instead of streaming them back
    /// through their pods' logs (large cells; `schedlab sweep fetch --from` takes them).
    #[arg(long, value_name = "NAME")]
    pub volume_claim: Option<String>,

    /// Run the cell pods only on nodes with this label (KEY=VALUE; repeatable).
    #[arg(long = "node-selector", value_name = "KEY=VALUE")]
    pub node_selector: Vec<String>,

    /// Return once the Jobs are created instead of following them.
    #[arg(long)]
    pub detach: bool,
}

impl KubeArgs {
    /// The kubeconfig context: --context, else a kind cluster's, else the kubeconfig's current one.
    fn context(&self) -> Option<String> {
        self.context
            .clone()
            .or_else(|| self.kind.as_ref().map(|name| format!("kind-{name}")))
    }

    fn settings(&self) -> Result<KubeSettings> {
        let cpu = schedlab_core::resources::parse_cpu_milli(&self.cpu)
            .map_err(|e| InputError(format!("--cpu {}: {e}", self.cpu)))?;
        let memory = schedlab_core::resources::parse_memory_bytes(&self.memory)
            .map_err(|e| InputError(format!("--memory {}: {e}", self.memory)))?;
        let mut node_selector = BTreeMap::new();
        for pair in &self.node_selector {
            let Some((k, v)) = pair.split_once('=') else {
                bail!(InputError(format!("--node-selector {pair}: give KEY=VALUE")));
            };
            node_selector.insert(k.to_string(), v.to_string());
        }
        let (image, image_pull_policy) = match (&self.image, self.import_image || self.kind.is_some()) {
            (Some(image), _) => (image.clone(), None),
            (None, true) => (imported_tag(), Some("Never".to_string())),
            (None, false) => bail!(InputError(
                "--on kube: give --image REF (an image holding this program at /usr/local/bin/schedlab), \
                 --kind NAME for a kind cluster, or --import-image on this machine's local control plane with real \
                 nodes"
                    .into()
            )),
        };
        Ok(KubeSettings {
            image,
            image_pull_policy,
            parallelism: self.parallelism,
            retries_per_cell: self.retries,
            cpu_millis: u32::try_from(cpu).map_err(|_| InputError(format!("--cpu {}: too large", self.cpu)))?,
            memory_bytes: memory,
            queue_name: self.queue.clone(),
            volume_claim: self.volume_claim.clone(),
            node_selector,
        })
    }
}

/// The tag of the image built from this program: its revision, so a node never runs another build's cells.
fn imported_tag() -> String {
    let build = crate::build_info::current();
    let revision: String = build
        .git_revision
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    format!("docker.io/schedlab/schedlab:{}-{revision}", build.schedlab_version)
}

/// `sweep run --on kube --dry-run`: the cells and every object, nothing contacted or written.
pub fn dry_run(plan: &Plan, files: PlanFiles, args: &KubeArgs) -> Result<()> {
    let settings = args.settings()?;
    outln!(
        "# cluster: {}, namespace {}",
        match args.context() {
            Some(c) => format!("context {c}"),
            None => "the kubeconfig's current context".into(),
        },
        args.namespace
    )?;
    if let Some(name) = &args.kind {
        let tarball = Path::new("SWEEP/image/schedlab.tar");
        outln!(
            "# the image {} is built from this program ({})",
            settings.image,
            tarball.display()
        )?;
        outln!("# then: {}", provisioning::kind::load_archive_command(name, tarball))?;
    }
    if args.import_image {
        outln!(
            "# the image {} is built from this program and imported into each real node's containerd",
            settings.image
        )?;
    }
    let spec = exec::spec(plan, files, &args.namespace, &settings, 1, (0..plan.len()).collect())?;
    for shape in [JobShape::Indexed, JobShape::PerCell] {
        let objects = sweep_job::objects(&spec, shape)?;
        outln!(
            "# --- as a cluster of Kubernetes {} runs it ({shape} shape) ---",
            if shape == JobShape::Indexed {
                "1.29 or later"
            } else {
                "before 1.29"
            }
        )?;
        outln!("{}", objects.to_yaml()?)?;
    }
    Ok(())
}

/// `sweep run --on kube`: makes the sweep folder, submits every cell, follows them.
pub fn run(folder: &SweepFolder, plan: &Plan, args: &KubeArgs) -> Result<()> {
    let settings = args.settings()?;
    let context = args.context();
    let cluster = exec::Cluster::connect(args.kubeconfig.as_deref(), context.as_deref())?;
    let shape = cluster.shape()?;
    cluster.preflight(&args.namespace, shape)?;
    let record = KubeRecord {
        kubeconfig: args.kubeconfig.clone(),
        context,
        namespace: args.namespace.clone(),
        settings,
        attempts: Vec::new(),
    };
    if args.import_image {
        import_image(args.local_state.as_deref(), &record.settings.image, folder)?;
    }
    if let Some(name) = &args.kind {
        load_into_kind(name, &record.settings.image, folder)?;
    }
    let cells: Vec<usize> = (0..plan.len()).collect();
    submit(&cluster, folder, plan, record, shape, cells)?;
    if args.detach {
        return detached(folder);
    }
    follow(&cluster, folder, plan)
}

fn import_image(state: Option<&Path>, tag: &str, folder: &SweepFolder) -> Result<()> {
    let state = match state {
        Some(dir) => dir.to_path_buf(),
        None => provisioning::local::default_state_dir()?,
    };
    let program = std::env::current_exe().context("finding the schedlab executable")?;
    let dir = folder.root.join("image");
    crate::out::noteln!("building the image {tag} from {}", program.display());
    let tarball = provisioning::kubelets::images::program_image(&program, &dir, tag, "schedlab")?;
    let nodes = provisioning::kubelets::images::import_into_nodes(&state, &tarball)?;
    let _ = std::fs::remove_dir_all(&dir);
    if nodes.is_empty() {
        bail!(InputError(format!(
            "--import-image: no real node runs in the local control plane at {} (`schedlab cluster up --local \
             --real-nodes N`)",
            state.display()
        )));
    }
    crate::out::noteln!("imported {tag} into {}", nodes.join(", "));
    Ok(())
}

fn load_into_kind(name: &str, tag: &str, folder: &SweepFolder) -> Result<()> {
    let program = std::env::current_exe().context("finding the schedlab executable")?;
    let dir = folder.root.join("image");
    crate::out::noteln!("building the image {tag} from {}", program.display());
    let tarball = provisioning::kubelets::images::program_image(&program, &dir, tag, "schedlab")?;
    let loaded = provisioning::external::run(&provisioning::kind::load_archive_command(name, &tarball));
    let _ = std::fs::remove_dir_all(&dir);
    loaded?;
    crate::out::noteln!("loaded {tag} into kind cluster {name}");
    Ok(())
}

fn submit(
    cluster: &exec::Cluster,
    folder: &SweepFolder,
    plan: &Plan,
    mut record: KubeRecord,
    shape: JobShape,
    cells: Vec<usize>,
) -> Result<()> {
    let attempt = record.attempts.iter().map(|a| a.attempt).max().unwrap_or(0) + 1;
    let files = exec::plan_files(folder)?;
    let spec = exec::spec(plan, files, &record.namespace, &record.settings, attempt, cells.clone())?;
    let objects = sweep_job::objects(&spec, shape)?;
    // what is about to be created, the Job shape this server gets included, said before anything is
    for line in objects.plan() {
        crate::out::noteln!("{line}");
    }
    // recorded first: cancel finds what a submission cut short created
    record.attempts.push(exec::Attempt {
        attempt,
        shape: shape.to_string(),
        cells,
        submitted_at: jiff::Timestamp::now(),
    });
    record.write(folder)?;
    cluster.submit(&objects, &record.namespace)?;
    Ok(())
}

fn detached(folder: &SweepFolder) -> Result<()> {
    let dir = folder.root.display();
    outln!(
        "Submitted. `schedlab sweep status {dir}` follows it, `schedlab sweep fetch {dir}` takes the finished cells"
    )?;
    Ok(())
}

/// Follows a submitted sweep: fetches cells as they finish, until every cell is done or has failed for good.
fn follow(cluster: &exec::Cluster, folder: &SweepFolder, plan: &Plan) -> Result<()> {
    let interrupt = provisioning::interrupt::Interrupt::install()?;
    let progress = indicatif::ProgressBar::new(plan.len() as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} cells {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let dir = folder.root.display().to_string();
    let failed = loop {
        let record = KubeRecord::read(folder)?.context("the sweep's kube.json is gone")?;
        let fetched = cluster.fetch(folder, plan, &record, None)?;
        for (index, why) in &fetched.refused {
            crate::out::noteln!("cell {index}: {why}");
        }
        let states = cluster.states(&record, &plan.sweep_id)?;
        let mut done = 0;
        let mut failed = Vec::new();
        let mut open = 0;
        // how many cells are in each state, and the first reason a cell waits for
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut waiting_for: Option<String> = None;
        for cell in plan.cells() {
            if folder.state_of(&cell) == CellState::Done {
                done += 1;
                continue;
            }
            match states.get(&cell.index) {
                Some((_, PodState::Failed { last: true, reason })) => failed.push((cell, reason.clone())),
                Some((_, state)) => {
                    open += 1;
                    *counts.entry(state.word()).or_default() += 1;
                    if let PodState::Waiting(why) = state {
                        waiting_for.get_or_insert_with(|| why.split(':').next().unwrap_or(why).to_string());
                    }
                }
                None => {
                    open += 1;
                    *counts.entry("not started").or_default() += 1;
                }
            }
        }
        progress.set_position(done as u64);
        let mut message: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
        if let Some(why) = waiting_for {
            message.push(format!("waiting for: {why}"));
        }
        if !failed.is_empty() {
            message.push(format!("{} failed", failed.len()));
        }
        progress.set_message(message.join(", "));
        if open == 0 || !fetched.refused.is_empty() && open == fetched.refused.len() {
            break failed;
        }
        if interrupt.is_raised() {
            progress.finish_and_clear();
            folder.write_state(plan)?;
            bail!(
                "stopped following; the Jobs keep running: `schedlab sweep status {dir}` follows them, `schedlab \
                 sweep resume {dir}` fetches them and runs what is missing, `schedlab sweep cancel {dir}` deletes them"
            );
        }
        std::thread::sleep(Duration::from_secs(2));
    };
    progress.finish_and_clear();
    finish(cluster, folder, plan, &failed)
}

fn finish(cluster: &exec::Cluster, folder: &SweepFolder, plan: &Plan, failed: &[(Cell, String)]) -> Result<()> {
    for (cell, reason) in failed {
        folder.record_failure(cell, reason.clone())?;
        crate::out::noteln!("cell {} ({}) failed: {reason}", cell.id, plan.describe(cell));
    }
    let state = folder.write_state(plan)?;
    let dir = folder.root.display();
    outln!(
        "Sweep {} ({}): {} of {} cells done, {} failed",
        plan.name,
        plan.sweep_id,
        state.done,
        state.cells,
        failed.len()
    )?;
    outln!("Sweep folder: {dir}")?;
    if state.complete {
        // every cell is here: the cluster's copies have served
        if let Some(record) = KubeRecord::read(folder)? {
            let jobs = cluster.cancel(&record, &plan.sweep_id)?;
            crate::out::noteln!(
                "deleted the sweep's {jobs} Job(s) and their pods from namespace {}",
                record.namespace
            );
        }
        if plan.scenario_cells() > 0 {
            outln!("Report: schedlab report {dir}")?;
        }
        return Ok(());
    }
    bail!(
        "{} cells did not finish: `schedlab sweep status {dir}` says why, `schedlab sweep resume {dir}` runs them again",
        state.cells - state.done
    )
}

/// `sweep status` of a submitted sweep: each cell not done here, as the cluster has it.
pub fn cluster_lines(folder: &SweepFolder, plan: &Plan, record: &KubeRecord) -> Result<BTreeMap<usize, String>> {
    let cluster = exec::Cluster::connect(record.kubeconfig.as_deref(), record.context.as_deref())?;
    let states = cluster.states(record, &plan.sweep_id)?;
    let mut lines = BTreeMap::new();
    for cell in plan.cells() {
        if folder.state_of(&cell) == CellState::Done {
            continue;
        }
        if let Some((pod, state)) = states.get(&cell.index) {
            lines.insert(cell.index, format!("{} — pod {pod} {}", state.word(), state.why()));
        }
    }
    Ok(lines)
}

/// `sweep fetch`: from the cluster's pods, or from a folder of cell folders (`--from`: a copy of the volume claim's
/// folder, or cells run elsewhere), which needs no cluster.
pub fn fetch(folder: &SweepFolder, plan: &Plan, from: Option<&Path>) -> Result<()> {
    let fetched = match from {
        Some(dir) => {
            if !dir.is_dir() {
                bail!(InputError(format!("--from {}: no such folder", dir.display())));
            }
            exec::fetch_from(folder, plan, dir)?
        }
        None => {
            let record = KubeRecord::read(folder)?.ok_or_else(|| {
                InputError(format!(
                    "{}: the sweep was not submitted to a cluster (no kube.json); --from DIR takes cell folders from \
                     a folder",
                    folder.root.display()
                ))
            })?;
            let cluster = exec::Cluster::connect(record.kubeconfig.as_deref(), record.context.as_deref())?;
            cluster.fetch(folder, plan, &record, None)?
        }
    };
    for (index, why) in &fetched.refused {
        crate::out::noteln!("cell {index}: {why}");
    }
    let state = folder.write_state(plan)?;
    outln!(
        "Fetched {} cells; {} of {} done",
        fetched.accepted,
        state.done,
        state.cells
    )?;
    Ok(())
}

/// `sweep cancel`: deletes the sweep's objects; what was fetched stays.
pub fn cancel(folder: &SweepFolder, plan: &Plan) -> Result<()> {
    let record = KubeRecord::read(folder)?.ok_or_else(|| {
        InputError(format!(
            "{}: the sweep was not submitted to a cluster (no kube.json)",
            folder.root.display()
        ))
    })?;
    let cluster = exec::Cluster::connect(record.kubeconfig.as_deref(), record.context.as_deref())?;
    let jobs = cluster.cancel(&record, &plan.sweep_id)?;
    let state = folder.write_state(plan)?;
    outln!(
        "Deleted {jobs} Job(s) of sweep {} and their pods in namespace {}; {} of {} cells are done here",
        plan.sweep_id,
        record.namespace,
        state.done,
        state.cells
    )?;
    Ok(())
}

/// `sweep resume` of a submitted sweep: fetches what finished, submits every cell neither done nor still in the
/// cluster's hands, and follows.
pub fn resume(folder: &SweepFolder, plan: &Plan, detach: bool) -> Result<()> {
    let record = KubeRecord::read(folder)?.context("the sweep's kube.json")?;
    let cluster = exec::Cluster::connect(record.kubeconfig.as_deref(), record.context.as_deref())?;
    cluster.fetch(folder, plan, &record, None)?;
    let states = cluster.states(&record, &plan.sweep_id)?;
    let missing: Vec<usize> = plan
        .cells()
        .filter(|c| folder.state_of(c) != CellState::Done)
        .filter(|c| match states.get(&c.index) {
            None | Some((_, PodState::Failed { last: true, .. })) => true,
            Some(_) => false,
        })
        .map(|c| c.index)
        .collect();
    if !missing.is_empty() {
        let shape = cluster.shape()?;
        crate::out::noteln!("submitting {} cells again", missing.len());
        submit(&cluster, folder, plan, record, shape, missing)?;
    }
    if detach {
        return detached(folder);
    }
    follow(&cluster, folder, plan)
}
