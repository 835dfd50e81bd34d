//! The cluster model's types as core/v1 objects, and back.
//!
//! A run's objects say everything the node emulator and the bind loop need:
//! a pod carries its identity in labels and its behaviour and the run's seed
//! in annotations; an emulated node carries its pool and price. The reverse
//! direction also reads real nodes and foreign pods, with defaults for what
//! they do not say.

use super::error::KubeError;
use super::labels;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::dist::Dist;
use schedlab_core::node::{NodeCondition, NodeId, NodePool, NodeSpec, Provisioning, Taint, TaintEffect};
use schedlab_core::pod::{
    Behaviour, PodId, PodSlot, PodSpec, RestartPolicy, Toleration, TolerationOperator, WorkloadId,
};
use schedlab_core::resources::{Resources, format_cpu_milli, parse_cpu_milli, parse_memory_bytes};
use schedlab_core::timeline::Workload;
use std::collections::BTreeMap;

/// The image of an emulated pod's container. Nothing pulls it on an
/// emulated node; real nodes run the workload image instead.
pub const EMULATED_IMAGE: &str = "registry.k8s.io/pause:3.9";
/// The container name of every schedlab pod (one container per pod).
pub const CONTAINER: &str = "main";

/// Who a pod of a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PodIdentity {
    pub pod: PodId,
    pub slot: PodSlot,
    /// pods the owner created for the slot before this one
    pub incarnation: u32,
}

/// A DNS-1123 label made of `parts`: lower-case alphanumerics and '-', at
/// most 63 characters (the tail of a long name is kept, since indices end it).
pub fn dns_label(parts: &[&str]) -> String {
    let joined = parts.join("-").to_ascii_lowercase();
    let mut out: String = joined
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    let trimmed = out.trim_matches('-');
    let start = trimmed.len().saturating_sub(63);
    let tail = trimmed[start..].trim_start_matches('-');
    if tail.is_empty() {
        "x".to_string()
    } else {
        tail.to_string()
    }
}

/// The name of node `spec` in run `run`.
pub fn node_name(run: &str, spec: &NodeSpec) -> String {
    dns_label(&[run, &spec.name])
}

/// The name of a pod.
pub fn pod_name(workload: &Workload, ident: &PodIdentity) -> String {
    dns_label(&[
        &workload.name,
        &ident.slot.ordinal.to_string(),
        &ident.incarnation.to_string(),
    ])
}

/// The PriorityClass of pods with `priority` in run `run` (created by the run;
/// the Priority admission plugin refuses a bare `spec.priority`).
pub fn priority_class_name(run: &str, priority: i32) -> String {
    let value = if priority < 0 {
        format!("m{}", priority.unsigned_abs())
    } else {
        priority.to_string()
    };
    dns_label(&[run, "p", &value])
}

fn quantity_cpu(milli: u64) -> Quantity {
    Quantity(format_cpu_milli(milli))
}
fn quantity_bytes(bytes: u64) -> Quantity {
    Quantity(bytes.to_string())
}

fn resource_map(r: Resources, pods: Option<u32>) -> BTreeMap<String, Quantity> {
    let mut m = BTreeMap::new();
    m.insert("cpu".to_string(), quantity_cpu(r.cpu_milli));
    m.insert("memory".to_string(), quantity_bytes(r.memory_bytes));
    if let Some(p) = pods {
        m.insert("pods".to_string(), Quantity(p.to_string()));
    }
    m
}

fn taint_effect_str(e: TaintEffect) -> &'static str {
    match e {
        TaintEffect::NoSchedule => "NoSchedule",
        TaintEffect::PreferNoSchedule => "PreferNoSchedule",
        TaintEffect::NoExecute => "NoExecute",
    }
}

fn taint_effect_of(s: &str) -> Option<TaintEffect> {
    match s {
        "NoSchedule" => Some(TaintEffect::NoSchedule),
        "PreferNoSchedule" => Some(TaintEffect::PreferNoSchedule),
        "NoExecute" => Some(TaintEffect::NoExecute),
        _ => None,
    }
}

/// A core/v1 condition of `type_` with `status`, stamped now.
pub fn node_condition(type_: &str, status: &str, reason: &str, now: jiff::Timestamp) -> core::NodeCondition {
    let t = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now);
    core::NodeCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: Some(reason.to_string()),
        message: None,
        last_heartbeat_time: Some(t.clone()),
        last_transition_time: Some(t),
    }
}

/// The Node object of `spec` in run `run`, Ready, with its capacity and
/// allocatable in its status (a node's status may be set on creation).
pub fn node_object(run: &str, id: NodeId, spec: &NodeSpec, emulated: bool) -> core::Node {
    let mut node_labels = spec.labels.clone();
    node_labels.insert(labels::RUN.to_string(), run.to_string());
    node_labels.insert(labels::NODE_ID.to_string(), id.0.to_string());
    node_labels.insert(labels::POOL.to_string(), dns_label(&[&spec.pool.name]));
    node_labels.insert(labels::MACHINE_TYPE.to_string(), dns_label(&[&spec.pool.machine_type]));
    node_labels.insert(
        labels::PROVISIONING.to_string(),
        match spec.pool.provisioning {
            Provisioning::OnDemand => "on-demand",
            Provisioning::Spot => "spot",
        }
        .to_string(),
    );
    let name = node_name(run, spec);
    node_labels.insert("kubernetes.io/hostname".to_string(), name.clone());
    if emulated {
        node_labels.insert(labels::EMULATED.to_string(), "true".to_string());
    }
    let mut annotations = BTreeMap::new();
    annotations.insert(labels::HOURLY_PRICE.to_string(), spec.pool.hourly_price.to_string());
    let taints: Vec<core::Taint> = spec
        .taints
        .iter()
        .map(|t| core::Taint {
            key: t.key.clone(),
            value: t.value.clone(),
            effect: taint_effect_str(t.effect).to_string(),
            time_added: None,
        })
        .collect();
    let now = jiff::Timestamp::now();
    core::Node {
        metadata: ObjectMeta {
            name: Some(name),
            labels: Some(node_labels),
            annotations: Some(annotations),
            ..Default::default()
        },
        spec: Some(core::NodeSpec {
            taints: (!taints.is_empty()).then_some(taints),
            ..Default::default()
        }),
        status: Some(core::NodeStatus {
            capacity: Some(resource_map(spec.capacity, Some(spec.max_pods))),
            allocatable: Some(resource_map(spec.allocatable, Some(spec.max_pods))),
            conditions: Some(vec![
                node_condition("Ready", "True", "KubeletReady", now),
                node_condition(labels::DEGRADED_CONDITION, "False", "Healthy", now),
            ]),
            ..Default::default()
        }),
    }
}

fn object_error(kind: &'static str, name: &str, field: &'static str, message: impl Into<String>) -> KubeError {
    KubeError::Object {
        kind,
        name: name.to_string(),
        field,
        message: message.into(),
    }
}

fn parse_resources(
    kind: &'static str,
    name: &str,
    field: &'static str,
    map: Option<&BTreeMap<String, Quantity>>,
) -> Result<(Resources, Option<u32>), KubeError> {
    let mut r = Resources::ZERO;
    let mut pods = None;
    if let Some(map) = map {
        if let Some(q) = map.get("cpu") {
            r.cpu_milli = parse_cpu_milli(&q.0).map_err(|e| object_error(kind, name, field, format!("cpu: {e}")))?;
        }
        if let Some(q) = map.get("memory") {
            r.memory_bytes =
                parse_memory_bytes(&q.0).map_err(|e| object_error(kind, name, field, format!("memory: {e}")))?;
        }
        if let Some(q) = map.get("pods") {
            pods = Some(
                q.0.parse::<u32>()
                    .map_err(|_| object_error(kind, name, field, format!("pods: {:?} is not a count", q.0)))?,
            );
        }
    }
    Ok((r, pods))
}

/// The node's [`NodeId`] label, if it is a node of a run.
pub fn node_id_of(node: &core::Node) -> Option<NodeId> {
    node.metadata
        .labels
        .as_ref()?
        .get(labels::NODE_ID)?
        .parse()
        .ok()
        .map(NodeId)
}

/// The [`NodeSpec`] of any node: a run's emulated node gives back what made
/// it; a real node gives its allocatable, labels and taints, with its pool
/// and price from the labels and annotation when present (else "default", 0).
pub fn node_spec_of(node: &core::Node) -> Result<NodeSpec, KubeError> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let status = node.status.as_ref();
    let (capacity, cap_pods) = parse_resources(
        "Node",
        &name,
        "status.capacity",
        status.and_then(|s| s.capacity.as_ref()),
    )?;
    let (allocatable, alloc_pods) = parse_resources(
        "Node",
        &name,
        "status.allocatable",
        status.and_then(|s| s.allocatable.as_ref()),
    )?;
    let all_labels = node.metadata.labels.clone().unwrap_or_default();
    let price = match node
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(labels::HOURLY_PRICE))
    {
        Some(text) => text
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && *p >= 0.0)
            .ok_or_else(|| {
                object_error(
                    "Node",
                    &name,
                    "metadata.annotations",
                    format!("{}: {text:?} is not a price", labels::HOURLY_PRICE),
                )
            })?,
        None => 0.0,
    };
    let provisioning = match all_labels.get(labels::PROVISIONING).map(String::as_str) {
        Some("spot") => Provisioning::Spot,
        _ if all_labels.get("cloud.google.com/gke-spot").map(String::as_str) == Some("true") => Provisioning::Spot,
        _ => Provisioning::OnDemand,
    };
    let pool = NodePool {
        name: all_labels
            .get(labels::POOL)
            .or_else(|| all_labels.get("cloud.google.com/gke-nodepool"))
            .cloned()
            .unwrap_or_else(|| "default".to_string()),
        machine_type: all_labels.get(labels::MACHINE_TYPE).cloned().unwrap_or_default(),
        hourly_price: price,
        provisioning,
    };
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .map(|ts| {
            ts.iter()
                .filter_map(|t| {
                    Some(Taint {
                        key: t.key.clone(),
                        value: t.value.clone(),
                        effect: taint_effect_of(&t.effect)?,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let user_labels = all_labels
        .into_iter()
        .filter(|(k, _)| !matches!(k.as_str(), labels::RUN | labels::NODE_ID | labels::EMULATED))
        .collect();
    Ok(NodeSpec {
        name,
        pool,
        capacity,
        allocatable,
        max_pods: alloc_pods.or(cap_pods).unwrap_or(110),
        labels: user_labels,
        taints,
    })
}

fn condition_status<'a>(node: &'a core::Node, type_: &str) -> Option<&'a str> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| c.status.as_str())
}

/// The node's condition in the cluster model: NotReady unless its Ready
/// condition is True; Degraded when also [`labels::DEGRADED_CONDITION`] is True.
pub fn node_condition_of(node: &core::Node) -> NodeCondition {
    match condition_status(node, "Ready") {
        Some("True") if condition_status(node, labels::DEGRADED_CONDITION) == Some("True") => NodeCondition::Degraded,
        Some("True") => NodeCondition::Ready,
        _ => NodeCondition::NotReady,
    }
}

/// Whether the node is cordoned.
pub fn node_unschedulable(node: &core::Node) -> bool {
    node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false)
}

fn toleration_object(t: &Toleration) -> core::Toleration {
    core::Toleration {
        key: (!t.key.is_empty()).then(|| t.key.clone()),
        operator: Some(
            match t.operator {
                TolerationOperator::Equal => "Equal",
                TolerationOperator::Exists => "Exists",
            }
            .to_string(),
        ),
        value: t.value.clone(),
        effect: t.effect.map(|e| taint_effect_str(e).to_string()),
        toleration_seconds: t.toleration_seconds.map(|s| s as i64),
    }
}

fn toleration_of(t: &core::Toleration) -> Toleration {
    Toleration {
        key: t.key.clone().unwrap_or_default(),
        operator: match t.operator.as_deref() {
            Some("Exists") => TolerationOperator::Exists,
            _ => TolerationOperator::Equal,
        },
        value: t.value.clone(),
        effect: t.effect.as_deref().and_then(taint_effect_of),
        toleration_seconds: t.toleration_seconds.and_then(|s| u64::try_from(s).ok()),
    }
}

/// The Pod object of `ident` (a pod of `workload`) in run `run`: one
/// container with the workload's requests and limits, its scheduler, restart
/// policy, tolerations and priority class, its identity in labels and its
/// behaviour and the run's seed in annotations.
pub fn pod_object(run: &str, namespace: &str, ident: &PodIdentity, workload: &Workload, seed: u64) -> core::Pod {
    let spec = workload.spec_of(ident.slot.ordinal);
    let mut pod_labels = BTreeMap::new();
    pod_labels.insert(labels::RUN.to_string(), run.to_string());
    pod_labels.insert(labels::POD_ID.to_string(), ident.pod.0.to_string());
    pod_labels.insert(labels::WORKLOAD.to_string(), ident.slot.workload.0.to_string());
    pod_labels.insert(labels::ORDINAL.to_string(), ident.slot.ordinal.to_string());
    pod_labels.insert(labels::INCARNATION.to_string(), ident.incarnation.to_string());
    if spec.behaviour.unstable {
        pod_labels.insert(labels::UNSTABLE.to_string(), "true".to_string());
    }
    let mut annotations = BTreeMap::new();
    annotations.insert(
        labels::BEHAVIOUR.to_string(),
        serde_json::to_string(&spec.behaviour).unwrap_or_default(),
    );
    annotations.insert(labels::SEED.to_string(), seed.to_string());
    let limits = spec.limits.map(|l| {
        let mut m = BTreeMap::new();
        if l.cpu_milli > 0 {
            m.insert("cpu".to_string(), quantity_cpu(l.cpu_milli));
        }
        if l.memory_bytes > 0 {
            m.insert("memory".to_string(), quantity_bytes(l.memory_bytes));
        }
        m
    });
    let requests = {
        let mut m = BTreeMap::new();
        if spec.requests.cpu_milli > 0 {
            m.insert("cpu".to_string(), quantity_cpu(spec.requests.cpu_milli));
        }
        if spec.requests.memory_bytes > 0 {
            m.insert("memory".to_string(), quantity_bytes(spec.requests.memory_bytes));
        }
        m
    };
    let tolerations: Vec<core::Toleration> = spec.tolerations.iter().map(toleration_object).collect();
    core::Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(workload, ident)),
            namespace: Some(namespace.to_string()),
            labels: Some(pod_labels),
            annotations: Some(annotations),
            ..Default::default()
        },
        spec: Some(core::PodSpec {
            containers: vec![core::Container {
                name: CONTAINER.to_string(),
                image: Some(EMULATED_IMAGE.to_string()),
                resources: Some(core::ResourceRequirements {
                    requests: (!requests.is_empty()).then_some(requests),
                    limits: limits.filter(|m| !m.is_empty()),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            scheduler_name: Some(spec.scheduler_name.clone()),
            restart_policy: Some(
                match spec.restart_policy {
                    RestartPolicy::Always => "Always",
                    RestartPolicy::OnFailure => "OnFailure",
                    RestartPolicy::Never => "Never",
                }
                .to_string(),
            ),
            priority_class_name: (spec.priority != 0).then(|| priority_class_name(run, spec.priority)),
            tolerations: (!tolerations.is_empty()).then_some(tolerations),
            automount_service_account_token: Some(false),
            enable_service_links: Some(false),
            ..Default::default()
        }),
        status: None,
    }
}

/// The workload program in the workload image (`deploy/Dockerfile`).
pub const WORKLOAD_COMMAND: &str = "/usr/local/bin/schedlab-workload";
/// Where the workload program keeps what outlives its container's restarts
/// (its start count): an emptyDir, which lives as long as the pod.
pub const WORKLOAD_STATE_DIR: &str = "/var/run/schedlab";
/// The emptyDir volume mounted at [`WORKLOAD_STATE_DIR`].
pub const WORKLOAD_STATE_VOLUME: &str = "schedlab-state";
/// The user and group the workload runs as (distroless' `nonroot`).
pub const WORKLOAD_UID: i64 = 65532;

/// Makes `pod` (a [`pod_object`]) run the workload image on a real kubelet:
/// the workload program reads the pod's behaviour, seed and identity from
/// its own labels and annotations through the Downward API, its limits and
/// the run's time scale and model tunables from literal values, consumes the
/// cpu and memory the behaviour draws and ends as the model says, so the
/// kubelet records real restarts and real OOM kills. It keeps its start
/// count in an emptyDir and runs as non-root on a read-only root filesystem.
pub fn use_workload_image(pod: &mut core::Pod, image: &str, time_scale: f64, model: &ModelConfig) {
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    let field = |path: String| core::EnvVar {
        value_from: Some(core::EnvVarSource {
            field_ref: Some(core::ObjectFieldSelector {
                api_version: Some("v1".to_string()),
                field_path: path,
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let from_annotation = |name: &str, key: &str| core::EnvVar {
        name: name.to_string(),
        ..field(format!("metadata.annotations['{key}']"))
    };
    let from_label = |name: &str, key: &str| core::EnvVar {
        name: name.to_string(),
        ..field(format!("metadata.labels['{key}']"))
    };
    let literal = |name: &str, value: String| core::EnvVar {
        name: name.to_string(),
        value: Some(value),
        value_from: None,
    };
    for container in &mut spec.containers {
        let limits = container.resources.as_ref().and_then(|r| r.limits.as_ref());
        let limit = |resource: &str| limits.and_then(|l| l.get(resource)).map(|q| q.0.clone());
        let mut env = vec![
            from_annotation("SCHEDLAB_BEHAVIOUR", labels::BEHAVIOUR),
            from_annotation("SCHEDLAB_SEED", labels::SEED),
            from_label("SCHEDLAB_POD_ID", labels::POD_ID),
            from_label("SCHEDLAB_WORKLOAD", labels::WORKLOAD),
            from_label("SCHEDLAB_ORDINAL", labels::ORDINAL),
            from_label("SCHEDLAB_INCARNATION", labels::INCARNATION),
        ];
        // literal, not resourceFieldRef: that reports the node's allocatable
        // for a container without a limit, which the model would take for one
        if let Some(cpu) = limit("cpu") {
            env.push(literal("SCHEDLAB_CPU_LIMIT", cpu));
        }
        if let Some(memory) = limit("memory") {
            env.push(literal("SCHEDLAB_MEMORY_LIMIT", memory));
        }
        env.push(literal("SCHEDLAB_TIME_SCALE", time_scale.to_string()));
        env.push(literal(
            "SCHEDLAB_MODEL",
            serde_json::to_string(model).unwrap_or_default(),
        ));
        container.image = Some(image.to_string());
        container.command = Some(vec![WORKLOAD_COMMAND.to_string()]);
        container.args = Some(vec!["--state-dir".to_string(), WORKLOAD_STATE_DIR.to_string()]);
        container.env = Some(env);
        container.volume_mounts = Some(vec![core::VolumeMount {
            name: WORKLOAD_STATE_VOLUME.to_string(),
            mount_path: WORKLOAD_STATE_DIR.to_string(),
            ..Default::default()
        }]);
        container.security_context = Some(core::SecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(WORKLOAD_UID),
            run_as_group: Some(WORKLOAD_UID),
            read_only_root_filesystem: Some(true),
            allow_privilege_escalation: Some(false),
            capabilities: Some(core::Capabilities {
                drop: Some(vec!["ALL".to_string()]),
                add: None,
            }),
            ..Default::default()
        });
    }
    spec.security_context = Some(core::PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: Some(WORKLOAD_UID),
        run_as_group: Some(WORKLOAD_UID),
        fs_group: Some(WORKLOAD_UID),
        seccomp_profile: Some(core::SeccompProfile {
            type_: "RuntimeDefault".to_string(),
            localhost_profile: None,
        }),
        ..Default::default()
    });
    spec.volumes = Some(vec![core::Volume {
        name: WORKLOAD_STATE_VOLUME.to_string(),
        empty_dir: Some(core::EmptyDirVolumeSource::default()),
        ..Default::default()
    }]);
}

/// Namespace `name`, labelled as belonging to run `run` (a run's own
/// namespace has the run's name).
pub fn run_namespace(name: &str, run: &str) -> core::Namespace {
    core::Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(BTreeMap::from([(labels::RUN.to_string(), run.to_string())])),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn label<'a>(pod: &'a core::Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// The identity of a pod of a run (None for pods schedlab did not create).
pub fn pod_identity_of(pod: &core::Pod) -> Option<PodIdentity> {
    let num = |key| label(pod, key)?.parse::<u64>().ok();
    Some(PodIdentity {
        pod: PodId(num(labels::POD_ID)?),
        slot: PodSlot {
            workload: WorkloadId(u32::try_from(num(labels::WORKLOAD)?).ok()?),
            ordinal: u32::try_from(num(labels::ORDINAL)?).ok()?,
        },
        incarnation: u32::try_from(num(labels::INCARNATION)?).ok()?,
    })
}

/// The run's seed a pod carries.
pub fn pod_seed_of(pod: &core::Pod) -> Option<u64> {
    pod.metadata.annotations.as_ref()?.get(labels::SEED)?.parse().ok()
}

/// The cluster model's spec of any pod: requests and limits summed over its
/// containers, its priority (as admission resolved it), scheduler, restart
/// policy and tolerations; its behaviour from the annotation, or for a
/// foreign pod one that uses what it requests and never crashes.
pub fn pod_spec_of(pod: &core::Pod) -> Result<PodSpec, KubeError> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let spec = pod
        .spec
        .as_ref()
        .ok_or_else(|| object_error("Pod", &name, "spec", "missing"))?;
    let mut requests = Resources::ZERO;
    let mut limits = Resources::ZERO;
    let mut any_limit = false;
    for c in &spec.containers {
        let res = c.resources.as_ref();
        let (r, _) = parse_resources(
            "Pod",
            &name,
            "spec.containers.resources.requests",
            res.and_then(|r| r.requests.as_ref()),
        )?;
        let (l, _) = parse_resources(
            "Pod",
            &name,
            "spec.containers.resources.limits",
            res.and_then(|r| r.limits.as_ref()),
        )?;
        // as kube-apiserver defaults them: a limit without a request requests the limit
        let r = Resources {
            cpu_milli: if r.cpu_milli == 0 { l.cpu_milli } else { r.cpu_milli },
            memory_bytes: if r.memory_bytes == 0 {
                l.memory_bytes
            } else {
                r.memory_bytes
            },
        };
        requests += r;
        any_limit |= res.and_then(|r| r.limits.as_ref()).is_some_and(|m| !m.is_empty());
        limits += l;
    }
    let unstable = label(pod, labels::UNSTABLE) == Some("true");
    let behaviour = match pod.metadata.annotations.as_ref().and_then(|a| a.get(labels::BEHAVIOUR)) {
        Some(text) => serde_json::from_str::<Behaviour>(text).map_err(|e| {
            object_error(
                "Pod",
                &name,
                "metadata.annotations",
                format!("{}: {e}", labels::BEHAVIOUR),
            )
        })?,
        None => Behaviour {
            cpu_usage: Dist::Const {
                value: requests.cpu_milli as f64,
            },
            memory_usage: Dist::Const {
                value: requests.memory_bytes as f64,
            },
            run_seconds: None,
            memory_growth_per_hour: None,
            crash_rate_per_hour: 0.0,
            crash_rate_growth_per_hour: 0.0,
            unstable,
        },
    };
    Ok(PodSpec {
        requests,
        limits: any_limit.then_some(limits),
        priority: spec.priority.unwrap_or(0),
        scheduler_name: spec
            .scheduler_name
            .clone()
            .unwrap_or_else(|| "default-scheduler".to_string()),
        restart_policy: match spec.restart_policy.as_deref() {
            Some("OnFailure") => RestartPolicy::OnFailure,
            Some("Never") => RestartPolicy::Never,
            _ => RestartPolicy::Always,
        },
        tolerations: spec.tolerations.iter().flatten().map(toleration_of).collect(),
        behaviour,
    })
}

/// The node a pod is bound to, if any.
pub fn pod_node_name(pod: &core::Pod) -> Option<&str> {
    pod.spec.as_ref()?.node_name.as_deref().filter(|n| !n.is_empty())
}

/// The text of a [`labels::USAGE_CONDITION`] message: `cpu=<millicores>m memory=<bytes>`.
pub fn format_usage(usage: Resources) -> String {
    format!("cpu={}m memory={}", usage.cpu_milli, usage.memory_bytes)
}

/// Reads what [`format_usage`] wrote.
pub fn parse_usage(text: &str) -> Option<Resources> {
    let mut r = Resources::ZERO;
    let mut seen = (false, false);
    for part in text.split_whitespace() {
        if let Some(v) = part.strip_prefix("cpu=") {
            r.cpu_milli = v.strip_suffix('m')?.parse().ok()?;
            seen.0 = true;
        } else if let Some(v) = part.strip_prefix("memory=") {
            r.memory_bytes = v.parse().ok()?;
            seen.1 = true;
        }
    }
    (seen.0 && seen.1).then_some(r)
}

/// The running container's usage the node emulator reported, if any.
pub fn pod_usage_of(pod: &core::Pod) -> Option<Resources> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == labels::USAGE_CONDITION && c.status == "True")
        .and_then(|c| parse_usage(c.message.as_deref()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> NodeSpec {
        NodeSpec {
            name: "spot-007".into(),
            pool: NodePool {
                name: "spot".into(),
                machine_type: "e2-standard-4".into(),
                hourly_price: 0.0402,
                provisioning: Provisioning::Spot,
            },
            capacity: Resources::new(4000, 16 << 30),
            allocatable: Resources::new(3920, 14 << 30),
            max_pods: 110,
            labels: BTreeMap::from([("zone".to_string(), "a".to_string())]),
            taints: vec![Taint {
                key: "spot".into(),
                value: Some("true".into()),
                effect: TaintEffect::NoSchedule,
            }],
        }
    }

    fn workload() -> Workload {
        Workload {
            id: WorkloadId(3),
            name: "Critical_API".into(),
            spec: PodSpec {
                requests: Resources::new(250, 256 << 20),
                limits: Some(Resources::new(0, 512 << 20)),
                priority: 1000,
                scheduler_name: "binpack".into(),
                restart_policy: RestartPolicy::OnFailure,
                tolerations: vec![Toleration {
                    key: "spot".into(),
                    operator: TolerationOperator::Exists,
                    value: None,
                    effect: Some(TaintEffect::NoSchedule),
                    toleration_seconds: None,
                }],
                behaviour: Behaviour {
                    cpu_usage: Dist::Const { value: 100.0 },
                    memory_usage: Dist::Const {
                        value: 300.0 * 1048576.0,
                    },
                    run_seconds: None,
                    crash_rate_per_hour: 0.5,
                    crash_rate_growth_per_hour: 0.0,
                    unstable: true,
                    memory_growth_per_hour: None,
                },
            },
            recreate: true,
            slot_specs: Vec::new(),
        }
    }

    #[test]
    fn node_specs_round_trip_through_node_objects() {
        let s = spec();
        let node = node_object("r1", NodeId(7), &s, true);
        assert_eq!(node.metadata.name.as_deref(), Some("r1-spot-007"));
        assert_eq!(node_id_of(&node), Some(NodeId(7)));
        let back = node_spec_of(&node).unwrap();
        assert_eq!(back.capacity, s.capacity);
        assert_eq!(back.allocatable, s.allocatable);
        assert_eq!(back.max_pods, 110);
        assert_eq!(back.taints, s.taints);
        assert_eq!(back.pool.hourly_price, s.pool.hourly_price);
        assert_eq!(back.pool.provisioning, Provisioning::Spot);
        assert_eq!(back.labels.get("zone").map(String::as_str), Some("a"));
        assert_eq!(node_condition_of(&node), NodeCondition::Ready);
    }

    #[test]
    fn pod_specs_round_trip_through_pod_objects() {
        let w = workload();
        let ident = PodIdentity {
            pod: PodId(42),
            slot: PodSlot {
                workload: WorkloadId(3),
                ordinal: 5,
            },
            incarnation: 2,
        };
        let pod = pod_object("r1", "ns", &ident, &w, 9);
        assert_eq!(pod.metadata.name.as_deref(), Some("critical-api-5-2"));
        assert_eq!(pod_identity_of(&pod), Some(ident));
        assert_eq!(pod_seed_of(&pod), Some(9));
        let mut back = pod_spec_of(&pod).unwrap();
        // admission fills the priority from the class; the object carries only the class
        assert_eq!(back.priority, 0);
        assert_eq!(
            pod.spec.as_ref().unwrap().priority_class_name.as_deref(),
            Some("r1-p-1000")
        );
        back.priority = w.spec.priority;
        assert_eq!(back, w.spec);
    }

    #[test]
    fn a_slot_with_its_own_spec_makes_its_own_pod_object() {
        let mut w = workload();
        let mut own = w.spec.clone();
        own.requests = Resources::new(300, 700 << 20);
        own.limits = Some(Resources::new(0, 1400 << 20));
        own.behaviour.memory_usage = Dist::Const {
            value: (650u64 << 20) as f64,
        };
        w.slot_specs = vec![w.spec.clone(), own.clone()];
        let ident = |ordinal| PodIdentity {
            pod: PodId(1),
            slot: PodSlot {
                workload: WorkloadId(3),
                ordinal,
            },
            incarnation: 0,
        };
        let mut back = pod_spec_of(&pod_object("r1", "ns", &ident(1), &w, 9)).unwrap();
        back.priority = own.priority;
        assert_eq!(back, own);
        let mut first = pod_spec_of(&pod_object("r1", "ns", &ident(0), &w, 9)).unwrap();
        first.priority = w.spec.priority;
        assert_eq!(first, w.spec);
    }

    #[test]
    fn names_are_dns_labels() {
        assert_eq!(dns_label(&["A__b", "C"]), "a-b-c");
        let long = "x".repeat(100);
        let n = dns_label(&[&long, "7"]);
        assert!(n.len() <= 63 && n.ends_with("-7"), "{n}");
        assert_eq!(priority_class_name("r", -5), "r-p-m5");
    }

    #[test]
    fn usage_round_trips_and_garbage_is_none() {
        let u = Resources::new(1234, 987654321);
        assert_eq!(parse_usage(&format_usage(u)), Some(u));
        assert_eq!(parse_usage("cpu=12 memory=3"), None);
        assert_eq!(parse_usage("memory=3"), None);
    }

    #[test]
    fn bad_quantities_name_the_field() {
        let mut node = node_object("r", NodeId(0), &spec(), true);
        if let Some(s) = node.status.as_mut() {
            s.allocatable
                .as_mut()
                .unwrap()
                .insert("memory".into(), Quantity("lots".into()));
        }
        let err = node_spec_of(&node).unwrap_err().to_string();
        assert!(err.contains("status.allocatable") && err.contains("lots"), "{err}");
    }

    fn workload_pod(limits: Option<Resources>) -> core::Pod {
        let mut w = workload();
        w.spec.limits = limits;
        let ident = PodIdentity {
            pod: PodId(42),
            slot: PodSlot {
                workload: WorkloadId(3),
                ordinal: 5,
            },
            incarnation: 2,
        };
        let model = ModelConfig {
            oom_delay_mean_seconds: 7.5,
            ..Default::default()
        };
        let mut pod = pod_object("r1", "ns", &ident, &w, 9);
        use_workload_image(&mut pod, "schedlab/workload:dev", 60.0, &model);
        pod
    }

    /// The value of `name` as the kubelet would resolve it for `pod`.
    fn resolve_env(pod: &core::Pod, name: &str) -> Option<String> {
        let c = &pod.spec.as_ref()?.containers[0];
        let var = c.env.as_ref()?.iter().find(|e| e.name == name)?;
        if let Some(v) = &var.value {
            return Some(v.clone());
        }
        let path = &var.value_from.as_ref()?.field_ref.as_ref()?.field_path;
        let (map, key) = if let Some(rest) = path.strip_prefix("metadata.annotations['") {
            (pod.metadata.annotations.as_ref()?, rest.strip_suffix("']")?)
        } else {
            let rest = path.strip_prefix("metadata.labels['")?;
            (pod.metadata.labels.as_ref()?, rest.strip_suffix("']")?)
        };
        map.get(key).cloned()
    }

    #[test]
    fn workload_image_reads_the_pod_through_the_downward_api() {
        let pod = workload_pod(Some(Resources::new(0, 512 << 20)));
        let spec = pod.spec.as_ref().unwrap();
        let c = &spec.containers[0];
        assert_eq!(c.image.as_deref(), Some("schedlab/workload:dev"));
        assert_eq!(c.command.as_deref(), Some(&[WORKLOAD_COMMAND.to_string()][..]));
        assert_eq!(
            c.args.as_deref(),
            Some(&["--state-dir".to_string(), WORKLOAD_STATE_DIR.to_string()][..])
        );
        // identity, seed and behaviour come from the pod's own metadata
        let env = |n| resolve_env(&pod, n);
        assert_eq!(env("SCHEDLAB_POD_ID").as_deref(), Some("42"));
        assert_eq!(env("SCHEDLAB_WORKLOAD").as_deref(), Some("3"));
        assert_eq!(env("SCHEDLAB_ORDINAL").as_deref(), Some("5"));
        assert_eq!(env("SCHEDLAB_INCARNATION").as_deref(), Some("2"));
        assert_eq!(env("SCHEDLAB_SEED").as_deref(), Some("9"));
        let behaviour: Behaviour = serde_json::from_str(&env("SCHEDLAB_BEHAVIOUR").unwrap()).unwrap();
        assert_eq!(behaviour, workload().spec.behaviour);
        let downward: Vec<&str> = c
            .env
            .iter()
            .flatten()
            .filter_map(|e| Some(e.value_from.as_ref()?.field_ref.as_ref()?.field_path.as_str()))
            .collect();
        assert!(
            downward.contains(&"metadata.annotations['schedlab.io/behaviour']"),
            "{downward:?}"
        );
        assert!(
            downward.contains(&"metadata.annotations['schedlab.io/seed']"),
            "{downward:?}"
        );
        assert!(
            downward.contains(&"metadata.labels['schedlab.io/pod-id']"),
            "{downward:?}"
        );
        // limits, time scale and model as literals; no cpu limit, no variable
        assert_eq!(env("SCHEDLAB_MEMORY_LIMIT").as_deref(), Some("536870912"));
        assert_eq!(env("SCHEDLAB_CPU_LIMIT"), None);
        assert_eq!(env("SCHEDLAB_TIME_SCALE").as_deref(), Some("60"));
        let model: ModelConfig = serde_json::from_str(&env("SCHEDLAB_MODEL").unwrap()).unwrap();
        assert_eq!(model.oom_delay_mean_seconds, 7.5);
        // requests and limits are untouched
        assert_eq!(pod_spec_of(&pod).unwrap().limits, Some(Resources::new(0, 512 << 20)));
    }

    #[test]
    fn workload_image_keeps_its_state_in_an_empty_dir_as_non_root() {
        let pod = workload_pod(Some(Resources::new(1500, 0)));
        let spec = pod.spec.as_ref().unwrap();
        let c = &spec.containers[0];
        assert_eq!(resolve_env(&pod, "SCHEDLAB_CPU_LIMIT").as_deref(), Some("1500m"));
        assert_eq!(resolve_env(&pod, "SCHEDLAB_MEMORY_LIMIT"), None);
        let volumes = spec.volumes.as_ref().unwrap();
        assert_eq!(volumes.len(), 1);
        assert_eq!(volumes[0].name, WORKLOAD_STATE_VOLUME);
        let empty_dir = volumes[0].empty_dir.as_ref().unwrap();
        // not tmpfs: that would count against the memory the model draws
        assert_eq!(empty_dir.medium, None);
        let mounts = c.volume_mounts.as_ref().unwrap();
        assert_eq!(mounts.len(), 1);
        assert_eq!(
            (mounts[0].name.as_str(), mounts[0].mount_path.as_str()),
            (WORKLOAD_STATE_VOLUME, WORKLOAD_STATE_DIR)
        );
        assert_ne!(mounts[0].read_only, Some(true));
        let sc = c.security_context.as_ref().unwrap();
        assert_eq!(sc.run_as_non_root, Some(true));
        assert_eq!(sc.read_only_root_filesystem, Some(true));
        assert_eq!(sc.allow_privilege_escalation, Some(false));
        assert!(sc.run_as_user.is_some_and(|u| u != 0));
        assert_eq!(
            sc.capabilities.as_ref().and_then(|c| c.drop.clone()),
            Some(vec!["ALL".to_string()])
        );
        let psc = spec.security_context.as_ref().unwrap();
        assert_eq!(psc.run_as_non_root, Some(true));
        assert_eq!(psc.fs_group, Some(WORKLOAD_UID));
        // the rest of the pod is as pod_object made it
        assert_eq!(spec.scheduler_name.as_deref(), Some("binpack"));
        assert_eq!(pod_identity_of(&pod).map(|i| i.pod), Some(PodId(42)));
        // serialises to what the API server takes: env entries have names
        let json = serde_json::to_value(&pod).unwrap();
        let env = json["spec"]["containers"][0]["env"].as_array().unwrap();
        assert!(env.iter().all(|e| e["name"].is_string()));
        assert_eq!(
            json["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"],
            true
        );
    }

    #[test]
    fn workload_image_on_a_pod_without_spec_changes_nothing() {
        let mut pod = core::Pod::default();
        use_workload_image(&mut pod, "img", 1.0, &ModelConfig::default());
        assert_eq!(pod, core::Pod::default());
    }

    #[test]
    fn degraded_and_not_ready_conditions() {
        let mut node = node_object("r", NodeId(0), &spec(), true);
        let now = jiff::Timestamp::now();
        node.status.as_mut().unwrap().conditions = Some(vec![
            node_condition("Ready", "True", "KubeletReady", now),
            node_condition(labels::DEGRADED_CONDITION, "True", "Flaky", now),
        ]);
        assert_eq!(node_condition_of(&node), NodeCondition::Degraded);
        node.status.as_mut().unwrap().conditions =
            Some(vec![node_condition("Ready", "Unknown", "NodeStatusUnknown", now)]);
        assert_eq!(node_condition_of(&node), NodeCondition::NotReady);
    }
}
