//! Crashes `catch_unwind` cannot catch: a stack overflow or an abort kills
//! the process, and an input that never ends never reports. So by default
//! the inputs run in a worker child process that reports each input's start
//! and end on its standard output; the supervisor counts from those lines,
//! and when the worker dies, or says nothing for [`HANG_AFTER`], the input
//! it had started is a failure (regenerated here and written to a file, as
//! the worker would have) and a new worker goes on from the next one.

use crate::driver::{Event, Failure, FailureKind, Options, Report, Verdict, write_failure};
use crate::generate::input_rng;
use crate::{FuzzError, Target};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// An input that has not finished after this long is hung (the worker is
/// killed); one that finishes within it but over the time limit is only slow.
pub const HANG_AFTER: Duration = Duration::from_secs(60);

/// The line the worker writes for an event; None for none.
pub fn line(e: &Event<'_>) -> Option<String> {
    Some(match e {
        Event::Start(i) => format!("s {i}"),
        Event::Failure(f) => format!(
            "f {} {}\t{}\t{}",
            f.index,
            f.kind.as_str(),
            f.file.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
            f.message
        ),
        Event::Done {
            index,
            verdict,
            elapsed,
        } => {
            let v = match verdict {
                Verdict::Accepted => 'a',
                Verdict::Rejected => 'r',
                Verdict::Failed => 'f',
            };
            format!("d {index} {v} {}", elapsed.as_nanos())
        }
    })
}

/// An observer that reports events on standard output, flushing when an
/// input starts (so that the supervisor knows which one was running when
/// the process died).
pub fn reporter() -> impl FnMut(Event<'_>) {
    let mut out = std::io::BufWriter::new(std::io::stdout());
    move |e| {
        if let Some(l) = line(&e) {
            // a supervisor that went away ends the worker's reason to run
            if writeln!(out, "{l}").is_err() {
                std::process::exit(1);
            }
        }
        if matches!(e, Event::Start(_) | Event::Done { .. }) && out.flush().is_err() {
            std::process::exit(1);
        }
    }
}

/// What the supervisor makes of the worker's lines.
#[derive(Debug, Default)]
struct Progress {
    report: Report,
    /// the input started and not yet done
    running: Option<u64>,
    /// the next input to run
    next: u64,
}

impl Progress {
    fn read(&mut self, l: &str) {
        let mut parts = l.splitn(3, ' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("s"), Some(i), None) => self.running = i.parse().ok(),
            (Some("d"), Some(i), Some(rest)) => {
                let (Ok(index), Some((v, ns))) = (i.parse::<u64>(), rest.split_once(' ')) else {
                    return;
                };
                let verdict = match v {
                    "a" => Verdict::Accepted,
                    "r" => Verdict::Rejected,
                    _ => Verdict::Failed,
                };
                let elapsed = Duration::from_nanos(ns.parse().unwrap_or(0));
                self.report.count(index, verdict, elapsed);
                self.running = None;
                self.next = index + 1;
            }
            (Some("f"), Some(i), Some(rest)) => {
                let mut fields = rest.splitn(3, '\t');
                let (Some(kind), Some(file), Some(message)) = (fields.next(), fields.next(), fields.next()) else {
                    return;
                };
                self.report.keep(Failure {
                    index: i.parse().unwrap_or(0),
                    kind: FailureKind::parse(kind).unwrap_or(FailureKind::Oracle),
                    message: message.to_string(),
                    file: (!file.is_empty()).then(|| file.into()),
                });
            }
            _ => {}
        }
    }
}

/// Runs the inputs of `opts` for target `T` in worker processes started as
/// `worker_args` (this executable's arguments for one target and a range).
pub fn run<T: Target>(
    make: impl Fn() -> Result<T, FuzzError>,
    opts: &Options,
    worker_args: impl Fn(u64, u64) -> Vec<String>,
) -> Result<Report, FuzzError> {
    let started = Instant::now();
    let exe = std::env::current_exe().map_err(|e| FuzzError::io("the path of this executable", e))?;
    let end = opts.start.saturating_add(opts.inputs);
    let mut progress = Progress {
        next: opts.start,
        report: Report {
            target: T::NAME,
            ..Report::default()
        },
        running: None,
    };
    // workers that ended between inputs, in a row, without getting further
    let mut fruitless = 0;
    while progress.next < end {
        let from = progress.next;
        let mut child = Command::new(&exe)
            .args(worker_args(from, end - from))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| FuzzError::io("a worker process", e))?;
        let (tx, rx) = mpsc::channel::<String>();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| FuzzError::Worker("no standard output".into()))?;
        let reader = std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child
            .stderr
            .take()
            .ok_or_else(|| FuzzError::Worker("no standard error".into()))?;
        // the tail of what the worker printed: a stack overflow's or an abort's last words
        let errors = std::thread::spawn(move || {
            const KEEP: usize = 4096;
            let mut tail = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                let cut = tail.len().saturating_sub(KEEP);
                tail.drain(..cut);
            }
            String::from_utf8_lossy(&tail).into_owned()
        });
        let mut hung = false;
        loop {
            match rx.recv_timeout(HANG_AFTER) {
                Ok(l) => progress.read(&l),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    hung = true;
                    // the worker this supervisor started, by its handle
                    let _ = child.kill();
                    break;
                }
            }
        }
        let status = child.wait().map_err(|e| FuzzError::io("the worker's exit status", e))?;
        let _ = reader.join();
        let last_words = errors.join().unwrap_or_default();
        if progress.next >= end && !hung {
            break;
        }
        let Some(index) = progress.running.take() else {
            // ended between inputs (a machine stalled for a minute, a signal from
            // outside): no input to blame, so go on, unless it keeps happening
            fruitless = if progress.next == from { fruitless + 1 } else { 1 };
            if fruitless >= 3 {
                return Err(FuzzError::Worker(format!(
                    "it ended ({status}) before input {} three times without starting it: {}",
                    progress.next,
                    last_words.trim()
                )));
            }
            continue;
        };
        fruitless = 0;
        let (kind, message) = if hung {
            (
                FailureKind::Hang,
                format!("no end after {} s; the worker was killed", HANG_AFTER.as_secs()),
            )
        } else {
            (
                FailureKind::Crash,
                format!(
                    "the worker died ({status}): {}",
                    crate::oracle::one_line(last_words.trim())
                ),
            )
        };
        let file = opts.out_failures.as_deref().and_then(|dir| {
            let mut target = make().ok()?;
            let case = target.generate(&mut input_rng(T::NAME, opts.seed, index));
            write_failure::<T>(dir, opts.seed, index, &T::dump(&case), &[(kind, message.clone())])
        });
        progress.report.keep(Failure {
            index,
            kind,
            message,
            file,
        });
        progress
            .report
            .count(index, Verdict::Failed, if hung { HANG_AFTER } else { Duration::ZERO });
        progress.next = index + 1;
    }
    progress.report.wall = started.elapsed();
    Ok(progress.report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_round_trip_into_the_same_counts() {
        let f = Failure {
            index: 4,
            kind: FailureKind::Slow,
            message: "took 2 s".into(),
            file: Some("x/y.yaml".into()),
        };
        let mut p = Progress::default();
        for e in [
            Event::Start(3),
            Event::Done {
                index: 3,
                verdict: Verdict::Accepted,
                elapsed: Duration::from_millis(5),
            },
            Event::Start(4),
            Event::Failure(&f),
            Event::Done {
                index: 4,
                verdict: Verdict::Failed,
                elapsed: Duration::from_secs(2),
            },
            Event::Start(5),
        ] {
            p.read(&line(&e).unwrap());
        }
        assert_eq!((p.report.tried, p.report.accepted, p.report.failed), (2, 1, 1));
        assert_eq!(p.report.failures, vec![f]);
        assert_eq!(p.report.slowest, Some((4, Duration::from_secs(2))));
        assert_eq!((p.running, p.next), (Some(5), 5));
    }
}
