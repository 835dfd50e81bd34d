//! The monolithic foil as the in-cluster scheduler, against a private local
//! control plane with the scheduler service account's token: a DRS network
//! trained for another cluster size is refused before anything is bound,
//! naming the file and both sizes; the network of the cluster's size binds
//! every pod, and its decisions are counted in /metrics.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::PathBuf;
use std::time::Duration;
use support::*;

const RUN: &str = "drs";
const WITHIN: Duration = Duration::from_secs(30);

fn bundled(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scheduler/checkpoints/drs")
        .join(format!("{name}.safetensors"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drs_network_schedules_only_the_cluster_size_it_was_trained_for() {
    let AccountLab {
        plane: _plane,
        admin,
        tmp,
        kubeconfig,
    } = account_lab("agmarl-drs").await;
    lab(&admin, RUN, 10).await;
    let names = create_pods(&admin, RUN, 0..12).await;

    // --- trained for 40 nodes, the cluster has 10: refused, nothing bound
    let forty = bundled("drs-n40");
    let forty_text = forty.display().to_string();
    let mut refused = Replica::start_with(
        tmp.path(),
        &kubeconfig,
        RUN,
        "replica-40",
        "4s",
        &["--drs-checkpoint", &forty_text],
    );
    let code = refused.wait_exit(WITHIN);
    assert_eq!(code, Some(2), "a network of another size is bad input");
    let log = refused.log_text();
    assert!(
        log.contains(&forty_text) && log.contains("trained for 40 nodes") && log.contains("has 10"),
        "{log}"
    );
    assert_eq!(node_names(&admin, RUN).await.values().flatten().count(), 0);

    // --- trained for 10: every pod bound, each decision counted
    let ten = bundled("drs-n10").display().to_string();
    let replica = Replica::start_with(
        tmp.path(),
        &kubeconfig,
        RUN,
        "replica-10",
        "4s",
        &["--drs-checkpoint", &ten],
    );
    wait_leader(&admin, &["replica-10"], WITHIN).await;
    wait_bound(&admin, RUN, &names, WITHIN).await;
    let decisions = replica.metric("agmarl_decisions_total").await.unwrap();
    assert!(decisions >= names.len() as f64, "{decisions}");
    assert!(
        replica.log_text().contains("the monolithic foil"),
        "{}",
        replica.log_text()
    );
}
