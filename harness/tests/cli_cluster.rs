//! `schedlab cluster up|status|down --local --real-nodes N` end to end: a
//! real node comes up Ready beside the control plane, `status` says so, and
//! `down` stops it with the rest; asking for more real nodes than the
//! machine holds is bad input, refused before anything starts.
//!
//! Needs root, cgroup v1 and the cached Kubernetes build `.ci/run` makes
//! first (the kubelet included); Debian's containerd, runc and CNI plugins
//! are installed when missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;

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
