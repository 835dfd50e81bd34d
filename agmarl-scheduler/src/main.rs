//! `agmarl-scheduler`: see the library docs. Exits 0 after a SIGTERM or
//! SIGINT once binding has stopped and the Lease is released.

use agmarl_scheduler::{Args, logging, run};
use anyhow::Context;
use clap::Parser;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
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
    run(args, shutdown).await.context("agmarl-scheduler")
}
