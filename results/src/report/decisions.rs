//! What the reports show from decision records (decisions.jsonl, written
//! with `--explain`): the stress plot's input, and per AGMARL arm its
//! decisions by the stress level in force and its declines by reason. Runs
//! without the file are counted, and a report without any says how to get
//! them instead of showing empty tables.

use super::html::esc;
use crate::decisions::{AgmarlTally, DECISIONS_FILE, DecisionsError, Level, Outcome, RunDecisions};
use crate::plots::{ArmStress, SeedStress, StressInput};
use crate::run_folder::RunFolderData;
use crate::summary::format::md_escape;
use std::fmt::Write;

/// How to get decision records, for reports of runs without them (Markdown:
/// code in backticks; [`code_spans`] for HTML).
pub const HOW_TO_GET: &str = "Run `schedlab scenario` with `--explain` to record every scheduling decision \
     (`runs/<arm>/seed-<n>/decisions.jsonl`) and get the stress-over-time plot and the AGMARL arms' decision tables.";

/// One AGMARL arm's decisions over the seeds with decision records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArmTally {
    pub arm: String,
    /// runs of the arm whose decisions are counted
    pub runs: usize,
    pub tally: AgmarlTally,
}

/// The decision records of a report's runs.
#[derive(Debug, Clone)]
pub struct DecisionsOverview {
    /// runs with a decisions.jsonl
    pub runs_with: usize,
    /// all runs of the report
    pub runs: usize,
    /// the arms with decision records, in arm order, on a time axis over
    /// the runs with a decisions.jsonl
    pub stress: StressInput,
    /// the AGMARL arms among them, in arm order
    pub agmarl: Vec<ArmTally>,
}

impl Default for DecisionsOverview {
    fn default() -> DecisionsOverview {
        DecisionsOverview {
            runs_with: 0,
            runs: 0,
            stress: StressInput::until(schedlab_core::time::Time(0)),
            agmarl: Vec::new(),
        }
    }
}

impl DecisionsOverview {
    /// Reads the decisions.jsonl beside every run's records, where there is
    /// one. A damaged file is an error naming it and the line. A run's
    /// stress is summed per bucket of the plot as it is read, so the memory
    /// this takes grows with runs × buckets, not with decisions.
    pub fn load(data: &RunFolderData) -> Result<DecisionsOverview, DecisionsError> {
        let with: Vec<_> = data
            .runs
            .iter()
            .map(|run| (run, run.records.with_file_name(DECISIONS_FILE)))
            .filter(|(_, path)| path.is_file())
            .collect();
        // every arm shares the time axis: up to the latest end of a run with records
        let end = with.iter().map(|(run, _)| run.metrics().end).max().unwrap_or_default();
        let mut out = DecisionsOverview {
            runs_with: 0,
            runs: data.runs.len(),
            stress: StressInput::until(end),
            agmarl: Vec::new(),
        };
        for (run, path) in with {
            let mut stress = SeedStress::new(run.seed, run.metrics().end, out.stress.axis);
            let decisions = RunDecisions::from_file(&path, |p| stress.add(p))?;
            out.runs_with += 1;
            out.add(&run.arm, stress, decisions);
        }
        Ok(out)
    }

    fn add(&mut self, arm: &str, stress: SeedStress, run: RunDecisions) {
        if let Some(tally) = &run.agmarl {
            match self.agmarl.iter_mut().find(|a| a.arm == arm) {
                Some(a) => {
                    a.runs += 1;
                    a.tally.add(tally);
                }
                None => self.agmarl.push(ArmTally {
                    arm: arm.to_string(),
                    runs: 1,
                    tally: tally.clone(),
                }),
            }
        }
        let Some(basis) = run.basis else {
            return;
        };
        match self.stress.arms.iter_mut().find(|a| a.arm == arm) {
            Some(a) => a.runs.push(stress),
            None => self.stress.arms.push(ArmStress {
                arm: arm.to_string(),
                basis,
                runs: vec![stress],
            }),
        }
    }

    /// report.md's section.
    pub fn markdown(&self) -> String {
        let mut out = String::from("## Decisions\n\n");
        if self.runs_with == 0 {
            let _ = writeln!(out, "No decision records. {HOW_TO_GET}");
            return out;
        }
        let _ = writeln!(
            out,
            "From decisions.jsonl ({} of {} runs have one); totals over the arm's runs that have one.\n",
            self.runs_with, self.runs
        );
        if self.agmarl.is_empty() {
            out.push_str("No AGMARL arm among them.\n");
        }
        for a in &self.agmarl {
            let _ = writeln!(
                out,
                "### `{}` ({})\n\n| stress level in force | decisions | binds | unschedulable | declines |\n\
                 | --- | ---: | ---: | ---: | ---: |",
                md_escape(&a.arm),
                runs(a.runs)
            );
            for level in Level::ALL {
                let [all, binds, unschedulable, declines] = level_counts(&a.tally, level);
                let _ = writeln!(
                    out,
                    "| {} | {all} | {binds} | {unschedulable} | {declines} |",
                    level.name()
                );
            }
            out.push('\n');
            if a.tally.declines.is_empty() {
                out.push_str("No declines.\n\n");
                continue;
            }
            out.push_str("| decline reason | declines |\n| --- | ---: |\n");
            for (reason, n) in &a.tally.declines {
                let _ = writeln!(out, "| {} | {n} |", md_escape(reason));
            }
            out.push('\n');
        }
        out
    }

    /// report.html's section.
    pub fn html(&self) -> String {
        let mut out = String::from("<h2 id=\"decisions\">Decisions</h2>\n");
        if self.runs_with == 0 {
            let _ = writeln!(
                out,
                "<p class=\"note\">No decision records. {}</p>",
                code_spans(HOW_TO_GET)
            );
            return out;
        }
        let _ = writeln!(
            out,
            "<p class=\"note\">From decisions.jsonl ({} of {} runs have one); totals over the arm's runs that have \
             one. The level is the one in force: the objective order and restraint followed it (always calm for \
             <code>agmarl-nostress</code>).</p>",
            self.runs_with, self.runs
        );
        if self.agmarl.is_empty() {
            out.push_str("<p class=\"note\">No AGMARL arm among them.</p>\n");
        }
        for a in &self.agmarl {
            let _ = writeln!(
                out,
                "<h3><code>{}</code> <span class=\"note\">({})</span></h3>\n<table>\n<thead><tr><th>stress \
                 level in force</th><th>decisions</th><th>binds</th><th>unschedulable</th><th>declines</th></tr>\
                 </thead>\n<tbody>",
                esc(&a.arm),
                runs(a.runs)
            );
            for level in Level::ALL {
                let [all, binds, unschedulable, declines] = level_counts(&a.tally, level);
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{all}</td><td>{binds}</td><td>{unschedulable}</td><td>{declines}</td></tr>",
                    level.name()
                );
            }
            out.push_str("</tbody>\n</table>\n");
            if a.tally.declines.is_empty() {
                out.push_str("<p class=\"note\">No declines.</p>\n");
                continue;
            }
            out.push_str("<table>\n<thead><tr><th>decline reason</th><th>declines</th></tr></thead>\n<tbody>\n");
            for (reason, n) in &a.tally.declines {
                let _ = writeln!(out, "<tr><td>{}</td><td>{n}</td></tr>", esc(reason));
            }
            out.push_str("</tbody>\n</table>\n");
        }
        out
    }
}

/// One row of the by-level table, for both renderings: decisions, binds,
/// unschedulable, declines.
fn level_counts(tally: &AgmarlTally, level: Level) -> [u64; 4] {
    [
        tally.at_level(level),
        tally.count(level, Outcome::Bind),
        tally.count(level, Outcome::Unschedulable),
        tally.count(level, Outcome::Decline),
    ]
}

fn runs(n: usize) -> String {
    if n == 1 {
        "1 run".to_string()
    } else {
        format!("{n} runs")
    }
}

pub(super) use crate::summary::format::html_code_spans as code_spans;
