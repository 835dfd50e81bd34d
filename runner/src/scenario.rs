//! One scenario's invocation, checked by the binary: its manifest, what
//! each arm is (the arm facts), every (arm, seed) run through one backend,
//! and the finished folder with its summaries and report.

use crate::Result;
use crate::error::While;
use crate::play::{Job, Runner};
use indicatif::{ProgressBar, ProgressStyle};
use results::run_folder::{
    ArmControl, ArmFacts, Build, InvocationManifest, MANIFEST_FILE, MANIFEST_VERSION, RunFolder,
};
use results::summary::Summary;
use schedlab_core::backend::{Backend, PROGRESS_STEPS};
use scheduler::profile::file::ProfileFile;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What the user asked for, checked, before any backend is chosen.
pub struct Invocation {
    pub scenario: workloads::Scenario,
    pub arms: Vec<String>,
    pub seeds: Vec<u64>,
    pub out: PathBuf,
    pub jobs_in_parallel: usize,
    pub checkpoint: Option<scheduler::agmarl::network::AgmarlNet>,
    /// the sidecar of `--checkpoint`, for the arm facts
    pub checkpoint_meta: Option<scheduler::agmarl::CheckpointMeta>,
    pub agmarl_config: Option<scheduler::agmarl::AgmarlConfig>,
    /// `agmarl-untrained`'s init seed
    pub init_seed: u64,
    /// the arms read from kube-scheduler configuration files, by arm name
    pub profile_files: BTreeMap<String, ProfileFile>,
    /// the DRS arms' networks, checked against the arms and the cluster size
    pub drs: crate::drs_input::DrsNetworks,
    /// the arms decided by a scheduler already in the cluster (`external:NAME`), by name
    pub external: BTreeSet<String>,
    /// the arms that call a kube-scheduler extender (`extender:URL`), by name
    pub extenders: crate::extender_arm::ExtenderArms,
    /// `--checkpoint` as given, for the manifest
    pub checkpoint_path: Option<PathBuf>,
    /// write every decision's record beside the run's records
    pub explain: bool,
    /// write the folder's report (`report/`); without it, `schedlab report DIR` writes it later
    pub report: bool,
    /// the command line, for the manifest
    pub command_line: Vec<String>,
    /// the program that plays the runs, for the manifests
    pub build: Build,
}

impl std::fmt::Debug for Invocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invocation")
            .field("scenario", &self.scenario.name())
            .field("arms", &self.arms)
            .field("seeds", &self.seeds)
            .field("out", &self.out)
            .finish_non_exhaustive()
    }
}

/// A finished run folder: its summary, and what the user should be told
/// about its runs.
#[derive(Debug)]
pub struct Finished {
    pub summary: Summary,
    /// one line each (an external arm whose scheduler bound no pod)
    pub warnings: Vec<String>,
}

/// Plays every (arm, seed) run of `invocation` on `backend` into a new run
/// folder and completes the folder (summaries, report). `cluster` is what
/// the manifest says about the backend's cluster.
pub fn play<B: Backend, C: Serialize>(invocation: &Invocation, backend: &B, cluster: Option<C>) -> Result<Finished> {
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
        checkpoint: checkpoint_origin(invocation.checkpoint_path.as_deref(), arms),
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
            .while_doing(|| "recording --agmarl-config".into())?,
        arm_facts,
        profile_files: invocation
            .profile_files
            .iter()
            .map(|(arm, file)| Ok((arm.clone(), serde_json::to_value(file)?)))
            .collect::<Result<_, serde_json::Error>>()
            .while_doing(|| "recording the profile files".into())?,
        extenders: invocation
            .extenders
            .iter()
            .map(|(arm, e)| Ok((arm.clone(), serde_json::to_value(e)?)))
            .collect::<Result<_, serde_json::Error>>()
            .while_doing(|| "recording the extender arms".into())?,
        explain: invocation.explain,
        build: invocation.build,
        command_line: invocation.command_line.clone(),
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
        explain: invocation.explain,
        profile_files: &invocation.profile_files,
        drs: &invocation.drs,
        extenders: &invocation.extenders,
        build: invocation.build,
    };
    runner.play_all(&jobs, invocation.jobs_in_parallel)?;
    progress.finish_and_clear();

    // The runs are read back once: the summaries and the report, then the folder is complete.
    let summary = results::run_folder::finish_with(&folder, &mut manifest, jiff::Timestamp::now(), invocation.report)?;
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
    let warnings = crate::external_arm::unbound_warnings(runs, &invocation.external);

    Ok(Finished { summary, warnings })
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
                    .while_doing(|| format!("reading {arm}'s bundled checkpoint"))?
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

fn progress_bar(len: u64) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
