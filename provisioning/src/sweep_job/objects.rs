//! Building a submission's objects from its spec: no HTTP, so the dry run
//! and the real submission cannot differ.

use super::error::SweepJobError;
use super::names;
use super::shape::JobShape;
use super::spec::SweepJobSpec;
use super::{
    APP, BINARY, CELL_UID, CONTAINER, KUEUE_QUEUE_LABEL, LABEL_APP, LABEL_ATTEMPT, LABEL_CELL, LABEL_MANAGED_BY,
    LABEL_SWEEP, MANAGER, OUT_DIR, PLAN_DIR, STREAM_OUT_DIR, TMP_DIR,
};
use k8s_openapi::ByteString;
use k8s_openapi::api::batch::v1::{
    Job, JobSpec, PodFailurePolicy, PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, EmptyDirVolumeSource, PersistentVolumeClaimVolumeSource,
    PodSecurityContext, PodSpec, PodTemplateSpec, ResourceRequirements, SeccompProfile, SecurityContext,
    ServiceAccount, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// The objects of one submission, in creation order: the ServiceAccount the
/// pods run as, the ConfigMap they read the plan from, then the Job(s).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepObjects {
    pub service_account: ServiceAccount,
    pub config_map: ConfigMap,
    pub jobs: Vec<Job>,
    /// the shape the Jobs were made in
    pub shape: JobShape,
    /// what the objects do, one line each, for the dry run
    pub(crate) plan: Vec<String>,
}

impl SweepObjects {
    /// What the submission creates and how its cells run, one line each:
    /// the dry run's summary.
    pub fn plan(&self) -> &[String] {
        &self.plan
    }
}

/// The objects of submission `spec` in `shape`, after checking the spec.
pub fn objects(spec: &SweepJobSpec, shape: JobShape) -> Result<SweepObjects, SweepJobError> {
    spec.check()?;
    let base = spec.name_base();
    let service_account = ServiceAccount {
        metadata: metadata(spec, names::service_account(&base), labels(spec)),
        // The cells use none of the cluster's API: no token, and no Role.
        automount_service_account_token: Some(false),
        ..ServiceAccount::default()
    };
    let config_map = plan_config_map(spec, &base);
    let jobs = match shape {
        JobShape::Indexed => vec![indexed_job(spec, &base)?],
        JobShape::PerCell => spec
            .cells
            .iter()
            .map(|&index| cell_job(spec, &base, index))
            .collect::<Result<_, _>>()?,
    };
    let plan = super::summary::plan_lines(spec, shape, &base);
    Ok(SweepObjects {
        service_account,
        config_map,
        jobs,
        shape,
        plan,
    })
}

/// The cell container's command: the plan, the attempt's cell list, where
/// the cell folder goes, `--stream` when it goes back through the pod's log
/// (no volume claim), and in the per-cell shape the cell's plan index
/// (`--index N`; an Indexed pod reads `JOB_COMPLETION_INDEX` instead).
pub fn cell_command(spec: &SweepJobSpec, index: Option<usize>) -> Vec<String> {
    let out = if spec.pods.volume_claim.is_some() {
        OUT_DIR
    } else {
        STREAM_OUT_DIR
    };
    let mut command: Vec<String> = [
        BINARY,
        "sweep",
        "cell",
        "--plan",
        PLAN_DIR,
        "--cells-file",
        &format!("{PLAN_DIR}/{}", names::cells_key(spec.attempt)),
        "--out",
        out,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if spec.pods.volume_claim.is_none() {
        command.push("--stream".to_string());
    }
    if let Some(index) = index {
        command.push("--index".to_string());
        command.push(index.to_string());
    }
    command
}

/// The labels every object of the submission carries.
fn labels(spec: &SweepJobSpec) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LABEL_APP.to_string(), APP.to_string()),
        (LABEL_MANAGED_BY.to_string(), MANAGER.to_string()),
        (LABEL_SWEEP.to_string(), spec.sweep_id.clone()),
        (LABEL_ATTEMPT.to_string(), spec.attempt.to_string()),
    ])
}

fn metadata(spec: &SweepJobSpec, name: String, labels: BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(spec.namespace.clone()),
        labels: Some(labels),
        ..ObjectMeta::default()
    }
}

/// The plan's files as binaryData and the attempt's cell list as text,
/// immutable: the plan of an attempt never changes, and kubelets then need
/// not watch it for each of thousands of pods.
fn plan_config_map(spec: &SweepJobSpec, base: &str) -> ConfigMap {
    let binary_data: BTreeMap<String, ByteString> = spec
        .plan_files
        .iter()
        .map(|(key, bytes)| (key.clone(), ByteString(bytes.clone())))
        .collect();
    ConfigMap {
        metadata: metadata(spec, names::config_map(base, spec.attempt), labels(spec)),
        binary_data: (!binary_data.is_empty()).then_some(binary_data),
        data: Some(BTreeMap::from([(names::cells_key(spec.attempt), spec.cells_text())])),
        immutable: Some(true),
    }
}

/// Labels of a Job: the sweep's, and Kueue's queue when one is given.
fn job_labels(spec: &SweepJobSpec, cell: Option<usize>) -> BTreeMap<String, String> {
    let mut labels = labels(spec);
    if let Some(cell) = cell {
        labels.insert(LABEL_CELL.to_string(), cell.to_string());
    }
    if let Some(queue) = &spec.pods.queue_name {
        labels.insert(KUEUE_QUEUE_LABEL.to_string(), queue.clone());
    }
    labels
}

fn to_i32(field: &'static str, value: impl Copy + std::fmt::Debug + TryInto<i32>) -> Result<i32, SweepJobError> {
    value
        .try_into()
        .map_err(|_| SweepJobError::invalid(field, value, "more than Kubernetes' 32-bit counts hold"))
}

/// The Indexed shape's one Job: completion index i runs the i-th cell of
/// the attempt's list, each index retried on its own.
fn indexed_job(spec: &SweepJobSpec, base: &str) -> Result<Job, SweepJobError> {
    let job = JobSpec {
        completion_mode: Some("Indexed".to_string()),
        completions: Some(to_i32("cells", spec.cells.len())?),
        parallelism: Some(to_i32("parallelism", spec.pods.parallelism)?),
        backoff_limit_per_index: Some(to_i32("retries_per_cell", spec.pods.retries_per_cell)?),
        // With backoffLimitPerIndex, Kubernetes defaults backoffLimit to its
        // largest value (2147483647): failures count per index, never for
        // the whole Job. Said here so the object shows it.
        backoff_limit: Some(i32::MAX),
        // maxFailedIndexes stays unset: a failed cell must not fail the rest.
        max_failed_indexes: None,
        // A pod lost to a disruption (preemption, eviction, a node that went
        // away) is replaced without spending one of its cell's retries.
        // Valid with backoffLimitPerIndex as the pod's restartPolicy is Never.
        pod_failure_policy: Some(ignore_disruptions()),
        template: pod_template(spec, base, None),
        ..JobSpec::default()
    };
    Ok(Job {
        metadata: metadata(spec, names::indexed_job(base, spec.attempt), job_labels(spec, None)),
        spec: Some(job),
        status: None,
    })
}

/// The per-cell shape's Job of plan index `index`: one pod, retried up to
/// the cell's retries. The Jobs' pods all start at once: Kubernetes does
/// not enforce the sweep's parallelism across Jobs.
fn cell_job(spec: &SweepJobSpec, base: &str, index: usize) -> Result<Job, SweepJobError> {
    let job = JobSpec {
        completions: Some(1),
        parallelism: Some(1),
        backoff_limit: Some(to_i32("retries_per_cell", spec.pods.retries_per_cell)?),
        template: pod_template(spec, base, Some(index)),
        ..JobSpec::default()
    };
    Ok(Job {
        metadata: metadata(
            spec,
            names::cell_job(base, spec.attempt, index),
            job_labels(spec, Some(index)),
        ),
        spec: Some(job),
        status: None,
    })
}

fn ignore_disruptions() -> PodFailurePolicy {
    PodFailurePolicy {
        rules: vec![PodFailurePolicyRule {
            action: "Ignore".to_string(),
            on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                type_: "DisruptionTarget".to_string(),
                status: "True".to_string(),
            }]),
            on_exit_codes: None,
        }],
    }
}

const PLAN_VOLUME: &str = "plan";
const TMP_VOLUME: &str = "tmp";
const OUT_VOLUME: &str = "out";

/// The cell pod: non-root, no privileges, a read-only root with /tmp
/// writable, the plan mounted read-only, and the volume claim when given.
fn pod_template(spec: &SweepJobSpec, base: &str, cell: Option<usize>) -> PodTemplateSpec {
    let mut pod_labels = labels(spec);
    if let Some(cell) = cell {
        pod_labels.insert(LABEL_CELL.to_string(), cell.to_string());
    }
    let mut volumes = vec![
        Volume {
            name: PLAN_VOLUME.to_string(),
            config_map: Some(ConfigMapVolumeSource {
                name: names::config_map(base, spec.attempt),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        },
        Volume {
            name: TMP_VOLUME.to_string(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        },
    ];
    let mut mounts = vec![
        VolumeMount {
            name: PLAN_VOLUME.to_string(),
            mount_path: PLAN_DIR.to_string(),
            read_only: Some(true),
            ..VolumeMount::default()
        },
        VolumeMount {
            name: TMP_VOLUME.to_string(),
            mount_path: TMP_DIR.to_string(),
            ..VolumeMount::default()
        },
    ];
    if let Some(claim) = &spec.pods.volume_claim {
        volumes.push(Volume {
            name: OUT_VOLUME.to_string(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.clone(),
                read_only: None,
            }),
            ..Volume::default()
        });
        mounts.push(VolumeMount {
            name: OUT_VOLUME.to_string(),
            mount_path: OUT_DIR.to_string(),
            ..VolumeMount::default()
        });
    }
    let container = Container {
        name: CONTAINER.to_string(),
        image: Some(spec.pods.image.clone()),
        image_pull_policy: spec.pods.image_pull_policy.clone(),
        command: Some(cell_command(spec, cell)),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity(format!("{}m", spec.pods.cpu_millis))),
                ("memory".to_string(), Quantity(spec.pods.memory_bytes.to_string())),
            ])),
            // No CPU limit: a cell may use idle CPU; memory is capped at
            // its request so a cell's use is what the scheduler counted.
            limits: Some(BTreeMap::from([(
                "memory".to_string(),
                Quantity(spec.pods.memory_bytes.to_string()),
            )])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities {
                add: None,
                drop: Some(vec!["ALL".to_string()]),
            }),
            read_only_root_filesystem: Some(true),
            run_as_non_root: Some(true),
            ..SecurityContext::default()
        }),
        volume_mounts: Some(mounts),
        ..Container::default()
    };
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(pod_labels),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            restart_policy: Some("Never".to_string()),
            service_account_name: Some(names::service_account(base)),
            automount_service_account_token: Some(false),
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                run_as_user: Some(CELL_UID),
                run_as_group: Some(CELL_UID),
                // The volume claim's files (where the volume supports
                // ownership) belong to the cells' group, changed only when
                // its root does not already, not file by file at every mount.
                fs_group: Some(CELL_UID),
                fs_group_change_policy: Some("OnRootMismatch".to_string()),
                // What Pod Security's "restricted" level asks for.
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_string(),
                    localhost_profile: None,
                }),
                ..PodSecurityContext::default()
            }),
            node_selector: (!spec.pods.node_selector.is_empty()).then(|| spec.pods.node_selector.clone()),
            containers: vec![container],
            volumes: Some(volumes),
            ..PodSpec::default()
        }),
    }
}
