//! Brings a real local control plane up, checks it answers, and takes it down.
//!
//! It needs root (apt-get) or the packages already installed, the Debian
//! archive, and on a cold cache about six minutes to build Kubernetes;
//! `.ci/run` builds the cache first. It uses a private state folder, so a
//! control plane the user started with `schedlab cluster up --local` is left alone.

use provisioning::local::{self, LocalOptions, Stopped, process};
use std::process::Command;
use std::time::Instant;

fn rss_kib(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn get(url: &str, ca: &std::path::Path, token: &str) -> (bool, String) {
    let out = Command::new("curl")
        .args(["--silent", "--fail", "--max-time", "5", "--cacert"])
        .arg(ca)
        .arg("-H")
        .arg(format!("Authorization: Bearer {token}"))
        .arg(url)
        .output()
        .expect("curl runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn token_of(kubeconfig: &std::path::Path) -> String {
    let text = std::fs::read_to_string(kubeconfig).expect("kubeconfig readable");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("token:"))
        .expect("a token line");
    line.trim_start()
        .trim_start_matches("token:")
        .trim()
        .trim_matches('"')
        .to_owned()
}

/// Stops the control plane even when an assertion fails half-way.
struct DownOnDrop(std::path::PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let _ = local::down(&self.0);
    }
}

#[test]
fn control_plane_comes_up_answers_and_goes_down() {
    let mut opts = LocalOptions::private("control-plane-test").unwrap();
    opts.controller_manager = std::env::var_os("SCHEDLAB_TEST_CM").is_some();
    let _cleanup = DownOnDrop(opts.state_dir.clone());
    let t0 = Instant::now();
    let cluster = local::up(&opts).unwrap();
    let up_secs = t0.elapsed().as_secs_f64();
    eprintln!("up in {up_secs:.1}s: {:?}", cluster.timings);
    for (name, pid) in cluster.pids() {
        eprintln!("{name} pid {pid} RSS {} KiB", rss_kib(pid).unwrap_or(0));
    }

    let st = local::status(&cluster.state_dir).unwrap();
    assert!(st.healthy(), "{st:?}");
    let ca = cluster.record.ca_file.clone();
    let admin = token_of(cluster.admin_kubeconfig());
    let (ok, version) = get(&format!("{}/version", cluster.server()), &ca, &admin);
    assert!(ok && version.contains("\"gitVersion\": \"v1.20.2\""), "{version}");
    // The default namespace exists and pods can be listed by the admin.
    let (ok, _) = get(
        &format!("{}/api/v1/namespaces/default/pods", cluster.server()),
        &ca,
        &admin,
    );
    assert!(ok);
    // The agmarl identity may read nodes (system:kube-scheduler) but not secrets.
    let agmarl = token_of(cluster.agmarl_kubeconfig());
    assert!(get(&format!("{}/api/v1/nodes", cluster.server()), &ca, &agmarl).0);
    assert!(
        !get(
            &format!("{}/api/v1/namespaces/default/secrets", cluster.server()),
            &ca,
            &agmarl
        )
        .0
    );

    let pids: Vec<i32> = cluster.pids().iter().map(|(_, p)| *p).collect();
    let state_dir = cluster.state_dir.clone();
    let stopped = cluster.down().unwrap();
    assert!(
        stopped
            .iter()
            .all(|(_, s)| *s == Stopped::Terminated || *s == Stopped::Killed),
        "{stopped:?}"
    );
    for pid in pids {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|t| process::parse_stat(&t))
            .is_some_and(|(state, _)| state != 'Z');
        assert!(!alive, "pid {pid} still runs");
    }
    assert!(!local::status(&state_dir).unwrap().healthy());

    // A second start reuses the cache: no build.
    let t1 = Instant::now();
    let again = local::up(&opts).unwrap();
    eprintln!("cached up in {:.1}s: {:?}", t1.elapsed().as_secs_f64(), again.timings);
    assert!(!again.timings.built);
    again.down().unwrap();
    let _ = std::fs::remove_dir_all(&opts.state_dir);
}
