//! Real nodes on this machine: real kubelets with containerd, beside the
//! local control plane, each in its own mount namespace with its own cgroup
//! root, ports, bridge and subnet, so restarts, back-off and OOM kills come
//! from the kubelet and the kernel.
//!
//! [`start`] checks the host first (root, cgroup v1 with the memory
//! controller, the tools, and an estimate of how many nodes fit), records
//! the host changes a kubelet makes ([`host`]), starts each node and waits
//! until it is Ready; on an error or an interrupt it stops what it started
//! and gives the host back. [`stop_all`] works from the state folder alone,
//! so `schedlab cluster down --local` undoes what another process started.

pub mod capacity;
pub mod cgroups;
pub mod config;
pub mod error;
pub mod faults;
pub mod host;
pub mod images;
pub mod layout;
pub mod node;
pub mod scenario;

pub use error::KubeletError;
pub use images::PodPrograms;
pub use layout::NodeLayout;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Debian packages real nodes need on top of the control plane's.
/// (binutils: objcopy strips the images' programs.)
pub const NODE_PACKAGES: &[&str] = &["containerd", "runc", "containernetworking-plugins", "binutils"];

/// Programs real nodes run, and the CNI plugins their networks use.
pub(crate) const TOOLS: &[&str] = &[
    "containerd",
    "runc",
    "ctr",
    "unshare",
    "nsenter",
    "mount",
    "ip",
    "objcopy",
];
const CNI_PLUGINS: &[&str] = &[
    "/usr/lib/cni/bridge",
    "/usr/lib/cni/host-local",
    "/usr/lib/cni/loopback",
];

/// How long a node may take from its kubelet's start to Ready (about 17 s measured).
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(120);

/// How to start real nodes beside a running local control plane.
#[derive(Debug, Clone)]
pub struct NodeOptions<'a> {
    /// The control plane's state folder; nodes live under its `nodes/`.
    pub state_dir: &'a Path,
    /// Where the kubelet and the pause program were built.
    pub cache_dir: &'a Path,
    pub count: usize,
    /// Each node's labels (by position; a node past the end has none).
    pub labels: &'a [Vec<(String, String)>],
    /// Each node's reservations, pod limit and taints (by position; a node
    /// past the end has the host's capacity, no limit, no taints).
    pub tuning: &'a [config::KubeletTuning],
    pub ready_timeout: Duration,
    pub cancel: Option<&'a AtomicBool>,
    /// The programs of the workload and scheduler images; without them the
    /// nodes hold only the pause image.
    pub programs: Option<&'a PodPrograms>,
}

/// The control plane the nodes join.
#[derive(Debug, Clone)]
pub struct Plane<'a> {
    pub server: &'a str,
    pub ca_file: &'a Path,
    pub admin_token: &'a str,
    pub kubelet_token: &'a str,
}

/// One node that came up.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeUp {
    pub name: String,
    /// From the start of its runtime to Ready.
    pub ready_after: Duration,
}

/// Checks, before anything is installed or started, what no package can
/// change: root, room for `count` nodes, cgroup v1 with the memory controller.
pub fn check_host_before_install(count: usize) -> Result<Vec<PathBuf>, KubeletError> {
    if !nix::unistd::Uid::effective().is_root() {
        return Err(KubeletError::HostUnfit {
            what: "root",
            why: "kubelets and containerd manage cgroups, mounts and network devices".into(),
        });
    }
    capacity::Machine::this()?.check(count)?;
    cgroups::hierarchies()
}

/// Checks before any node starts that this host can run `count` real nodes
/// (and has their tools); returns its cgroup v1 hierarchies.
pub fn check_host(count: usize) -> Result<Vec<PathBuf>, KubeletError> {
    let hierarchies = check_host_before_install(count)?;
    if let Some(tool) = TOOLS.iter().find(|t| !crate::external::on_path(t)) {
        return Err(KubeletError::HostUnfit {
            what: "its tools on the PATH",
            why: format!("`{tool}` is missing (Debian packages: {})", NODE_PACKAGES.join(", ")),
        });
    }
    if let Some(plugin) = CNI_PLUGINS.iter().find(|p| !Path::new(p).is_file()) {
        return Err(KubeletError::HostUnfit {
            what: "the CNI plugins",
            why: format!("{plugin} is missing (Debian package containernetworking-plugins)"),
        });
    }
    Ok(hierarchies)
}

/// Stops the nodes started so far and gives the host back, unless disarmed.
struct Guard<'a> {
    state_dir: &'a Path,
    hierarchies: &'a [PathBuf],
    started: Vec<NodeLayout>,
    joined: bool,
    armed: bool,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        for node in self.started.iter().rev() {
            if let Err(err) = node::stop(node, self.hierarchies) {
                tracing::warn!(node = %node.name, error = %err, "could not stop a node that failed to start");
            }
        }
        if !self.joined {
            return;
        }
        if let Err(err) = host::leave(self.state_dir) {
            tracing::warn!(error = %err, "could not give the host back");
        }
    }
}

/// Starts `opts.count` real nodes joined to `plane`; see the module docs.
pub fn start(opts: &NodeOptions<'_>, plane: &Plane<'_>) -> crate::Result<Vec<NodeUp>> {
    let hierarchies = check_host(opts.count)?;
    let cache = crate::local::CacheLayout::new(opts.cache_dir);
    let kubelet = cache.binary("kubelet");
    let written = images::write_all(&cache, &layout::nodes_dir(opts.state_dir).join("images"), opts.programs)?;
    let tarballs: Vec<PathBuf> = written.into_iter().map(|(_, tarball)| tarball).collect();
    // Nodes left by an earlier run of this state folder are ours to replace.
    stop_all(opts.state_dir)?;
    let mut guard = Guard {
        state_dir: opts.state_dir,
        hierarchies: &hierarchies,
        started: Vec::new(),
        joined: false,
        armed: true,
    };
    host::join(opts.state_dir)?;
    guard.joined = true;
    // Each node up to its kubelet, one after another (seconds each); then
    // every kubelet registers and turns Ready side by side (most of the time).
    let mut launched = Vec::new();
    for index in 0..opts.count {
        let node = NodeLayout::new(opts.state_dir, index);
        guard.started.push(node.clone());
        let joining = joining_of(opts, plane, &kubelet, &tarballs, index);
        launched.push((node.clone(), node::launch(&node, &hierarchies, &joining)?));
    }
    let mut up = Vec::new();
    for (node, launch) in launched {
        let joining = joining_of(opts, plane, &kubelet, &tarballs, node.index);
        let ready_after = node::wait_launched(&node, launch, &joining)?;
        tracing::info!(node = %node.name, ?ready_after, "Ready");
        up.push(NodeUp {
            name: node.name.clone(),
            ready_after,
        });
    }
    guard.armed = false;
    Ok(up)
}

static NO_TUNING: config::KubeletTuning = config::KubeletTuning {
    system_reserved_cpu_milli: 0,
    system_reserved_memory_bytes: 0,
    max_pods: None,
    taints: Vec::new(),
};

fn joining_of<'a>(
    opts: &'a NodeOptions<'_>,
    plane: &'a Plane<'a>,
    kubelet: &'a Path,
    images: &'a [PathBuf],
    index: usize,
) -> node::Joining<'a> {
    node::Joining {
        plane,
        kubelet,
        images,
        labels: opts.labels.get(index).map_or(&[][..], Vec::as_slice),
        tuning: opts.tuning.get(index).unwrap_or(&NO_TUNING),
        ready_timeout: opts.ready_timeout,
        cancel: opts.cancel,
    }
}

/// The real nodes this state folder has, by their folders.
pub fn recorded(state_dir: &Path) -> Vec<NodeLayout> {
    let Ok(entries) = std::fs::read_dir(layout::nodes_dir(state_dir)) else {
        return Vec::new();
    };
    let mut nodes: Vec<NodeLayout> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let index = name.strip_prefix("real-")?.parse().ok()?;
            Some(NodeLayout::new(state_dir, index))
        })
        .collect();
    nodes.sort_by_key(|n| n.index);
    nodes
}

/// Stops every real node of `state_dir` (last first) and, when no other
/// control plane's nodes use the host, gives the host back. Returns the
/// nodes stopped.
pub fn stop_all(state_dir: &Path) -> crate::Result<Vec<String>> {
    let nodes = recorded(state_dir);
    if nodes.is_empty() {
        host::leave(state_dir)?;
        return Ok(Vec::new());
    }
    let hierarchies = cgroups::hierarchies()?;
    let mut stopped = Vec::new();
    let mut first_error = None;
    for node in nodes.iter().rev() {
        let t0 = Instant::now();
        match node::stop(node, &hierarchies) {
            Ok(()) => {
                tracing::info!(node = %node.name, took = ?t0.elapsed(), "stopped");
                stopped.push(node.name.clone());
            }
            // the others are stopped all the same
            Err(err) => {
                tracing::warn!(node = %node.name, error = %err, "could not stop");
                first_error.get_or_insert(err);
            }
        }
    }
    if let Some(err) = first_error {
        return Err(err.into());
    }
    host::leave(state_dir)?;
    Ok(stopped)
}

/// One real node as its folder, its processes and the API server tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeStatus {
    pub name: String,
    pub containerd: bool,
    pub kubelet: bool,
    /// The Ready condition (`None`: the API server did not say).
    pub ready: Option<bool>,
}

/// The real nodes of `state_dir`; `plane` to ask the API server about readiness.
pub fn status(state_dir: &Path, plane: Option<&Plane<'_>>) -> crate::Result<Vec<NodeStatus>> {
    let mut out = Vec::new();
    for node in recorded(state_dir) {
        let processes = node.processes();
        let running = |name: &str| -> crate::Result<bool> {
            Ok(crate::local::process::recorded(&processes, name)?.is_some_and(crate::local::process::is_ours))
        };
        out.push(NodeStatus {
            containerd: running(node::CONTAINERD)?,
            kubelet: running(node::KUBELET)?,
            ready: plane.and_then(|p| node::node_ready(p.server, p.ca_file, p.admin_token, &node.name)),
            name: node.name,
        });
    }
    Ok(out)
}
