//! `schedlab scenario --cluster kind|gke` up to the boundary: no docker
//! engine, kind or GKE is reached. `--dry-run` prints every external command
//! and exits 0 having written nothing; bad input exits 2 before anything is
//! written or run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use std::path::Path;

/// Runs schedlab with a private TMPDIR and HOME (so nothing can land in the
/// real ones) and no KUBECONFIG; returns (exit code, stdout, stderr).
fn schedlab(tmp: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("schedlab")
        .unwrap()
        .env("TMPDIR", tmp.join("tmp"))
        .env("HOME", tmp.join("home"))
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "warn")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A sandbox with empty tmp and home folders.
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    dir
}

/// Nothing but the empty tmp and home folders is left.
fn assert_untouched(dir: &Path) {
    let mut entries: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, vec!["home", "tmp"], "something was written");
    for sub in ["home", "tmp"] {
        assert_eq!(
            std::fs::read_dir(dir.join(sub)).unwrap().count(),
            0,
            "something was written to {sub}"
        );
    }
}

/// The plan's command lines (not comments).
fn command_lines(stdout: &str) -> Vec<&str> {
    let plan = stdout.split("Plan:\n").nth(1).unwrap_or("");
    plan.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

#[test]
fn kind_dry_run_prints_config_and_every_command() {
    let dir = sandbox();
    let out = dir.path().join("run");
    let (code, stdout, stderr) = schedlab(
        dir.path(),
        &[
            "scenario",
            "churn",
            "--cluster",
            "kind",
            "--dry-run",
            "--set",
            "nodes=4",
            "--arms",
            "default,agmarl,binpack",
            "--seeds",
            "2",
            "--kind-name",
            "lab",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let commands = command_lines(&stdout);
    assert_eq!(commands.len(), 6, "{stdout}");
    assert_eq!(
        commands[0],
        "(cd . && docker build -f deploy/Dockerfile --target agmarl-scheduler -t schedlab/agmarl-scheduler:dev .)"
    );
    assert_eq!(
        commands[1],
        "(cd . && docker build -f deploy/Dockerfile --target workload -t schedlab/workload:dev .)"
    );
    assert!(
        commands[2].starts_with("kind create cluster --name lab --config "),
        "{}",
        commands[2]
    );
    assert!(commands[2].ends_with("--wait 120s"), "{}", commands[2]);
    assert_eq!(
        commands[3],
        "kind load docker-image schedlab/agmarl-scheduler:dev --name lab"
    );
    assert_eq!(commands[4], "kind load docker-image schedlab/workload:dev --name lab");
    assert!(
        commands[5].starts_with("kind delete cluster --name lab"),
        "{}",
        commands[5]
    );
    // the config: a control plane and a worker per node, labelled and tainted
    assert!(stdout.contains("apiVersion: kind.x-k8s.io/v1alpha4"), "{stdout}");
    assert_eq!(stdout.matches("- role: worker").count(), 4, "{stdout}");
    assert!(stdout.contains("schedlab.io/pool: spot"), "{stdout}");
    assert!(stdout.contains("kind: JoinConfiguration"), "{stdout}");
    assert!(stdout.contains("play 6 runs (3 arms × 2 seeds)"), "{stdout}");
    assert!(stdout.contains("agmarl by the in-cluster agmarl-scheduler"), "{stdout}");
    assert!(stdout.contains("docker stop/start <worker>"), "{stdout}");
    assert!(!out.exists(), "a dry run writes no run folder");
    assert_untouched(dir.path());
}

#[test]
fn kind_keep_leaves_the_cluster_and_pause_faults_show() {
    let dir = sandbox();
    let (code, stdout, stderr) = schedlab(
        dir.path(),
        &[
            "scenario",
            "churn",
            "--cluster",
            "kind",
            "--dry-run",
            "--set",
            "nodes=4",
            "--keep",
            "--no-image-build",
            "--kind-fault",
            "pause",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let commands = command_lines(&stdout);
    assert_eq!(commands.len(), 3, "{stdout}");
    assert!(
        commands
            .iter()
            .all(|c| !c.contains("delete") && !c.contains("docker build")),
        "{commands:?}"
    );
    assert!(stdout.contains("keep kind cluster schedlab"), "{stdout}");
    assert!(stdout.contains("docker pause/unpause"), "{stdout}");
    assert_untouched(dir.path());
}

#[test]
fn kind_refuses_more_nodes_than_workers_unless_emulated() {
    let dir = sandbox();
    // churn has 40 nodes by default
    let (code, _, stderr) = schedlab(dir.path(), &["scenario", "churn", "--cluster", "kind", "--dry-run"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("at most 20 workers") && stderr.contains("--kind-extra-emulated"),
        "{stderr}"
    );
    // without --dry-run too, before anything is run or written
    let out = dir.path().join("run");
    let (code, _, stderr) = schedlab(
        dir.path(),
        &["scenario", "churn", "--cluster", "kind", "--out", out.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(!out.exists());
    let (code, stdout, stderr) = schedlab(
        dir.path(),
        &[
            "scenario",
            "churn",
            "--cluster",
            "kind",
            "--dry-run",
            "--kind-extra-emulated",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("a control plane and 20 workers, 20 nodes emulated by the node emulator"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("- role: worker").count(), 20);
    assert_untouched(dir.path());
}

#[test]
fn gke_provision_dry_run_prints_cost_create_and_delete() {
    let dir = sandbox();
    let (code, stdout, stderr) = schedlab(
        dir.path(),
        &[
            "scenario",
            "churn",
            "--cluster",
            "gke",
            "--dry-run",
            "--provision",
            "--zone",
            "europe-west4-a",
            "--gke-cluster-name",
            "lab",
            "--image-registry",
            "europe-docker.pkg.dev/p/schedlab",
            "--arms",
            "default,agmarl",
            "--seeds",
            "1",
            "--time-scale",
            "5",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    // churn: 30 general + 10 spot nodes, 35 minutes, 2 runs at time scale 5
    assert!(stdout.contains("Cost estimate (US dollars):"), "{stdout}");
    assert!(
        stdout.contains("pool general: 30 × n2-standard-8 at $0.3885/h"),
        "{stdout}"
    );
    assert!(
        stdout.contains("pool spot: 10 × n2-standard-8 at $0.0944/h"),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 runs × 0.583 scenario hours / time scale 5"),
        "{stdout}"
    );
    let commands = command_lines(&stdout);
    assert_eq!(commands.len(), 3, "{stdout}");
    assert!(
        commands[0].contains(
            "gcloud container clusters create lab --zone europe-west4-a --machine-type n2-standard-8 --num-nodes 30"
        ),
        "{}",
        commands[0]
    );
    assert!(
        commands[1].contains("gcloud container node-pools create spot --cluster lab --zone europe-west4-a"),
        "{}",
        commands[1]
    );
    assert!(commands[1].contains("--node-taints=cloud.google.com/gke-spot=true:NoSchedule --spot"));
    assert!(
        commands[2].ends_with("gcloud container clusters delete lab --zone europe-west4-a --quiet"),
        "{}",
        commands[2]
    );
    assert!(
        stdout.contains("europe-docker.pkg.dev/p/schedlab/agmarl-scheduler:dev"),
        "{stdout}"
    );
    assert!(stdout.contains("cordon the node"), "{stdout}");
    assert_untouched(dir.path());
}

#[test]
fn gke_without_provision_never_creates_or_deletes() {
    let dir = sandbox();
    let (code, stdout, stderr) = schedlab(
        dir.path(),
        &[
            "scenario",
            "churn",
            "--cluster",
            "gke",
            "--dry-run",
            "--image-registry",
            "r.example/x",
            "--allow-vm-faults",
            "--context",
            "gke_p_z_c",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(command_lines(&stdout).is_empty(), "{stdout}");
    assert!(
        !stdout.contains("clusters create") && !stdout.contains("clusters delete"),
        "{stdout}"
    );
    assert!(!stdout.contains("Cost estimate"), "{stdout}");
    assert!(stdout.contains("context gke_p_z_c"), "{stdout}");
    assert!(
        stdout.contains("general (30 × n2-standard-8), spot (10 × n2-standard-8)"),
        "{stdout}"
    );
    assert!(stdout.contains("gcloud compute instances stop/start"), "{stdout}");
    assert_untouched(dir.path());
}

#[test]
fn bad_input_exits_2_before_anything_is_written() {
    let dir = sandbox();
    let out = dir.path().join("run");
    let out_arg = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--cluster",
                "gke",
                "--dry-run",
                "--provision",
                "--zone",
                "us-central1",
                "--image-registry",
                "r",
            ],
            "--zone \"us-central1\"",
        ),
        (
            &["--cluster", "gke", "--dry-run", "--provision", "--image-registry", "r"],
            "--zone is needed",
        ),
        (&["--cluster", "gke", "--dry-run"], "--image-registry"),
        (&["--cluster", "gke", "--image-registry", "r"], "no kubeconfig"),
        (
            &["--cluster", "kind", "--zone", "us-central1-a", "--set", "nodes=4"],
            "--zone is for --cluster gke",
        ),
        (
            &["--cluster", "kind", "--kind-name", "Bad_Name", "--set", "nodes=4"],
            "kind cluster name",
        ),
        (
            &["--cluster", "sim", "--dry-run"],
            "--dry-run is for --cluster local|kube|kind|gke",
        ),
        (
            &[
                "--cluster",
                "kind",
                "--set",
                "nodes=4",
                "--checkpoint",
                "/nonexistent.safetensors",
            ],
            "--checkpoint",
        ),
    ];
    for (extra, message) in cases {
        let mut args = vec!["scenario", "churn", "--out", out_arg];
        args.extend_from_slice(extra);
        let (code, _, stderr) = schedlab(dir.path(), &args);
        assert_eq!(code, 2, "{extra:?}: {stderr}");
        assert!(stderr.contains(message), "{extra:?}: {stderr}");
        assert!(!out.exists(), "{extra:?} wrote the run folder");
    }
    assert_untouched(dir.path());
}
