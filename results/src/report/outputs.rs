//! Every file `schedlab report` writes, rendered in memory: the same run
//! folders give the same bytes (no timestamps, no absolute paths, seeded
//! statistics, stable order).

use super::decisions::DecisionsOverview;
use super::html::{HtmlInput, html, relative_reason};
use super::{ReportError, RunFolderData};
use crate::plots::{ArmSeries, ParetoPoint, Plot, PlotInput, SeedSeries, render_all};
use crate::summary::Summary;
use crate::summary::format::md_escape;

/// One output file, its path relative to the report folder ("/"-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

impl OutputFile {
    fn text(path: &str, text: String) -> OutputFile {
        OutputFile {
            path: path.to_string(),
            bytes: text.into_bytes(),
        }
    }
}

/// The summary's Pareto entries as the plots take them; arms with an
/// undefined objective cannot be placed and are left out.
pub fn pareto_points(summary: &Summary) -> Vec<ParetoPoint> {
    summary
        .pareto()
        .iter()
        .filter_map(|e| {
            Some(ParetoPoint {
                arm: e.point.arm.clone(),
                cost_usd: e.point.cost_usd?,
                failure_rate: e.point.failure_rate?,
                restarts: e.point.restarts?,
                on_front: e.on_front(),
            })
        })
        .collect()
}

/// report.md's list of the plots beside it, with their captions; and where
/// the stress plot is missing, how to get it.
fn plot_list(plots: &[Plot]) -> String {
    let mut out = String::from("## Plots\n\n");
    for plot in plots {
        out.push_str(&format!(
            "- [{}](plots/{}.svg) ([png](plots/{}.png))",
            md_escape(&plot.title),
            plot.name,
            plot.name
        ));
        if let Some(caption) = &plot.caption {
            out.push_str(&format!(": {}", md_escape(caption)));
        }
        out.push('\n');
    }
    if !plots.iter().any(|p| p.name == crate::plots::stress::NAME) {
        out.push_str(&format!(
            "\nNo `{}` plot: the runs have no decision records. {}\n",
            crate::plots::stress::NAME,
            super::decisions::HOW_TO_GET
        ));
    }
    out
}

/// Builds the summary, reads every run's time series, draws the plots and
/// renders summary.csv, summary.json, report.md, report.tex, report.html and
/// plots/*.svg|png. A partial report says "INCOMPLETE: n of m runs" in every
/// one of them (plots in a red band above the figure).
pub fn render(data: &RunFolderData) -> Result<Vec<OutputFile>, ReportError> {
    let summary = data.summary();
    let banner = data.incomplete_banner();

    let mut arms: Vec<ArmSeries> = Vec::new();
    for run in &data.runs {
        let series = crate::series::from_file(&run.records)?;
        let seed = SeedSeries { seed: run.seed, series };
        match arms.iter_mut().find(|a| a.arm == run.arm) {
            Some(arm) => arm.runs.push(seed),
            None => arms.push(ArmSeries {
                arm: run.arm.clone(),
                runs: vec![seed],
            }),
        }
    }
    let pareto = pareto_points(&summary);
    let decisions = DecisionsOverview::load(data)?;
    let plots = render_all(&PlotInput {
        scenario: data.scenario.clone(),
        arms,
        pareto,
        stress: decisions.stress.clone(),
        incomplete: banner.clone(),
    })?;

    let mut files = Vec::new();
    let mut csv = String::new();
    let mut md = String::new();
    let mut tex = String::new();
    if let Some(b) = &banner {
        csv.push_str(&format!("# {b}\n"));
        md.push_str(&format!(
            "> **{b}.** The tables below cover only the runs that finished.\n\n"
        ));
        tex.push_str(&format!("% {b}\n\\textbf{{{b}.}}\n\n"));
        for s in &data.skipped {
            md.push_str(&format!(
                "> left out: `{}` seed {}: {}\n",
                s.arm,
                s.seed,
                relative_reason(&s.reason, data)
            ));
        }
        if !data.skipped.is_empty() {
            md.push('\n');
        }
    }
    csv.push_str(&summary.to_csv());
    md.push_str(&summary.to_markdown());
    md.push_str(&plot_list(&plots));
    md.push('\n');
    md.push_str(&decisions.markdown());
    tex.push_str(&summary.to_latex());

    let mut json = summary.to_json();
    if let (Some(b), Some(object)) = (&banner, json.as_object_mut()) {
        object.insert("incomplete".into(), serde_json::Value::String(b.clone()));
        let skipped: Vec<serde_json::Value> = data
            .skipped
            .iter()
            .map(|s| serde_json::json!({"arm": s.arm, "seed": s.seed, "reason": relative_reason(&s.reason, data)}))
            .collect();
        object.insert("skipped_runs".into(), serde_json::Value::Array(skipped));
    }
    let mut json_text = serde_json::to_string_pretty(&json).unwrap_or_else(|_| "null".to_string());
    json_text.push('\n');

    files.push(OutputFile::text("summary.csv", csv));
    files.push(OutputFile::text("summary.json", json_text));
    files.push(OutputFile::text("report.md", md));
    files.push(OutputFile::text("report.tex", tex));
    files.push(OutputFile::text(
        "report.html",
        html(&HtmlInput {
            data,
            summary: &summary,
            plots: &plots,
            decisions: &decisions,
        }),
    ));
    for plot in &plots {
        files.push(OutputFile::text(&format!("plots/{}.svg", plot.name), plot.svg.clone()));
        files.push(OutputFile {
            path: format!("plots/{}.png", plot.name),
            bytes: plot.png.clone(),
        });
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::LoadOptions;
    use crate::report::folder::tests::write_folder;

    #[test]
    fn the_same_records_give_the_same_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("elsewhere/b"));
        write_folder(&a, &["default", "binpack"], &[1, 2, 3], 4);
        write_folder(&b, &["default", "binpack"], &[1, 2, 3], 4);
        let first = render(&RunFolderData::load(&a).unwrap()).unwrap();
        let second = render(&RunFolderData::load(&b).unwrap()).unwrap();
        assert_eq!(first, second, "same records, same bytes, wherever the folder lies");
        let names: Vec<&str> = first.iter().map(|f| f.path.as_str()).collect();
        for want in ["summary.csv", "summary.json", "report.md", "report.tex", "report.html"] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        assert!(names.iter().any(|n| n.starts_with("plots/") && n.ends_with(".svg")));
        assert!(names.iter().any(|n| n.starts_with("plots/") && n.ends_with(".png")));
        for f in &first {
            let text = String::from_utf8_lossy(&f.bytes);
            assert!(!text.contains(&a.display().to_string()), "{} holds a path", f.path);
            assert!(!text.contains("INCOMPLETE"), "{}", f.path);
        }
    }

    #[test]
    fn every_output_of_a_partial_report_says_incomplete() {
        let tmp = tempfile::tempdir().unwrap();
        write_folder(tmp.path(), &["default", "binpack"], &[1, 2], 4);
        std::fs::write(tmp.path().join("INCOMPLETE"), "").unwrap();
        std::fs::remove_file(tmp.path().join("runs/binpack/seed-2/records.jsonl")).unwrap();
        let data = RunFolderData::load_with(tmp.path(), LoadOptions { allow_incomplete: true }).unwrap();
        let files = render(&data).unwrap();
        for f in files.iter().filter(|f| !f.path.ends_with(".png")) {
            let text = String::from_utf8_lossy(&f.bytes);
            assert!(text.contains("INCOMPLETE: 3 of 4 runs"), "{} lacks the banner", f.path);
        }
        let json: serde_json::Value =
            serde_json::from_slice(&files.iter().find(|f| f.path == "summary.json").unwrap().bytes).unwrap();
        assert_eq!(json["skipped_runs"][0]["arm"], "binpack");
    }

    #[test]
    fn decision_records_add_the_stress_plot_and_the_agmarl_tables() {
        use crate::decisions::tests::agmarl_decision;
        use crate::decisions::{DECISIONS_FILE, DecisionsWriter, Level, Outcome};
        let tmp = tempfile::tempdir().unwrap();
        write_folder(tmp.path(), &["default", "agmarl"], &[1, 2], 4);
        let text = |files: &[OutputFile], name: &str| {
            String::from_utf8(files.iter().find(|f| f.path == name).unwrap().bytes.clone()).unwrap()
        };

        // without decisions.jsonl: no plot, and the reports say how to get one
        let files = render(&RunFolderData::load(tmp.path()).unwrap()).unwrap();
        assert!(!files.iter().any(|f| f.path.starts_with("plots/stress-over-time")));
        let (md, html) = (text(&files, "report.md"), text(&files, "report.html"));
        assert!(
            md.contains("## Plots") && md.contains("plots/pareto.svg"),
            "every plot listed"
        );
        assert!(md.contains("No decision records") && md.contains("--explain"));
        assert!(html.contains("No stress-over-time plot") && html.contains("<code>--explain</code>"));

        // agmarl seed 1 explained: a calm bind, two stressed declines
        let path = tmp.path().join("runs/agmarl/seed-1").join(DECISIONS_FILE);
        let mut w = DecisionsWriter::create(&path).unwrap();
        for d in [
            agmarl_decision(0, Level::Calm, Outcome::Bind),
            agmarl_decision(100, Level::Stressed, Outcome::Decline),
            agmarl_decision(200, Level::Stressed, Outcome::Decline),
        ] {
            w.record(&d);
        }
        w.finish().unwrap();
        let files = render(&RunFolderData::load(tmp.path()).unwrap()).unwrap();
        assert!(files.iter().any(|f| f.path == "plots/stress-over-time.svg"));
        assert!(files.iter().any(|f| f.path == "plots/stress-over-time.png"));
        let (md, html) = (text(&files, "report.md"), text(&files, "report.html"));
        assert!(
            md.contains("plots/stress-over-time.svg") && md.contains("mean over the seeds"),
            "{md}"
        );
        assert!(md.contains("1 of 4 runs"), "{md}");
        assert!(md.contains("| stressed | 2 | 0 | 0 | 2 |"), "{md}");
        assert!(md.contains("| strategic restraint | 2 |"), "{md}");
        assert!(html.contains("id=\"plot-stress-over-time\"") && html.contains("id=\"decisions\""));
        assert!(
            html.contains("<td>stressed</td><td>2</td><td>0</td><td>0</td><td>2</td>"),
            "{html}"
        );
        assert!(!html.contains("No stress-over-time plot"));
        // the same files give the same bytes
        assert_eq!(render(&RunFolderData::load(tmp.path()).unwrap()).unwrap(), files);

        // a damaged decisions file stops the report, naming it and the line
        std::fs::write(&path, "{not json\n").unwrap();
        let err = render(&RunFolderData::load(tmp.path()).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("seed-1") && err.contains(DECISIONS_FILE) && err.contains("line 1"),
            "{err}"
        );
    }

    #[test]
    fn pareto_points_mark_dominated_arms() {
        let tmp = tempfile::tempdir().unwrap();
        // synthetic runs crash more on later arms: same cost, more restarts
        write_folder(tmp.path(), &["default", "binpack"], &[1, 2], 4);
        let points = pareto_points(&RunFolderData::load(tmp.path()).unwrap().summary());
        assert_eq!(points.len(), 2);
        assert!(points[0].on_front && !points[1].on_front, "{points:?}");
    }
}
