//! schedlab's in-cluster AGMARL-DKS scheduler. It owns what running inside
//! a cluster needs beyond the bind loop (leader election, health, metrics,
//! logs, its command line) and may use `schedlab-core`, `scheduler` (the
//! policy and its checkpoint) and `kube-backend` (the client and the bind
//! loop) of the workspace; no scenario, run folder or provisioning.
//!
//! Two or more replicas compete for a Lease; the leader runs the project's
//! watch-and-bind loop ([`kube_backend::bind`]) with the AGMARL-DKS policy
//! for pods whose `spec.schedulerName` is its own, the others stand by and
//! take over when the leader's Lease runs out or is released. A pod no node
//! takes preempts pods of lower priority as under kube-scheduler's
//! DefaultPreemption (the loop deletes the victims and nominates the pod),
//! unless `--agmarl-config` turns preemption off.
//!
//! - [`args`]: the command line.
//! - [`config`]: `--agmarl-config`, the controller's settings.
//! - [`leader`]: Lease leader election (kube-lease-manager) with fencing and
//!   quick takeover after a release.
//! - [`policy`]: the checkpoint and the placer given to the bind loop.
//! - [`metrics`]: the Prometheus metrics.
//! - [`health`], [`http`]: `/healthz`, `/readyz` and `/metrics`.
//! - [`watch`]: every replica's own watch of its nodes and pending pods.
//! - [`events`]: the LeaderElection event.
//! - [`logging`]: JSON or text logs.
//! - [`run`]: the wiring.

pub mod args;
pub mod config;
pub mod events;
pub mod health;
pub mod http;
pub mod leader;
pub mod logging;
pub mod metrics;
pub mod policy;
pub mod run;
pub mod watch;

pub use args::Args;
pub use run::{RunError, run};
