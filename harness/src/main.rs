//! `schedlab`: the command line of the scheduler lab. It owns the commands
//! (`scenario`, `train`, `cluster`, `report`, `compare`), their flags and
//! exit codes, and the wiring between the crates: it may use every library
//! of the workspace, and none of them uses it. What a command does beyond
//! reading its flags and choosing whom to ask lives below it: scenarios in
//! `workloads`, policies in `scheduler`, the simulator in `schedlab-core`,
//! real clusters in `kube-backend` and `provisioning`, run folders and
//! reports in `results`.

mod build_info;
mod cli;
mod cluster_choice;
mod cluster_cmd;
mod compare_cmd;
mod drs_train_cmd;
mod episode_play;
mod exit;
mod heads_cmd;
mod out;
mod peak_memory;
mod report_cmd;
mod scaling_cmd;
mod scenario_cmd;
mod sweep_cmd;
mod sweep_kube_cmd;
mod threads;
mod train_cmd;
mod train_common;
mod train_validation;

use clap::Parser;
use out::outln;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // kube's client logs a failed connection as an ERROR before
                // returning it; the error itself is reported once, in our words
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,kube_client::client::builder=off")),
        )
        .with_writer(|| kube_backend::redact::RedactingStderr)
        // colour codes only for a person at a terminal, never in a log file or a pipe
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_answer(e),
    };
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of standard output went away (`schedlab ... | head -1`): nobody wants the rest.
        Err(err) if out::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // not `eprintln!`, which panics when standard error is closed too
            let _ = writeln!(std::io::stderr(), "error: {}", exit::message(&err));
            exit::code_for(&err)
        }
    }
}

/// Runs one command: from the command line, or a sweep cell's command line.
fn dispatch(command: cli::Command) -> anyhow::Result<()> {
    match command {
        cli::Command::Scenario(args) => scenario_cmd::run(*args),
        cli::Command::Scenarios => list_scenarios(),
        cli::Command::Train(args) => train_cmd::run(args),
        cli::Command::Heads(args) => heads_cmd::run(args),
        cli::Command::Cluster(args) => cluster_cmd::run(args),
        cli::Command::Report(args) => report_cmd::run(args),
        cli::Command::Compare(args) => compare_cmd::run(args),
        cli::Command::Scaling(args) => scaling_cmd::run(args),
        cli::Command::Sweep(args) => sweep_cmd::run(args),
    }
}

/// What clap answers instead of a command: help and the version go to
/// standard output, and unlike clap's own `exit` a failed write (a full disk)
/// is an error, not a silent success; a reader gone away is not. Usage
/// errors go to standard error with clap's exit code 2.
fn clap_answer(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    let text = e.render().to_string();
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: writing to standard output: {err}");
            ExitCode::FAILURE
        }
    }
}

fn list_scenarios() -> anyhow::Result<()> {
    let builtins = workloads::builtins();
    let width = builtins.iter().map(|b| b.name.len()).max().unwrap_or(0);
    for b in builtins {
        let first_line = b.description.lines().next().unwrap_or("").trim();
        outln!("{:width$}  {first_line}", b.name)?;
    }
    Ok(())
}
