//! Sweep files read into plans: cells in a fixed order with stable, distinct
//! ids; plans that read back whole; bad files refused naming the file, the
//! field and the value.
#![allow(clippy::unwrap_used)]

use schedlab_core::error::UserInput;
use schedlab_runner::sweep::plan::{Plan, Program, write_files};
use schedlab_runner::sweep::{CellWork, file};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn program(revision: &str) -> Program {
    Program {
        schedlab_version: "0.1.0".into(),
        git_revision: revision.into(),
    }
}

/// A sweep file in a fresh folder, with checkpoints and a profile file copied beside it.
fn sweep_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["agmarl", "agmarl-nognn"] {
        for ext in ["safetensors", "json"] {
            let file = format!("{name}.{ext}");
            std::fs::copy(repo().join("scheduler/checkpoints").join(&file), tmp.path().join(&file)).unwrap();
        }
    }
    for ext in ["safetensors", "json"] {
        let file = format!("agmarl-2000.{ext}");
        std::fs::copy(
            repo().join("evaluations/training-seeds").join(&file),
            tmp.path().join(&file),
        )
        .unwrap();
    }
    std::fs::copy(
        repo().join("scheduler/tests/profiles/binpack.yaml"),
        tmp.path().join("mine.yaml"),
    )
    .unwrap();
    let path = tmp.path().join("study.yaml");
    std::fs::write(&path, text).unwrap();
    (tmp, path)
}

fn plan_of(text: &str, revision: &str) -> Plan {
    let (_tmp, path) = sweep_file(text);
    let sweep = file::read(&path).unwrap();
    Plan::build(&sweep, program(revision)).unwrap().0
}

const STUDY: &str = "
scenarios:
  - churn
  - scenario: pressure
    set: {nodes: [8, 12]}
arms: [default, agmarl, agmarl-untrained, profile:mine=mine.yaml]
checkpoints:
  agmarl: [agmarl.safetensors]
init_seeds: [1000, 2000]
seeds: {first: 1, count: 2}
train:
  - variant: agmarl-nognn
    seeds: [1000, 3000]
    episodes: 2
    scenarios: [churn]
    set: {nodes: 6}
";

fn ids(plan: &Plan) -> Vec<String> {
    plan.cells().map(|c| c.id).collect()
}

#[test]
fn cells_run_points_then_arm_runs_then_seeds_then_the_training_runs() {
    let plan = plan_of(STUDY, "r1");
    // 3 points × (default, agmarl with its checkpoint, the twin at 2 init seeds, the profile) × 2 seeds + 2 trainings
    assert_eq!(plan.points.len(), 3);
    assert_eq!(plan.arms.len(), 5);
    assert_eq!(plan.len(), 3 * 5 * 2 + 2);
    let cells: Vec<_> = plan.cells().collect();
    assert_eq!(cells.len(), plan.len());
    assert_eq!(
        cells[0].work,
        CellWork::Scenario {
            point: 0,
            arm: 0,
            seed: 1
        }
    );
    assert_eq!(
        cells[1].work,
        CellWork::Scenario {
            point: 0,
            arm: 0,
            seed: 2
        }
    );
    assert_eq!(
        cells[2].work,
        CellWork::Scenario {
            point: 0,
            arm: 1,
            seed: 1
        }
    );
    assert_eq!(
        cells[10].work,
        CellWork::Scenario {
            point: 1,
            arm: 0,
            seed: 1
        }
    );
    assert_eq!(cells[30].work, CellWork::Train { run: 0 });
    assert_eq!(cells[31].work, CellWork::Train { run: 1 });
    assert!(plan.cell(32).is_none());
    assert_eq!(plan.points[0].label, "base");
    assert_eq!(plan.points[1].label, "nodes=8");
    assert_eq!(
        plan.arms.iter().map(|a| a.init_seed).collect::<Vec<_>>(),
        [None, None, Some(1000), Some(2000), None]
    );
}

#[test]
fn cell_ids_are_stable_distinct_and_change_with_what_the_cell_runs() {
    let a = plan_of(STUDY, "r1");
    // the same sweep by the same program, from another folder: the same ids and sweep id
    let b = plan_of(STUDY, "r1");
    assert_eq!(ids(&a), ids(&b));
    assert_eq!(a.sweep_id, b.sweep_id);
    let mut distinct = ids(&a);
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), a.len(), "two cells share an id");
    // another program: every id differs
    let other = plan_of(STUDY, "r2");
    assert!(ids(&a).iter().zip(ids(&other)).all(|(x, y)| *x != y));
    assert_ne!(a.sweep_id, other.sweep_id);
    // a cell keeps its id when the sweep around it grows (another seed, another arm)
    let grown = plan_of(
        &STUDY
            .replace("count: 2", "count: 3")
            .replace("[default,", "[default, binpack,"),
        "r1",
    );
    let grown_ids = ids(&grown);
    for cell in a.cells() {
        assert!(grown_ids.contains(&cell.id), "{} lost its id", a.describe(&cell));
    }
    // another checkpoint changes the ids of that arm's cells, and only theirs
    let swapped = plan_of(
        &STUDY.replace("agmarl: [agmarl.safetensors]", "agmarl: [agmarl-2000.safetensors]"),
        "r1",
    );
    for (x, y) in a.cells().zip(swapped.cells()) {
        let is_agmarl = matches!(x.work, CellWork::Scenario { arm: 1, .. });
        assert_eq!(x.id != y.id, is_agmarl, "{}", a.describe(&x));
    }
}

#[test]
fn a_plan_reads_back_whole_and_refuses_a_changed_input_or_another_program() {
    let (tmp, path) = sweep_file(STUDY);
    let sweep = file::read(&path).unwrap();
    let (plan, files) = Plan::build(&sweep, program("r1")).unwrap();
    let dir = tmp.path().join("plan");
    std::fs::create_dir(&dir).unwrap();
    write_files(&dir, &files).unwrap();
    for input in plan.inputs() {
        assert!(files.contains_key(&input.key), "{}", input.key);
    }
    assert!(files.contains_key("plan.json"));
    assert_eq!(Plan::read(&dir, &program("r1")).unwrap(), plan);
    let other = Plan::read(&dir, &program("r2")).unwrap_err();
    assert!(other.is_input_error());
    assert!(other.to_string().contains("made by schedlab 0.1.0 (r1)"), "{other}");
    let checkpoint = plan.arms[1].checkpoint.as_ref().unwrap();
    std::fs::write(dir.join(&checkpoint.key), b"changed").unwrap();
    let changed = Plan::read(&dir, &program("r1")).unwrap_err().to_string();
    assert!(
        changed.contains(&checkpoint.key) && changed.contains("changed after the plan was made"),
        "{changed}"
    );
}

#[test]
fn a_cell_runs_the_command_line_a_user_would_type() {
    let plan = plan_of(STUDY, "r1");
    let command = |i: usize| {
        plan.command(&plan.cell(i).unwrap(), Path::new("/sweep/plan"), Path::new("/out"))
            .join(" ")
    };
    assert_eq!(
        command(0),
        "scenario churn --arms default --first-seed 1 --seeds 1 --jobs 1 --no-report --out /out"
    );
    let checkpoint = &plan.arms[1].checkpoint.as_ref().unwrap().key;
    assert_eq!(
        command(3),
        format!(
            "scenario churn --arms agmarl --first-seed 2 --seeds 1 --jobs 1 --no-report --checkpoint \
             /sweep/plan/{checkpoint} --out /out"
        )
    );
    assert!(command(4).ends_with("--init-seed 1000 --out /out"), "{}", command(4));
    assert!(
        command(8).contains("--arms profile:mine=/sweep/plan/profile-mine-"),
        "{}",
        command(8)
    );
    assert!(
        command(10).starts_with("scenario pressure --set nodes=8 --arms default"),
        "{}",
        command(10)
    );
    let train = command(30);
    assert!(
        train.starts_with(
            "train --variant agmarl-nognn --seed 1000 --episodes 2 --envs 2 --scenario /sweep/plan/scenario-churn-"
        ),
        "{train}"
    );
}

#[test]
fn sizes_multiply_each_scenarios_own_nodes() {
    let plan = plan_of(
        "scenarios: [churn, pressure]\nsizes: [0.25, 4]\narms: [default]\nseeds: [1]\n",
        "r1",
    );
    let points: Vec<(String, Vec<String>, String)> = plan
        .points
        .iter()
        .map(|p| (p.scenario.clone(), p.set.clone(), p.label.clone()))
        .collect();
    let point = |s: &str, set: &str, label: &str| (s.to_string(), vec![set.to_string()], label.to_string());
    assert_eq!(
        points,
        [
            point("churn", "nodes=10", "size=0.25"),
            point("churn", "nodes=160", "size=4"),
            point("pressure", "nodes=12", "size=0.25"),
            point("pressure", "nodes=192", "size=4"),
        ]
    );
}

/// Every bad sweep file is refused as the user's input, naming the file, the field and the value.
#[test]
fn bad_sweep_files_are_refused_naming_file_field_and_value() {
    let cases: &[(&str, &[&str])] = &[
        (
            "scenarios: [nope]\narms: [default]\nseeds: [1]\n",
            &["scenarios[0]", "nope"],
        ),
        (
            "scenarios: [churn]\narms: [default, fastest]\nseeds: [1]\n",
            &["arms", "fastest"],
        ),
        (
            "scenarios: [churn]\narms: [agmarl]\ncheckpoints: {agmarl: [missing.safetensors]}\nseeds: [1]\n",
            &["checkpoints.agmarl[0]", "missing.safetensors"],
        ),
        (
            "scenarios: [churn]\narms: [agmarl]\ncheckpoints: {agmarl: [agmarl-nognn.safetensors]}\nseeds: [1]\n",
            &["checkpoints.agmarl[0]", "trained as agmarl-nognn"],
        ),
        (
            "scenarios: [churn]\narms: [default]\ncheckpoints: {default: [agmarl.safetensors]}\nseeds: [1]\n",
            &["checkpoints.default", "takes no checkpoint"],
        ),
        (
            "scenarios: [churn]\narms: [default]\ncheckpoints: {binpack: [agmarl.safetensors]}\nseeds: [1]\n",
            &["checkpoints.binpack", "not one of arms"],
        ),
        (
            "scenarios:\n  - scenario: churn\n    set: {nodes: []}\narms: [default]\nseeds: [1]\n",
            &["scenarios[0].set.nodes", "empty list"],
        ),
        (
            "scenarios: []\narms: [default]\nseeds: [1]\n",
            &["field scenarios", "at least one cell"],
        ),
        ("scenarios: [churn]\narms: []\nseeds: [1]\n", &["field arms", "empty"]),
        ("scenarios: [churn]\narms: [default]\n", &["field seeds", "missing"]),
        (
            "scenarios: [churn]\narms: [default]\nseeds: {first: 1, count: 0}\n",
            &["seeds.count", "0"],
        ),
        (
            "scenarios: [churn]\narms: [default]\nseeds: [1, 1]\n",
            &["seeds", "1 is listed twice"],
        ),
        (
            "scenarios: [churn]\narms: [default, binpack]\nseeds: {first: 1, count: 50001}\n",
            &["100002 cells", "100000"],
        ),
        (
            "scenarios: [churn]\narms: [default]\nseeds: [1]\ncolour: red\n",
            &["colour"],
        ),
        (
            "scenarios: [churn]\narms: [default]\ninit_seeds: [5]\nseeds: [1]\n",
            &["init_seeds", "[5]", "untrained twins"],
        ),
        (
            "scenarios: [churn]\narms: [external:kube]\nseeds: [1]\n",
            &["arms", "external:kube"],
        ),
        (
            "scenarios: [churn]\narms: [drs]\nseeds: [1]\n",
            &["arms", "drs", "checkpoints.drs"],
        ),
        (
            "scenarios: [churn]\narms: [default]\nsizes: [0]\nseeds: [1]\n",
            &["sizes[0]", "0"],
        ),
        (
            "scenarios:\n  - scenario: churn\n    set: {nodes: 8}\narms: [default]\nsizes: [2]\nseeds: [1]\n",
            &["scenarios[0].set.nodes", "sizes"],
        ),
        (
            "scenarios:\n  - scenario: churn\n    set: {nodes: -3}\narms: [default]\nseeds: [1]\n",
            &["scenarios[0]", "churn", "nodes"],
        ),
        (
            "train:\n  - variant: agmarl\n    seeds: [7]\n",
            &["train[0].seeds", "7", "1000"],
        ),
        (
            "train:\n  - variant: agmarl-untrained\n    seeds: [1000]\n",
            &["train[0].variant", "agmarl-untrained"],
        ),
        (
            "train:\n  - variant: agmarl\n    seeds: [1000]\n    config: nope.json\n",
            &["train[0].config", "nope.json"],
        ),
    ];
    for (text, needles) in cases {
        let (_tmp, path) = sweep_file(text);
        let err = match file::read(&path) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e,
        };
        let msg = err.to_string();
        assert!(err.is_input_error(), "not an input error: {msg}");
        assert!(msg.contains(&path.display().to_string()), "no file in: {msg}");
        for needle in *needles {
            assert!(msg.contains(needle), "{needle:?} not in: {msg}\nfor:\n{text}");
        }
    }
}

#[test]
fn training_never_reads_a_held_out_scenario() {
    let (tmp, path) = sweep_file("train:\n  - variant: agmarl\n    seeds: [1000]\n    scenarios: [held/x.yaml]\n");
    std::fs::create_dir(tmp.path().join("held")).unwrap();
    std::fs::write(tmp.path().join("held").join(workloads::HELDOUT_MARKER), "").unwrap();
    std::fs::copy(
        repo().join("evaluations/heldout/diurnal.yaml"),
        tmp.path().join("held/x.yaml"),
    )
    .unwrap();
    let msg = file::read(&path).unwrap_err().to_string();
    assert!(
        msg.contains("train[0].scenarios[0]") && msg.contains("held-out"),
        "{msg}"
    );
}
