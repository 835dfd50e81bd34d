//! Where one real node's files live, what it is called on the host (its
//! cgroups, bridge and subnet), and which host paths its private mount
//! namespace covers with its own folders.

use crate::local::StateLayout;
use sha2::{Digest, Sha256};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

/// The longest unix socket path the kernel takes (`sun_path` less its NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// The most real nodes one control plane has: each node's address takes 6
/// bits beside the cluster's 16 in the 100.64.0.0/10 block.
pub const MAX_NODES: usize = 64;

/// The folder under a control plane's state folder that holds its real nodes.
pub fn nodes_dir(state: &Path) -> PathBuf {
    state.join("nodes")
}

/// A short tag of a state folder, so two control planes with real nodes on
/// one host never share a cgroup or a bridge name.
pub fn cluster_tag(state: &Path) -> String {
    let digest = Sha256::digest(state.as_os_str().as_encoded_bytes());
    digest.iter().take(3).map(|b| format!("{b:02x}")).collect()
}

/// One real node: its API name, its folder and its names on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeLayout {
    /// The Node's name in the API.
    pub name: String,
    /// Its position among the cluster's real nodes (its subnet).
    pub index: usize,
    pub root: PathBuf,
    tag: String,
}

impl NodeLayout {
    pub fn new(state: &Path, index: usize) -> NodeLayout {
        let name = format!("real-{index}");
        NodeLayout {
            root: nodes_dir(state).join(&name),
            name,
            index,
            tag: cluster_tag(state),
        }
    }

    /// The kubelet's `cgroupRoot` (pods go under it), in every cgroup v1 hierarchy.
    pub fn pods_cgroup(&self) -> String {
        format!("schedlab-{}-{}", self.tag, self.name)
    }
    /// The cgroup of the node's own processes (mount namespace holder,
    /// containerd and its shims, kubelet): whatever runs there is the node's.
    pub fn runtime_cgroup(&self) -> String {
        format!("schedlab-{}-{}.runtime", self.tag, self.name)
    }
    /// The CNI bridge (at most 15 bytes, the kernel's limit).
    pub fn bridge(&self) -> String {
        format!("slb{}{}", self.tag, self.index)
    }
    /// The node's address: its InternalIP, where its kubelet listens and
    /// where its host-network pods listen. The kubelet refuses a loopback
    /// node IP, and nodes sharing one address would share every
    /// host-network port (two replicas of the in-cluster scheduler would
    /// crash-loop on theirs), so each node gets its own, on its bridge, from
    /// the shared address space of RFC 6598 (100.64.0.0/10, not routed on a
    /// host's own networks): 16 bits of the cluster's tag, 6 of the node's
    /// index.
    pub fn address(&self) -> Ipv4Addr {
        let tag = u32::from_str_radix(&self.tag, 16).unwrap_or(0) >> 8;
        let node = (self.index % MAX_NODES) as u32;
        Ipv4Addr::from(u32::from(Ipv4Addr::new(100, 64, 0, 0)) | (tag << 6) | node)
    }
    /// The pods' subnet: addresses stay inside the node (no gateway, no masquerade).
    pub fn subnet(&self) -> String {
        format!("10.{}.{}.0/24", 200 + self.index / 250, self.index % 250)
    }

    /// Process pid files and logs, as the control plane keeps its own.
    pub fn processes(&self) -> StateLayout {
        StateLayout::new(&self.root)
    }
    pub fn containerd_config(&self) -> PathBuf {
        self.root.join("containerd.toml")
    }
    pub fn containerd_root(&self) -> PathBuf {
        self.root.join("containerd/root")
    }
    pub fn containerd_state(&self) -> PathBuf {
        self.root.join("containerd/state")
    }
    pub fn containerd_opt(&self) -> PathBuf {
        self.root.join("containerd/opt")
    }
    pub fn containerd_socket(&self) -> PathBuf {
        self.root.join("containerd.sock")
    }
    pub fn runc_root(&self) -> PathBuf {
        self.root.join("runc")
    }
    pub fn cni_conf_dir(&self) -> PathBuf {
        self.root.join("cni/net.d")
    }
    pub fn cni_ipam_dir(&self) -> PathBuf {
        self.root.join("cni/ipam")
    }
    pub fn kubelet_config(&self) -> PathBuf {
        self.root.join("kubelet.yaml")
    }
    pub fn kubeconfig(&self) -> PathBuf {
        self.root.join("kubelet.kubeconfig")
    }
    /// What the node's namespace mounts over each host path the kubelet or
    /// containerd uses whatever their flags say.
    pub fn private_mounts(&self) -> Vec<(PathBuf, &'static str)> {
        HOST_PATHS
            .iter()
            .map(|(folder, host)| (self.root.join("host").join(folder), *host))
            .collect()
    }
}

/// Host paths the kubelet (its root dir's `pki` and `device-plugins`, its
/// pod and container logs, which every kubelet garbage-collects as its own)
/// and containerd (its shims' sockets under `/run/containerd/s`, the CNI
/// library's cache of results under `/var/lib/cni`) use whatever their
/// flags say, with the node folder that stands in for each.
pub const HOST_PATHS: &[(&str, &str)] = &[
    ("kubelet", "/var/lib/kubelet"),
    ("pod-logs", "/var/log/pods"),
    ("container-logs", "/var/log/containers"),
    ("run-containerd", "/run/containerd"),
    ("cni-cache", "/var/lib/cni"),
];

/// The kubelet's root dir inside the node's namespace.
pub const KUBELET_ROOT: &str = "/var/lib/kubelet";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_differ_per_node_and_per_state_folder() {
        let a0 = NodeLayout::new(Path::new("/s/a"), 0);
        let a1 = NodeLayout::new(Path::new("/s/a"), 1);
        let b0 = NodeLayout::new(Path::new("/s/b"), 0);
        assert_eq!(a0.name, "real-0");
        assert_eq!(a0.name, b0.name);
        assert_ne!(a0.pods_cgroup(), a1.pods_cgroup());
        assert_ne!(a0.pods_cgroup(), b0.pods_cgroup());
        assert_ne!(a0.bridge(), a1.bridge());
        assert_ne!(a0.bridge(), b0.bridge());
        assert_ne!(a0.subnet(), a1.subnet());
        assert_ne!(a0.pods_cgroup(), a0.runtime_cgroup());
        assert_ne!(a0.address(), a1.address());
        assert_ne!(a0.address(), b0.address());
    }

    #[test]
    fn addresses_stay_in_the_shared_address_space_and_are_no_loopback() {
        let shared = (u32::from(Ipv4Addr::new(100, 64, 0, 0)), 10);
        for state in ["/s/a", "/s/b", "/tmp/schedlab-x"] {
            for index in [0, 1, MAX_NODES - 1] {
                let address = NodeLayout::new(Path::new(state), index).address();
                assert_eq!(
                    u32::from(address) >> (32 - shared.1),
                    shared.0 >> (32 - shared.1),
                    "{address}"
                );
                assert!(!address.is_loopback() && !address.is_link_local(), "{address}");
            }
        }
    }

    #[test]
    fn bridge_names_fit_the_kernel() {
        let node = NodeLayout::new(Path::new("/s"), 249);
        assert!(node.bridge().len() <= 15, "{}", node.bridge());
        assert_eq!(NodeLayout::new(Path::new("/s"), 251).subnet(), "10.201.1.0/24");
    }

    #[test]
    fn private_mounts_cover_every_host_path_from_the_node_folder() {
        let node = NodeLayout::new(Path::new("/s"), 0);
        let mounts = node.private_mounts();
        assert_eq!(mounts.len(), HOST_PATHS.len());
        assert!(mounts.iter().all(|(from, _)| from.starts_with("/s/nodes/real-0/host")));
        assert!(mounts.iter().any(|(_, to)| *to == KUBELET_ROOT));
    }
}
