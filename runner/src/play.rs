//! Playing every (arm, seed) run of an invocation through one backend: the
//! arm's policy built (with `--explain`, wrapped to explain each
//! decision), the run's records, decision times and manifest written into
//! its folder. Which backend it is does not matter here.

use crate::Result;
use crate::error::{RunnerError, While};
use indicatif::ProgressBar;
use results::decisions::DECISIONS_FILE;
use results::records::RunSink;
use results::run_folder::{MANIFEST_VERSION, RECORDS_FILE, RunExplain, RunFolder, RunManifest, layout};
use schedlab_core::backend::{Backend, PROGRESS_STEPS, RunObserver, RunRequest};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// One (arm, seed) pair to play.
#[derive(Debug, Clone)]
pub struct Job {
    pub arm: String,
    pub seed: u64,
}

/// What every run of an invocation shares.
pub struct Runner<'a, B> {
    pub backend: &'a B,
    pub scenario: &'a workloads::Scenario,
    pub folder: &'a RunFolder,
    /// the network for the trained agmarl arms, when not the bundled one
    pub checkpoint: Option<&'a scheduler::agmarl::network::AgmarlNet>,
    /// that checkpoint's measured head error (its selection tolerance, which the controls share)
    pub checkpoint_head_error: Option<scheduler::agmarl::MeasuredError>,
    /// the seed of `agmarl-untrained`'s initial weights
    pub init_seed: u64,
    /// the controller settings of the agmarl arms, when not the defaults
    pub agmarl_config: Option<&'a scheduler::agmarl::AgmarlConfig>,
    pub progress: &'a ProgressBar,
    /// write every decision's explanation beside the records
    pub explain: bool,
    /// the arms read from kube-scheduler configuration files, by arm name
    pub profile_files: &'a BTreeMap<String, scheduler::profile::file::ProfileFile>,
    /// the DRS arms' networks, by arm
    pub drs: &'a crate::drs_input::DrsNetworks,
    /// the arms that call a kube-scheduler extender, by arm
    pub extenders: &'a crate::extender_arm::ExtenderArms,
    /// the program the runs are played by, for their manifests
    pub build: results::run_folder::Build,
}

impl<B> std::fmt::Debug for Runner<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("scenario", &self.scenario.name())
            .field("explain", &self.explain)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Runner<'_, B> {
    /// Plays every job, at most `parallel` at a time (and no more than the backend allows); stops
    /// starting jobs after the first failure and returns it.
    pub fn play_all(&self, jobs: &[Job], parallel: usize) -> Result<()> {
        let parallel = self
            .backend
            .max_parallel_runs()
            .map_or(parallel, |max| parallel.min(max));
        let next = AtomicUsize::new(0);
        let finished = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let outcomes: Mutex<Vec<Option<Result<()>>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
        let mut spawn_error = None;
        std::thread::scope(|scope| {
            let worker = || {
                loop {
                    if failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    if parallel == 1 {
                        self.progress.set_message(playing_message(job, i, jobs.len()));
                    }
                    let outcome = self
                        .play(job)
                        .while_doing(|| format!("arm {} seed {}", job.arm, job.seed));
                    let done = finished.fetch_add(1, Ordering::Relaxed) + 1;
                    if parallel > 1 {
                        self.progress.set_message(format!("{done}/{} runs", jobs.len()));
                    }
                    if outcome.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    if let Ok(mut slots) = outcomes.lock() {
                        slots[i] = Some(outcome);
                    }
                }
            };
            // no more threads than runs; when the system refuses one, the
            // threads already started play every run
            for started in 0..parallel.min(jobs.len()) {
                if let Err(e) = std::thread::Builder::new().spawn_scoped(scope, worker) {
                    tracing::warn!(started, "could not start another run thread: {e}");
                    if started == 0 {
                        spawn_error = Some(e);
                    }
                    break;
                }
            }
        });
        if let Some(e) = spawn_error {
            return Err(e).while_doing(|| "could not start a thread to play the runs".into());
        }
        let outcomes = outcomes
            .into_inner()
            .map_err(|_| RunnerError::Failed("a run thread panicked".into()))?;
        for (job, outcome) in jobs.iter().zip(outcomes) {
            match outcome {
                Some(Ok(())) => {}
                Some(Err(err)) => return Err(err),
                None => {
                    return Err(RunnerError::Failed(format!(
                        "arm {} seed {} did not run",
                        job.arm, job.seed
                    )));
                }
            }
        }
        Ok(())
    }

    /// Plays one run into its folder: records, decision times, decisions (with `--explain`), manifest last.
    fn play(&self, job: &Job) -> Result<()> {
        let dir = self.folder.run_dir(&job.arm, job.seed)?;
        let records = dir.join(RECORDS_FILE);
        let started = Instant::now();
        let timeline = self.scenario.expand(job.seed);
        let by_cluster = self.backend.decided_by_cluster(&job.arm);
        // the arm's decisions are explained where schedlab decides them
        let explaining = self.explain && by_cluster.is_none();
        let mut extender_counts = None;
        let policy = match by_cluster {
            Some(_) => None,
            None => Some(self.decide(job, explaining, &mut extender_counts)?),
        };
        let observer = RunProgress {
            bar: self.progress,
            reported: AtomicU64::new(0),
        };
        let decisions = dir.join(DECISIONS_FILE);
        let mut sink = RunSink::create(&records, explaining.then_some(decisions.as_path()))?;
        let played = self
            .backend
            .play(
                RunRequest {
                    timeline,
                    arm: &job.arm,
                    seed: job.seed,
                    policy,
                },
                &mut sink,
                &observer,
            )
            .map_err(|e| RunnerError::Backend(Box::new(e)))?;
        let decisions_written = sink.finish()?;
        if let Some(times) = played.policy_times {
            let path = dir.join(results::decision_time::DECISION_TIMES_FILE);
            results::decision_time::DecisionTimes::from_histogram(times.nanos, times.charged)
                .write(&path)
                .while_doing(|| format!("writing {}", path.display()))?;
        }
        let explain = match (self.explain, by_cluster, decisions_written) {
            (false, _, _) => None,
            (true, Some(cluster), _) => Some(RunExplain::NotApplicable {
                reason: format!(
                    "arm {} is decided by the cluster's own {} ({}), not by schedlab's bind loop, so its decisions \
                     cannot be explained",
                    job.arm, cluster.kind, cluster.scheduler_name
                ),
            }),
            (true, None, Some(decisions)) => Some(RunExplain::Written {
                file: DECISIONS_FILE,
                decisions,
            }),
            (true, None, None) => {
                return Err(RunnerError::Failed(format!(
                    "arm {} seed {}: its decisions file was not made",
                    job.arm, job.seed
                )));
            }
        };
        let extender = extender_counts.map(|c| crate::extender_arm::counts_of(&c));
        if let Some(note) = extender
            .as_ref()
            .and_then(|c| crate::extender_arm::failure_note(&job.arm, job.seed, c))
        {
            self.progress.suspend(|| schedlab_core::noteln!("{note}"));
        }
        let records_sha256 = schedlab_core::digest::file_sha256(&records)
            .while_doing(|| format!("reading back {}", records.display()))?;
        let manifest = RunManifest {
            manifest_version: MANIFEST_VERSION,
            scenario: self.scenario.name().to_string(),
            origin: self.scenario.origin().to_string(),
            params: self.scenario.params().clone(),
            resolved_scenario: self.scenario.resolved(),
            arm: job.arm.clone(),
            seed: job.seed,
            backend: self.backend.name(),
            build: self.build,
            records: RECORDS_FILE,
            records_sha256,
            explain,
            wall_seconds: started.elapsed().as_secs_f64(),
            simulated_seconds: played.scenario_seconds,
            cluster_run: played.facts,
            extender: extender
                .map(serde_json::to_value)
                .transpose()
                .while_doing(|| "recording the extender's calls".into())?,
        };
        results::run_folder::write_json(&dir.join(layout::RUN_MANIFEST_FILE), "the run's manifest", &manifest)?;
        Ok(())
    }

    /// The arm's policy as a backend calls it; explaining, every decision is explained for its decision
    /// record (which the backend writes to the run's sink). An extender arm's call counts are handed out in
    /// `extender_counts`.
    fn decide(
        &self,
        job: &Job,
        explaining: bool,
        extender_counts: &mut Option<scheduler::extender::SharedCounts>,
    ) -> Result<Box<dyn scheduler::Scheduler>> {
        let policy = match self.extenders.get(&job.arm) {
            Some(arm) => {
                let (policy, counts) = crate::extender_arm::policy(arm, job.seed);
                *extender_counts = Some(counts);
                policy
            }
            None => self.policy(job)?,
        };
        Ok(match explaining {
            true => Box::new(scheduler::explain::Explaining::new(policy)),
            false => policy,
        })
    }

    /// The arm's policy, with the checkpoint and controller settings given for the agmarl arms (the
    /// controls take the settings, the init seed and the selection tolerance of the checkpoint they
    /// stand beside — the one given, else the bundled `agmarl` — never its network).
    fn policy(&self, job: &Job) -> Result<Box<dyn scheduler::Scheduler>> {
        if let Some(file) = self.profile_files.get(&job.arm) {
            return Ok(Box::new(scheduler::profile::Cycle::new(file.profile, job.seed)));
        }
        if let (Some(reward), Some(drs)) = (
            scheduler::drs::DrsReward::from_arm_name(&job.arm),
            self.drs.get(&job.arm),
        ) {
            return Ok(Box::new(scheduler::drs::DrsScheduler::new(
                reward,
                drs.weights.clone(),
                job.seed,
            )));
        }
        if let Some(control) = scheduler::agmarl::Control::from_arm_name(&job.arm) {
            let config = self.agmarl_config.cloned().unwrap_or_default();
            let head_error = match self.checkpoint {
                Some(_) => self.checkpoint_head_error,
                None => scheduler::control_head_error(control.variant())?,
            };
            return Ok(scheduler::agmarl::control_arm(
                &job.arm,
                &config,
                head_error,
                self.init_seed,
                job.seed,
            )?);
        }
        let agmarl = scheduler::agmarl::Variant::from_arm_name(&job.arm).is_some();
        if !agmarl || (self.checkpoint.is_none() && self.agmarl_config.is_none()) {
            return Ok(scheduler::arm(&job.arm, job.seed)?);
        }
        let (net, head_error) = match self.checkpoint {
            Some(net) => (
                net.deep_clone()
                    .while_doing(|| "copying the checkpoint's network".into())?,
                self.checkpoint_head_error,
            ),
            None => {
                let (net, meta) = scheduler::bundled_checkpoint(&job.arm)?;
                (net, meta.measured_error())
            }
        };
        let config = self.agmarl_config.cloned().unwrap_or_default();
        Ok(scheduler::agmarl::arms::agmarl_arm_configured(
            &job.arm, net, &config, head_error, job.seed,
        )?)
    }
}

/// What the progress bar says while runs go one at a time (on a real
/// cluster a run takes minutes of wall time): which run it is.
fn playing_message(job: &Job, index: usize, total: usize) -> String {
    format!("{} seed {} (run {} of {total})", job.arm, job.seed, index + 1)
}

/// Moves the progress bar with a run.
struct RunProgress<'a> {
    bar: &'a ProgressBar,
    reported: AtomicU64,
}

impl RunObserver for RunProgress<'_> {
    fn progressed(&self, done: u64) {
        let done = done.min(PROGRESS_STEPS);
        let before = self.reported.fetch_max(done, Ordering::Relaxed);
        if done > before {
            self.bar.inc(done - before);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_played_alone_is_named_with_its_place() {
        let job = Job {
            arm: "binpack".into(),
            seed: 7,
        };
        assert_eq!(playing_message(&job, 2, 6), "binpack seed 7 (run 3 of 6)");
    }
}
