//! Deploying the in-cluster agmarl scheduler on kind and GKE: render the
//! kustomize overlay ([`super::manifests`]), point its images at the ones
//! this cluster can pull, apply, and wait until its Deployment is ready.

use super::external::CommandPlan;
use super::manifests;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use kube_backend::{ApiClient, KubeError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The images as built locally (kind loads these).
pub const DEV_SCHEDULER_IMAGE: &str = "schedlab/agmarl-scheduler:dev";
pub const DEV_WORKLOAD_IMAGE: &str = "schedlab/workload:dev";
/// Where the scheduler runs, as the manifests name it.
pub const NAMESPACE: &str = "schedlab-system";
pub const DEPLOYMENT: &str = "agmarl-scheduler";
/// The pods' `spec.schedulerName` the in-cluster scheduler serves.
pub const SCHEDULER_NAME: &str = "agmarl";
/// How long the Deployment may take to have a ready replica.
pub const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// The two images a run on real kubelets needs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Images {
    pub scheduler: String,
    pub workload: String,
}

impl Images {
    /// The locally built tags.
    pub fn dev() -> Images {
        Images {
            scheduler: DEV_SCHEDULER_IMAGE.to_string(),
            workload: DEV_WORKLOAD_IMAGE.to_string(),
        }
    }

    /// The same images in `registry` (`REGISTRY/agmarl-scheduler:dev`, ...).
    pub fn in_registry(registry: &str) -> Images {
        let registry = registry.trim_end_matches('/');
        let base = |image: &str| {
            let name = image.rsplit('/').next().unwrap_or(image);
            format!("{registry}/{name}")
        };
        Images {
            scheduler: base(DEV_SCHEDULER_IMAGE),
            workload: base(DEV_WORKLOAD_IMAGE),
        }
    }
}

/// An error while deploying the in-cluster scheduler.
#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("rendering the manifests of {}: {source}", dir.display())]
    Render {
        dir: PathBuf,
        #[source]
        source: super::local::ProvisionError,
    },
    #[error("the manifests of {} name no container image {DEV_SCHEDULER_IMAGE:?} to replace", dir.display())]
    NoSchedulerImage { dir: PathBuf },
    #[error("the manifests of {} have no Deployment {DEPLOYMENT} with a container {DEPLOYMENT}", dir.display())]
    NoSchedulerContainer { dir: PathBuf },
    #[error("the control plane's address {server:?} is no https://HOST:PORT")]
    ServerAddress { server: String },
    #[error("applying the scheduler's manifests: {0}")]
    Apply(#[source] KubeError),
    #[error("Deployment {NAMESPACE}/{DEPLOYMENT} has no ready replica after {}s ({detail})", waited.as_secs())]
    NotReady { waited: Duration, detail: String },
    #[error("interrupted while deploying the scheduler")]
    Interrupted,
}

/// The overlay of `flavour` ("kind", "gke" or "local") in the repository at `repo_root`.
pub fn overlay_dir(repo_root: &Path, flavour: &str) -> PathBuf {
    repo_root
        .join("deploy")
        .join("kustomize")
        .join("overlays")
        .join(flavour)
}

/// Replaces every container image of the scheduler (the dev tag, with or
/// without a registry) by `images.scheduler`; returns how many it replaced.
pub fn set_images(objects: &mut [serde_json::Value], images: &Images) -> usize {
    let mut replaced = 0;
    let wanted = DEV_SCHEDULER_IMAGE.split(':').next().unwrap_or(DEV_SCHEDULER_IMAGE);
    for object in objects.iter_mut() {
        let Some(spec) = object.pointer_mut("/spec/template/spec") else {
            continue;
        };
        for list in ["initContainers", "containers"] {
            let Some(containers) = spec.get_mut(list).and_then(|c| c.as_array_mut()) else {
                continue;
            };
            for container in containers {
                let Some(image) = container.get("image").and_then(|i| i.as_str()) else {
                    continue;
                };
                let repo = image.split('@').next().unwrap_or(image);
                let repo = repo.rsplit_once(':').map_or(repo, |(r, _)| r);
                if repo == wanted || repo.ends_with("/agmarl-scheduler") {
                    container["image"] = serde_json::Value::String(images.scheduler.clone());
                    replaced += 1;
                }
            }
        }
    }
    replaced
}

/// Sets environment variables of the scheduler's container (by name, over
/// what the manifests say, a `valueFrom` included); returns how many
/// containers it changed.
pub fn set_env(objects: &mut [serde_json::Value], vars: &[(&str, String)]) -> usize {
    let mut changed = 0;
    for object in objects.iter_mut() {
        if object["kind"] != "Deployment" || object["metadata"]["name"] != DEPLOYMENT {
            continue;
        }
        let Some(containers) = object
            .pointer_mut("/spec/template/spec/containers")
            .and_then(|c| c.as_array_mut())
        else {
            continue;
        };
        for container in containers.iter_mut().filter(|c| c["name"] == DEPLOYMENT) {
            if !container["env"].is_array() {
                container["env"] = serde_json::Value::Array(Vec::new());
            }
            let Some(env) = container["env"].as_array_mut() else {
                continue;
            };
            for (name, value) in vars {
                let entry = serde_json::json!({"name": name, "value": value});
                match env.iter_mut().find(|e| e["name"] == *name) {
                    Some(existing) => *existing = entry,
                    None => env.push(entry),
                }
            }
            changed += 1;
        }
    }
    changed
}

/// Where a host-network pod on real nodes of this machine finds the local
/// control plane's apiserver at `server` (it listens on loopback, and no
/// kube-proxy routes the service address): the in-cluster config's
/// `KUBERNETES_SERVICE_HOST` and `_PORT`, for [`deploy`]'s `env`.
pub fn loopback_apiserver(server: &str) -> crate::Result<Vec<(&'static str, String)>> {
    let address = server.strip_prefix("https://").unwrap_or(server).trim_end_matches('/');
    let (host, port) = address
        .rsplit_once(':')
        .filter(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
        .ok_or_else(|| DeployError::ServerAddress {
            server: server.to_string(),
        })
        .map_err(crate::Error::from)?;
    Ok(vec![
        ("KUBERNETES_SERVICE_HOST", host.to_string()),
        ("KUBERNETES_SERVICE_PORT", port.to_string()),
    ])
}

/// The deploy steps as the plan shows them.
pub fn plan(overlay: &Path, images: &Images) -> CommandPlan {
    let mut plan = CommandPlan::default();
    plan.in_process(format!(
        "render the scheduler's manifests: kubectl kustomize {}",
        overlay.display()
    ));
    plan.in_process(format!(
        "set the scheduler image to {} and apply the manifests (server-side apply, field manager schedlab)",
        images.scheduler
    ));
    plan.in_process(format!(
        "wait until Deployment {NAMESPACE}/{DEPLOYMENT} has a ready replica (at most {}s)",
        READY_TIMEOUT.as_secs()
    ));
    plan
}

/// Renders `overlay`, sets the images and the scheduler's environment
/// variables `env`, applies; returns how many objects it applied.
pub async fn deploy(api: &ApiClient, overlay: &Path, images: &Images, env: &[(&str, String)]) -> crate::Result<usize> {
    let render_error = |source| DeployError::Render {
        dir: overlay.to_path_buf(),
        source,
    };
    let kubectl = manifests::kubectl().map_err(render_error)?;
    let mut objects = manifests::render(&kubectl, overlay).map_err(render_error)?;
    if set_images(&mut objects, images) == 0 {
        return Err(DeployError::NoSchedulerImage {
            dir: overlay.to_path_buf(),
        }
        .into());
    }
    if !env.is_empty() && set_env(&mut objects, env) == 0 {
        return Err(DeployError::NoSchedulerContainer {
            dir: overlay.to_path_buf(),
        }
        .into());
    }
    manifests::apply(api, &objects).await.map_err(DeployError::Apply)?;
    tracing::info!(objects = objects.len(), image = %images.scheduler, "scheduler deployed");
    Ok(objects.len())
}

/// Waits until the scheduler's Deployment has a ready replica.
pub async fn wait_ready(api: &ApiClient, timeout: Duration) -> crate::Result<()> {
    let deployments: Api<Deployment> = Api::namespaced(api.client(), NAMESPACE);
    let started = Instant::now();
    loop {
        api.throttle().await;
        let detail = match deployments.get_opt(DEPLOYMENT).await {
            Ok(Some(d)) => {
                let status = d.status.unwrap_or_default();
                let ready = status.ready_replicas.unwrap_or(0);
                if ready >= 1 {
                    return Ok(());
                }
                format!(
                    "replicas {}, ready {ready}, unavailable {}",
                    status.replicas.unwrap_or(0),
                    status.unavailable_replicas.unwrap_or(0)
                )
            }
            Ok(None) => "the Deployment does not exist".to_string(),
            Err(err) => err.to_string(),
        };
        if started.elapsed() >= timeout {
            return Err(DeployError::NotReady {
                waited: started.elapsed(),
                detail,
            }
            .into());
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_host_network_pod_finds_the_loopback_apiserver() {
        let env = loopback_apiserver("https://127.0.0.1:38525").unwrap();
        assert_eq!(
            env,
            [
                ("KUBERNETES_SERVICE_HOST", "127.0.0.1".to_string()),
                ("KUBERNETES_SERVICE_PORT", "38525".to_string())
            ]
        );
        for bad in ["https://127.0.0.1", "127.0.0.1:x", ":443"] {
            assert!(loopback_apiserver(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn set_env_overrides_the_scheduler_containers_variables_by_name() {
        let mut objects = vec![json!({
            "kind": "Deployment",
            "metadata": {"name": DEPLOYMENT},
            "spec": {"template": {"spec": {"containers": [
                {"name": DEPLOYMENT, "env": [
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "KUBERNETES_SERVICE_PORT", "value": "443"}
                ]},
                {"name": "sidecar"}
            ]}}}
        })];
        let changed = set_env(
            &mut objects,
            &[
                ("KUBERNETES_SERVICE_PORT", "38525".into()),
                ("KUBERNETES_SERVICE_HOST", "127.0.0.1".into()),
            ],
        );
        assert_eq!(changed, 1);
        let containers = &objects[0]["spec"]["template"]["spec"]["containers"];
        assert_eq!(
            containers[0]["env"],
            json!([
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "KUBERNETES_SERVICE_PORT", "value": "38525"},
                {"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"}
            ])
        );
        assert!(containers[1].get("env").is_none(), "another container is left alone");
        let mut other = vec![json!({"kind": "Service", "metadata": {"name": DEPLOYMENT}})];
        assert_eq!(set_env(&mut other, &[("A", "b".into())]), 0);
    }

    #[test]
    fn registry_images_keep_name_and_tag() {
        let images = Images::in_registry("europe-docker.pkg.dev/p/schedlab/");
        assert_eq!(
            images.scheduler,
            "europe-docker.pkg.dev/p/schedlab/agmarl-scheduler:dev"
        );
        assert_eq!(images.workload, "europe-docker.pkg.dev/p/schedlab/workload:dev");
        assert_eq!(Images::dev().scheduler, DEV_SCHEDULER_IMAGE);
    }

    #[test]
    fn set_images_replaces_only_the_scheduler_image() {
        let mut objects = vec![
            json!({"kind": "Namespace", "metadata": {"name": "schedlab-system"}}),
            json!({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
                {"name": "scheduler", "image": "schedlab/agmarl-scheduler:dev"},
                {"name": "sidecar", "image": "busybox:1"}
            ]}}}}),
        ];
        let images = Images::in_registry("r.example/x");
        assert_eq!(set_images(&mut objects, &images), 1);
        assert_eq!(
            objects[1].pointer("/spec/template/spec/containers/0/image"),
            Some(&json!("r.example/x/agmarl-scheduler:dev"))
        );
        assert_eq!(
            objects[1].pointer("/spec/template/spec/containers/1/image"),
            Some(&json!("busybox:1"))
        );
        // again: the registry-qualified name is recognised too
        assert_eq!(set_images(&mut objects, &Images::dev()), 1);
        assert_eq!(
            objects[1].pointer("/spec/template/spec/containers/0/image"),
            Some(&json!(DEV_SCHEDULER_IMAGE))
        );
    }

    #[test]
    fn plan_names_the_overlay_and_image() {
        let plan = plan(Path::new("/r/deploy/kustomize/overlays/kind"), &Images::dev());
        let text = plan.render();
        assert!(
            text.contains("kubectl kustomize /r/deploy/kustomize/overlays/kind"),
            "{text}"
        );
        assert!(text.contains(DEV_SCHEDULER_IMAGE), "{text}");
        assert!(plan.commands().is_empty(), "deploying runs no external command itself");
    }
}
