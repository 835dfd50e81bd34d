use super::*;
use k8s_openapi::api::batch::v1::Job;
use std::collections::BTreeMap;

fn spec(cells: usize) -> SweepJobSpec {
    SweepJobSpec {
        sweep_id: "0123456789abcdef".into(),
        sweep_name: "claims-study".into(),
        attempt: 1,
        namespace: "lab".into(),
        plan_files: BTreeMap::from([("plan.json".to_string(), b"{}".to_vec())]),
        cells: (0..cells).collect(),
        pods: PodSettings {
            image: "schedlab/schedlab:dev".into(),
            image_pull_policy: None,
            parallelism: 4,
            retries_per_cell: 2,
            cpu_millis: 1000,
            memory_bytes: 2 << 30,
            queue_name: None,
            volume_claim: None,
            node_selector: BTreeMap::new(),
        },
    }
}

fn job_spec(job: &Job) -> &k8s_openapi::api::batch::v1::JobSpec {
    job.spec.as_ref().expect("a Job has a spec")
}

fn command(job: &Job) -> Vec<String> {
    let pod = job_spec(job).template.spec.as_ref().expect("a pod spec");
    pod.containers[0].command.clone().expect("a command")
}

fn labels(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> BTreeMap<String, String> {
    meta.labels.clone().unwrap_or_default()
}

#[test]
fn the_indexed_job_retries_each_cell_and_never_fails_the_rest() {
    let objects = objects(&spec(14), JobShape::Indexed).unwrap();
    assert_eq!(objects.jobs.len(), 1);
    let job = &objects.jobs[0];
    assert_eq!(job.metadata.name.as_deref(), Some("claims-study-01234567-1"));
    let s = job_spec(job);
    assert_eq!(s.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(s.completions, Some(14));
    assert_eq!(s.parallelism, Some(4));
    assert_eq!(s.backoff_limit_per_index, Some(2));
    assert_eq!(s.max_failed_indexes, None);
    assert_eq!(s.backoff_limit, Some(i32::MAX));
    assert_eq!(s.ttl_seconds_after_finished, None, "pods are kept until fetched");
    let policy = s.pod_failure_policy.as_ref().unwrap();
    assert_eq!(policy.rules.len(), 1);
    assert_eq!(policy.rules[0].action, "Ignore");
    assert!(
        policy.rules.iter().all(|r| r.action != "FailJob"),
        "no rule may fail the whole Job"
    );
    let pod = s.template.spec.as_ref().unwrap();
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    let cmd = command(job);
    assert!(!cmd.contains(&"--index".to_string()), "{cmd:?}");
    assert_eq!(
        cmd,
        [
            BINARY,
            "sweep",
            "cell",
            "--plan",
            "/sweep/plan",
            "--cells-file",
            "/sweep/plan/cells-1",
            "--out",
            "/tmp/schedlab-cell",
            "--stream"
        ]
    );
    // the cell list: completion index i runs cells[i]
    let data = objects.config_map.data.as_ref().unwrap();
    assert_eq!(data["cells-1"].lines().count(), 14);
    assert_eq!(data["cells-1"].lines().nth(13), Some("13"));
}

#[test]
fn the_indexed_job_maps_completion_indexes_to_the_listed_cells() {
    let mut s = spec(0);
    s.cells = vec![7, 3, 12];
    s.attempt = 2;
    let objects = objects(&s, JobShape::Indexed).unwrap();
    assert_eq!(job_spec(&objects.jobs[0]).completions, Some(3));
    assert_eq!(objects.config_map.data.as_ref().unwrap()["cells-2"], "7\n3\n12\n");
    assert_eq!(
        objects.config_map.metadata.name.as_deref(),
        Some("claims-study-01234567-plan-2")
    );
    assert_eq!(
        objects.jobs[0].metadata.name.as_deref(),
        Some("claims-study-01234567-2")
    );
    assert!(command(&objects.jobs[0]).contains(&"/sweep/plan/cells-2".to_string()));
}

#[test]
fn the_per_cell_shape_makes_one_job_per_cell_with_its_index() {
    let mut s = spec(0);
    s.cells = vec![4, 9, 11];
    let objects = objects(&s, JobShape::PerCell).unwrap();
    assert_eq!(objects.jobs.len(), 3);
    for (job, index) in objects.jobs.iter().zip([4usize, 9, 11]) {
        assert_eq!(
            job.metadata.name.as_deref(),
            Some(format!("claims-study-01234567-1-c{index}").as_str())
        );
        let js = job_spec(job);
        assert_eq!(
            (js.completions, js.parallelism, js.backoff_limit),
            (Some(1), Some(1), Some(2))
        );
        assert_eq!(js.completion_mode, None);
        assert_eq!(js.backoff_limit_per_index, None);
        assert_eq!(js.pod_failure_policy, None, "a 1.20 server has no pod failure policy");
        let cmd = command(job);
        assert_eq!(cmd[cmd.len() - 2..], ["--index".to_string(), index.to_string()]);
        assert_eq!(labels(&job.metadata)[LABEL_CELL], index.to_string());
        let pod_meta = js.template.metadata.as_ref().unwrap();
        assert_eq!(labels(pod_meta)[LABEL_CELL], index.to_string());
    }
    let plan = objects.plan().join("\n");
    assert!(plan.contains("parallelism 4 is not enforced by Kubernetes"), "{plan}");
}

#[test]
fn every_object_carries_the_sweeps_labels_and_kueue_only_with_a_queue() {
    let plain = objects(&spec(3), JobShape::Indexed).unwrap();
    let mut queued_spec = spec(3);
    queued_spec.pods.queue_name = Some("team-a".into());
    let queued = objects(&queued_spec, JobShape::PerCell).unwrap();
    for objects in [&plain, &queued] {
        let mut metas = vec![&objects.service_account.metadata, &objects.config_map.metadata];
        metas.extend(objects.jobs.iter().map(|j| &j.metadata));
        for meta in metas {
            let l = labels(meta);
            assert_eq!(l[LABEL_APP], APP);
            assert_eq!(l[LABEL_MANAGED_BY], MANAGER);
            assert_eq!(l[LABEL_SWEEP], "0123456789abcdef");
            assert_eq!(l[LABEL_ATTEMPT], "1");
            assert_eq!(meta.namespace.as_deref(), Some("lab"));
        }
        for job in &objects.jobs {
            let pod = labels(job_spec(job).template.metadata.as_ref().unwrap());
            assert_eq!(pod[LABEL_SWEEP], "0123456789abcdef");
            assert!(!pod.contains_key(KUEUE_QUEUE_LABEL), "the queue label is the Job's");
        }
    }
    assert!(
        plain
            .jobs
            .iter()
            .all(|j| !labels(&j.metadata).contains_key(KUEUE_QUEUE_LABEL))
    );
    assert!(
        queued
            .jobs
            .iter()
            .all(|j| labels(&j.metadata)[KUEUE_QUEUE_LABEL] == "team-a")
    );
    assert!(!labels(&queued.config_map.metadata).contains_key(KUEUE_QUEUE_LABEL));
}

#[test]
fn the_pod_runs_unprivileged_without_api_access() {
    let objects = objects(&spec(2), JobShape::Indexed).unwrap();
    assert_eq!(objects.service_account.automount_service_account_token, Some(false));
    assert_eq!(
        objects.service_account.metadata.name.as_deref(),
        Some("claims-study-01234567-cell")
    );
    let pod = job_spec(&objects.jobs[0]).template.spec.clone().unwrap();
    assert_eq!(pod.service_account_name.as_deref(), Some("claims-study-01234567-cell"));
    assert_eq!(pod.automount_service_account_token, Some(false));
    let psc = pod.security_context.unwrap();
    assert_eq!((psc.run_as_non_root, psc.run_as_user), (Some(true), Some(CELL_UID)));
    let c = &pod.containers[0];
    let sc = c.security_context.as_ref().unwrap();
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(
        sc.capabilities.as_ref().unwrap().drop.as_deref(),
        Some(&["ALL".to_string()][..])
    );
    let mounts: Vec<(&str, Option<bool>)> = c
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| (m.mount_path.as_str(), m.read_only))
        .collect();
    assert_eq!(mounts, [(PLAN_DIR, Some(true)), (TMP_DIR, None)]);
    let resources = c.resources.as_ref().unwrap();
    let requests = resources.requests.as_ref().unwrap();
    assert_eq!(requests["cpu"].0, "1000m");
    assert_eq!(requests["memory"].0, (2u64 << 30).to_string());
    let limits = resources.limits.as_ref().unwrap();
    assert_eq!(limits.keys().collect::<Vec<_>>(), ["memory"], "no CPU limit");
    assert_eq!(limits["memory"], requests["memory"]);
}

#[test]
fn a_volume_claim_is_mounted_and_the_cell_does_not_stream() {
    let mut s = spec(2);
    s.pods.volume_claim = Some("sweep-results".into());
    s.pods.node_selector = BTreeMap::from([("pool".to_string(), "cells".to_string())]);
    s.pods.image_pull_policy = Some("Never".into());
    let objects = objects(&s, JobShape::Indexed).unwrap();
    let pod = job_spec(&objects.jobs[0]).template.spec.clone().unwrap();
    let cmd = pod.containers[0].command.clone().unwrap();
    assert!(!cmd.contains(&"--stream".to_string()), "{cmd:?}");
    assert!(cmd.windows(2).any(|w| w == ["--out", OUT_DIR]), "{cmd:?}");
    let claim = pod
        .volumes
        .iter()
        .flatten()
        .find_map(|v| v.persistent_volume_claim.as_ref())
        .unwrap();
    assert_eq!(claim.claim_name, "sweep-results");
    assert!(
        pod.containers[0]
            .volume_mounts
            .iter()
            .flatten()
            .any(|m| m.mount_path == OUT_DIR && m.read_only.is_none())
    );
    assert_eq!(pod.node_selector.unwrap()["pool"], "cells");
    assert_eq!(pod.containers[0].image_pull_policy.as_deref(), Some("Never"));
}

fn all_names(objects: &SweepObjects) -> Vec<String> {
    let mut names = vec![
        objects.service_account.metadata.name.clone().unwrap(),
        objects.config_map.metadata.name.clone().unwrap(),
    ];
    names.extend(objects.jobs.iter().map(|j| j.metadata.name.clone().unwrap()));
    names
}

fn is_dns_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

#[test]
fn long_sweep_names_are_cut_to_dns_labels_that_stay_distinct() {
    let long: String = "Claims Study: ".repeat(15).chars().take(200).collect();
    assert_eq!(long.len(), 200);
    let mut a = spec(0);
    a.sweep_name = long.clone();
    a.cells = vec![99_999, 0];
    a.attempt = 123_456;
    let mut b = a.clone();
    b.sweep_id = "fedcba9876543210".into();
    let mut names_a = Vec::new();
    for shape in [JobShape::Indexed, JobShape::PerCell] {
        let oa = objects(&a, shape).unwrap();
        let ob = objects(&b, shape).unwrap();
        for name in all_names(&oa).iter().chain(all_names(&ob).iter()) {
            assert!(is_dns_label(name), "{name:?}");
        }
        let hostname = format!("{}-1", oa.jobs[0].metadata.name.clone().unwrap());
        assert!(is_dns_label(&hostname), "an Indexed pod's hostname {hostname}");
        for (x, y) in all_names(&oa).iter().zip(all_names(&ob).iter()) {
            assert_ne!(x, y, "two sweeps of one long name share no object name");
        }
        names_a.extend(all_names(&oa));
    }
    let base = a.name_base();
    assert!(base.len() <= MAX_NAME_BASE, "{base}");
    assert!(base.starts_with("claims-study-claims-study"), "{base}");
    assert!(base.ends_with("-01234567"), "{base}");
    assert!(names_a.contains(&format!("{base}-123456-c99999")), "{names_a:?}");
}

#[test]
fn short_and_odd_sweep_names_become_labels() {
    assert_eq!(name_base("claims-study", "ab12"), "claims-study-ab12");
    assert_eq!(name_base("  Claims__Study!! ", "ab12"), "claims-study-ab12");
    assert_eq!(name_base("日本語", "AB12CD34EF"), "sweep-ab12cd34");
    assert_eq!(name_base("", "ab12"), "sweep-ab12");
    // the id always follows, so two sweeps of one name never share objects
    assert_ne!(name_base("claims-study", "ab12"), name_base("claims-study", "cd34"));
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
    let via_objects = objects(spec, JobShape::Indexed).expect_err("objects checks the spec too");
    assert_eq!(via_objects.to_string(), text);
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
    refused(&with(&|s| s.pods.parallelism = 0), "parallelism", "= 0");
    refused(&with(&|s| s.pods.parallelism = 100_001), "parallelism", "100001");
    refused(&with(&|s| s.namespace = "Lab_1".into()), "namespace", "\"Lab_1\"");
    refused(&with(&|s| s.namespace = String::new()), "namespace", "\"\"");
    refused(
        &with(&|s| s.pods.volume_claim = Some("Results!".into())),
        "volume_claim",
        "\"Results!\"",
    );
    refused(
        &with(&|s| s.pods.queue_name = Some("team a".into())),
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
    refused(&with(&|s| s.pods.image = String::new()), "image", "\"\"");
    refused(&with(&|s| s.pods.image = "a b".into()), "image", "\"a b\"");
    refused(
        &with(&|s| s.pods.image_pull_policy = Some("Sometimes".into())),
        "image_pull_policy",
        "\"Sometimes\"",
    );
    refused(&with(&|s| s.sweep_id = "not-hex".into()), "sweep_id", "\"not-hex\"");
    refused(&with(&|s| s.sweep_id = String::new()), "sweep_id", "\"\"");
    refused(&with(&|s| s.attempt = 0), "attempt", "= 0");
    refused(
        &with(&|s| s.pods.retries_per_cell = u32::MAX),
        "retries_per_cell",
        "4294967295",
    );
    refused(&with(&|s| s.pods.cpu_millis = 0), "cpu_millis", "= 0");
    refused(&with(&|s| s.pods.memory_bytes = 0), "memory_bytes", "= 0");
    refused(
        &with(&|s| {
            s.pods.node_selector.insert("bad key!".into(), "x".into());
        }),
        "node_selector",
        "\"bad key!\"",
    );
    refused(
        &with(&|s| {
            s.pods.node_selector.insert("pool".into(), "-x".into());
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

#[test]
fn the_dry_run_shows_sizes_and_the_full_stream_round_trips() {
    let mut s = spec(3);
    s.plan_files.insert("big.bin".into(), vec![0u8; 4096]);
    let objects = objects(&s, JobShape::PerCell).unwrap();
    let text = objects.to_yaml().unwrap();
    assert!(text.contains("big.bin: 4096 bytes"), "{text}");
    assert!(text.contains("cells-1: 6 bytes"), "{text}");
    assert!(
        text.contains("# The ConfigMap's data and binaryData show each key's size"),
        "{text}"
    );
    assert_eq!(
        text.matches("\n---\n").count() + usize::from(text.starts_with("---\n")),
        5
    );
    let kinds: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("kind: ")).collect();
    assert_eq!(kinds, ["ServiceAccount", "ConfigMap", "Job", "Job", "Job"]);

    let full = objects.to_yaml_full().unwrap();
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&full).unwrap();
    assert_eq!(docs.len(), 5);
    let sa: k8s_openapi::api::core::v1::ServiceAccount = serde_json::from_value(docs[0].clone()).unwrap();
    let cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(docs[1].clone()).unwrap();
    let jobs: Vec<Job> = docs[2..]
        .iter()
        .map(|d| serde_json::from_value(d.clone()).unwrap())
        .collect();
    assert_eq!(sa, objects.service_account);
    assert_eq!(cm, objects.config_map, "binaryData round-trips through base64");
    assert_eq!(jobs, objects.jobs);
    // label values that look like numbers stay strings
    assert_eq!(docs[0]["metadata"]["labels"][LABEL_ATTEMPT], "1");
}

#[test]
fn a_sweep_name_with_a_line_break_stays_in_its_comment() {
    let mut s = spec(1);
    s.sweep_name = "two\nlines: [x]".into();
    let text = objects(&s, JobShape::Indexed).unwrap().to_yaml().unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("# sweep \"two\\nlines: [x]\""), "{first}");
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
    assert_eq!(docs.len(), 3);
}

#[test]
fn cell_ranges_are_summarised() {
    assert_eq!(summary::ranges(&[0, 1, 2, 3]), "0-3");
    assert_eq!(summary::ranges(&[9, 0, 1, 5, 7, 8]), "0-1, 5, 7-9");
    let scattered: Vec<usize> = (0..20).map(|i| i * 2).collect();
    assert_eq!(
        summary::ranges(&scattered),
        "0, 2, 4, 6, 8, 10, 12, 14, and 12 more runs"
    );
    assert_eq!(summary::ranges(&[usize::MAX, 0]), format!("0, {}", usize::MAX));
}
