//! A fuzz driver for schedlab's parsers that runs on the stable toolchain.
//!
//! cargo-fuzz needs nightly and libFuzzer; this driver needs neither. Each
//! target generates structure-aware inputs from an explicit seeded stream
//! ([`generate::input_rng`]): real scenarios, expressions, kubeconfigs and
//! records files, reshaped by structure-level mutations ([`mutate`]) and
//! byte-level ones ([`bytes`]). The [`driver`] feeds them to the parser,
//! each under `catch_unwind` with its wall time measured, and holds the
//! result to the [`oracle`]s; a [`supervise`]d child process turns crashes
//! that cannot be caught (a stack overflow, an abort, a hang) into failures
//! too. Every failure is reproduced from (target, seed, input index).
//! It owns the generators, mutators and oracles and may use the parsers'
//! crates (`workloads`, `schedlab-core`, `kube-backend`, `results`); no
//! crate uses it.
//!
//! The targets:
//! - [`scenario`]: scenario YAML, `workloads::parse_str_with` and `workloads::load`;
//! - [`expr`]: `${...}` expressions inside scenarios, checked against a reference evaluator;
//! - [`kubeconfig`]: kubeconfig files, `kube_backend::ApiClient::connect`, with planted credentials;
//! - [`records`]: records.jsonl and decision_times.json, `results`' readers and loaders.

pub mod bytes;
pub mod driver;
pub mod expr;
pub mod generate;
pub mod kubeconfig;
pub mod mutate;
pub mod oracle;
pub mod records;
pub mod scenario;
pub mod supervise;
pub mod yaml;

use rand_chacha::ChaCha8Rng;

/// A parser under test: how to make its inputs and how to feed it one.
pub trait Target {
    type Case;
    /// the name on the command line and in failure files
    const NAME: &'static str;

    /// A new input from `rng` alone: the same stream gives the same input.
    fn generate(&mut self, rng: &mut ChaCha8Rng) -> Self::Case;

    /// Feeds `case` to the parser and checks what comes back.
    fn exercise(&mut self, case: &Self::Case) -> oracle::Checked;

    /// The input as a file a person can read and feed to schedlab again.
    fn dump(case: &Self::Case) -> Vec<u8>;

    /// The failure file's extension.
    fn extension() -> &'static str {
        "yaml"
    }

    /// Called after `exercise` panicked, to rebuild what the panic may have left broken.
    fn after_panic(&mut self) {}

    /// How much longer than the time limit the last input may take, for work
    /// in proportion to what it legitimately asked for: a scenario at the
    /// format's caps (10 million pods, 20 million actions) takes seconds to
    /// load and expand, which is the caps working, not a hang.
    fn allowance(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

/// Which target(s) to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    Scenario,
    Expr,
    Kubeconfig,
    Records,
    All,
}

impl Which {
    /// The single targets this stands for, in the order they run.
    pub fn targets(self) -> Vec<Which> {
        match self {
            Which::All => vec![Which::Scenario, Which::Expr, Which::Kubeconfig, Which::Records],
            one => vec![one],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Which::Scenario => scenario::Scenario::NAME,
            Which::Expr => expr::Expr::NAME,
            Which::Kubeconfig => kubeconfig::Kubeconfig::NAME,
            Which::Records => records::Records::NAME,
            Which::All => "all",
        }
    }
}

/// Why the fuzzer itself could not run (not a finding: those are [`driver::Failure`]s).
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    #[error("cannot make {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("a base input does not load: {0}")]
    Base(String),
    #[error("the worker process: {0}")]
    Worker(String),
}

impl FuzzError {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> FuzzError {
        FuzzError::Io {
            what: what.into(),
            source,
        }
    }
}
