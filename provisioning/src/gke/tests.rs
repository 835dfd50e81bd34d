use super::*;
use schedlab_core::node::{Taint, TaintEffect};
use std::collections::BTreeMap;

fn need(name: &str, count: usize, spot: bool) -> PoolNeed {
    PoolNeed {
        name: name.into(),
        machine_type: "n2-standard-8".into(),
        count,
        hourly_price: if spot { 0.0944 } else { 0.3885 },
        provisioning: if spot {
            Provisioning::Spot
        } else {
            Provisioning::OnDemand
        },
        labels: BTreeMap::from([
            ("tier".to_string(), name.to_string()),
            ("kubernetes.io/hostname".to_string(), format!("{name}-0")),
        ]),
        taints: if spot {
            vec![Taint {
                key: "cloud.google.com/gke-spot".into(),
                value: Some("true".into()),
                effect: TaintEffect::NoSchedule,
            }]
        } else {
            Vec::new()
        },
    }
}

fn opts(provision: bool, keep: bool) -> GkeOptions {
    GkeOptions {
        cluster_name: "schedlab-churn".into(),
        zone: Some("europe-west4-a".into()),
        provision,
        keep,
        kubeconfig: PathBuf::from("/w/kubeconfig"),
    }
}

fn lines(plan: &CommandPlan) -> Vec<String> {
    plan.commands().iter().map(|c| c.shell()).collect()
}

#[test]
fn provision_creates_the_cluster_and_pools_then_deletes() {
    let plan = GkePlan::new(
        vec![need("general", 3, false), need("spot", 1, true)],
        opts(true, false),
    )
    .unwrap();
    let full = plan.plan("the new cluster", CommandPlan::default(), "play 4 runs");
    assert_eq!(
        lines(&full),
        vec![
            "KUBECONFIG=/w/kubeconfig gcloud container clusters create schedlab-churn --zone europe-west4-a \
             --machine-type n2-standard-8 --num-nodes 3 \
             --node-labels=schedlab.io/pool=general,schedlab.io/provisioning=on-demand,tier=general",
            "KUBECONFIG=/w/kubeconfig gcloud container node-pools create spot --cluster schedlab-churn \
             --zone europe-west4-a --machine-type n2-standard-8 --num-nodes 1 \
             --node-labels=schedlab.io/pool=spot,schedlab.io/provisioning=spot,tier=spot \
             --node-taints=cloud.google.com/gke-spot=true:NoSchedule --spot",
            "KUBECONFIG=/w/kubeconfig gcloud container clusters delete schedlab-churn --zone europe-west4-a --quiet",
        ]
    );
    let text = full.render();
    assert!(text.contains("# (in-process) play 4 runs"), "{text}");
    // created before the check and the runs, deleted after
    let create = text.find("clusters create").unwrap();
    let check = text.find("check its node pools").unwrap();
    let delete = text.find("clusters delete").unwrap();
    assert!(create < check && check < delete, "{text}");
}

#[test]
fn provision_with_keep_never_deletes() {
    let plan = GkePlan::new(vec![need("general", 3, false)], opts(true, true)).unwrap();
    let full = plan.plan("c", CommandPlan::default(), "runs");
    let commands = lines(&full);
    assert_eq!(commands.len(), 1);
    assert!(commands[0].contains("clusters create"));
    assert!(plan.delete_command().is_none());
    assert!(full.render().contains("keep GKE cluster schedlab-churn"));
}

#[test]
fn without_provision_no_cluster_is_created_or_deleted() {
    let mut o = opts(false, false);
    o.zone = None;
    let plan = GkePlan::new(vec![need("general", 3, false), need("spot", 1, true)], o).unwrap();
    let full = plan.plan("context gke_p_z_c", CommandPlan::default(), "runs");
    assert!(full.commands().is_empty(), "{:?}", lines(&full));
    let text = full.render();
    assert!(!text.contains("clusters create") && !text.contains("delete"), "{text}");
    assert!(
        text.contains("general (3 × n2-standard-8), spot (1 × n2-standard-8)"),
        "{text}"
    );
    let runner = Arc::new(CommandRunner::dry_run());
    let cluster = GkeCluster::create(plan, runner.clone()).unwrap();
    drop(cluster);
    assert!(runner.commands().is_empty(), "nothing runs without --provision");
}

#[test]
fn the_guard_deletes_a_provisioned_cluster_on_drop() {
    let plan = GkePlan::new(vec![need("general", 2, false)], opts(true, false)).unwrap();
    let runner = Arc::new(CommandRunner::dry_run());
    drop(GkeCluster::create(plan, runner.clone()).unwrap());
    let done: Vec<String> = runner.commands().iter().map(|c| c.shell()).collect();
    assert_eq!(done.len(), 2);
    assert!(
        done[1].contains("gcloud container clusters delete schedlab-churn"),
        "{done:?}"
    );
}

#[test]
fn zones_are_checked() {
    for good in [
        "us-central1-a",
        "europe-west4-b",
        "asia-northeast1-c",
        "northamerica-northeast2-a",
    ] {
        assert!(check_zone(good).is_ok(), "{good}");
    }
    for bad in [
        "us-central1",
        "us-central-a",
        "US-central1-a",
        "europe-west4-ab",
        "",
        "a-b1-c-d",
        "us-1-a",
    ] {
        assert!(
            matches!(check_zone(bad), Err(crate::Error::Gke(GkeError::BadZone(_)))),
            "{bad}"
        );
    }
    let mut o = opts(false, false);
    o.zone = Some("us-central1".into());
    let err = GkePlan::new(vec![need("general", 1, false)], o).unwrap_err();
    assert!(err.is_input_error(), "{err}");
}

#[test]
fn provision_needs_a_zone_and_a_valid_name() {
    let mut o = opts(true, false);
    o.zone = None;
    assert!(matches!(
        GkePlan::new(vec![need("general", 1, false)], o),
        Err(crate::Error::Gke(GkeError::NoZone(_)))
    ));
    let mut o = opts(true, false);
    o.cluster_name = "Schedlab".into();
    assert!(matches!(
        GkePlan::new(vec![need("general", 1, false)], o),
        Err(crate::Error::Gke(GkeError::BadName(_)))
    ));
    assert!(matches!(
        GkePlan::new(Vec::new(), opts(true, false)),
        Err(crate::Error::Gke(GkeError::NoNodes))
    ));
}
