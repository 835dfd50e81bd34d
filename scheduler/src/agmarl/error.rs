//! The error type of the AGMARL-DKS networks.

/// Building or running a network failed.
#[derive(Debug, thiserror::Error)]
pub enum AgmarlError {
    /// A tensor operation failed inside candle (shape bugs, a poisoned lock).
    #[error("tensor operation failed: {0}")]
    Candle(#[from] candle_core::Error),
    /// An input did not have the shape the network expects.
    #[error("{what}: expected shape {expected:?}, got {got:?}")]
    Shape {
        what: &'static str,
        expected: Vec<usize>,
        got: Vec<usize>,
    },
    /// Hyperparameters the network cannot be built with.
    #[error("invalid hyperparameters: {0}")]
    Hyper(String),
    /// A row index outside the observation, or a chosen agent outside the graph.
    #[error("{what} index {index} out of range for {n} nodes")]
    Index { what: &'static str, index: usize, n: usize },
    /// The parameter map's lock was poisoned by a panic elsewhere.
    #[error("parameter map lock poisoned")]
    Poisoned,
}
