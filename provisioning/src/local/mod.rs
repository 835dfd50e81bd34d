//! A real Kubernetes 1.20 control plane on loopback, owned by schedlab:
//! etcd, kube-apiserver, the default kube-scheduler and optionally
//! kube-controller-manager, built from Debian's `kubernetes` source package
//! (no containers, no Docker). Nodes are API objects the node emulator keeps.
//!
//! [`up`] installs missing Debian packages, fetches and builds the binaries
//! into the cache (skipped when cached), makes PKI and kubeconfigs in the
//! state folder, starts the processes on free loopback ports and waits until
//! each is ready. [`status`] and [`down`] work from the state folder alone, so
//! another process (`schedlab cluster down --local`) can stop what `up` started.

pub mod build;
pub mod certs;
pub mod error;
pub mod flags;
pub mod interrupt;
pub mod kubeconfig;
pub mod layout;
pub mod packages;
pub mod process;
pub mod rbac;
mod restart;
pub mod scoped;
pub mod source;

pub use error::ProvisionError;
pub use flags::{DEFAULT_CLIENT_BURST, DEFAULT_CLIENT_QPS, Ports};
pub use interrupt::cancel_on_interrupt;
pub use layout::{CACHE_ENV, CacheLayout, StateLayout, default_cache_dir, default_state_dir};
pub use process::Stopped;
pub use scoped::ScopedCluster;

use process::{Probe, Started};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The components, in start order (stopped in reverse).
pub const ETCD: &str = "etcd";
pub const APISERVER: &str = "kube-apiserver";
pub const SCHEDULER: &str = "kube-scheduler";
pub const CONTROLLER_MANAGER: &str = "kube-controller-manager";
pub const COMPONENTS: &[&str] = &[ETCD, APISERVER, SCHEDULER, CONTROLLER_MANAGER];

/// How long a component gets to exit after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// How to bring a local control plane up.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Built binaries and the Debian source (see [`default_cache_dir`]).
    pub cache_dir: PathBuf,
    /// PKI, kubeconfigs, logs, pid files, etcd data (see [`default_state_dir`]).
    pub state_dir: PathBuf,
    /// Also run kube-controller-manager (all controllers, node-lifecycle
    /// included; the ServiceAccount and TaintNodesByCondition admission
    /// plugins then stay on).
    pub controller_manager: bool,
    /// The default scheduler's client rate limits; give other arms the same.
    pub scheduler_qps: f32,
    pub scheduler_burst: u32,
    /// Install missing Debian packages with apt-get (needs root).
    pub install_packages: bool,
    /// How long each component may take to become ready.
    pub ready_timeout: Duration,
    /// Set (by a Ctrl-C handler, say) to abandon `up`; what was started is stopped.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Real nodes to start beside the control plane (real kubelets with
    /// containerd; see [`crate::kubelets`]); they need the controller-manager,
    /// which then runs whatever `controller_manager` says.
    pub real_nodes: usize,
    /// Labels of each real node, by position.
    pub real_node_labels: Vec<Vec<(String, String)>>,
    /// Reservations, pod limit and taints of each real node, by position.
    pub real_node_tuning: Vec<crate::kubelets::config::KubeletTuning>,
    /// The programs of the workload and scheduler images real nodes hold
    /// (without them, only the pause image).
    pub pod_programs: Option<crate::kubelets::PodPrograms>,
}

impl LocalOptions {
    /// The defaults: cache and state from the environment, no controller-manager,
    /// client rate limits [`DEFAULT_CLIENT_QPS`]/[`DEFAULT_CLIENT_BURST`].
    pub fn from_env() -> crate::Result<Self> {
        let cache_dir = default_cache_dir()?;
        Ok(Self {
            state_dir: cache_dir.join("local"),
            cache_dir,
            controller_manager: false,
            scheduler_qps: DEFAULT_CLIENT_QPS,
            scheduler_burst: DEFAULT_CLIENT_BURST,
            install_packages: true,
            ready_timeout: Duration::from_secs(120),
            cancel: None,
            real_nodes: 0,
            real_node_labels: Vec::new(),
            real_node_tuning: Vec::new(),
            pod_programs: None,
        })
    }

    fn cancelled(&self) -> Result<(), ProvisionError> {
        match &self.cancel {
            Some(c) if c.load(Ordering::SeqCst) => Err(ProvisionError::Interrupted),
            _ => Ok(()),
        }
    }
}

/// How long each phase of [`up`] took.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timings {
    pub packages: Duration,
    pub source: Duration,
    pub build: Duration,
    pub start: Duration,
    /// Starting the real nodes until every one was Ready.
    #[serde(default)]
    pub nodes: Duration,
    pub total: Duration,
    /// Whether the binaries were built in this call (a cold cache).
    pub built: bool,
}

/// What the state folder records about a running control plane.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClusterRecord {
    pub server: String,
    pub ports: Ports,
    pub controller_manager: bool,
    pub scheduler_qps: f32,
    pub scheduler_burst: u32,
    pub admin_kubeconfig: PathBuf,
    pub agmarl_kubeconfig: PathBuf,
    pub ca_file: PathBuf,
    /// The real nodes started beside it, each with its time to Ready.
    #[serde(default)]
    pub real_nodes: Vec<crate::kubelets::NodeUp>,
}

/// A running local control plane started by [`up`]. It keeps running when
/// this value is dropped (stop it with [`LocalCluster::down`] or [`down`]).
#[derive(Debug)]
pub struct LocalCluster {
    pub state_dir: PathBuf,
    pub record: ClusterRecord,
    pub timings: Timings,
    children: Vec<Started>,
}

impl LocalCluster {
    /// The apiserver URL, `https://127.0.0.1:<port>`.
    pub fn server(&self) -> &str {
        &self.record.server
    }
    /// A kubeconfig with cluster-admin rights.
    pub fn admin_kubeconfig(&self) -> &Path {
        &self.record.admin_kubeconfig
    }
    /// The kubeconfig of schedlab's scheduler identity (`agmarl`, bound to `system:kube-scheduler`).
    pub fn agmarl_kubeconfig(&self) -> &Path {
        &self.record.agmarl_kubeconfig
    }
    /// The default scheduler's client QPS and burst.
    pub fn client_rate(&self) -> (f32, u32) {
        (self.record.scheduler_qps, self.record.scheduler_burst)
    }
    /// The processes started, as (component, pid).
    pub fn pids(&self) -> Vec<(&str, i32)> {
        self.children.iter().map(|c| (c.name.as_str(), c.id.pid)).collect()
    }
    /// Stops every component (reverse start order) and reaps them.
    pub fn down(mut self) -> crate::Result<Vec<(String, Stopped)>> {
        let outcome = down(&self.state_dir);
        for child in &mut self.children {
            let _ = child.child.try_wait();
        }
        outcome
    }
}

/// Stops what an unfinished `up` started when dropped, unless disarmed.
struct StartGuard {
    state: StateLayout,
    started: Vec<Started>,
    armed: bool,
}

impl Drop for StartGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        for started in self.started.iter_mut().rev() {
            match process::stop(&self.state, &started.name, STOP_GRACE) {
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!(component = %started.name, error = %err, "could not stop by pid file; killing the child");
                    let _ = started.child.kill();
                }
            }
            let _ = started.child.wait();
        }
    }
}

/// Brings a control plane up (see the module docs). On any error, and when
/// `opts.cancel` is set, every process this call started is stopped before it returns.
pub fn up(opts: &LocalOptions) -> crate::Result<LocalCluster> {
    if opts.real_nodes > 0 {
        // before anything is installed, built or started
        crate::kubelets::check_host_before_install(opts.real_nodes)?;
    }
    // Real nodes of an earlier control plane of this state folder go with it.
    crate::kubelets::stop_all(&opts.state_dir)?;
    // A Ctrl-C also reaches a foreground child (apt-get, go build), which then fails: say why.
    let mut cluster = up_inner(opts).map_err(|err| {
        if opts.cancelled().is_err() {
            ProvisionError::Interrupted
        } else {
            err
        }
    })?;
    if opts.real_nodes > 0 {
        let t = Instant::now();
        match start_real_nodes(opts, &cluster) {
            Ok(nodes) => {
                cluster.record.real_nodes = nodes;
                write_record(&StateLayout::new(&opts.state_dir), &cluster.record)?;
            }
            Err(err) => {
                // the nodes stopped themselves; the control plane goes too
                if let Err(down) = cluster.down() {
                    tracing::warn!(error = %down, "could not stop the control plane after the real nodes failed");
                }
                return Err(err);
            }
        }
        cluster.timings.nodes = t.elapsed();
        cluster.timings.total += cluster.timings.nodes;
    }
    Ok(cluster)
}

fn start_real_nodes(opts: &LocalOptions, cluster: &LocalCluster) -> crate::Result<Vec<crate::kubelets::NodeUp>> {
    let state = StateLayout::new(&opts.state_dir);
    let tokens = certs::ensure(&state)?;
    let admin_token = tokens.require(certs::ADMIN, &state)?;
    let kubelet_token = tokens.require(certs::KUBELET, &state)?;
    rbac::bind_user(
        cluster.server(),
        &cluster.record.ca_file,
        &admin_token,
        certs::KUBELET,
        rbac::KUBELET_BINDINGS,
    )?;
    let node_opts = crate::kubelets::NodeOptions {
        state_dir: &opts.state_dir,
        cache_dir: &opts.cache_dir,
        count: opts.real_nodes,
        labels: &opts.real_node_labels,
        tuning: &opts.real_node_tuning,
        ready_timeout: crate::kubelets::DEFAULT_READY_TIMEOUT,
        cancel: opts.cancel.as_deref(),
        programs: opts.pod_programs.as_ref(),
    };
    let plane = crate::kubelets::Plane {
        server: cluster.server(),
        ca_file: &cluster.record.ca_file,
        admin_token: &admin_token,
        kubelet_token: &kubelet_token,
    };
    crate::kubelets::start(&node_opts, &plane)
}

fn write_record(state: &StateLayout, record: &ClusterRecord) -> Result<(), ProvisionError> {
    let file = state.cluster_file();
    let text = serde_json::to_string_pretty(record).map_err(|e| ProvisionError::Malformed {
        what: "cluster record",
        path: file.clone(),
        detail: e.to_string(),
    })?;
    std::fs::write(&file, text).map_err(ProvisionError::io("cannot write", &file))
}

fn up_inner(opts: &LocalOptions) -> Result<LocalCluster, ProvisionError> {
    let t0 = Instant::now();
    let cache = CacheLayout::new(&opts.cache_dir);
    let state = StateLayout::new(&opts.state_dir);
    let mut timings = Timings::default();
    let need_build = !build::binaries_present(&cache);

    let t = Instant::now();
    let extra: &[&str] = if opts.real_nodes > 0 {
        crate::kubelets::NODE_PACKAGES
    } else {
        &[]
    };
    if opts.install_packages {
        let report = packages::ensure(need_build, extra)?;
        if !report.installed.is_empty() {
            tracing::info!(packages = ?report.installed, "installed");
        }
    } else {
        let tools: &[&'static str] = if need_build {
            &["etcd", "openssl", "curl", "go", "dpkg-source", "gcc"]
        } else {
            &["etcd", "openssl", "curl"]
        };
        // real nodes' tools too, before anything is built or started
        let node_tools: &[&'static str] = if opts.real_nodes > 0 {
            crate::kubelets::TOOLS
        } else {
            &[]
        };
        if let Some(tool) = tools.iter().chain(node_tools).find(|t| !crate::external::on_path(t)) {
            return Err(ProvisionError::MissingTool { tool });
        }
    }
    timings.packages = t.elapsed();
    opts.cancelled()?;
    if need_build {
        let t = Instant::now();
        source::ensure(&cache)?;
        timings.source = t.elapsed();
        opts.cancelled()?;
        let t = Instant::now();
        timings.built = build::ensure(&cache)?;
        timings.build = t.elapsed();
        opts.cancelled()?;
    }

    let t = Instant::now();
    // A previous control plane of this state folder is ours to replace.
    stop_recorded(&state.root)?;
    std::fs::create_dir_all(&state.root).map_err(error::ProvisionError::io("cannot create", &state.root))?;
    let tokens = certs::ensure(&state)?;
    let [
        etcd_client,
        etcd_peer,
        apiserver,
        scheduler,
        controller_manager,
        scheduler_insecure,
    ] = free_ports()?;
    let ports = Ports {
        etcd_client,
        etcd_peer,
        apiserver,
        scheduler,
        controller_manager,
        scheduler_insecure,
    };
    let server = format!("https://127.0.0.1:{}", ports.apiserver);
    let ca_file = state.pki_file("ca.crt");
    let token = |user: &'static str| tokens.require(user, &state);
    let admin_token = token(certs::ADMIN)?;
    for (file, user) in [
        ("admin", certs::ADMIN),
        ("scheduler", certs::SCHEDULER),
        ("controller-manager", certs::CONTROLLER_MANAGER),
        ("agmarl", certs::AGMARL),
    ] {
        kubeconfig::write(&state.kubeconfig(file), &server, &ca_file, user, &token(user)?)?;
    }
    let config = state.scheduler_config();
    std::fs::write(
        &config,
        flags::scheduler_config(
            &state.kubeconfig("scheduler"),
            opts.scheduler_qps,
            opts.scheduler_burst,
            ports.scheduler_insecure,
        ),
    )
    .map_err(ProvisionError::io("cannot write", &config))?;
    // A fresh cluster every time: old objects would leak between runs.
    let etcd_data = state.etcd_data();
    if etcd_data.exists() {
        std::fs::remove_dir_all(&etcd_data).map_err(ProvisionError::io("cannot remove", &etcd_data))?;
    }
    std::fs::create_dir_all(&etcd_data).map_err(ProvisionError::io("cannot create", &etcd_data))?;

    let mut guard = StartGuard {
        state: state.clone(),
        started: Vec::new(),
        armed: true,
    };
    let cancel = opts.cancel.as_deref();
    let controller_manager = opts.controller_manager || opts.real_nodes > 0;
    let mut start = |name: &str, program: PathBuf, args: Vec<std::ffi::OsString>, probe: Probe| {
        let started = process::spawn(&state, name, &program, &args)?;
        guard.started.push(started);
        let last = guard.started.len() - 1;
        let waited = process::wait_ready(&mut guard.started[last], &probe, opts.ready_timeout, cancel)?;
        tracing::info!(component = name, ?waited, "ready");
        Ok::<(), ProvisionError>(())
    };
    start(
        ETCD,
        PathBuf::from("etcd"),
        flags::etcd(&state, &ports),
        Probe {
            url: format!("http://127.0.0.1:{}/health", ports.etcd_client),
            ca_file: None,
            bearer: None,
        },
    )?;
    start(
        APISERVER,
        cache.binary(APISERVER),
        flags::apiserver(&state, &ports, controller_manager),
        Probe {
            url: format!("{server}/readyz"),
            ca_file: Some(ca_file.clone()),
            bearer: Some(admin_token.clone()),
        },
    )?;
    start(
        SCHEDULER,
        cache.binary(SCHEDULER),
        flags::scheduler(&state, &ports),
        Probe {
            url: format!("https://127.0.0.1:{}/healthz", ports.scheduler),
            ca_file: None,
            bearer: None,
        },
    )?;
    if controller_manager {
        start(
            CONTROLLER_MANAGER,
            cache.binary(CONTROLLER_MANAGER),
            flags::controller_manager(&state, &ports),
            Probe {
                url: format!("https://127.0.0.1:{}/healthz", ports.controller_manager),
                ca_file: None,
                bearer: None,
            },
        )?;
    }
    rbac::bind_agmarl(&server, &ca_file, &admin_token, certs::AGMARL)?;

    let record = ClusterRecord {
        server,
        ports,
        controller_manager,
        scheduler_qps: opts.scheduler_qps,
        scheduler_burst: opts.scheduler_burst,
        admin_kubeconfig: state.kubeconfig("admin"),
        agmarl_kubeconfig: state.kubeconfig("agmarl"),
        ca_file,
        real_nodes: Vec::new(),
    };
    write_record(&state, &record)?;
    timings.start = t.elapsed();
    timings.total = t0.elapsed();
    guard.armed = false;
    let children = std::mem::take(&mut guard.started);
    Ok(LocalCluster {
        state_dir: state.root.clone(),
        record,
        timings,
        children,
    })
}

fn free_ports<const N: usize>() -> Result<[u16; N], ProvisionError> {
    let ports = process::free_ports(N)?;
    ports
        .try_into()
        .map_err(|_| ProvisionError::NoPort(std::io::Error::other("port count")))
}

/// One component's state as the state folder and /proc tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentStatus {
    pub name: &'static str,
    /// The recorded pid, if any.
    pub pid: Option<i32>,
    pub running: bool,
}

/// What [`status`] reports.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalStatus {
    pub state_dir: PathBuf,
    /// `None` when no `up` has completed in this state folder.
    pub record: Option<ClusterRecord>,
    pub components: Vec<ComponentStatus>,
    /// Whether the apiserver answered `/readyz` (false when no record).
    pub apiserver_ready: bool,
    /// The real nodes recorded beside it.
    pub real_nodes: Vec<crate::kubelets::NodeStatus>,
}

impl LocalStatus {
    /// Whether every recorded component runs, the apiserver is ready, and
    /// every real node runs and is Ready.
    pub fn healthy(&self) -> bool {
        self.apiserver_ready
            && self.components.iter().all(|c| c.pid.is_none() || c.running)
            && self
                .real_nodes
                .iter()
                .all(|n| n.containerd && n.kubelet && n.ready == Some(true))
    }
}

/// The state of the control plane recorded in `state_dir`.
pub fn status(state_dir: &Path) -> crate::Result<LocalStatus> {
    let state = StateLayout::new(state_dir);
    let mut components = Vec::new();
    for name in COMPONENTS {
        let id = process::recorded(&state, name)?;
        components.push(ComponentStatus {
            name,
            pid: id.map(|i| i.pid),
            running: id.is_some_and(process::is_ours),
        });
    }
    let file = state.cluster_file();
    let record: Option<ClusterRecord> = match std::fs::read_to_string(&file) {
        Ok(text) => Some(serde_json::from_str(&text).map_err(|e| ProvisionError::Malformed {
            what: "cluster record",
            path: file.clone(),
            detail: e.to_string(),
        })?),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(ProvisionError::Io {
                what: "cannot read",
                path: file,
                source,
            }
            .into());
        }
    };
    let tokens_path = state.pki_file("tokens.csv");
    let bearer = std::fs::read_to_string(&tokens_path)
        .ok()
        .and_then(|t| certs::Tokens::parse(&t, &tokens_path).ok())
        .and_then(|t| t.token(certs::ADMIN).map(str::to_owned));
    let real_nodes = match (&record, &bearer) {
        (Some(r), Some(token)) => {
            let plane = crate::kubelets::Plane {
                server: &r.server,
                ca_file: &r.ca_file,
                admin_token: token,
                kubelet_token: "",
            };
            crate::kubelets::status(state_dir, Some(&plane))?
        }
        _ => crate::kubelets::status(state_dir, None)?,
    };
    let apiserver_ready = match &record {
        Some(r) => Probe {
            url: format!("{}/readyz", r.server),
            ca_file: Some(r.ca_file.clone()),
            bearer,
        }
        .once(),
        None => false,
    };
    Ok(LocalStatus {
        state_dir: state_dir.to_path_buf(),
        record,
        components,
        apiserver_ready,
        real_nodes,
    })
}

/// Stops exactly the processes recorded in `state_dir` (reverse start order,
/// SIGTERM then SIGKILL after [`STOP_GRACE`]); returns what happened to each
/// recorded component. Certificates and cached binaries stay.
pub fn down(state_dir: &Path) -> crate::Result<Vec<(String, Stopped)>> {
    // real nodes first: their kubelets would otherwise lose the API server
    let nodes = crate::kubelets::stop_all(state_dir)?;
    let mut out: Vec<(String, Stopped)> = nodes
        .into_iter()
        .map(|name| (format!("real node {name}"), Stopped::Terminated))
        .collect();
    out.extend(stop_recorded(state_dir)?);
    Ok(out)
}

fn stop_recorded(state_dir: &Path) -> Result<Vec<(String, Stopped)>, ProvisionError> {
    let state = StateLayout::new(state_dir);
    let mut out = Vec::new();
    for name in COMPONENTS.iter().rev() {
        let outcome = process::stop(&state, name, STOP_GRACE)?;
        if outcome != Stopped::NotRecorded {
            out.push(((*name).to_owned(), outcome));
        }
    }
    let file = state.cluster_file();
    if file.exists() {
        std::fs::remove_file(&file).map_err(ProvisionError::io("cannot remove", &file))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_and_down_of_an_empty_state_folder() {
        let root = std::env::temp_dir().join(format!("schedlab-local-empty-{}", std::process::id()));
        let st = status(&root).unwrap();
        assert!(st.record.is_none());
        assert!(!st.apiserver_ready && !st.healthy());
        assert!(st.components.iter().all(|c| c.pid.is_none() && !c.running));
        assert!(down(&root).unwrap().is_empty());
    }

    #[test]
    fn down_stops_recorded_components_in_reverse_order_only() {
        let state = StateLayout::new(std::env::temp_dir().join(format!("schedlab-local-down-{}", std::process::id())));
        let _ = std::fs::remove_dir_all(&state.root);
        let mut etcd = process::spawn(&state, ETCD, Path::new("sleep"), &["300".into()]).unwrap();
        let mut sched = process::spawn(&state, SCHEDULER, Path::new("sleep"), &["300".into()]).unwrap();
        let mut outsider = std::process::Command::new("sleep").arg("300").spawn().unwrap();
        let st = status(&state.root).unwrap();
        let running: Vec<&str> = st.components.iter().filter(|c| c.running).map(|c| c.name).collect();
        assert_eq!(running, vec![ETCD, SCHEDULER]);
        let stopped = down(&state.root).unwrap();
        assert_eq!(
            stopped,
            vec![
                (SCHEDULER.to_owned(), Stopped::Terminated),
                (ETCD.to_owned(), Stopped::Terminated)
            ]
        );
        etcd.child.wait().unwrap();
        sched.child.wait().unwrap();
        assert!(outsider.try_wait().unwrap().is_none(), "the outsider must still run");
        outsider.kill().unwrap();
        outsider.wait().unwrap();
        std::fs::remove_dir_all(&state.root).unwrap();
    }

    #[test]
    fn guard_stops_what_a_failed_up_started() {
        let state = StateLayout::new(std::env::temp_dir().join(format!("schedlab-local-guard-{}", std::process::id())));
        let _ = std::fs::remove_dir_all(&state.root);
        let started = process::spawn(&state, ETCD, Path::new("sleep"), &["300".into()]).unwrap();
        let id = started.id;
        drop(StartGuard {
            state: state.clone(),
            started: vec![started],
            armed: true,
        });
        assert!(!process::is_running(id));
        assert_eq!(process::recorded(&state, ETCD).unwrap(), None);
        std::fs::remove_dir_all(&state.root).unwrap();
    }
}
