//! The claims section of report.md.

use super::{
    LEARNING_HEADER, cells, claim_title, header, incomplete_lines, intro, learning_intro, learning_rows,
    learning_title, lines, verdict_lines,
};
use crate::claims::{ClaimsTable, VERDICT_RULE};
use crate::summary::format::md_escape;
use std::fmt::Write;

impl ClaimsTable {
    /// "## Claims": the intro, the verdict rule, then per claim its verdicts
    /// and its rows. Empty when no claim applies.
    pub fn to_markdown(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut out = String::from("## Claims\n\n");
        let _ = writeln!(out, "{}\n", intro(self));
        let _ = writeln!(out, "Verdict rule: {VERDICT_RULE}\n");
        for line in incomplete_lines(self) {
            let _ = writeln!(out, "> **INCOMPLETE** {line}\n");
        }
        for claim in &self.claims {
            let _ = writeln!(out, "### {}\n", md_escape(&claim_title(claim)));
            let _ = writeln!(out, "{}.\n", claim.spec.paper);
            for (_, line) in verdict_lines(claim, &self.arm, &self.controls) {
                let _ = writeln!(out, "- {}", line.replace('|', "\\|"));
            }
            out.push('\n');
            if claim.rows.is_empty() {
                continue;
            }
            let mut head = header(&self.arm).to_vec();
            head.push("result".to_string());
            let _ = writeln!(
                out,
                "| {} |",
                head.iter().map(|h| md_escape(h)).collect::<Vec<_>>().join(" | ")
            );
            let _ = writeln!(
                out,
                "| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- |"
            );
            for (row, cell) in lines(claim) {
                let (c, outcome) = cells(row, cell);
                let mut record: Vec<String> = c.iter().map(|x| md_escape(x)).collect();
                record[0] = format!("`{}`", record[0]);
                let label = row.spec.label();
                record[1] = format!("`{label}`") + &record[1][label.len()..];
                record[3] = format!("`{}`", record[3]);
                record.push(outcome.replace('|', "\\|"));
                let _ = writeln!(out, "| {} |", record.join(" | "));
            }
            out.push('\n');
        }
        if !self.learning.is_empty() {
            let _ = writeln!(out, "## What learning adds\n\n{}\n", learning_intro(self));
            for family in &self.learning {
                let _ = writeln!(out, "### {}\n", md_escape(&learning_title(family)));
                let _ = writeln!(out, "| {} |", LEARNING_HEADER.join(" | "));
                let _ = writeln!(out, "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |");
                for row in learning_rows(family) {
                    let cells: Vec<String> = row.iter().map(|c| md_escape(c)).collect();
                    let _ = writeln!(out, "| {} |", cells.join(" | "));
                }
                out.push('\n');
            }
        }
        out
    }
}
