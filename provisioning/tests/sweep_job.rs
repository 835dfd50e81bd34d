//! A sweep's Kubernetes objects as `schedlab sweep run --on kube --dry-run`
//! prints them, compared with golden files in `tests/golden/sweep-job/`:
//! an Indexed Job of 14 cells with a Kueue queue, streaming its results;
//! the same writing to a volume claim; the per-cell shape of 3 cells (as
//! the dry run shows it, and in full). Any difference fails the test.
//!
//! After an intended change, regenerate the golden files with
//! `UPDATE_GOLDEN=1 cargo test -p provisioning --test sweep_job` (the
//! workspace's convention) and review them with `git diff`.
//!
//! One more test brings a private local 1.20 control plane up (as the
//! crate's other control-plane tests do) and checks the server's shape, the
//! permission check for the admin and for an identity that may not submit,
//! and that the API server takes the per-cell objects (a server-side dry
//! run: nothing is created).

use provisioning::local::{LocalOptions, ScopedCluster};
use provisioning::sweep_job::{self, JobShape, PodSettings, SweepJobError, SweepJobSpec, SweepObjects};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn spec(cells: usize) -> SweepJobSpec {
    SweepJobSpec {
        sweep_id: "3f9a2c1b7d4e6a80".into(),
        sweep_name: "Claims Study".into(),
        attempt: 1,
        namespace: "lab".into(),
        plan_files: BTreeMap::from([
            ("plan.json".to_string(), br#"{"cells":14}"#.to_vec()),
            ("scenario.yaml".to_string(), b"nodes: 4\n".to_vec()),
        ]),
        cells: (0..cells).collect(),
        pods: PodSettings {
            image: "europe-docker.pkg.dev/p/schedlab/schedlab:0.1.0".into(),
            image_pull_policy: None,
            parallelism: 4,
            retries_per_cell: 2,
            cpu_millis: 1500,
            memory_bytes: 3 << 30,
            queue_name: Some("team-a".into()),
            volume_claim: None,
            node_selector: BTreeMap::from([("cloud.google.com/gke-nodepool".to_string(), "cells".to_string())]),
        },
    }
}

fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/sweep-job")
        .join(name)
}

/// Compares `actual` with golden file `name`, or writes it under UPDATE_GOLDEN.
fn check_golden(name: &str, actual: &str) {
    let path = golden_path(name);
    let regenerate = "UPDATE_GOLDEN=1 cargo test -p provisioning --test sweep_job";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("golden folder made");
        std::fs::write(&path, actual).expect("golden file written");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; create it with {regenerate}", path.display()));
    if actual == expected {
        return;
    }
    let (line, golden, now) = actual
        .lines()
        .zip(expected.lines())
        .enumerate()
        .find(|(_, (a, e))| a != e)
        .map(|(i, (a, e))| (i + 1, e.to_string(), a.to_string()))
        .unwrap_or_else(|| {
            let at = actual.lines().count().min(expected.lines().count()) + 1;
            let end = |text: &str| text.lines().nth(at - 1).unwrap_or("<end>").to_string();
            (at, end(&expected), end(actual))
        });
    panic!(
        "{} differs from the objects made now, first at line {line}:\n  golden: {golden}\n  now:    {now}\n\
         ({} lines golden, {} now). If the change is intended, regenerate with {regenerate} and review git diff.",
        path.display(),
        expected.lines().count(),
        actual.lines().count(),
    );
}

fn objects(spec: &SweepJobSpec, shape: JobShape) -> SweepObjects {
    sweep_job::objects(spec, shape).expect("a valid spec")
}

#[test]
fn indexed_job_with_a_queue_streaming_its_results() {
    let objects = objects(&spec(14), JobShape::Indexed);
    check_golden("indexed-14-queue.yaml", &objects.to_yaml().unwrap());
}

#[test]
fn indexed_job_with_a_queue_and_a_volume_claim() {
    let mut spec = spec(14);
    spec.pods.volume_claim = Some("sweep-results".into());
    let objects = objects(&spec, JobShape::Indexed);
    check_golden("indexed-14-queue-volume.yaml", &objects.to_yaml().unwrap());
}

#[test]
fn per_cell_jobs_of_three_cells() {
    let mut spec = spec(0);
    spec.cells = vec![2, 5, 11];
    spec.pods.queue_name = None;
    spec.pods.image = "schedlab/schedlab:dev".into();
    spec.pods.image_pull_policy = Some("Never".into());
    spec.pods.node_selector.clear();
    let objects = objects(&spec, JobShape::PerCell);
    check_golden("per-cell-3.yaml", &objects.to_yaml().unwrap());
    check_golden("per-cell-3.full.yaml", &objects.to_yaml_full().unwrap());
}

/// The golden comparison itself fails on a difference, and says how to
/// regenerate (not run under UPDATE_GOLDEN: it would overwrite the file).
#[test]
fn a_changed_object_fails_the_golden_comparison() {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        return;
    }
    let mut changed = spec(14);
    changed.pods.retries_per_cell = 3;
    let text = objects(&changed, JobShape::Indexed).to_yaml().unwrap();
    let failure = std::panic::catch_unwind(|| check_golden("indexed-14-queue.yaml", &text))
        .expect_err("a different object fails");
    let message = failure.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("UPDATE_GOLDEN=1"), "{message}");
    assert!(message.contains("golden:") && message.contains("now:"), "{message}");
}

// --- against a real local control plane (1.20) ---

async fn client(kubeconfig: &Path) -> kube::Client {
    kube_backend::ApiClient::connect(&kube_backend::ClientOptions {
        kubeconfig: Some(kubeconfig.to_path_buf()),
        ..Default::default()
    })
    .await
    .expect("the control plane answers")
    .client()
}

#[test]
fn the_local_control_plane_runs_cells_per_cell_and_lets_its_admin_submit() {
    let plane = ScopedCluster::up(&LocalOptions::private("sweep-job").expect("options")).expect("plane up");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let admin = client(plane.admin_kubeconfig()).await;
        let shape = sweep_job::server_shape(&admin).await.expect("a version");
        assert_eq!(shape, JobShape::PerCell, "the local plane is 1.20");
        sweep_job::preflight(&admin, "default", shape)
            .await
            .expect("the admin may submit");

        // schedlab's scheduler identity reads pods but creates no Jobs.
        let agmarl = client(plane.agmarl_kubeconfig()).await;
        let err = sweep_job::preflight(&agmarl, "default", shape)
            .await
            .expect_err("the scheduler identity may not submit");
        let text = err.to_string();
        eprintln!("{text}");
        assert!(matches!(err, SweepJobError::Forbidden { .. }), "{text}");
        assert!(text.contains("cannot create jobs.batch in namespace default"), "{text}");
        assert!(text.contains("cannot get pods/log in namespace default"), "{text}");
        assert!(!text.contains("cannot list pods in"), "it may list pods: {text}");

        // The API server takes every object as made (server-side dry run).
        let mut spec = spec(0);
        spec.namespace = "default".into();
        spec.cells = vec![0, 7];
        spec.pods.volume_claim = Some("sweep-results".into());
        let made = objects(&spec, shape);
        let dry = kube::api::PostParams {
            dry_run: true,
            ..Default::default()
        };
        kube::Api::namespaced(admin.clone(), "default")
            .create(&dry, &made.service_account)
            .await
            .expect("the ServiceAccount is valid");
        kube::Api::namespaced(admin.clone(), "default")
            .create(&dry, &made.config_map)
            .await
            .expect("the ConfigMap is valid");
        let jobs: kube::Api<k8s_openapi::api::batch::v1::Job> = kube::Api::namespaced(admin.clone(), "default");
        for job in &made.jobs {
            jobs.create(&dry, job).await.expect("the Job is valid on 1.20");
        }
    });
}
