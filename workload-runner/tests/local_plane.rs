//! A real API server (the local control plane, Kubernetes 1.20) accepts the
//! pod `use_workload_image` makes — its Downward API field paths, its
//! security context, its emptyDir — and keeps every part of it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed call fails the test

use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, PostParams};
use kube_backend::objects::{self, PodIdentity};
use kube_backend::{ApiClient, ClientOptions};
use provisioning::local::{LocalOptions, ScopedCluster};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::dist::Dist;
use schedlab_core::pod::{PodId, PodSlot};
use schedlab_core::resources::Resources;
use schedlab_core::testing::{self, PodSpecChanges};

fn pod() -> core::Pod {
    let spec = testing::pod(100, 32 << 20)
        .limits(Resources::new(500, 64 << 20))
        .usage(
            Dist::Const { value: 50.0 },
            Dist::Const {
                value: (16u64 << 20) as f64,
            },
        )
        .crash_rate(4.0);
    let w = testing::workload(0, "svc", spec);
    let ident = PodIdentity {
        pod: PodId(3),
        slot: PodSlot {
            workload: w.id,
            ordinal: 1,
        },
        incarnation: 0,
    };
    let mut pod = objects::pod_object("wl", "default", &ident, &w, 17);
    objects::use_workload_image(&mut pod, "schedlab/workload:dev", 60.0, &ModelConfig::default());
    pod
}

#[test]
fn the_api_server_accepts_the_workload_pod() {
    let plane = ScopedCluster::up(&LocalOptions::private("workload-pod").unwrap()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let api = ApiClient::connect(&ClientOptions {
            kubeconfig: Some(plane.admin_kubeconfig().to_path_buf()),
            ..Default::default()
        })
        .await
        .unwrap();
        let pods: Api<core::Pod> = Api::namespaced(api.client(), "default");
        let sent = pod();
        let made = pods.create(&PostParams::default(), &sent).await.unwrap();
        let (sent_c, made_c) = (
            &sent.spec.as_ref().unwrap().containers[0],
            &made.spec.as_ref().unwrap().containers[0],
        );
        assert_eq!(made_c.env, sent_c.env);
        assert_eq!(made_c.command, sent_c.command);
        assert_eq!(made_c.args, sent_c.args);
        assert_eq!(made_c.volume_mounts.as_ref().map(Vec::len), Some(1));
        let sc = made_c.security_context.as_ref().unwrap();
        assert_eq!(sc.read_only_root_filesystem, Some(true));
        assert_eq!(sc.run_as_non_root, Some(true));
        let spec = made.spec.as_ref().unwrap();
        assert!(
            spec.volumes
                .iter()
                .flatten()
                .any(|v| v.empty_dir.is_some() && v.name == objects::WORKLOAD_STATE_VOLUME)
        );
        assert_eq!(
            spec.security_context.as_ref().and_then(|s| s.fs_group),
            Some(objects::WORKLOAD_UID)
        );

        // the server does check the field paths: a bad one is refused
        let mut bad = pod();
        bad.metadata.name = Some("bad".into());
        let env = bad.spec.as_mut().unwrap().containers[0].env.as_mut().unwrap();
        env[0]
            .value_from
            .as_mut()
            .unwrap()
            .field_ref
            .as_mut()
            .unwrap()
            .field_path = "metadata.annotations['not a key!']".into();
        let err = pods.create(&PostParams::default(), &bad).await.unwrap_err();
        assert!(err.to_string().contains("env[0].valueFrom.fieldRef"), "{err}");
    });
    plane.down().unwrap();
}
