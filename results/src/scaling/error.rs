//! Why table D could not be computed.

/// A folder the scaling analysis cannot read.
#[derive(Debug, thiserror::Error)]
pub enum ScalingError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {detail}")]
    Format { file: String, detail: String },
    #[error("{folder}: not a complete run folder (its INCOMPLETE marker is there)")]
    Incomplete { folder: String },
    #[error(transparent)]
    Preregistration(#[from] crate::claims::ClaimsError),
    #[error(
        "{first} and {second} both hold arm {arm} of {scenario} at {nodes} nodes: give each arm of a scenario at one \
         size once"
    )]
    Duplicate {
        arm: String,
        scenario: String,
        nodes: usize,
        first: String,
        second: String,
    },
}

impl ScalingError {
    /// Every one of these is about a folder the user named.
    pub fn is_input_error(&self) -> bool {
        match self {
            ScalingError::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
            // the built-in registration disagreeing with the code is a fault of the build
            ScalingError::Preregistration(_) => false,
            _ => true,
        }
    }
}
