//! Provisioning of real clusters that the project owns end to end.
//!
//! - [`local`]: a real Kubernetes 1.20 control plane on loopback (etcd,
//!   kube-apiserver, kube-scheduler, optionally kube-controller-manager),
//!   built from Debian's source package, no containers.

pub mod local;
