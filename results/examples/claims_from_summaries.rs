//! The claims table from summary.json files alone, for evaluations whose raw
//! records are gone (such as evaluations/bundled-checkpoint):
//!
//! ```sh
//! cargo run -p results --example claims_from_summaries -- [--arm NAME] [--markdown] SUMMARY.json...
//! ```
//!
//! A report from run folders (`schedlab report`) is the one to publish: it
//! recomputes every value from the records.

use results::claims::{ClaimsTable, DEFAULT_ARM, ScenarioValues};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut arm = DEFAULT_ARM.to_string();
    let mut markdown = false;
    let mut paths = Vec::new();
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
            _ => paths.push(a),
        }
    }
    let mut inputs = Vec::new();
    for path in &paths {
        let parsed = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            .and_then(|json| ScenarioValues::from_summary_json(&json).map_err(|e| e.to_string()));
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
