//! `schedlab scenario`: play one scenario on every arm and seed, then compare.

use crate::cli::{ClusterKind, ScenarioArgs};
use crate::exit::InputError;
use crate::explain::RunExplain;
use crate::manifest::{Build, InvocationManifest, RunManifest};
use crate::out::outln;
use crate::report_cmd::REPORT_DIR;
use crate::run_folder::{MANIFEST_FILE, RunFolder};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

const RECORDS_FILE: &str = "records.jsonl";
/// Progress is reported this many times per run.
const PROGRESS_STEPS: u64 = 200;

/// One (arm, seed) pair to play.
#[derive(Debug, Clone)]
struct Job {
    arm: String,
    seed: u64,
}

pub fn run(args: ScenarioArgs) -> Result<()> {
    // Everything the user gave is checked before anything is written.
    let scenario = workloads::load(&args.scenario, &args.set)?;
    let checkpoint = args
        .checkpoint
        .as_deref()
        .map(|path| scheduler::agmarl::checkpoint::load(path).map_err(|e| InputError(format!("--checkpoint: {e}"))))
        .transpose()?;
    let arms = check_arms(&args.arms)?;
    let agmarl_config = args.agmarl_config.as_deref().map(read_agmarl_config).transpose()?;
    let Some(last_seed) = args.first_seed.checked_add(u64::from(args.seeds) - 1) else {
        bail!(InputError(format!(
            "--first-seed {} with --seeds {}: the last seed would pass {} (seeds are FIRST, FIRST+1, ...)",
            args.first_seed,
            args.seeds,
            u64::MAX
        )));
    };
    let seeds: Vec<u64> = (args.first_seed..=last_seed).collect();
    check_records_budget(&scenario, seeds[0], args.max_records_gib)?;
    let out = args.out.clone().unwrap_or_else(|| default_out(scenario.name()));
    if !args.dry_run {
        // before a cluster is connected or provisioned (minutes on kind or GKE)
        RunFolder::preflight(&out)?;
    }
    let jobs_in_parallel = match args.jobs {
        Some(0) => bail!(InputError("--jobs 0: give at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };

    if args.charge_decision_time && args.cluster != ClusterKind::Sim {
        bail!(InputError(format!(
            "--charge-decision-time is for --cluster sim: on {} a decision already takes the time it takes",
            args.cluster.name()
        )));
    }
    check_flags_for_backend(&args)?;
    let provisioned = matches!(args.cluster, ClusterKind::Kind | ClusterKind::Gke);
    if args.dry_run {
        if !provisioned {
            bail!(InputError(format!(
                "--dry-run is for --cluster kind|gke, not {}",
                args.cluster.name()
            )));
        }
        return crate::real_cluster::print_dry_run(&args, &scenario, &arms, &seeds);
    }
    if provisioned {
        crate::real_cluster::check(&args, &scenario, &seeds, &arms)?;
    }
    let real = match args.cluster {
        ClusterKind::Sim => None,
        ClusterKind::Local | ClusterKind::Kube => Some(crate::kube_play::connect(&args)?),
        ClusterKind::Kind | ClusterKind::Gke => Some(crate::real_cluster::connect(&args, &scenario, &seeds)?),
    };
    // Runs on one real cluster would see each other's pods and nodes: one at a time.
    let jobs_in_parallel = if real.is_some() { 1 } else { jobs_in_parallel };
    if let Some(target) = &real
        && !provisioned
    {
        // kind and GKE forward Ctrl-C themselves (installed before provisioning)
        crate::kube_play::cancel_on_ctrl_c(target);
    }

    let folder = RunFolder::create(&out)?;
    let mut manifest = InvocationManifest {
        manifest_version: results::report::MANIFEST_VERSION,
        scenario: scenario.name().to_string(),
        origin: scenario.origin().to_string(),
        params: scenario.params().clone(),
        resolved_scenario: scenario.resolved(),
        arms: arms.clone(),
        seeds: seeds.clone(),
        backend: args.cluster.name(),
        cluster: real.as_ref().map(|t| t.facts.clone()),
        checkpoint: checkpoint_origin(args.checkpoint.as_deref(), &arms),
        agmarl_config: agmarl_config
            .as_ref()
            .map(serde_json::to_value)
            .transpose()
            .context("recording --agmarl-config")?,
        explain: args.explain,
        build: Build::current(),
        command_line: std::env::args().collect(),
        started_at: jiff::Timestamp::now(),
        finished_at: None,
        complete: false,
    };
    folder.write(MANIFEST_FILE, &to_pretty_json(&manifest)?)?;

    let jobs: Vec<Job> = seeds
        .iter()
        .flat_map(|&seed| arms.iter().map(move |arm| Job { arm: arm.clone(), seed }))
        .collect();
    tracing::info!(runs = jobs.len(), out = %out.display(), "playing scenario {}", scenario.name());
    let progress = progress_bar(jobs.len() as u64 * PROGRESS_STEPS);
    let checkpoint_net = checkpoint.map(|(net, _meta)| net);
    let runner = Runner {
        scenario: &scenario,
        folder: &folder,
        cluster: args.cluster,
        checkpoint: checkpoint_net.as_ref(),
        agmarl_config: agmarl_config.as_ref(),
        progress: &progress,
        real: real.as_ref(),
        charge_decision_time: args.charge_decision_time,
        explain: args.explain,
    };
    let records = runner.play_all(&jobs, jobs_in_parallel)?;
    progress.finish_and_clear();

    let mut runs = Vec::with_capacity(jobs.len());
    for (job, path) in jobs.iter().zip(&records) {
        let metrics =
            results::metrics::from_file(path).with_context(|| format!("computing metrics of {}", path.display()))?;
        runs.push(results::summary::RunResult {
            arm: job.arm.clone(),
            seed: job.seed,
            metrics,
        });
    }
    let stats_seed = schedlab_core::rng::derive_seed(seeds[0], &[schedlab_core::rng::purpose::STATISTICS]);
    let summary = results::summary::Summary::new(scenario.name(), runs, stats_seed);

    let report_dir = out.join(REPORT_DIR);
    let summaries = [
        ("summary.csv", summary.to_csv()),
        ("summary.json", to_pretty_json(&summary.to_json())?),
        ("report.md", summary.to_markdown()),
    ];
    // Tables, plots and the HTML page, rebuilt from the raw records as `schedlab report` does.
    finish_folder(&folder, &mut manifest, &summaries, || {
        crate::report_cmd::write_report_of_finished_runs(&out, &report_dir)
    })?;

    // Printing comes after the folder is complete, so a closed or full standard output cannot affect it.
    outln!("{}", summary.to_terminal_table())?;
    outln!("Report: {}", report_dir.join("report.html").display())?;
    outln!("Run folder: {}", out.display())?;
    Ok(())
}

/// The end of a scenario run, once every run's records and manifest are written: the summaries, then the
/// report (`write_report`), then the manifest says `complete` and the INCOMPLETE marker goes, in that
/// order, so that a folder that looks complete has every output. When anything fails (a full disk, an
/// unwritable report folder) or the process is stopped on the way, the folder stays INCOMPLETE.
fn finish_folder(
    folder: &RunFolder,
    manifest: &mut InvocationManifest,
    summaries: &[(&str, String)],
    write_report: impl FnOnce() -> Result<()>,
) -> Result<()> {
    for (name, text) in summaries {
        folder.write(name, text)?;
    }
    write_report().with_context(|| {
        format!(
            "writing the report of {}: the runs' records are kept, but the folder stays INCOMPLETE",
            folder.root().display()
        )
    })?;
    manifest.finished_at = Some(jiff::Timestamp::now());
    manifest.complete = true;
    folder.write(MANIFEST_FILE, &to_pretty_json(manifest)?)?;
    folder.mark_complete()
}

fn check_arms(arms: &[String]) -> Result<Vec<String>> {
    let mut seen = Vec::new();
    for arm in arms {
        let arm = arm.trim();
        if arm.is_empty() {
            bail!(InputError("--arms: an arm name is empty".into()));
        }
        scheduler::arm(arm, 0)?;
        if seen.iter().any(|a: &String| a == arm) {
            bail!(InputError(format!("--arms: {arm:?} is listed twice")));
        }
        seen.push(arm.to_string());
    }
    if seen.is_empty() {
        bail!(InputError("--arms: give at least one arm".into()));
    }
    Ok(seen)
}

/// Largest `--agmarl-config` file read.
const MAX_AGMARL_CONFIG_BYTES: u64 = 4 << 20;

/// Reads and checks `--agmarl-config`.
fn read_agmarl_config(path: &Path) -> Result<scheduler::agmarl::AgmarlConfig> {
    let bad = |what: String| InputError(format!("--agmarl-config {}: {what}", path.display()));
    let text =
        schedlab_core::input::read_bounded_string(path, MAX_AGMARL_CONFIG_BYTES).map_err(|e| bad(e.to_string()))?;
    let config: scheduler::agmarl::AgmarlConfig =
        schedlab_core::json_input::parse_object(&text).map_err(|e| bad(e.to_string()))?;
    config.validate().map_err(|e| bad(e.to_string()))?;
    Ok(config)
}

/// Which checkpoint the agmarl arms use, for the manifest (None when no such arm runs).
fn checkpoint_origin(path: Option<&Path>, arms: &[String]) -> Option<String> {
    let uses_agmarl = arms
        .iter()
        .any(|a| scheduler::agmarl::arms::AGMARL_ARMS.contains(&a.as_str()));
    uses_agmarl.then(|| match path {
        Some(p) => p.display().to_string(),
        None => "bundled".to_string(),
    })
}

fn default_out(scenario: &str) -> PathBuf {
    let now = jiff::Zoned::now();
    let safe: String = scenario
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    PathBuf::from("runs").join(format!("{safe}-{}", now.strftime("%Y%m%d-%H%M%S")))
}

fn progress_bar(len: u64) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Refuses flags the chosen backend would silently ignore (given with a
/// value other than their default), naming the flag and the backends it is for.
fn check_flags_for_backend(args: &ScenarioArgs) -> Result<()> {
    use crate::cli::{KindFault, NodesFrom};
    let c = args.cluster;
    let real = c != ClusterKind::Sim;
    let kube_like = matches!(c, ClusterKind::Kube | ClusterKind::Gke);
    let kind = c == ClusterKind::Kind;
    let gke = c == ClusterKind::Gke;
    let flags: [(&str, bool, bool, &str); 21] = [
        ("--kubeconfig", args.kubeconfig.is_some(), kube_like, "kube|gke"),
        ("--context", args.context.is_some(), kube_like, "kube|gke"),
        ("--time-scale", args.time_scale != 1.0, real, "local|kube|kind|gke"),
        ("--qps", args.qps.is_some(), real, "local|kube|kind|gke"),
        ("--burst", args.burst.is_some(), real, "local|kube|kind|gke"),
        (
            "--nodes",
            args.nodes != NodesFrom::Emulated,
            real,
            "local|kube|kind|gke",
        ),
        (
            "--node-selector",
            args.node_selector.is_some(),
            real,
            "local|kube|kind|gke",
        ),
        (
            "--local-state",
            args.local_state.is_some(),
            c == ClusterKind::Local,
            "local",
        ),
        ("--dry-run", args.dry_run, kind || gke, "kind|gke"),
        ("--keep", args.keep, kind || gke, "kind|gke"),
        ("--provision", args.provision, gke, "gke"),
        ("--zone", args.zone.is_some(), gke, "gke"),
        ("--gke-cluster-name", args.gke_cluster_name != "schedlab", gke, "gke"),
        ("--image-registry", args.image_registry.is_some(), gke, "gke"),
        ("--allow-vm-faults", args.allow_vm_faults, gke, "gke"),
        ("--kind-name", args.kind_name != "schedlab", kind, "kind"),
        (
            "--kind-max-workers",
            args.kind_max_workers != provisioning::kind::DEFAULT_MAX_WORKERS,
            kind,
            "kind",
        ),
        ("--kind-extra-emulated", args.kind_extra_emulated, kind, "kind"),
        ("--kind-fault", args.kind_fault != KindFault::Stop, kind, "kind"),
        ("--kind-node-image", args.kind_node_image.is_some(), kind, "kind"),
        ("--no-image-build", args.no_image_build, kind, "kind"),
    ];
    if let Some((flag, _, _, for_)) = flags.iter().find(|(_, given, applies, _)| *given && !*applies) {
        bail!(InputError(format!(
            "{flag} is for --cluster {for_}, not {}: it would change nothing here",
            c.name()
        )));
    }
    if real {
        // the one check of the value, where the clock that uses it lives
        kube_backend::clock::check_scale(args.time_scale).map_err(|e| InputError(format!("--{e}")))?;
    }
    if args.repo != Path::new(".") && !(kind || gke) {
        bail!(InputError(format!(
            "--repo is for --cluster kind|gke, not {}: it would change nothing here",
            c.name()
        )));
    }
    Ok(())
}

/// Refuses a scenario one run of which would write more than `max_gib` of
/// records, before anything is written ([`schedlab_core::budget`]).
fn check_records_budget(scenario: &workloads::Scenario, seed: u64, max_gib: f64) -> Result<()> {
    if !(max_gib.is_finite() && max_gib > 0.0) {
        bail!(InputError(format!(
            "--max-records-gib {max_gib}: must be a positive number of GiB"
        )));
    }
    let estimate = schedlab_core::budget::RecordEstimate::of(&scenario.expand(seed));
    let budget = max_gib * f64::from(1u32 << 30);
    if (estimate.bytes as f64) <= budget {
        return Ok(());
    }
    let gb = |bytes: u64| bytes as f64 / 1e9;
    let cause = if estimate.sample_bytes() * 2 >= estimate.bytes {
        format!(
            "{} nodes sampled {} times: its duration over its sample_interval",
            estimate.nodes, estimate.sample_times
        )
    } else {
        format!(
            "{} pods and {} actions: its pod counts",
            estimate.pods, estimate.actions
        )
    };
    bail!(InputError(format!(
        "scenario {}: one run would write at least {:.1} GB of records ({cause}), over the budget of {max_gib} GiB a \
         run: shorten the duration, lengthen sample_interval or make it smaller with --set, or raise \
         --max-records-gib",
        scenario.name(),
        gb(estimate.bytes)
    )));
}

fn to_pretty_json<T: serde::Serialize>(value: &T) -> Result<String> {
    let mut text = serde_json::to_string_pretty(value).context("serialising JSON")?;
    text.push('\n');
    Ok(text)
}

struct Runner<'a> {
    scenario: &'a workloads::Scenario,
    folder: &'a RunFolder,
    cluster: ClusterKind,
    /// the network for the agmarl arms, when not the bundled one
    checkpoint: Option<&'a scheduler::agmarl::network::AgmarlNet>,
    /// the controller settings of the agmarl arms, when not the defaults
    agmarl_config: Option<&'a scheduler::agmarl::AgmarlConfig>,
    progress: &'a ProgressBar,
    /// the connected cluster, for every backend but the simulator
    real: Option<&'a crate::kube_play::KubeTarget>,
    /// the simulator charges decision time to virtual time
    charge_decision_time: bool,
    /// write every decision's explanation beside the records
    explain: bool,
}

impl Runner<'_> {
    /// Plays every job, `parallel` at a time; returns the records files in job order.
    fn play_all(&self, jobs: &[Job], parallel: usize) -> Result<Vec<PathBuf>> {
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let outcomes: Mutex<Vec<Option<Result<PathBuf>>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
        std::thread::scope(|scope| {
            for _ in 0..parallel.min(jobs.len()) {
                scope.spawn(|| {
                    loop {
                        if failed.load(Ordering::Relaxed) {
                            break;
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        let outcome = self
                            .play(job)
                            .with_context(|| format!("arm {} seed {}", job.arm, job.seed));
                        if outcome.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        if let Ok(mut slots) = outcomes.lock() {
                            slots[i] = Some(outcome);
                        }
                    }
                });
            }
        });
        let outcomes = outcomes
            .into_inner()
            .map_err(|_| anyhow::anyhow!("a run thread panicked"))?;
        let mut paths = Vec::with_capacity(jobs.len());
        for (job, outcome) in jobs.iter().zip(outcomes) {
            match outcome {
                Some(Ok(path)) => paths.push(path),
                Some(Err(err)) => return Err(err),
                None => bail!("arm {} seed {} did not run", job.arm, job.seed),
            }
        }
        Ok(paths)
    }

    fn play(&self, job: &Job) -> Result<PathBuf> {
        let dir = self.folder.run_dir(&job.arm, job.seed)?;
        let records = dir.join(RECORDS_FILE);
        let started = Instant::now();
        let decisions = self.explain.then(|| dir.join(results::decisions::DECISIONS_FILE));
        let (simulated, cluster_run, explain) = match (self.cluster, self.real) {
            (ClusterKind::Sim, _) => {
                let decision_times = dir.join(results::decision_time::DECISION_TIMES_FILE);
                let (simulated, explain) = self.play_sim(job, &records, &decision_times, decisions.as_deref())?;
                (simulated, None, explain)
            }
            (_, Some(target)) => self.play_real(target, job, &records, decisions.as_deref())?,
            (_, None) => bail!("no cluster connected for the {} backend", self.cluster.name()),
        };
        let records_sha256 = schedlab_core::digest::file_sha256(&records)
            .with_context(|| format!("reading back {}", records.display()))?;
        let manifest = RunManifest {
            manifest_version: results::report::MANIFEST_VERSION,
            scenario: self.scenario.name().to_string(),
            origin: self.scenario.origin().to_string(),
            params: self.scenario.params().clone(),
            resolved_scenario: self.scenario.resolved(),
            arm: job.arm.clone(),
            seed: job.seed,
            backend: self.cluster.name(),
            build: Build::current(),
            records: RECORDS_FILE,
            records_sha256,
            explain,
            wall_seconds: started.elapsed().as_secs_f64(),
            simulated_seconds: simulated,
            cluster_run,
        };
        write_file(&dir.join("manifest.json"), &to_pretty_json(&manifest)?)?;
        Ok(records)
    }

    /// The arm's policy, with the checkpoint and controller settings given for the agmarl arms.
    fn policy(&self, job: &Job) -> Result<Box<dyn scheduler::Scheduler>> {
        let agmarl = scheduler::agmarl::Variant::from_arm_name(&job.arm).is_some();
        if !agmarl || (self.checkpoint.is_none() && self.agmarl_config.is_none()) {
            return Ok(scheduler::arm(&job.arm, job.seed)?);
        }
        let net = match self.checkpoint {
            Some(net) => net.deep_clone().context("copying the checkpoint's network")?,
            None => scheduler::bundled_net(&job.arm)?,
        };
        let config = self.agmarl_config.cloned().unwrap_or_default();
        Ok(scheduler::agmarl::arms::agmarl_arm_configured(
            &job.arm, net, &config, job.seed,
        )?)
    }

    /// Plays one run on a real cluster; returns the scenario seconds, what the run did there and, with
    /// `decisions`, what became of its decision records.
    fn play_real(
        &self,
        target: &crate::kube_play::KubeTarget,
        job: &Job,
        records: &Path,
        decisions: Option<&Path>,
    ) -> Result<(f64, Option<crate::kube_play::KubeRunFacts>, Option<RunExplain>)> {
        let timeline = self.scenario.expand(job.seed);
        let end = timeline.end;
        // `default` is the cluster's own kube-scheduler (on kind and GKE `agmarl` is the in-cluster
        // agmarl-scheduler); every other arm runs in schedlab's bind loop.
        let in_cluster = target.in_cluster(&job.arm);
        let policy = if in_cluster { None } else { Some(self.policy(job)?) };
        let facts = target.play(crate::kube_play::RunRequest {
            timeline,
            arm: &job.arm,
            seed: job.seed,
            policy,
            records,
            decisions: decisions.filter(|_| !in_cluster),
            progress: self.progress,
            progress_steps: PROGRESS_STEPS,
        })?;
        let explain = match (decisions, facts.decisions) {
            (None, _) => None,
            (Some(_), Some(decisions)) => Some(RunExplain::Written {
                file: results::decisions::DECISIONS_FILE,
                decisions,
            }),
            (Some(_), None) => Some(RunExplain::NotApplicable {
                reason: format!(
                    "arm {} is decided by the cluster's own {} ({}), not by schedlab's bind loop, so its decisions \
                     cannot be explained",
                    job.arm,
                    if job.arm == "default" {
                        "kube-scheduler"
                    } else {
                        "in-cluster scheduler"
                    },
                    facts.scheduler_name
                ),
            }),
        };
        Ok((end.as_secs_f64(), Some(facts), explain))
    }

    /// Plays one run on the simulator; returns the simulated seconds and, with `decisions` (the file to
    /// write every decision's explanation to), how many it wrote.
    fn play_sim(
        &self,
        job: &Job,
        records: &Path,
        decision_times: &Path,
        decisions: Option<&Path>,
    ) -> Result<(f64, Option<RunExplain>)> {
        let timeline = self.scenario.expand(job.seed);
        let workloads: Vec<String> = timeline.workloads.iter().map(|w| w.name.clone()).collect();
        let mut sim =
            schedlab_core::sim::Sim::new(timeline, job.seed, schedlab_core::behaviour::ModelConfig::default())
                .context("setting up the simulator")?;
        sim.charge_decision_time(self.charge_decision_time);
        let mut policy = self.policy(job)?;
        let mut writer = decisions.map(results::decisions::DecisionsWriter::create).transpose()?;
        // Explained decisions wait here between simulator steps: serialising them inside the placer would
        // count the writing as the policy's decision time.
        let explained = std::cell::RefCell::new(Vec::new());
        let mut placer: Box<schedlab_core::sim::Placer<'_>> = if writer.is_some() {
            let mut explaining = scheduler::explain::Explaining::new(policy);
            let (explained, workloads) = (&explained, &workloads);
            Box::new(
                move |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| {
                    let placement = explaining.schedule(pod, view);
                    if let Some(e) = explaining.last() {
                        let record = crate::explain::decision_record(pod, view, &placement, e, workloads);
                        explained.borrow_mut().push(record);
                    }
                    placement
                },
            )
        } else {
            Box::new(
                move |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| {
                    policy.schedule(pod, view)
                },
            )
        };
        let flush = |writer: &mut Option<results::decisions::DecisionsWriter>| {
            if let Some(w) = writer {
                for d in explained.borrow_mut().drain(..) {
                    w.record(&d);
                }
            }
        };
        let mut sink = results::records::JsonlSink::create(records)?;
        let end = sim.end();
        let step = (end.as_millis() / PROGRESS_STEPS).max(1);
        let mut reported = 0;
        while sim.now() < end {
            let until = schedlab_core::Time((sim.now().as_millis() + step).min(end.as_millis()));
            sim.run_until(until, &mut *placer, &mut sink);
            flush(&mut writer);
            let done = (until.as_millis() * PROGRESS_STEPS / end.as_millis().max(1)).min(PROGRESS_STEPS);
            self.progress.inc(done - reported);
            reported = done;
        }
        results::decision_time::DecisionTimes::from_histogram(
            sim.decision_times().clone(),
            sim.decision_time_charged(),
        )
        .write(decision_times)
        .with_context(|| format!("writing {}", decision_times.display()))?;
        let summary = sim.finish(&mut *placer, &mut sink);
        flush(&mut writer);
        tracing::debug!(arm = %job.arm, seed = job.seed, ?summary, "run finished");
        self.progress.inc(PROGRESS_STEPS - reported);
        sink.finish()?;
        let explain = match writer {
            Some(w) => Some(RunExplain::Written {
                file: results::decisions::DECISIONS_FILE,
                decisions: w.finish()?,
            }),
            None => None,
        };
        Ok((end.as_secs_f64(), explain))
    }
}

fn write_file(path: &Path, contents: &str) -> Result<()> {
    crate::run_folder::write_atomic(path, contents.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_folder::INCOMPLETE_MARKER;

    fn manifest() -> InvocationManifest {
        InvocationManifest {
            manifest_version: results::report::MANIFEST_VERSION,
            scenario: "t".into(),
            origin: "t.yaml".into(),
            params: Default::default(),
            resolved_scenario: serde_json::json!({}),
            arms: vec!["default".into()],
            seeds: vec![1],
            backend: "sim",
            cluster: None,
            checkpoint: None,
            agmarl_config: None,
            explain: false,
            build: Build::current(),
            command_line: vec![],
            started_at: jiff::Timestamp::now(),
            finished_at: None,
            complete: false,
        }
    }

    fn read_manifest(root: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(root.join(MANIFEST_FILE)).unwrap()).unwrap()
    }

    fn summaries() -> Vec<(&'static str, String)> {
        vec![("summary.csv", "arm\n".into()), ("report.md", "# t\n".into())]
    }

    /// A folder as `run` leaves it before the summaries: the marker and a manifest saying not complete.
    fn started(root: &Path) -> (RunFolder, InvocationManifest) {
        let folder = RunFolder::create(root).unwrap();
        let manifest = manifest();
        folder
            .write(MANIFEST_FILE, &to_pretty_json(&manifest).unwrap())
            .unwrap();
        (folder, manifest)
    }

    #[test]
    fn a_report_that_fails_leaves_the_folder_incomplete_and_fails_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let (folder, mut manifest) = started(&root);
        let failing_file = root.join(REPORT_DIR).join("report.html");
        let err = finish_folder(&folder, &mut manifest, &summaries(), || {
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
                .with_context(|| format!("writing {}", failing_file.display()))
        })
        .unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains(&failing_file.display().to_string()), "{msg}");
        assert!(msg.contains("INCOMPLETE"), "{msg}");
        assert!(root.join(INCOMPLETE_MARKER).is_file(), "marker kept");
        assert_eq!(read_manifest(&root)["complete"], false);
        assert!(!crate::out::is_broken_pipe(&err));
        assert_eq!(crate::exit::code_for(&err), std::process::ExitCode::FAILURE);
    }

    #[test]
    fn the_folder_is_marked_complete_only_after_the_report_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let (folder, mut manifest) = started(&root);
        let mut report_ran = false;
        finish_folder(&folder, &mut manifest, &summaries(), || {
            // while the report is written, the folder does not look complete
            assert!(root.join(INCOMPLETE_MARKER).is_file());
            assert_eq!(read_manifest(&root)["complete"], false);
            // and the summaries are already in place
            assert_eq!(std::fs::read_to_string(root.join("summary.csv")).unwrap(), "arm\n");
            report_ran = true;
            Ok(())
        })
        .unwrap();
        assert!(report_ran);
        assert!(!root.join(INCOMPLETE_MARKER).exists());
        let written = read_manifest(&root);
        assert_eq!(written["complete"], true);
        assert!(written["finished_at"].is_string());
        // every output is under its final name, none left under a temporary one
        let mut names: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["manifest.json", "report.md", "summary.csv"]);
    }

    #[test]
    fn a_summary_that_cannot_be_written_stops_before_the_report() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let (folder, mut manifest) = started(&root);
        // a folder where summary.csv should go: the rename into place fails
        std::fs::create_dir_all(root.join("summary.csv").join("x")).unwrap();
        let err = finish_folder(&folder, &mut manifest, &summaries(), || {
            panic!("no report after a failure")
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("summary.csv"), "{err:#}");
        assert!(root.join(INCOMPLETE_MARKER).is_file());
        assert_eq!(read_manifest(&root)["complete"], false);
    }
}
