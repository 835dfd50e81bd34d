//! Provisioning of real clusters that the project owns end to end: making,
//! checking and tearing down the clusters a run plays on, and handing the
//! kube backend a connected one. It may use `schedlab-core` and
//! `kube-backend`, and it runs the external programs that make clusters
//! (the control-plane binaries, openssl, apt, containerd, docker, kind,
//! gcloud, ldd, ctr).
//!
//! - [`local`]: a real Kubernetes 1.20 control plane on loopback (etcd,
//!   kube-apiserver, kube-scheduler, optionally kube-controller-manager),
//!   built from Debian's source package, no containers.
//! - [`kubelets`]: real nodes on this machine beside it (kubelet and
//!   containerd per node, each in its own mount namespace and cgroups).
//! - [`images`]: container images built without Docker, imported into a
//!   node's containerd.
//! - [`kind`]: a kind cluster made from a scenario's nodes (docker, kind).
//! - [`gke`]: a GKE cluster checked (or made) for a scenario (gcloud).
//! - [`manifests`]: rendering, applying and deleting `deploy/kustomize`,
//!   and service-account kubeconfigs (TokenRequest).
//! - [`external`]: the one runner of external commands, with dry-run.
//! - [`faults`]: node faults on real nodes, fed by the run player.
//! - [`images`]: container images written as docker-archive tarballs
//!   without Docker, and imported into a node's containerd (ctr).
//! - [`scheduler_deploy`]: the in-cluster scheduler on kind and GKE.
//! - [`real_cluster`]: a kind or GKE cluster made ready for a scenario's
//!   runs, as the kube backend uses it (real nodes, faults on them).
//! - [`provider`]: the one seam the binary uses: every real cluster (local,
//!   local with real nodes, kubeconfig, kind, GKE) as a `ClusterProvider`
//!   that checks its settings, plans (the dry run) and comes up connected.
//! - [`interrupt`]: the process's one Ctrl-C, as a flag and a token.
//! - [`sweep_job`]: the Kubernetes objects of a sweep's submission (a
//!   ServiceAccount, the plan's ConfigMap, the Job(s) that run its cells),
//!   built without HTTP, and the permission check before they are created.

mod error;
pub mod external;
pub mod faults;
pub mod gke;
pub mod images;
pub mod interrupt;
pub mod kind;
pub mod kubelets;
pub mod local;
pub mod manifests;
pub mod provider;
pub mod real_cluster;
pub mod scheduler_deploy;
pub mod sweep_job;

pub use error::{Error, Result};
