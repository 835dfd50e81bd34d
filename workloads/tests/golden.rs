//! Golden files: the resolved scenario and the timeline for seed 1 of a small
//! scenario file and of each built-in at a tiny size, compared exactly.
//! Regenerate with `UPDATE_GOLDEN=1 cargo test -p workloads`.

mod common;

use std::path::Path;

/// Sorted object keys, whatever order serde_json's features keep them in.
fn canonical(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, canonical(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(canonical).collect()),
        other => other,
    }
}

fn check_golden(name: &str, value: &impl serde::Serialize) {
    let value = canonical(serde_json::to_value(value).expect("serializable"));
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.json"));
    let actual = serde_json::to_string_pretty(&value).expect("serializable") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).expect("golden file written");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with UPDATE_GOLDEN=1 cargo test -p workloads",
            path.display()
        )
    });
    if actual != expected {
        let (line, (a, e)) = actual
            .lines()
            .zip(expected.lines())
            .enumerate()
            .find(|(_, (a, e))| a != e)
            .unwrap_or((actual.lines().count().min(expected.lines().count()), ("<end>", "<end>")));
        panic!(
            "{} differs at line {}:\n  expected: {e}\n  actual:   {a}\nif the change is intended, regenerate with UPDATE_GOLDEN=1 cargo test -p workloads",
            path.display(),
            line + 1
        );
    }
}

#[test]
fn small_scenario_file() {
    let path = common::data("small.yaml");
    let s = workloads::load(path.to_str().unwrap(), &[]).unwrap();
    check_golden("small.resolved", &s.resolved());
    check_golden("small.timeline", &s.expand(1));
}

#[test]
fn pressure_builtin_at_a_tiny_size() {
    let s = workloads::load("pressure", &["nodes=4".to_string()]).unwrap();
    check_golden("pressure-tiny.timeline", &s.expand(1));
}

#[test]
fn churn_builtin_at_a_tiny_size() {
    let s = workloads::load("churn", &["nodes=4".to_string()]).unwrap();
    check_golden("churn-tiny.timeline", &s.expand(1));
}

/// The 0.1 built-ins, kept under versioned names, still expand to exactly
/// the timelines they did (these golden files predate the new built-ins).
#[test]
fn versioned_builtins_keep_their_timelines() {
    for name in ["pressure-v1", "churn-v1"] {
        let s = workloads::load(name, &["nodes=4".to_string()]).unwrap();
        check_golden(&format!("{name}-tiny.timeline"), &s.expand(1));
    }
}
