//! One real node's configuration files and the kubelet's flags: containerd
//! with its own root, state, socket and runc root; one CNI bridge network
//! without a gateway or masquerading (so no iptables rules and no
//! ip_forward change); a kubelet on the node's own address under its own
//! cgroup root.

use super::layout::{KUBELET_ROOT, NodeLayout};
use std::ffi::OsString;
use std::path::Path;

pub use super::images::PAUSE_IMAGE;

/// What a scenario makes of one real node beyond its labels: reservations
/// that bring its allocatable down from the host's to the scenario node's,
/// its pod limit, and its taints (`key[=value]:Effect`, registered by the
/// kubelet itself).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeletTuning {
    pub system_reserved_cpu_milli: u64,
    pub system_reserved_memory_bytes: u64,
    pub max_pods: Option<u32>,
    pub taints: Vec<String>,
}

/// The label every real node registers with (the in-cluster scheduler's
/// local overlay runs there: emulated nodes run no containers).
pub const REAL_NODE_LABEL: (&str, &str) = ("schedlab.io/real-node", "true");

/// The ports one kubelet serves on (its API on the node's address, healthz on loopback).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KubeletPorts {
    pub api: u16,
    pub healthz: u16,
}

/// A TOML or JSON string literal (the two agree on a basic string).
fn quoted(path: &Path) -> String {
    serde_json::Value::String(path.to_string_lossy().into_owned()).to_string()
}

/// containerd's configuration. `restrict_oom_score_adj`: this kind of VM's
/// capability bounding set lacks CAP_SYS_RESOURCE, so writing -998 to a
/// sandbox's `oom_score_adj` fails and every sandbox with it; network
/// namespaces under the state dir keep `/run/netns` untouched.
pub fn containerd_toml(node: &NodeLayout) -> String {
    let q = |p: &Path| quoted(p);
    format!(
        r#"version = 2
root = {root}
state = {state}

[grpc]
  address = {socket}

[plugins."io.containerd.internal.v1.opt"]
  path = {opt}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{pause}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = {cni}

  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = {runc}
"#,
        root = q(&node.containerd_root()),
        state = q(&node.containerd_state()),
        socket = q(&node.containerd_socket()),
        opt = q(&node.containerd_opt()),
        pause = PAUSE_IMAGE,
        cni = q(&node.cni_conf_dir()),
        runc = q(&node.runc_root()),
    )
}

/// The node's CNI network: its own bridge and subnet, host-local addresses
/// kept in the node folder.
pub fn cni_conflist(node: &NodeLayout) -> String {
    let value = serde_json::json!({
        "cniVersion": "0.4.0",
        "name": format!("schedlab-{}", node.bridge()),
        "plugins": [{
            "type": "bridge",
            "bridge": node.bridge(),
            "isGateway": false,
            "ipMasq": false,
            "hairpinMode": false,
            "ipam": {
                "type": "host-local",
                "ranges": [[{"subnet": node.subnet()}]],
                "dataDir": node.cni_ipam_dir().to_string_lossy(),
            },
        }],
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// The KubeletConfiguration: cgroupfs under the node's own cgroup root,
/// loopback ports, no iptables chains, no anonymous access (the API server
/// reaches it, for a pod's log, with a client certificate of `client_ca`),
/// evictions only when the shared host is nearly out (the host's memory and
/// disk are every node's), and no image garbage collection: a node's images
/// are imported, never pulled, so one collected before its first pod (the
/// shared disk past 85% by the kubelet's measure) would be gone for good.
pub fn kubelet_yaml(node: &NodeLayout, ports: KubeletPorts, tuning: &KubeletTuning, client_ca: &Path) -> String {
    let mut extra = String::new();
    if let Some(max) = tuning.max_pods {
        extra.push_str(&format!("maxPods: {max}\n"));
    }
    if tuning.system_reserved_cpu_milli > 0 || tuning.system_reserved_memory_bytes > 0 {
        extra.push_str(&format!(
            "systemReserved:\n  cpu: \"{}m\"\n  memory: \"{}\"\n",
            tuning.system_reserved_cpu_milli, tuning.system_reserved_memory_bytes
        ));
    }
    let base = format!(
        r#"apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: {address}
port: {api}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {healthz}
cgroupDriver: cgroupfs
cgroupRoot: /{cgroup}
cgroupsPerQOS: true
failSwapOn: false
makeIPTablesUtilChains: false
rotateCertificates: false
serverTLSBootstrap: false
serializeImagePulls: false
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: {client_ca}
authorization:
  mode: AlwaysAllow
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
"#,
        address = node.address(),
        api = ports.api,
        healthz = ports.healthz,
        cgroup = node.pods_cgroup(),
        client_ca = client_ca.display(),
    );
    base + &extra
}

/// The kubelet's flags (those not in its configuration file in 1.20).
pub fn kubelet_flags(node: &NodeLayout, labels: &[(String, String)], tuning: &KubeletTuning) -> Vec<OsString> {
    let mut out: Vec<OsString> = vec![
        "--config".into(),
        node.kubelet_config().into(),
        "--kubeconfig".into(),
        node.kubeconfig().into(),
        "--container-runtime=remote".into(),
        format!(
            "--container-runtime-endpoint=unix://{}",
            node.containerd_socket().display()
        )
        .into(),
        "--root-dir".into(),
        KUBELET_ROOT.into(),
        "--volume-plugin-dir".into(),
        format!("{KUBELET_ROOT}/volume-plugins").into(),
        "--pod-infra-container-image".into(),
        PAUSE_IMAGE.into(),
        "--hostname-override".into(),
        node.name.clone().into(),
        "--node-ip".into(),
        node.address().to_string().into(),
        "--register-node=true".into(),
        "--v=1".into(),
    ];
    let (key, value) = REAL_NODE_LABEL;
    let text: Vec<String> = std::iter::once(format!("{key}={value}"))
        .chain(labels.iter().map(|(k, v)| format!("{k}={v}")))
        .collect();
    out.push(format!("--node-labels={}", text.join(",")).into());
    if !tuning.taints.is_empty() {
        out.push(format!("--register-with-taints={}", tuning.taints.join(",")).into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> NodeLayout {
        NodeLayout::new(Path::new("/st"), 1)
    }

    #[test]
    fn containerd_keeps_to_the_node_folder() {
        let text = containerd_toml(&node());
        for line in [
            "root = \"/st/nodes/real-1/containerd/root\"",
            "state = \"/st/nodes/real-1/containerd/state\"",
            "  address = \"/st/nodes/real-1/containerd.sock\"",
            "  restrict_oom_score_adj = true",
            "  netns_mounts_under_state_dir = true",
            "    conf_dir = \"/st/nodes/real-1/cni/net.d\"",
            "        Root = \"/st/nodes/real-1/runc\"",
            "        SystemdCgroup = false",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        assert!(text.contains(PAUSE_IMAGE));
    }

    #[test]
    fn the_bridge_has_no_gateway_and_no_masquerade() {
        let v: serde_json::Value = serde_json::from_str(&cni_conflist(&node())).unwrap();
        let bridge = &v["plugins"][0];
        assert_eq!(bridge["type"], "bridge");
        assert_eq!(bridge["bridge"], node().bridge());
        assert_eq!(bridge["isGateway"], false);
        assert_eq!(bridge["ipMasq"], false);
        assert_eq!(bridge["ipam"]["ranges"][0][0]["subnet"], node().subnet());
        assert_eq!(bridge["ipam"]["dataDir"], "/st/nodes/real-1/cni/ipam");
    }

    #[test]
    fn the_kubelet_runs_under_its_own_cgroup_root_on_its_own_ports() {
        let text = kubelet_yaml(
            &node(),
            KubeletPorts {
                api: 3001,
                healthz: 3002,
            },
            &KubeletTuning::default(),
            Path::new("/st/pki/ca.crt"),
        );
        assert!(text.contains("\n  x509:\n    clientCAFile: /st/pki/ca.crt\n"), "{text}");
        assert!(
            text.contains("\nimageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 99\n"),
            "{text}"
        );
        assert!(text.contains("\nport: 3001\n"), "{text}");
        assert!(text.contains("\nhealthzPort: 3002\n"), "{text}");
        assert!(
            text.contains(&format!("\ncgroupRoot: /{}\n", node().pods_cgroup())),
            "{text}"
        );
        assert!(text.contains("\nmakeIPTablesUtilChains: false\n"), "{text}");
        let flags = kubelet_flags(
            &node(),
            &[("pool".into(), "a".into()), ("zone".into(), "z".into())],
            &KubeletTuning::default(),
        );
        let flags: Vec<String> = flags.iter().map(|f| f.to_string_lossy().into_owned()).collect();
        assert!(flags.contains(&"--container-runtime-endpoint=unix:///st/nodes/real-1/containerd.sock".to_owned()));
        assert!(flags.contains(&"--node-labels=schedlab.io/real-node=true,pool=a,zone=z".to_owned()));
        assert!(flags.contains(&"real-1".to_owned()));
        let address = node().address().to_string();
        let node_ip = flags.iter().position(|f| f == "--node-ip").unwrap();
        assert_eq!(flags[node_ip + 1], address);
        assert!(text.contains(&format!("\naddress: {address}\n")), "{text}");
        assert!(!flags.iter().any(|f| f.starts_with("--register-with-taints")));
        assert!(!text.contains("systemReserved") && !text.contains("maxPods"), "{text}");
    }

    #[test]
    fn a_scenario_node_brings_its_reservations_pod_limit_and_taints() {
        let tuning = KubeletTuning {
            system_reserved_cpu_milli: 500,
            system_reserved_memory_bytes: 1 << 30,
            max_pods: Some(30),
            taints: vec!["spot=true:NoSchedule".into()],
        };
        let text = kubelet_yaml(
            &node(),
            KubeletPorts { api: 1, healthz: 2 },
            &tuning,
            Path::new("/ca.crt"),
        );
        assert!(
            text.ends_with("maxPods: 30\nsystemReserved:\n  cpu: \"500m\"\n  memory: \"1073741824\"\n"),
            "{text}"
        );
        let flags = kubelet_flags(&node(), &[], &tuning);
        assert!(flags.iter().any(|f| f == "--register-with-taints=spot=true:NoSchedule"));
    }
}
