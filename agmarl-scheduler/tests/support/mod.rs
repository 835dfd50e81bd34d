//! Shared by the tests against a private local control plane: the plane,
//! the rendered manifests, emulated nodes and pods, scheduler processes and
//! their /metrics.

#![allow(dead_code)] // each test binary uses part of it
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed step fails the test

use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, PostParams};
use kube_backend::objects::{self, PodIdentity};
use kube_backend::{ApiClient, ClientOptions, labels};
use provisioning::local::{LocalOptions, ScopedCluster};
use provisioning::manifests;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::{NodeId, NodeSpec, PodId, PodSlot, Resources, Workload};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const SYSTEM_NS: &str = "schedlab-system";
pub const SA: &str = "agmarl-scheduler";
pub const LEASE: &str = "agmarl-scheduler";
pub const SCHEDULER: &str = "agmarl";
const MI: u64 = 1 << 20;
const GI: u64 = 1 << 30;

/// The repository's kustomize folder.
pub fn kustomize_dir(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy/kustomize")
        .join(rel)
}

/// The rendered base, without the Deployment (no kubelet runs its pods here).
pub fn rbac_objects() -> Vec<serde_json::Value> {
    let kubectl = manifests::kubectl().expect("kubectl (built into the cache by `cluster up --local`)");
    manifests::render(&kubectl, &kustomize_dir("base"))
        .unwrap()
        .into_iter()
        .filter(|o| o["kind"] != "Deployment")
        .collect()
}

pub fn plane(name: &str) -> ScopedCluster {
    ScopedCluster::up(&LocalOptions::private(name).unwrap()).unwrap()
}

pub async fn admin(plane: &ScopedCluster) -> ApiClient {
    ApiClient::connect(&ClientOptions {
        kubeconfig: Some(plane.admin_kubeconfig().to_path_buf()),
        qps: 500.0,
        burst: 1000,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// A private control plane with the manifests' RBAC applied, its admin,
/// and a kubeconfig of the scheduler's service account in a temporary
/// folder: where every test against a scheduler process starts.
pub struct AccountLab {
    pub plane: ScopedCluster,
    pub admin: ApiClient,
    pub tmp: tempfile::TempDir,
    /// the service account's kubeconfig, in `tmp`
    pub kubeconfig: PathBuf,
}

/// [`AccountLab`] on a plane named `name`.
pub async fn account_lab(name: &str) -> AccountLab {
    let plane = plane(name);
    let admin = admin(&plane).await;
    let tmp = tempfile::tempdir().unwrap();
    let kubeconfig = tmp.path().join("sa.kubeconfig");
    as_scheduler_account(&admin, &kubeconfig).await;
    AccountLab {
        plane,
        admin,
        tmp,
        kubeconfig,
    }
}

/// Applies the RBAC manifests and writes a kubeconfig of the scheduler's
/// service account to `out`.
pub async fn as_scheduler_account(admin: &ApiClient, out: &Path) {
    manifests::apply(admin, &rbac_objects()).await.unwrap();
    manifests::service_account_kubeconfig(admin, SYSTEM_NS, SA, out)
        .await
        .unwrap();
}

pub fn node_spec(i: u32) -> NodeSpec {
    NodeSpec::plain(format!("n{i}"), Resources::new(8000, 16 * GI), 0.1)
}

/// A namespace for the pods and `count` Ready nodes of run `run`.
pub async fn lab(admin: &ApiClient, run: &str, count: u32) -> Vec<String> {
    let namespaces: Api<core::Namespace> = Api::all(admin.client());
    let ns = objects::run_namespace(run, run);
    namespaces.create(&PostParams::default(), &ns).await.unwrap();
    let nodes: Api<core::Node> = Api::all(admin.client());
    let mut names = Vec::new();
    for i in 0..count {
        let node = objects::node_object(run, NodeId(i), &node_spec(i), false);
        names.push(node.metadata.name.clone().unwrap());
        nodes.create(&PostParams::default(), &node).await.unwrap();
    }
    names
}

pub fn workload() -> Workload {
    Workload {
        recreate: false,
        ..testing::workload(0, "web", testing::pod(100, 64 * MI).scheduler(SCHEDULER))
    }
}

/// Pod `id` of the test workload (schedulerName agmarl) in namespace `run`.
pub fn pod(run: &str, id: u64) -> core::Pod {
    let w = workload();
    let ident = PodIdentity {
        pod: PodId(id),
        slot: PodSlot {
            workload: w.id,
            ordinal: id as u32,
        },
        incarnation: 0,
    };
    objects::pod_object(run, run, &ident, &w, 7)
}

/// Creates pods `ids` (schedulerName agmarl) in namespace `run`; returns their names.
pub async fn create_pods(admin: &ApiClient, run: &str, ids: std::ops::Range<u64>) -> Vec<String> {
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), run);
    let mut names = Vec::new();
    for id in ids {
        let pod = pod(run, id);
        names.push(pod.metadata.name.clone().unwrap());
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    names
}

/// Waits until every pod of `names` has a node; returns how long it took.
pub async fn wait_bound(admin: &ApiClient, run: &str, names: &[String], within: Duration) -> Duration {
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), run);
    let started = Instant::now();
    loop {
        let mut unbound = Vec::new();
        for name in names {
            let pod = pods.get(name).await.unwrap();
            if objects::pod_node_name(&pod).is_none() {
                unbound.push(name.clone());
            }
        }
        if unbound.is_empty() {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "{} pods still unbound after {within:?}: {unbound:?}",
            unbound.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One `agmarl-scheduler` process.
pub struct Replica {
    pub identity: String,
    pub addr: SocketAddr,
    pub log: PathBuf,
    child: Option<Child>,
}

impl Replica {
    pub fn start(dir: &Path, kubeconfig: &Path, run: &str, identity: &str, lease_duration: &str) -> Replica {
        Replica::start_with(dir, kubeconfig, run, identity, lease_duration, &[])
    }

    /// [`Replica::start`] with more flags.
    pub fn start_with(
        dir: &Path,
        kubeconfig: &Path,
        run: &str,
        identity: &str,
        lease_duration: &str,
        extra: &[&str],
    ) -> Replica {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let log = dir.join(format!("{identity}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_agmarl-scheduler"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--scheduler-name", SCHEDULER, "--namespace", run])
            .args(["--node-selector", &labels::run_selector(run)])
            .args(["--identity", identity, "--lease-duration", lease_duration])
            .args(["--listen", &addr.to_string(), "--log-format", "text"])
            .args(extra)
            .env("RUST_LOG", "info,kube_lease_manager=debug")
            .env_remove("POD_NAME")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Replica {
            identity: identity.into(),
            addr,
            log,
            child: Some(child),
        }
    }

    pub fn pid(&self) -> nix::unistd::Pid {
        nix::unistd::Pid::from_raw(self.child.as_ref().unwrap().id() as i32)
    }

    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(self.pid(), signal).unwrap();
    }

    /// Waits for the process to exit; its exit code (None: killed by a signal).
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let child = self.child.as_mut().unwrap();
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status.code();
            }
            assert!(
                started.elapsed() < within,
                "{} did not exit within {within:?}; log:\n{}",
                self.identity,
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => c.try_wait().unwrap().is_none(),
            None => false,
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `GET path` on its listen address: (status code, body), None when it
    /// does not answer.
    pub async fn get(&self, path: &str) -> Option<(u16, String)> {
        let addr = self.addr;
        let path = path.to_string();
        tokio::task::spawn_blocking(move || http_get(addr, &path))
            .await
            .unwrap()
    }

    /// A sample's value in /metrics.
    pub async fn metric(&self, series: &str) -> Option<f64> {
        let (_, body) = self.get("/metrics").await?;
        sample(&body, series)
    }

    /// Waits until the sample `series` reads `value`.
    pub async fn wait_metric(&self, series: &str, value: f64, within: Duration) {
        let started = Instant::now();
        while self.metric(series).await != Some(value) {
            assert!(
                started.elapsed() < within,
                "{} {series} is {:?}, not {value}, after {within:?}; log:\n{}",
                self.identity,
                self.metric(series).await,
                self.log_text()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until `path` answers 200.
    pub async fn wait_ok(&self, path: &str, within: Duration) {
        let started = Instant::now();
        loop {
            if let Some((200, _)) = self.get(path).await {
                return;
            }
            assert!(
                started.elapsed() < within,
                "{} {path} not OK after {within:?}: {:?}; log:\n{}",
                self.identity,
                self.get(path).await,
                self.log_text()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((status, body))
}

/// The value of the sample line `series VALUE` in a text exposition.
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The Lease's holder, if any.
pub async fn lease_holder(admin: &ApiClient) -> Option<String> {
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> = Api::namespaced(admin.client(), SYSTEM_NS);
    leases.get_opt(LEASE).await.unwrap()?.spec?.holder_identity
}

/// Waits until the Lease names one of `candidates`; returns it.
pub async fn wait_leader(admin: &ApiClient, candidates: &[&str], within: Duration) -> String {
    let started = Instant::now();
    loop {
        if let Some(holder) = lease_holder(admin).await
            && candidates.contains(&holder.as_str())
        {
            return holder;
        }
        assert!(
            started.elapsed() < within,
            "no leader among {candidates:?} after {within:?} (holder {:?})",
            lease_holder(admin).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A private control plane and the options it was brought up with (a
/// restart of kube-apiserver needs the binary cache they name).
pub fn plane_with_options(name: &str) -> (ScopedCluster, LocalOptions) {
    let opts = LocalOptions::private(name).unwrap();
    (ScopedCluster::up(&opts).unwrap(), opts)
}

/// SIGKILLs the plane's kube-apiserver (a process this test started).
pub fn kill_apiserver(plane: &ScopedCluster) {
    let pid = plane
        .pids()
        .into_iter()
        .find(|(name, _)| *name == provisioning::local::APISERVER)
        .expect("the plane runs kube-apiserver")
        .1;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
}

/// Every node name each pod of namespace `run` was ever seen with, kept by a
/// watch that backs off and resumes across API server outages (the task
/// runs until aborted).
pub type Seen = std::sync::Arc<std::sync::Mutex<BTreeMap<String, Vec<String>>>>;

pub fn watch_bindings(admin: &ApiClient, run: &str) -> (Seen, tokio::task::JoinHandle<()>) {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};
    let seen: Seen = Default::default();
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), run);
    let record = seen.clone();
    let task = tokio::spawn(async move {
        let mut events = watcher(pods, watcher::Config::default())
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(event) = events.next().await {
            let Ok(pod) = event else { continue };
            let name = pod.metadata.name.clone().unwrap_or_default();
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                let mut seen = record.lock().unwrap();
                let nodes = seen.entry(name).or_default();
                if nodes.last() != Some(&node) {
                    nodes.push(node);
                }
            }
        }
    });
    (seen, task)
}

/// Each pod's node name now (None: unbound).
pub async fn node_names(admin: &ApiClient, run: &str) -> BTreeMap<String, Option<String>> {
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), run);
    pods.list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|p| {
            (
                p.metadata.name.clone().unwrap_or_default(),
                objects::pod_node_name(p).map(str::to_owned),
            )
        })
        .collect()
}
