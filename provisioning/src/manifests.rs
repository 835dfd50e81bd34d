//! The project's Kubernetes manifests (`deploy/kustomize`): rendering them
//! with kubectl's kustomize, applying and deleting them through the API, and
//! kubeconfigs for a service account (TokenRequest), so tests and tools can
//! act as the in-cluster scheduler's identity.

use super::local::{CacheLayout, ProvisionError, default_cache_dir};
use k8s_openapi::ByteString;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiCapabilities, ApiResource, Scope};
use kube_backend::{ApiClient, KubeError, labels};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How long a service-account kubeconfig's token stays valid.
pub const TOKEN_SECONDS: i64 = 3600;

/// The kubectl to render with: the one built into the local control plane's
/// cache (kustomize v2.0.3, as a 1.20 cluster's users have), else `kubectl`
/// on the PATH.
pub fn kubectl() -> Result<PathBuf, ProvisionError> {
    if let Ok(cache) = default_cache_dir() {
        let built = CacheLayout::new(cache).binary("kubectl");
        if built.is_file() {
            return Ok(built);
        }
    }
    if crate::external::on_path("kubectl") {
        Ok(PathBuf::from("kubectl"))
    } else {
        Err(ProvisionError::MissingTool { tool: "kubectl" })
    }
}

/// `kubectl kustomize DIR`, as one JSON value per object, in kustomize's
/// order (namespaces and RBAC before the workloads that need them).
pub fn render(kubectl: &Path, kustomize_dir: &Path) -> Result<Vec<serde_json::Value>, ProvisionError> {
    let output = crate::external::run(
        &crate::external::ExternalCommand::new(kubectl, ["kustomize"], "render the manifests").arg(kustomize_dir),
    )?;
    parse_documents(&String::from_utf8_lossy(&output.stdout), kustomize_dir)
}

/// A multi-document YAML stream as JSON objects (empty documents dropped).
pub fn parse_documents(text: &str, origin: &Path) -> Result<Vec<serde_json::Value>, ProvisionError> {
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(text).map_err(|e| ProvisionError::Malformed {
        what: "kustomize output",
        path: origin.to_path_buf(),
        detail: e.to_string(),
    })?;
    let docs: Vec<serde_json::Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
    if let Some(bad) = docs
        .iter()
        .find(|d| d.get("apiVersion").is_none() || d.get("kind").is_none())
    {
        return Err(ProvisionError::Malformed {
            what: "kustomize output",
            path: origin.to_path_buf(),
            detail: format!("an object without apiVersion/kind: {bad}"),
        });
    }
    Ok(docs)
}

/// The kind, name and namespace of a rendered object, for messages.
fn describe(obj: &DynamicObject, kind: &str) -> String {
    match &obj.metadata.namespace {
        Some(ns) => format!("{kind} {ns}/{}", obj.metadata.name.as_deref().unwrap_or("?")),
        None => format!("{kind} {}", obj.metadata.name.as_deref().unwrap_or("?")),
    }
}

/// Resolves objects to their API endpoints, asking discovery once per kind.
#[derive(Default)]
struct Resolver {
    known: HashMap<GroupVersionKind, (ApiResource, ApiCapabilities)>,
}

impl Resolver {
    async fn resolve(
        &mut self,
        api: &ApiClient,
        value: &serde_json::Value,
    ) -> Result<(Api<DynamicObject>, DynamicObject, String), KubeError> {
        let obj: DynamicObject = serde_json::from_value(value.clone())
            .map_err(|e| KubeError::Other(format!("a rendered object is malformed: {e}")))?;
        let types = obj
            .types
            .clone()
            .ok_or_else(|| KubeError::Other("a rendered object has no apiVersion/kind".into()))?;
        let gvk = GroupVersionKind::try_from(&types).map_err(|e| KubeError::Other(e.to_string()))?;
        let what = describe(&obj, &types.kind);
        if !self.known.contains_key(&gvk) {
            api.throttle().await;
            let found = kube::discovery::pinned_kind(&api.client(), &gvk)
                .await
                .map_err(KubeError::api(format!(
                    "discovering {} {}",
                    types.api_version, types.kind
                )))?;
            self.known.insert(gvk.clone(), found);
        }
        let (resource, caps) = self
            .known
            .get(&gvk)
            .ok_or_else(|| KubeError::Other(format!("no API resource for {}", types.kind)))?;
        let objects = match (&caps.scope, obj.metadata.namespace.as_deref()) {
            (Scope::Namespaced, Some(ns)) => Api::namespaced_with(api.client(), ns, resource),
            (Scope::Namespaced, None) => Api::default_namespaced_with(api.client(), resource),
            (Scope::Cluster, _) => Api::all_with(api.client(), resource),
        };
        Ok((objects, obj, what))
    }
}

/// Server-side apply of each object in order, as field manager "schedlab"
/// (forcing: the project owns these objects).
pub async fn apply(api: &ApiClient, objects: &[serde_json::Value]) -> Result<(), KubeError> {
    let mut resolver = Resolver::default();
    let params = PatchParams::apply(labels::FIELD_MANAGER).force();
    for value in objects {
        let (endpoint, obj, what) = resolver.resolve(api, value).await?;
        let name = obj.metadata.name.clone().unwrap_or_default();
        api.throttle().await;
        endpoint
            .patch(&name, &params, &Patch::Apply(&obj))
            .await
            .map_err(KubeError::api(format!("applying {what}")))?;
        tracing::debug!(object = %what, "applied");
    }
    Ok(())
}

/// Deletes the objects in reverse order (workloads before the RBAC and
/// namespace they use); objects already gone are fine.
pub async fn delete(api: &ApiClient, objects: &[serde_json::Value]) -> Result<(), KubeError> {
    let mut resolver = Resolver::default();
    for value in objects.iter().rev() {
        let (endpoint, obj, what) = resolver.resolve(api, value).await?;
        let name = obj.metadata.name.clone().unwrap_or_default();
        api.throttle().await;
        match endpoint.delete(&name, &DeleteParams::background()).await {
            Ok(_) => tracing::debug!(object = %what, "deleted"),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(err) => return Err(KubeError::api(format!("deleting {what}"))(err)),
        }
    }
    Ok(())
}

/// A token for service account `namespace/name` from the TokenRequest API
/// (valid [`TOKEN_SECONDS`], for the API server's default audience).
pub async fn service_account_token(api: &ApiClient, namespace: &str, name: &str) -> Result<String, KubeError> {
    let accounts: Api<core::ServiceAccount> = Api::namespaced(api.client(), namespace);
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: vec![],
            expiration_seconds: Some(TOKEN_SECONDS),
            bound_object_ref: None,
        },
        ..Default::default()
    };
    api.throttle().await;
    let answer: TokenRequest = accounts
        .create_subresource("token", name, &PostParams::default(), &request)
        .await
        .map_err(KubeError::api(format!(
            "requesting a token for service account {namespace}/{name}"
        )))?;
    answer
        .status
        .map(|s| s.token)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| KubeError::Other(format!("the token request for {namespace}/{name} returned no token")))
}

fn base64(bytes: &[u8]) -> Result<String, KubeError> {
    // ByteString serialises as standard base64, as Kubernetes' []byte does.
    match serde_json::to_value(ByteString(bytes.to_vec())) {
        Ok(serde_json::Value::String(s)) => Ok(s),
        _ => Err(KubeError::Other("cannot base64-encode".into())),
    }
}

/// PEM text of DER certificates.
fn pem(certs: &[Vec<u8>]) -> Result<String, KubeError> {
    let mut out = String::new();
    for der in certs {
        let body = base64(der)?;
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        for line in body.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
    }
    Ok(out)
}

/// The kubeconfig (as JSON, which every kubeconfig reader takes) of `user`
/// with `token` on `server`, trusting `certs` (None: the system's roots).
pub fn token_kubeconfig(
    server: &str,
    certs: Option<&[Vec<u8>]>,
    insecure: bool,
    user: &str,
    token: &str,
) -> Result<serde_json::Value, KubeError> {
    let mut cluster = serde_json::json!({ "server": server });
    if let Some(certs) = certs.filter(|c| !c.is_empty()) {
        cluster["certificate-authority-data"] = serde_json::Value::String(base64(pem(certs)?.as_bytes())?);
    }
    if insecure {
        cluster["insecure-skip-tls-verify"] = serde_json::Value::Bool(true);
    }
    Ok(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "cluster", "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "cluster", "user": user}}],
        "current-context": user,
    }))
}

/// Writes to `out` a kubeconfig that acts as service account
/// `namespace/name` (a TokenRequest token, valid [`TOKEN_SECONDS`]) on the
/// same server and with the same CA as `api`. The file is readable by its
/// owner only.
pub async fn service_account_kubeconfig(
    api: &ApiClient,
    namespace: &str,
    name: &str,
    out: &Path,
) -> Result<(), KubeError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let token = service_account_token(api, namespace, name).await?;
    let user = format!("system:serviceaccount:{namespace}:{name}");
    let config = token_kubeconfig(
        api.server(),
        api.root_certs(),
        api.accepts_invalid_certs(),
        &user,
        &token,
    )?;
    let text = serde_json::to_string_pretty(&config).map_err(|e| KubeError::Other(e.to_string()))?;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(out)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    written.map_err(|e| KubeError::Other(format!("cannot write kubeconfig {}: {e}", out.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_parse_and_empty_ones_drop() {
        let text = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 9090\n";
        let docs = parse_documents(text, Path::new("x")).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["spec"]["ports"][0]["port"], 9090);
        let err = parse_documents("just: a map\n", Path::new("dir")).unwrap_err();
        assert!(err.to_string().contains("apiVersion/kind"), "{err}");
        assert!(parse_documents("a: [", Path::new("dir")).is_err());
    }

    #[test]
    fn a_token_kubeconfig_carries_server_ca_and_token() {
        let certs = vec![vec![0u8, 1, 2, 250]];
        let kc = token_kubeconfig(
            "https://127.0.0.1:6443/",
            Some(&certs),
            false,
            "system:serviceaccount:a:b",
            "tok",
        )
        .unwrap();
        assert_eq!(kc["clusters"][0]["cluster"]["server"], "https://127.0.0.1:6443/");
        assert_eq!(kc["users"][0]["user"]["token"], "tok");
        assert_eq!(kc["current-context"], "system:serviceaccount:a:b");
        let data = kc["clusters"][0]["cluster"]["certificate-authority-data"]
            .as_str()
            .unwrap();
        let pem_bytes: ByteString = serde_json::from_value(serde_json::Value::String(data.into())).unwrap();
        let pem_text = String::from_utf8(pem_bytes.0).unwrap();
        assert_eq!(
            pem_text,
            "-----BEGIN CERTIFICATE-----\nAAEC+g==\n-----END CERTIFICATE-----\n"
        );
        let insecure = token_kubeconfig("https://x", None, true, "u", "t").unwrap();
        assert_eq!(insecure["clusters"][0]["cluster"]["insecure-skip-tls-verify"], true);
        assert!(
            insecure["clusters"][0]["cluster"]
                .get("certificate-authority-data")
                .is_none()
        );
    }

    #[test]
    fn long_certificates_wrap_at_64_columns() {
        let text = pem(&[vec![7u8; 100]]).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // 100 bytes are 136 base64 characters: 64 + 64 + 8
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!((lines[1].len(), lines[2].len(), lines[3].len()), (64, 64, 8));
        assert_eq!(lines[4], "-----END CERTIFICATE-----");
    }
}
