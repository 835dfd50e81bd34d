//! What training measured of a checkpoint's heads: the errors the
//! controller acts within (the selection's tolerance, the learned
//! restraint's margin), read from the sidecar
//! ([`crate::agmarl::CheckpointMeta::measured_error`]).

/// A checkpoint's measured errors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredError {
    /// the score heads' RMSE `[ft, util, cost]` on the validation split
    pub heads: [f32; 3],
    /// the wait head's RMSE on declines, when training measured one
    pub wait: Option<f32>,
}
