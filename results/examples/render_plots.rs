//! Renders every plot of a run folder: `cargo run -p results --example
//! render_plots -- RUN_DIR OUT_DIR`. The arms come in the order of the
//! manifest's "arms" (alphabetical when it has none); the Pareto points here
//! are plain means with a naive dominance check, for a look at the plots
//! only (reports take them from the summary).

use results::plots::{ArmSeries, ParetoPoint, PlotInput, SeedSeries, render_all, write_plots};
use std::error::Error;
use std::path::Path;

fn arms_of(dir: &Path) -> Result<Vec<String>, Box<dyn Error>> {
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json"))?)?;
    if let Some(arms) = manifest.get("arms").and_then(|a| a.as_array()) {
        return Ok(arms.iter().filter_map(|a| a.as_str().map(str::to_string)).collect());
    }
    let mut arms: Vec<String> = std::fs::read_dir(dir.join("runs"))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    arms.sort();
    Ok(arms)
}

fn scenario_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .and_then(|m| m.get("scenario").and_then(|s| s.as_str().map(str::to_string)))
        .unwrap_or_else(|| "scenario".to_string())
}

fn mean(v: impl Iterator<Item = Option<f64>>) -> f64 {
    let v: Vec<f64> = v.flatten().collect();
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, out] = args.as_slice() else {
        return Err("usage: render_plots RUN_DIR OUT_DIR".into());
    };
    let dir = Path::new(dir);
    let mut arms = Vec::new();
    for arm in arms_of(dir)? {
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(dir.join("runs").join(&arm))? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(seed) = name.strip_prefix("seed-").and_then(|s| s.parse().ok()) else {
                continue;
            };
            let series = results::series::from_file(&entry.path().join("records.jsonl"))?;
            runs.push(SeedSeries {
                seed,
                series: series.into(),
            });
        }
        runs.sort_by_key(|r| r.seed);
        arms.push(ArmSeries { arm, runs });
    }
    let means: Vec<(String, [f64; 3])> = arms
        .iter()
        .map(|a| {
            let m = |f: fn(&results::RunMetrics) -> Option<f64>| mean(a.runs.iter().map(|r| f(&r.series.metrics)));
            let point = [
                m(|m| m.samples.cost_usd),
                m(|m| m.failure_rate),
                m(|m| Some(m.restarts as f64)),
            ];
            (a.arm.clone(), point)
        })
        .collect();
    let pareto = means
        .iter()
        .map(|(arm, p)| {
            let dominated = means
                .iter()
                .any(|(_, q)| q.iter().zip(p).all(|(a, b)| a <= b) && q.iter().zip(p).any(|(a, b)| a < b));
            ParetoPoint {
                arm: arm.clone(),
                cost_usd: p[0],
                failure_rate: p[1],
                restarts: p[2],
                on_front: !dominated,
            }
        })
        .collect();
    let input = PlotInput {
        scenario: scenario_of(dir),
        arms,
        pareto,
        // `schedlab report` adds the stress plot from decisions.jsonl
        stress: None,
        // `schedlab report` adds the key metrics' forest plot from the summary
        intervals: Vec::new(),
        incomplete: None,
    };
    let plots = render_all(&input)?;
    write_plots(&plots, Path::new(out))?;
    for p in &plots {
        println!("{}: {} ({} B svg, {} B png)", p.name, p.title, p.svg.len(), p.png.len());
    }
    Ok(())
}
