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

/// The line's model is core's (one model from the decision to the file).
pub use schedlab_core::decision::{
    AgmarlDecision, Basis, DecisionRecord, Decline, DeclineRule, Level, NodeChoice, Objective, Objectives, Outcome,
    Preemption, SelectionRule, SelectionTolerance, Stress,
};
use std::path::PathBuf;

/// The file beside a run's records.jsonl.
pub const DECISIONS_FILE: &str = "decisions.jsonl";

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
    use schedlab_core::node::NodeId;
    use schedlab_core::pod::PodId;
    use schedlab_core::time::Time;

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
                    by: DeclineRule::Threshold,
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
