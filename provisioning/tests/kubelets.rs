//! Real nodes on this machine: a private control plane with two real nodes
//! (kubelet + containerd each), both Ready, a pod Running on one of them,
//! then everything down, and the host as it was before: kernel settings,
//! mounts, cgroups, network devices, the host paths a kubelet or containerd
//! touch, and no kubelet, containerd or shim left running. The same after a
//! start that fails: a kubelet that exits, a node that does not turn Ready
//! in time, an image that cannot be imported.
//!
//! It needs root, cgroup v1 with the memory controller, Debian's containerd,
//! runc and CNI plugins (installed when missing), and the cached Kubernetes
//! build (kubelet and pause included) that `.ci/run` makes first.

#![allow(clippy::unwrap_used)] // a failed step fails the test

use provisioning::kubelets::{self, KubeletError};
use provisioning::local::{self, LocalOptions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What real nodes could leave behind on the host.
#[derive(Debug, PartialEq, Eq)]
struct Host {
    sysctls: Vec<(String, Option<String>)>,
    mounts: BTreeSet<String>,
    cgroups: BTreeSet<PathBuf>,
    links: BTreeSet<String>,
    paths: Vec<(&'static str, bool)>,
    node_processes: Vec<String>,
}

const WATCHED_PATHS: &[&str] = &[
    "/var/lib/kubelet",
    "/var/log/pods",
    "/var/log/containers",
    "/run/containerd",
    "/var/lib/containerd",
    "/var/lib/cni",
    "/run/netns",
    "/etc/cni",
    "/opt/containerd",
    "/var/lib/dockershim",
    "/usr/libexec/kubernetes",
    "/run/schedlab-real-nodes",
];

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn host() -> Host {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mounts = mountinfo
        .lines()
        .filter_map(|l| l.split_whitespace().nth(4).map(str::to_owned))
        .collect();
    let cgroups = kubelets::cgroups::v1_hierarchies(&mountinfo)
        .into_iter()
        .flat_map(|h| names(&h).into_iter().map(move |n| h.join(n)))
        .filter(|p| p.is_dir())
        .collect();
    let node_processes = names(Path::new("/proc"))
        .into_iter()
        .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()))
        // a zombie has exited; this test process reaps its children only when it ends
        .filter(|pid| !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z ")))
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).ok())
        .map(|comm| comm.trim().to_owned())
        .filter(|comm| comm == "kubelet" || comm.starts_with("containerd"))
        .collect();
    Host {
        sysctls: kubelets::host::sysctl_values(),
        mounts,
        cgroups,
        links: names(Path::new("/sys/class/net")),
        paths: WATCHED_PATHS.iter().map(|p| (*p, Path::new(p).exists())).collect(),
        node_processes,
    }
}

fn api(method: &str, url: &str, ca: &Path, token: &str, body: Option<&str>) -> (bool, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["--silent", "--fail", "--max-time", "10", "-X", method, "--cacert"])
        .arg(ca)
        .arg("-H")
        .arg(format!("Authorization: Bearer {token}"))
        .args(["-H", "Content-Type: application/json"]);
    if let Some(body) = body {
        cmd.args(["--data-binary", body]);
    }
    let out = cmd.arg(url).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn admin_token(state: &Path) -> String {
    let text = std::fs::read_to_string(state.join("admin.kubeconfig")).unwrap();
    let line = text.lines().find(|l| l.trim_start().starts_with("token:")).unwrap();
    line.trim_start()
        .trim_start_matches("token:")
        .trim()
        .trim_matches('"')
        .to_owned()
}

/// Takes everything down even when an assertion fails half-way.
struct DownOnDrop(PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let _ = local::down(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The tests that compare the host before and after take turns.
static HOST: Mutex<()> = Mutex::new(());

#[test]
fn two_real_nodes_run_a_pod_and_leave_the_host_as_it_was() {
    let _turn = HOST.lock().unwrap_or_else(|e| e.into_inner());
    let before = host();
    let mut opts = LocalOptions::private("real-nodes-test").unwrap();
    opts.real_nodes = 2;
    opts.real_node_labels = vec![vec![("schedlab.io/pool".into(), "a".into())]];
    {
        let cleanup = DownOnDrop(opts.state_dir.clone());
        let t0 = Instant::now();
        let cluster = local::up(&opts).unwrap();
        eprintln!(
            "control plane and 2 real nodes in {:.1}s (nodes {:.1}s: {:?})",
            t0.elapsed().as_secs_f64(),
            cluster.timings.nodes.as_secs_f64(),
            cluster.record.real_nodes
        );
        assert!(
            cluster.record.controller_manager,
            "real nodes run the controller-manager"
        );
        assert_eq!(cluster.record.real_nodes.len(), 2);
        let status = local::status(&opts.state_dir).unwrap();
        assert!(status.healthy(), "{status:?}");
        assert_eq!(status.real_nodes.len(), 2);

        let token = admin_token(&opts.state_dir);
        let ca = cluster.record.ca_file.clone();
        let server = cluster.server().to_owned();
        let (ok, node) = api("GET", &format!("{server}/api/v1/nodes/real-0"), &ca, &token, None);
        assert!(ok, "{node}");
        let node: serde_json::Value = serde_json::from_str(&node).unwrap();
        assert_eq!(node["metadata"]["labels"]["schedlab.io/pool"], "a", "{node}");

        // A pod of the pause image (imported into each node, never pulled),
        // placed by the real default scheduler, runs in a real container.
        let pod = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "sleeper", "namespace": "default"},
            "spec": {
                "nodeSelector": {"schedlab.io/pool": "a"},
                "containers": [{
                    "name": "pause",
                    "image": kubelets::config::PAUSE_IMAGE,
                    "imagePullPolicy": "Never",
                    "resources": {"limits": {"memory": "32Mi", "cpu": "100m"}},
                }],
            },
        })
        .to_string();
        let pods = format!("{server}/api/v1/namespaces/default/pods");
        // the controller-manager makes the default service account first
        let t = Instant::now();
        loop {
            let (ok, answer) = api("POST", &pods, &ca, &token, Some(&pod));
            if ok {
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(60), "pod not created: {answer}");
            std::thread::sleep(Duration::from_millis(500));
        }
        let t = Instant::now();
        loop {
            let (_, answer) = api("GET", &format!("{pods}/sleeper"), &ca, &token, None);
            let pod: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
            if pod["status"]["phase"] == "Running" {
                assert_eq!(pod["spec"]["nodeName"], "real-0");
                eprintln!("pod Running after {:.1}s", t.elapsed().as_secs_f64());
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(90), "pod not Running: {pod}");
            std::thread::sleep(Duration::from_millis(500));
        }
        let during = host();
        assert!(
            during.node_processes.iter().any(|p| p.starts_with("containerd-shim")),
            "{during:?}"
        );

        let t = Instant::now();
        let stopped = local::down(&opts.state_dir).unwrap();
        eprintln!("down in {:.1}s: {stopped:?}", t.elapsed().as_secs_f64());
        assert!(
            stopped.iter().any(|(name, _)| name == "real node real-0"),
            "{stopped:?}"
        );
        drop(cleanup);
    }
    let after = host();
    assert_eq!(before, after, "real nodes left the host changed");
}

#[test]
fn more_nodes_than_the_machine_holds_are_refused_before_anything_starts() {
    let mut opts = LocalOptions::private("real-nodes-too-many").unwrap();
    opts.real_nodes = 10_000;
    let err = local::up(&opts).unwrap_err();
    let provisioning::Error::Kubelets(KubeletError::TooMany { asked, fits, .. }) = &err else {
        panic!("expected too many nodes, got {err}");
    };
    assert_eq!(*asked, 10_000);
    assert!(*fits < 10_000);
    assert!(err.is_input_error());
    assert!(err.to_string().contains("MiB"), "{err}");
    assert!(!opts.state_dir.exists(), "nothing was made");
}

#[test]
fn a_kubelet_that_fails_is_named_and_everything_started_is_undone() {
    let _turn = HOST.lock().unwrap_or_else(|e| e.into_inner());
    let before = host();
    // a cache whose kubelet fails at once
    let cache = fake_cache("#!/bin/sh\necho 'no kubelet today' >&2\nexit 3\n");
    let state = tempfile::tempdir().unwrap();
    let opts = one_node(state.path(), cache.path(), Duration::from_secs(30));
    let err = kubelets::start(&opts, &no_plane()).unwrap_err();
    let provisioning::Error::Kubelets(KubeletError::Exited {
        node,
        component,
        code,
        tail,
        ..
    }) = &err
    else {
        panic!("expected the kubelet's exit, got {err}");
    };
    assert_eq!((node.as_str(), *component, *code), ("real-0", "kubelet", Some(3)));
    assert!(tail.contains("no kubelet today"), "{tail}");
    assert!(!err.is_input_error());
    assert_eq!(before, host(), "a failed start left the host changed");
}

/// A cache whose kubelet is `script` (beside the real pause program), for
/// starts that fail on purpose, and options for one node from it.
fn fake_cache(script: &str) -> tempfile::TempDir {
    let real_cache = provisioning::local::default_cache_dir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cache.path().join("bin")).unwrap();
    let kubelet = cache.path().join("bin/kubelet");
    std::fs::write(&kubelet, script).unwrap();
    std::fs::set_permissions(&kubelet, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::copy(real_cache.join("bin/pause"), cache.path().join("bin/pause")).unwrap();
    cache
}

/// Options for one node of `cache` in `state`.
fn one_node<'a>(state: &'a Path, cache: &'a Path, ready_timeout: Duration) -> kubelets::NodeOptions<'a> {
    kubelets::NodeOptions {
        state_dir: state,
        cache_dir: cache,
        count: 1,
        labels: &[],
        tuning: &[],
        ready_timeout,
        cancel: None,
        programs: None,
    }
}

/// A control plane that is not there: nothing ever says a node is Ready.
fn no_plane() -> kubelets::Plane<'static> {
    kubelets::Plane {
        server: "https://127.0.0.1:1",
        ca_file: Path::new("/nonexistent/ca.crt"),
        admin_token: "unused",
        kubelet_token: "unused",
    }
}

#[test]
fn a_node_that_does_not_turn_ready_in_time_is_named_and_everything_started_is_undone() {
    let _turn = HOST.lock().unwrap_or_else(|e| e.into_inner());
    let before = host();
    // a kubelet that runs and never registers
    let cache = fake_cache("#!/bin/sh\nexec sleep 600\n");
    let state = tempfile::tempdir().unwrap();
    let opts = one_node(state.path(), cache.path(), Duration::from_secs(3));
    let err = kubelets::start(&opts, &no_plane()).unwrap_err();
    let provisioning::Error::Kubelets(KubeletError::NotReady {
        node,
        component,
        waited,
        ..
    }) = &err
    else {
        panic!("expected the node not Ready in time, got {err}");
    };
    assert_eq!(node, "real-0");
    assert!(component.contains("Ready"), "{component}");
    assert!(*waited >= Duration::from_secs(3), "{waited:?}");
    assert!(!err.is_input_error());
    assert_eq!(before, host(), "a node that never turned Ready left the host changed");
}

#[test]
fn a_failed_image_import_is_named_and_everything_started_is_undone() {
    let _turn = HOST.lock().unwrap_or_else(|e| e.into_inner());
    let before = host();
    let cache = fake_cache("#!/bin/sh\nexit 0\n");
    // the pause image the cache keeps, corrupt
    let tarball = cache.path().join("images/pause.tar");
    std::fs::create_dir_all(tarball.parent().unwrap()).unwrap();
    std::fs::write(&tarball, "not a docker archive").unwrap();
    let state = tempfile::tempdir().unwrap();
    let opts = one_node(state.path(), cache.path(), Duration::from_secs(30));
    let err = kubelets::start(&opts, &no_plane()).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(&err, provisioning::Error::Kubelets(KubeletError::Command(_))),
        "expected the import command's failure, got {text}"
    );
    assert!(text.contains("import"), "{text}");
    assert!(text.contains(&tarball.display().to_string()), "{text}");
    assert!(!err.is_input_error());
    assert_eq!(before, host(), "a failed import left the host changed");
}
