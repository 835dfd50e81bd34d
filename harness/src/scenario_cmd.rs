//! `schedlab scenario`: play one scenario on every arm and seed, then compare.

use crate::cli::{MAX_JOBS, ScenarioArgs};
use crate::exit::InputError;
use crate::out::outln;
use crate::play::{Job, Runner};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use provisioning::interrupt::Interrupt;
use provisioning::provider::Runs;
use results::run_folder::{
    ArmControl, ArmFacts, InvocationManifest, MANIFEST_FILE, MANIFEST_VERSION, REPORT_DIR, RunFolder,
};
use schedlab_core::backend::{Backend, PROGRESS_STEPS};
use scheduler::profile::file::ProfileFile;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What the user asked for, checked, before any backend is chosen.
struct Invocation {
    scenario: workloads::Scenario,
    arms: Vec<String>,
    seeds: Vec<u64>,
    out: PathBuf,
    jobs_in_parallel: usize,
    checkpoint: Option<scheduler::agmarl::network::AgmarlNet>,
    /// the sidecar of `--checkpoint`, for the arm facts
    checkpoint_meta: Option<scheduler::agmarl::CheckpointMeta>,
    agmarl_config: Option<scheduler::agmarl::AgmarlConfig>,
    /// `agmarl-untrained`'s init seed
    init_seed: u64,
    /// the arms read from kube-scheduler configuration files, by arm name
    profile_files: BTreeMap<String, ProfileFile>,
    /// the DRS arms' networks, checked against the arms and the cluster size
    drs: crate::drs_input::DrsNetworks,
    /// the arms decided by a scheduler already in the cluster (`external:NAME`), by name
    external: BTreeSet<String>,
    /// the arms that call a kube-scheduler extender (`extender:URL`), by name
    extenders: crate::extender_arm::ExtenderArms,
}

pub fn run(args: ScenarioArgs) -> Result<()> {
    // Everything the user gave is checked before anything is written.
    let scenario = workloads::load_allowing(&args.scenario, &args.set, &args.allow_trace)?;
    let checkpoint = args
        .checkpoint
        .as_deref()
        .map(|path| scheduler::agmarl::checkpoint::load(path).map_err(|e| InputError(format!("--checkpoint: {e}"))))
        .transpose()?;
    let CheckedArms {
        names: arms,
        profile_files,
        external,
        extenders,
    } = check_arms(&args.arms)?;
    // the flags of the cluster, checked against it; None is the simulator
    let provider = crate::cluster_choice::provider(&args)?;
    if provider.is_none()
        && let Some(name) = external.first()
    {
        bail!(InputError(format!(
            "--arms external:{name}: an external arm is a scheduler already running in a cluster, and the simulator \
             has none; play it with --cluster local, kube, kind or gke"
        )));
    }
    if provider.is_some()
        && let Some(file) = profile_files.values().next()
    {
        bail!(InputError(format!(
            "--arms profile:{}: a profile file arm runs on --cluster sim only, not {}: on a real cluster \
             schedlab's bind loop would run it without DefaultPreemption, and running the file as its own \
             kube-scheduler is not built yet",
            file.file,
            provider.as_ref().map_or("sim", |p| p.name())
        )));
    }
    let init_seed = check_init_seed(args.init_seed, &arms)?;
    let drs = crate::drs_input::check(
        args.drs_checkpoint.as_deref(),
        &arms,
        scenario.expand(args.first_seed).nodes.len(),
    )?;
    check_agmarl_inputs(
        args.checkpoint
            .as_deref()
            .zip(checkpoint.as_ref().map(|(_, meta)| meta)),
        args.agmarl_config.as_deref(),
        &arms,
    )?;
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
    if !args.real.dry_run {
        // before a cluster is connected or provisioned (minutes on kind or GKE)
        RunFolder::preflight(&out)?;
    }
    let jobs_in_parallel = match args.jobs {
        Some(0) => bail!(InputError("--jobs 0: give at least 1".into())),
        Some(n) if n > MAX_JOBS => bail!(InputError(format!(
            "--jobs {n}: at most {MAX_JOBS} runs play at once (each is a thread); give 1..={MAX_JOBS}"
        ))),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS)),
    };

    // a real cluster is made for the scenario's nodes (every seed has the same)
    let (nodes, scenario_seconds) = match &provider {
        Some(_) => {
            let first = scenario.expand(seeds[0]);
            (first.nodes, first.end.as_secs_f64())
        }
        None => (Vec::new(), 0.0),
    };
    if let Some(provider) = &provider {
        let runs = Runs {
            nodes: &nodes,
            arms: &arms,
            external: &external,
            seeds: seeds.len(),
            scenario_seconds,
        };
        if provider.deploys_in_cluster_scheduler(&runs) {
            check_in_cluster_arm(&args, &arms)?;
        }
        // a plan checks the settings it shows, and needs no credentials on this machine
        if args.real.dry_run {
            let plan = provider.plan(&runs)?;
            outln!(
                "Dry run of `schedlab scenario {} --cluster {}`: nothing is executed, nothing is written.",
                scenario.name(),
                provider.name()
            )?;
            outln!("{plan}")?;
            return Ok(());
        }
        provider.check(&runs)?;
    }
    crate::extender_arm::check_all(&extenders, &scenario, args.first_seed)?;
    let (checkpoint, checkpoint_meta) = checkpoint.unzip();
    let invocation = Invocation {
        arms,
        seeds,
        out,
        jobs_in_parallel,
        checkpoint,
        checkpoint_meta,
        agmarl_config,
        init_seed,
        scenario,
        profile_files,
        drs,
        external,
        extenders,
    };
    // One run path whatever the backend: connect (or provision) it, then play every run through it.
    let Some(provider) = provider else {
        let backend = schedlab_core::sim::SimBackend {
            model: schedlab_core::behaviour::ModelConfig::default(),
            charge_decision_time: args.charge_decision_time,
        };
        return play_scenario(&args, &invocation, &backend, None::<&()>);
    };
    let runs = Runs {
        nodes: &nodes,
        arms: &invocation.arms,
        external: &invocation.external,
        seeds: invocation.seeds.len(),
        scenario_seconds,
    };
    // Ctrl-C stops bringing the cluster up (its guards delete what was made) and then the runs
    let interrupt = Interrupt::install()?;
    let mut connected = provider.up(&runs, &interrupt)?;
    connected.backend.set_external_schedulers(invocation.external.clone());
    play_scenario(&args, &invocation, &connected.backend, Some(&connected.facts))
}

/// The in-cluster scheduler runs from its image as its manifests start it:
/// flags that would change schedlab's own agmarl arm change nothing there.
fn check_in_cluster_arm(args: &ScenarioArgs, arms: &[String]) -> Result<()> {
    use provisioning::real_cluster::IN_CLUSTER_ARM;
    if !arms.iter().any(|a| a == IN_CLUSTER_ARM) {
        return Ok(());
    }
    let flags = [
        (
            "--checkpoint",
            args.checkpoint.is_some(),
            "its image's bundled checkpoint",
        ),
        (
            "--agmarl-config",
            args.agmarl_config.is_some(),
            "the configuration its manifests give it",
        ),
    ];
    if let Some((flag, _, what)) = flags.iter().find(|(_, given, _)| *given) {
        bail!(InputError(format!(
            "{flag}: the {IN_CLUSTER_ARM} arm runs in the cluster with {what}; \
             drop {flag} or the {IN_CLUSTER_ARM} arm"
        )));
    }
    Ok(())
}

/// Plays every (arm, seed) run of `invocation` on `backend` into a new run folder, completes the folder
/// (summaries, report) and prints the comparison. `cluster` is what the manifest says about the backend's
/// cluster.
fn play_scenario<B: Backend, C: Serialize>(
    args: &ScenarioArgs,
    invocation: &Invocation,
    backend: &B,
    cluster: Option<C>,
) -> Result<()> {
    let Invocation {
        scenario,
        arms,
        seeds,
        out,
        ..
    } = invocation;
    let arm_facts = arm_facts(invocation, backend)?;
    let folder = RunFolder::create(out)?;
    let mut manifest = InvocationManifest {
        manifest_version: MANIFEST_VERSION,
        scenario: scenario.name().to_string(),
        origin: scenario.origin().to_string(),
        params: scenario.params().clone(),
        resolved_scenario: scenario.resolved(),
        arms: arms.clone(),
        seeds: seeds.clone(),
        backend: backend.name(),
        cluster,
        checkpoint: checkpoint_origin(args.checkpoint.as_deref(), arms),
        drs_checkpoint: (!invocation.drs.is_empty()).then(|| {
            invocation
                .drs
                .iter()
                .map(|(arm, d)| {
                    (
                        arm.clone(),
                        serde_json::json!({
                            "checkpoint": d.origin,
                            "nodes": d.meta.nodes,
                            "weights_sha256": d.meta.weights_sha256,
                        }),
                    )
                })
                .collect::<serde_json::Map<_, _>>()
                .into()
        }),
        agmarl_config: invocation
            .agmarl_config
            .as_ref()
            .map(serde_json::to_value)
            .transpose()
            .context("recording --agmarl-config")?,
        arm_facts,
        profile_files: invocation
            .profile_files
            .iter()
            .map(|(arm, file)| Ok((arm.clone(), serde_json::to_value(file)?)))
            .collect::<Result<_, serde_json::Error>>()
            .context("recording the profile files")?,
        extenders: invocation
            .extenders
            .iter()
            .map(|(arm, e)| Ok((arm.clone(), serde_json::to_value(e)?)))
            .collect::<Result<_, serde_json::Error>>()
            .context("recording the extender arms")?,
        explain: args.explain,
        build: crate::build_info::current(),
        command_line: std::env::args().collect(),
        started_at: jiff::Timestamp::now(),
        finished_at: None,
        complete: false,
    };
    folder.write_json(MANIFEST_FILE, "the manifest", &manifest)?;

    let jobs: Vec<Job> = seeds
        .iter()
        .flat_map(|&seed| arms.iter().map(move |arm| Job { arm: arm.clone(), seed }))
        .collect();
    tracing::info!(runs = jobs.len(), out = %out.display(), "playing scenario {}", scenario.name());
    let progress = progress_bar(jobs.len() as u64 * PROGRESS_STEPS);
    let runner = Runner {
        backend,
        scenario,
        folder: &folder,
        checkpoint: invocation.checkpoint.as_ref(),
        checkpoint_head_error: invocation.checkpoint_meta.as_ref().and_then(|m| m.measured_error()),
        init_seed: invocation.init_seed,
        agmarl_config: invocation.agmarl_config.as_ref(),
        progress: &progress,
        explain: args.explain,
        profile_files: &invocation.profile_files,
        drs: &invocation.drs,
        extenders: &invocation.extenders,
    };
    runner.play_all(&jobs, invocation.jobs_in_parallel)?;
    progress.finish_and_clear();

    // The runs are read back once: the summaries and the report, then the folder is complete.
    let summary = results::run_folder::finish(&folder, &mut manifest, jiff::Timestamp::now())?;
    let report_dir = out.join(REPORT_DIR);
    let runs = summary
        .arms()
        .iter()
        .flat_map(|a| &a.runs)
        .map(|r| crate::external_arm::RunBinds {
            arm: &r.arm,
            seed: r.seed,
            pods_created: r.metrics.pods_created,
            pods_bound: r.metrics.pods_bound,
        });
    for warning in crate::external_arm::unbound_warnings(runs, &invocation.external) {
        crate::out::noteln!("{warning}");
    }

    // Printing comes after the folder is complete, so a closed or full standard output cannot affect it.
    if args.all_metrics {
        outln!("{}", summary.to_terminal_table())?;
    } else {
        let more = format!(
            "Every metric with its interval and test: {}, or --all-metrics",
            report_dir.join("report.md").display()
        );
        outln!("{}", summary.to_terminal_brief(&more))?;
    }
    outln!("Report: {}", report_dir.join("report.html").display())?;
    outln!("Run folder: {}", out.display())?;
    Ok(())
}

/// The arms of `--arms`, each read and checked.
struct CheckedArms {
    /// every arm's name, in order
    names: Vec<String>,
    /// the arms read from configuration files (`profile:FILE`, `profile:NAME=FILE`), by name
    profile_files: BTreeMap<String, ProfileFile>,
    /// the arms a scheduler already in the cluster decides (`external:NAME`), by name
    external: BTreeSet<String>,
    /// the arms that call a kube-scheduler extender (`extender:URL`), by name
    extenders: crate::extender_arm::ExtenderArms,
}

fn check_arms(arms: &[String]) -> Result<CheckedArms> {
    let mut seen = Vec::new();
    let mut files = BTreeMap::new();
    let mut external = BTreeSet::new();
    let mut extenders = crate::extender_arm::ExtenderArms::new();
    for arm in arms {
        let arm = arm.trim();
        if arm.is_empty() {
            bail!(InputError("--arms: an arm name is empty".into()));
        }
        let name = if scheduler::profile::file::is_file_arm(arm) {
            let file = scheduler::profile::file::load_arm(arm).map_err(scheduler::Error::from)?;
            let name = file.arm.clone();
            if files.insert(name.clone(), file).is_some() {
                bail!(InputError(format!(
                    "--arms: {arm:?} is a second arm named {name:?}: name them apart with profile:NAME=FILE"
                )));
            }
            name
        } else if crate::drs_input::is_drs_arm(arm) {
            // its network comes from --drs-checkpoint, checked with the cluster size
            arm.to_string()
        } else if crate::extender_arm::is_extender_arm(arm) {
            let extender = crate::extender_arm::parse(arm)?;
            let name = extender.arm.clone();
            if extenders.insert(name.clone(), extender).is_some() {
                bail!(InputError(format!(
                    "--arms: {arm:?} is a second arm named {name:?}: name them apart with extender:NAME=URL"
                )));
            }
            name
        } else if crate::external_arm::is_external(arm) {
            let name = crate::external_arm::scheduler_name(arm)?;
            external.insert(name.clone());
            name
        } else {
            scheduler::arm(arm, 0)?;
            arm.to_string()
        };
        if seen.contains(&name) {
            bail!(InputError(format!("--arms: {arm:?} is listed twice")));
        }
        seen.push(name);
    }
    if seen.is_empty() {
        bail!(InputError("--arms: give at least one arm".into()));
    }
    Ok(CheckedArms {
        names: seen,
        profile_files: files,
        external,
        extenders,
    })
}

/// The untrained twins' init seed: `--init-seed`, which only those arms take, or the default.
fn check_init_seed(given: Option<u64>, arms: &[String]) -> Result<u64> {
    use scheduler::agmarl::Control;
    let twin = |a: &String| Control::from_arm_name(a).is_some_and(Control::is_untrained);
    match given {
        Some(seed) if !arms.iter().any(twin) => bail!(InputError(format!(
            "--init-seed {seed} is for the untrained twins ({}), and --arms lists none: it would change nothing here",
            Control::ALL
                .iter()
                .filter(|c| c.is_untrained())
                .map(|c| c.arm_name())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        Some(seed) => Ok(seed),
        None => Ok(scheduler::agmarl::DEFAULT_INIT_SEED),
    }
}

/// `--checkpoint` and `--agmarl-config` are for the AGMARL arms (the controls take the checkpoint's
/// head errors and the controller's settings too): refused when no listed arm would read them,
/// and a checkpoint is refused for a trained arm of another variant than it was trained as
/// (every listed variant arm runs the one checkpoint given).
fn check_agmarl_inputs(
    checkpoint: Option<(&Path, &scheduler::agmarl::CheckpointMeta)>,
    agmarl_config: Option<&Path>,
    arms: &[String],
) -> Result<()> {
    use scheduler::agmarl::Variant;
    let reads = arms
        .iter()
        .any(|a| scheduler::agmarl::AGMARL_ARMS.contains(&a.as_str()));
    let unused = |flag: String| {
        InputError(format!(
            "{flag} is for the AGMARL arms ({}), and --arms lists none: it would change nothing here",
            scheduler::agmarl::AGMARL_ARMS.join(", ")
        ))
    };
    if let Some(path) = agmarl_config
        && !reads
    {
        bail!(unused(format!("--agmarl-config {}", path.display())));
    }
    let Some((path, meta)) = checkpoint else {
        return Ok(());
    };
    if !reads {
        bail!(unused(format!("--checkpoint {}", path.display())));
    }
    // a sidecar without a training record (a hand-made checkpoint) cannot say; it runs as given
    let Some(trained) = meta.trained_variant() else {
        return Ok(());
    };
    let others: Vec<&str> = arms
        .iter()
        .filter_map(|a| Variant::from_arm_name(a))
        .filter(|&v| v != trained)
        .map(Variant::arm_name)
        .collect();
    if !others.is_empty() {
        bail!(InputError(format!(
            "--checkpoint {} was trained as {}, and --arms lists {}, which would run it as if it were theirs: \
             give each trained variant a run of its own with a checkpoint of that variant",
            path.display(),
            trained.arm_name(),
            others.join(" and ")
        )));
    }
    Ok(())
}

/// What each arm of `invocation` is, for the manifest (`arm_facts`): whether it preempts on
/// `backend`, whether it is a control, which AGMARL variant it runs and from which training run.
fn arm_facts<B: Backend>(invocation: &Invocation, backend: &B) -> Result<BTreeMap<String, ArmFacts>> {
    use scheduler::agmarl::{Control, Variant};
    let config = invocation.agmarl_config.clone().unwrap_or_default();
    let mut facts = BTreeMap::new();
    for arm in &invocation.arms {
        let by_cluster = backend.decided_by_cluster(arm).is_some();
        let preempts = if invocation.external.contains(arm) {
            // what someone else's scheduler does is not known: rows that need both arms to preempt
            // do not apply to it
            false
        } else if let Some(file) = invocation.profile_files.get(arm) {
            // file arms run on the simulator only, which carries preemptions out
            backend.name() == "sim" && file.profile.preemption
        } else if let Some(extender) = invocation.extenders.get(arm) {
            // its base profile's DefaultPreemption, carried out by the simulator and the bind loop
            extender.base.preemption
        } else if by_cluster {
            // the cluster's kube-scheduler runs DefaultPreemption, and so does the in-cluster agmarl
            // scheduler as its manifests start it (its default settings; --agmarl-config is refused
            // for that arm)
            true
        } else {
            // the simulator and schedlab's bind loop carry out what the policy answers
            scheduler::preempts(arm, &config).unwrap_or(false)
        };
        if let Some(drs) = invocation.drs.get(arm) {
            facts.insert(
                arm.clone(),
                ArmFacts {
                    // the simulator and schedlab's bind loop carry out its DefaultPreemption
                    preempts: true,
                    control: None,
                    variant: Some(arm.clone()),
                    training_run: Some(drs.meta.training_run()),
                },
            );
            continue;
        }
        let control = Control::from_arm_name(arm);
        let variant = match control {
            Some(c) => Some(c.variant()),
            None => Variant::from_arm_name(arm),
        };
        let training_run = match (control, variant) {
            (Some(Control::Untrained(_)), _) => Some(format!("init:{}", invocation.init_seed)),
            (Some(Control::Analytic), _) | (None, None) => None,
            (None, Some(variant)) => Some(match &invocation.checkpoint_meta {
                // the in-cluster scheduler runs its image's bundled checkpoint whatever is given
                Some(meta) if !by_cluster => meta.training_run(),
                _ => scheduler::agmarl::checkpoint::bundled_for(variant)
                    .with_context(|| format!("reading {arm}'s bundled checkpoint"))?
                    .1
                    .training_run(),
            }),
        };
        facts.insert(
            arm.clone(),
            ArmFacts {
                preempts,
                control: control.map(|c| match c {
                    Control::Untrained(_) => ArmControl::Untrained,
                    Control::Analytic => ArmControl::Analytic,
                }),
                variant: variant.map(|v| v.arm_name().to_string()),
                training_run,
            },
        );
    }
    Ok(facts)
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

/// Which checkpoint the trained agmarl arms use, for the manifest (None when no such arm runs: the
/// controls have none).
fn checkpoint_origin(path: Option<&Path>, arms: &[String]) -> Option<String> {
    let uses_agmarl = arms
        .iter()
        .any(|a| scheduler::agmarl::arms::VARIANT_ARMS.contains(&a.as_str()));
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
