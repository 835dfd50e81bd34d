//! The A/B summary: statistics across seeds and the shape of every output.

mod common;

use common::*;
use results::definitions::{CORRELATIONS, METRICS};
use results::summary::{RunResult, Summary};

fn run(arm: &str, seed: u64, crashes: u32) -> RunResult {
    RunResult {
        arm: arm.to_string(),
        seed,
        training_run: None,
        metrics: metrics_of(&synthetic_run(seed, crashes)).expect("synthetic runs are consistent"),
        correlations: None,
    }
}

/// Two arms over three seeds, given out of order; `binpack` crashes more.
fn two_arms() -> Vec<RunResult> {
    vec![
        run("default", 3, 1),
        run("binpack", 1, 3),
        run("default", 1, 0),
        run("binpack", 2, 4),
        run("default", 2, 1),
        run("binpack", 3, 2),
    ]
}

fn assert_no_nan(text: &str) {
    assert!(
        !text.contains("NaN") && !text.contains("nan") && !text.contains("inf"),
        "{text}"
    );
}

#[test]
fn arms_in_first_seen_order_runs_by_seed() {
    let s = Summary::new("churn", two_arms(), 42);
    let arms: Vec<&str> = s.arms().iter().map(|a| a.arm.as_str()).collect();
    assert_eq!(arms, ["default", "binpack"]);
    assert_eq!(s.arms()[0].seeds(), [1, 2, 3]);
    assert_eq!(s.arms()[0].metrics.len(), METRICS.len());
}

#[test]
fn mean_std_and_interval_over_seeds() {
    let runs = two_arms();
    let restarts_default: Vec<f64> = {
        let mut v: Vec<_> = runs.iter().filter(|r| r.arm == "default").collect();
        v.sort_by_key(|r| r.seed);
        v.iter().map(|r| r.metrics.value("restarts").unwrap()).collect()
    };
    let s = Summary::new("churn", runs, 42);
    let m = s.arm("default").unwrap().metric("restarts").unwrap();
    let e = m.estimate.unwrap();
    let mean = restarts_default.iter().sum::<f64>() / 3.0;
    assert_eq!(e.n, 3);
    assert!((e.mean - mean).abs() < 1e-12);
    let var = restarts_default.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 2.0;
    assert!((e.std.unwrap() - var.sqrt()).abs() < 1e-12);
    assert!(e.ci.contains(e.mean), "{e:?}");
    let (lo, hi) = restarts_default
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    assert!(e.ci.low >= lo && e.ci.high <= hi);
    assert_eq!(m.values.iter().map(|(seed, _)| *seed).collect::<Vec<_>>(), [1, 2, 3]);
}

/// summary.json is serialised from views, not from a `Value` (which took ~90 KB a run); the text
/// is the one a `Value`'s sorted maps give, so a view's fields must stay in alphabetical order.
#[test]
fn the_written_summary_is_the_json_value_as_text() {
    let s = Summary::new("churn", two_arms(), 7);
    let text = s.json_document().to_pretty_text().unwrap();
    assert_eq!(text, serde_json::to_string_pretty(&s.to_json()).unwrap() + "\n");
    let mut partial = s.json_document();
    partial.incomplete = Some("INCOMPLETE: 1 of 2 runs".into());
    partial.skipped_runs = Some(serde_json::json!([{"arm": "default", "seed": 2, "reason": "gone"}]));
    let mut value = s.to_json();
    value["incomplete"] = "INCOMPLETE: 1 of 2 runs".into();
    value["skipped_runs"] = serde_json::json!([{"arm": "default", "seed": 2, "reason": "gone"}]);
    assert_eq!(
        partial.to_pretty_text().unwrap(),
        serde_json::to_string_pretty(&value).unwrap() + "\n"
    );
}

#[test]
fn reproducible_for_a_stats_seed() {
    let a = Summary::new("churn", two_arms(), 7);
    let b = Summary::new("churn", two_arms(), 7);
    assert_eq!(a.to_json(), b.to_json());
    assert_eq!(a.to_csv(), b.to_csv());
    assert_eq!(a.to_markdown(), b.to_markdown());
    // With 3 seeds a 95% percentile interval is the range of the values
    // whatever the resamples; with 10 it depends on which were drawn.
    let many = || {
        (1..=10)
            .map(|seed| run("a", seed, (seed * 7 % 5) as u32))
            .collect::<Vec<_>>()
    };
    let c = Summary::new("churn", many(), 7);
    let d = Summary::new("churn", many(), 8);
    assert_eq!(c.to_csv(), Summary::new("churn", many(), 7).to_csv());
    assert_ne!(c.to_csv(), d.to_csv(), "another stats seed resamples differently");
}

#[test]
fn csv_shape() {
    let s = Summary::new("churn", two_arms(), 1);
    let csv = s.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("arm,metric,unit,n,mean,ci_low,ci_high,std,"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[0], results::summary::CSV_HEADER);
    let columns = lines[0].split(',').count();
    assert_eq!(lines.len(), 1 + 2 * METRICS.len());
    for arm in ["default", "binpack"] {
        for d in METRICS {
            let row = lines
                .iter()
                .find(|l| l.starts_with(&format!("{arm},{},", d.key)))
                .unwrap_or_else(|| panic!("no row for {arm} {}", d.key));
            assert_eq!(row.split(',').count(), columns, "{row}");
        }
    }
    assert_no_nan(&csv);
}

#[test]
fn json_shape() {
    let s = Summary::new("churn", two_arms(), 1);
    let j = s.to_json();
    assert_eq!(j["scenario"], "churn");
    assert_eq!(j["arms"].as_array().unwrap().len(), 2);
    let arm = &j["arms"][1];
    assert_eq!(arm["arm"], "binpack");
    assert_eq!(arm["seeds"], serde_json::json!([1, 2, 3]));
    for d in METRICS {
        let m = &arm["metrics"][d.key];
        assert_eq!(m["values"].as_array().unwrap().len(), 3, "{}", d.key);
        for field in ["n", "mean", "std", "ci_low", "ci_high", "unit", "undefined"] {
            assert!(m.get(field).is_some(), "{} lacks {field}", d.key);
        }
    }
    let corr = arm["correlations"].as_array().unwrap();
    assert_eq!(corr.len(), 3);
    assert!(corr[0]["n"].as_u64().unwrap() >= 4);
    assert!(corr[0]["pearson"]["ci_low"].is_number());
    assert!(arm["runs"][0]["sched_latency_ms_hdr_v2_base64"].is_string());
    assert_eq!(j["definitions"]["metrics"].as_array().unwrap().len(), METRICS.len());
    assert_no_nan(&j.to_string());
}

#[test]
fn markdown_shape() {
    let s = Summary::new("churn", two_arms(), 1);
    let md = s.to_markdown();
    assert!(md.starts_with("# Scenario `churn`"));
    for needle in [
        "`default`",
        "`binpack`",
        "| 1, 2, 3 |",
        "## Results",
        "## Memory request vs failures",
    ] {
        assert!(md.contains(needle), "missing {needle}");
    }
    for d in METRICS.iter().chain(CORRELATIONS) {
        assert!(md.contains(&format!("**`{}`**", d.key)), "no definition of {}", d.key);
        assert!(md.contains(d.definition), "definition of {} not verbatim", d.key);
    }
    // a row for every metric, or a mention in the line of rows that say nothing
    let collapsed = results::summary::collapsed_rows(&s);
    for d in METRICS {
        if collapsed.contains(d.key) {
            assert!(!md.contains(&format!("| `{}`", d.key)), "a row for {}", d.key);
        } else {
            assert!(md.contains(&format!("| `{}`", d.key)), "no row for {}", d.key);
        }
    }
    // binpack crashes more: its restarts row is not the bold one
    let restarts = md.lines().find(|l| l.starts_with("| `restarts`")).unwrap();
    let cells: Vec<&str> = restarts.split('|').map(str::trim).collect();
    assert!(cells[3].starts_with("**") && !cells[4].starts_with("**"), "{restarts}");
    // a metric where no direction is better is never bold
    let created = md.lines().find(|l| l.starts_with("| `pods_created`")).unwrap();
    assert!(!created.contains("**"), "{created}");
    assert_no_nan(&md);
}

#[test]
fn terminal_table_shape() {
    let s = Summary::new("churn", two_arms(), 1);
    let t = s.to_terminal_table();
    for needle in ["default", "binpack", "cost_usd", "±"] {
        assert!(t.contains(needle), "missing {needle}\n{t}");
    }
    for d in METRICS {
        assert!(t.contains(d.key), "missing {}", d.key);
    }
    assert_no_nan(&t);
}

#[test]
fn one_seed_says_n_1_and_undefined_says_n_a() {
    // one run, without samples or pods: most ratios are undefined
    let empty = results::metrics::RunMetricsBuilder::new();
    let mut empty = empty;
    empty.push(&node(0, 1000, 1000, 1.0));
    empty.push(&end(0));
    let runs = vec![
        run("solo", 5, 1),
        RunResult {
            arm: "idle".into(),
            seed: 5,
            training_run: None,
            metrics: empty.finish().unwrap(),
            correlations: None,
        },
    ];
    let s = Summary::new("tiny", runs, 3);
    let solo = s.arm("solo").unwrap().metric("restarts").unwrap().estimate.unwrap();
    assert_eq!((solo.n, solo.ci.low, solo.ci.high), (1, solo.mean, solo.mean));
    assert_eq!(solo.std, None);
    let md = s.to_markdown();
    assert!(md.contains("(n=1)"), "{md}");
    let cost = md.lines().find(|l| l.starts_with("| `cost_usd`")).unwrap();
    assert!(cost.ends_with("| n/a |"), "{cost}");
    let idle = s.arm("idle").unwrap().metric("failure_rate").unwrap();
    assert_eq!((idle.undefined, idle.estimate), (1, None));
    let csv = s.to_csv();
    // reference solo: no run of idle defines failure_rate, so no test either
    assert!(csv.contains("idle,failure_rate,fraction,0,,,,,,solo,,,,,,,\n"), "{csv}");
    let j = s.to_json();
    assert!(j["arms"][1]["metrics"]["failure_rate"]["mean"].is_null());
    assert!(j["arms"][1]["correlations"][0]["pearson"].is_null());
    for text in [md, csv, j.to_string(), s.to_terminal_table()] {
        assert_no_nan(&text);
    }
}

#[test]
fn partly_undefined_metric_is_counted() {
    let mut idle = results::metrics::RunMetricsBuilder::new();
    idle.push(&node(0, 1000, 1000, 1.0));
    idle.push(&end(1000));
    let runs = vec![
        run("a", 1, 1),
        run("a", 2, 2),
        RunResult {
            arm: "a".into(),
            seed: 3,
            training_run: None,
            metrics: idle.finish().unwrap(),
            correlations: None,
        },
    ];
    let s = Summary::new("mixed", runs, 3);
    let m = s.arm("a").unwrap().metric("failure_rate").unwrap();
    assert_eq!((m.undefined, m.estimate.unwrap().n), (1, 2));
    assert!(s.to_markdown().contains("(n=2)"));
    assert!(s.to_csv().contains("a,failure_rate,fraction,2,"));
}

/// `default` against `worse` over five seeds: `worse` crashes more on every
/// seed, so restarts separate completely. Restarts are crashes times the pods
/// on node 0 (3, 3, 2, 3, 3 for seeds 1..=5): default 0, 3, 4, 9, 12 and
/// worse 18, 21, 16, 27, 30, no value tied.
fn separated() -> Vec<RunResult> {
    (1..=5)
        .flat_map(|seed| {
            [
                run("worse", seed, seed as u32 + 5),
                run("default", seed, seed as u32 - 1),
            ]
        })
        .collect()
}

#[test]
fn reference_is_default_even_when_not_first() {
    let s = Summary::new("churn", separated(), 1);
    assert_eq!(s.arms()[0].arm, "worse");
    assert_eq!(s.reference(), Some("default"));
    let d = s.arm("default").unwrap();
    assert!(d.metrics.iter().all(|m| m.vs_reference.is_none()));
    // without a `default` the first arm is the reference
    let s = Summary::new(
        "churn",
        two_arms().into_iter().filter(|r| r.arm == "binpack").collect(),
        1,
    );
    assert_eq!(s.reference(), Some("binpack"));
}

#[test]
fn complete_separation_is_exact_and_holm_adjusted() {
    let s = Summary::new("churn", separated(), 1);
    let worse = s.arm("worse").unwrap();
    let restarts = worse.metric("restarts").unwrap();
    let c = restarts.vs_reference.expect("both arms define restarts");
    // 5 vs 5, every worse run above every default run, no ties: 2/C(10,5)
    assert_eq!(c.test.method, results::stats::PMethod::Exact);
    assert!((c.test.p - 2.0 / 252.0).abs() < 1e-12, "{c:?}");
    assert_eq!((c.cliffs_delta, c.a12), (1.0, 1.0));
    assert_eq!(c.test.u, 25.0);
    // Holm: the family is every metric with a test; this p is among the smallest
    let family: Vec<f64> = worse
        .metrics
        .iter()
        .filter_map(|m| m.vs_reference)
        .map(|c| c.test.p)
        .collect();
    // (metrics whose values are all equal on both sides are not in it)
    let smaller = family.iter().filter(|&&p| p < c.test.p).count();
    assert!(c.family_size < family.len());
    assert!(c.p_holm >= c.test.p * (c.family_size - smaller) as f64 - 1e-12);
    assert_eq!(c.significant, c.p_holm < 0.05);
    assert_eq!(restarts.defined_values(), [18.0, 21.0, 16.0, 27.0, 30.0]);
    assert_eq!(restarts.median, Some(21.0));
    assert_eq!(s.arm("default").unwrap().metric("restarts").unwrap().median, Some(4.0));
}

#[test]
fn three_seeds_cannot_be_significant() {
    let s = Summary::new("churn", two_arms(), 1);
    for m in &s.arm("binpack").unwrap().metrics {
        if let Some(c) = m.vs_reference {
            assert!((0.0..=1.0).contains(&c.test.p) && c.p_holm >= c.test.p, "{}", m.def.key);
            assert!(!c.significant, "{} with 3 vs 3 seeds", m.def.key);
        }
    }
    let restarts = s
        .arm("binpack")
        .unwrap()
        .metric("restarts")
        .unwrap()
        .vs_reference
        .unwrap();
    assert_eq!(restarts.cliffs_delta, 1.0, "binpack crashes more on every seed");
    assert!((restarts.test.p - 0.1).abs() < 1e-12);
}

#[test]
fn pareto_over_arm_means() {
    let s = Summary::new("churn", separated(), 1);
    let p = s.pareto();
    assert_eq!(p.len(), 2);
    let worse = p.iter().find(|e| e.point.arm == "worse").unwrap();
    let default = p.iter().find(|e| e.point.arm == "default").unwrap();
    let mean = |arm: &str, key: &str| s.arm(arm).unwrap().metric(key).unwrap().estimate.map(|e| e.mean);
    assert_eq!(worse.point.restarts, mean("worse", "restarts"));
    assert_eq!(default.point.cost_usd, mean("default", "cost_usd"));
    // same cost (same placement), default has fewer failures and restarts
    assert!(default.on_front());
    assert_eq!(
        worse.status,
        results::pareto::ParetoStatus::Dominated {
            by: vec!["default".into()]
        }
    );
    let md = s.to_markdown();
    assert!(
        md.contains("| `worse` |") && md.contains("dominated by `default`"),
        "{md}"
    );
    assert_eq!(s.to_json()["pareto"]["arms"][0]["status"], "dominated");
}

#[test]
fn new_statistics_in_every_output() {
    let s = Summary::new("churn", separated(), 1);
    let j = s.to_json();
    assert_eq!(j["reference"], "default");
    let vs = &j["arms"][0]["metrics"]["restarts"]["vs_reference"];
    assert_eq!(vs["p_method"], "exact");
    assert_eq!(vs["a12"], 1.0);
    assert!(vs["p_holm"].is_number() && vs["significant"].is_boolean());
    assert!(j["arms"][1]["metrics"]["restarts"]["vs_reference"].is_null());
    assert!(j["arms"][0]["metrics"]["restarts"]["median"].is_number());
    assert_eq!(
        j["arms"][0]["metrics"]["restarts"]["values"].as_array().unwrap().len(),
        5
    );
    let csv = s.to_csv();
    let row = csv.lines().find(|l| l.starts_with("worse,restarts,")).unwrap();
    assert!(row.contains(",default,25,") && row.contains(",exact,"), "{row}");
    let md = s.to_markdown();
    assert!(md.contains("## Against the reference arm `default`"));
    let line = md.lines().find(|l| l.starts_with("| `worse` | `restarts` |")).unwrap();
    assert!(line.contains("| 1.00 | 1.00 | 0.00794 (exact) |"), "{line}");
    let t = s.to_terminal_table();
    assert!(t.contains("default (ref)") && t.contains("Pareto"), "{t}");
    for text in [md, csv, j.to_string(), t, s.to_latex()] {
        assert_no_nan(&text);
    }
}

#[test]
fn latex_shape() {
    let s = Summary::new("churn_100%", separated(), 1);
    let tex = s.to_latex();
    for needle in [
        r"\toprule",
        r"\midrule",
        r"\bottomrule",
        r"\begin{tabular}{llrr}",
        r"\texttt{churn\_100\%}",
        "seeds 1, 2, 3, 4, 5",
        "percentile-bootstrap",
        r"\texttt{cost\_usd} $\downarrow$ & USD",
        r"$\pm$",
    ] {
        assert!(tex.contains(needle), "missing {needle}\n{tex}");
    }
    assert!(!tex.contains('±'), "{tex}");
    // default restarts less: its restarts cell is bold, worse's is not
    let restarts = tex.lines().find(|l| l.starts_with(r"\texttt{restarts}")).unwrap();
    let cells: Vec<&str> = restarts.trim_end_matches(r" \\").split(" & ").collect();
    assert_eq!(cells.len(), 4, "{restarts}");
    assert!(
        !cells[2].contains(r"\textbf") && cells[3].starts_with(r"\textbf{"),
        "{restarts}"
    );
    // never bold where no direction is better
    let created = tex.lines().find(|l| l.starts_with(r"\texttt{pods\_created}")).unwrap();
    assert!(!created.contains(r"\textbf"), "{created}");
    for d in METRICS {
        assert!(
            tex.contains(&format!(r"\texttt{{{}}}", d.key.replace('_', r"\_"))),
            "{}",
            d.key
        );
    }
}

/// `default` and `binpack` over `seeds`, binpack crashing 12 times more.
fn separated_over(seeds: u64) -> Vec<RunResult> {
    (1..=seeds)
        .flat_map(|seed| [run("default", seed, 0), run("binpack", seed, 12)])
        .collect()
}

#[test]
fn headline_names_significant_differences_with_their_size() {
    let s = Summary::new("churn", separated_over(8), 42);
    let lines = results::summary::headline(&s);
    assert_eq!(lines.len(), 1);
    let line = &lines[0];
    assert!(line.starts_with("binpack vs default: "), "{line}");
    // default never restarts: the difference is absolute, in events
    let restarts = s
        .arm("binpack")
        .unwrap()
        .metric("restarts")
        .unwrap()
        .estimate
        .unwrap()
        .mean;
    assert!(
        line.contains(&format!("restarts +{} events (delta +1.00, Holm p ", restarts)),
        "{line}"
    );
    // the terminal table and report.md open with it
    let table = s.to_terminal_table();
    let headline_at = table.find(line.as_str()).expect("terminal headline");
    assert!(headline_at < table.find("╭").unwrap(), "{table}");
    assert!(s.to_markdown().contains(&format!("- {line}")));
}

#[test]
fn headline_without_significance_says_what_the_seeds_allow() {
    let s = Summary::new("churn", separated_over(3), 42);
    let lines = results::summary::headline(&s);
    let line = &lines[0];
    assert!(
        line.starts_with("binpack vs default: no metric differs significantly (Holm-adjusted p < 0.05); 3 seeds a side; the smallest p attainable is 0.100 (1.00 after Holm over "),
        "{line}"
    );
    assert!(results::summary::headline(&Summary::new("one", vec![run("default", 1, 0)], 1)).is_empty());
}

#[test]
fn rows_zero_equal_or_undefined_everywhere_collapse_into_one_line_each() {
    let s = Summary::new("churn", separated_over(3), 42);
    let c = results::summary::collapsed_rows(&s);
    assert!(
        c.zero.contains(&"pods_declined") && c.zero.contains(&"evictions"),
        "{c:?}"
    );
    assert!(c.constant.contains(&("nodes_in_use_max", 2.0)), "{c:?}");
    assert!(c.undefined.contains(&"critical_bind_p50_s"), "{c:?}");
    assert!(!c.contains("restarts"));
    for text in [s.to_terminal_table(), s.to_markdown()] {
        let zero_line = text
            .lines()
            .find(|l| l.starts_with("zero in every run: "))
            .expect("zero line");
        assert!(zero_line.contains("pods_declined, "), "{zero_line}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("the same in every run: ") && l.contains("nodes_in_use_max = 2")),
            "{text}"
        );
        assert!(text.contains("undefined in every run: critical_pods, "), "{text}");
        // no table row for them, and one for the rest
        assert!(
            !text.contains("│ pods_declined") && !text.contains("| `pods_declined` |"),
            "{text}"
        );
        assert!(text.contains("restarts ↓") || text.contains("`restarts` ↓"), "{text}");
    }
    // CSV and JSON keep every metric
    assert!(s.to_csv().contains("default,pods_declined,"));
    assert!(s.to_json()["arms"][0]["metrics"]["pods_declined"].is_object());
}

#[test]
fn partial_and_template_correlations_are_in_every_output() {
    let s = Summary::new("churn", separated_over(3), 42);
    let json = s.to_json();
    let c = &json["arms"][0]["correlations"][0];
    assert_eq!(c["partial"]["templates"], 1);
    assert_eq!(c["templates"][0]["name"], "workload 0");
    assert_eq!(c["templates"][0]["n"], c["n"]);
    let md = s.to_markdown();
    assert!(
        md.contains("partial r [95% CI]") && md.contains("### Within each template"),
        "{md}"
    );
}
