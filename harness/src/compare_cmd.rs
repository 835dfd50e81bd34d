//! `schedlab compare BASE NEW`: the regression gate. Exits 3 when NEW is
//! significantly worse than BASE on a gated metric, 0 otherwise, 2 on bad
//! input and 1 when something else failed (a folder that cannot be read).

use crate::exit::{InputError, Regression};
use crate::out::{out, outln};
use anyhow::{Result, bail};
use results::compare::{DEFAULT_GATED, compare};
use results::report::ReportError;
use results::run_folder::{LoadOptions, RunFolderData};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The reference run folder.
    #[arg(value_name = "BASE")]
    pub base: PathBuf,

    /// The run folder to judge against BASE (same scenario; arms matched by name).
    #[arg(value_name = "NEW")]
    pub new: PathBuf,

    /// How much worse a mean may get before it counts, relative to BASE's: "5%" or "0.05".
    #[arg(long, default_value = "5%", value_parser = parse_margin)]
    pub margin: f64,

    /// The gated metrics, comma-separated. Default: cost_usd, failure_rate, restarts, evictions,
    /// pods_pending_end, sched_latency_p99_s.
    #[arg(long, value_delimiter = ',', value_name = "KEYS")]
    pub metrics: Vec<String>,
}

fn parse_margin(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("{text:?} is not a margin; give e.g. 5% or 0.05"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("{text:?}: the margin must be a non-negative number"));
    }
    Ok(value)
}

fn load(dir: &Path) -> results::Result<RunFolderData> {
    RunFolderData::load_with(dir, LoadOptions::default())
}

pub fn run(args: CompareArgs) -> Result<()> {
    let gated: Vec<String> = if args.metrics.is_empty() {
        DEFAULT_GATED.iter().map(|s| s.to_string()).collect()
    } else {
        args.metrics.iter().map(|s| s.trim().to_string()).collect()
    };
    for key in &gated {
        let known = results::definitions::METRICS.iter().any(|d| d.key == key);
        if !known {
            let keys: Vec<&str> = results::definitions::METRICS.iter().map(|d| d.key).collect();
            bail!(InputError(format!(
                "--metrics: unknown metric {key:?}; known: {}",
                keys.join(", ")
            )));
        }
    }
    let base = load(&args.base)?;
    let new = load(&args.new)?;
    if base.scenario != new.scenario || base.resolved_scenario != new.resolved_scenario {
        bail!(results::Error::from(ReportError::DifferentScenarios {
            a: args.base.clone(),
            b: args.new.clone(),
            a_name: base.scenario,
            b_name: new.scenario,
        }));
    }
    let gated_refs: Vec<&str> = gated.iter().map(String::as_str).collect();
    let outcome = compare(&base.summary(), &new.summary(), args.margin, &gated_refs);
    if outcome.rows.is_empty() {
        bail!(InputError(format!(
            "{} and {} have no arm in common; arms are compared by name",
            args.base.display(),
            args.new.display()
        )));
    }
    let worse = outcome.regressions();
    let verdict = if worse.is_empty() {
        Ok(())
    } else {
        let what: Vec<String> = worse.iter().map(|r| r.describe()).collect();
        Err(Regression(what.join("; ")))
    };
    let printed = out!("{}", outcome.to_table()).and_then(|()| {
        if verdict.is_ok() {
            outln!("OK: NEW is not significantly worse than BASE on any gated metric")
        } else {
            Ok(())
        }
    });
    match printed {
        // The gate's verdict is the exit code, whoever reads the table: a reader that went away
        // (`compare A B | head -1`) must not turn a regression into exit 0.
        Err(err) if err.is_broken_pipe() => Ok(verdict?),
        Err(err) => Err(err.into()),
        Ok(()) => Ok(verdict?),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_margin;

    #[test]
    fn margins_parse_as_percent_or_fraction() {
        assert_eq!(parse_margin("5%"), Ok(0.05));
        assert_eq!(parse_margin("0.1"), Ok(0.1));
        assert_eq!(parse_margin(" 12.5 % "), Ok(0.125));
        assert!(parse_margin("-1%").is_err());
        assert!(parse_margin("lots").is_err());
        assert!(parse_margin("NaN").is_err());
    }
}
