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
    Scenario(ScenarioArgs),
    /// List the built-in scenarios.
    Scenarios,
    /// Train the AGMARL-DKS networks (MADDPG) on simulated episodes.
    Train(TrainArgs),
    /// Provision a cluster: `cluster up|status|down --local`.
    Cluster(crate::cluster_cmd::ClusterArgs),
    /// Rebuild every table and plot of run folders from their raw records (report.html and more).
    Report(crate::report_cmd::ReportArgs),
    /// The regression gate: exit 1 when NEW is significantly worse than BASE on a gated metric.
    Compare(crate::compare_cmd::CompareArgs),
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
}

impl ClusterKind {
    pub fn name(self) -> &'static str {
        match self {
            ClusterKind::Sim => "sim",
            ClusterKind::Local => "local",
            ClusterKind::Kube => "kube",
        }
    }
}

/// Where a real cluster's nodes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NodesFrom {
    /// Node objects made from the scenario, played by schedlab's node emulator.
    Emulated,
    /// The cluster's own nodes (those matching --node-selector).
    Existing,
}

#[derive(Debug, Args)]
pub struct ScenarioArgs {
    /// A built-in scenario name (see `schedlab scenarios`) or a path to a scenario YAML file.
    pub scenario: String,

    /// The cluster backend.
    #[arg(long, value_enum, default_value_t = ClusterKind::Sim)]
    pub cluster: ClusterKind,

    /// The schedulers to compare, comma-separated; the first is the reference arm.
    /// Known arms: default, binpack, random (baselines); agmarl, agmarl-nognn, agmarl-linear,
    /// agmarl-nostress (AGMARL-DKS and its ablations, with the bundled checkpoint unless --checkpoint).
    #[arg(long, value_delimiter = ',', default_value = "default,binpack,random,agmarl")]
    pub arms: Vec<String>,

    /// An AGMARL checkpoint (`.safetensors` with its `.json` sidecar) for the agmarl arms,
    /// instead of the bundled one.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,

    /// How many seeds to run each arm on.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub seeds: u32,

    /// The first seed; seeds are FIRST, FIRST+1, ... (evaluation seeds stay below 1000).
    #[arg(long, default_value_t = 1)]
    pub first_seed: u64,

    /// Override a scenario parameter, e.g. `--set nodes=200` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,

    /// The run folder to write (must not exist or be empty). Default: runs/<scenario>-<time>.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// How many runs to play at once (default: the number of cores; always 1 on a real cluster).
    #[arg(long)]
    pub jobs: Option<usize>,

    /// --cluster local: use the running control plane of this state folder (see `schedlab cluster up --local
    /// --state`). Default: the default state folder's when it runs, else one brought up for this invocation.
    #[arg(long, value_name = "DIR")]
    pub local_state: Option<PathBuf>,

    /// Real clusters: scenario seconds per wall second (60 plays a scenario hour in a wall minute).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,

    /// --cluster kube: the kubeconfig file (default: KUBECONFIG, else ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// --cluster kube: the kubeconfig context (default: the current one).
    #[arg(long)]
    pub context: Option<String>,

    /// --cluster kube: emulated nodes made from the scenario, or the cluster's existing nodes.
    #[arg(long, value_enum, default_value_t = NodesFrom::Emulated)]
    pub nodes: NodesFrom,

    /// --nodes existing: a label selector of the nodes to use.
    #[arg(long, value_name = "SELECTOR")]
    pub node_selector: Option<String>,

    /// Real clusters: client QPS of schedlab's scheduler and emulator (default: the local kube-scheduler's, else 50).
    #[arg(long)]
    pub qps: Option<f32>,

    /// Real clusters: client burst (default: the local kube-scheduler's, else 100).
    #[arg(long)]
    pub burst: Option<u32>,
}

#[derive(Debug, Args)]
pub struct TrainArgs {
    /// A scenario to train on (built-in name or YAML path; repeatable). Episodes take them in turn.
    /// Default: pressure and churn.
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,

    /// How many episodes to play.
    #[arg(long, default_value_t = crate::train_cmd::DEFAULT_EPISODES, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
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

    /// Training settings as JSON (any subset of the checkpoint sidecar's `training.config`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// How many simulated environments play at once, each with a frozen copy of the actor.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub envs: u32,
}
