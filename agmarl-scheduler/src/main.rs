//! `agmarl-scheduler`: see the library docs. Exits 0 after a SIGTERM or
//! SIGINT once binding has stopped and the Lease is released, 2 when it
//! refuses what it was given (flags, files, a DRS network of another size),
//! 1 on any other failure.

use agmarl_scheduler::{Args, logging, run};
use anyhow::Context;
use clap::Parser;
use std::process::ExitCode;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    logging::init(args.log_format);
    let shutdown = CancellationToken::new();
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let which = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        tracing::info!(signal = which, "stopping: binding stops, then the Lease is released");
        stop.cancel();
    });
    match run(args, shutdown).await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            let code = if e.is_input_error() { 2 } else { 1 };
            // as a `main` returning the error prints it
            eprintln!("Error: {:?}", anyhow::Error::from(e).context("agmarl-scheduler"));
            Ok(ExitCode::from(code))
        }
    }
}
