//! Every kind of bad scenario gives one precise line naming the origin, the
//! field path and the offending value.

mod common;

use common::{BASE, base_plus, base_with};
use workloads::{ScenarioError, parse_str, parse_str_with};

fn err(text: &str) -> String {
    let e = parse_str("my.yaml", text).expect_err("the scenario should be rejected");
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "not one line: {msg}");
    assert!(msg.starts_with("scenario my.yaml: "), "no origin: {msg}");
    msg
}

/// Asserts the message holds each of `parts`.
#[track_caller]
fn assert_mentions(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "{p:?} missing from: {msg}");
    }
}

#[test]
fn the_base_scenario_is_valid() {
    parse_str("my.yaml", BASE).unwrap();
}

#[test]
fn unknown_field() {
    let msg = err(&base_with(
        "      hourly_price: 0.1\n",
        "      hourly_price: 0.1\n      hourly_prize: 2\n",
    ));
    assert_mentions(
        &msg,
        &[
            "cluster.pools[0].hourly_prize",
            "unknown field `hourly_prize`",
            "line 12",
        ],
    );
    let msg = err(&base_plus("  - wait: 1m\n    at: 2m\n    extra: 1\n"));
    assert_mentions(&msg, &["phases[1].extra", "unknown field `extra`"]);
    let msg = err(&base_with(
        "{template: web, count: 10}",
        "{template: web, count: 10, sped: 3}",
    ));
    assert_mentions(&msg, &["phases[0].create.sped", "unknown field `sped`"]);
}

#[test]
fn wrong_type() {
    let msg = err(&base_with("count: 10}", "count: [10]}"));
    assert_mentions(&msg, &["phases[0].create.count", "invalid type: sequence", "line 17"]);
    let msg = err(&base_with("count: 10}", "count: ten}"));
    assert_mentions(
        &msg,
        &["phases[0].create.count = ten", "expected a non-negative integer"],
    );
    let msg = err(&base_with("hourly_price: 0.1", "hourly_price: cheap"));
    assert_mentions(
        &msg,
        &["cluster.pools[0].hourly_price = cheap", "expected a number", "line 11"],
    );
    let msg = err(&base_with("cluster:\n  pools:", "cluster:\n  pools: 3\n  unused:"));
    assert!(msg.contains("cluster.pools") || msg.contains("cluster"), "{msg}");
}

#[test]
fn negative_count() {
    let msg = err(&base_with("count: 10}", "count: -3}"));
    assert_mentions(
        &msg,
        &[
            "phases[0].create.count = -3: expected a non-negative integer",
            "(line 17, column",
        ],
    );
}

#[test]
fn zero_or_negative_where_positive_is_needed() {
    let msg = err(&base_with("duration: 30m", "duration: 0s"));
    assert_mentions(&msg, &["duration = 0s", "must be longer than zero"]);
    let msg = err(&base_with("duration: 30m", "duration: -5m"));
    assert_mentions(&msg, &["duration = -5m", "negative"]);
    let msg = err(&base_with("count: 10}", "count: 10, rate: 0}"));
    assert_mentions(&msg, &["phases[0].create.rate = 0", "more than zero"]);
    let msg = err(&base_with("{cpu: 4, memory: 16Gi}", "{cpu: 0, memory: 16Gi}"));
    assert_mentions(&msg, &["cluster.pools[0].capacity.cpu = 0", "more than zero"]);
    let msg = err(&base_plus("  - wait: 0s\n"));
    assert_mentions(&msg, &["phases[1].wait = 0s", "longer than zero"]);
    let msg = err(&base_plus(
        "  - churn: {template: web, fraction: 0.1, every: 0s, for: 5m}\n",
    ));
    assert_mentions(&msg, &["phases[1].churn.every = 0s", "longer than zero"]);
}

#[test]
fn unknown_template_and_pool() {
    let msg = err(&base_with("{template: web,", "{template: webb,"));
    assert_mentions(
        &msg,
        &[
            "phases[0].create.template = webb",
            "no template has this name (templates: web)",
        ],
    );
    let msg = err(&base_plus("  - fail_nodes: {count: 1, pool: gpu}\n"));
    assert_mentions(
        &msg,
        &[
            "phases[1].fail_nodes.pool = gpu",
            "no pool has this name (pools: small)",
        ],
    );
}

#[test]
fn bad_distribution() {
    let msg = err(&base_with(
        "{cpu: 100m, memory: 128Mi}\n",
        "{cpu: 100m, memory: 128Mi}\n    usage:\n      cpu: {uniform: {min: 500m, max: 200m}}\n",
    ));
    assert_mentions(
        &msg,
        &[
            "templates.web.usage.cpu = {uniform: {min: 500m, max: 200m}}",
            "must not exceed max",
            "line 17",
        ],
    );
    let msg = err(&base_with(
        "{cpu: 100m, memory: 128Mi}\n",
        "{cpu: 100m, memory: 128Mi}\n    run: {lognormal: {median: 0s, sigma: 0.5}}\n",
    ));
    assert_mentions(&msg, &["templates.web.run", "median must be > 0"]);
    let msg = err(&base_with(
        "{cpu: 100m, memory: 128Mi}\n",
        "{cpu: 100m, memory: 128Mi}\n    usage: {memory: {normal: {mean: 1Gi, std: -3}}}\n",
    ));
    assert_mentions(&msg, &["templates.web.usage.memory.normal.std = -3", "negative"]);
    let msg = err(&base_with(
        "{cpu: 100m, memory: 128Mi}\n",
        "{cpu: 100m, memory: 128Mi}\n    usage: {memory: {poisson: {mean: 1}}}\n",
    ));
    assert_mentions(&msg, &["templates.web.usage.memory", "unknown variant `poisson`"]);
    // a spread whose draws overflow or underflow cannot mean what it says
    for (sigma, shown) in [("30", "30"), ("1e6", "1000000"), ("-0.1", "-0.1"), ("4.01", "4.01")] {
        let msg = err(&base_with(
            "{cpu: 100m, memory: 128Mi}\n",
            &format!(
                "{{cpu: 100m, memory: 128Mi}}\n    usage: {{memory: {{lognormal: {{median: 100Mi, sigma: {sigma}}}}}}}\n"
            ),
        ));
        assert_mentions(
            &msg,
            &[
                &format!("templates.web.usage.memory.lognormal.sigma = {shown}"),
                "must be in 0..=4",
            ],
        );
    }
}

#[test]
fn a_zero_limit_is_refused_rather_than_read_as_no_limit() {
    for (limits, field) in [
        ("{cpu: 0, memory: 0}", "cpu"),
        ("{cpu: 200m, memory: 0}", "memory"),
        ("{cpu: 0m}", "cpu"),
        ("{memory: 0Mi}", "memory"),
    ] {
        let msg = err(&base_with(
            "{cpu: 100m, memory: 128Mi}\n",
            &format!("{{cpu: 100m, memory: 128Mi}}\n    limits: {limits}\n"),
        ));
        assert_mentions(
            &msg,
            &[&format!("templates.web.limits.{field}"), "a limit must be above 0"],
        );
    }
    // a limit below the request is still its own error
    let msg = err(&base_with(
        "{cpu: 100m, memory: 128Mi}\n",
        "{cpu: 100m, memory: 128Mi}\n    limits: {cpu: 1m}\n",
    ));
    assert_mentions(&msg, &["templates.web.limits.cpu = 1m", "below the request"]);
}

#[test]
fn expression_with_unknown_param_or_division_by_zero() {
    let msg = err(&base_with("count: 10}", "count: \"${nodez * 2}\"}"));
    assert_mentions(
        &msg,
        &[
            "phases[0].create.count = ${nodez * 2}",
            "unknown param `nodez`",
            "gap=5m, nodes=3",
        ],
    );
    let msg = err(&base_with("count: 10}", "count: \"${nodes / (nodes - 3)}\"}"));
    assert_mentions(
        &msg,
        &["phases[0].create.count = ${nodes / (nodes - 3)}", "division by zero"],
    );
    let msg = err(&base_with("count: 10}", "count: \"${nodes *}\"}"));
    assert_mentions(&msg, &["phases[0].create.count = ${nodes *}", "expected a number"]);
    let msg = err(&base_with("count: 10}", "count: \"${gap * 2}\"}"));
    assert_mentions(&msg, &["phases[0].create.count", "param `gap` is the string"]);
}

#[test]
fn bad_overrides() {
    let e = parse_str_with("my.yaml", BASE, &["nodez=4".into()])
        .unwrap_err()
        .to_string();
    assert_mentions(
        &e,
        &[
            "scenario my.yaml: --set nodez=4",
            "no param `nodez`",
            "known params: gap=5m, nodes=3",
        ],
    );
    let e = parse_str_with("my.yaml", BASE, &["nodes=many".into()])
        .unwrap_err()
        .to_string();
    assert_mentions(&e, &["--set nodes=many", "not a number", "known params"]);
    // a text param takes any text, which is then checked where it is used
    let e = parse_str_with(
        "my.yaml",
        &base_with("count: 10}", "count: 10, over: \"${gap}\"}"),
        &["gap=soon".into()],
    )
    .unwrap_err()
    .to_string();
    assert_mentions(&e, &["phases[0].create.over = ${gap} (= soon)", "not a duration"]);
    let e = workloads::load("churn", &["nodes=lots".into()])
        .unwrap_err()
        .to_string();
    assert_mentions(&e, &["scenario builtin:churn: --set nodes=lots", "nodes=40"]);
}

#[test]
fn template_that_fits_on_no_node() {
    let msg = err(&base_with("{cpu: 100m, memory: 128Mi}", "{cpu: 6, memory: 128Mi}"));
    assert_mentions(
        &msg,
        &[
            "templates.web.requests = {cpu: 6, memory: 128Mi}",
            "fits on no node",
            "pool small allocates only cpu 4",
        ],
    );
    let tainted = base_with(
        "      capacity: {cpu: 4, memory: 16Gi}\n",
        "      capacity: {cpu: 4, memory: 16Gi}\n      taints: [{key: gpu, effect: NoSchedule}]\n",
    );
    let msg = err(&tainted);
    assert_mentions(
        &msg,
        &["templates.web.requests", "pool small has the taint gpu:NoSchedule"],
    );
    // tolerating it fixes it; a PreferNoSchedule taint never blocks
    parse_str(
        "my.yaml",
        &tainted.replace(
            "{cpu: 100m, memory: 128Mi}\n",
            "{cpu: 100m, memory: 128Mi}\n    tolerations: [{key: gpu, operator: Exists}]\n",
        ),
    )
    .unwrap();
    parse_str(
        "my.yaml",
        &tainted.replace("effect: NoSchedule", "effect: PreferNoSchedule"),
    )
    .unwrap();
}

#[test]
fn more_nodes_to_fail_than_exist() {
    let msg = err(&base_plus("  - fail_nodes: {count: 4}\n"));
    assert_mentions(
        &msg,
        &[
            "phases[1].fail_nodes.count = 4",
            "more nodes than exist: the cluster has 3",
        ],
    );
    let msg = err(&base_plus(
        "  - degrade_nodes: {count: \"${nodes + 1}\", pool: small}\n",
    ));
    assert_mentions(
        &msg,
        &["phases[1].degrade_nodes.count = ${nodes + 1} (= 4)", "pool small has 3"],
    );
}

#[test]
fn more_pods_to_kill_than_exist() {
    let msg = err(&base_plus("  - kill_pods: {template: web, count: 11}\n"));
    assert_mentions(
        &msg,
        &[
            "phases[1].kill_pods.count = 11",
            "only 10 pods of template web exist at 0s",
        ],
    );
    let msg = err(&base_plus(
        "  - delete_pods: {template: web, count: 4}\n  - kill_pods: {template: web, count: 7}\n",
    ));
    assert_mentions(&msg, &["phases[2].kill_pods.count = 7", "only 6 pods"]);
}

#[test]
fn fraction_outside_zero_to_one() {
    for bad in ["1.5", "-0.1"] {
        let msg = err(&base_plus(&format!(
            "  - churn: {{template: web, fraction: {bad}, every: 1m, for: 5m}}\n"
        )));
        assert_mentions(&msg, &[&format!("phases[1].churn.fraction = {bad}"), "between 0 and 1"]);
    }
}

#[test]
fn empty_cluster() {
    let msg = err(&base_with("count: ${nodes}", "count: 0"));
    assert_mentions(&msg, &["cluster.pools", "the cluster is empty"]);
    let e = parse_str_with("my.yaml", BASE, &["nodes=0".into()])
        .unwrap_err()
        .to_string();
    assert_mentions(&e, &["cluster.pools", "empty"]);
}

#[test]
fn size_caps() {
    let e = parse_str_with("my.yaml", BASE, &["nodes=100001".into()])
        .unwrap_err()
        .to_string();
    assert_mentions(
        &e,
        &["cluster.pools[0].count = ${nodes} (= 100001)", "more than 100000 nodes"],
    );
    let msg = err(&base_with("count: 10}", "count: 10000001}"));
    assert_mentions(&msg, &["phases[0].create.count = 10000001", "more than 10000000 pods"]);
    let msg = err(&base_plus(
        "  - churn: {template: web, fraction: 0.1, every: 1ms, for: 2h}\n",
    ));
    assert_mentions(&msg, &["phases[1].churn.every = 1ms", "churn rounds"]);
}

#[test]
fn phases_past_the_end() {
    let msg = err(&base_plus("  - at: 30m\n    kill_pods: {template: web, count: 1}\n"));
    assert_mentions(&msg, &["phases[1].at = 30m", "at or after the scenario's end (30m)"]);
    let msg = err(&base_plus("  - wait: 40m\n  - kill_pods: {template: web, count: 1}\n"));
    assert_mentions(&msg, &["phases[2].kill_pods", "starts at 40m", "scenario's end (30m)"]);
}

#[test]
fn pacing_and_limits() {
    let msg = err(&base_with("count: 10}", "count: 10, rate: 1, over: 1m}"));
    assert_mentions(&msg, &["phases[0].create", "at most one of rate, over and ramp"]);
    let msg = err(&base_with("count: 10}", "count: 10, ramp: {from: 0, to: 0}}"));
    assert_mentions(&msg, &["phases[0].create.ramp.to = 0", "cannot both be zero"]);
    let msg = err(&base_with(
        "{cpu: 100m, memory: 128Mi}\n",
        "{cpu: 100m, memory: 128Mi}\n    limits: {memory: 64Mi}\n",
    ));
    assert_mentions(
        &msg,
        &["templates.web.limits.memory = 64Mi", "below the request (128Mi)"],
    );
}

#[test]
fn bad_quantities_names_and_words() {
    let msg = err(&base_with("memory: 16Gi}", "memory: 16GB}"));
    assert_mentions(
        &msg,
        &["cluster.pools[0].capacity.memory = 16GB", "unknown memory suffix"],
    );
    let msg = err(&base_with("name: small", "name: Small_Pool"));
    assert_mentions(&msg, &["cluster.pools[0].name = Small_Pool", "not a valid name"]);
    let msg = err(&base_with(
        "      hourly_price: 0.1\n",
        "      hourly_price: 0.1\n      provisioning: spto\n",
    ));
    assert_mentions(
        &msg,
        &[
            "cluster.pools[0].provisioning = spto",
            "expected one of on-demand, spot",
        ],
    );
    let msg = err(&base_with(
        "{cpu: 100m, memory: 128Mi}\n",
        "{cpu: 100m, memory: 128Mi}\n    restart_policy: always\n",
    ));
    assert_mentions(
        &msg,
        &["templates.web.restart_policy = always", "Always, OnFailure, Never"],
    );
}

#[test]
fn yaml_problems() {
    let msg = err(&base_with("duration: 30m\n", "duration: 30m\nduration: 40m\n"));
    assert_mentions(&msg, &["duplicate mapping key: duration (line 6, column 1)"]);
    assert!(!msg.contains("DuplicateKeyPolicy"), "{msg}");
    let msg = err(&base_plus("  - wait: 1m\n    create: {template: web, count: 1}\n"));
    assert_mentions(&msg, &["phases[1]", "exactly one kind"]);
    let msg = err("name: [unclosed\n");
    assert!(msg.contains("line 1") || msg.contains("line 2"), "{msg}");
    let msg = err("");
    assert!(msg.len() > "scenario my.yaml: ".len(), "{msg}");
    let msg = err("name: t\n");
    assert_mentions(&msg, &["missing field"]);
}

#[test]
fn unknown_scenario_lists_the_builtins() {
    let e = workloads::load("chrun", &[]).unwrap_err();
    assert!(matches!(e, ScenarioError::UnknownScenario { .. }));
    assert_mentions(
        &e.to_string(),
        &["unknown scenario `chrun`", "built-ins: pressure, churn"],
    );
}

#[test]
fn errors_from_a_file_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.yaml");
    std::fs::write(&path, base_with("count: 10}", "count: -3}")).unwrap();
    let p = path.to_str().unwrap();
    let e = workloads::load(p, &[]).unwrap_err();
    assert_eq!(e.origin(), Some(p));
    assert_eq!(e.path(), Some("phases[0].create.count"));
    assert_eq!(e.location().map(|l| l.line), Some(17));
    assert!(
        e.to_string().starts_with(&format!(
            "scenario {p}: phases[0].create.count = -3: expected a non-negative integer"
        )),
        "{e}"
    );
    // a directory is not a scenario file
    let e = workloads::load(dir.path().to_str().unwrap(), &[]).unwrap_err();
    assert!(matches!(e, ScenarioError::Read { .. }), "{e}");
}

#[test]
fn substitution_cannot_blow_a_small_file_up_into_huge_texts() {
    // a 10 KB string parameter repeated 100 times: a 1 MB description
    let big = "x".repeat(10_000);
    let repeated = "${big}".repeat(100);
    let yaml = base_with("  gap: 5m\n", &format!("  gap: 5m\n  big: {big}\n")).replacen(
        "duration: 30m\n",
        &format!("description: \"{repeated}\"\nduration: 30m\n"),
        1,
    );
    let msg = err(&yaml);
    assert_mentions(
        &msg,
        &[
            "description",
            "after `${...}` substitution is longer than 65536 bytes",
            "capped at 64 KiB",
        ],
    );
    // the text stops growing at the cap: a 60 KB string repeated 100,000
    // times (a 600 KB file) would be 6 GB built in full
    let big = "x".repeat(60_000);
    let repeated = "${big}".repeat(100_000);
    let yaml = base_with("  gap: 5m\n", &format!("  gap: 5m\n  big: {big}\n")).replacen(
        "duration: 30m\n",
        &format!("description: \"{repeated}\"\nduration: 30m\n"),
        1,
    );
    assert_mentions(
        &err(&yaml),
        &["description", "longer than 65536 bytes", "capped at 64 KiB"],
    );
    // a label or taint value longer than Kubernetes allows
    let long = "v".repeat(64);
    let msg = err(&base_with(
        "      capacity: {cpu: 4, memory: 16Gi}\n",
        &format!("      capacity: {{cpu: 4, memory: 16Gi}}\n      labels: {{tier: {long}}}\n"),
    ));
    assert_mentions(&msg, &["cluster.pools[0].labels.tier", "64 characters", "at most 63"]);
    let msg = err(&base_with(
        "      capacity: {cpu: 4, memory: 16Gi}\n",
        &format!(
            "      capacity: {{cpu: 4, memory: 16Gi}}\n      taints: [{{key: k, value: {long}, effect: NoSchedule}}]\n"
        ),
    ));
    assert_mentions(&msg, &["taints[0].value", "at most 63"]);
    // 63 characters are fine
    let ok = base_with(
        "      capacity: {cpu: 4, memory: 16Gi}\n",
        &format!(
            "      capacity: {{cpu: 4, memory: 16Gi}}\n      labels: {{tier: {}}}\n",
            "v".repeat(63)
        ),
    );
    assert!(parse_str("ok.yaml", &ok).is_ok());
}
