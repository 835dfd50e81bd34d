//! The manifests' RBAC on a private local control plane: the scheduler's
//! service account may do what the scheduler needs (a preemption's deletes
//! included) and nothing more, asked through `kubectl auth can-i --as` and
//! proven with the account's own token.

#![allow(clippy::unwrap_used)]

mod support;

use k8s_openapi::api::authorization::v1::{ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec};
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube_backend::{ApiClient, ClientOptions};
use provisioning::manifests;
use std::process::Command;
use support::*;

const AS: &str = "system:serviceaccount:schedlab-system:agmarl-scheduler";

/// `kubectl auth can-i VERB RESOURCE [flags]` as the service account.
fn can_i(admin_kubeconfig: &std::path::Path, args: &[&str]) -> bool {
    let out = Command::new(manifests::kubectl().unwrap())
        .arg("--kubeconfig")
        .arg(admin_kubeconfig)
        .args(["auth", "can-i", "--as", AS])
        .args(args)
        .output()
        .unwrap();
    let answer = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // exit 0 with "yes", 1 with "no"; anything else is a broken question
    match (out.status.code(), answer.as_str()) {
        (Some(0), "yes") => true,
        (Some(1), a) if a.starts_with("no") => false,
        other => panic!(
            "kubectl auth can-i {args:?}: {other:?} {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_account_may_do_what_it_needs_and_nothing_more() {
    let AccountLab {
        plane,
        admin,
        tmp: _tmp,
        kubeconfig: sa_kubeconfig,
    } = account_lab("agmarl-rbac").await;
    let kc = plane.admin_kubeconfig();

    let allowed: &[&[&str]] = &[
        &["get", "pods", "-A"],
        &["list", "pods", "-A"],
        &["watch", "pods", "-A"],
        &["delete", "pods", "-n", "default"],
        &["create", "pods", "--subresource=binding", "-n", "default"],
        &["patch", "pods", "--subresource=status", "-n", "default"],
        &["get", "nodes"],
        &["list", "nodes"],
        &["watch", "nodes"],
        &["create", "events", "-n", SYSTEM_NS],
        &["create", "leases.coordination.k8s.io", "-n", SYSTEM_NS],
        &["get", "leases.coordination.k8s.io/agmarl-scheduler", "-n", SYSTEM_NS],
        &["patch", "leases.coordination.k8s.io/agmarl-scheduler", "-n", SYSTEM_NS],
    ];
    let denied: &[&[&str]] = &[
        &["get", "secrets", "-n", SYSTEM_NS],
        &["list", "secrets", "-A"],
        &["watch", "secrets", "-A"],
        &["create", "pods", "-n", "default"],
        &["deletecollection", "pods", "-n", "default"],
        &["update", "pods", "-n", "default"],
        &["patch", "pods", "-n", "default"],
        &["update", "pods", "--subresource=status", "-n", "default"],
        &["create", "pods", "--subresource=eviction", "-n", "default"],
        &["delete", "nodes"],
        &["patch", "nodes"],
        &["update", "nodes"],
        &["create", "nodes"],
        &["create", "deployments.apps", "-n", SYSTEM_NS],
        &["get", "configmaps", "-n", SYSTEM_NS],
        &["create", "configmaps", "-n", SYSTEM_NS],
        &["get", "leases.coordination.k8s.io/other", "-n", SYSTEM_NS],
        &["patch", "leases.coordination.k8s.io/other", "-n", SYSTEM_NS],
        &["update", "leases.coordination.k8s.io/agmarl-scheduler", "-n", SYSTEM_NS],
        &["delete", "leases.coordination.k8s.io/agmarl-scheduler", "-n", SYSTEM_NS],
        &["list", "leases.coordination.k8s.io", "-n", SYSTEM_NS],
        &["create", "leases.coordination.k8s.io", "-n", "kube-system"],
        &["create", "events", "-n", "default"],
        &["create", "clusterroles.rbac.authorization.k8s.io"],
        &["create", "serviceaccounts", "--subresource=token", "-n", SYSTEM_NS],
    ];
    for q in allowed {
        assert!(can_i(kc, q), "the scheduler needs: {q:?}");
    }
    for q in denied {
        assert!(!can_i(kc, q), "the scheduler must not: {q:?}");
    }

    // The same with the account's own token (TokenRequest).
    let sa = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(sa_kubeconfig.clone()),
        ..Default::default()
    })
    .await
    .unwrap();
    let review = |verb: &str, resource: &str, subresource: Option<&str>, namespace: Option<&str>| {
        let sa = sa.clone();
        let attrs = ResourceAttributes {
            verb: Some(verb.into()),
            resource: Some(resource.into()),
            subresource: subresource.map(str::to_string),
            namespace: namespace.map(str::to_string),
            ..Default::default()
        };
        async move {
            let reviews: Api<SelfSubjectAccessReview> = Api::all(sa.client());
            let r = SelfSubjectAccessReview {
                spec: SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(attrs),
                    ..Default::default()
                },
                ..Default::default()
            };
            reviews
                .create(&PostParams::default(), &r)
                .await
                .unwrap()
                .status
                .unwrap()
                .allowed
        }
    };
    assert!(review("create", "pods", Some("binding"), Some("default")).await);
    assert!(review("list", "nodes", None, None).await);
    assert!(!review("get", "secrets", None, Some(SYSTEM_NS)).await);
    assert!(review("delete", "pods", None, Some("default")).await);
    assert!(!review("create", "pods", None, Some("default")).await);

    // Real requests: reading nodes works, listing secrets and creating a pod
    // are forbidden, deleting one (a preemption's victim) is allowed.
    let nodes: Api<core::Node> = Api::all(sa.client());
    nodes.list(&ListParams::default()).await.unwrap();
    let secrets: Api<core::Secret> = Api::namespaced(sa.client(), SYSTEM_NS);
    let err = secrets.list(&ListParams::default()).await.unwrap_err();
    assert_eq!(kube_backend::error::status_code(&err), Some(403), "{err}");
    lab(&admin, "rbac", 1).await;
    let pods: Api<core::Pod> = Api::namespaced(sa.client(), "rbac");
    let err = pods.create(&PostParams::default(), &pod("rbac", 1)).await.unwrap_err();
    assert_eq!(kube_backend::error::status_code(&err), Some(403), "{err}");
    let pod_names = create_pods(&admin, "rbac", 0..1).await;
    pods.delete(&pod_names[0], &DeleteParams::default()).await.unwrap();

    // delete takes the objects away again (a second delete finds them gone: fine).
    let objects = rbac_objects();
    manifests::delete(&admin, &objects).await.unwrap();
    manifests::delete(&admin, &objects).await.unwrap();
    let roles: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(admin.client());
    assert!(roles.get_opt("schedlab:agmarl-scheduler").await.unwrap().is_none());
    plane.down().unwrap();
}
