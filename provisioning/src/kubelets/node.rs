//! Starting and stopping one real node: a private mount namespace that
//! covers the host paths every kubelet and containerd use, containerd and
//! the kubelet inside it, all of them in the node's own cgroup, and the
//! wait until the API server says the node is Ready.

use super::cgroups;
use super::config::{self, KubeletPorts};
use super::error::KubeletError;
use super::layout::{MAX_SOCKET_PATH, NodeLayout};
use crate::external::{self, ExternalCommand, shell_quote};
use crate::local::process::{self, Probe, Started};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The node's processes, as their pid files and logs name them.
pub const NAMESPACE: &str = "mount-namespace";
pub const CONTAINERD: &str = "containerd";
pub const KUBELET: &str = "kubelet";

/// The kubelet's command line (to nsenter), kept in the node folder.
const KUBELET_ARGS: &str = "kubelet.args.json";

/// How long containerd may take to answer on its socket.
const CONTAINERD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the kubelet gets to exit after SIGTERM.
const KUBELET_GRACE: Duration = Duration::from_secs(10);
/// How long the node's processes get to die and its cgroups to go.
const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(250);

/// What a node needs from its cluster to start.
#[derive(Debug, Clone)]
pub struct Joining<'a> {
    /// the control plane (its kubelet token to join, its admin token to ask whether the node is Ready)
    pub plane: &'a super::Plane<'a>,
    pub kubelet: &'a Path,
    /// the docker-archive tarballs of the images the node holds
    pub images: &'a [PathBuf],
    pub labels: &'a [(String, String)],
    pub tuning: &'a config::KubeletTuning,
    pub ready_timeout: Duration,
    pub cancel: Option<&'a AtomicBool>,
}

/// A node whose kubelet was started, not yet known to be Ready.
#[derive(Debug)]
pub struct Launched {
    kubelet: Started,
    started_at: Instant,
}

/// Starts `node` and waits until it is Ready; returns how long that took.
/// On an error what was started of it is left for [`stop`] (the caller's
/// guard), which undoes a partial start as well as a full one.
pub fn start(node: &NodeLayout, hierarchies: &[PathBuf], joining: &Joining<'_>) -> Result<Duration, KubeletError> {
    let launched = launch(node, hierarchies, joining)?;
    wait_launched(node, launched, joining)
}

/// Waits until a launched node is Ready; returns the time from its launch.
pub fn wait_launched(
    node: &NodeLayout,
    mut launched: Launched,
    joining: &Joining<'_>,
) -> Result<Duration, KubeletError> {
    wait_ready(node, &mut launched.kubelet, joining)?;
    Ok(launched.started_at.elapsed())
}

/// Starts `node` up to its kubelet (namespace, containerd, images) without
/// waiting for the kubelet to register and turn Ready (most of a node's
/// start), so several nodes can get there side by side.
pub fn launch(node: &NodeLayout, hierarchies: &[PathBuf], joining: &Joining<'_>) -> Result<Launched, KubeletError> {
    let t0 = Instant::now();
    write_files(node, joining)?;
    make_bridge(node)?;
    cgroups::create(hierarchies, &node.pods_cgroup())?;
    cgroups::create(hierarchies, &node.runtime_cgroup())?;

    let holder = spawn_in_cgroup(
        node,
        hierarchies,
        NAMESPACE,
        Path::new("unshare"),
        &namespace_args(node),
    )?;
    wait_namespace(node, &holder)?;
    let enter = |program: &Path, args: Vec<OsString>| -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![
            "--target".into(),
            holder.id.pid.to_string().into(),
            "--mount".into(),
            "--".into(),
            program.into(),
        ];
        out.extend(args);
        out
    };
    let containerd_args = enter(
        Path::new("containerd"),
        vec!["--config".into(), node.containerd_config().into()],
    );
    let mut containerd = spawn_in_cgroup(node, hierarchies, CONTAINERD, Path::new("nsenter"), &containerd_args)?;
    wait_containerd(node, &mut containerd, joining.cancel)?;
    for tarball in joining.images {
        external::run(&crate::images::import_command(&node.containerd_socket(), tarball))?;
    }

    let kubelet_args = enter(
        joining.kubelet,
        config::kubelet_flags(node, joining.labels, joining.tuning),
    );
    // kept for a restart after a node fault (the namespace holder stays)
    let args_file = node.root.join(KUBELET_ARGS);
    let text: Vec<String> = kubelet_args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    std::fs::write(&args_file, serde_json::to_string(&text).unwrap_or_default())
        .map_err(KubeletError::io("cannot write", &args_file))?;
    let kubelet = spawn_in_cgroup(node, hierarchies, KUBELET, Path::new("nsenter"), &kubelet_args)?;
    Ok(Launched {
        kubelet,
        started_at: t0,
    })
}

fn write_files(node: &NodeLayout, joining: &Joining<'_>) -> Result<(), KubeletError> {
    let socket = node.containerd_socket();
    let len = socket.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        return Err(KubeletError::SocketPathTooLong {
            path: socket,
            len,
            max: MAX_SOCKET_PATH,
        });
    }
    let mut dirs = vec![
        node.containerd_root(),
        node.containerd_state(),
        node.containerd_opt(),
        node.runc_root(),
        node.cni_conf_dir(),
        node.cni_ipam_dir(),
    ];
    dirs.extend(node.private_mounts().into_iter().map(|(from, _)| from));
    for dir in &dirs {
        std::fs::create_dir_all(dir).map_err(KubeletError::io("cannot create", dir))?;
    }
    let ports = process::free_ports(2)?;
    let ports = KubeletPorts {
        api: ports[0],
        healthz: ports[1],
    };
    let files = [
        (node.containerd_config(), config::containerd_toml(node)),
        (
            node.cni_conf_dir().join("10-schedlab.conflist"),
            config::cni_conflist(node),
        ),
        (
            node.kubelet_config(),
            config::kubelet_yaml(node, ports, joining.tuning, joining.plane.ca_file),
        ),
    ];
    for (path, text) in files {
        std::fs::write(&path, text).map_err(KubeletError::io("cannot write", &path))?;
    }
    crate::local::kubeconfig::write(
        &node.kubeconfig(),
        joining.plane.server,
        joining.plane.ca_file,
        "kubelet",
        joining.plane.kubelet_token,
    )?;
    Ok(())
}

/// `unshare` arguments for the holder of the node's mount namespace: private
/// propagation (nothing mounted inside reaches the host, and the host's
/// later mounts stay out), the node's folders over the shared host paths,
/// then a process that only keeps the namespace alive.
fn namespace_args(node: &NodeLayout) -> Vec<OsString> {
    let mut script = String::from("set -e\n");
    for (from, to) in node.private_mounts() {
        script.push_str(&format!(
            "mount --bind {} {}\n",
            shell_quote(&from.to_string_lossy()),
            shell_quote(to)
        ));
    }
    script.push_str("exec sleep infinity\n");
    ["--mount", "--propagation", "private", "sh", "-c", &script]
        .iter()
        .map(OsString::from)
        .collect()
}

fn spawn_in_cgroup(
    node: &NodeLayout,
    hierarchies: &[PathBuf],
    name: &str,
    program: &Path,
    args: &[OsString],
) -> Result<Started, KubeletError> {
    let mut started = process::spawn(&node.processes(), name, program, args)?;
    // Moved before it starts anything: what it starts (containerd's shims and
    // their containers) inherits the cgroup, so teardown finds it all.
    if let Err(err) = cgroups::enter(hierarchies, &node.runtime_cgroup(), started.id.pid) {
        let _ = started.child.kill();
        let _ = started.child.wait();
        return Err(err);
    }
    Ok(started)
}

fn exited(node: &NodeLayout, started: &mut Started, component: &'static str) -> Option<KubeletError> {
    let status = started.child.try_wait().ok()??;
    Some(KubeletError::Exited {
        node: node.name.clone(),
        component,
        code: status.code(),
        log: started.log.clone(),
        tail: external::log_tail(&started.log),
    })
}

fn wait_namespace(node: &NodeLayout, holder: &Started) -> Result<(), KubeletError> {
    let t0 = Instant::now();
    let comm = PathBuf::from(format!("/proc/{}/comm", holder.id.pid));
    loop {
        // the script execs `sleep` once every mount is made
        if std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() == "sleep") {
            return Ok(());
        }
        if !process::is_running(holder.id) || t0.elapsed() > CONTAINERD_TIMEOUT {
            return Err(KubeletError::Exited {
                node: node.name.clone(),
                component: "mount namespace",
                code: None,
                log: holder.log.clone(),
                tail: external::log_tail(&holder.log),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_containerd(
    node: &NodeLayout,
    containerd: &mut Started,
    cancel: Option<&AtomicBool>,
) -> Result<(), KubeletError> {
    let t0 = Instant::now();
    let version = ExternalCommand::new(
        "ctr",
        [
            OsString::from("--address"),
            node.containerd_socket().into(),
            "version".into(),
        ],
        "ask containerd its version",
    );
    loop {
        if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
            return Err(KubeletError::Interrupted);
        }
        if let Some(err) = exited(node, containerd, "containerd") {
            return Err(err);
        }
        if node.containerd_socket().exists() && external::output(&version).is_ok_and(|o| o.status.success()) {
            return Ok(());
        }
        if t0.elapsed() > CONTAINERD_TIMEOUT {
            return Err(KubeletError::NotReady {
                node: node.name.clone(),
                component: "containerd",
                waited: t0.elapsed(),
                log: containerd.log.clone(),
                tail: external::log_tail(&containerd.log),
            });
        }
        std::thread::sleep(POLL);
    }
}

fn wait_ready(node: &NodeLayout, kubelet: &mut Started, joining: &Joining<'_>) -> Result<(), KubeletError> {
    let t0 = Instant::now();
    loop {
        if joining.cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
            return Err(KubeletError::Interrupted);
        }
        if let Some(err) = exited(node, kubelet, "kubelet") {
            return Err(err);
        }
        if node_ready(
            joining.plane.server,
            joining.plane.ca_file,
            joining.plane.admin_token,
            &node.name,
        ) == Some(true)
        {
            return Ok(());
        }
        if t0.elapsed() > joining.ready_timeout {
            return Err(KubeletError::NotReady {
                node: node.name.clone(),
                component: "the node (Ready condition)",
                waited: t0.elapsed(),
                log: kubelet.log.clone(),
                tail: external::log_tail(&kubelet.log),
            });
        }
        std::thread::sleep(POLL);
    }
}

/// Whether the API server says node `name` is Ready (`None`: no answer or no such node).
pub fn node_ready(server: &str, ca_file: &Path, token: &str, name: &str) -> Option<bool> {
    let probe = Probe {
        url: format!("{server}/api/v1/nodes/{name}"),
        ca_file: Some(ca_file.to_path_buf()),
        bearer: Some(token.to_owned()),
    };
    let body = probe.body()?;
    let node: serde_json::Value = serde_json::from_str(&body).ok()?;
    ready_condition(&node)
}

/// The Ready condition of a Node object, if it reports one.
pub fn ready_condition(node: &serde_json::Value) -> Option<bool> {
    node["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .map(|c| c["status"] == "True")
}

/// Stops what [`start`] started of `node`, whatever it got to: the kubelet
/// first (so it does not restart containers), then every process in the
/// node's cgroups (containerd, its shims, the containers, the namespace
/// holder, whose end takes the namespace's mounts with it), the cgroups,
/// the bridge (and the node's address with it), and the runtime's folders (logs stay).
pub fn stop(node: &NodeLayout, hierarchies: &[PathBuf]) -> Result<(), KubeletError> {
    let processes = node.processes();
    process::stop(&processes, KUBELET, KUBELET_GRACE)?;
    cgroups::kill_and_remove(hierarchies, &node.runtime_cgroup(), TEARDOWN_TIMEOUT)?;
    cgroups::kill_and_remove(hierarchies, &node.pods_cgroup(), TEARDOWN_TIMEOUT)?;
    for name in [CONTAINERD, NAMESPACE] {
        // their processes are gone with the cgroup: only the pid files are left
        let _ = std::fs::remove_file(processes.pid_file(name));
    }
    delete_bridge(&node.bridge())?;
    for dir in [
        node.root.join("containerd"),
        node.runc_root(),
        node.root.join("host/kubelet"),
    ] {
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(KubeletError::io("cannot remove", &dir)(e)),
        }
    }
    Ok(())
}

/// Stops the node's kubelet only (a node fault): its containers keep
/// running, its Lease is no longer renewed.
pub fn stop_kubelet(node: &NodeLayout) -> Result<(), KubeletError> {
    process::stop(&node.processes(), KUBELET, KUBELET_GRACE)?;
    Ok(())
}

/// Starts the node's kubelet again as it was started, in the node's
/// namespace and cgroup (a node's recovery).
pub fn restart_kubelet(node: &NodeLayout, hierarchies: &[PathBuf]) -> Result<(), KubeletError> {
    let args_file = node.root.join(KUBELET_ARGS);
    let text = std::fs::read_to_string(&args_file).map_err(KubeletError::io("cannot read", &args_file))?;
    let args: Vec<String> = serde_json::from_str(&text).map_err(|e| KubeletError::Malformed {
        what: "kubelet command line",
        path: args_file.clone(),
        detail: e.to_string(),
    })?;
    let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
    spawn_in_cgroup(node, hierarchies, KUBELET, Path::new("nsenter"), &args)?;
    Ok(())
}

/// The node's bridge, made before its kubelet starts so that the node's
/// address is on it (the kubelet checks its node IP is on an interface);
/// the CNI bridge plugin takes the bridge as it finds it, and without a
/// gateway it leaves the address alone. A bridge left by an earlier start
/// of the same node goes first.
fn make_bridge(node: &NodeLayout) -> Result<(), KubeletError> {
    let bridge = node.bridge();
    delete_bridge(&bridge)?;
    let address = format!("{}/32", node.address());
    let steps: [(Vec<&str>, String); 3] = [
        (
            vec!["link", "add", &bridge, "type", "bridge"],
            format!("make the node's bridge {bridge}"),
        ),
        (
            vec!["addr", "add", &address, "dev", &bridge],
            format!("give the node's bridge {bridge} the node's address {address}"),
        ),
        (
            vec!["link", "set", &bridge, "up"],
            format!("bring the node's bridge {bridge} up"),
        ),
    ];
    for (args, what) in steps {
        external::run(&ExternalCommand::new("ip", args, what))?;
    }
    Ok(())
}

fn delete_bridge(bridge: &str) -> Result<(), KubeletError> {
    if !Path::new("/sys/class/net").join(bridge).exists() {
        return Ok(());
    }
    external::run(&ExternalCommand::new(
        "ip",
        ["link", "delete", bridge],
        format!("delete the node's bridge {bridge}"),
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_namespace_mounts_every_private_path_then_holds() {
        let node = NodeLayout::new(Path::new("/st a"), 0);
        let args = namespace_args(&node);
        assert_eq!(&args[..5], ["--mount", "--propagation", "private", "sh", "-c"]);
        let script = args[5].to_string_lossy();
        for (from, to) in node.private_mounts() {
            assert!(
                script.contains(&format!("mount --bind '{}' {to}", from.display())),
                "{script}"
            );
        }
        assert!(script.starts_with("set -e\n") && script.ends_with("exec sleep infinity\n"));
    }

    #[test]
    fn readiness_is_the_ready_condition() {
        let node = serde_json::json!({"status": {"conditions": [
            {"type": "MemoryPressure", "status": "False"},
            {"type": "Ready", "status": "True"},
        ]}});
        assert_eq!(ready_condition(&node), Some(true));
        let not_yet = serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
        assert_eq!(ready_condition(&not_yet), Some(false));
        assert_eq!(ready_condition(&serde_json::json!({"status": {}})), None);
    }
}
