//! Every file `schedlab report` writes, rendered in memory: the same run
//! folders give the same bytes (no timestamps, no absolute paths, seeded
//! statistics, stable order).

use super::ReportError;
use super::decisions::DecisionsOverview;
use super::html::{HtmlInput, html, relative_reason};
use crate::claims::{CLAIMS_JSON, ClaimsTable, DEFAULT_ARM, ScenarioValues};
use crate::plots::{ArmSeries, ParetoPoint, Plot, PlotInput, SeedSeries, render_all};
use crate::run_folder::RunFolderData;
use crate::summary::Summary;
use crate::summary::format::md_escape;

/// One output file, its path relative to the report folder ("/"-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

impl OutputFile {
    pub(super) fn text(path: &str, text: String) -> OutputFile {
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

/// What `schedlab report` writes and prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// every file, paths relative to the report folder
    pub files: Vec<OutputFile>,
    /// the terminal tables: every scenario's summary, then the claims
    pub terminal: String,
    /// the same, each scenario's summary as its headline and key table
    /// ([`Summary::to_terminal_brief`]): what `report` prints by default
    pub brief: String,
}

/// The report of one scenario's run folders, as [`render_report`] writes it
/// for them (claims judged on arm `agmarl`).
pub fn render(data: &RunFolderData) -> crate::Result<Vec<OutputFile>> {
    Ok(render_report(std::slice::from_ref(data), DEFAULT_ARM)?.files)
}

/// The report of run folders grouped by scenario (as
/// [`RunFolderData::load_grouped`] gives them). One scenario: its report
/// (see [`render_scenario`]) with the claims section of the claims tested on
/// it, if any. Several: each scenario's report under `<scenario>/` as
/// before, without claims, and at the top an index (report.md, report.tex,
/// report.html) linking them, with the claims section, and claims.json. The
/// claims judge arm `claims_arm`.
pub fn render_report(groups: &[RunFolderData], claims_arm: &str) -> crate::Result<Report> {
    let summaries: Vec<Summary> = groups.iter().map(RunFolderData::summary).collect();
    Ok(render_report_with(groups, &summaries, claims_arm)?)
}

/// [`render_report`] with each group's summary already built (`summaries[i]` of `groups[i]`).
pub fn render_report_with(
    groups: &[RunFolderData],
    summaries: &[Summary],
    claims_arm: &str,
) -> Result<Report, ReportError> {
    let values = groups
        .iter()
        .zip(summaries)
        .map(|(d, s)| ScenarioValues::from_summary(s, d.incomplete_banner()).map(|v| v.with_folder(d)))
        .collect::<Result<Vec<_>, _>>()?;
    let claims = ClaimsTable::evaluate(&values, claims_arm)?;
    let claims = (!claims.is_empty()).then_some(claims);
    let mut terminal = String::new();
    let mut brief = String::new();
    let files = match groups {
        [] => return Err(ReportError::NoFolders),
        [one] => {
            let summary = summaries.first().ok_or(ReportError::NoFolders)?;
            terminal.push_str(&summary.to_terminal_table());
            brief.push_str(&summary.to_terminal_brief(&all_metrics_line("report.md")));
            render_scenario(one, summary, claims.as_ref())?
        }
        many => {
            let folders = super::index::folder_names(many);
            let mut files = Vec::new();
            for ((data, summary), folder) in many.iter().zip(summaries).zip(&folders) {
                if !terminal.is_empty() {
                    terminal.push('\n');
                    brief.push('\n');
                }
                terminal.push_str(&summary.to_terminal_table());
                brief.push_str(&summary.to_terminal_brief(&all_metrics_line(&format!("{folder}/report.md"))));
                for f in render_scenario(data, summary, None)? {
                    files.push(OutputFile {
                        path: format!("{folder}/{}", f.path),
                        bytes: f.bytes,
                    });
                }
            }
            files.extend(super::index::index_files(many, &folders, claims.as_ref()));
            files
        }
    };
    if let Some(c) = &claims {
        terminal.push('\n');
        terminal.push_str(&c.to_terminal());
        brief.push('\n');
        brief.push_str(&c.to_terminal_brief(
            "Each claim's rows against every baseline and what learning adds: report.md, or --all-metrics",
        ));
    }
    Ok(Report { files, terminal, brief })
}

/// The forest plot's panels: the key metrics that say something (not zero,
/// constant or undefined in every run), each other arm's difference from the
/// reference with the bootstrap interval of that difference (each side's
/// seeds resampled on their own, from streams of the statistics seed, the
/// metric and the arm).
fn key_intervals(summary: &Summary) -> Vec<crate::plots::MetricIntervals> {
    use crate::claims::effect::{Sample, effect};
    use crate::definitions::{Better, METRICS};
    use crate::plots::{ArmInterval, MetricIntervals};
    use crate::stats::BOOTSTRAP_RESAMPLES;
    use crate::summary::{STREAM_DIFFERENCE, key_hash};
    use schedlab_core::rng::{purpose, stream};
    let Some(reference) = summary.reference_arm() else {
        return Vec::new();
    };
    summary
        .key_metric_indices()
        .into_iter()
        .map(|i| {
            let def = &METRICS[i];
            let base = reference.metrics.get(i).map(|m| Sample::seeds(&m.defined_values()));
            let arms = summary
                .arms()
                .iter()
                .filter(|arm| arm.arm != reference.arm)
                .filter_map(|arm| {
                    let m = arm.metrics.get(i)?;
                    let rng = |k: u64| {
                        stream(
                            summary.stats_seed(),
                            &[
                                purpose::STATISTICS,
                                STREAM_DIFFERENCE,
                                key_hash(def.key),
                                key_hash(&arm.arm),
                                k,
                            ],
                        )
                    };
                    let e = effect(
                        &Sample::seeds(&m.defined_values()),
                        base.as_ref()?,
                        BOOTSTRAP_RESAMPLES,
                        rng,
                    )?;
                    let ci = e.ci?;
                    Some(ArmInterval {
                        arm: arm.arm.clone(),
                        diff: e.diff,
                        low: ci.low,
                        high: ci.high,
                        differs: m.vs_reference.is_some_and(|c| c.significant),
                    })
                })
                .collect();
            MetricIntervals {
                key: def.key.to_string(),
                unit: def.unit.to_string(),
                better: match def.better {
                    Better::Lower => "lower is better".into(),
                    Better::Higher => "higher is better".into(),
                    Better::Neither => String::new(),
                },
                reference: reference.arm.clone(),
                arms,
            }
        })
        .collect()
}

/// The line under a brief summary that says where the rest is.
pub fn all_metrics_line(report_md: &str) -> String {
    format!("Every metric with its interval and test: {report_md} in the report folder, or --all-metrics")
}

/// claims.json's text.
pub(super) fn claims_json(claims: &ClaimsTable) -> OutputFile {
    let mut text = serde_json::to_string_pretty(&claims.to_json()).unwrap_or_else(|_| "null".to_string());
    text.push('\n');
    OutputFile::text(CLAIMS_JSON, text)
}

/// One scenario's report from its summary: draws the plots from every run's time series and
/// renders summary.csv, summary.json, report.md, report.tex, report.html and
/// plots/*.svg|png, and with `claims` its section in report.md, report.tex
/// and report.html, and claims.json. A partial report says "INCOMPLETE: n of m runs" in every
/// one of them (plots in a red band above the figure).
pub fn render_scenario(
    data: &RunFolderData,
    summary: &Summary,
    claims: Option<&ClaimsTable>,
) -> Result<Vec<OutputFile>, ReportError> {
    let banner = data.incomplete_banner();

    let mut arms: Vec<ArmSeries> = Vec::new();
    for run in &data.runs {
        let seed = SeedSeries {
            seed: run.seed,
            series: run.series.clone(),
        };
        match arms.iter_mut().find(|a| a.arm == run.arm) {
            Some(arm) => arm.runs.push(seed),
            None => arms.push(ArmSeries {
                arm: run.arm.clone(),
                runs: vec![seed],
            }),
        }
    }
    let pareto = pareto_points(summary);
    let decisions = DecisionsOverview::load(data)?;
    let plots = render_all(&PlotInput {
        scenario: data.scenario.clone(),
        arms,
        pareto,
        stress: Some(decisions.stress.clone()),
        intervals: key_intervals(summary),
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
    if let Some(c) = claims {
        md.push('\n');
        md.push_str(&c.to_markdown());
        tex.push_str(&c.to_latex());
    }

    let mut json = summary.json_document();
    if let Some(b) = &banner {
        json.incomplete = Some(b.clone());
        let skipped: Vec<serde_json::Value> = data
            .skipped
            .iter()
            .map(|s| serde_json::json!({"arm": s.arm, "seed": s.seed, "reason": relative_reason(&s.reason, data)}))
            .collect();
        json.skipped_runs = Some(serde_json::Value::Array(skipped));
    }
    let json_text = json.to_pretty_text().unwrap_or_else(|_| "null\n".to_string());

    files.push(OutputFile::text("summary.csv", csv));
    files.push(OutputFile::text("summary.json", json_text));
    files.push(OutputFile::text("report.md", md));
    files.push(OutputFile::text("report.tex", tex));
    files.push(OutputFile::text(
        "report.html",
        html(&HtmlInput {
            data,
            summary,
            plots: &plots,
            decisions: &decisions,
            claims,
        }),
    ));
    if let Some(c) = claims {
        files.push(claims_json(c));
    }
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
    use crate::run_folder::LoadOptions;
    use crate::run_folder::reader::tests::{write_folder, write_folder_declaring, write_folder_of};

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

    /// A synthetic folder renamed to `scenario`.
    fn folder_of(dir: &std::path::Path, scenario: &str, arms: &[&str]) -> RunFolderData {
        write_folder_of(dir, scenario, arms, &[1, 2], 4);
        RunFolderData::load(dir).unwrap()
    }

    /// A synthetic folder whose scenario declares `claims` ("claim/role").
    fn declaring(dir: &std::path::Path, scenario: &str, claims: &[&str], arms: &[&str]) -> RunFolderData {
        let list: Vec<serde_json::Value> = claims
            .iter()
            .map(|c| {
                let (claim, role) = c.split_once('/').unwrap();
                serde_json::json!({"claim": claim, "role": role})
            })
            .collect();
        write_folder_declaring(dir, scenario, serde_json::Value::Array(list), arms, &[1, 2], 4);
        RunFolderData::load(dir).unwrap()
    }

    fn text_of(files: &[OutputFile], name: &str) -> String {
        String::from_utf8(files.iter().find(|f| f.path == name).unwrap().bytes.clone()).unwrap()
    }

    #[test]
    fn claims_are_added_only_where_a_claim_scenario_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        // a scenario that declares no claim: the report of before, nothing added
        let other = folder_of(&tmp.path().join("o"), "churn", &["default", "agmarl"]);
        let report = render_report(std::slice::from_ref(&other), DEFAULT_ARM).unwrap();
        assert_eq!(report.files, render_scenario(&other, &other.summary(), None).unwrap());
        assert!(!report.files.iter().any(|f| f.path == CLAIMS_JSON));
        assert_eq!(report.terminal, other.summary().to_terminal_table());

        // one scenario declaring claims: its report with the claims section added at the end
        let churn = declaring(
            &tmp.path().join("c"),
            "my-churn",
            &["restraint/churn-faults", "pareto/stress-faults"],
            &["default", "agmarl"],
        );
        let files = render(&churn).unwrap();
        let plain = render_scenario(&churn, &churn.summary(), None).unwrap();
        let (md, before) = (text_of(&files, "report.md"), text_of(&plain, "report.md"));
        let added = md.strip_prefix(&before).expect("the report of before, then the claims");
        assert!(
            added.contains("## Claims") && added.contains("Claim 2 (restraint): strategic restraint"),
            "{added}"
        );
        assert!(!added.contains("Claim 1 "), "claim 1 is not declared");
        assert!(
            added.contains("SHA-256") && added.contains("2026-12-07"),
            "the pre-registration is named"
        );
        assert!(text_of(&files, "report.tex").contains("\\section*{Claims}"));
        assert!(text_of(&files, "report.html").contains("id=\"claims\""));
        assert_eq!(text_of(&files, "summary.json"), text_of(&plain, "summary.json"));
        let json: serde_json::Value = serde_json::from_str(&text_of(&files, CLAIMS_JSON)).unwrap();
        assert_eq!(json["arm"], "agmarl");

        // two scenarios: each report in its folder, without claims; index and claims at the top
        let pressure = declaring(
            &tmp.path().join("p"),
            "pressure",
            &["packing/cascading-pressure", "pareto/stress"],
            &["default", "agmarl"],
        );
        let report = render_report(&[churn.clone(), pressure.clone()], "agmarl").unwrap();
        let names: Vec<&str> = report.files.iter().map(|f| f.path.as_str()).collect();
        for want in [
            "my-churn/report.html",
            "pressure/summary.json",
            "report.md",
            "report.tex",
            "report.html",
            CLAIMS_JSON,
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        assert!(!text_of(&report.files, "my-churn/report.md").contains("## Claims"));
        assert_eq!(text_of(&report.files, "my-churn/report.md"), before);
        let index = text_of(&report.files, "report.html");
        assert!(index.contains("href=\"my-churn/report.html\"") && index.contains("href=\"pressure/report.html\""));
        assert!(
            index.contains("Claim 1 (packing): smart packing") && index.contains("Claim 4 (pareto): Pareto balance")
        );
        assert!(report.terminal.contains("scenario my-churn") && report.terminal.contains("scenario pressure"));
        assert!(report.terminal.contains("\nClaims\n"));
        assert_eq!(
            render_report(&[churn, pressure], "agmarl").unwrap(),
            report,
            "same bytes again"
        );
    }

    #[test]
    fn scenario_folders_stay_inside_the_report() {
        let tmp = tempfile::tempdir().unwrap();
        let groups: Vec<RunFolderData> = ["../up", "a/b", "..", "report.md", "a_b"]
            .iter()
            .enumerate()
            .map(|(i, name)| folder_of(&tmp.path().join(i.to_string()), name, &["default"]))
            .collect();
        assert_eq!(
            crate::report::folder_names(&groups),
            [".._up", "a_b", "scenario..", "report.md-2", "a_b-2"]
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
