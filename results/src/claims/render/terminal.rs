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
