//! The claims table as `schedlab report` prints it.

use super::{
    LEARNING_HEADER, cells, claim_title, header, incomplete_lines, intro, learning_intro, learning_rows,
    learning_title, lines, verdict_lines,
};
use crate::claims::ClaimsTable;
use std::fmt::Write;
use tabled::builder::Builder;
use tabled::settings::Style;

impl ClaimsTable {
    /// The verdicts in a few lines, for the terminal's default view: one
    /// line per claim (its verdict against `default`, with the controls'
    /// beside it), then where the rows and the learning families are. Every
    /// line at most [`crate::summary::MAX_WIDTH`] columns. Empty when no
    /// claim applies.
    pub fn to_terminal_brief(&self, more: &str) -> String {
        if self.is_empty() {
            return String::new();
        }
        let clip = |line: String| crate::summary::clip(&line, crate::summary::MAX_WIDTH);
        let mut out = clip(format!(
            "Claims of AGMARL-DKS for `{}` against `default`, as pre-registered:",
            self.arm
        ));
        out.push('\n');
        for line in incomplete_lines(self) {
            let _ = writeln!(out, "{}", clip(format!("INCOMPLETE {line}")));
        }
        for claim in &self.claims {
            let verdict = claim
                .headline()
                .map_or_else(|| "no verdict".to_string(), |v| v.verdict.as_str().to_uppercase());
            let controls: Vec<String> = self
                .controls
                .iter()
                .filter_map(|c| {
                    let v = c.claim(claim.spec.number)?.headline()?;
                    Some(format!("{} {}", c.arm, v.verdict.as_str()))
                })
                .collect();
            let beside = if controls.is_empty() {
                String::new()
            } else {
                format!(" ({})", controls.join(", "))
            };
            let _ = writeln!(
                out,
                "{}",
                clip(format!(
                    "  claim {} ({}): {verdict}{beside}",
                    claim.spec.number, claim.spec.name
                ))
            );
        }
        let _ = writeln!(out, "{}", clip(more.to_string()));
        out
    }

    /// "Claims", the intro, then per claim its verdicts and a table of its
    /// rows against each baseline. Empty when no claim applies.
    pub fn to_terminal(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut out = String::from("Claims\n");
        let _ = writeln!(out, "{}", intro(self));
        for line in incomplete_lines(self) {
            let _ = writeln!(out, "INCOMPLETE {line}");
        }
        for claim in &self.claims {
            let _ = writeln!(out, "\n{}", claim_title(claim));
            for (_, line) in verdict_lines(claim, &self.arm, &self.controls) {
                let _ = writeln!(out, "  {line}");
            }
            if claim.rows.is_empty() {
                continue;
            }
            let mut builder = Builder::default();
            let mut head = header(&self.arm).to_vec();
            head.push("result".to_string());
            builder.push_record(head);
            for (row, cell) in lines(claim) {
                let (c, outcome) = cells(row, cell);
                let mut record = c.to_vec();
                record.push(outcome);
                builder.push_record(record);
            }
            let mut table = builder.build();
            table.with(Style::rounded());
            let _ = writeln!(out, "{table}");
        }
        if !self.learning.is_empty() {
            let _ = writeln!(out, "\nWhat learning adds\n{}", learning_intro(self));
            for family in &self.learning {
                let _ = writeln!(out, "\n{}", learning_title(family));
                let mut builder = Builder::default();
                builder.push_record(LEARNING_HEADER);
                for row in learning_rows(family) {
                    builder.push_record(row);
                }
                let mut table = builder.build();
                table.with(Style::rounded());
                let _ = writeln!(out, "{table}");
            }
        }
        out
    }
}
