//! The command line: what a user can ask schedlab to do.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "schedlab",
    version,
    about = "A lab for Kubernetes schedulers: seeded workloads and faults, A/B results"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario on every arm and seed and compare the arms.
    Scenario(Box<ScenarioArgs>),
    /// List the built-in scenarios.
    Scenarios,
    /// Train the AGMARL-DKS networks (MADDPG) on simulated episodes.
    Train(TrainArgs),
    /// How well the AGMARL score sources predict what their placements realise (AUC, RMSE, R², Brier).
    Heads(HeadsArgs),
    /// Provision a cluster: `cluster up|status|down --local`.
    Cluster(crate::cluster_cmd::ClusterArgs),
    /// Rebuild every table and plot of run folders from their raw records (report.html and more).
    Report(crate::report_cmd::ReportArgs),
    /// The regression gate: exit 1 when NEW is significantly worse than BASE on a gated metric.
    Compare(crate::compare_cmd::CompareArgs),
    /// Table D (claim 5): decision-time growth, quality and training cost against the monolithic foil, over
    /// run folders of the same scenarios at several cluster sizes.
    Scaling(crate::scaling_cmd::ScalingArgs),
    /// Sweeps: scenarios × arms × seeds × checkpoints and training runs from one sweep file, resumably.
    Sweep(crate::sweep_cmd::SweepArgs),
}

/// Where the cluster comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClusterKind {
    /// The in-process discrete-event simulator (virtual time, never sleeps).
    Sim,
    /// A real control plane on loopback (etcd, kube-apiserver, kube-scheduler) with emulated nodes:
    /// the one `schedlab cluster up --local` runs, else one brought up for this invocation.
    Local,
    /// Any cluster through a kubeconfig (`--kubeconfig`, else KUBECONFIG, else ~/.kube/config; `--context`).
    Kube,
    /// A kind cluster made for the invocation from the scenario's nodes (docker and kind), with the images
    /// built and loaded and the in-cluster agmarl scheduler deployed; deleted afterwards unless --keep.
    Kind,
    /// A GKE cluster: the current kubeconfig context (or --context), its node pools checked against the
    /// scenario; created and deleted only with --provision.
    Gke,
}

impl ClusterKind {
    pub fn name(self) -> &'static str {
        match self {
            ClusterKind::Sim => "sim",
            ClusterKind::Local => "local",
            ClusterKind::Kube => "kube",
            ClusterKind::Kind => "kind",
            ClusterKind::Gke => "gke",
        }
    }
}

/// How a failed kind node goes down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindFault {
    /// `docker stop` the node's container (`docker start` to recover).
    Stop,
    /// `docker pause` it (`docker unpause` to recover).
    Pause,
}

/// Where a real cluster's nodes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodesFrom {
    /// Node objects made from the scenario, played by schedlab's node emulator.
    Emulated,
    /// The cluster's own nodes (those matching --node-selector).
    Existing,
    /// --cluster local: the scenario's first N nodes as real kubelets on this
    /// machine (`real:N`), the rest on the node emulator (`real:N+emulated`).
    Real(provisioning::kubelets::scenario::RealNodesFlag),
}

impl std::str::FromStr for NodesFrom {
    type Err = String;
    fn from_str(text: &str) -> Result<NodesFrom, String> {
        match text {
            "emulated" => Ok(NodesFrom::Emulated),
            "existing" => Ok(NodesFrom::Existing),
            real if real.starts_with("real:") => real.parse().map(NodesFrom::Real),
            other => Err(format!(
                "{other:?} is not emulated, existing, real:N or real:N+emulated"
            )),
        }
    }
}

impl std::fmt::Display for NodesFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodesFrom::Emulated => write!(f, "emulated"),
            NodesFrom::Existing => write!(f, "existing"),
            NodesFrom::Real(real) if real.emulated_rest => write!(f, "real:{}+emulated", real.count),
            NodesFrom::Real(real) => write!(f, "real:{}", real.count),
        }
    }
}

#[derive(Debug, Args)]
pub struct ScenarioArgs {
    /// A built-in scenario name (see `schedlab scenarios`) or a path to a scenario YAML file.
    pub scenario: String,

    /// The cluster backend.
    #[arg(long, value_enum, default_value_t = ClusterKind::Sim)]
    pub cluster: ClusterKind,

    /// The schedulers to compare, comma-separated; the first is the reference arm.
    /// Known arms: default, binpack, random, cost-binpack, target-load, load-aware (baselines);
    /// agmarl, agmarl-nognn, agmarl-linear,
    /// agmarl-nostress (AGMARL-DKS and its ablations, with the bundled checkpoint unless --checkpoint);
    /// agmarl-untrained, agmarl-analytic (controls: agmarl's controller with the network's initial weights
    /// of --init-seed, or with hand-written score formulas; no checkpoint); agmarl-nognn-untrained,
    /// agmarl-linear-untrained, agmarl-nostress-untrained (each ablation's untrained twin: its controller
    /// with the initial weights of --init-seed); drs, drs-agmarl-reward (the monolithic foil, with
    /// --drs-checkpoint);
    /// profile:FILE or profile:NAME=FILE (a kube-scheduler configuration file, KubeSchedulerConfiguration
    /// kubescheduler.config.k8s.io/v1, as a profile arm named NAME or the file's stem; --cluster sim only);
    /// external:NAME (a scheduler already running in the cluster under that schedulerName binds the run's pods;
    /// the arm is named NAME; not on --cluster sim);
    /// extender:URL or extender:NAME=URL, options after '#' as timeout=500ms&weight=2&base=binpack (a
    /// kube-scheduler HTTP extender's filter and prioritize on top of a profile; the arm is named NAME or extender).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "default,binpack,cost-binpack,target-load,load-aware,random,agmarl,agmarl-untrained,\
                         agmarl-analytic"
    )]
    pub arms: Vec<String>,

    /// AGMARL controller settings as JSON for every agmarl arm (the controls included), any subset of the
    /// checkpoint sidecar's `training.config.policy` (`delta_lex`, `score_tolerance`, `linear_weights`, `stress`, `restraint`,
    /// `preemption`), e.g. `{"restraint": {"enabled": false}}` or `{"preemption": false}` (no DefaultPreemption
    /// for a pod no node takes; on by default, as in every kube-scheduler profile); each arm keeps its own variant.
    #[arg(long, value_name = "FILE")]
    pub agmarl_config: Option<PathBuf>,

    /// An AGMARL checkpoint (`.safetensors` with its `.json` sidecar) for the trained agmarl arms,
    /// instead of the bundled one. The controls (agmarl-analytic, the untrained twins) have no checkpoint:
    /// they take only its measured errors (selection tolerance, decline margin), as they stand beside it.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,

    /// The network of the DRS arm (drs or drs-agmarl-reward: the monolithic foil, a centralised DQN), trained
    /// by `schedlab train --variant drs --set nodes=N` for this scenario's node count N; a network runs at
    /// the size it was trained for only.
    #[arg(long, value_name = "FILE")]
    pub drs_checkpoint: Option<PathBuf>,

    /// The untrained twins (agmarl-untrained, agmarl-nognn-untrained, ...): the seed of their network's initial
    /// weights, exactly those `schedlab train --seed S` starts from (default 1000, the bundled checkpoints'
    /// training seed). Only with such an arm.
    #[arg(long, value_name = "S")]
    pub init_seed: Option<u64>,

    /// How many seeds to run each arm on (10 by default: with 3 a side no
    /// difference can be significant).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub seeds: u32,

    /// The first seed; seeds are FIRST, FIRST+1, ... (evaluation seeds stay below 1000).
    #[arg(long, default_value_t = 1)]
    pub first_seed: u64,

    /// Override a scenario parameter, e.g. `--set nodes=200` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,

    /// Let a scenario's `replay` read this trace file, though it is not inside the scenario file's folder
    /// (an absolute path, or one through `..`); repeatable.
    #[arg(long = "allow-trace", value_name = "PATH")]
    pub allow_trace: Vec<PathBuf>,

    /// The run folder to write (must not exist or be empty). Default: runs/<scenario>-<time>.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// How many runs to play at once, at most 256 and no more than there are runs (default: the number of cores;
    /// always 1 on a real cluster).
    #[arg(long)]
    pub jobs: Option<usize>,

    /// The most records one run may write, in GiB, estimated from the scenario before anything runs (its samples
    /// and the events every pod writes at least); a scenario over it is refused. Raise it deliberately for long or
    /// huge scenarios.
    #[arg(long, value_name = "GIB", default_value_t = 4.0)]
    pub max_records_gib: f64,

    /// --cluster sim: charge each decision's wall-clock time to virtual time, so a slow policy builds a
    /// queue as it would in a cluster (records then depend on the machine, not only on the seed).
    #[arg(long)]
    pub charge_decision_time: bool,

    /// Write one JSON line per scheduling decision to runs/<arm>/seed-<n>/decisions.jsonl: the pod, its
    /// candidates, the chosen node and the runner-up with their scores, the cluster's stress, and for the agmarl
    /// arms the objective order in force, the candidates after each lexicographic step and why a pod was
    /// declined. Decisions and records are the same as without it; decision times include the explaining. On a
    /// real cluster, only for arms schedlab's bind loop decides (not `default`, the cluster's kube-scheduler).
    #[arg(long)]
    pub explain: bool,

    /// Leave out the run folder's report (report/: plots, report.html); `schedlab report DIR` writes it at any time.
    /// The records and the summaries are written as always. A sweep's cells run with it.
    #[arg(long)]
    pub no_report: bool,

    /// Print every metric's row (the full table of report.md) instead of the headline and the key table.
    #[arg(long)]
    pub all_metrics: bool,

    /// Settings of the real clusters (--cluster local, kube, kind, gke), each group for its provider.
    #[command(flatten)]
    pub real: RealClusterArgs,

    #[command(flatten)]
    pub kube: KubeArgs,

    #[command(flatten)]
    pub kind: KindArgs,

    #[command(flatten)]
    pub gke: GkeArgs,
}

/// Settings every real cluster takes.
#[derive(Debug, Args)]
#[command(next_help_heading = "Real clusters (--cluster local|kube|kind|gke)")]
pub struct RealClusterArgs {
    /// Scenario seconds per wall second (60 plays a scenario hour in a wall minute).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,

    /// Client QPS of schedlab's scheduler and emulator (default: the local kube-scheduler's, else 50).
    #[arg(long)]
    pub qps: Option<f32>,

    /// Client burst (default: the local kube-scheduler's, else 100).
    #[arg(long)]
    pub burst: Option<u32>,

    /// Print what bringing the cluster up would do (every external command, the kind config, the GKE cost
    /// estimate, the control plane used) and the runs, then exit without touching anything.
    #[arg(long)]
    pub dry_run: bool,

    /// --cluster local: use the running control plane of this state folder (see `schedlab cluster up --local
    /// --state`). Default: the default state folder's when it runs, else one brought up for this invocation.
    #[arg(long, value_name = "DIR")]
    pub local_state: Option<PathBuf>,

    /// --cluster kube: emulated nodes made from the scenario (`emulated`), or the cluster's existing
    /// nodes (`existing`). --cluster local: `emulated`, or the scenario's first N nodes as real kubelets
    /// on this machine (`real:N`; `real:N+emulated` plays the rest on the node emulator; needs root).
    #[arg(long, value_name = "emulated|existing|real:N[+emulated]", default_value_t = NodesFrom::Emulated)]
    pub nodes: NodesFrom,

    /// --cluster kind|gke and --nodes real:N: the schedlab repository (docker build context, deploy/kustomize overlays).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

    /// --cluster kind, gke --provision: keep the cluster afterwards (it is deleted by default).
    #[arg(long)]
    pub keep: bool,
}

/// `--cluster kube` (and gke without --provision): the kubeconfig.
#[derive(Debug, Args)]
#[command(next_help_heading = "--cluster kube")]
pub struct KubeArgs {
    /// --cluster kube|gke: the kubeconfig file (default: KUBECONFIG, else ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// --cluster kube|gke: the kubeconfig context (default: the current one).
    #[arg(long)]
    pub context: Option<String>,

    /// --nodes existing: a label selector of the nodes to use.
    #[arg(long, value_name = "SELECTOR")]
    pub node_selector: Option<String>,
}

/// `--cluster kind`.
#[derive(Debug, Args)]
#[command(next_help_heading = "--cluster kind")]
pub struct KindArgs {
    /// The kind cluster's name.
    #[arg(long, default_value = "schedlab")]
    pub kind_name: String,

    /// At most this many workers (each is a container on this machine).
    #[arg(long, default_value_t = provisioning::kind::DEFAULT_MAX_WORKERS)]
    pub kind_max_workers: usize,

    /// Play the scenario's nodes beyond --kind-max-workers as emulated nodes (node emulator)
    /// instead of refusing the scenario.
    #[arg(long)]
    pub kind_extra_emulated: bool,

    /// How a failed node goes down.
    #[arg(long, value_enum, default_value_t = KindFault::Stop)]
    pub kind_fault: KindFault,

    /// The node image (`kind create cluster --image`), e.g. kindest/node:v1.31.0.
    #[arg(long, value_name = "IMAGE")]
    pub kind_node_image: Option<String>,

    /// Do not build the images; load the ones docker already has.
    #[arg(long)]
    pub no_image_build: bool,
}

/// `--cluster gke`.
#[derive(Debug, Args)]
#[command(next_help_heading = "--cluster gke")]
pub struct GkeArgs {
    /// Create a cluster for the scenario first (printing the cost estimate) and delete it after.
    #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
    pub provision: bool,

    /// The zone (e.g. us-central1-a); needed with --provision.
    #[arg(long)]
    pub zone: Option<String>,

    /// With --provision: the name of the cluster to create.
    #[arg(long, default_value = "schedlab")]
    pub gke_cluster_name: String,

    /// The registry holding the images (REGISTRY/agmarl-scheduler:dev, REGISTRY/workload:dev).
    #[arg(long, value_name = "REGISTRY")]
    pub image_registry: Option<String>,

    /// Fail nodes by stopping their VMs (`gcloud compute instances stop|start`) instead of
    /// cordoning them and deleting their pods.
    #[arg(long)]
    pub allow_vm_faults: bool,
}

/// Episodes of a default `schedlab train` run, with which the bundled
/// checkpoints are trained (their sidecars record the wall time it took).
pub const DEFAULT_EPISODES: u32 = 300;

#[derive(Debug, Args)]
pub struct TrainArgs {
    /// A scenario to train on (built-in name or YAML path; repeatable). Episodes take them in turn.
    /// Default: pressure and churn.
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,

    /// How many episodes to play.
    #[arg(long, default_value_t = DEFAULT_EPISODES, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub episodes: u32,

    /// The first seed (at least 1000: seeds below are kept for evaluation); episode e uses SEED+e.
    #[arg(long, default_value_t = 1000)]
    pub seed: u64,

    /// The folder to write (must not exist or be empty). Default: runs/train-<time>.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Override a scenario parameter of every training scenario, e.g. `--set nodes=20` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,

    /// Let a scenario's `replay` read this trace file, though it is not inside the scenario file's folder
    /// (an absolute path, or one through `..`); repeatable.
    #[arg(long = "allow-trace", value_name = "PATH")]
    pub allow_trace: Vec<PathBuf>,

    /// Training settings as JSON (any subset of the checkpoint sidecar's `training.config`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The variant to train: agmarl (default), agmarl-nognn (no graph network in training or use),
    /// agmarl-linear (the weighted-sum controller) or agmarl-nostress (no stress awareness). The controls
    /// agmarl-untrained and agmarl-analytic are not trained.
    #[arg(long, value_name = "ARM")]
    pub variant: Option<String>,

    /// How many simulated environments play at once, each with a frozen copy of the actor.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub envs: u32,
}

#[derive(Debug, Args)]
pub struct HeadsArgs {
    /// A scenario to measure on (built-in name or YAML path, held-out files included; repeatable).
    /// Default: pressure and churn.
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,

    /// Seeds per scenario.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub seeds: u64,

    /// The first seed (evaluation seeds are below 1000).
    #[arg(long, default_value_t = 1)]
    pub first_seed: u64,

    /// An AGMARL checkpoint to measure (repeatable).
    #[arg(long = "checkpoint", value_name = "FILE")]
    pub checkpoints: Vec<PathBuf>,

    /// Measure the untrained network of this init seed (repeatable): the weights `schedlab train --seed S`
    /// starts from. It selects with the tolerance of the `--checkpoint` of training seed S, else of the
    /// first `--checkpoint`, else of the bundled agmarl.
    #[arg(long = "init-seed", value_name = "S")]
    pub init_seeds: Vec<u64>,

    /// Measure the analytic score formulas of the `agmarl-analytic` control.
    #[arg(long)]
    pub analytic: bool,

    /// Override a scenario parameter of every scenario, e.g. `--set nodes=20` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,

    /// Let a scenario's `replay` read this trace file, though it is not inside the scenario file's folder
    /// (an absolute path, or one through `..`); repeatable.
    #[arg(long = "allow-trace", value_name = "PATH")]
    pub allow_trace: Vec<PathBuf>,

    /// Also write heads.csv and heads.json into this folder (must not exist or be empty).
    #[arg(long)]
    pub out: Option<PathBuf>,
}
