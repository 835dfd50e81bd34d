//! `replay` phases: a cluster trace's rows as pods, grouped into workloads.

use super::check_object_name;
use super::dist::{dist, scaled};
use super::templates::DEFAULT_SCHEDULER;
use crate::error::ScenarioError;
use crate::model::{Pool, QosClass, Replay, ReplayPod, Template};
use crate::raw::RawReplay;
use crate::trace::{Files, Trace, TraceError};
use crate::value::{Resolver, Unit};
use schedlab_core::{Behaviour, Dist, PodSpec, Resources, RestartPolicy, TaintEffect};
use std::collections::{BTreeMap, HashMap};

pub(crate) const FORMAT_OPENB: &str = "openb-pod-list";
const MI: u64 = 1 << 20;
/// More than this many workloads (qos class × request shape) from one
/// scenario's traces would make per-template metrics unreadable; a trace
/// with that many shapes wants bucketing first.
pub(crate) const MAX_TRACE_WORKLOADS: usize = 1000;
/// Beyond this, a speedup squeezes a day into under a second: surely a typo.
const MAX_SPEEDUP: f64 = 1e6;

/// The classes the openb trace uses, and what they become unless the phase
/// says otherwise: latency-sensitive and guaranteed tasks are protected
/// (high priority, limits = requests), Burstable in between, best-effort last.
pub(crate) fn default_classes() -> BTreeMap<String, QosClass> {
    [
        ("LS", 1000, true),
        ("Guaranteed", 1000, true),
        ("Burstable", 100, false),
        ("BE", 0, false),
    ]
    .into_iter()
    .map(|(name, priority, guaranteed)| (name.to_string(), QosClass { priority, guaranteed }))
    .collect()
}

pub(crate) fn replay(
    r: &Resolver<'_>,
    files: &Files,
    raw: &RawReplay,
    path: &str,
    pools: &[Pool],
    templates: &mut Vec<Template>,
) -> Result<Replay, ScenarioError> {
    let field = |f: &str| format!("{path}.{f}");
    let format = r.text(&raw.format, &field("format"))?;
    if format != FORMAT_OPENB {
        return Err(r.error(
            &field("format"),
            &raw.format,
            format,
            format!("unknown trace format; the known one is {FORMAT_OPENB}"),
        ));
    }
    let mut classes = default_classes();
    for (name, c) in &raw.qos {
        let cp = field(&format!("qos.{name}"));
        let mut class = classes.get(name).copied().unwrap_or(QosClass {
            priority: 0,
            guaranteed: false,
        });
        if let Some(v) = &c.priority {
            let p = r.number_where(
                v,
                &format!("{cp}.priority"),
                |x| x.fract() == 0.0 && x >= f64::from(i32::MIN) && x <= f64::from(i32::MAX),
                "expected a 32-bit whole number",
            )?;
            class.priority = p as i32;
        }
        if let Some(v) = &c.limits {
            class.guaranteed = r.choice(v, &format!("{cp}.limits"), &[("requests", true), ("none", false)])?;
        }
        classes.insert(name.clone(), class);
    }
    let ratio = |d: &Option<crate::raw::RawDist>, f: &str| -> Result<Dist, ScenarioError> {
        d.as_ref()
            .map(|d| dist(r, d, &field(&format!("usage_ratio.{f}")), Unit::Plain))
            .transpose()
            .map(|d| d.unwrap_or(Dist::Const { value: 1.0 }))
    };
    let usage_ratio = (
        ratio(&raw.usage_ratio.cpu, "cpu")?,
        ratio(&raw.usage_ratio.memory, "memory")?,
    );
    let gpu_rows = match &raw.gpu_rows {
        Some(v) => r.choice(v, &field("gpu_rows"), &[("keep", "keep"), ("skip", "skip")])?,
        None => "keep",
    };

    let mut pods = match (&raw.trace, &raw.pods) {
        (Some(file), None) => {
            let name = r.text(file, &field("trace"))?;
            let fail = |source: TraceError| ScenarioError::Trace {
                origin: r.origin.to_string(),
                path: field("trace"),
                file: name.clone(),
                source: Box::new(source),
            };
            let trace = files.trace(&name).map_err(fail)?;
            let speedup = match &raw.speedup {
                Some(v) => r.number_where(
                    v,
                    &field("speedup"),
                    |x| x > 0.0 && x <= MAX_SPEEDUP,
                    "expected a factor above 0 and at most 1000000",
                )?,
                None => 1.0,
            };
            let offset = raw
                .offset
                .as_ref()
                .map(|v| r.duration(v, &field("offset")))
                .transpose()?
                .unwrap_or_default();
            let limit = raw.limit.as_ref().map(|v| r.count(v, &field("limit"))).transpose()?;
            rows_to_pods(
                &trace,
                &classes,
                gpu_rows == "keep",
                speedup,
                offset.as_secs_f64(),
                limit,
            )
            .map_err(fail)?
        }
        (None, Some(rows)) => {
            for (given, f) in [
                (raw.speedup.is_some(), "speedup"),
                (raw.offset.is_some(), "offset"),
                (raw.limit.is_some(), "limit"),
            ] {
                if given {
                    return Err(ScenarioError::invalid(
                        r.origin,
                        field(f),
                        None,
                        "applies to a trace file only; inline pods are already in scenario time",
                        raw.format.loc,
                    ));
                }
            }
            let mut previous = 0;
            let mut out = Vec::with_capacity(rows.len());
            for (i, (cpu_milli, memory_mib, qos, at, until)) in rows.iter().enumerate() {
                let bad = |reason: &str| {
                    ScenarioError::invalid(
                        r.origin,
                        format!("{}[{i}]", field("pods")),
                        None,
                        reason,
                        raw.format.loc,
                    )
                };
                if *at < previous {
                    return Err(bad("earlier than the pod before it; pods must be sorted by time"));
                }
                if until.is_some_and(|u| u < *at) {
                    return Err(bad("deleted before it is created"));
                }
                if !classes.contains_key(qos) {
                    return Err(bad("a qos class the phase does not map"));
                }
                previous = *at;
                out.push(ReplayPod {
                    cpu_milli: *cpu_milli,
                    memory_mib: *memory_mib,
                    qos: qos.clone(),
                    template: 0,
                    at: schedlab_core::Span(*at),
                    until: until.map(schedlab_core::Span),
                });
            }
            out
        }
        _ => {
            return Err(ScenarioError::invalid(
                r.origin,
                path,
                None,
                "give exactly one of trace (a file) and pods (inline, as the resolved form writes them)",
                raw.format.loc,
            ));
        }
    };

    // the templates by name, and the template each request shape became: a
    // trace has far fewer shapes than rows, and a scenario may replay many
    let mut by_name: HashMap<String, usize> = templates.iter().enumerate().map(|(k, t)| (t.name.clone(), k)).collect();
    let mut trace_workloads = templates.iter().filter(|t| t.from_trace).count();
    // a shape by its class's place among the phase's classes: no string per pod
    let class_index: HashMap<&str, usize> = classes.keys().enumerate().map(|(k, q)| (q.as_str(), k)).collect();
    let mut by_shape: HashMap<(usize, u64, u64), usize> = HashMap::new();
    for (i, pod) in pods.iter_mut().enumerate() {
        let shape = (class_index[pod.qos.as_str()], pod.cpu_milli, pod.memory_mib);
        if let Some(&k) = by_shape.get(&shape) {
            pod.template = k;
            continue;
        }
        let class = classes[&pod.qos];
        let template = trace_template(pod, class, &usage_ratio);
        pod.template = match by_name.get(&template.name).copied() {
            Some(k) if templates[k].from_trace && templates[k].spec == template.spec => k,
            Some(_) => {
                return Err(ScenarioError::invalid(
                    r.origin,
                    path,
                    Some(template.name),
                    "a template of this name exists already (another template, or a replay with other qos or usage_ratio); the trace's workloads are named <qos>-<cpu>m-<memory>mi",
                    raw.format.loc,
                ));
            }
            None => {
                check_object_name(&template.name)
                    .map_err(|e| ScenarioError::invalid(r.origin, path, None, e, raw.format.loc))?;
                if !fits_somewhere(&template.spec.requests, pools) {
                    return Err(ScenarioError::invalid(
                        r.origin,
                        format!("{path}.pods[{i}]"),
                        Some(template.name),
                        "its requests fit on no node without taints that it would need to tolerate; size the pools for the trace",
                        raw.format.loc,
                    ));
                }
                if trace_workloads >= MAX_TRACE_WORKLOADS {
                    return Err(ScenarioError::invalid(
                        r.origin,
                        path,
                        None,
                        format!(
                            "the traces would make more than {MAX_TRACE_WORKLOADS} workloads (qos class × request shape)"
                        ),
                        raw.format.loc,
                    ));
                }
                trace_workloads += 1;
                by_name.insert(template.name.clone(), templates.len());
                templates.push(template);
                templates.len() - 1
            }
        };
        by_shape.insert(shape, pod.template);
    }
    Ok(Replay {
        format,
        classes,
        usage_ratio,
        gpu_rows: gpu_rows.to_string(),
        pods,
    })
}

/// The kept rows as pods: GPU rows skipped unless kept, the first `offset`
/// seconds after the first row skipped, at most `limit`, times shifted so
/// the window's start is the phase's start and divided by `speedup`.
fn rows_to_pods(
    trace: &Trace,
    classes: &BTreeMap<String, QosClass>,
    keep_gpu: bool,
    speedup: f64,
    offset_secs: f64,
    limit: Option<u64>,
) -> Result<Vec<ReplayPod>, TraceError> {
    let Some(first) = trace.rows.first() else {
        return Ok(Vec::new());
    };
    let start = first.creation_time + offset_secs;
    let ms = |t: f64| schedlab_core::Span(((t - start) * 1000.0 / speedup).round() as u64);
    let mut pods = Vec::new();
    for row in &trace.rows {
        if limit.is_some_and(|l| pods.len() as u64 >= l) {
            break;
        }
        if row.creation_time < start || (!keep_gpu && row.wants_gpu()) {
            continue;
        }
        if !classes.contains_key(&row.qos) {
            return Err(TraceError::Field {
                line: row.line,
                column: trace.column("qos"),
                value: row.qos.clone(),
                reason: format!(
                    "a qos class the phase does not map (mapped: {}); add it under the phase's qos",
                    classes.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        pods.push(ReplayPod {
            cpu_milli: row.cpu_milli,
            memory_mib: row.memory_mib,
            qos: row.qos.clone(),
            template: 0,
            at: ms(row.creation_time),
            until: row.deletion_time.map(ms),
        });
    }
    Ok(pods)
}

/// The workload of a pod: one per qos class and request shape, since every
/// pod of a workload shares one spec and a row's requests are kept exactly.
fn trace_template(pod: &ReplayPod, class: QosClass, ratio: &(Dist, Dist)) -> Template {
    let slug: String = pod
        .qos
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let requests = Resources::new(pod.cpu_milli, pod.memory_mib.saturating_mul(MI));
    Template {
        name: format!("{}-{}m-{}mi", slug.trim_matches('-'), pod.cpu_milli, pod.memory_mib),
        spec: PodSpec {
            requests,
            limits: class.guaranteed.then_some(requests),
            priority: class.priority,
            scheduler_name: DEFAULT_SCHEDULER.to_string(),
            restart_policy: RestartPolicy::Always,
            tolerations: Vec::new(),
            behaviour: Behaviour {
                cpu_usage: scaled(&ratio.0, requests.cpu_milli as f64),
                memory_usage: scaled(&ratio.1, requests.memory_bytes as f64),
                run_seconds: None,
                memory_growth_per_hour: None,
                crash_rate_per_hour: 0.0,
                crash_rate_growth_per_hour: 0.0,
                unstable: false,
            },
        },
        // the owner replaces an evicted pod, as the trace's controllers did;
        // the trace's deletion still ends the slot for good
        recreate: true,
        from_trace: true,
        sizing: Default::default(),
    }
}

/// Whether some pool with nodes could hold `requests`: trace pods tolerate
/// no taints.
fn fits_somewhere(requests: &Resources, pools: &[Pool]) -> bool {
    pools.iter().any(|p| {
        p.count > 0
            && requests.fits_in(&p.allocatable)
            && !p
                .taints
                .iter()
                .any(|t| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute))
    })
}
