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
}

/// Where the cluster comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClusterKind {
    /// The in-process discrete-event simulator (virtual time, never sleeps).
    Sim,
}

impl ClusterKind {
    pub fn name(self) -> &'static str {
        match self {
            ClusterKind::Sim => "sim",
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
    #[arg(long, value_delimiter = ',', default_value = "default,binpack,random")]
    pub arms: Vec<String>,

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

    /// How many runs to play at once (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}
