//! Target `records`: a run's records.jsonl (and the decision_times.json
//! beside it) through `results::records::read_records`,
//! `for_each_numbered_record`, `results::metrics::from_file` and
//! `results::series::from_file`.
//!
//! Inputs are built from `schedlab_core::Record` values (nodes, workloads, pod
//! lifecycles with restarts, OOM kills, evictions and node faults, node and
//! cluster samples, the End record), in the shape a real run writes them,
//! then mutated as JSON (a field dropped or given an extreme value, a tag
//! changed, time running backwards, lines lost, doubled or moved) and as bytes.

use crate::bytes::havoc;
use crate::generate::{pick, strings};
use crate::oracle::{Checked, check_error};
use crate::{FuzzError, Target};
use base64::Engine;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use results::decision_time::{DECISION_TIMES_FILE, DecisionTimes};
use schedlab_core::record::{ClusterSample, ExitReason, NodeSample, OomCause};
use schedlab_core::{
    Event, EventKind, NodeCondition, NodeId, NodePool, NodeSpec, PodId, PodSlot, Provisioning, QosClass, Record,
    Resources, Span, Time, WorkloadId,
};
use std::path::PathBuf;

/// A records file, and maybe a decision-times file beside it.
#[derive(Debug, Clone)]
pub struct Case {
    pub records: Vec<u8>,
    pub decision_times: Option<Vec<u8>>,
}

/// The `records` target and its folder.
#[derive(Debug)]
pub struct Records {
    dir: tempfile::TempDir,
    /// a decision-times file as the harness writes it
    decision_times: String,
}

impl Records {
    pub fn new() -> Result<Records, FuzzError> {
        let dir = tempfile::tempdir().map_err(|e| FuzzError::io("a temporary folder", e))?;
        let mut d = DecisionTimes::new();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..500 {
            d.record(rng.random_range(1_000..5_000_000));
        }
        let path = dir.path().join(DECISION_TIMES_FILE);
        d.write(&path).map_err(|e| FuzzError::Base(e.to_string()))?;
        let decision_times = std::fs::read_to_string(&path).map_err(|e| FuzzError::io(DECISION_TIMES_FILE, e))?;
        std::fs::remove_file(&path).map_err(|e| FuzzError::io(DECISION_TIMES_FILE, e))?;
        Ok(Records { dir, decision_times })
    }

    fn records_path(&self) -> PathBuf {
        self.dir.path().join("records.jsonl")
    }
}

/// A plausible run: what a backend would write for a few nodes and pods.
pub fn run(rng: &mut impl Rng) -> Vec<Record> {
    let nodes = rng.random_range(1..=5u32);
    let workloads = rng.random_range(1..=3u32);
    let end = Time(rng.random_range(30..=600) * 1000);
    let mut timed: Vec<(Time, Record)> = Vec::new();
    let alloc = Resources {
        cpu_milli: 7850,
        memory_bytes: 31_138_512_896,
    };
    let mut head = Vec::new();
    for n in 0..nodes {
        let spot = rng.random_bool(0.3);
        head.push(Record::Node {
            node: NodeId(n),
            spec: NodeSpec {
                name: format!("{}-{n}", if spot { "spot" } else { "general" }),
                pool: NodePool {
                    name: if spot { "spot" } else { "general" }.into(),
                    machine_type: "n2-standard-8".into(),
                    hourly_price: if spot { 0.0944 } else { 0.3885 },
                    provisioning: if spot {
                        Provisioning::Spot
                    } else {
                        Provisioning::OnDemand
                    },
                },
                capacity: Resources {
                    cpu_milli: 8000,
                    memory_bytes: 34_359_738_368,
                },
                allocatable: alloc,
                max_pods: 110,
                labels: [("tier".to_string(), "general".to_string())].into_iter().collect(),
                taints: Vec::new(),
            },
        });
    }
    for w in 0..workloads {
        head.push(Record::Workload {
            workload: WorkloadId(w),
            name: pick(rng, &["service", "worker", "unstable", "critical", "batch"]).to_string(),
        });
    }
    let event = |t: Time, kind: EventKind| (t, Record::Event(Event { t, kind }));
    let pods = rng.random_range(0..=20u64);
    for p in 0..pods {
        let pod = PodId(p);
        let node = NodeId(rng.random_range(0..nodes));
        let created = Time(rng.random_range(0..end.0));
        let requests = Resources {
            cpu_milli: rng.random_range(0..2000),
            memory_bytes: rng.random_range(0..4u64 << 30),
        };
        timed.push(event(
            created,
            EventKind::PodCreated {
                pod,
                slot: PodSlot {
                    workload: WorkloadId(rng.random_range(0..workloads)),
                    ordinal: p as u32,
                },
                requests,
                memory_limit: rng.random_bool(0.3).then(|| requests.memory_bytes * 2),
                priority: *pick(rng, &[0, 100, 1_000_000]),
                qos: *pick(rng, &[QosClass::Guaranteed, QosClass::Burstable, QosClass::BestEffort]),
                unstable: rng.random_bool(0.3),
            },
        ));
        let mut t = created.0;
        let mut step = |rng: &mut dyn rand::RngCore| {
            t = (t + rng.random_range(0..30_000)).min(end.0);
            Time(t)
        };
        if rng.random_bool(0.2) {
            timed.push(event(
                step(rng),
                EventKind::PodUnschedulable {
                    pod,
                    reason: "0/3 nodes are available".into(),
                },
            ));
            if rng.random_bool(0.5) {
                continue;
            }
        }
        timed.push(event(step(rng), EventKind::PodBound { pod, node }));
        for restart in 0..rng.random_range(1..=3u32) {
            timed.push(event(
                step(rng),
                EventKind::ContainerStarted {
                    pod,
                    node,
                    restart_count: restart,
                    usage: requests,
                },
            ));
            if rng.random_bool(0.5) {
                let reason = *pick(rng, &[ExitReason::Error, ExitReason::OOMKilled, ExitReason::Completed]);
                let oom_cause =
                    (reason == ExitReason::OOMKilled).then(|| *pick(rng, &[OomCause::Limit, OomCause::NodePressure]));
                timed.push(event(
                    step(rng),
                    EventKind::ContainerExited {
                        pod,
                        node,
                        reason,
                        oom_cause,
                    },
                ));
            }
        }
        let last = match rng.random_range(0..6) {
            0 => Some(EventKind::PodSucceeded { pod, node }),
            1 => Some(EventKind::PodFailed { pod, node }),
            2 => Some(EventKind::PodEvicted { pod, node }),
            3 => Some(EventKind::PodDeleted {
                pod,
                node: Some(node),
                cause: *pick(
                    rng,
                    &[
                        schedlab_core::record::DeleteCause::Churn,
                        schedlab_core::record::DeleteCause::Scenario,
                    ],
                ),
            }),
            _ => None,
        };
        if let Some(k) = last {
            timed.push(event(step(rng), k));
        }
    }
    for _ in 0..rng.random_range(0..3) {
        let node = NodeId(rng.random_range(0..nodes));
        let at = Time(rng.random_range(0..end.0));
        let later = Time((at.0 + 60_000).min(end.0));
        let (a, b) = match rng.random_range(0..3) {
            0 => (EventKind::NodeFailed { node }, EventKind::NodeRecovered { node }),
            1 => (EventKind::NodeDegraded { node }, EventKind::NodeRecovered { node }),
            _ => (EventKind::NodeLost { node }, EventKind::NodeReplaced { node }),
        };
        timed.push(event(at, a));
        timed.push(event(later, b));
    }
    let interval = Span(15_000);
    let mut t = Time(0);
    while t <= end {
        for n in 0..nodes {
            timed.push((
                t,
                Record::NodeSample(NodeSample {
                    t,
                    node: NodeId(n),
                    requested: Resources {
                        cpu_milli: 1000,
                        memory_bytes: 1 << 30,
                    },
                    used: Resources {
                        cpu_milli: 800,
                        memory_bytes: 1 << 29,
                    },
                    pods: 2,
                    condition: *pick(
                        rng,
                        &[
                            NodeCondition::Ready,
                            NodeCondition::Ready,
                            NodeCondition::Degraded,
                            NodeCondition::NotReady,
                        ],
                    ),
                }),
            ));
        }
        timed.push((
            t,
            Record::ClusterSample(ClusterSample {
                t,
                allocatable: Resources {
                    cpu_milli: alloc.cpu_milli * u64::from(nodes),
                    memory_bytes: alloc.memory_bytes * u64::from(nodes),
                },
                requested: Resources {
                    cpu_milli: 1000,
                    memory_bytes: 1 << 30,
                },
                used: Resources {
                    cpu_milli: 800,
                    memory_bytes: 1 << 29,
                },
                pending: 0,
                bound: 2,
                nodes_in_use: nodes,
                nodes_ready: nodes,
                hourly_cost: 0.3885 * f64::from(nodes),
            }),
        ));
        t = Time(t.0 + interval.0);
    }
    // events and samples in time order, as backends write them
    timed.sort_by_key(|(t, _)| *t);
    head.extend(timed.into_iter().map(|(_, r)| r));
    head.push(Record::End { t: end });
    head
}

/// A JSON value at an edge some reader checks.
fn extreme(rng: &mut impl Rng) -> serde_json::Value {
    use serde_json::json;
    match rng.random_range(0..16) {
        0 => json!(u64::MAX),
        1 => json!(18_446_744_073_709_551_616.0),
        2 => json!(-1),
        3 => json!(1.5),
        4 => json!(1e308),
        5 => json!(0),
        6 => json!(u32::MAX),
        7 => json!(i64::MIN),
        8 => json!(null),
        9 => json!(true),
        10 => json!([]),
        11 => json!({}),
        12 => json!(5e-324),
        13 => json!(4_294_967_296u64),
        _ => json!(strings(rng)),
    }
}

/// Every leaf of `v` (its path of keys and indices).
fn leaves(v: &serde_json::Value) -> Vec<Vec<serde_json::Value>> {
    let mut out = Vec::new();
    let mut stack = vec![(v, Vec::new())];
    while let Some((v, path)) = stack.pop() {
        match v {
            serde_json::Value::Object(o) => {
                for (k, c) in o {
                    let mut p = path.clone();
                    p.push(serde_json::json!(k));
                    stack.push((c, p));
                }
            }
            serde_json::Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    let mut p = path.clone();
                    p.push(serde_json::json!(i));
                    stack.push((c, p));
                }
            }
            _ => out.push(path),
        }
    }
    out
}

fn at_mut<'a>(v: &'a mut serde_json::Value, path: &[serde_json::Value]) -> Option<&'a mut serde_json::Value> {
    let mut v = v;
    for step in path {
        v = match step {
            serde_json::Value::String(k) => v.get_mut(k.as_str())?,
            serde_json::Value::Number(i) => v.get_mut(i.as_u64()? as usize)?,
            _ => return None,
        };
    }
    Some(v)
}

/// One JSON-level mutation of one record.
fn mutate_record(v: &mut serde_json::Value, rng: &mut impl Rng) {
    const TYPES: &[&str] = &[
        "node",
        "workload",
        "event",
        "node_sample",
        "cluster_sample",
        "end",
        "nope",
        "",
    ];
    const EVENTS: &[&str] = &[
        "pod_created",
        "pod_unschedulable",
        "pod_declined",
        "pod_bound",
        "container_started",
        "container_exited",
        "pod_succeeded",
        "pod_failed",
        "pod_evicted",
        "pod_deleted",
        "pod_nominated",
        "node_failed",
        "node_degraded",
        "node_recovered",
        "node_lost",
        "node_replaced",
        "PodCreated",
    ];
    let Some(obj) = v.as_object_mut() else { return };
    match rng.random_range(0..8) {
        0 if !obj.is_empty() => {
            let k = obj
                .keys()
                .nth(rng.random_range(0..obj.len()))
                .cloned()
                .unwrap_or_default();
            obj.remove(&k);
        }
        1 => {
            obj.insert(strings(rng), extreme(rng));
        }
        2 => {
            obj.insert("type".into(), serde_json::json!(pick(rng, TYPES)));
        }
        3 => {
            obj.insert("event".into(), serde_json::json!(pick(rng, EVENTS)));
        }
        4 if obj.contains_key("t") => {
            // time running backwards, or to the end of time
            let t = *pick(rng, &[0u64, 1, u64::MAX, u64::MAX / 2]);
            obj.insert("t".into(), serde_json::json!(t));
        }
        _ => {
            let paths = leaves(v);
            if !paths.is_empty() {
                let p = pick(rng, &paths).clone();
                let fresh = extreme(rng);
                if let Some(leaf) = at_mut(v, &p) {
                    *leaf = fresh;
                }
            }
        }
    }
}

impl Target for Records {
    type Case = Case;
    const NAME: &'static str = "records";

    fn generate(&mut self, rng: &mut ChaCha8Rng) -> Case {
        let mut lines: Vec<serde_json::Value> = run(rng)
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or_default())
            .collect();
        let n = if rng.random_bool(0.15) {
            0
        } else {
            rng.random_range(1..=4)
        };
        for _ in 0..n {
            let len = lines.len();
            match rng.random_range(0..10) {
                0 if len > 0 => {
                    lines.remove(rng.random_range(0..len));
                }
                1 if len > 0 => {
                    let i = rng.random_range(0..len);
                    let copy = lines[i].clone();
                    lines.insert(i, copy);
                }
                2 if len > 1 => {
                    let (a, b) = (rng.random_range(0..len), rng.random_range(0..len));
                    lines.swap(a, b);
                }
                3 if len > 0 => {
                    // the End record moved up, or gone
                    if let Some(end) = lines.pop()
                        && rng.random_bool(0.5)
                    {
                        let at = rng.random_range(0..=lines.len());
                        lines.insert(at, end);
                    }
                }
                _ if len > 0 => {
                    let i = rng.random_range(0..len);
                    mutate_record(&mut lines[i], rng);
                }
                _ => {}
            }
        }
        let pretty = rng.random_bool(0.02);
        let mut text = String::new();
        for l in &lines {
            let s = if pretty {
                serde_json::to_string_pretty(l)
            } else {
                serde_json::to_string(l)
            };
            text.push_str(&s.unwrap_or_default());
            text.push_str(if rng.random_bool(0.01) { "\r\n\n  \n" } else { "\n" });
        }
        let mut records = text.into_bytes();
        if rng.random_bool(0.3) {
            havoc(&mut records, 4, rng);
        }
        let decision_times = rng.random_bool(0.3).then(|| self.mutated_decision_times(rng));
        Case {
            records,
            decision_times,
        }
    }

    fn exercise(&mut self, case: &Case) -> Checked {
        let path = self.records_path();
        let dt = self.dir.path().join(DECISION_TIMES_FILE);
        let written = std::fs::write(&path, &case.records).and_then(|()| match &case.decision_times {
            Some(d) => std::fs::write(&dt, d),
            None => match std::fs::remove_file(&dt) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        });
        if let Err(e) = written {
            return Checked::Violation(format!("the fuzzer could not write its files: {e}"));
        }
        let dir = self.dir.path().display().to_string();
        let names = [dir.as_str()];
        let check = |msg: String| check_error(&msg, &names, &[]);
        let all = match results::records::read_records(&path) {
            Ok(all) => Some(all),
            Err(e) => {
                if let Some(p) = check(e.to_string()) {
                    return Checked::Violation(p);
                }
                None
            }
        };
        let mut count = 0u64;
        let mut last_line = 0;
        let mut ordered = true;
        let numbered = results::records::for_each_numbered_record(&path, |line, _| {
            count += 1;
            ordered &= line > last_line;
            last_line = line;
        });
        if !ordered {
            return Checked::Violation("line numbers did not increase".into());
        }
        match (&all, &numbered) {
            (Some(all), Ok(())) if all.len() as u64 != count => {
                return Checked::Violation(format!(
                    "read_records read {} records, for_each_numbered_record {count}",
                    all.len()
                ));
            }
            (Some(_), Err(_)) | (None, Ok(())) => {
                return Checked::Violation("read_records and for_each_numbered_record disagree on the file".into());
            }
            _ => {}
        }
        let metrics = results::metrics::from_file(&path);
        match &metrics {
            Ok(m) => {
                for d in results::definitions::METRICS
                    .iter()
                    .chain(results::definitions::CORRELATIONS)
                {
                    let _ = m.value(d.key);
                }
                let mut rng = ChaCha8Rng::seed_from_u64(7);
                let _ = m.mem_failure_correlation(20, &mut rng);
                let _ = m.mem_failure_partial_correlation(20, &mut rng);
                let _ = m.template_correlations(10, |w| ChaCha8Rng::seed_from_u64(u64::from(w.0)));
                let _ = m.sched_latency_ms.decode();
            }
            Err(e) => {
                if let Some(p) = check(e.to_string()) {
                    return Checked::Violation(p);
                }
            }
        }
        if all.is_none() && metrics.is_ok() {
            return Checked::Violation("metrics loaded from a records file that does not read".into());
        }
        match results::series::from_file(&path) {
            Ok(s) => {
                // the bucket width the restarts plot uses: about 40 over the run, however long
                let _ = s.restarts_per_bucket(Span((s.end().0 / 40).max(1)));
                let _ = s.sched_latencies_s();
                let _ = s.end();
            }
            Err(e) => {
                if let Some(p) = check(e.to_string()) {
                    return Checked::Violation(p);
                }
            }
        }
        if metrics.is_ok() {
            Checked::Accepted
        } else {
            Checked::Rejected
        }
    }

    fn dump(case: &Case) -> Vec<u8> {
        let mut out = case.records.clone();
        if let Some(d) = &case.decision_times {
            out.extend_from_slice(b"\n# decision_times.json beside it:\n");
            out.extend_from_slice(d);
        }
        out
    }

    fn extension() -> &'static str {
        "jsonl"
    }
}

impl Records {
    /// The harness's decision-times file with a field changed, or its
    /// histogram's bytes mutated under a valid base64 coat, or both.
    fn mutated_decision_times(&self, rng: &mut ChaCha8Rng) -> Vec<u8> {
        let mut v: serde_json::Value = serde_json::from_str(&self.decision_times).unwrap_or_default();
        if rng.random_bool(0.6)
            && let Some(h) = v.get("histogram").and_then(|h| h.as_str())
        {
            let b64 = base64::engine::general_purpose::STANDARD;
            let mut bytes = b64.decode(h).unwrap_or_default();
            havoc(&mut bytes, 3, rng);
            v["histogram"] = serde_json::json!(b64.encode(bytes));
        }
        if rng.random_bool(0.4) {
            let key = *pick(
                rng,
                &[
                    "format",
                    "unit",
                    "decisions",
                    "mean_ns",
                    "p50_ns",
                    "charged",
                    "histogram",
                ],
            );
            v[key] = extreme(rng);
        }
        let mut bytes = serde_json::to_vec_pretty(&v).unwrap_or_default();
        if rng.random_bool(0.1) {
            havoc(&mut bytes, 2, rng);
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::input_rng;

    #[test]
    fn generated_runs_are_consistent_records() {
        let mut target = Records::new().unwrap();
        let mut accepted = 0;
        for i in 0..50 {
            let records = run(&mut input_rng("records-test", 1, i));
            let case = Case {
                records: records
                    .iter()
                    .map(|r| serde_json::to_string(r).unwrap() + "\n")
                    .collect::<String>()
                    .into_bytes(),
                decision_times: None,
            };
            let checked = target.exercise(&case);
            assert_ne!(checked, Checked::Violation(String::new()));
            accepted += usize::from(checked == Checked::Accepted);
        }
        // most unmutated runs must get past the parsers to the metrics
        assert!(accepted > 25, "{accepted}");
    }

    #[test]
    fn mutations_change_the_file() {
        let mut target = Records::new().unwrap();
        let a = target.generate(&mut input_rng("records", 1, 0));
        let again = target.generate(&mut input_rng("records", 1, 0));
        assert_eq!(a.records, again.records);
        let changed = (0..50)
            .filter(|&i| {
                let mut rng = input_rng("records", 1, i);
                let case = target.generate(&mut rng);
                let plain: Vec<u8> = run(&mut input_rng("records", 1, i))
                    .iter()
                    .map(|r| serde_json::to_string(r).unwrap() + "\n")
                    .collect::<String>()
                    .into_bytes();
                case.records != plain
            })
            .count();
        assert!(changed > 30, "{changed}");
    }
}
