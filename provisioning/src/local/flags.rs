//! The command lines of etcd and the Kubernetes 1.20 components on loopback,
//! and the scheduler's configuration file.

use super::layout::StateLayout;
use std::ffi::OsString;
use std::path::Path;

/// The loopback ports of one control plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ports {
    pub etcd_client: u16,
    pub etcd_peer: u16,
    pub apiserver: u16,
    pub scheduler: u16,
    pub controller_manager: u16,
    /// kube-scheduler's plain-HTTP healthz/metrics listener on 127.0.0.1. 1.20
    /// turns an empty address into 0.0.0.0:10251, so two control planes
    /// would clash on it: every plane gets a free port of its own.
    #[serde(default)]
    pub scheduler_insecure: u16,
}

/// The client rate limits of the default scheduler. Kubernetes 1.20 defaults
/// to 50 QPS / 100 burst, which caps the default scheduler at about 55
/// binds/s; schedlab raises them to 500/1000 (about 610 binds/s on 100 nodes)
/// so the API client is not the bottleneck, and gives every arm the same
/// limits (read them back from [`super::LocalCluster::client_rate`]).
pub const DEFAULT_CLIENT_QPS: f32 = 500.0;
pub const DEFAULT_CLIENT_BURST: u32 = 1000;

/// The admission plugins turned off when no controller-manager runs:
/// without it no `default` service account exists (ServiceAccount would
/// refuse every pod) and nothing removes the not-ready taint that
/// TaintNodesByCondition puts on every new Node.
pub const ADMISSION_OFF_WITHOUT_CM: &str = "ServiceAccount,TaintNodesByCondition";

/// The service-account issuer the apiserver signs tokens as.
pub const SERVICE_ACCOUNT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

fn args<const N: usize>(items: [&dyn AsRefOs; N]) -> Vec<OsString> {
    items.iter().map(|i| i.to_os()).collect()
}

/// Strings and paths alike, for building argument vectors.
trait AsRefOs {
    fn to_os(&self) -> OsString;
}
impl AsRefOs for &str {
    fn to_os(&self) -> OsString {
        OsString::from(self)
    }
}
impl AsRefOs for String {
    fn to_os(&self) -> OsString {
        OsString::from(self)
    }
}
impl AsRefOs for std::path::PathBuf {
    fn to_os(&self) -> OsString {
        self.as_os_str().to_owned()
    }
}

/// etcd, one member, loopback only.
pub fn etcd(state: &StateLayout, ports: &Ports) -> Vec<OsString> {
    let client = format!("http://127.0.0.1:{}", ports.etcd_client);
    let peer = format!("http://127.0.0.1:{}", ports.etcd_peer);
    args([
        &"--name",
        &"local",
        &"--data-dir",
        &state.etcd_data(),
        &"--logger",
        &"zap",
        &"--log-level",
        &"warn",
        &"--listen-client-urls",
        &client.clone(),
        &"--advertise-client-urls",
        &client,
        &"--listen-peer-urls",
        &peer.clone(),
        &"--initial-advertise-peer-urls",
        &peer.clone(),
        &"--initial-cluster",
        &format!("local={peer}"),
        &"--initial-cluster-state",
        &"new",
    ])
}

use super::certs::{KUBELET_CLIENT_CRT, KUBELET_CLIENT_KEY};

/// kube-apiserver 1.20 on 127.0.0.1.
pub fn apiserver(state: &StateLayout, ports: &Ports, controller_manager: bool) -> Vec<OsString> {
    let pki = |f: &str| state.pki_file(f);
    let mut out = args([
        &"--etcd-servers",
        &format!("http://127.0.0.1:{}", ports.etcd_client),
        &"--bind-address",
        &"127.0.0.1",
        &"--advertise-address",
        &"127.0.0.1",
        &"--secure-port",
        &ports.apiserver.to_string(),
        // 1.20 still opens an unauthenticated port on 8080 unless told not to.
        &"--insecure-port",
        &"0",
        &"--tls-cert-file",
        &pki("apiserver.crt"),
        &"--tls-private-key-file",
        &pki("apiserver.key"),
        &"--client-ca-file",
        &pki("ca.crt"),
        &"--token-auth-file",
        &pki("tokens.csv"),
        &"--authorization-mode",
        &"RBAC",
        &"--requestheader-client-ca-file",
        &pki("ca.crt"),
        &"--requestheader-allowed-names",
        &"front-proxy-client",
        &"--requestheader-username-headers",
        &"X-Remote-User",
        &"--requestheader-group-headers",
        &"X-Remote-Group",
        &"--requestheader-extra-headers-prefix",
        &"X-Remote-Extra-",
        &"--service-account-key-file",
        &pki("sa.pub"),
        &"--service-account-signing-key-file",
        &pki("sa.key"),
        &"--service-account-issuer",
        &SERVICE_ACCOUNT_ISSUER,
        // Only an IP allocator here: no kube-proxy, no traffic.
        &"--service-cluster-ip-range",
        &"10.0.0.0/24",
        // The `kubernetes` Endpoints may not hold a loopback address.
        &"--endpoint-reconciler-type",
        &"none",
        // real nodes all report 127.0.0.1, where their kubelets listen (logs, exec)
        &"--kubelet-preferred-address-types",
        &"InternalIP",
        // how it proves itself to a real node's kubelet (a pod's log): a client certificate of the cluster's CA
        &"--kubelet-client-certificate",
        &pki(KUBELET_CLIENT_CRT),
        &"--kubelet-client-key",
        &pki(KUBELET_CLIENT_KEY),
        &"--profiling=false",
        &"--v=1",
    ]);
    if !controller_manager {
        out.push("--disable-admission-plugins".into());
        out.push(ADMISSION_OFF_WITHOUT_CM.into());
    }
    out
}

/// kube-scheduler, configured by [`scheduler_config`]'s file.
pub fn scheduler(state: &StateLayout, ports: &Ports) -> Vec<OsString> {
    let kubeconfig = state.kubeconfig("scheduler");
    args([
        &"--config",
        &state.scheduler_config(),
        &"--bind-address",
        &"127.0.0.1",
        &"--secure-port",
        &ports.scheduler.to_string(),
        &"--authentication-kubeconfig",
        &kubeconfig.clone(),
        &"--authorization-kubeconfig",
        &kubeconfig,
        &"--v=1",
    ])
}

/// kube-controller-manager with every controller, node-lifecycle included:
/// with it, a node whose Lease is not renewed turns NotReady and is tainted,
/// which is the real node-failure path the emulator drives.
pub fn controller_manager(state: &StateLayout, ports: &Ports) -> Vec<OsString> {
    let kubeconfig = state.kubeconfig("controller-manager");
    args([
        &"--kubeconfig",
        &kubeconfig.clone(),
        &"--authentication-kubeconfig",
        &kubeconfig.clone(),
        &"--authorization-kubeconfig",
        &kubeconfig,
        &"--bind-address",
        &"127.0.0.1",
        &"--secure-port",
        &ports.controller_manager.to_string(),
        &"--port",
        &"0",
        &"--leader-elect=false",
        &"--controllers",
        &"*",
        &"--use-service-account-credentials=true",
        &"--service-account-private-key-file",
        &state.pki_file("sa.key"),
        &"--root-ca-file",
        &state.pki_file("ca.crt"),
        // else it makes /usr/libexec/kubernetes/kubelet-plugins/volume/exec on the host
        &"--flex-volume-plugin-dir",
        &state.root.join("flex-volume"),
        &"--v=1",
    ])
}

/// The `kubescheduler.config.k8s.io/v1beta1` file: client rate limits (only
/// settable here once `--config` is used), no leader election, and the plain
/// health/metrics listener on loopback at this plane's own port (1.20 allows
/// neither turning it off nor port 0 here).
pub fn scheduler_config(kubeconfig: &Path, qps: f32, burst: u32, insecure_port: u16) -> String {
    let path = serde_json::Value::String(kubeconfig.to_string_lossy().into_owned()).to_string();
    format!(
        "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: {path}\n  qps: {qps}\n  burst: {burst}\nleaderElection:\n  leaderElect: false\nhealthzBindAddress: \"127.0.0.1:{insecure_port}\"\nmetricsBindAddress: \"127.0.0.1:{insecure_port}\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports() -> Ports {
        Ports {
            etcd_client: 2001,
            etcd_peer: 2002,
            apiserver: 2003,
            scheduler: 2004,
            controller_manager: 2005,
            scheduler_insecure: 2006,
        }
    }

    fn flag(args: &[OsString], name: &str) -> Option<String> {
        let i = args.iter().position(|a| a == name)?;
        args.get(i + 1).map(|v| v.to_string_lossy().into_owned())
    }

    #[test]
    fn apiserver_flags_for_loopback_1_20() {
        let state = StateLayout::new("/st");
        let a = apiserver(&state, &ports(), false);
        assert_eq!(flag(&a, "--insecure-port").as_deref(), Some("0"));
        assert_eq!(flag(&a, "--secure-port").as_deref(), Some("2003"));
        assert_eq!(flag(&a, "--bind-address").as_deref(), Some("127.0.0.1"));
        assert_eq!(flag(&a, "--endpoint-reconciler-type").as_deref(), Some("none"));
        assert_eq!(flag(&a, "--etcd-servers").as_deref(), Some("http://127.0.0.1:2001"));
        assert_eq!(
            flag(&a, "--service-account-issuer").as_deref(),
            Some(SERVICE_ACCOUNT_ISSUER)
        );
        assert_eq!(
            flag(&a, "--service-account-signing-key-file").as_deref(),
            Some("/st/pki/sa.key")
        );
        assert_eq!(flag(&a, "--token-auth-file").as_deref(), Some("/st/pki/tokens.csv"));
        assert_eq!(
            flag(&a, "--disable-admission-plugins").as_deref(),
            Some("ServiceAccount,TaintNodesByCondition")
        );
    }

    #[test]
    fn admission_plugins_stay_on_with_the_controller_manager() {
        let a = apiserver(&StateLayout::new("/st"), &ports(), true);
        assert_eq!(flag(&a, "--disable-admission-plugins"), None);
        let cm = controller_manager(&StateLayout::new("/st"), &ports());
        assert_eq!(flag(&cm, "--secure-port").as_deref(), Some("2005"));
        assert_eq!(flag(&cm, "--port").as_deref(), Some("0"));
        assert_eq!(
            flag(&cm, "--service-account-private-key-file").as_deref(),
            Some("/st/pki/sa.key")
        );
    }

    #[test]
    fn etcd_and_scheduler_listen_on_their_ports() {
        let state = StateLayout::new("/st");
        let e = etcd(&state, &ports());
        assert_eq!(
            flag(&e, "--listen-client-urls").as_deref(),
            Some("http://127.0.0.1:2001")
        );
        assert_eq!(
            flag(&e, "--initial-cluster").as_deref(),
            Some("local=http://127.0.0.1:2002")
        );
        assert_eq!(flag(&e, "--data-dir").as_deref(), Some("/st/etcd-data"));
        let s = scheduler(&state, &ports());
        assert_eq!(flag(&s, "--secure-port").as_deref(), Some("2004"));
        assert_eq!(flag(&s, "--config").as_deref(), Some("/st/scheduler-config.yaml"));
    }

    #[test]
    fn scheduler_config_sets_client_rate_limits() {
        let text = scheduler_config(
            Path::new("/st/scheduler.kubeconfig"),
            DEFAULT_CLIENT_QPS,
            DEFAULT_CLIENT_BURST,
            2006,
        );
        assert!(
            text.starts_with("apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n")
        );
        assert!(
            text.contains("  kubeconfig: \"/st/scheduler.kubeconfig\"\n  qps: 500\n  burst: 1000\n"),
            "{text}"
        );
        assert!(text.contains("leaderElect: false"));
        // never the fixed 0.0.0.0:10251 two planes would clash on
        assert!(text.contains("healthzBindAddress: \"127.0.0.1:2006\""), "{text}");
        assert!(text.contains("metricsBindAddress: \"127.0.0.1:2006\""), "{text}");
        let slow = scheduler_config(Path::new("/k"), 50.0, 100, 40001);
        assert!(slow.contains("qps: 50\n  burst: 100\n"), "{slow}");
        let frac = scheduler_config(Path::new("/k"), 12.5, 20, 40001);
        assert!(frac.contains("qps: 12.5\n"), "{frac}");
    }
}
