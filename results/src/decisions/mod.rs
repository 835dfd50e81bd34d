//! Decision records: one JSON line per scheduling decision, written on
//! request (`schedlab scenario --explain`) to
//! `runs/<arm>/seed-<n>/decisions.jsonl` beside the records.
//!
//! They are not records: records.jsonl stays byte-identical with and
//! without them, and no metric reads them. Reports read them when present
//! for the stress-over-time plot and the AGMARL arms' decision tables. This
//! crate owns the run-folder format, hence this file's: [`DecisionRecord`]
//! is the line, [`DecisionsWriter`] writes them, [`for_each_decision`] and
//! [`RunDecisions::from_file`] read them back.
//!
//! ```json
//! {"t":61000,"pod":412,"workload":"unstable","attempts":2,"outcome":"bind","candidates":12,
//!  "chosen":{"node":5,"name":"spot-5","objectives":{"fault_tolerance":0.71,"utilization":0.4,"cost":0.93}},
//!  "runner_up":{"node":7,"name":"spot-7","objectives":{"fault_tolerance":0.69,"utilization":0.38,"cost":0.93}},
//!  "stress":{"score":0.31,"level":"elevated","basis":"in-force"},
//!  "agmarl":{"level":"elevated","selection":"lexicographic","order":["cost","fault-tolerance","utilization"],
//!            "kept":[4,2,1]}}
//! ```

mod reader;
mod writer;

pub use reader::{AgmarlTally, RunDecisions, StressPoint, for_each_decision};
pub use writer::DecisionsWriter;

/// The stress level and the objectives are the policies' own types
/// (one model from the decision to the file).
pub use schedlab_core::explanation::{Objective, StressLevel as Level};
use schedlab_core::node::NodeId;
use schedlab_core::pod::PodId;
use schedlab_core::time::Time;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The file beside a run's records.jsonl.
pub const DECISIONS_FILE: &str = "decisions.jsonl";

/// One scheduling decision, as the policy explained it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// the decision's scenario time (the cluster view's), in ms
    pub t: Time,
    pub pod: PodId,
    /// the pod's workload (scenario template); absent when unknown (a pod
    /// schedlab did not create)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// scheduling attempts of the pod before this one
    pub attempts: u32,
    pub outcome: Outcome,
    /// why the pod was not bound (unschedulable or declined), as the policy
    /// said it in the pod's event
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// nodes that passed the policy's filters among those it examined;
    /// absent for a policy that does not explain
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<u32>,
    /// the node bound to, with its score
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<NodeChoice>,
    /// the node the same rule picks once the chosen one is left out, among
    /// the nodes the policy scored
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_up: Option<NodeChoice>,
    /// where a preemption nominated the pod and whom it deleted there
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt: Option<Preemption>,
    pub stress: Stress,
    /// the AGMARL controller's part (the `agmarl*` arms only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agmarl: Option<AgmarlDecision>,
}

/// What the decision did with the pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Bind,
    /// no feasible node
    Unschedulable,
    /// feasible nodes, but the policy kept the pod pending (strategic restraint)
    Decline,
    /// no feasible node; pods of lower priority deleted to make room (see `preempt`)
    Preempt,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [
        Outcome::Bind,
        Outcome::Unschedulable,
        Outcome::Decline,
        Outcome::Preempt,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// A preemption: the node the pod was nominated to and the pods deleted there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preemption {
    pub node: NodeId,
    pub name: String,
    pub victims: Vec<PodId>,
}

/// A node and the policy's score of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeChoice {
    pub node: NodeId,
    pub name: String,
    /// a kube-scheduler profile's weighted total of its score plugins
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    /// an AGMARL agent's three objective scores
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objectives: Option<Objectives>,
}

/// An AGMARL agent's scores of its node, each in [0, 1], higher is better;
/// null where the network gave a number that is not finite.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Objectives {
    pub fault_tolerance: Option<f32>,
    pub utilization: Option<f32>,
    pub cost: Option<f32>,
}

/// The cluster's stress at the decision, as AGMARL-DKS's stress monitor
/// estimates it from the decision's cluster view.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stress {
    /// the weighted, saturated signals, in [0, 1]
    pub score: f32,
    /// the level after the monitor's hysteresis
    pub level: Level,
    pub basis: Basis,
}

/// Whether the arm acted on the stress of its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// the level chose the objective order and gated restraint (agmarl,
    /// agmarl-nognn, agmarl-linear)
    InForce,
    /// estimated beside the decision, which did not use it (every other arm)
    Observed,
}

impl Basis {
    pub fn name(self) -> &'static str {
        match self {
            Basis::InForce => "in force",
            Basis::Observed => "observed",
        }
    }
}

/// How the controller chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SelectionRule {
    /// objective by objective, in `order`
    Lexicographic,
    /// `agmarl-linear`: a fixed weighted sum of the three scores
    Weighted,
}

/// The AGMARL controller's part of a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgmarlDecision {
    /// the level selection and restraint used (always calm for agmarl-nostress)
    pub level: Level,
    pub selection: SelectionRule,
    /// the objective order in force, first first (lexicographic only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<[Objective; 3]>,
    /// the weights of fault tolerance, utilisation and cost (weighted only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<[f32; 3]>,
    /// how near the best a candidate must be to survive each step
    /// (lexicographic only; absent in records written before it was kept)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<SelectionTolerance>,
    /// candidates left after each step of the selection (one per objective,
    /// or one for the weighted sum); empty when no selection ran
    #[serde(default)]
    pub kept: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decline: Option<Decline>,
}

/// The lexicographic filter's tolerance: a step keeps the candidates within
/// max(`delta_lex` × the step's spread of scores, `floor` of its objective)
/// of the best.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SelectionTolerance {
    pub delta_lex: f32,
    /// per objective, in fault tolerance, utilisation, cost order: the
    /// checkpoint's heads' validation RMSE (0: the spread-only rule)
    pub floor: [f32; 3],
}

/// Which rule of strategic restraint declined a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DeclineRule {
    /// the wait head's prediction beat the chosen node's score by more than
    /// the heads' combined error
    Learned,
    /// a random decline of training's exploration
    Explored,
    /// the workload's usual fault tolerance against the chosen node's (the
    /// only rule of files written before the learned one)
    #[default]
    Threshold,
}

/// Why strategic restraint declined the pod.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Decline {
    #[serde(default)]
    pub rule: DeclineRule,
    /// the wait head's prediction: the fault tolerance the pod would realise
    /// if declined (learned rule only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<f32>,
    /// the workload's observed (restarts + failures) per pod created
    pub instability: f32,
    /// the fault-tolerance score of the node the selection chose
    pub predicted_fault_tolerance: f32,
    /// mean, standard deviation and count of the fault-tolerance scores of
    /// the workload's binds so far
    pub workload_baseline: f32,
    pub workload_spread: f32,
    pub workload_binds: u32,
    /// the score the node needed for the pod to be placed (learned rule:
    /// the wait prediction minus the heads' combined error)
    pub bar: f32,
}

/// Why a decisions file could not be written or read; every variant names
/// the file, reading errors the line too.
#[derive(Debug, thiserror::Error)]
pub enum DecisionsError {
    #[error("cannot create decisions file {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    #[error("cannot write decisions file {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot open decisions file {}: {source}", path.display())]
    Open { path: PathBuf, source: std::io::Error },
    #[error("cannot read decisions file {} at line {line}: {source}", path.display())]
    Read {
        path: PathBuf,
        line: u64,
        source: std::io::Error,
    },
    #[error("malformed decision in {} at line {line}: {source}", path.display())]
    Parse {
        path: PathBuf,
        line: u64,
        source: serde_json::Error,
    },
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A decision of an AGMARL arm at `t` ms.
    pub(crate) fn agmarl_decision(t: u64, level: Level, outcome: Outcome) -> DecisionRecord {
        let choice = |node: u32, cost: f32| NodeChoice {
            node: NodeId(node),
            name: format!("node-{node}"),
            score: None,
            objectives: Some(Objectives {
                fault_tolerance: Some(0.7),
                utilization: Some(0.4),
                cost: Some(cost),
            }),
        };
        let bound = outcome == Outcome::Bind;
        DecisionRecord {
            t: Time(t),
            pod: PodId(t),
            workload: Some("web".into()),
            attempts: 0,
            outcome,
            reason: match outcome {
                Outcome::Bind => None,
                Outcome::Unschedulable => Some("0/4 nodes are available".into()),
                Outcome::Decline => Some("strategic restraint".into()),
                Outcome::Preempt => Some("0/4 nodes are available".into()),
            },
            candidates: Some(if outcome == Outcome::Unschedulable { 0 } else { 4 }),
            chosen: bound.then(|| choice(2, 0.9)),
            runner_up: bound.then(|| choice(3, 0.85)),
            preempt: None,
            stress: Stress {
                score: 0.3,
                level,
                basis: Basis::InForce,
            },
            agmarl: Some(AgmarlDecision {
                level,
                selection: SelectionRule::Lexicographic,
                order: Some([Objective::Cost, Objective::FaultTolerance, Objective::Utilization]),
                weights: None,
                tolerance: Some(SelectionTolerance {
                    delta_lex: 0.25,
                    floor: [0.4, 0.125, 0.0625],
                }),
                kept: if bound { vec![3, 2, 1] } else { Vec::new() },
                decline: (outcome == Outcome::Decline).then_some(Decline {
                    instability: 0.8,
                    rule: DeclineRule::Threshold,
                    wait: None,
                    predicted_fault_tolerance: 0.41,
                    workload_baseline: 0.9,
                    workload_spread: 0.05,
                    workload_binds: 12,
                    bar: 0.85,
                }),
            }),
        }
    }

    #[test]
    fn written_decisions_read_back_line_by_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(DECISIONS_FILE);
        let decisions = [
            agmarl_decision(1000, Level::Calm, Outcome::Bind),
            agmarl_decision(2000, Level::Stressed, Outcome::Decline),
            agmarl_decision(3000, Level::Stressed, Outcome::Unschedulable),
        ];
        let mut w = DecisionsWriter::create(&path).unwrap();
        for d in &decisions {
            w.record(d);
        }
        assert_eq!(w.finish().unwrap(), 3);
        let mut back = Vec::new();
        for_each_decision(&path, |line, d| back.push((line, d))).unwrap();
        let lines: Vec<u64> = back.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2, 3]);
        assert_eq!(back.into_iter().map(|(_, d)| d).collect::<Vec<_>>(), decisions);
        // the documented field names, absent fields left out
        let text = std::fs::read_to_string(&path).unwrap();
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["t"], 1000);
        assert_eq!(first["outcome"], "bind");
        assert_eq!(first["stress"]["basis"], "in-force");
        assert_eq!(first["agmarl"]["order"][1], "fault-tolerance");
        // f32 scores in their shortest form, not widened to f64 digits
        assert_eq!(first["chosen"]["objectives"]["cost"], 0.9);
        assert!(first.get("reason").is_none() && first["chosen"].get("score").is_none());
    }

    #[test]
    fn a_run_is_tallied_by_level_in_force_and_decline_reason() {
        let mut run = RunDecisions::default();
        for d in [
            agmarl_decision(0, Level::Calm, Outcome::Bind),
            agmarl_decision(1, Level::Stressed, Outcome::Decline),
            agmarl_decision(2, Level::Stressed, Outcome::Decline),
            agmarl_decision(3, Level::Stressed, Outcome::Bind),
        ] {
            run.push(&d);
        }
        let tally = run.agmarl.clone().unwrap();
        assert_eq!(tally.at_level(Level::Stressed), 3);
        assert_eq!(tally.count(Level::Stressed, Outcome::Decline), 2);
        assert_eq!(tally.count(Level::Calm, Outcome::Bind), 1);
        assert_eq!(tally.at_level(Level::Elevated), 0);
        assert_eq!(tally.declines.get("strategic restraint"), Some(&2));
        assert_eq!((run.decisions, run.basis), (4, Some(Basis::InForce)));
        let mut twice = tally.clone();
        twice.add(&tally);
        assert_eq!(twice.count(Level::Stressed, Outcome::Decline), 4);

        // a baseline's decisions have stress but nothing to tally
        let mut baseline = agmarl_decision(5, Level::Calm, Outcome::Bind);
        baseline.agmarl = None;
        baseline.stress.basis = Basis::Observed;
        let mut run = RunDecisions::default();
        run.push(&baseline);
        assert_eq!((run.agmarl, run.basis), (None, Some(Basis::Observed)));
    }

    #[test]
    fn damaged_files_are_refused_naming_the_file_and_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(DECISIONS_FILE);
        let good = serde_json::to_string(&agmarl_decision(0, Level::Calm, Outcome::Bind)).unwrap();
        std::fs::write(&path, format!("{good}\n\n{{\"t\": 5\n")).unwrap();
        let err = RunDecisions::from_file(&path, |_| ()).unwrap_err().to_string();
        assert!(
            err.contains(&path.display().to_string()) && err.contains("line 3"),
            "{err}"
        );
        std::fs::remove_file(&path).unwrap();
        let err = RunDecisions::from_file(&path, |_| ()).unwrap_err().to_string();
        assert!(err.contains("cannot open") && err.contains(DECISIONS_FILE), "{err}");
        // a folder where the file should go
        let err = DecisionsWriter::create(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("cannot create"), "{err}");
    }
}
