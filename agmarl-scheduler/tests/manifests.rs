//! The kustomize manifests render with both kubectls the project meets
//! (the 1.20 one built into the local cache, kustomize v2.0.3, and a modern
//! one on the PATH, kustomize v5) to the same objects, and say exactly what
//! the contract says: least-privilege RBAC, two hardened replicas, probes.

#![allow(clippy::unwrap_used)]

use provisioning::local::{CacheLayout, default_cache_dir};
use provisioning::manifests;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn dir(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy/kustomize")
        .join(rel)
}

/// Every kubectl available: the cache's and the PATH's (at least one).
fn kubectls() -> Vec<PathBuf> {
    let mut found = Vec::new();
    if let Ok(cache) = default_cache_dir() {
        let built = CacheLayout::new(cache).binary("kubectl");
        if built.is_file() {
            found.push(built);
        }
    }
    if let Some(path) = std::env::var_os("PATH")
        && let Some(p) = std::env::split_paths(&path)
            .map(|d| d.join("kubectl"))
            .find(|p| p.is_file())
    {
        found.push(p);
    }
    assert!(
        !found.is_empty(),
        "no kubectl: run `schedlab cluster up --local` to build one"
    );
    found
}

fn render(rel: &str) -> Vec<Value> {
    let all: Vec<Vec<Value>> = kubectls()
        .iter()
        .map(|k| manifests::render(k, &dir(rel)).unwrap())
        .collect();
    for (k, objects) in kubectls().iter().zip(&all).skip(1) {
        assert_eq!(objects, &all[0], "{} renders {rel} differently", k.display());
    }
    all.into_iter().next().unwrap()
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

const SYSTEM_NS: &str = "schedlab-system";
const ROLE: &str = "schedlab:agmarl-scheduler";

fn expected_cluster_rules() -> Value {
    json!([
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "delete"]},
        {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
    ])
}

fn expected_role_rules() -> Value {
    json!([
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
         "resourceNames": ["agmarl-scheduler"], "verbs": ["get", "patch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    ])
}

fn container(objects: &[Value]) -> &Value {
    let d = find(objects, "Deployment", "agmarl-scheduler");
    let containers = d["spec"]["template"]["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    &containers[0]
}

fn check_common(objects: &[Value]) {
    check_shared(
        objects,
        "--listen=0.0.0.0:9090",
        json!([{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]),
    );
}

/// What every overlay keeps of the base; `listen` and `env` are the
/// container's listen argument and environment.
fn check_shared(objects: &[Value], listen: &str, env: Value) {
    let kinds: Vec<(String, String)> = objects
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap().into(),
                o["metadata"]["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    for (kind, name) in [
        ("Namespace", SYSTEM_NS),
        ("ServiceAccount", "agmarl-scheduler"),
        ("ClusterRole", ROLE),
        ("ClusterRoleBinding", ROLE),
        ("Role", ROLE),
        ("RoleBinding", ROLE),
        ("Deployment", "agmarl-scheduler"),
        ("Service", "agmarl-scheduler-metrics"),
    ] {
        assert!(
            kinds.contains(&(kind.into(), name.into())),
            "{kind} {name} missing: {kinds:?}"
        );
    }
    assert_eq!(objects.len(), 8, "{kinds:?}");
    // Namespaced objects live in schedlab-system.
    for o in objects {
        let cluster_scoped = ["Namespace", "ClusterRole", "ClusterRoleBinding"].contains(&o["kind"].as_str().unwrap());
        assert_eq!(
            o["metadata"].get("namespace").is_none(),
            cluster_scoped,
            "namespace of {}",
            o["kind"]
        );
        if !cluster_scoped {
            assert_eq!(o["metadata"]["namespace"], SYSTEM_NS);
        }
    }

    // RBAC: exactly these rules, nothing more (a test that fails when
    // somebody adds node writes, pod creation or `secrets`).
    assert_eq!(find(objects, "ClusterRole", ROLE)["rules"], expected_cluster_rules());
    assert_eq!(find(objects, "Role", ROLE)["rules"], expected_role_rules());
    for binding in ["ClusterRoleBinding", "RoleBinding"] {
        let b = find(objects, binding, ROLE);
        assert_eq!(
            b["subjects"],
            json!([{"kind": "ServiceAccount", "name": "agmarl-scheduler", "namespace": SYSTEM_NS}])
        );
        assert_eq!(b["roleRef"]["name"], ROLE);
    }

    // The Deployment: two replicas, hardened, identity from the pod name.
    let d = find(objects, "Deployment", "agmarl-scheduler");
    assert_eq!(d["spec"]["replicas"], 2);
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "agmarl-scheduler");
    assert_eq!(pod["priorityClassName"], "system-cluster-critical");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    let c = container(objects);
    let sc = &c["securityContext"];
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["runAsNonRoot"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]));
    assert!(sc["capabilities"].get("add").is_none());
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for arg in [
        "--scheduler-name=agmarl",
        "--identity=$(POD_NAME)",
        "--lease-name=agmarl-scheduler",
        "--lease-namespace=schedlab-system",
        listen,
    ] {
        assert!(args.contains(&arg), "{arg} missing from {args:?}");
    }
    // The arguments parse as the binary's own command line, once the kubelet
    // has put the pod's address in.
    let expanded: Vec<String> = args.iter().map(|a| a.replace("$(POD_IP)", "100.64.0.1")).collect();
    let parsed = <agmarl_scheduler::Args as clap::Parser>::try_parse_from(
        std::iter::once("agmarl-scheduler").chain(expanded.iter().map(String::as_str)),
    )
    .unwrap();
    assert_eq!(parsed.lease_name, "agmarl-scheduler");
    // kustomize versions order a patched list differently
    let by_name = |v: &Value| {
        let mut list = v.as_array().cloned().unwrap_or_default();
        list.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_string());
        list
    };
    assert_eq!(by_name(&c["env"]), by_name(&env));
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(c["ports"][0]["containerPort"], 9090);
    assert!(c["resources"]["requests"]["cpu"].is_string() && c["resources"]["limits"]["memory"].is_string());
    let svc = find(objects, "Service", "agmarl-scheduler-metrics");
    assert_eq!(svc["spec"]["ports"][0]["port"], 9090);
    assert_eq!(svc["spec"]["selector"]["app.kubernetes.io/name"], "agmarl-scheduler");
    // the selector picks the Deployment's pods
    let pod_labels = &d["spec"]["template"]["metadata"]["labels"];
    for (k, v) in svc["spec"]["selector"].as_object().unwrap() {
        assert_eq!(&pod_labels[k], v, "Service selector {k}");
    }
}

#[test]
fn base_renders_least_privilege_and_hardened() {
    let objects = render("base");
    check_common(&objects);
    let c = container(&objects);
    assert_eq!(c["image"], "schedlab/agmarl-scheduler:dev");
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
}

#[test]
fn kind_overlay_never_pulls() {
    let objects = render("overlays/kind");
    check_common(&objects);
    let c = container(&objects);
    assert_eq!(c["image"], "schedlab/agmarl-scheduler:dev");
    assert_eq!(c["imagePullPolicy"], "Never");
    // the patch kept the base's hardening and probes (checked above) and labelled everything
    for o in &objects {
        assert_eq!(o["metadata"]["labels"]["schedlab.io/cluster"], "kind", "{}", o["kind"]);
    }
}

#[test]
fn gke_overlay_pulls_and_spreads_over_zones() {
    let objects = render("overlays/gke");
    check_common(&objects);
    let c = container(&objects);
    assert_eq!(c["image"], "schedlab/agmarl-scheduler:dev");
    assert_eq!(c["imagePullPolicy"], "Always");
    let d = find(&objects, "Deployment", "agmarl-scheduler");
    let terms = &d["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"];
    assert_eq!(terms.as_array().unwrap().len(), 1);
    assert_eq!(
        terms[0]["podAffinityTerm"]["topologyKey"],
        "topology.kubernetes.io/zone"
    );
    for o in &objects {
        assert_eq!(o["metadata"]["labels"]["schedlab.io/cluster"], "gke", "{}", o["kind"]);
    }
}

#[test]
fn local_overlay_runs_in_the_hosts_network_on_real_nodes_only() {
    let objects = render("overlays/local");
    check_shared(
        &objects,
        "--listen=$(POD_IP):9090",
        json!([
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
            {"name": "KUBERNETES_SERVICE_PORT", "value": "443"},
        ]),
    );
    let c = container(&objects);
    assert_eq!(c["imagePullPolicy"], "Never");
    let pod = &find(&objects, "Deployment", "agmarl-scheduler")["spec"]["template"]["spec"];
    assert_eq!(pod["hostNetwork"], true);
    let (key, value) = provisioning::kubelets::config::REAL_NODE_LABEL;
    assert_eq!(pod["nodeSelector"][key], value);
    assert_eq!(pod["tolerations"], json!([{"operator": "Exists"}]));
    for o in &objects {
        assert_eq!(o["metadata"]["labels"]["schedlab.io/cluster"], "local", "{}", o["kind"]);
    }
}

#[test]
fn a_broken_kustomization_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("kustomization.yaml"), "resources:\n- missing.yaml\n").unwrap();
    let err = manifests::render(&kubectls()[0], tmp.path()).unwrap_err().to_string();
    assert!(err.contains("kustomize"), "{err}");
}
