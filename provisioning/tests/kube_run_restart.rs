//! kube-apiserver killed (SIGKILL) and restarted in the middle of a run: the player's
//! requests are retried, its watches resume, and no record is lost — every
//! pod the timeline creates is recorded created and bound exactly once, the
//! churn delete during the outage is carried out, and the run ends.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed API call fails the test

use kube_backend::run::{self, NodeSource, RunOptions};
use kube_backend::{ApiClient, ClientOptions, ScenarioClock};
use provisioning::local::{APISERVER, LocalOptions, ScopedCluster};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::record::DeleteCause;
use schedlab_core::testing::{GI, MI, TimelineBuilder, pod, slot};
use schedlab_core::{Action, EventKind, PodId, Record};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const SCALE: f64 = 60.0;

#[test]
fn a_restarted_apiserver_costs_a_pause_not_a_record() {
    let lopts = LocalOptions::private("kube-run-restart").unwrap();
    let mut plane = ScopedCluster::up(&lopts).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let api = rt
        .block_on(ApiClient::connect(&ClientOptions {
            kubeconfig: Some(plane.admin_kubeconfig().to_path_buf()),
            qps: 200.0,
            burst: 400,
            ..Default::default()
        }))
        .unwrap();
    // pods every scenario minute for 10 minutes (a wall second each); the
    // apiserver dies 3 s in and is back after a second plus its start
    let mut b = TimelineBuilder::new(1200.0)
        .sample_every(60)
        .nodes(3, 8000, 16 * GI)
        .workload("web", pod(200, 128 * MI), true);
    for minute in 0..10 {
        b = b.create(60.0 * f64::from(minute), 0, 3 * minute, 3);
    }
    let t = b
        .at(
            270.0,
            Action::DeletePod {
                slot: slot(0, 0),
                recreate: true,
            },
        )
        .build();
    let run_id = run::new_run_id("kube-restart");
    let opts = RunOptions {
        run: run_id.clone(),
        seed: 1,
        scheduler_name: "default-scheduler".into(),
        clock_scale: SCALE,
        nodes: NodeSource::Emulated,
        model: ModelConfig::default(),
        workload_image: None,
    };
    let prepared = rt.block_on(run::setup(&api, &t, &opts)).unwrap();
    let mut records: Vec<Record> = Vec::new();
    let (played, outage) = std::thread::scope(|s| {
        let restarter = s.spawn(|| {
            std::thread::sleep(Duration::from_secs(3));
            let pid = plane.pids().into_iter().find(|(name, _)| *name == APISERVER).unwrap().1;
            // the process this test started; restart_apiserver reaps it
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
            plane.restart_apiserver(&lopts.cache_dir, Duration::from_secs(1))
        });
        let clock = ScenarioClock::starting_now(SCALE).unwrap();
        let played = rt.block_on(run::play(
            &api,
            &prepared,
            &t,
            &opts,
            clock,
            None,
            &mut records,
            CancellationToken::new(),
        ));
        (played, restarter.join().unwrap())
    });
    let t0 = Instant::now();
    let report = rt.block_on(run::teardown(&api, &run_id)).unwrap();
    let teardown_secs = t0.elapsed().as_secs_f64();
    let summary = played.expect("the run plays through the outage");
    let outage = outage.expect("the apiserver restarts");
    eprintln!("apiserver unavailable {outage:?}; {summary:?}; teardown {teardown_secs:.1}s {report:?}");
    assert!(summary.api_errors_retried > 0, "requests were sent during the outage");

    assert_eq!(records.last(), Some(&Record::End { t: t.end }));
    let mut created: BTreeMap<PodId, u32> = BTreeMap::new();
    let mut bound: BTreeMap<PodId, u32> = BTreeMap::new();
    let mut churned = 0;
    for r in &records {
        if let Record::Event(e) = r {
            match &e.kind {
                EventKind::PodCreated { pod, .. } => *created.entry(*pod).or_default() += 1,
                EventKind::PodBound { pod, .. } => *bound.entry(*pod).or_default() += 1,
                EventKind::PodDeleted {
                    cause: DeleteCause::Churn,
                    ..
                } => churned += 1,
                _ => {}
            }
        }
    }
    // 30 pods and the churned pod's replacement, each created and bound once
    assert_eq!(created.len(), 31, "{records:#?}");
    assert!(created.values().all(|&n| n == 1));
    assert_eq!(bound, created, "every pod bound exactly once");
    assert_eq!(churned, 1);
    assert_eq!(summary.pods_created, 31);
    assert_eq!(report.pods, 31, "{report:?}");
}
