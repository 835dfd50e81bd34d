//! Reading a run's decisions.jsonl back: streamed line by line, and tallied
//! into what the reports show.

use super::{Basis, DecisionRecord, DecisionsError, Level, Outcome};
use crate::jsonl::{LineError, for_each_line};
use schedlab_core::time::Time;
use std::collections::BTreeMap;
use std::path::Path;

/// Streams the decisions of `path` to `f` with their (1-based) line numbers,
/// in file order. Blank lines are skipped; any other line that is not a
/// decision stops the read with an error naming the file and the line.
pub fn for_each_decision(path: &Path, f: impl FnMut(u64, DecisionRecord)) -> Result<(), DecisionsError> {
    let path_buf = || path.to_path_buf();
    for_each_line(path, f).map_err(|e| match e {
        LineError::Open(source) => DecisionsError::Open {
            path: path_buf(),
            source,
        },
        LineError::Read { line, source } => DecisionsError::Read {
            path: path_buf(),
            line,
            source,
        },
        LineError::Parse { line, source } => DecisionsError::Parse {
            path: path_buf(),
            line,
            source,
        },
    })
}

/// One decision's stress, for plots over time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StressPoint {
    pub t: Time,
    pub score: f32,
    pub level: Level,
}

/// An AGMARL arm's decisions of one run, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgmarlTally {
    /// decisions by the level in force (calm, elevated, stressed) and
    /// outcome (bind, unschedulable, decline, preempt)
    pub by_level: [[u64; 4]; 3],
    /// declines by reason
    pub declines: BTreeMap<String, u64>,
}

impl AgmarlTally {
    /// Decisions made at `level` with `outcome`.
    pub fn count(&self, level: Level, outcome: Outcome) -> u64 {
        self.by_level[level.index()][outcome.index()]
    }

    /// Decisions made at `level`.
    pub fn at_level(&self, level: Level) -> u64 {
        self.by_level[level.index()].iter().sum()
    }

    /// Adds `other`'s counts (another seed's).
    pub fn add(&mut self, other: &AgmarlTally) {
        for (mine, theirs) in self.by_level.iter_mut().zip(&other.by_level) {
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        }
        for (reason, n) in &other.declines {
            *self.declines.entry(reason.clone()).or_default() += n;
        }
    }
}

/// The reason a decline without one is counted under.
pub const NO_REASON: &str = "(no reason given)";

impl StressPoint {
    /// The decision's time and stress.
    pub fn of(d: &DecisionRecord) -> StressPoint {
        StressPoint {
            t: d.t,
            score: d.stress.score,
            level: d.stress.level,
        }
    }
}

/// What a report needs from one run's decisions.jsonl, in memory that does
/// not grow with the decisions (the stress over time goes to the caller as
/// it is read).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunDecisions {
    /// the decisions read
    pub decisions: u64,
    /// whether the arm acted on that stress (the first decision's basis;
    /// one arm has one); None without decisions
    pub basis: Option<Basis>,
    /// the AGMARL controller's decisions, when the arm is an AGMARL arm
    pub agmarl: Option<AgmarlTally>,
}

impl RunDecisions {
    /// Reads and tallies the decisions of `path`, handing every decision's
    /// stress to `stress` in file order.
    pub fn from_file(path: &Path, mut stress: impl FnMut(StressPoint)) -> Result<RunDecisions, DecisionsError> {
        let mut run = RunDecisions::default();
        for_each_decision(path, |_, d| {
            stress(StressPoint::of(&d));
            run.push(&d);
        })?;
        Ok(run)
    }

    /// Counts one decision in.
    pub fn push(&mut self, d: &DecisionRecord) {
        self.decisions += 1;
        self.basis.get_or_insert(d.stress.basis);
        if let Some(agmarl) = &d.agmarl {
            let tally = self.agmarl.get_or_insert_with(AgmarlTally::default);
            tally.by_level[agmarl.level.index()][d.outcome.index()] += 1;
            if d.outcome == Outcome::Decline {
                let reason = d.reason.as_deref().unwrap_or(NO_REASON);
                *tally.declines.entry(reason.to_string()).or_default() += 1;
            }
        }
    }
}
