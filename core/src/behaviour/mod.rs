//! The pod-behaviour model: what happens to a pod once it is bound, as a pure
//! state machine over explicit time and explicit seeded random streams. The
//! simulator drives it in virtual time; the node emulator will drive the very
//! same code with the wall clock.
//!
//! - [`lifecycle`]: [`PodLifecycle`], one bound pod's state machine.
//! - [`draw`]: the random draws of a container start (usage, run time, crash budget).
//! - [`backoff`]: kubelet's CrashLoopBackOff.
//! - [`oom`]: the node OOM killer's choice of victims.
//! - [`eviction`]: how long a pod survives on an unreachable node.
//! - [`health`]: node health as pods feel it (crash-hazard factors).
//! - [`owner`]: when the owner replaces a pod.
//! - [`config`]: [`ModelConfig`], the tunables and their sources.

pub mod backoff;
pub mod config;
pub mod draw;
pub mod eviction;
pub mod health;
pub mod lifecycle;
pub mod oom;
pub mod owner;

pub use backoff::CrashBackOff;
pub use config::{ModelConfig, ModelConfigError};
pub use draw::{ContainerDraw, draw_container};
pub use eviction::unreachable_eviction_delay;
pub use health::{NodeHealth, under_memory_pressure};
pub use lifecycle::{
    Effects, Input, PodContext, PodEnd, PodIdent, PodLifecycle, PodPhase, TimerKind, TimerRequest, crash_after_start,
    leak_reaches_limit,
};
pub use oom::{OomCandidate, badness, oom_score_adj, oom_victim_pods, select_oom_victims};
pub use owner::owner_recreates;
