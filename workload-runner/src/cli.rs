//! The command line: `schedlab-workload [--state-dir DIR] [--plan]`. Everything
//! about the pod comes from the environment ([`crate::settings`]).

use crate::exit;
use crate::plan::Plan;
use crate::play::play;
use crate::settings::{self, Settings};
use crate::state::StartCounter;
use std::ffi::OsString;
use std::path::PathBuf;

/// Where the pod's emptyDir is mounted.
pub const DEFAULT_STATE_DIR: &str = "/var/run/schedlab";

pub const USAGE: &str = "\
usage: schedlab-workload [--state-dir DIR] [--plan]

Plays one container start of a schedlab pod's behaviour with real cpu and
memory, then exits as the behaviour says: 0 when its run time is over, 1 when
it crashes; or grows past its memory limit so that the kernel OOM-kills it.
SIGTERM or SIGINT stop it cleanly (exit 0).

options:
  --state-dir DIR  folder that outlives container restarts (an emptyDir) where
                   the start count is kept [default: /var/run/schedlab]
  --plan           print the next start's plan as JSON and exit (counts nothing)
  -h, --help       print this help
  -V, --version    print the version

environment:
  SCHEDLAB_BEHAVIOUR     the pod's behaviour, JSON (required)
  SCHEDLAB_SEED          the run's seed (required)
  SCHEDLAB_POD_ID        the pod's id (required)
  SCHEDLAB_WORKLOAD      the pod's workload index (required)
  SCHEDLAB_ORDINAL       the pod's ordinal in its workload (required)
  SCHEDLAB_INCARNATION   pods made for the slot before this one (required)
  SCHEDLAB_CPU_LIMIT     the container's cpu limit, a quantity (none if unset)
  SCHEDLAB_MEMORY_LIMIT  the container's memory limit, a quantity (none if unset)
  SCHEDLAB_TIME_SCALE    scenario seconds per wall second [default: 1]
  SCHEDLAB_MODEL         behaviour-model tunables, JSON [default: the defaults]
  RUST_LOG               log filter [default: info]

exit codes: 0 completed or stopped, 1 crashed, 2 bad usage or environment,
3 state folder or runtime failure, 137 grew past a memory limit nobody enforced";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Run { state_dir: PathBuf, plan_only: bool },
    Help,
    Version,
}

/// A command line the program does not understand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CliError {
    #[error("unknown argument {0:?}")]
    Unknown(String),
    #[error("{0} needs a value")]
    MissingValue(&'static str),
    #[error("{flag} given twice")]
    Repeated { flag: &'static str },
}

/// Parses the arguments (without the program name).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, CliError> {
    let mut state_dir: Option<PathBuf> = None;
    let mut plan_only = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        match text.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--plan" => plan_only = true,
            "--state-dir" => {
                let value = args.next().ok_or(CliError::MissingValue("--state-dir"))?;
                if state_dir.replace(PathBuf::from(value)).is_some() {
                    return Err(CliError::Repeated { flag: "--state-dir" });
                }
            }
            _ => match text.strip_prefix("--state-dir=") {
                Some(value) if !value.is_empty() => {
                    if state_dir.replace(PathBuf::from(value)).is_some() {
                        return Err(CliError::Repeated { flag: "--state-dir" });
                    }
                }
                Some(_) => return Err(CliError::MissingValue("--state-dir")),
                None => return Err(CliError::Unknown(text)),
            },
        }
    }
    Ok(Command::Run {
        state_dir: state_dir.unwrap_or_else(|| PathBuf::from(DEFAULT_STATE_DIR)),
        plan_only,
    })
}

/// Runs the program; returns its exit code. Messages go to stderr (the
/// plan of `--plan` to stdout).
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    let (state_dir, plan_only) = match parse(args) {
        Ok(Command::Run { state_dir, plan_only }) => (state_dir, plan_only),
        Ok(Command::Help) => {
            println!("{USAGE}");
            return exit::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("schedlab-workload {}", env!("CARGO_PKG_VERSION"));
            return exit::SUCCESS;
        }
        Err(e) => {
            eprintln!("schedlab-workload: {e}\n\n{USAGE}");
            return exit::USAGE;
        }
    };
    let settings = match Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "schedlab-workload: {e}\n(the pod sets these from its labels and annotations; see --help for {})",
                settings::ALL.join(", ")
            );
            return exit::USAGE;
        }
    };
    let counter = StartCounter::new(&state_dir);
    let start = if plan_only {
        counter.peek(settings.pod)
    } else {
        counter.take(settings.pod)
    };
    let start = match start {
        Ok(n) => n,
        Err(e) => {
            eprintln!("schedlab-workload: {e}");
            return exit::FAILURE;
        }
    };
    let plan = Plan::new(&settings, start);
    if plan_only {
        return match serde_json::to_string_pretty(&plan) {
            Ok(json) => {
                println!("{json}");
                exit::SUCCESS
            }
            Err(e) => {
                eprintln!("schedlab-workload: cannot print the plan: {e}");
                exit::FAILURE
            }
        };
    }
    tracing::info!(
        pod = plan.pod_id,
        start = plan.start,
        plan = %serde_json::to_string(&plan).unwrap_or_default(),
        "start"
    );
    match play(&plan) {
        Ok(outcome) => outcome.exit_code(),
        Err(e) => {
            eprintln!("schedlab-workload: {e}");
            exit::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_flags() {
        assert_eq!(
            parse(args(&[])).unwrap(),
            Command::Run {
                state_dir: PathBuf::from(DEFAULT_STATE_DIR),
                plan_only: false
            }
        );
        assert_eq!(
            parse(args(&["--state-dir", "/tmp/x", "--plan"])).unwrap(),
            Command::Run {
                state_dir: PathBuf::from("/tmp/x"),
                plan_only: true
            }
        );
        assert_eq!(
            parse(args(&["--state-dir=/s"])).unwrap(),
            Command::Run {
                state_dir: PathBuf::from("/s"),
                plan_only: false
            }
        );
        assert_eq!(parse(args(&["--plan", "-h"])).unwrap(), Command::Help);
        assert_eq!(parse(args(&["--version"])).unwrap(), Command::Version);
    }

    #[test]
    fn rejects_bad_command_lines() {
        assert_eq!(
            parse(args(&["--nope"])).unwrap_err(),
            CliError::Unknown("--nope".into())
        );
        assert_eq!(
            parse(args(&["--state-dir"])).unwrap_err(),
            CliError::MissingValue("--state-dir")
        );
        assert_eq!(
            parse(args(&["--state-dir="])).unwrap_err(),
            CliError::MissingValue("--state-dir")
        );
        assert_eq!(
            parse(args(&["--state-dir", "a", "--state-dir=b"])).unwrap_err(),
            CliError::Repeated { flag: "--state-dir" }
        );
    }
}
