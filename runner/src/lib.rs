//! schedlab's run library: everything between a checked invocation and a
//! finished run folder, whatever backend plays the runs. The binary parses
//! flags, picks the provider, and only wires this.
//!
//! - [`play`]: every (arm, seed) run through one backend: the arm's policy,
//!   the records, decision times, decision records and the run's manifest.
//! - [`scenario`]: one scenario's invocation: its manifest, the arms' facts,
//!   the runs, and the finished folder with its summary and report.
//! - [`drs_input`], [`external_arm`], [`extender_arm`]: arms that need more
//!   than a name (a network, a scheduler in the cluster, an HTTP extender).

pub mod arms;
pub mod drs_input;
mod error;
pub mod extender_arm;
pub mod external_arm;
pub mod play;
pub mod scenario;
pub mod sweep;

pub use error::{Result, RunnerError, While};
