//! Real nodes on this machine, end to end through the command line.
//!
//! `schedlab cluster up|status|down --local --real-nodes N`: a real node
//! comes up Ready beside the control plane holding the pause, workload and
//! scheduler images, `status` says so, and `down` stops it with the rest;
//! asking for more real nodes than the machine holds is bad input, refused
//! before anything starts.
//!
//! `schedlab scenario --cluster local --nodes real:N[+emulated]`: a
//! scenario's first nodes as real kubelets, the rest on the node emulator;
//! the run folder says which nodes were real, pods run on the real ones,
//! node faults of real nodes stop and restart their kubelet, and nothing is
//! left on the host; a kubelet killed from outside in the middle of a run is
//! a node failure in the records, not a failed run. Bad `--nodes` values are
//! bad input, refused before anything starts.
//!
//! Needs root, cgroup v1 and the cached Kubernetes build `.ci/run` makes
//! first (the kubelet included); Debian's containerd, runc and CNI plugins
//! are installed when missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// The host's record of real nodes (`/run/schedlab-real-nodes`) lives while
/// any real node on the machine does, and two cores hold one test's nodes
/// well: the tests that bring real nodes up take turns.
static REAL_NODES: Mutex<()> = Mutex::new(());

fn real_nodes_turn() -> MutexGuard<'static, ()> {
    REAL_NODES.lock().unwrap_or_else(|e| e.into_inner())
}

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("schedlab").unwrap().args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn more_real_nodes_than_the_machine_holds_exit_2_naming_the_estimate() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let state = state.to_str().unwrap();
    let out = schedlab(&["cluster", "up", "--local", "--state", state, "--real-nodes", "100000"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("100000 real nodes do not fit this machine: it holds about"),
        "{err}"
    );
    assert!(err.contains("MiB memory available"), "{err}");
    assert!(!tmp.path().join("state").exists(), "nothing was made");
}

/// Two nodes smaller than any machine the tests run on, with a label, a
/// taint and a pod limit.
const SMALL_SCENARIO: &str = r#"name: small
params:
  nodes: 3
duration: 1m
cluster:
  pools:
    - name: small
      count: ${nodes}
      machine_type: e2-small
      hourly_price: 0.05
      capacity: {cpu: 1, memory: 2Gi}
      max_pods: 20
      reserved: {cpu: 100m, memory: 256Mi}
      labels: {tier: small}
      taints:
        - {key: dedicated, value: "lab", effect: NoSchedule}
templates:
  web:
    requests: {cpu: 100m, memory: 128Mi}
    tolerations:
      - {key: dedicated, operator: Exists, effect: NoSchedule}
phases:
  - create: {template: web, count: 1}
"#;

/// Takes the cluster down even when an assertion fails half-way.
struct Down(String);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = schedlab(&["cluster", "down", "--local", "--state", &self.0]);
    }
}

#[test]
fn a_real_node_comes_up_ready_and_goes_down_with_the_control_plane() {
    let _turn = real_nodes_turn();
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state").to_str().unwrap().to_owned();
    let _down = Down(state.clone());

    // the node plays the first node of a scenario smaller than the machine
    let scenario = tmp.path().join("small.yaml");
    std::fs::write(&scenario, SMALL_SCENARIO).unwrap();
    let up = schedlab(&[
        "cluster",
        "up",
        "--local",
        "--state",
        &state,
        "--real-nodes",
        "1",
        "--scenario",
        scenario.to_str().unwrap(),
        "--set",
        "nodes=2",
    ]);
    assert!(up.status.success(), "{}", text(&up.stderr));
    let stdout = text(&up.stdout);
    assert!(stdout.contains("real node real-0\tReady after"), "{stdout}");
    assert!(stdout.contains("\tplays small-0 (pool small)"), "{stdout}");
    let kubectl = provisioning::manifests::kubectl().unwrap();
    let node = std::process::Command::new(kubectl)
        .args(["get", "node", "real-0", "-o", "json"])
        .env("KUBECONFIG", format!("{state}/admin.kubeconfig"))
        .output()
        .unwrap();
    let node: serde_json::Value = serde_json::from_slice(&node.stdout).unwrap();
    let labels = &node["metadata"]["labels"];
    assert_eq!(labels["tier"], "small", "{labels}");
    assert_eq!(labels["schedlab.io/pool"], "small", "{labels}");
    assert_eq!(labels["schedlab.io/real-node"], "true", "{labels}");
    assert_eq!(node["metadata"]["annotations"]["schedlab.io/hourly-price"], "0.05");
    let allocatable = &node["status"]["allocatable"];
    // capacity less the scenario's reservation: 1 cpu - 100m, 2 GiB - 256 MiB
    assert_eq!(allocatable["cpu"], "900m", "{allocatable}");
    assert_eq!(allocatable["memory"], "1792Mi", "{allocatable}");
    assert_eq!(allocatable["pods"], "20", "{allocatable}");
    let taints = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
    assert!(
        taints
            .iter()
            .any(|t| t["key"] == "dedicated" && t["effect"] == "NoSchedule"),
        "{taints:?}"
    );
    assert!(
        stdout.contains("kube-controller-manager\tpid"),
        "real nodes run the controller-manager: {stdout}"
    );

    // the pause, workload and scheduler images, imported (never pulled)
    let socket = format!("{state}/nodes/real-0/containerd.sock");
    let images = std::process::Command::new("ctr")
        .args(["--address", &socket, "-n", "k8s.io", "images", "ls", "-q"])
        .output()
        .unwrap();
    let images = text(&images.stdout);
    for tag in [
        "docker.io/schedlab/pause:dev",
        "docker.io/schedlab/workload:dev",
        "docker.io/schedlab/agmarl-scheduler:dev",
    ] {
        assert!(images.lines().any(|l| l == tag), "{tag} not in {images}");
    }

    let status = schedlab(&["cluster", "status", "--local", "--state", &state]);
    assert!(status.status.success(), "{}", text(&status.stderr));
    let stdout = text(&status.stdout);
    assert!(
        stdout.contains("real node real-0\tReady, kubelet running, containerd running"),
        "{stdout}"
    );

    let down = schedlab(&["cluster", "down", "--local", "--state", &state]);
    assert!(down.status.success(), "{}", text(&down.stderr));
    let stdout = text(&down.stdout);
    assert!(
        stdout
            .lines()
            .next()
            .is_some_and(|l| l == "real node real-0\tTerminated"),
        "{stdout}"
    );

    let after = schedlab(&["cluster", "status", "--local", "--state", &state]);
    let stdout = text(&after.stdout);
    assert!(
        stdout.contains("real node real-0\treadiness unknown, kubelet stopped, containerd stopped"),
        "{stdout}"
    );
}

#[test]
fn a_scenario_for_cluster_up_needs_real_nodes_it_has_enough_of() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let state = state.to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["--scenario", "churn"], "--scenario is for --real-nodes N"),
        (&["--real-nodes", "1", "--set", "nodes=2"], "--set is for --scenario"),
        (
            &["--real-nodes", "3", "--scenario", "churn", "--set", "nodes=2"],
            "--real-nodes 3: scenario churn has 2 nodes",
        ),
    ];
    for (flags, says) in cases {
        let mut args = vec!["cluster", "up", "--local", "--state", state];
        args.extend_from_slice(flags);
        let run = schedlab(&args);
        let err = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
        assert!(!Path::new(state).exists(), "{flags:?} made the state folder");
    }
}

#[test]
fn real_node_counts_the_scenario_cannot_hold_are_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--cluster", "local", "--nodes", "real:3", "--set", "nodes=4"],
            "give real:4, or real:3+emulated to play the other 1 on the node emulator",
        ),
        (
            &["--cluster", "local", "--nodes", "real:5+emulated", "--set", "nodes=4"],
            "ask for at most 4 real ones",
        ),
        (
            &["--cluster", "local", "--nodes", "real:0"],
            "real:N or real:N+emulated",
        ),
        (
            &["--cluster", "kube", "--nodes", "real:2"],
            "--nodes real:N is for --cluster local",
        ),
    ];
    for (flags, says) in cases {
        let mut args = vec!["scenario", "churn", "--seeds", "1", "--out", out];
        args.extend_from_slice(flags);
        let run = schedlab(&args);
        let err = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
        assert!(!Path::new(out).exists(), "{flags:?} made the run folder");
    }
}

#[test]
fn a_scenario_plays_on_real_nodes_beside_emulated_ones() {
    let _turn = real_nodes_turn();
    let tmp = tempfile::tempdir().unwrap();
    // the in-cluster scheduler's manifests (the agmarl arm)
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = tmp.path().join("run");
    let run = schedlab(&[
        "scenario",
        "churn",
        "--cluster",
        "local",
        "--nodes",
        "real:2+emulated",
        "--set",
        "nodes=4",
        "--arms",
        "default,agmarl",
        "--seeds",
        "1",
        "--time-scale",
        "120",
        "--repo",
        repo.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let cluster = &manifest["cluster"];
    assert_eq!(cluster["nodes"], "existing+emulated", "{cluster}");
    assert_eq!(cluster["provisioned"]["kind"], "local", "{cluster}");
    // the agmarl arm ran as the in-cluster scheduler's Deployment on the real nodes
    assert_eq!(cluster["provisioned"]["in_cluster_arm"], "agmarl", "{cluster}");
    let pools = cluster["provisioned"]["node_pools"].as_array().unwrap();
    let real: Vec<&str> = pools
        .iter()
        .flat_map(|p| p["real_nodes"].as_array().unwrap())
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(real, ["real-0", "real-1"], "{cluster}");
    let emulated: u64 = pools.iter().map(|p| p["emulated_nodes"].as_u64().unwrap()).sum();
    assert_eq!(emulated, 2, "{cluster}");

    // the records name the real nodes, and pods were bound to them
    let records = std::fs::read_to_string(out.join("runs/default/seed-1/records.jsonl")).unwrap();
    let mut real_ids = Vec::new();
    for line in records.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        if record["type"] == "node" && record["spec"]["name"].as_str().is_some_and(|n| n.starts_with("real-")) {
            real_ids.push(record["node"].as_u64().unwrap());
        }
    }
    assert_eq!(real_ids.len(), 2, "both real nodes are in the records");
    let bound_on_real = records
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["event"] == "pod_bound" && r["node"].as_u64().is_some_and(|n| real_ids.contains(&n)))
        .count();
    assert!(bound_on_real > 0, "no pod was bound to a real node");
    let agmarl = std::fs::read_to_string(out.join("runs/agmarl/seed-1/records.jsonl")).unwrap();
    let bound_by_agmarl = agmarl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["event"] == "pod_bound")
        .count();
    assert!(bound_by_agmarl > 0, "the in-cluster scheduler bound no pod");

    let run_manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("runs/default/seed-1/manifest.json")).unwrap()).unwrap();
    let faults = &run_manifest["cluster_run"]["node_faults"];
    assert_eq!(faults["failed"], 0, "{faults}");
    for action in faults["actions"].as_array().unwrap() {
        let action = action.as_str().unwrap();
        assert!(action.contains("the kubelet of real-"), "{action}");
    }

    assert!(
        !Path::new("/run/schedlab-real-nodes").exists(),
        "the host record is gone with the last real node"
    );
}

/// Two real nodes, pods on them, and nothing else happening: a kubelet or
/// a containerd killed from outside is then the only fault.
const QUIET_SCENARIO: &str = r#"name: quiet
duration: 4m
sample_interval: 5s
cluster:
  pools:
    - name: small
      count: 2
      machine_type: e2-small
      hourly_price: 0.05
      capacity: {cpu: 1, memory: 2Gi}
      reserved: {cpu: 100m, memory: 256Mi}
templates:
  web:
    requests: {cpu: 50m, memory: 64Mi}
    usage:
      cpu: {normal: {mean: 10m, std: 1m}}
      memory: {lognormal: {median: 32Mi, sigma: 0.1}}
phases:
  - create: {template: web, count: 6}
"#;

/// Interrupts a run (as Ctrl-C does, so it takes its cluster down) when a
/// test fails before the run has ended.
struct Interrupted(Option<std::process::Child>);

impl Drop for Interrupted {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGINT,
            );
            let _ = child.wait();
        }
    }
}

/// SIGKILLs the process of `pid_file`, as schedlab's provisioning wrote it.
fn kill_from_pid_file(pid_file: &Path) {
    let process =
        provisioning::local::process::parse_pid_file(&std::fs::read_to_string(pid_file).unwrap(), pid_file).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(process.pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
}

#[test]
fn a_kubelet_or_containerd_killed_in_the_middle_of_a_run_is_a_node_failure_not_a_crash() {
    let _turn = real_nodes_turn();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("quiet.yaml");
    std::fs::write(&scenario, QUIET_SCENARIO).unwrap();
    let out = tmp.path().join("run");
    // the run's private control plane goes under this test's own temporary folder
    let private = tmp.path().join("tmp");
    std::fs::create_dir(&private).unwrap();
    let run = <std::process::Command as assert_cmd::cargo::CommandCargoExt>::cargo_bin("schedlab")
        .unwrap()
        .args(["scenario", scenario.to_str().unwrap(), "--cluster", "local"])
        .args(["--nodes", "real:2", "--arms", "default", "--seeds", "1"])
        .args(["--time-scale", "3", "--out", out.to_str().unwrap()])
        .env("TMPDIR", &private)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut run = Interrupted(Some(run));

    // once the nodes have run pods for a while, SIGKILL the kubelet of one
    // and the containerd of the other
    let started = std::time::Instant::now();
    let pids = loop {
        let found = std::fs::read_dir(&private).unwrap().flatten().find_map(|e| {
            let pids = e.path().join("nodes/real-1/pids");
            pids.join("kubelet.pid").is_file().then_some(e.path().join("nodes"))
        });
        if let Some(nodes) = found {
            break nodes;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "no real node came up"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    std::thread::sleep(std::time::Duration::from_secs(20));
    kill_from_pid_file(&pids.join("real-0/pids/kubelet.pid"));
    kill_from_pid_file(&pids.join("real-1/pids/containerd.pid"));

    let finished = run.0.take().unwrap().wait_with_output().unwrap();
    assert!(finished.status.success(), "{}", text(&finished.stderr));
    let records = std::fs::read_to_string(out.join("runs/default/seed-1/records.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = records.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (name, killed) in [("real-0", "kubelet"), ("real-1", "containerd")] {
        let real = records
            .iter()
            .find(|r| r["type"] == "node" && r["spec"]["name"] == name)
            .map(|r| r["node"].clone())
            .unwrap_or_else(|| panic!("{name} is in the records"));
        assert!(
            records.iter().any(|r| r["event"] == "node_failed" && r["node"] == real),
            "the node whose {killed} was killed, {name}, never failed in the records"
        );
    }
    assert!(
        !std::fs::read_dir(&private).unwrap().flatten().any(|_| true),
        "the private control plane is gone"
    );
}

#[test]
fn a_missing_node_tool_without_package_installs_is_named_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    // every tool the control plane and a real node need, but containerd
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let path = std::env::var_os("PATH").unwrap();
    for tool in [
        "etcd", "openssl", "curl", "runc", "ctr", "unshare", "nsenter", "mount", "ip", "objcopy", "sh",
    ] {
        if let Some(found) = std::env::split_paths(&path).map(|d| d.join(tool)).find(|p| p.is_file()) {
            std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
        }
    }
    let state = tmp.path().join("state");
    let up = <std::process::Command as assert_cmd::cargo::CommandCargoExt>::cargo_bin("schedlab")
        .unwrap()
        .args([
            "cluster",
            "up",
            "--local",
            "--no-install",
            "--real-nodes",
            "1",
            "--state",
        ])
        .arg(&state)
        .env("PATH", &bin)
        .output()
        .unwrap();
    let err = text(&up.stderr);
    assert_eq!(up.status.code(), Some(1), "{err}");
    assert!(err.contains("`containerd` is not on PATH"), "{err}");
    assert!(!state.join("pids").exists(), "a component was started: {err}");
}
