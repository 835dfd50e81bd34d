//! The claims table from summary.json files alone, for evaluations whose raw
//! records are gone (such as evaluations/bundled-checkpoint):
//!
//! ```sh
//! cargo run -p results --example claims_from_summaries -- [--arm NAME] [--markdown] \
//!     [--declare SCENARIO:CLAIM:ROLE]... SUMMARY.json...
//! ```
//!
//! A summary.json holds neither the claims its scenario declares (give them
//! with `--declare`, e.g. `--declare churn:restraint:churn-faults`) nor arm
//! facts or training runs: rows that need them (critical pods between arms
//! that both preempt) are undefined, every arm is sampled by seed, and a
//! metric added after the summary was written (the pre-registration's new
//! ones) is undefined, so its claims are "not shown". A report from run
//! folders (`schedlab report`) is the one to publish: it recomputes every
//! value from the records and reads the manifests.

use results::claims::{ClaimName, ClaimRole, ClaimUse, ClaimsTable, DEFAULT_ARM, ScenarioValues};
use std::process::ExitCode;

/// "SCENARIO:CLAIM:ROLE".
fn declaration(text: &str) -> Result<(String, ClaimUse), String> {
    let [scenario, claim, role] = text.split(':').collect::<Vec<_>>()[..] else {
        return Err(format!("--declare {text}: expected SCENARIO:CLAIM:ROLE"));
    };
    let claim = claim.parse::<ClaimName>().map_err(|e| e.to_string())?;
    let role = role.parse::<ClaimRole>().map_err(|e| e.to_string())?;
    if !results::claims::catalogue::roles(claim).contains(&role) {
        return Err(format!("--declare {text}: {role} is not a role of claim {claim}"));
    }
    Ok((scenario.to_string(), ClaimUse { claim, role }))
}

fn main() -> ExitCode {
    let mut arm = DEFAULT_ARM.to_string();
    let mut markdown = false;
    let mut paths = Vec::new();
    let mut declared: Vec<(String, ClaimUse)> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--arm" => match args.next() {
                Some(name) => arm = name,
                None => {
                    eprintln!("--arm needs a name");
                    return ExitCode::from(2);
                }
            },
            "--markdown" => markdown = true,
            "--declare" => match args.next().map(|d| declaration(&d)) {
                Some(Ok(d)) => declared.push(d),
                Some(Err(e)) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
                None => {
                    eprintln!("--declare needs SCENARIO:CLAIM:ROLE");
                    return ExitCode::from(2);
                }
            },
            _ => paths.push(a),
        }
    }
    let mut inputs = Vec::new();
    for path in &paths {
        let parsed = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            .and_then(|json: serde_json::Value| {
                let scenario = json["scenario"].as_str().unwrap_or_default();
                let uses = declared
                    .iter()
                    .filter(|(s, _)| s == scenario)
                    .map(|(_, u)| *u)
                    .collect();
                ScenarioValues::from_summary_json(&json, uses).map_err(|e| e.to_string())
            });
        match parsed {
            Ok(values) => inputs.push(values),
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    match ClaimsTable::evaluate(&inputs, &arm) {
        Ok(table) if markdown => print!("{}", table.to_markdown()),
        Ok(table) => print!("{}", table.to_terminal()),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
