//! Scenarios for schedlab: the YAML format (see `FORMAT.md`), the built-in
//! scenarios, and expanding a scenario and a seed into a [`schedlab_core::Timeline`]
//! that every backend plays the same way for every scheduler arm of the seed.
//! It owns the scenario format and its limits and may use only
//! `schedlab-core` below it (the types a timeline is made of).
//!
//! ```
//! let s = workloads::load("churn", &["nodes=8".to_string()]).unwrap();
//! let timeline = s.expand(1);
//! assert_eq!(timeline.nodes.len(), 8);
//! assert_eq!(timeline, s.expand(1));
//! ```

mod builtin;
mod duration;
mod error;
mod expand;
mod expr;
mod heldout;
mod limits;
mod model;
mod params;
mod raw;
mod resolve;
mod resolved;
mod scalar;
mod scenario;
mod syntax;
pub mod trace;
mod value;

pub use builtin::{Builtin, builtin, builtins};
pub use error::{Error, Loc, Result, ScenarioError};
pub use heldout::{HELDOUT_MARKER, heldout_folder};
pub use limits::{MAX_ACTIONS, MAX_NODES, MAX_PODS};
pub use scenario::Scenario;

use std::path::{Path, PathBuf};

/// Loads a scenario. `scenario`: a built-in name (or `builtin:NAME`) or the
/// path of a YAML file. `overrides`: `key=value` strings from `--set`.
pub fn load(scenario: &str, overrides: &[String]) -> Result<Scenario> {
    load_allowing(scenario, overrides, &[])
}

/// [`load`], with trace files outside the scenario file's folder that the
/// user named (`--allow-trace PATH`): a `replay` phase reads a trace by a
/// relative path inside that folder, or by one of `allowed_traces` (as
/// written in the scenario, or the same file).
pub fn load_allowing(scenario: &str, overrides: &[String], allowed_traces: &[PathBuf]) -> Result<Scenario> {
    if let Some(b) = builtin(scenario) {
        return scenario::build(
            &format!("builtin:{}", b.name),
            &trace::Files::bundled(b.files),
            b.yaml,
            overrides,
        );
    }
    let text = read_file(scenario)?;
    scenario::build(
        scenario,
        &trace::Files::beside(scenario, allowed_traces),
        &text,
        overrides,
    )
}

/// Parses a scenario text with its params' defaults; `origin` names it in
/// errors, and `replay` phases read trace files next to it.
pub fn parse_str(origin: &str, text: &str) -> Result<Scenario> {
    scenario::build(origin, &trace::Files::beside(origin, &[]), text, &[])
}

/// Parses a scenario text with `key=value` param overrides.
pub fn parse_str_with(origin: &str, text: &str, overrides: &[String]) -> Result<Scenario> {
    scenario::build(origin, &trace::Files::beside(origin, &[]), text, overrides)
}

fn read_file(path: &str) -> Result<String> {
    let read_error = |source| ScenarioError::Read {
        origin: path.to_string(),
        source,
    };
    let meta = match std::fs::metadata(Path::new(path)) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ScenarioError::UnknownScenario {
                name: path.to_string(),
                builtins: builtins().iter().map(|b| b.name).collect::<Vec<_>>().join(", "),
            });
        }
        Err(e) => return Err(read_error(e)),
    };
    if meta.is_file() && meta.len() > limits::MAX_FILE_BYTES {
        return Err(too_large(path, meta.len()));
    }
    // the size the file system reports is not trusted: at most the cap is read
    schedlab_core::input::read_bounded_string(Path::new(path), limits::MAX_FILE_BYTES).map_err(read_error)
}

fn too_large(path: &str, len: u64) -> ScenarioError {
    ScenarioError::Syntax {
        origin: path.to_string(),
        path: None,
        message: format!(
            "the file has {len} bytes; scenario files are capped at {} MiB",
            limits::MAX_FILE_BYTES >> 20
        ),
        location: None,
    }
}
