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
//! left on the host. Bad `--nodes` values are bad input, refused before
//! anything starts.
//!
//! Needs root, cgroup v1 and the cached Kubernetes build `.ci/run` makes
//! first (the kubelet included); Debian's containerd, runc and CNI plugins
//! are installed when missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use std::path::Path;

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

/// Takes the cluster down even when an assertion fails half-way.
struct Down(String);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = schedlab(&["cluster", "down", "--local", "--state", &self.0]);
    }
}

#[test]
fn a_real_node_comes_up_ready_and_goes_down_with_the_control_plane() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state").to_str().unwrap().to_owned();
    let _down = Down(state.clone());

    let up = schedlab(&["cluster", "up", "--local", "--state", &state, "--real-nodes", "1"]);
    assert!(up.status.success(), "{}", text(&up.stderr));
    let stdout = text(&up.stdout);
    assert!(stdout.contains("real node real-0\tReady after"), "{stdout}");
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
    let tmp = tempfile::tempdir().unwrap();
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
        "default",
        "--seeds",
        "1",
        "--time-scale",
        "120",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let cluster = &manifest["cluster"];
    assert_eq!(cluster["nodes"], "existing+emulated", "{cluster}");
    assert_eq!(cluster["provisioned"]["kind"], "local", "{cluster}");
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
