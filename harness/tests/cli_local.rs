//! End-to-end runs of `schedlab scenario --cluster local` against a real
//! control plane (etcd, kube-apiserver, kube-scheduler) with emulated nodes:
//! a complete run, and a run interrupted half-way that must leave no API
//! object behind and its folder marked incomplete.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, ListParams};
use kube_backend::{ApiClient, ClientOptions, labels};
use provisioning::local::{LocalOptions, ScopedCluster};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// Objects of any schedlab run still in the cluster.
fn leftovers(kubeconfig: &Path) -> Vec<String> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let api = ApiClient::connect(&ClientOptions {
            kubeconfig: Some(kubeconfig.to_path_buf()),
            ..ClientOptions::default()
        })
        .await
        .unwrap();
        let lp = ListParams::default().labels(labels::RUN);
        let mut left = Vec::new();
        let c = api.client();
        for n in Api::<Node>::all(c.clone()).list(&lp).await.unwrap() {
            left.push(format!("node {}", n.metadata.name.unwrap_or_default()));
        }
        for p in Api::<Pod>::all(c.clone()).list(&lp).await.unwrap() {
            left.push(format!("pod {}", p.metadata.name.unwrap_or_default()));
        }
        for n in Api::<Namespace>::all(c.clone()).list(&lp).await.unwrap() {
            left.push(format!("namespace {}", n.metadata.name.unwrap_or_default()));
        }
        for p in Api::<PriorityClass>::all(c.clone()).list(&lp).await.unwrap() {
            left.push(format!("priorityclass {}", p.metadata.name.unwrap_or_default()));
        }
        left
    })
}

/// What became of each pod of a run, from its records.
struct PodFates {
    created: std::collections::BTreeSet<u64>,
    bound: std::collections::BTreeSet<u64>,
    /// deleted before any binding
    deleted_pending: std::collections::BTreeSet<u64>,
    deleted_pending_causes: std::collections::BTreeMap<String, usize>,
}

impl PodFates {
    fn of(records: &str) -> PodFates {
        let mut fates = PodFates {
            created: Default::default(),
            bound: Default::default(),
            deleted_pending: Default::default(),
            deleted_pending_causes: Default::default(),
        };
        for line in records.lines() {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            let Some(pod) = r["pod"].as_u64() else { continue };
            match r["event"].as_str() {
                Some("pod_created") => {
                    fates.created.insert(pod);
                }
                Some("pod_bound") => {
                    fates.bound.insert(pod);
                }
                Some("pod_deleted") if !fates.bound.contains(&pod) && fates.deleted_pending.insert(pod) => {
                    let cause = r["cause"].as_str().unwrap_or("none").to_string();
                    *fates.deleted_pending_causes.entry(cause).or_default() += 1;
                }
                _ => {}
            }
        }
        fates
    }
}

/// One arm's mean of a metric in a run folder's summary.csv.
fn summary_value(summary: &Path, arm: &str, metric: &str) -> f64 {
    let text = fs::read_to_string(summary).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (arm_col, metric_col, mean_col) = (col("arm"), col("metric"), col("mean"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f[arm_col] == arm && f[metric_col] == metric)
        .unwrap_or_else(|| panic!("{arm} {metric} in {}", summary.display()))[mean_col]
        .parse()
        .unwrap()
}

/// `schedlab scenario churn --cluster local --time-scale 120 --seeds 1` on the control plane of
/// `state`, into `out`, with `args`.
fn churn_on(state: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("schedlab")
        .unwrap()
        .args([
            "scenario",
            "churn",
            "--cluster",
            "local",
            "--time-scale",
            "120",
            "--seeds",
            "1",
        ])
        .args(args)
        .arg("--local-state")
        .arg(state)
        .arg("--out")
        .arg(out)
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap()
}

#[test]
fn scenarios_run_on_a_real_api_server_and_leave_nothing_behind() {
    let opts = LocalOptions::private("cli-local").unwrap();
    let plane = ScopedCluster::up(&opts).unwrap();
    let tmp = tempfile::tempdir().unwrap();

    // A complete run: the real kube-scheduler and schedlab's bind loop, same client limits,
    // with the bind loop's decisions explained.
    let out_dir = tmp.path().join("complete");
    let started = Instant::now();
    let out = churn_on(
        &opts.state_dir,
        &out_dir,
        &["--arms", "default,binpack", "--set", "nodes=8", "--explain"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    eprintln!("complete run: {:.1}s", started.elapsed().as_secs_f64());
    assert!(!out_dir.join("INCOMPLETE").exists());
    let manifest = read_json(&out_dir.join("manifest.json"));
    assert_eq!(manifest["backend"], "local");
    assert_eq!(manifest["complete"], true);
    let cluster = &manifest["cluster"];
    assert_eq!(cluster["time_scale"], 120.0);
    // compared at equal client rate limits, and the manifest says which
    assert_eq!(cluster["default_scheduler_client"], cluster["project_scheduler_client"]);
    assert!(cluster["project_scheduler_client"]["qps"].as_f64().unwrap() > 0.0);
    for arm in ["default", "binpack"] {
        let dir = out_dir.join("runs").join(arm).join("seed-1");
        let run = read_json(&dir.join("manifest.json"));
        let scheduler_name = run["cluster_run"]["scheduler_name"].as_str().unwrap();
        assert_eq!(scheduler_name, if arm == "default" { "default-scheduler" } else { arm });
        // the bind loop's policy is timed as the simulator's is; the cluster's
        // own kube-scheduler is not timed by schedlab
        let times = dir.join("decision_times.json");
        if arm == "default" {
            assert!(!times.exists(), "{arm}: no decision times");
        } else {
            let times = read_json(&times);
            assert_eq!(
                times["decisions"], run["cluster_run"]["bind_loop"]["decisions"],
                "{arm}"
            );
        }
        // --explain: the bind loop's policy explains each decision; kube-scheduler cannot be asked
        let decisions = dir.join("decisions.jsonl");
        if arm == "default" {
            assert!(!decisions.exists(), "{arm}: no decisions");
            let reason = run["explain"]["not_applicable"]["reason"].as_str().unwrap();
            assert!(reason.contains("kube-scheduler"), "{reason}");
        } else {
            let lines = fs::read_to_string(&decisions).unwrap().lines().count() as u64;
            assert!(lines > 0, "{arm}: decisions written");
            assert_eq!(run["explain"]["written"]["decisions"], lines, "{arm}");
            assert_eq!(
                run["cluster_run"]["bind_loop"]["decisions"], lines,
                "{arm}: one line a decision"
            );
        }
        let records = fs::read_to_string(dir.join("records.jsonl")).unwrap();
        let count = |needle: &str| records.lines().filter(|l| l.contains(needle)).count();
        let pods = PodFates::of(&records);
        let created = pods.created.len();
        let bound = pods.bound.len();
        assert!(created > 50, "{arm}: {created} pods created");
        // Every pod that was never bound was deleted by the scenario while it
        // waited: the storm is over by minute 26 with every node back, so
        // nothing is left waiting at minute 35 unless the bind loop lost it.
        // How many wait until churn deletes them depends on how fast this
        // machine plays 120 scenario seconds a second, so no share is asserted
        // beyond a majority bound.
        assert!(bound * 2 > created, "{arm}: {bound} of {created} bound");
        let never_bound = created - bound - pods.deleted_pending.len();
        assert_eq!(never_bound, 0, "{arm}: pods never bound nor deleted");
        assert_eq!(
            summary_value(&out_dir.join("summary.csv"), arm, "pods_pending_end"),
            0.0,
            "{arm}: the summary agrees"
        );
        assert!(
            pods.deleted_pending_causes
                .keys()
                .all(|c| c == "churn" || c == "scenario"),
            "{arm}: only the scenario deletes pending pods: {:?}",
            pods.deleted_pending_causes
        );
        assert!(
            count("\"event\":\"container_started\"") >= bound / 2,
            "{arm}: containers run"
        );
        assert!(count("\"event\":\"pod_deleted\"") > 0, "{arm}: churn deletes pods");
        assert!(
            count("\"event\":\"node_failed\"") > 0,
            "{arm}: node faults reach the nodes"
        );
        assert!(
            records.lines().last().unwrap().contains("\"end\""),
            "{arm}: ends with End"
        );
    }
    let summary = fs::read_to_string(out_dir.join("summary.csv")).unwrap();
    assert!(summary.contains("binpack"));
    assert_eq!(leftovers(plane.admin_kubeconfig()), Vec::<String>::new());

    // The monolithic foil through the bind loop: the network bundled for 10 nodes decides every pod.
    let out_dir = tmp.path().join("foil");
    let out = churn_on(&opts.state_dir, &out_dir, &["--arms", "drs", "--set", "nodes=10"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let times = read_json(&out_dir.join("runs/drs/seed-1/decision_times.json"));
    assert!(times["decisions"].as_u64().unwrap() > 0, "{times}");
    // its binds took effect: pods ran on the nodes it chose
    assert!(summary_value(&out_dir.join("summary.csv"), "drs", "nodes_in_use_mean") > 0.0);
    assert_eq!(leftovers(plane.admin_kubeconfig()), Vec::<String>::new());

    // A scheduler already in the cluster as an arm: the control plane's own kube-scheduler under its
    // name; the run's pods carry it, and it binds them. A name no scheduler answers to binds nothing,
    // and the run says so.
    let out_dir = tmp.path().join("external");
    let out = churn_on(
        &opts.state_dir,
        &out_dir,
        &[
            "--arms",
            "external:default-scheduler,external:nobody-here",
            "--set",
            "nodes=8",
            "--explain",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(summary_value(&out_dir.join("summary.csv"), "default-scheduler", "nodes_in_use_mean") > 0.0);
    assert_eq!(
        summary_value(&out_dir.join("summary.csv"), "nobody-here", "pods_bound"),
        0.0
    );
    assert!(
        stderr.contains("warning: external:nobody-here bound none of the"),
        "{stderr}"
    );
    assert!(!stderr.contains("external:default-scheduler bound none"), "{stderr}");
    let manifest = read_json(&out_dir.join("runs/default-scheduler/seed-1/manifest.json"));
    let reason = manifest["explain"]["not_applicable"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("external scheduler (default-scheduler)"), "{manifest}");
    let invocation = read_json(&out_dir.join("manifest.json"));
    assert_eq!(invocation["arm_facts"]["default-scheduler"]["preempts"], false);
    assert_eq!(leftovers(plane.admin_kubeconfig()), Vec::<String>::new());

    // Interrupted half-way: the run is torn down and the folder stays incomplete.
    let out_dir = tmp.path().join("interrupted");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .args(["scenario", "churn", "--cluster", "local", "--time-scale", "30"])
        .args(["--arms", "binpack", "--seeds", "1", "--set", "nodes=8"])
        .arg("--local-state")
        .arg(&opts.state_dir)
        .arg("--out")
        .arg(&out_dir)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run has pods in the cluster, then Ctrl-C. Its records go to a temporary name
    // until the run ends.
    let records = out_dir.join("runs/binpack/seed-1/records.jsonl");
    let playing = results::atomic::partial_path(&records);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !fs::metadata(&playing).is_ok_and(|m| m.len() >= 2000) {
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let waited = Instant::now();
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "schedlab did not stop after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(!exit.success(), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(out_dir.join("INCOMPLETE").exists(), "the folder is marked incomplete");
    assert_eq!(read_json(&out_dir.join("manifest.json"))["complete"], false);
    assert!(
        !records.exists(),
        "no records of an unfinished run under the final name"
    );
    assert_eq!(leftovers(plane.admin_kubeconfig()), Vec::<String>::new());
    plane.down().unwrap();
}
