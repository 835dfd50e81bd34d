use super::*;
use std::collections::BTreeMap;

fn spec(cells: usize) -> SweepJobSpec {
    SweepJobSpec {
        sweep_id: "0123456789abcdef".into(),
        sweep_name: "claims-study".into(),
        attempt: 1,
        namespace: "lab".into(),
        image: "schedlab/schedlab:dev".into(),
        image_pull_policy: None,
        plan_files: BTreeMap::from([("plan.json".to_string(), b"{}".to_vec())]),
        cells: (0..cells).collect(),
        parallelism: 4,
        retries_per_cell: 2,
        cpu_millis: 1000,
        memory_bytes: 2 << 30,
        queue_name: None,
        volume_claim: None,
        node_selector: BTreeMap::new(),
    }
}

#[test]
fn short_and_odd_sweep_names_become_labels() {
    assert_eq!(name_base("claims-study", "ab12"), "claims-study");
    assert_eq!(name_base("  Claims__Study!! ", "ab12"), "claims-study");
    assert_eq!(name_base("日本語", "AB12CD34EF"), "sweep-ab12cd34");
    assert_eq!(name_base("", "ab12"), "sweep-ab12");
    let exactly = "a".repeat(MAX_NAME_BASE);
    assert_eq!(name_base(&exactly, "ab12"), exactly, "a name that fits is kept whole");
    let cut = name_base(&format!("{}-x", "a".repeat(MAX_NAME_BASE)), "ab12");
    assert_eq!(cut, format!("{}-ab12", "a".repeat(MAX_NAME_BASE - 5)));
    // a cut that ends on a '-' does not double it
    let dashed = name_base(&format!("{}-bbbbbbbbbbbbbbb", "a".repeat(30)), "0123456789");
    assert_eq!(dashed, format!("{}-01234567", "a".repeat(30)));
}

/// Checks `spec` fails on `field`, with `value` in the message.
fn refused(spec: &SweepJobSpec, field: &str, value: &str) -> SweepJobError {
    let err = spec.check().expect_err(field);
    let text = err.to_string();
    assert!(text.contains(&format!("{field} = ")), "names {field}: {text}");
    assert!(text.contains(value), "names {value}: {text}");
    assert!(err.is_input_error(), "{text}");
    assert!(!text.contains('\n'), "one line: {text}");
    err
}

#[test]
fn every_check_error_names_its_field_and_value() {
    spec(1).check().unwrap();
    let with = |f: &dyn Fn(&mut SweepJobSpec)| {
        let mut s = spec(3);
        f(&mut s);
        s
    };
    refused(&with(&|s| s.cells.clear()), "cells", "[]");
    refused(&with(&|s| s.cells = (0..=MAX_CELLS).collect()), "cells", "100001 cells");
    refused(&with(&|s| s.cells = vec![1, 2, 1]), "cells", "= 1:");
    refused(&with(&|s| s.parallelism = 0), "parallelism", "= 0");
    refused(&with(&|s| s.parallelism = 100_001), "parallelism", "100001");
    refused(&with(&|s| s.namespace = "Lab_1".into()), "namespace", "\"Lab_1\"");
    refused(&with(&|s| s.namespace = String::new()), "namespace", "\"\"");
    refused(
        &with(&|s| s.volume_claim = Some("Results!".into())),
        "volume_claim",
        "\"Results!\"",
    );
    refused(
        &with(&|s| s.queue_name = Some("team a".into())),
        "queue_name",
        "\"team a\"",
    );
    refused(
        &with(&|s| {
            s.plan_files.insert("../escape".into(), vec![1]);
        }),
        "plan_files",
        "\"../escape\"",
    );
    refused(
        &with(&|s| {
            s.plan_files.insert("a/b".into(), vec![1]);
        }),
        "plan_files",
        "\"a/b\"",
    );
    refused(
        &with(&|s| {
            s.plan_files.insert("cells-1".into(), vec![1]);
        }),
        "plan_files",
        "\"cells-1\"",
    );
    refused(&with(&|s| s.image = String::new()), "image", "\"\"");
    refused(&with(&|s| s.image = "a b".into()), "image", "\"a b\"");
    refused(
        &with(&|s| s.image_pull_policy = Some("Sometimes".into())),
        "image_pull_policy",
        "\"Sometimes\"",
    );
    refused(&with(&|s| s.sweep_id = "not-hex".into()), "sweep_id", "\"not-hex\"");
    refused(&with(&|s| s.sweep_id = String::new()), "sweep_id", "\"\"");
    refused(&with(&|s| s.attempt = 0), "attempt", "= 0");
    refused(
        &with(&|s| s.retries_per_cell = u32::MAX),
        "retries_per_cell",
        "4294967295",
    );
    refused(&with(&|s| s.cpu_millis = 0), "cpu_millis", "= 0");
    refused(&with(&|s| s.memory_bytes = 0), "memory_bytes", "= 0");
    refused(
        &with(&|s| {
            s.node_selector.insert("bad key!".into(), "x".into());
        }),
        "node_selector",
        "\"bad key!\"",
    );
    refused(
        &with(&|s| {
            s.node_selector.insert("pool".into(), "-x".into());
        }),
        "node_selector",
        "\"pool=-x\"",
    );
    // names that cannot fit even with the sweep's name cut
    refused(
        &with(&|s| {
            s.sweep_name = "x".repeat(200);
            s.attempt = u32::MAX;
            s.cells = vec![usize::MAX];
        }),
        "cells",
        &format!("= {}:", usize::MAX),
    );
    refused(
        &with(&|s| s.namespace = "line\nbreak".into()),
        "namespace",
        "\"line\\nbreak\"",
    );
}

#[test]
fn a_plan_over_one_mib_is_refused() {
    let mut s = spec(14);
    // the cell list and this file fill the ConfigMap exactly
    let room = CONFIG_MAP_MAX_BYTES - s.cells_text().len();
    s.plan_files = BTreeMap::from([("plan.json".to_string(), vec![b'x'; room])]);
    s.check().unwrap();
    s.plan_files.insert("more".to_string(), vec![b'y']);
    let err = refused(
        &s,
        "plan_files",
        &format!("the plan is {} bytes", CONFIG_MAP_MAX_BYTES + 1),
    );
    assert!(
        matches!(err, SweepJobError::PlanTooLarge { bytes } if bytes == CONFIG_MAP_MAX_BYTES + 1),
        "{err}"
    );
    assert!(err.to_string().contains("split the sweep"), "{err}");
}

#[test]
fn the_server_version_picks_the_shape() {
    assert_eq!(JobShape::for_server("1", "20"), JobShape::PerCell);
    assert_eq!(JobShape::for_server("1", "28"), JobShape::PerCell);
    assert_eq!(JobShape::for_server("1", "29"), JobShape::Indexed);
    assert_eq!(JobShape::for_server("1", "31+"), JobShape::Indexed);
    assert_eq!(JobShape::for_server("2", "0"), JobShape::Indexed);
    assert_eq!(JobShape::for_server("1", ""), JobShape::PerCell);
    assert_eq!(JobShape::for_server("", "30"), JobShape::PerCell);
    assert_eq!(JobShape::for_server("x", "y"), JobShape::PerCell);
    assert_eq!(
        JobShape::for_server("1", "99999999999999999999"),
        JobShape::PerCell,
        "an overflowing number is no version"
    );
    assert_eq!(
        JobShape::for_git_version("v1.30.2-gke.1587003"),
        Some(JobShape::Indexed)
    );
    assert_eq!(JobShape::for_git_version("v1.20.2"), Some(JobShape::PerCell));
    assert_eq!(JobShape::for_git_version("garbage"), None);
    assert_eq!(JobShape::PerCell.to_string(), "per-cell");
}
