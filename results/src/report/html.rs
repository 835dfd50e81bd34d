//! report.html: the one file a person reads first. Self-contained (inline
//! CSS and SVG, no script, no network), deterministic (no timestamps, no
//! paths), every number from the Summary built from the raw records.

use super::decisions::DecisionsOverview;
use super::pareto_note::pareto_note;
use crate::claims::ClaimsTable;
use crate::definitions::{ACROSS_SEEDS, Better, CORRELATIONS, METRICS, MetricDef};
use crate::plots::Plot;
use crate::run_folder::RunFolderData;
use crate::stats::{BOOTSTRAP_RESAMPLES, CONFIDENCE, MeanEstimate};
use crate::summary::Summary;
use crate::summary::format::correlation_cell;
use std::fmt::Write;

/// The metrics of the headline table, in order: the terminal's key
/// metrics; the full table follows in a collapsed section.
pub const HEADLINE: &[&str] = &crate::summary::KEY_METRICS;

/// What report.html is made of.
#[derive(Debug, Clone, Copy)]
pub struct HtmlInput<'a> {
    pub data: &'a RunFolderData,
    pub summary: &'a Summary,
    pub plots: &'a [Plot],
    pub decisions: &'a DecisionsOverview,
    /// the claims section, when the scenario is one of the claims'
    pub claims: Option<&'a ClaimsTable>,
}

pub(super) const CSS: &str = "\
:root{--ink:#1d2430;--muted:#5b6472;--rule:#d9dee5;--bg:#ffffff;--band:#f4f6f9;--accent:#1f5fa8;--warn:#a11d1d}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 'DejaVu Sans','Helvetica Neue',Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 64px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:28px 0 8px;border-bottom:1px solid var(--rule);padding-bottom:4px}
h3{font-size:16px;margin:20px 0 6px}
code{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.92em}
p.lead{color:var(--muted);margin:0 0 16px}
.banner{background:#fdecec;border:2px solid var(--warn);color:var(--warn);font-weight:bold;font-size:18px;padding:12px 16px;margin:12px 0 20px;border-radius:4px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:12px 0 0;padding:12px 16px;background:var(--band);border-radius:4px}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
table{border-collapse:collapse;width:100%;margin:8px 0 4px;font-variant-numeric:tabular-nums}
th,td{padding:5px 10px;border-bottom:1px solid var(--rule);text-align:right;white-space:nowrap}
th{background:var(--band);font-weight:600}
th:first-child,td:first-child{text-align:left;white-space:normal}
td.unit{text-align:left;color:var(--muted)}
td.best{font-weight:bold;color:var(--accent)}
tr:hover td{background:#fafbfd}
.note{color:var(--muted);font-size:13px}
figure{margin:18px 0 28px;padding:0}
figure svg{display:block;max-width:100%;height:auto;border:1px solid var(--rule);border-radius:4px}
figcaption{color:var(--muted);font-size:13px;margin-top:4px}
details{margin:8px 0}summary{cursor:pointer;color:var(--accent);font-weight:600}
.scroll{overflow:auto;max-width:100%}
details .scroll{max-height:75vh;border:1px solid var(--rule);border-radius:4px}
ul.headline{margin:6px 0 10px}
p.compared{margin:0 0 4px}
details.claim{margin:8px 0 0}details.claim>summary{color:var(--ink)}
ul.verdicts{margin:2px 0 0}
dl.defs dt{margin-top:10px;font-weight:600}dl.defs dd{margin:2px 0 0 0}
ul.skipped li{color:var(--warn)}
";

pub(super) use crate::summary::format::esc;

fn direction(better: Better) -> &'static str {
    match better {
        Better::Lower => " ↓",
        Better::Higher => " ↑",
        Better::Neither => "",
    }
}

fn decimals_for(x: f64, significant: i32) -> usize {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    (significant - 1 - x.abs().log10().floor() as i32).clamp(0, 9) as usize
}

fn fixed(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// "mean ± half-width" as the Markdown and terminal tables print it: the
/// mean to 4 significant digits, at least 2 of the half-width; "(n=k)" where
/// runs were left out as undefined; "n/a" where no run defines the metric.
fn cell(estimate: Option<MeanEstimate>, undefined: usize) -> String {
    let Some(e) = estimate else {
        return "n/a".to_string();
    };
    let hw = e.ci.half_width();
    let whole = e.mean.fract() == 0.0 && hw.fract() == 0.0;
    let d = if whole {
        0
    } else if e.n == 1 {
        decimals_for(e.mean, 4)
    } else {
        decimals_for(e.mean, 4).max(decimals_for(hw, 2))
    };
    let mut s = if e.n == 1 {
        format!("{} (n=1)", fixed(e.mean, d))
    } else {
        format!("{} ± {}", fixed(e.mean, d), fixed(hw, d))
    };
    if undefined > 0 && e.n > 1 {
        let _ = write!(s, " (n={})", e.n);
    }
    s
}

fn metric_table(out: &mut String, summary: &Summary, keys: &[&str]) {
    out.push_str("<table>\n<thead><tr><th>metric</th><th>unit</th>");
    for (i, arm) in summary.arms().iter().enumerate() {
        let reference = if i == 0 {
            " <span class=\"note\">(reference)</span>"
        } else {
            ""
        };
        let _ = write!(out, "<th><code>{}</code>{reference}</th>", esc(&arm.arm));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for key in keys {
        let Some(index) = METRICS.iter().position(|d| d.key == *key) else {
            continue;
        };
        let def = &METRICS[index];
        let best = summary.best_arms(index);
        let _ = write!(
            out,
            "<tr><td title=\"{}\"><code>{}</code>{}</td><td class=\"unit\">{}</td>",
            esc(def.label),
            esc(def.key),
            direction(def.better),
            esc(def.unit)
        );
        for (arm, is_best) in summary.arms().iter().zip(best) {
            let stats = arm.metrics.get(index);
            let text = stats.map_or_else(|| "n/a".to_string(), |m| cell(m.estimate, m.undefined));
            let class = if is_best { " class=\"best\"" } else { "" };
            // a star and the test in a tooltip where the arm differs from the reference
            let mark = match stats.and_then(|m| m.vs_reference.as_ref()) {
                Some(v) if v.significant => format!(
                    "<sup title=\"Holm-adjusted p = {:.3}, Cliff's delta = {:.2}, A12 = {:.2}\">*</sup>",
                    v.p_holm, v.cliffs_delta, v.a12
                ),
                _ => String::new(),
            };
            let _ = write!(out, "<td{class}>{}{mark}</td>", esc(&text));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// An SVG document as an inline element: without the XML prolog, which is
/// not allowed inside HTML.
fn inline_svg(svg: &str) -> &str {
    let trimmed = svg.trim_start();
    if trimmed.starts_with("<?xml") {
        trimmed
            .find("?>")
            .map_or(trimmed, |end| trimmed[end + 2..].trim_start())
    } else {
        trimmed
    }
}

/// Every run's memory-request/failure correlation, with n and its interval,
/// as report.md has it.
fn correlation_table(out: &mut String, summary: &Summary) {
    let pct = CONFIDENCE * 100.0;
    out.push_str("<h2 id=\"correlations\">Memory request vs failures</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">Per run, over the pods bound at least once: the correlation between a pod's memory request \
         and its failure count, with {pct}% percentile-bootstrap intervals over pods ({BOOTSTRAP_RESAMPLES} resamples, \
         seeded). n/a: undefined (fewer than 3 pods, or no variation in requests or failures). †: some resamples had \
         no variation and are left out of the interval (counts in summary.json).</p>"
    );
    let _ = writeln!(
        out,
        "<p class=\"note\">Partial r: the same pods, each less its template's means: the correlation that remains \
         within templates. A pooled correlation that the partial one does not keep comes from the mix of \
         templates.</p>"
    );
    let _ = writeln!(
        out,
        "<table>\n<thead><tr><th>arm</th><th>seed</th><th>pods (n)</th><th>Pearson r [{pct}% CI]</th>\
         <th>Spearman rho [{pct}% CI]</th><th>templates</th><th>partial r [{pct}% CI]</th></tr></thead>\n<tbody>"
    );
    for arm in summary.arms() {
        for ((run, c), d) in arm.runs.iter().zip(&arm.correlations).zip(&arm.decoupling) {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&arm.arm),
                run.seed,
                c.n,
                esc(&correlation_cell(c.pearson.as_ref())),
                esc(&correlation_cell(c.spearman.as_ref())),
                d.partial.groups,
                esc(&correlation_cell(d.partial.pearson.as_ref()))
            );
        }
    }
    out.push_str("</tbody>\n</table>\n");
    out.push_str("<h3 id=\"template-correlations\">Within each template</h3>\n");
    let _ = writeln!(
        out,
        "<table>\n<thead><tr><th>arm</th><th>seed</th><th>template</th><th>pods (n)</th>\
         <th>Pearson r [{pct}% CI]</th><th>Spearman rho [{pct}% CI]</th></tr></thead>\n<tbody>"
    );
    for arm in summary.arms() {
        for (seed, t) in arm.template_correlations() {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&arm.arm),
                seed,
                esc(&t.name),
                t.estimate.n,
                esc(&correlation_cell(t.estimate.pearson.as_ref())),
                esc(&correlation_cell(t.estimate.spearman.as_ref()))
            );
        }
    }
    out.push_str("</tbody>\n</table>\n");
}

fn definition(out: &mut String, d: &MetricDef) {
    let _ = writeln!(
        out,
        "<dt><code>{}</code> <span class=\"note\">({}{})</span></dt><dd>{}</dd>",
        esc(d.key),
        esc(d.unit),
        direction(d.better),
        esc(d.definition)
    );
}

/// `text` up to its first full stop followed by a space (all of it without
/// one): a scenario's description in one sentence.
fn first_sentence(text: &str) -> &str {
    text.find(". ").map_or(text, |at| &text[..=at])
}

/// The whole report.html.
pub fn html(input: &HtmlInput<'_>) -> String {
    let HtmlInput {
        data,
        summary,
        plots,
        decisions,
        claims,
    } = *input;
    let pct = CONFIDENCE * 100.0;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>schedlab report: {}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n",
        esc(summary.scenario())
    );
    let _ = writeln!(out, "<h1>Scenario <code>{}</code></h1>", esc(summary.scenario()));
    // the scenario in one sentence; the whole description is in the provenance
    let description = data
        .resolved_scenario
        .get("description")
        .and_then(serde_json::Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty());
    if let Some(d) = description {
        let _ = writeln!(out, "<p class=\"lead\">{}</p>", esc(first_sentence(d)));
    }
    if let Some(banner) = data.incomplete_banner() {
        let _ = writeln!(
            out,
            "<div class=\"banner\">{}. The tables and plots below cover only the runs that finished.</div>",
            esc(&banner)
        );
    }

    // what was compared, in one line; where it comes from, folded
    let arms: Vec<String> = summary
        .arms()
        .iter()
        .map(|a| format!("<code>{}</code>", esc(&a.arm)))
        .collect();
    let seeds: Vec<String> = data.seeds.iter().map(u64::to_string).collect();
    let runs = format!("{} of {}", data.runs.len(), data.expected_runs());
    let _ = writeln!(
        out,
        "<p class=\"compared\">{} (the first is the reference) · seeds {} · {runs} runs · backend {}</p>",
        arms.join(", "),
        seeds.join(", "),
        esc(&data.backend)
    );
    let revisions = data.git_revisions();
    let revision = if revisions.is_empty() {
        "unknown".to_string()
    } else {
        revisions
            .iter()
            .map(|r| format!("<code>{}</code>", esc(r)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut facts = vec![
        ("scenario", format!("<code>{}</code>", esc(summary.scenario()))),
        ("backend", esc(&data.backend)),
        ("arms", format!("{} (the first is the reference)", arms.join(", "))),
        ("seeds", seeds.join(", ")),
        ("runs", runs),
        ("run folders", data.folders.len().to_string()),
        ("git revision", revision),
        ("statistics seed", summary.stats_seed().to_string()),
    ];
    if let Some(d) = description {
        facts.insert(1, ("description", esc(d)));
    }
    out.push_str(
        "<details>\n<summary>Provenance</summary>\n<p class=\"note\">Every number below was computed by \
         <code>schedlab report</code> from the raw records of the run folders, and from nothing else.</p>\n\
         <dl class=\"facts\">\n",
    );
    for (k, v) in facts {
        let _ = writeln!(out, "<dt>{k}</dt><dd>{v}</dd>");
    }
    out.push_str("</dl>\n</details>\n");

    // what a reader wants first: the claims, then the headline
    if let Some(claims) = claims {
        out.push_str(&claims.to_html());
    }

    // headline table
    out.push_str("<h2 id=\"headline\">Headline</h2>\n");
    let lines = summary.brief_headline();
    if !lines.is_empty() {
        out.push_str("<ul class=\"headline\">\n");
        for line in lines {
            let _ = writeln!(out, "<li>{}</li>", esc(&line));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<div class=\"scroll\">\n");
    metric_table(&mut out, summary, HEADLINE);
    out.push_str("</div>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">Each cell: the mean over the arm's runs ± half the width of the {pct}% percentile-bootstrap \
         interval of that mean ({BOOTSTRAP_RESAMPLES} resamples, seeded). ↓ / ↑: lower / higher is better; bold marks \
         the best mean of such a row, which is not a significance test. *: differs from the reference arm \
         (two-sided Mann–Whitney U over seeds, Holm-adjusted across metrics, p &lt; 0.05; hover for p and effect \
         sizes). n/a: no run defines the metric.</p>"
    );

    // plots
    out.push_str("<h2 id=\"plots\">Plots</h2>\n");
    if plots.is_empty() {
        out.push_str("<p class=\"note\">No plots.</p>\n");
    }
    for plot in plots {
        let caption = plot
            .caption
            .as_deref()
            .map_or_else(String::new, |c| format!("{}<br>", esc(c)));
        let _ = write!(
            out,
            "<figure id=\"plot-{}\" title=\"{}\">\n{}\n<figcaption>{caption}plots/{}.svg, plots/{}.png</figcaption>\n\
             </figure>\n",
            esc(&plot.name),
            esc(&plot.title),
            inline_svg(&plot.svg),
            esc(&plot.name),
            esc(&plot.name)
        );
    }
    if decisions.runs_with == 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">No stress-over-time plot: the runs have no decision records. {}</p>",
            super::decisions::code_spans(super::decisions::HOW_TO_GET)
        );
    }

    // Pareto
    out.push_str("<h2 id=\"pareto\">Pareto front</h2>\n");
    let _ = writeln!(out, "<p>{}</p>", esc(&pareto_note(summary.pareto())));

    out.push_str(&decisions.html());

    correlation_table(&mut out, summary);

    // all metrics
    out.push_str("<h2 id=\"all-metrics\">All metrics</h2>\n<details>\n<summary>Every metric of every arm</summary>\n<div class=\"scroll\">\n");
    let all: Vec<&str> = METRICS.iter().map(|d| d.key).collect();
    metric_table(&mut out, summary, &all);
    out.push_str("</div>\n</details>\n");

    if !data.skipped.is_empty() {
        out.push_str("<h2 id=\"left-out\">Runs left out</h2>\n<ul class=\"skipped\">\n");
        for s in &data.skipped {
            let _ = writeln!(
                out,
                "<li><code>{}</code> seed {}: {}</li>",
                esc(&s.arm),
                s.seed,
                esc(&relative_reason(&s.reason, data))
            );
        }
        out.push_str("</ul>\n");
    }

    // definitions
    out.push_str("<h2 id=\"definitions\">Definitions</h2>\n<h3>Across seeds</h3>\n");
    let _ = writeln!(out, "<p>{}</p>", esc(ACROSS_SEEDS));
    out.push_str("<h3>Metrics of a run</h3>\n<dl class=\"defs\">\n");
    for d in METRICS {
        definition(&mut out, d);
    }
    out.push_str("</dl>\n<h3>Correlations of a run</h3>\n<dl class=\"defs\">\n");
    for d in CORRELATIONS {
        definition(&mut out, d);
    }
    out.push_str("</dl>\n</main>\n</body>\n</html>\n");
    out
}

/// A skip reason without the folder's own path, so the report does not
/// depend on where the folder lies.
pub(super) fn relative_reason(reason: &str, data: &RunFolderData) -> String {
    data.folders.iter().fold(reason.to_string(), |acc, f| {
        let prefix = format!("{}{}", f.dir.display(), std::path::MAIN_SEPARATOR);
        acc.replace(&prefix, "")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_is_led_by_its_first_sentence() {
        assert_eq!(
            first_sentence("Volatile churn. Nodes fail. e.g. more"),
            "Volatile churn."
        );
        assert_eq!(
            first_sentence("One sentence without a stop"),
            "One sentence without a stop"
        );
        assert_eq!(first_sentence("Ends here."), "Ends here.");
    }
    use crate::run_folder::reader::tests::write_folder;
    use crate::run_folder::{LoadOptions, RunFolderData};

    fn plot(name: &str) -> Plot {
        Plot {
            name: name.to_string(),
            title: format!("{name} <title>"),
            svg: format!(
                "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><text>{name}</text></svg>"
            ),
            png: Vec::new(),
            caption: None,
        }
    }

    #[test]
    fn a_report_holds_the_facts_the_table_and_the_plots_inline() {
        let tmp = tempfile::tempdir().unwrap();
        write_folder(tmp.path(), &["default", "binpack"], &[1, 2], 4);
        let data = RunFolderData::load(tmp.path()).unwrap();
        let summary = data.summary();
        let plots = [plot("alpha"), plot("beta")];
        let page = html(&HtmlInput {
            data: &data,
            summary: &summary,
            plots: &plots,
            decisions: &DecisionsOverview::default(),
            claims: None,
        });
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.ends_with("</html>\n"));
        for want in [
            "synthetic",
            "<code>default</code>",
            "<code>binpack</code>",
            "abc123",
            "sim",
            "cost_usd",
            "±",
            "id=\"correlations\"",
            "Pearson r [95% CI]",
        ] {
            assert!(page.contains(want), "{want} missing");
        }
        assert!(
            page.contains("<svg xmlns") && !page.contains("<?xml"),
            "SVG inline without prolog"
        );
        assert!(page.contains("alpha &lt;title&gt;"), "titles escaped");
        assert!(
            !page.contains("<script") && !page.contains("https://") && !page.contains("src="),
            "no network"
        );
        assert!(!page.contains("NaN"));
        assert!(!page.contains(&tmp.path().display().to_string()), "no absolute paths");
        assert!(!page.contains("INCOMPLETE"));
        // the headline first, then the pictures, the Pareto note, and the full table last
        let at = |id: &str| {
            page.find(&format!("id=\"{id}\""))
                .unwrap_or_else(|| panic!("{id} missing"))
        };
        assert!(at("headline") < at("plots") && at("plots") < at("pareto") && at("pareto") < at("all-metrics"));
        assert!(
            page[at("all-metrics")..].contains("<div class=\"scroll\">"),
            "the full table scrolls in its box"
        );
        // deterministic
        let again = html(&HtmlInput {
            data: &data,
            summary: &data.summary(),
            plots: &plots,
            decisions: &DecisionsOverview::default(),
            claims: None,
        });
        assert_eq!(page, again);
    }

    #[test]
    fn a_partial_report_says_so_at_the_top() {
        let tmp = tempfile::tempdir().unwrap();
        write_folder(tmp.path(), &["default"], &[1, 2, 3], 4);
        std::fs::write(tmp.path().join("INCOMPLETE"), "").unwrap();
        std::fs::remove_file(tmp.path().join("runs/default/seed-3/records.jsonl")).unwrap();
        let data = RunFolderData::load_with(tmp.path(), LoadOptions { allow_incomplete: true }).unwrap();
        let summary = data.summary();
        let page = html(&HtmlInput {
            data: &data,
            summary: &summary,
            plots: &[],
            decisions: &DecisionsOverview::default(),
            claims: None,
        });
        let banner = page.find("INCOMPLETE: 2 of 3 runs").expect("banner");
        assert!(
            banner < page.find("id=\"headline\"").unwrap(),
            "banner before the table"
        );
        assert!(page.contains("Runs left out") && page.contains("runs/default/seed-3/records.jsonl"));
        assert!(!page.contains(&tmp.path().display().to_string()), "no absolute paths");
    }

    #[test]
    fn cells_match_the_table_conventions() {
        use crate::stats::Interval;
        let e = |mean, low, high, n| MeanEstimate {
            mean,
            std: None,
            ci: Interval { low, high },
            n,
        };
        assert_eq!(cell(None, 0), "n/a");
        assert_eq!(cell(Some(e(0.512345, 0.5, 0.5246, 3)), 0), "0.5123 ± 0.0123");
        assert_eq!(cell(Some(e(12.0, 11.0, 13.0, 3)), 0), "12 ± 1");
        assert_eq!(cell(Some(e(2.5, 2.5, 2.5, 1)), 0), "2.500 (n=1)");
        assert_eq!(cell(Some(e(2.0, 1.0, 3.0, 2)), 1), "2 ± 1 (n=2)");
    }
}
