//! `schedlab train --variant drs` (or `drs-agmarl-reward`): trains the DRS
//! foil's DQN ([`scheduler::drs::train`]) on simulated episodes of one
//! cluster size.
//!
//! Every training scenario must start with the same number of nodes (give
//! `--set nodes=N`): the network's input and output are sized by it. Each
//! round plays `--envs` episodes at once, one thread each, with ε-greedy
//! copies of the online network; their decisions become transitions
//! (rewarded at once for `drs`, by the placements' realised metrics once the
//! episode is over for `drs-agmarl-reward`), and the learner then makes one
//! update per new transition. Every [`VALIDATE_EVERY`] episodes the greedy
//! network plays each scenario at a validation seed (900000 and up, never
//! trained on) and its mean reward is recorded.
//!
//! Writes `training_curve.csv`, `validation_curve.csv`,
//! `checkpoint.safetensors` and its sidecar `checkpoint.json` (the cluster
//! size, the reward, every setting, the parameter count, the wall time and
//! the peak memory).

use crate::cli::TrainArgs;
use crate::exit::InputError;
use crate::out::outln;
use crate::peak_memory::peak_rss_bytes;
use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use results::run_folder::RunFolder;
use scheduler::agmarl::train::{DEFAULT_HORIZON, RealisedTracker};
use scheduler::drs::train::{Assembled, assemble, realised_by_pod};
use scheduler::drs::{Dqn, DqnConfig, DrsMeta, DrsReward, DrsScheduler, QWeights, checkpoint};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

/// Episodes between validation points.
pub const VALIDATE_EVERY: usize = 10;
/// The validation seed of the first scenario (the next scenario takes the next seed).
pub const VALIDATION_SEED: u64 = 900_000;

const CURVE_FILE: &str = "training_curve.csv";
const CURVE_HEADER: &str =
    "episode,scenario,seed,epsilon,decisions,transitions,unrewarded,reward_mean,loss,updates,replay,wall_s";
const VALIDATION_FILE: &str = "validation_curve.csv";
const VALIDATION_HEADER: &str = "after_episodes,scenario,seed,decisions,reward_mean";
const CHECKPOINT_FILE: &str = "checkpoint.safetensors";
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The number of nodes every scenario starts with, or an error naming them.
fn cluster_size(scenarios: &[workloads::Scenario], seed: u64) -> Result<usize> {
    let sizes: Vec<(String, usize)> = scenarios
        .iter()
        .map(|s| (s.name().to_string(), s.expand(seed).nodes.len()))
        .collect();
    let first = sizes.first().map_or(0, |(_, n)| *n);
    if sizes.iter().any(|(_, n)| *n != first) {
        let listed: Vec<String> = sizes.iter().map(|(s, n)| format!("{s} has {n}")).collect();
        bail!(InputError(format!(
            "a DRS network is built for one cluster size, and the training scenarios start with different node \
             counts ({}): give --set nodes=N",
            listed.join(", ")
        )));
    }
    if first == 0 {
        bail!(InputError("the training scenarios start without nodes".into()));
    }
    Ok(first)
}

fn read_config(path: &Path) -> Result<DqnConfig> {
    let bad = |what: String| InputError(format!("--config {}: {what}", path.display()));
    let text = schedlab_core::input::read_bounded_string(path, MAX_CONFIG_BYTES).map_err(|e| bad(e.to_string()))?;
    let config: DqnConfig = schedlab_core::json_input::parse_object(&text).map_err(|e| bad(e.to_string()))?;
    config.validate().map_err(|e| bad(e.to_string()))?;
    Ok(config)
}

/// One episode of a round.
struct Slot<'a> {
    index: usize,
    scenario: &'a workloads::Scenario,
    seed: u64,
    epsilon: f64,
}

/// Plays `scenario` at `seed` on the simulator with `policy` deciding and
/// returns what its decisions taught.
fn play(scenario: &workloads::Scenario, seed: u64, mut policy: DrsScheduler) -> Result<(usize, Assembled)> {
    let timeline = scenario.expand(seed);
    let sim = schedlab_core::sim::Sim::new(timeline, seed, schedlab_core::behaviour::ModelConfig::default())
        .context("setting up the simulator")?;
    let mut tracker = RealisedTracker::new(DEFAULT_HORIZON);
    let mut placer = |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| {
        scheduler::Scheduler::schedule(&mut policy, pod, view)
    };
    sim.finish(&mut placer, &mut Tracking(&mut tracker));
    let log = policy.take_log();
    let decisions = log.len();
    let realised = realised_by_pod(tracker.take_completed(), tracker.horizon());
    Ok((decisions, assemble(log, policy.reward(), &realised)))
}

/// Forwards the simulator's records to the realised-metrics tracker.
struct Tracking<'a>(&'a mut RealisedTracker);

impl schedlab_core::RecordSink for Tracking<'_> {
    fn record(&mut self, record: schedlab_core::Record) {
        self.0.observe(&record);
    }
}

/// Plays a round's episodes, one thread each; returns them in slot order.
fn play_round(
    reward: DrsReward,
    weights: &QWeights,
    slots: &[Slot<'_>],
    progress: &ProgressBar,
) -> Result<Vec<(usize, Assembled)>> {
    let work: Vec<_> = slots
        .iter()
        .map(|slot| {
            let mut policy = DrsScheduler::new(reward, weights.clone(), slot.seed);
            policy.explore(slot.epsilon, slot.seed);
            (slot, policy)
        })
        .collect();
    crate::threads::one_thread_each(work, "an episode", |(slot, policy)| {
        let played = play(slot.scenario, slot.seed, policy)
            .with_context(|| format!("episode on {} seed {}", slot.scenario.name(), slot.seed));
        progress.inc(1);
        played
    })
    .into_iter()
    .collect()
}

/// Trains a DRS network for `reward` on `scenarios` (loaded and checked by
/// `schedlab train`).
pub(crate) fn run(args: &TrainArgs, reward: DrsReward, scenarios: Vec<workloads::Scenario>) -> Result<()> {
    let cfg = match &args.config {
        Some(path) => read_config(path)?,
        None => DqnConfig::default(),
    };
    let nodes = cluster_size(&scenarios, args.seed)?;
    let episodes = args.episodes as usize;
    let envs = (args.envs as usize).min(episodes).max(1);
    let last_seed = args
        .seed
        .checked_add(episodes as u64 - 1)
        .ok_or_else(|| InputError(format!("--seed {}: too large for {episodes} episodes", args.seed)))?;
    let out = args.out.clone().unwrap_or_else(crate::train_common::default_out);
    let folder = RunFolder::create(&out)?;
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    let mut dqn = Dqn::new(nodes, cfg, args.seed).context("setting up the DQN")?;
    tracing::info!(
        episodes,
        envs,
        nodes,
        parameters = dqn.online().parameters(),
        out = %out.display(),
        "training {}",
        reward.arm_name()
    );

    let progress = crate::train_common::progress_bar(episodes as u64);
    folder.append(CURVE_FILE, &format!("{CURVE_HEADER}\n"))?;
    let mut validation = format!("{VALIDATION_HEADER}\n");
    let mut transitions = 0usize;
    let mut validate = |dqn: &Dqn, done: usize| -> Result<()> {
        let weights = dqn.weights()?;
        for (k, scenario) in scenarios.iter().enumerate() {
            let seed = VALIDATION_SEED + k as u64;
            let mut policy = DrsScheduler::new(reward, weights.clone(), seed);
            // ε = 0: the greedy policy, logged so that its reward can be read
            policy.explore(0.0, seed);
            let (decisions, a) = play(scenario, seed, policy)?;
            let _ = writeln!(
                validation,
                "{done},{},{seed},{decisions},{:.6}",
                scenario.name(),
                a.reward_mean
            );
        }
        folder.write(VALIDATION_FILE, &validation)?;
        Ok(())
    };
    validate(&dqn, 0).context("playing the validation episodes")?;
    for first in (0..episodes).step_by(envs) {
        let slots: Vec<Slot> = (first..(first + envs).min(episodes))
            .map(|e| Slot {
                index: e,
                scenario: &scenarios[e % scenarios.len()],
                seed: args.seed + e as u64,
                epsilon: dqn.config().epsilon(e, episodes),
            })
            .collect();
        let played = play_round(reward, &dqn.weights()?, &slots, &progress)?;
        let mut rows = Vec::with_capacity(played.len());
        let mut added = 0usize;
        for (slot, (decisions, a)) in slots.iter().zip(played) {
            rows.push((slot, decisions, a.transitions.len(), a.unrewarded, a.reward_mean));
            added += a.transitions.len();
            dqn.add(a.transitions);
        }
        transitions += added;
        let steps = (added as f64 * dqn.config().updates_per_transition).ceil() as usize;
        let loss = dqn.learn(steps).context("learning")?;
        let mut curve = String::new();
        for (slot, decisions, kept, unrewarded, reward_mean) in rows {
            let _ = writeln!(
                curve,
                "{},{},{},{:.4},{decisions},{kept},{unrewarded},{reward_mean:.6},{},{},{},{:.3}",
                slot.index,
                slot.scenario.name(),
                slot.seed,
                slot.epsilon,
                loss.map_or_else(String::new, |l| format!("{l:.6}")),
                dqn.updates(),
                dqn.replay_len(),
                started.elapsed().as_secs_f64()
            );
            progress.set_message(format!(
                "reward {reward_mean:.3}  loss {}",
                loss.map_or(f64::NAN, |l| l)
            ));
        }
        folder.append(CURVE_FILE, &curve)?;
        let done = first + slots.len();
        if done.is_multiple_of(VALIDATE_EVERY) || done == episodes {
            validate(&dqn, done).context("playing the validation episodes")?;
        }
    }
    progress.finish_and_clear();

    let wall = started.elapsed().as_secs_f64();
    let mut training =
        crate::train_common::training_record(args, &scenarios, (episodes, envs, last_seed), started_at, wall);
    training.extend(
        serde_json::json!({
            "updates": dqn.updates(),
            "transitions": transitions,
            "config": dqn.config(),
            "validation": {"every": VALIDATE_EVERY, "first_seed": VALIDATION_SEED},
            "peak_rss_bytes": peak_rss_bytes(),
        })
        .as_object()
        .cloned()
        .unwrap_or_default(),
    );
    let training = serde_json::Value::Object(training);
    let weights = out.join(CHECKPOINT_FILE);
    let meta = DrsMeta::new(dqn.online(), reward, training);
    checkpoint::save(dqn.online(), &meta, &weights).context("saving the checkpoint")?;
    folder.mark_complete()?;

    outln!(
        "Trained {} for {nodes} nodes ({} parameters): {episodes} episodes, {} updates, {transitions} transitions in {wall:.1} s",
        reward.arm_name(),
        dqn.online().parameters(),
        dqn.updates()
    )?;
    outln!("Curve: {}", out.join(CURVE_FILE).display())?;
    outln!("Checkpoint: {}", weights.display())?;
    Ok(())
}
