//! The program as a kubelet runs it: environment in, exit code and state
//! file out, memory and cpu really used.
#![allow(clippy::unwrap_used)] // test helpers: a failed call fails the test

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use workload_runner::plan::{EndKind, Plan};
use workload_runner::settings::{self, Settings};
use workload_runner::state::{Counter, StartCounter};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab-workload");
const MI: u64 = 1 << 20;

fn pod_env(behaviour: &str) -> HashMap<String, String> {
    [
        (settings::BEHAVIOUR, behaviour),
        (settings::SEED, "5"),
        (settings::POD_ID, "77"),
        (settings::WORKLOAD, "1"),
        (settings::ORDINAL, "2"),
        (settings::INCARNATION, "0"),
        ("RUST_LOG", "info"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn command(env: &HashMap<String, String>, state: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear().envs(env).arg("--state-dir").arg(state);
    cmd
}

fn run(env: &HashMap<String, String>, state: &Path) -> (Output, Duration) {
    let t = Instant::now();
    let out = command(env, state).output().unwrap();
    (out, t.elapsed())
}

/// The plan the program will follow for its next start, computed here by
/// the library from the same environment.
fn expected_plan(env: &HashMap<String, String>, state: &Path) -> Plan {
    let settings = Settings::from_lookup(|k| env.get(k).cloned()).unwrap();
    let start = StartCounter::new(state).peek(settings.pod).unwrap();
    Plan::new(&settings, start)
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime, stime: fields 14 and 15 of the line, 12 and 13 after the name
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
}

fn wait_exit(child: &mut Child, within: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < within {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn crashes_on_schedule_and_counts_its_starts() {
    let state = tempfile::tempdir().unwrap();
    // one crash per scenario second on average, played ten times faster
    let mut env = pod_env(
        r#"{"cpu_usage":{"kind":"const","value":0},"memory_usage":{"kind":"const","value":2097152},"crash_rate_per_hour":3600}"#,
    );
    env.insert(settings::TIME_SCALE.into(), "10".into());
    let mut ends = Vec::new();
    for start in 0..3u32 {
        let plan = expected_plan(&env, state.path());
        assert_eq!(plan.start, start);
        let end = plan.end.unwrap();
        assert_eq!(end.kind, EndKind::Crash);
        assert_eq!(
            end.wall,
            Duration::from_secs_f64(end.scenario_ms as f64 / 1000.0 / 10.0)
        );
        let (out, took) = run(&env, state.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "start {start}: {stderr}");
        // it lived its planned time (and not absurdly longer)
        assert!(took >= end.wall, "start {start}: {took:?} < {:?}", end.wall);
        assert!(took < end.wall + Duration::from_secs(5), "start {start}: {took:?}");
        let counter = StartCounter::new(state.path()).read().unwrap();
        assert_eq!(
            counter,
            Some(Counter {
                pod_id: 77,
                starts: start + 1
            })
        );
        ends.push(end.scenario_ms);
    }
    // each start draws afresh
    assert!(ends[0] != ends[1] || ends[1] != ends[2], "{ends:?}");
}

#[test]
fn completes_with_exit_zero_and_plan_counts_nothing() {
    let state = tempfile::tempdir().unwrap();
    let mut env = pod_env(
        r#"{"cpu_usage":{"kind":"const","value":0},"memory_usage":{"kind":"const","value":1048576},"run_seconds":{"kind":"const","value":3}}"#,
    );
    env.insert(settings::TIME_SCALE.into(), "20".into());
    // --plan prints the next start's plan and leaves the count alone
    let out = command(&env, state.path()).arg("--plan").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["start"], 0);
    assert_eq!(plan["end"]["kind"], "complete");
    assert_eq!(plan["end"]["scenario_ms"], 3000);
    assert_eq!(plan["end"]["wall_seconds"], 0.15);
    assert_eq!(StartCounter::new(state.path()).read().unwrap(), None);

    let (out, took) = run(&env, state.path());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took >= Duration::from_millis(150), "{took:?}");
    assert_eq!(
        StartCounter::new(state.path()).read().unwrap().map(|c| c.starts),
        Some(1)
    );
}

#[test]
fn holds_its_memory_burns_its_cpu_and_stops_on_sigterm() {
    let state = tempfile::tempdir().unwrap();
    let want = 24 * MI;
    let env = pod_env(&format!(
        r#"{{"cpu_usage":{{"kind":"const","value":300}},"memory_usage":{{"kind":"const","value":{want}}}}}"#
    ));
    let plan = expected_plan(&env, state.path());
    assert_eq!((plan.hold_bytes, plan.cpu_milli, plan.end), (want, 300, None));
    let mut child = command(&env, state.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // resident memory reaches what the plan holds
    let t = Instant::now();
    let mut rss = 0;
    while t.elapsed() < Duration::from_secs(20) {
        rss = status_kib(pid, "VmRSS:").unwrap_or(0) * 1024;
        if rss >= want {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(rss >= want, "VmRSS {rss} < {want}");
    // and not far more: the program itself is small
    assert!(rss < want + 24 * MI, "VmRSS {rss}");
    // 300m: a fraction of one core (the machine may be busy: loose bounds)
    let (cpu0, t0) = (cpu_seconds(pid), Instant::now());
    std::thread::sleep(Duration::from_millis(1500));
    let share = (cpu_seconds(pid) - cpu0) / t0.elapsed().as_secs_f64();
    assert!((0.05..0.8).contains(&share), "cpu share {share}");
    // still running: no end planned
    assert!(child.try_wait().unwrap().is_none());
    kill(Pid::from_raw(pid as i32), Signal::SIGTERM).unwrap();
    let status = wait_exit(&mut child, Duration::from_secs(3));
    if status.is_none() {
        let _ = child.kill();
    }
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "no prompt clean exit on SIGTERM"
    );
}

#[test]
fn grows_past_its_memory_limit_when_the_model_says_oom() {
    let state = tempfile::tempdir().unwrap();
    let limit = 24 * MI;
    let mut env = pod_env(&format!(
        r#"{{"cpu_usage":{{"kind":"const","value":0}},"memory_usage":{{"kind":"const","value":{}}}}}"#,
        40 * MI
    ));
    env.insert(settings::MEMORY_LIMIT.into(), "24Mi".into());
    env.insert(settings::MODEL.into(), r#"{"oom_delay_mean_seconds": 1}"#.into());
    env.insert(settings::TIME_SCALE.into(), "10".into());
    let plan = expected_plan(&env, state.path());
    assert_eq!(plan.end.map(|e| e.kind), Some(EndKind::OomLimit));
    let grow_to = plan.grow_to_bytes.unwrap();
    assert!(grow_to > limit);
    // no memory cgroup limits this test process: the program grows past the
    // limit, finds itself alive and exits as a SIGKILLed process would
    let (out, _) = run(&env, state.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(137), "{stderr}");
    let held: u64 = stderr
        .lines()
        .find(|l| l.contains("not enforced"))
        .and_then(|l| l.split_whitespace().find_map(|w| w.strip_prefix("held=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no held= in {stderr}"));
    assert!(held >= grow_to && held > limit, "held {held}");
}

#[test]
fn bad_environment_names_the_variable_and_exits_2() {
    let state = tempfile::tempdir().unwrap();
    let mut env = pod_env(r#"{"cpu_usage":{"kind":"const","value":0},"memory_usage":{"kind":"const","value":0}}"#);
    env.insert(settings::SEED.into(), "seven".into());
    let (out, _) = run(&env, state.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("SCHEDLAB_SEED=\"seven\""), "{stderr}");
    env.remove(settings::BEHAVIOUR);
    let (out, _) = run(&env, state.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SCHEDLAB_BEHAVIOUR is not set"));
    // nothing was counted
    assert_eq!(StartCounter::new(state.path()).read().unwrap(), None);
    // a bad flag is a usage error too
    let out = Command::new(BIN).arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unusable_state_folder_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let env = pod_env(r#"{"cpu_usage":{"kind":"const","value":0},"memory_usage":{"kind":"const","value":0}}"#);
    let (out, _) = run(&env, &file);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
}
