//! The pod `kube_backend::objects::use_workload_image` makes and the
//! program agree: the environment the kubelet would give the container
//! (Downward API fields resolved against the pod's own metadata) reads back
//! as the pod's identity, seed, behaviour and limits, and the program's plan
//! draws what the model draws for that pod.
#![allow(clippy::unwrap_used)] // test helpers: a failed call fails the test

use kube_backend::objects::{self, PodIdentity};
use schedlab_core::behaviour::{ModelConfig, draw_container};
use schedlab_core::dist::Dist;
use schedlab_core::pod::{PodId, PodSlot};
use schedlab_core::resources::Resources;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::timeline::Workload;
use serde_json::Value;
use std::path::PathBuf;
use workload_runner::cli::{self, Command};
use workload_runner::plan::Plan;
use workload_runner::settings::Settings;

fn workload(limits: Option<Resources>) -> Workload {
    let mut spec = testing::pod(200, 64 << 20)
        .scheduler("agmarl")
        .usage(
            Dist::Uniform { min: 100.0, max: 400.0 },
            Dist::LogNormal {
                median: 80.0 * 1048576.0,
                sigma: 0.4,
            },
        )
        .run_seconds(Dist::Exponential { mean: 600.0 })
        .crash_rate(1.5)
        .unstable();
    spec.limits = limits;
    testing::workload(4, "api", spec)
}

/// The container's environment as the kubelet resolves it.
fn resolve(pod: &Value, name: &str) -> Option<String> {
    let env = pod["spec"]["containers"][0]["env"].as_array()?;
    let var = env.iter().find(|e| e["name"] == name)?;
    if let Some(v) = var["value"].as_str() {
        return Some(v.to_string());
    }
    let path = var["valueFrom"]["fieldRef"]["fieldPath"].as_str()?;
    let (map, rest) = match path.strip_prefix("metadata.annotations['") {
        Some(rest) => ("annotations", rest),
        None => ("labels", path.strip_prefix("metadata.labels['")?),
    };
    let key = rest.strip_suffix("']")?;
    pod["metadata"][map][key].as_str().map(str::to_string)
}

#[test]
fn the_program_reads_the_pod_it_runs_in() {
    let model = ModelConfig {
        oom_delay_mean_seconds: 3.0,
        ..Default::default()
    };
    for (limits, ordinal) in [
        (Some(Resources::new(300, 96 << 20)), 0),
        (Some(Resources::new(0, 128 << 20)), 1),
        (None, 2),
    ] {
        let w = workload(limits);
        let ident = PodIdentity {
            pod: PodId(1000 + u64::from(ordinal)),
            slot: PodSlot {
                workload: w.id,
                ordinal,
            },
            incarnation: 3,
        };
        let mut pod = objects::pod_object("run-1", "run-1", &ident, &w, 2024);
        objects::use_workload_image(&mut pod, "schedlab/workload:dev", 30.0, &model);
        let json = serde_json::to_value(&pod).unwrap();

        let settings = Settings::from_lookup(|name| resolve(&json, name)).unwrap();
        assert_eq!(settings.pod, ident.pod);
        assert_eq!(settings.slot, ident.slot);
        assert_eq!(settings.incarnation, ident.incarnation);
        assert_eq!(settings.seed, 2024);
        assert_eq!(settings.behaviour, w.spec.behaviour);
        assert_eq!(settings.limits, limits.unwrap_or(Resources::ZERO));
        assert_eq!(settings.time_scale, 30.0);
        assert_eq!(settings.model, model);

        // what the node emulator would draw for the same pod, start by start
        let spec = objects::pod_spec_of(&pod).unwrap();
        for start in 0..3 {
            let draw = draw_container(2024, ident.slot, ident.incarnation, start, &spec, &model);
            let plan = Plan::new(&settings, start);
            assert_eq!(plan.usage(), draw.usage);
            assert_eq!(plan.memory_demand, draw.memory_demand);
        }

        // the command line points the program at the mounted emptyDir
        let container = &json["spec"]["containers"][0];
        assert_eq!(container["command"][0], objects::WORKLOAD_COMMAND);
        let args: Vec<std::ffi::OsString> = container["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().into())
            .collect();
        let Command::Run { state_dir, plan_only } = cli::parse(args).unwrap() else {
            panic!("not a run command");
        };
        assert!(!plan_only);
        assert_eq!(state_dir, PathBuf::from(objects::WORKLOAD_STATE_DIR));
        assert_eq!(container["volumeMounts"][0]["mountPath"], objects::WORKLOAD_STATE_DIR);
    }
}

/// The workload image puts the program where the pod's command looks for it.
#[test]
fn the_image_installs_the_program_where_the_pod_runs_it() {
    let dockerfile = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/Dockerfile");
    let text = std::fs::read_to_string(&dockerfile).unwrap();
    let workload_stage = text
        .split("\nFROM ")
        .find(|stage| {
            stage
                .lines()
                .next()
                .is_some_and(|l| l.trim_end().ends_with(" AS workload"))
        })
        .unwrap_or_else(|| panic!("no `workload` stage in {}", dockerfile.display()));
    assert!(
        workload_stage.contains(objects::WORKLOAD_COMMAND),
        "the workload stage does not install {}",
        objects::WORKLOAD_COMMAND
    );
    assert!(workload_stage.contains("USER 65532:65532"));
}
