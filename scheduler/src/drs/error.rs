//! The errors of the DRS foil: building or running its Q-network, and its
//! checkpoints.

/// Building, running or loading the DRS Q-network failed.
#[derive(Debug, thiserror::Error)]
pub enum DrsError {
    /// A tensor operation failed inside candle.
    #[error("tensor operation failed: {0}")]
    Candle(#[from] candle_core::Error),
    /// Sizes the network cannot be built with.
    #[error("invalid DRS network size: {0}")]
    Size(String),
    /// Settings a DRS learner cannot run with.
    #[error("DRS training settings: {field} = {value}: {why}")]
    Config {
        field: &'static str,
        value: String,
        why: &'static str,
    },
    /// The checkpoint was trained for another cluster size: a monolithic
    /// network's input and output are sized by the node count, so it cannot
    /// run elsewhere (the weakness claim 5 is about).
    #[error(
        "DRS checkpoint {file} was trained for {trained} nodes and the cluster has {asked}: a DRS network's input and \
         output are sized by the node count, so it runs only at the size it was trained for; train one with \
         `schedlab train --variant {variant} --set nodes={asked}`"
    )]
    ClusterSize {
        file: String,
        variant: String,
        trained: usize,
        asked: usize,
    },
    #[error("DRS checkpoint {file}: file not found")]
    Missing { file: String },
    #[error("DRS checkpoint {file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("DRS checkpoint {file}: damaged safetensors file: {reason}")]
    Damaged { file: String, reason: String },
    #[error("DRS checkpoint {file}: bad sidecar JSON: {reason}")]
    Sidecar { file: String, reason: String },
    #[error("DRS checkpoint {file}: {field} is {found}, this build reads {expected}")]
    Version {
        file: String,
        field: &'static str,
        found: u32,
        expected: u32,
    },
    #[error("DRS checkpoint {file}: tensor {name}: {problem}")]
    Tensor {
        file: String,
        name: String,
        problem: String,
    },
}
