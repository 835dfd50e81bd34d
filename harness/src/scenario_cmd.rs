//! `schedlab scenario`: play one scenario on every arm and seed, then compare.

use crate::cli::ScenarioArgs;
use crate::exit::InputError;
use crate::out::outln;
use anyhow::{Result, bail};
use provisioning::interrupt::Interrupt;
use provisioning::provider::Runs;
use results::run_folder::{REPORT_DIR, RunFolder};
use schedlab_runner::scenario::{Finished, Invocation};
use std::path::{Path, PathBuf};

pub fn run(args: ScenarioArgs) -> Result<()> {
    // Everything the user gave is checked before anything is written.
    let scenario = workloads::load_allowing(&args.scenario, &args.set, &args.allow_trace)?;
    let checkpoint = args
        .checkpoint
        .as_deref()
        .map(|path| scheduler::agmarl::checkpoint::load(path).map_err(|e| InputError(format!("--checkpoint: {e}"))))
        .transpose()?;
    let schedlab_runner::arms::CheckedArms {
        names: arms,
        profile_files,
        external,
        extenders,
    } = schedlab_runner::arms::check(&args.arms, "--arms")?;
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
    let drs = schedlab_runner::drs_input::check(
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
    let jobs_in_parallel = crate::threads::jobs(args.jobs, "runs play", "a thread")?;

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
    schedlab_runner::extender_arm::check_all(&extenders, &scenario, args.first_seed)?;
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
        checkpoint_path: args.checkpoint.clone(),
        explain: args.explain,
        report: !args.no_report,
        command_line: std::env::args().collect(),
        build: crate::build_info::current(),
    };
    // One run path whatever the backend: connect (or provision) it, then play every run through it.
    let Some(provider) = provider else {
        let backend = schedlab_core::sim::SimBackend {
            model: schedlab_core::behaviour::ModelConfig::default(),
            charge_decision_time: args.charge_decision_time,
        };
        let finished = schedlab_runner::scenario::play(&invocation, &backend, None::<&()>)?;
        return report(&args, &invocation, finished);
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
    let finished = schedlab_runner::scenario::play(&invocation, &connected.backend, Some(&connected.facts))?;
    report(&args, &invocation, finished)
}

/// Prints what a finished run folder holds: the warnings about its runs,
/// then the comparison. Printing comes after the folder is complete, so a
/// closed or full standard output cannot affect it.
fn report(args: &ScenarioArgs, invocation: &Invocation, finished: Finished) -> Result<()> {
    for warning in &finished.warnings {
        crate::out::noteln!("{warning}");
    }
    let summary = finished.summary;
    let report_dir = invocation.out.join(REPORT_DIR);
    if args.all_metrics {
        outln!("{}", summary.to_terminal_table())?;
    } else {
        let more = if invocation.report {
            format!(
                "Every metric with its interval and test: {}, or --all-metrics",
                report_dir.join("report.md").display()
            )
        } else {
            format!(
                "Every metric with its interval and test: `schedlab report {}` writes the report, or --all-metrics",
                invocation.out.display()
            )
        };
        outln!("{}", summary.to_terminal_brief(&more))?;
    }
    if invocation.report {
        outln!("Report: {}", report_dir.join("report.html").display())?;
    }
    outln!("Run folder: {}", invocation.out.display())?;
    Ok(())
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

fn default_out(scenario: &str) -> PathBuf {
    let now = jiff::Zoned::now();
    let safe: String = scenario
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    PathBuf::from("runs").join(format!("{safe}-{}", now.strftime("%Y%m%d-%H%M%S")))
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
