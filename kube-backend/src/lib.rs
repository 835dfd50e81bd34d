//! The backend over a real API server (any kubeconfig: `local`, kind, GKE),
//! the node emulator that plays kubelet for nodes that are API objects only,
//! and the watch-and-bind loop that runs schedlab's own policies there.
//! It owns everything that talks to an API server and may use only
//! `schedlab-core` below it (the model it maps to and from objects, the
//! pod-behaviour model the emulator drives); who made the cluster
//! (`provisioning`, or a user's kubeconfig) is not its business.
//!
//! - [`client`]: connecting through a kubeconfig and context, with client-side
//!   QPS and burst as client-go has them.
//! - [`credential_probe`]: a kubeconfig's exec credential plugin, run with a
//!   time limit first.
//! - [`labels`]: the labels, annotations and condition types schedlab writes.
//! - [`objects`]: cluster-model types to and from core/v1 objects.
//! - [`clock`]: scenario time on the wall clock, optionally compressed.
//! - [`observe`]: what changed in a pod, as the simulator's events.
//! - [`cache`]: the cluster as watches show it (samples, the scheduler's view).
//! - [`run`]: plays a timeline against an API server and records what happens.
//! - [`emulator`]: the node emulator.
//! - [`bind`]: the watch-and-bind loop.
//! - [`backend`]: all of the above as a [`schedlab_core::backend::Backend`]:
//!   one run set up, played and torn down per call.
//!
//! Everything here keeps to the core/v1 Pods, Nodes, Bindings and Events,
//! coordination/v1 Leases and scheduling/v1 PriorityClasses, which are
//! wire-compatible from Kubernetes 1.20 (the `local` control plane) to today.

pub mod backend;
pub mod bind;
pub mod cache;
pub mod client;
pub mod clock;
pub mod credential_probe;
pub mod emulator;
pub mod error;
pub mod labels;
pub mod objects;
pub mod observe;
pub mod redact;
pub mod run;

pub use client::{ApiClient, ClientOptions};
pub use clock::ScenarioClock;
pub use error::{Error, KubeError, Result};
