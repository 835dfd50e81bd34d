//! Carries a [`Plan`] out: holds its memory, burns its cpu, and at its end
//! exits as it says — or stops early, and cleanly, on SIGTERM or SIGINT
//! (the kubelet's way to stop a container of a deleted pod).

use crate::ballast::Ballast;
use crate::burner::Burner;
use crate::exit;
use crate::plan::{EndKind, Plan};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::Notify;

/// How a start ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// the run time is over
    Completed,
    /// the model's crash
    Crashed,
    /// SIGTERM or SIGINT
    Stopped,
    /// grew past the memory limit and nothing killed the process
    OomNotEnforced { held: u64 },
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Completed | Outcome::Stopped => exit::SUCCESS,
            Outcome::Crashed => exit::CRASH,
            Outcome::OomNotEnforced { .. } => exit::OOM_NOT_ENFORCED,
        }
    }
}

/// The plan could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot listen for {signal}: {source}")]
    Signal {
        signal: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the cpu burner threads: {0}")]
    Burner(#[source] std::io::Error),
}

/// Plays `plan` from now on; returns how it ended.
pub fn play(plan: &Plan) -> Result<Outcome, PlayError> {
    // one worker runs the signal listener while this thread allocates
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(PlayError::Runtime)?;
    rt.block_on(play_async(plan))
}

async fn play_async(plan: &Plan) -> Result<Outcome, PlayError> {
    let started = tokio::time::Instant::now();
    let stopped = Arc::new(AtomicBool::new(false));
    let stop_notify = Arc::new(Notify::new());
    // listen before anything else: until then SIGTERM would kill the
    // process (exit by signal) instead of stopping it cleanly
    let mut term = signal(SignalKind::terminate()).map_err(|source| PlayError::Signal {
        signal: "SIGTERM",
        source,
    })?;
    let mut int = signal(SignalKind::interrupt()).map_err(|source| PlayError::Signal {
        signal: "SIGINT",
        source,
    })?;
    {
        let (stopped, stop_notify) = (stopped.clone(), stop_notify.clone());
        tokio::spawn(async move {
            let name = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            tracing::info!(signal = name, "stopping");
            stopped.store(true, Ordering::SeqCst);
            stop_notify.notify_one();
        });
    }
    let keep_going = |_: u64| !stopped.load(Ordering::SeqCst);

    let mut ballast = Ballast::new();
    if !ballast.grow_to(plan.hold_bytes, keep_going) {
        return Ok(Outcome::Stopped);
    }
    let mut burner = Burner::start(plan.cpu_milli).map_err(PlayError::Burner)?;
    tracing::info!(
        start = plan.start,
        cpu_milli = plan.cpu_milli,
        held_bytes = ballast.held(),
        end = ?plan.end.map(|e| e.kind),
        end_in_seconds = plan.end.map(|e| e.wall.as_secs_f64()),
        "running"
    );

    let Some(end) = plan.end else {
        stop_notify.notified().await;
        return Ok(Outcome::Stopped);
    };
    tokio::select! {
        _ = tokio::time::sleep_until(started + end.wall) => {}
        _ = stop_notify.notified() => return Ok(Outcome::Stopped),
    }
    let outcome = match end.kind {
        EndKind::Complete => Outcome::Completed,
        EndKind::Crash => Outcome::Crashed,
        EndKind::OomLimit => {
            let target = plan.grow_to_bytes.unwrap_or(plan.memory_demand);
            tracing::info!(limit = plan.memory_limit, target, "growing past the memory limit");
            if !ballast.grow_to(target, keep_going) {
                return Ok(Outcome::Stopped);
            }
            tracing::warn!(
                held = ballast.held(),
                limit = plan.memory_limit,
                "holding more than the memory limit and still alive: the limit is not enforced here"
            );
            Outcome::OomNotEnforced { held: ballast.held() }
        }
    };
    burner.stop();
    tracing::info!(?outcome, after_seconds = started.elapsed().as_secs_f64(), "ending");
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_map_to_exit_codes() {
        assert_eq!(Outcome::Completed.exit_code(), 0);
        assert_eq!(Outcome::Stopped.exit_code(), 0);
        assert_eq!(Outcome::Crashed.exit_code(), 1);
        assert_eq!(Outcome::OomNotEnforced { held: 1 }.exit_code(), 137);
    }
}
