//! The claims section of report.tex (booktabs).

use super::{
    LEARNING_HEADER, cells, claim_title, header, incomplete_lines, intro, learning_intro, learning_rows,
    learning_title, lines, verdict_lines,
};
use crate::claims::{ClaimsTable, VERDICT_RULE};
use crate::summary::format::latex_escape;
use std::fmt::Write;

/// Text with `code` spans as LaTeX: escaped, the spans in \texttt, arrows
/// and the minus sign in math mode.
fn tex(s: &str) -> String {
    s.split('`')
        .enumerate()
        .map(|(i, part)| {
            let e = latex_escape(part)
                .replace('↓', r"$\downarrow$")
                .replace('↑', r"$\uparrow$")
                .replace(['−', '–'], "--")
                .replace(" < ", " $<$ ");
            if i % 2 == 1 { format!(r"\texttt{{{e}}}") } else { e }
        })
        .collect()
}

impl ClaimsTable {
    /// `\section*{Claims}`: the intro and the rule, then per claim its
    /// verdicts and a booktabs `tabular` of its rows. Needs
    /// `\usepackage{booktabs}`. Empty when no claim applies.
    pub fn to_latex(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut out = String::from("\n% the paper's claims, computed by schedlab; needs \\usepackage{booktabs}\n");
        let _ = writeln!(out, "\\section*{{Claims}}\n{}\n", tex(&intro(self)));
        let _ = writeln!(out, "\\paragraph{{Verdict rule.}} {}\n", tex(VERDICT_RULE));
        for line in incomplete_lines(self) {
            let _ = writeln!(out, "\\textbf{{INCOMPLETE}} {}\n", tex(&line));
        }
        for claim in &self.claims {
            let _ = writeln!(
                out,
                "\\subsection*{{{}}}\n{}.\n",
                tex(&claim_title(claim)),
                tex(claim.spec.paper)
            );
            out.push_str("\\begin{itemize}\n");
            for (_, line) in verdict_lines(claim, &self.arm, &self.controls) {
                let _ = writeln!(out, "\\item {}", tex(&line));
            }
            out.push_str("\\end{itemize}\n");
            if claim.rows.is_empty() {
                continue;
            }
            out.push_str("{\\scriptsize\n\\begin{tabular}{llllrrlrrrl}\n\\toprule\n");
            let mut head: Vec<String> = header(&self.arm).iter().map(|h| tex(h)).collect();
            head.push("result".to_string());
            let _ = writeln!(out, "{} \\\\\n\\midrule", head.join(" & "));
            for (row, cell) in lines(claim) {
                let (c, outcome) = cells(row, cell);
                let mut record: Vec<String> = c.iter().map(|x| tex(x)).collect();
                record.push(tex(&outcome));
                let _ = writeln!(out, "{} \\\\", record.join(" & "));
            }
            out.push_str("\\bottomrule\n\\end{tabular}}\n\n");
        }
        if !self.learning.is_empty() {
            let _ = writeln!(
                out,
                "\\subsection*{{What learning adds}}\n{}\n",
                tex(&learning_intro(self))
            );
            for family in &self.learning {
                let _ = writeln!(out, "\\paragraph{{{}}}", tex(&learning_title(family)));
                out.push_str("{\\scriptsize\n\\begin{tabular}{llrrrrrl}\n\\toprule\n");
                let head: Vec<String> = LEARNING_HEADER.iter().map(|h| tex(h)).collect();
                let _ = writeln!(out, "{} \\\\\n\\midrule", head.join(" & "));
                for row in learning_rows(family) {
                    let record: Vec<String> = row.iter().map(|x| tex(x)).collect();
                    let _ = writeln!(out, "{} \\\\", record.join(" & "));
                }
                out.push_str("\\bottomrule\n\\end{tabular}}\n\n");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn code_spans_and_symbols() {
        assert_eq!(super::tex("`a_b` ↓ − x < 1"), r"\texttt{a\_b} $\downarrow$ -- x $<$ 1");
    }
}
