//! The Kubernetes executor: a sweep's cells as Jobs on any cluster
//! (provisioning::sweep_job makes the objects), each cell's folder fetched
//! back through its pod's log, every submission recorded in the sweep
//! folder so that status, fetch, resume and cancel find it again.

use crate::Result;
use crate::error::{While, input};
use crate::sweep::folder::{CellState, SweepFolder};
use crate::sweep::plan::Plan;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams};
use provisioning::sweep_job::{self, JobShape, SweepJobSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The record of a sweep's submissions, in its folder.
pub const KUBE_FILE: &str = "kube.json";
/// The annotation the Job controller gives an Indexed Job's pod.
const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// Where a sweep was submitted and with what, for status, fetch, resume and cancel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KubeRecord {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: String,
    pub settings: KubeSettings,
    pub attempts: Vec<Attempt>,
}

/// What each cell pod gets: provisioning's pod settings, kept in the record so a resume submits alike.
pub use provisioning::sweep_job::PodSettings as KubeSettings;

/// One submission: the plan indexes it runs, in completion-index order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    pub attempt: u32,
    pub shape: String,
    pub cells: Vec<usize>,
    pub submitted_at: jiff::Timestamp,
}

impl KubeRecord {
    pub fn read(folder: &SweepFolder) -> Result<Option<KubeRecord>> {
        let path = folder.root.join(KUBE_FILE);
        match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).while_doing(|| format!("reading {}", path.display())),
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| input(format!("{}: {e}", path.display()))),
        }
    }

    pub fn write(&self, folder: &SweepFolder) -> Result<()> {
        results::run_folder::write_json(&folder.root.join(KUBE_FILE), "the sweep's submissions", self)?;
        Ok(())
    }

    fn attempt(&self, n: u32) -> Option<&Attempt> {
        self.attempts.iter().find(|a| a.attempt == n)
    }
}

/// The plan's files as the sweep folder holds them.
pub fn plan_files(folder: &SweepFolder) -> Result<crate::sweep::plan::PlanFiles> {
    let mut plan_files = BTreeMap::new();
    let dir = folder.plan_dir();
    for entry in std::fs::read_dir(&dir).while_doing(|| format!("reading {}", dir.display()))? {
        let entry = entry.while_doing(|| format!("reading {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !entry.path().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).while_doing(|| format!("reading {}", entry.path().display()))?;
        plan_files.insert(name, bytes);
    }
    Ok(plan_files)
}

/// The objects' description of one submission of `cells`.
pub fn spec(
    plan: &Plan,
    plan_files: crate::sweep::plan::PlanFiles,
    namespace: &str,
    settings: &KubeSettings,
    attempt: u32,
    cells: Vec<usize>,
) -> Result<SweepJobSpec> {
    let spec = SweepJobSpec {
        sweep_id: plan.sweep_id.clone(),
        sweep_name: plan.name.clone(),
        attempt,
        namespace: namespace.to_string(),
        plan_files,
        cells,
        pods: settings.clone(),
    };
    spec.check()?;
    Ok(spec)
}

/// Creates a submission's objects: the service account (shared by every submission of the sweep), the plan's
/// ConfigMap, the Jobs.
pub async fn submit(client: &kube::Client, objects: &sweep_job::SweepObjects, namespace: &str) -> Result<()> {
    let post = PostParams::default();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    match accounts.create(&post, &objects.service_account).await {
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        other => {
            other.while_doing(|| format!("creating the service account in namespace {namespace}"))?;
        }
    }
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    maps.create(&post, &objects.config_map)
        .await
        .while_doing(|| format!("creating the plan's ConfigMap in namespace {namespace}"))?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    for job in &objects.jobs {
        let name = job.metadata.name.clone().unwrap_or_default();
        jobs.create(&post, job)
            .await
            .while_doing(|| format!("creating Job {namespace}/{name}"))?;
    }
    Ok(())
}

/// Where a cell stands in the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodState {
    /// waiting to run, with why (no room, pulling or failing to pull the image)
    Waiting(String),
    Running(String),
    /// finished: its folder is in the pod's log (or on the claim)
    Succeeded(String),
    /// a pod failed, with why; `last` when no retry is left
    Failed {
        reason: String,
        last: bool,
    },
}

impl PodState {
    fn rank(&self) -> u8 {
        match self {
            PodState::Succeeded(_) => 4,
            PodState::Running(_) => 3,
            PodState::Waiting(_) => 2,
            PodState::Failed { .. } => 1,
        }
    }

    pub fn word(&self) -> &'static str {
        match self {
            PodState::Waiting(_) => "waiting",
            PodState::Running(_) => "running",
            PodState::Succeeded(_) => "finished",
            PodState::Failed { last: true, .. } => "failed",
            PodState::Failed { last: false, .. } => "retrying",
        }
    }

    pub fn why(&self) -> &str {
        match self {
            PodState::Waiting(w) | PodState::Running(w) | PodState::Succeeded(w) => w,
            PodState::Failed { reason, .. } => reason,
        }
    }
}

/// Each cell's state in the cluster, from the pods and Jobs of every submission (plan index → state; the best of its
/// pods).
pub async fn cluster_states(
    client: &kube::Client,
    record: &KubeRecord,
    sweep_id: &str,
) -> Result<BTreeMap<usize, (String, PodState)>> {
    let selector = format!("{}={sweep_id}", sweep_job::LABEL_SWEEP);
    let params = ListParams::default().labels(&selector);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &record.namespace);
    let jobs: Api<Job> = Api::namespaced(client.clone(), &record.namespace);
    let pod_list = pods
        .list(&params)
        .await
        .while_doing(|| format!("listing the sweep's pods in namespace {}", record.namespace))?;
    let job_list = jobs
        .list(&params)
        .await
        .while_doing(|| format!("listing the sweep's Jobs in namespace {}", record.namespace))?;
    // the cells whose Job gave up on them: (attempt, plan index)
    let mut given_up: Vec<(u32, usize)> = Vec::new();
    for job in &job_list.items {
        let labels = job.metadata.labels.clone().unwrap_or_default();
        let Some(attempt) = labels.get(sweep_job::LABEL_ATTEMPT).and_then(|a| a.parse::<u32>().ok()) else {
            continue;
        };
        let status = job.status.clone().unwrap_or_default();
        if let Some(cell) = labels.get(sweep_job::LABEL_CELL).and_then(|c| c.parse::<usize>().ok()) {
            let failed = status
                .conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Failed" && c.status == "True");
            if failed {
                given_up.push((attempt, cell));
            }
        } else if let (Some(failed), Some(a)) = (status.failed_indexes.as_deref(), record.attempt(attempt)) {
            for position in index_ranges(failed) {
                if let Some(&cell) = a.cells.get(position) {
                    given_up.push((attempt, cell));
                }
            }
        }
    }
    let mut states: BTreeMap<usize, (String, PodState)> = BTreeMap::new();
    for pod in &pod_list.items {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let Some(attempt) = labels.get(sweep_job::LABEL_ATTEMPT).and_then(|a| a.parse::<u32>().ok()) else {
            continue;
        };
        let cell = match labels.get(sweep_job::LABEL_CELL).and_then(|c| c.parse::<usize>().ok()) {
            Some(cell) => Some(cell),
            None => pod
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(COMPLETION_INDEX))
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|position| record.attempt(attempt)?.cells.get(position).copied()),
        };
        let Some(cell) = cell else {
            continue;
        };
        let state = pod_state(pod, given_up.contains(&(attempt, cell)));
        let better = states.get(&cell).is_none_or(|(_, s)| state.rank() > s.rank());
        if better {
            states.insert(cell, (name, state));
        }
    }
    Ok(states)
}

/// "0,3-5" (a Job's failedIndexes) as positions.
fn index_ranges(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

fn pod_state(pod: &Pod, given_up: bool) -> PodState {
    let status = pod.status.clone().unwrap_or_default();
    let container = status
        .container_statuses
        .as_ref()
        .and_then(|c| c.iter().find(|c| c.name == sweep_job::CONTAINER))
        .cloned();
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .map_or_else(String::new, |n| format!("on {n}"));
    match status.phase.as_deref() {
        Some("Succeeded") => PodState::Succeeded(node),
        Some("Failed") => {
            let terminated = container.and_then(|c| c.state).and_then(|s| s.terminated);
            let reason = match (status.reason, terminated) {
                (Some(r), _) => format!("{r}: {}", status.message.unwrap_or_default()),
                (None, Some(t)) => format!(
                    "{} (exit code {}){}",
                    t.reason.unwrap_or_else(|| "Error".into()),
                    t.exit_code,
                    t.message.map(|m| format!(": {m}")).unwrap_or_default()
                ),
                (None, None) => "failed".into(),
            };
            PodState::Failed { reason, last: given_up }
        }
        Some("Running") => PodState::Running(node),
        _ => {
            let waiting = container.and_then(|c| c.state).and_then(|s| s.waiting);
            let unscheduled = status
                .conditions
                .unwrap_or_default()
                .into_iter()
                .find(|c| c.type_ == "PodScheduled" && c.status == "False");
            let why = match (waiting, unscheduled) {
                (Some(w), _) => format!(
                    "{}{}",
                    w.reason.unwrap_or_else(|| "waiting".into()),
                    w.message.map(|m| format!(": {m}")).unwrap_or_default()
                ),
                (None, Some(c)) => format!("not scheduled: {}", c.message.or(c.reason).unwrap_or_default()),
                (None, None) => "pending".into(),
            };
            if given_up {
                PodState::Failed {
                    reason: why,
                    last: true,
                }
            } else {
                PodState::Waiting(why)
            }
        }
    }
}

/// What one fetch did.
#[derive(Debug, Default)]
pub struct Fetched {
    pub accepted: usize,
    /// cells whose finished pod's folder could not be taken, with why
    pub refused: Vec<(usize, String)>,
}

/// Takes every finished cell's folder that is not in the sweep folder yet: from its pod's log, or from `from` (a
/// local copy of the volume claim's folder) when the sweep ran with a claim.
pub async fn fetch(
    client: &kube::Client,
    folder: &SweepFolder,
    plan: &Plan,
    record: &KubeRecord,
    from: Option<&Path>,
) -> Result<Fetched> {
    if let Some(dir) = from {
        return fetch_from(folder, plan, dir);
    }
    let mut fetched = Fetched::default();
    if record.settings.volume_claim.is_some() {
        return Err(input(format!(
            "the sweep's cells wrote their folders to the claim {}: give --from DIR, a copy of the claim's folder",
            record.settings.volume_claim.as_deref().unwrap_or_default()
        )));
    }
    let states = cluster_states(client, record, &plan.sweep_id).await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &record.namespace);
    for (index, (pod, state)) in states {
        let Some(cell) = plan.cell(index) else {
            continue;
        };
        if folder.state_of(&cell) == CellState::Done || !matches!(state, PodState::Succeeded(_)) {
            continue;
        }
        let params = LogParams {
            container: Some(sweep_job::CONTAINER.to_string()),
            ..LogParams::default()
        };
        let log = pods
            .logs(&pod, &params)
            .await
            .while_doing(|| format!("reading the log of pod {}/{pod}", record.namespace))?;
        let taken = crate::sweep::archive::read_framed(&log, &cell.id).and_then(|bytes| {
            let work = folder.work_dir(&cell);
            let _ = std::fs::remove_dir_all(&work);
            crate::sweep::archive::unpack(&bytes, &work)?;
            folder.accept(&cell, &work).inspect_err(|_| {
                let _ = std::fs::remove_dir_all(&work);
            })
        });
        match taken {
            Ok(()) => fetched.accepted += 1,
            Err(e) => fetched.refused.push((index, format!("pod {pod}: {e}"))),
        }
    }
    Ok(fetched)
}

/// Takes every cell folder `<id>` in `dir` (a copy of the volume claim's folder, or cells run elsewhere) that the
/// sweep has not yet, each checked as a cell run here is.
pub fn fetch_from(folder: &SweepFolder, plan: &Plan, dir: &Path) -> Result<Fetched> {
    let mut fetched = Fetched::default();
    for cell in plan.cells() {
        let src = dir.join(&cell.id);
        if folder.state_of(&cell) == CellState::Done || !src.is_dir() {
            continue;
        }
        let work = folder.work_dir(&cell);
        let _ = std::fs::remove_dir_all(&work);
        copy_dir(&src, &work)?;
        match folder.accept(&cell, &work) {
            Ok(()) => fetched.accepted += 1,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&work);
                fetched.refused.push((cell.index, e.to_string()));
            }
        }
    }
    Ok(fetched)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).while_doing(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).while_doing(|| format!("reading {}", from.display()))? {
        let entry = entry.while_doing(|| format!("reading {}", from.display()))?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).while_doing(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Deletes every object of the sweep (its Jobs with their pods, its ConfigMaps, its service account); returns how
/// many Jobs were deleted.
pub async fn cancel(client: &kube::Client, record: &KubeRecord, sweep_id: &str) -> Result<usize> {
    let selector = format!("{}={sweep_id}", sweep_job::LABEL_SWEEP);
    let params = ListParams::default().labels(&selector);
    let ns = &record.namespace;
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let listed = jobs
        .list(&params)
        .await
        .while_doing(|| format!("listing the sweep's Jobs in {ns}"))?;
    jobs.delete_collection(&DeleteParams::background(), &params)
        .await
        .while_doing(|| format!("deleting the sweep's Jobs in {ns}"))?;
    // a Job's pods go with it (background propagation); pods of a cluster that does not collect them go here
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    pods.delete_collection(&DeleteParams::default(), &params)
        .await
        .while_doing(|| format!("deleting the sweep's pods in {ns}"))?;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    maps.delete_collection(&DeleteParams::default(), &params)
        .await
        .while_doing(|| format!("deleting the sweep's ConfigMaps in {ns}"))?;
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    accounts
        .delete_collection(&DeleteParams::default(), &params)
        .await
        .while_doing(|| format!("deleting the sweep's service account in {ns}"))?;
    Ok(listed.items.len())
}

/// The shape this cluster runs a sweep's Jobs in.
pub async fn shape(client: &kube::Client) -> Result<JobShape> {
    Ok(sweep_job::server_shape(client).await?)
}

/// A connected cluster, for the binary that does not speak async: each call runs to its end.
pub struct Cluster {
    rt: tokio::runtime::Runtime,
    client: kube::Client,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").finish_non_exhaustive()
    }
}

impl Cluster {
    /// Connects through `kubeconfig` (default: KUBECONFIG, else ~/.kube/config) and its `context`, checking that
    /// the server answers.
    pub fn connect(kubeconfig: Option<&Path>, context: Option<&str>) -> Result<Cluster> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .while_doing(|| "starting the async runtime".into())?;
        let opts = kube_backend::ClientOptions {
            kubeconfig: kubeconfig.map(Path::to_path_buf),
            context: context.map(str::to_string),
            ..Default::default()
        };
        let api = rt.block_on(kube_backend::ApiClient::connect(&opts)).map_err(|e| {
            if e.is_input_error() {
                input(e.to_string())
            } else {
                crate::RunnerError::Backend(Box::new(e))
            }
        })?;
        Ok(Cluster {
            client: api.client(),
            rt,
        })
    }

    pub fn shape(&self) -> Result<JobShape> {
        self.rt.block_on(shape(&self.client))
    }

    pub fn preflight(&self, namespace: &str, shape: JobShape) -> Result<()> {
        Ok(self.rt.block_on(sweep_job::preflight(&self.client, namespace, shape))?)
    }

    pub fn submit(&self, objects: &sweep_job::SweepObjects, namespace: &str) -> Result<()> {
        self.rt.block_on(submit(&self.client, objects, namespace))
    }

    pub fn states(&self, record: &KubeRecord, sweep_id: &str) -> Result<BTreeMap<usize, (String, PodState)>> {
        self.rt.block_on(cluster_states(&self.client, record, sweep_id))
    }

    pub fn fetch(
        &self,
        folder: &SweepFolder,
        plan: &Plan,
        record: &KubeRecord,
        from: Option<&Path>,
    ) -> Result<Fetched> {
        self.rt.block_on(fetch(&self.client, folder, plan, record, from))
    }

    pub fn cancel(&self, record: &KubeRecord, sweep_id: &str) -> Result<usize> {
        self.rt.block_on(cancel(&self.client, record, sweep_id))
    }
}
