//! Requests drawn per pod slot: common random numbers across expansions,
//! usage and limits that follow each pod's own request, and the checks at load.

mod common;

use common::BASE;
use schedlab_core::{Dist, PodSpec, QosClass, Timeline};
use workloads::parse_str;

const MI: u64 = 1 << 20;

/// BASE with web's requests (and more template fields) replaced.
fn web(requests: &str, more: &str) -> String {
    let from = "    requests: {cpu: 100m, memory: 128Mi}\n";
    assert_eq!(BASE.matches(from).count(), 1);
    BASE.replace(from, &format!("    requests: {requests}\n{more}"))
}

const DRAWN: &str = "{cpu: 100m, memory: {lognormal: {median: 256Mi, sigma: 0.4}}}";

fn specs(t: &Timeline) -> &[PodSpec] {
    &t.workloads[0].slot_specs
}

fn memory(t: &Timeline) -> Vec<u64> {
    specs(t).iter().map(|s| s.requests.memory_bytes).collect()
}

#[test]
fn every_expansion_of_a_seed_draws_the_same_requests_for_the_same_pod() {
    let s = parse_str("my.yaml", &web(DRAWN, "")).unwrap();
    let (a, b) = (s.expand(7), s.expand(7));
    assert_eq!(specs(&a).len(), 10, "one spec per slot");
    assert_eq!(memory(&a), memory(&b));
    assert_eq!(a, b);
    // slots draw apart, and another seed draws other requests
    let m = memory(&a);
    let distinct: std::collections::BTreeSet<u64> = m.iter().copied().collect();
    assert_eq!(distinct.len(), m.len(), "{m:?}");
    assert_ne!(m, memory(&s.expand(8)));
    // the cpu request is constant, as written
    assert!(specs(&a).iter().all(|p| p.requests.cpu_milli == 100));
    // the template's own spec shows the median
    assert_eq!(a.workloads[0].spec.requests.memory_bytes, 256 * MI);
}

#[test]
fn a_pods_draw_depends_on_its_template_and_slot_only() {
    let one = parse_str("my.yaml", &web(DRAWN, "")).unwrap().expand(3);
    // another template before it (by name) and more pods of web: the first
    // ten slots keep their requests
    let more = web(DRAWN, "  aaa:\n    requests: {cpu: 100m, memory: 64Mi}\n")
        .replace("count: 10}", "count: 20}")
        .replace("phases:\n", "phases:\n  - create: {template: aaa, count: 3}\n");
    let two = parse_str("my.yaml", &more).unwrap().expand(3);
    let w = two.workloads.iter().find(|w| w.name == "web").unwrap();
    let first: Vec<u64> = w.slot_specs[..10].iter().map(|s| s.requests.memory_bytes).collect();
    assert_eq!(first, memory(&one));
}

#[test]
fn usage_follows_each_pods_own_request() {
    // by default a pod uses what it requests: its own drawn request
    let t = parse_str("my.yaml", &web(DRAWN, "")).unwrap().expand(1);
    for p in specs(&t) {
        assert_eq!(
            p.behaviour.memory_usage,
            Dist::Const {
                value: p.requests.memory_bytes as f64
            }
        );
    }
    // usage_ratio: a multiple of the pod's own request
    let ratio = "    usage_ratio: {memory: {lognormal: {median: 0.9, sigma: 0.2}}}\n";
    let t = parse_str("my.yaml", &web(DRAWN, ratio)).unwrap().expand(1);
    for p in specs(&t) {
        let Dist::LogNormal { median, sigma } = p.behaviour.memory_usage else {
            panic!("{:?}", p.behaviour.memory_usage);
        };
        assert!((median - 0.9 * p.requests.memory_bytes as f64).abs() < 1.0);
        assert_eq!(sigma, 0.2);
    }
    // a written usage stays as written, whatever the pod requests
    let written = "    usage: {memory: 200Mi}\n";
    let t = parse_str("my.yaml", &web(DRAWN, written)).unwrap().expand(1);
    for p in specs(&t) {
        assert_eq!(
            p.behaviour.memory_usage,
            Dist::Const {
                value: (200 * MI) as f64
            }
        );
    }
}

#[test]
fn usage_ratio_works_with_constant_requests_too() {
    let s = parse_str(
        "my.yaml",
        &web("{cpu: 100m, memory: 128Mi}", "    usage_ratio: {cpu: 0.5}\n"),
    )
    .unwrap();
    let t = s.expand(1);
    assert!(
        t.workloads[0].slot_specs.is_empty(),
        "constant requests: one spec for all"
    );
    assert_eq!(t.workloads[0].spec.behaviour.cpu_usage, Dist::Const { value: 50.0 });
    assert_eq!(
        s.resolved()["templates"]["web"]["usage_ratio"]["cpu"],
        serde_json::json!("0.5")
    );
}

#[test]
fn limits_keep_their_ratio_to_the_median_request() {
    let t = parse_str("my.yaml", &web(DRAWN, "    limits: {memory: 512Mi}\n"))
        .unwrap()
        .expand(1);
    for p in specs(&t) {
        let limit = p.limits.unwrap().memory_bytes;
        assert_eq!(limit, (p.requests.memory_bytes as f64 * 2.0).round() as u64);
    }
    // limits equal to the median stay equal to each pod's request: Guaranteed
    let guaranteed = web(
        "{cpu: 100m, memory: {uniform: {min: 100Mi, max: 300Mi}}}",
        "    limits: {cpu: 100m, memory: 200Mi}\n",
    );
    let t = parse_str("my.yaml", &guaranteed).unwrap().expand(1);
    for p in specs(&t) {
        assert_eq!(p.qos_class(), QosClass::Guaranteed, "{p:?}");
        assert!((100 * MI..=300 * MI).contains(&p.requests.memory_bytes));
    }
}

#[test]
fn a_limit_below_the_median_request_is_refused() {
    let e = parse_str("my.yaml", &web(DRAWN, "    limits: {memory: 200Mi}\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("templates.web.limits.memory = 200Mi: below the request's median (256Mi)"),
        "{e}"
    );
}

#[test]
fn draws_are_capped_where_validation_checked_they_fit() {
    // allocatable 16Gi; median 4Gi, sigma 0.4: the 99.9th percentile is
    // 4Gi * e^(3.09 * 0.4) = 13.8Gi, which fits
    let text = web("{cpu: 100m, memory: {lognormal: {median: 4Gi, sigma: 0.4}}}", "")
        .replace("count: 10}", "count: 2000}")
        .replace("nodes: 3", "nodes: 600");
    let s = parse_str("my.yaml", &text).unwrap();
    let cap = (4.0 * (1u64 << 30) as f64 * (3.09f64 * 0.4).exp()).round() as u64;
    let m = memory(&s.expand(1));
    assert!(m.iter().all(|&x| x <= cap));
    // sigma 0.6: 4Gi * e^1.854 = 25.6Gi, which fits no node
    let e = parse_str("my.yaml", &text.replace("sigma: 0.4", "sigma: 0.6"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("templates.web.requests = {cpu: 100m, memory: {lognormal: {median: 4Gi, sigma: 0.6}}}"),
        "{e}"
    );
    assert!(e.contains("the largest pod it may draw"), "{e}");
    assert!(e.contains("pool small allocates only cpu 4 and memory 16Gi"), "{e}");
}

#[test]
fn usage_and_usage_ratio_for_one_resource_are_refused() {
    let e = parse_str(
        "my.yaml",
        &web(DRAWN, "    usage: {memory: 100Mi}\n    usage_ratio: {memory: 0.8}\n"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("templates.web.usage_ratio.memory = 0.8: give usage.memory or usage_ratio.memory, not both"),
        "{e}"
    );
}

#[test]
fn the_resolved_scenario_draws_the_same_pods() {
    let text = web(
        DRAWN,
        "    limits: {memory: 512Mi}\n    usage_ratio: {memory: {normal: {mean: 0.9, std: 0.1}}}\n",
    );
    let s = parse_str("my.yaml", &text).unwrap();
    let resolved = s.resolved();
    assert_eq!(
        resolved["templates"]["web"]["requests"]["memory"],
        serde_json::json!({"lognormal": {"median": "256Mi", "sigma": 0.4}})
    );
    assert!(resolved["templates"]["web"]["usage"].get("memory").is_none());
    let again = parse_str("resolved.json", &resolved.to_string()).unwrap();
    assert_eq!(again.expand(5), s.expand(5));
}

#[test]
fn constant_requests_cost_no_spec_per_pod() {
    let t = parse_str("my.yaml", BASE).unwrap().expand(1);
    assert!(t.workloads.iter().all(|w| w.slot_specs.is_empty()));
}
