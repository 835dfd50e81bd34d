//! `schedlab-workload`: the program a schedlab pod runs on a real kubelet
//! (kind, GKE). It plays one container start of the pod-behaviour model in
//! `schedlab_core::behaviour` — the same draws the simulator and the node emulator
//! use — with real resources: it holds the memory the start draws (really
//! allocated, every page touched), burns the cpu it draws, and ends as the
//! model says: exit 0 when its run time is over, exit 1 when it crashes, or
//! grows its memory past its limit so that the kernel OOM-kills it. The
//! kubelet then restarts it with its own back-off, and the next start reads
//! its number from a state file that outlives container restarts. It may
//! use only `schedlab-core` of the workspace (the model it plays), so the
//! image stays small and knows nothing of API servers.
//!
//! - [`settings`]: what the pod tells the program (environment variables).
//! - [`state`]: the start counter kept in the state folder.
//! - [`plan`]: what one start does, computed purely from the settings.
//! - [`ballast`]: memory held for real.
//! - [`burner`]: cpu burnt for real.
//! - [`play`]: carries a plan out until it ends or the pod is stopped.
//! - [`cli`]: the command line.

pub mod ballast;
pub mod burner;
pub mod cli;
pub mod plan;
pub mod play;
pub mod settings;
pub mod state;

pub use plan::{End, EndKind, Plan};
pub use settings::{Settings, SettingsError};
pub use state::{StartCounter, StateError};

/// Exit codes of the program.
pub mod exit {
    /// completed, or stopped by SIGTERM/SIGINT
    pub const SUCCESS: u8 = 0;
    /// the model's crash
    pub const CRASH: u8 = 1;
    /// bad command line or environment
    pub const USAGE: u8 = 2;
    /// the state folder could not be used, or the program could not start
    /// its runtime or threads
    pub const FAILURE: u8 = 3;
    /// the plan grew past the memory limit and nothing killed the process
    /// (no memory cgroup limit): exits as a SIGKILLed process would
    pub const OOM_NOT_ENFORCED: u8 = 137;
}
