//! `schedlab train`: train the AGMARL-DKS networks on simulated episodes.
//!
//! The harness only wires scenarios, the simulator and the trainer of
//! `scheduler::agmarl::train` together: every episode expands one training
//! scenario (round robin) with seed `SEED + e`, plays it on the simulator
//! with an exploring AGMARL policy (a frozen copy of the actor plus
//! Gaussian noise), and forwards every record the simulator writes to a
//! tracker of realised metrics. `--envs` episodes play at once, one thread
//! each; the learner then updates between rounds.
//!
//! Every `validate_every` episodes the current actor also plays fixed probe
//! episodes it does not learn from ([`crate::train_validation`]).
//!
//! Writes `training_curve.csv`, `validation_curve.csv`, `checkpoint.safetensors` and
//! `checkpoint.json` (the sidecar, whose `training` object records the
//! scenarios, seeds, episodes, every setting, the git revision and the wall
//! time) into the output folder.

use crate::cli::TrainArgs;
use crate::exit::InputError;
use crate::out::outln;
use crate::train_validation as validation;
use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use results::run_folder::RunFolder;
use scheduler::agmarl::checkpoint::{self, CheckpointMeta};
use scheduler::agmarl::train::{CURVE_HEADER, CurveRow, Episode, EpisodeStats, HeadReport, TrainConfig, Trainer};
use scheduler::agmarl::train::{DEFAULT_SCENARIOS, MIN_TRAINING_SEED};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

const CURVE_FILE: &str = "training_curve.csv";
const VALIDATION_FILE: &str = "validation_curve.csv";
const CHECKPOINT_FILE: &str = "checkpoint.safetensors";

pub fn run(args: TrainArgs) -> Result<()> {
    if let Some(code) = rerun_single_threaded()? {
        // the single-threaded run (not on Unix, where it replaced this process) did the work
        if code != 0 {
            bail!("the single-threaded training run exited with code {code}");
        }
        return Ok(());
    }
    // everything the user gave is checked before anything is written
    if args.seed < MIN_TRAINING_SEED {
        bail!(InputError(format!(
            "--seed {}: training seeds start at {MIN_TRAINING_SEED} (seeds below are kept for evaluation)",
            args.seed
        )));
    }
    let names: Vec<String> = if args.scenarios.is_empty() {
        DEFAULT_SCENARIOS.iter().map(|s| s.to_string()).collect()
    } else {
        args.scenarios.clone()
    };
    let mut scenarios = Vec::with_capacity(names.len());
    for name in &names {
        refuse_heldout(name)?;
        scenarios.push(
            workloads::load_allowing(name, &args.set, &args.allow_trace)
                .with_context(|| format!("training scenario {name}"))?,
        );
    }
    if let Some(reward) = args
        .variant
        .as_deref()
        .and_then(scheduler::drs::DrsReward::from_arm_name)
    {
        return crate::drs_train_cmd::run(&args, reward, scenarios);
    }
    let mut config = match &args.config {
        Some(path) => read_config(path)?,
        None => TrainConfig::default(),
    };
    if let Some(arm) = &args.variant {
        if let Some(control) = scheduler::agmarl::Control::from_arm_name(arm) {
            let with = match control {
                scheduler::agmarl::Control::Untrained(_) => "the network's initial weights",
                scheduler::agmarl::Control::Analytic => "hand-written score formulas",
            };
            bail!(InputError(format!(
                "--variant {arm}: a control arm, which is never trained (it runs {}'s controller with {with}); \
                 the variants to train are {}",
                control.variant().arm_name(),
                scheduler::agmarl::VARIANT_ARMS.join(", ")
            )));
        }
        let variant = scheduler::agmarl::Variant::from_arm_name(arm).ok_or_else(|| {
            InputError(format!(
                "--variant {arm:?}: the variants to train are {} and the DRS foil's {}",
                scheduler::agmarl::VARIANT_ARMS.join(", "),
                scheduler::drs::DRS_ARMS.join(", ")
            ))
        })?;
        if args.config.is_some() && config.policy.variant != variant && config.policy.variant != Default::default() {
            bail!(InputError(format!(
                "--variant {arm} contradicts --config's policy.variant {}",
                config.policy.variant.arm_name()
            )));
        }
        config.policy.variant = variant;
    }
    config.validate().map_err(|e| {
        let file = args
            .config
            .as_ref()
            .map_or_else(String::new, |p| format!(" {}", p.display()));
        InputError(format!("--config{file}: {e}"))
    })?;
    let episodes = args.episodes as usize;
    let envs = (args.envs as usize).min(episodes).max(1);
    let last_seed = args
        .seed
        .checked_add(episodes as u64 - 1)
        .ok_or_else(|| InputError(format!("--seed {}: too large for {episodes} episodes", args.seed)))?;
    let heldout = validation::heldout_scenarios(&scenarios)?;
    let probes = validation::probes(&scenarios, &heldout, (args.seed, last_seed))?;
    let out = args.out.clone().unwrap_or_else(crate::train_common::default_out);

    let folder = RunFolder::create(&out)?;
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    let mut trainer = Trainer::new(config, args.seed).context("setting up the trainer")?;
    tracing::info!(episodes, envs, out = %out.display(), "training");

    let progress = crate::train_common::progress_bar(episodes as u64);
    folder.append(CURVE_FILE, &format!("{CURVE_HEADER}\n"))?;
    let mut curve = String::new();
    let mut transitions = 0usize;
    let every = trainer.config().validate_every;
    let mut validation_curve = String::from(validation::VALIDATION_HEADER);
    validation_curve.push('\n');
    let mut last_point: Option<usize> = None;
    let mut validated: Option<(usize, HeadReport)> = None;
    // a point's head RMSE becomes the selection's tolerance from then on
    let mut validate = |trainer: &mut Trainer, done: usize| -> Result<()> {
        if !validation::due(every, done, episodes, last_point) {
            return Ok(());
        }
        let point = validation::measure(trainer, &probes, done).context("playing the validation episodes")?;
        validation_curve.push_str(&point.rows);
        // rewritten after every point, as the training curve is
        folder.write(VALIDATION_FILE, &validation_curve)?;
        last_point = Some(done);
        if let [Some(ft), Some(util), Some(cost)] = point.validation.rmse {
            trainer.set_head_error([ft as f32, util as f32, cost as f32]);
        }
        validated = Some((done, point.validation));
        Ok(())
    };
    validate(&mut trainer, 0)?;
    for first in (0..episodes).step_by(envs) {
        let slots: Vec<Slot> = (first..(first + envs).min(episodes))
            .map(|e| Slot {
                index: e,
                scenario: &scenarios[e % scenarios.len()],
                seed: args.seed + e as u64,
                sigma: trainer.noise_sigma(e, episodes),
            })
            .collect();
        let played = play_round(&trainer, &slots, &progress)?;
        let stats: Vec<EpisodeStats> = played.iter().map(|ep| ep.stats).collect();
        for ep in played {
            transitions += ep.transitions.len();
            trainer.add_episode(ep).context("measuring the wait head")?;
        }
        trainer.set_progress(first, episodes);
        let lr = trainer.learning_rate();
        let learned = trainer
            .learn(trainer.config().updates_per_episode * slots.len())
            .context("learning")?;
        for (slot, stats) in slots.iter().zip(stats) {
            let row = CurveRow {
                episode: slot.index,
                scenario: slot.scenario.name().to_string(),
                seed: slot.seed,
                stats,
                learn: learned,
                lr,
                noise: slot.sigma,
            };
            let _ = writeln!(curve, "{}", row.to_csv());
            progress.set_message(format!(
                "reward {:.3}  score MSE {:.4}  critic {:.4}",
                stats.reward_mean, stats.score_mse, learned.critic_loss
            ));
        }
        // appended after every round, so an interrupted run keeps its curve
        folder.append(CURVE_FILE, &curve)?;
        curve.clear();
        validate(&mut trainer, first + slots.len())?;
    }
    progress.finish_and_clear();

    let wall = started.elapsed().as_secs_f64();
    let mut training =
        crate::train_common::training_record(&args, &scenarios, (episodes, envs, last_seed), started_at, wall);
    training.extend(
        serde_json::json!({
            "updates": trainer.learner().updates(),
            "transitions": transitions,
            "final_learning_rate": trainer.learning_rate(),
            "head_error": trainer.head_error(),
            "wait": {
                "rmse": trainer.wait_error(),
                "samples": trainer.wait_samples(),
                "window": scheduler::agmarl::train::WAIT_WINDOW,
                "measured": "each decline's later fault tolerance against the wait head as it was before the learner trained on it",
            },
            "config": trainer.config(),
            "validation": validated.as_ref().map(|(after, report)| serde_json::json!({
                "after_episodes": after,
                "scenarios": probes.iter().filter(|p| p.split == validation::Split::Validation)
                    .map(|p| serde_json::json!({"name": p.scenario.name(), "seed": p.seed})).collect::<Vec<_>>(),
                "heads": report,
            })),
        })
        .as_object()
        .cloned()
        .unwrap_or_default(),
    );
    let training = serde_json::Value::Object(training);
    let meta = CheckpointMeta::new(trainer.actor().hyper(), training);
    let weights = out.join(CHECKPOINT_FILE);
    checkpoint::save(trainer.actor(), &meta, &weights).context("saving the checkpoint")?;
    folder.mark_complete()?;

    outln!(
        "Trained {episodes} episodes ({} updates, {transitions} transitions) in {wall:.1} s",
        trainer.learner().updates()
    )?;
    outln!("Curve: {}", out.join(CURVE_FILE).display())?;
    outln!("Checkpoint: {}", weights.display())?;
    Ok(())
}

/// The thread pools of candle read `RAYON_NUM_THREADS` / `CANDLE_NUM_THREADS`
/// (at every matrix product); unset, every tiny product is split over all
/// cores and waits on the environments' threads. Runs this command again with
/// both set to 1, or returns None when they already are. On Unix the process
/// replaces itself (`exec`): the pid the user started is the one that trains,
/// so a signal sent to it stops the training, and nothing outlives it.
/// Elsewhere it waits for a child and returns its exit code.
fn rerun_single_threaded() -> Result<Option<i32>> {
    let single = |var: &str| std::env::var(var).is_ok_and(|v| v == "1");
    if single("RAYON_NUM_THREADS") && single("CANDLE_NUM_THREADS") {
        return Ok(None);
    }
    let exe = std::env::current_exe().context("finding the schedlab executable")?;
    let mut command = std::process::Command::new(exe);
    command
        .args(std::env::args_os().skip(1))
        .env("RAYON_NUM_THREADS", "1")
        .env("CANDLE_NUM_THREADS", "1");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // returns only when the exec failed
        let error = command.exec();
        Err(error).context("running schedlab train single-threaded")
    }
    #[cfg(not(unix))]
    {
        let status = command.status().context("running schedlab train single-threaded")?;
        Ok(Some(status.code().unwrap_or(1)))
    }
}

/// Refuses a scenario file in a folder marked held-out (or below one), before
/// reading it: the work a model is judged on must never be trained on.
fn refuse_heldout(name: &str) -> Result<()> {
    if let Some(folder) = workloads::heldout_folder(name) {
        bail!(InputError(format!(
            "--scenario {name}: a held-out scenario ({} is marked by {}); training never reads the work \
             a model is judged on",
            folder.display(),
            workloads::HELDOUT_MARKER
        )));
    }
    Ok(())
}

/// Largest `--config` file read.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

fn read_config(path: &Path) -> Result<TrainConfig> {
    let text = schedlab_core::input::read_bounded_string(path, MAX_CONFIG_BYTES)
        .map_err(|e| InputError(format!("--config {}: {e}", path.display())))?;
    schedlab_core::json_input::parse_object(&text)
        .map_err(|e| InputError(format!("--config {}: {e}", path.display())).into())
}

/// One episode of a round.
struct Slot<'a> {
    index: usize,
    scenario: &'a workloads::Scenario,
    seed: u64,
    sigma: f32,
}

/// Plays a round's episodes, one thread each, every one with its own frozen
/// copy of the actor; returns them in slot order.
fn play_round(trainer: &Trainer, slots: &[Slot<'_>], progress: &ProgressBar) -> Result<Vec<Episode>> {
    let explorers = slots
        .iter()
        .map(|s| trainer.explorer(s.seed, s.sigma))
        .collect::<Result<Vec<_>, _>>()?;
    let reward = trainer.config().reward;
    let work: Vec<_> = slots.iter().zip(explorers).collect();
    let outcomes = crate::threads::one_thread_each(work, "an episode", |(slot, explorer)| {
        let episode =
            crate::episode_play::play_episode(slot.scenario, slot.seed, explorer, trainer.tracker(), &reward, None)
                .with_context(|| format!("episode on {} seed {}", slot.scenario.name(), slot.seed));
        progress.inc(1);
        episode
    });
    outcomes.into_iter().collect()
}
