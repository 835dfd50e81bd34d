//! The claims section of report.html: a fragment (the page's CSS applies).

use super::{
    LEARNING_HEADER, cells, claim_title, header, incomplete_lines, intro, learning_intro, learning_rows,
    learning_title, lines, verdict_lines,
};
use crate::claims::{ClaimsTable, VERDICT_RULE, Verdict};
use std::fmt::Write;

use crate::summary::format::{esc, html_code_spans as text};

fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Supported => "supported",
        Verdict::NotShown => "not-shown",
        Verdict::Contradicted => "contradicted",
    }
}

impl ClaimsTable {
    /// `<h2 id="claims">Claims</h2>` and everything of the section, for
    /// report.html: each claim's title and its verdict against the headline
    /// baseline (the controls' beside it) in view; how they were reached,
    /// the paper's words, the verdicts against the other baselines, each
    /// claim's rows and what learning adds folded (`<details>`), so that the
    /// verdicts and the headline fit the first screen. Empty when no claim
    /// applies.
    pub fn to_html(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut out = String::from("<h2 id=\"claims\">Claims</h2>\n");
        out.push_str("<details>\n<summary>What was tested, and the verdict rule</summary>\n");
        let _ = writeln!(out, "<p class=\"note\">{}</p>", text(&intro(self)));
        let _ = writeln!(out, "<p class=\"note\"><b>Verdict rule.</b> {}</p>", text(VERDICT_RULE));
        out.push_str("</details>\n");
        for line in incomplete_lines(self) {
            let _ = writeln!(out, "<div class=\"banner\">INCOMPLETE {}</div>", text(&line));
        }
        // a claim takes two lines in view: its title (which unfolds the
        // paper's words, every verdict and the rows) and its verdict against
        // the headline baseline with the controls' beside it, so that every
        // claim and the headline after them fit the first screen
        for claim in &self.claims {
            let verdicts = verdict_lines(claim, &self.arm, &self.controls);
            let _ = writeln!(
                out,
                "<details class=\"claim\" id=\"claim-{}\">\n<summary>{}</summary>\n<p>{}.</p>",
                claim.spec.number,
                text(&claim_title(claim)),
                esc(claim.spec.paper)
            );
            if verdicts.len() > 1 {
                out.push_str("<ul class=\"verdicts\">\n");
                for (v, line) in &verdicts {
                    let class = v.map_or("none", class);
                    let _ = writeln!(out, "<li class=\"verdict-{class}\">{}</li>", text(line));
                }
                out.push_str("</ul>\n");
            }
            if !claim.rows.is_empty() {
                out.push_str("<div class=\"scroll\">\n<table>\n<thead><tr>");
                for h in header(&self.arm) {
                    let _ = write!(out, "<th>{}</th>", esc(&h));
                }
                out.push_str("<th>result</th></tr></thead>\n<tbody>\n");
                for (row, cell) in lines(claim) {
                    let (c, outcome) = cells(row, cell);
                    out.push_str("<tr>");
                    for (i, x) in c.iter().enumerate() {
                        if matches!(i, 0 | 3) {
                            let _ = write!(out, "<td><code>{}</code></td>", esc(x));
                        } else {
                            let _ = write!(out, "<td>{}</td>", esc(x));
                        }
                    }
                    let _ = writeln!(out, "<td>{}</td></tr>", text(&outcome));
                }
                out.push_str("</tbody>\n</table>\n</div>\n");
            }
            out.push_str("</details>\n<ul class=\"verdicts\">\n");
            if let Some((v, line)) = verdicts.first() {
                let class = v.map_or("none", class);
                let controls: Vec<String> = self
                    .controls
                    .iter()
                    .filter_map(|c| {
                        let v = c.claim(claim.spec.number)?.headline()?;
                        Some(format!("<code>{}</code> {}", esc(&c.arm), v.verdict.as_str()))
                    })
                    .collect();
                let beside = if controls.is_empty() {
                    String::new()
                } else {
                    format!(" Controls: {}.", controls.join(", "))
                };
                let _ = writeln!(out, "<li class=\"verdict-{class}\">{}{beside}</li>", text(line));
            }
            out.push_str("</ul>\n");
        }
        if !self.learning.is_empty() {
            // folded whole: its families are tests of their own, below the claims
            out.push_str("<details class=\"claim\" id=\"learning\">\n<summary>What learning adds</summary>\n");
            let _ = writeln!(out, "<p class=\"note\">{}</p>", text(&learning_intro(self)));
            for family in &self.learning {
                let _ = writeln!(
                    out,
                    "<details>\n<summary>{}</summary>\n<div class=\"scroll\">\n<table>\n<thead><tr>",
                    text(&learning_title(family))
                );
                for h in LEARNING_HEADER {
                    let _ = write!(out, "<th>{}</th>", esc(h));
                }
                out.push_str("</tr></thead>\n<tbody>\n");
                for row in learning_rows(family) {
                    out.push_str("<tr>");
                    for x in &row {
                        let _ = write!(out, "<td>{}</td>", esc(x));
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</tbody>\n</table>\n</div>\n</details>\n");
            }
            out.push_str("</details>\n");
        }
        out
    }
}
