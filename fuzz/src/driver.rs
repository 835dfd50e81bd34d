//! The loop: generate input `i`, run it under `catch_unwind` with its wall
//! time measured, count what happened, and write each failing input to a file.

use crate::Target;
use crate::generate::input_rng;
use crate::oracle::{Checked, catching, one_line};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a run does.
#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    /// the first input's index
    pub start: u64,
    pub inputs: u64,
    /// an input that takes longer is a failure
    pub time_limit: Duration,
    /// where failing inputs are written; None: nowhere
    pub out_failures: Option<PathBuf>,
}

/// Failures kept in memory and written to files per run (all are counted).
pub const MAX_KEPT: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// the parser panicked
    Panic,
    /// an oracle failed: a multi-line, nameless or secret-showing error, a
    /// wrong value, an unsorted timeline, ...
    Oracle,
    /// the input took longer than the time limit
    Slow,
    /// the process died on the input (a stack overflow, an abort)
    Crash,
    /// the input did not finish at all
    Hang,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Panic => "panic",
            FailureKind::Oracle => "oracle",
            FailureKind::Slow => "slow",
            FailureKind::Crash => "crash",
            FailureKind::Hang => "hang",
        }
    }

    pub fn parse(s: &str) -> Option<FailureKind> {
        [
            FailureKind::Panic,
            FailureKind::Oracle,
            FailureKind::Slow,
            FailureKind::Crash,
            FailureKind::Hang,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One failing input.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub index: u64,
    pub kind: FailureKind,
    /// on one line
    pub message: String,
    /// the input, as written under `out_failures`
    pub file: Option<PathBuf>,
}

/// How an input ended, for the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    Rejected,
    Failed,
}

/// The counts of a run of one target.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub target: &'static str,
    pub tried: u64,
    pub accepted: u64,
    pub rejected: u64,
    /// inputs with at least one failure
    pub failed: u64,
    /// the first [`MAX_KEPT`] failures
    pub failures: Vec<Failure>,
    /// the slowest input: its index and time
    pub slowest: Option<(u64, Duration)>,
    pub wall: Duration,
}

impl Report {
    /// Counts one finished input.
    pub fn count(&mut self, index: u64, verdict: Verdict, elapsed: Duration) {
        self.tried += 1;
        match verdict {
            Verdict::Accepted => self.accepted += 1,
            Verdict::Rejected => self.rejected += 1,
            Verdict::Failed => self.failed += 1,
        }
        if self.slowest.is_none_or(|(_, d)| elapsed > d) {
            self.slowest = Some((index, elapsed));
        }
    }

    pub fn keep(&mut self, f: Failure) {
        if self.failures.len() < MAX_KEPT {
            self.failures.push(f);
        }
    }

    /// Adds the counts of a later part of the same run.
    pub fn merge(&mut self, other: Report) {
        self.tried += other.tried;
        self.accepted += other.accepted;
        self.rejected += other.rejected;
        self.failed += other.failed;
        for f in other.failures {
            self.keep(f);
        }
        if let Some((i, d)) = other.slowest
            && self.slowest.is_none_or(|(_, s)| d > s)
        {
            self.slowest = Some((i, d));
        }
    }

    /// The summary line printed per target.
    pub fn line(&self) -> String {
        let rate = self.tried as f64 / self.wall.as_secs_f64().max(1e-9);
        let slowest = match self.slowest {
            Some((i, d)) => format!("slowest input {i}: {:.3} s", d.as_secs_f64()),
            None => "no input".to_string(),
        };
        format!(
            "{}: {} inputs tried, {} accepted, {} rejected, {} failed; {:.1} s ({rate:.0} inputs/s); {slowest}",
            self.target,
            self.tried,
            self.accepted,
            self.rejected,
            self.failed,
            self.wall.as_secs_f64()
        )
    }
}

/// What the loop tells an observer (the worker reports it to its supervisor).
#[derive(Debug)]
pub enum Event<'a> {
    /// input `index` is about to run
    Start(u64),
    Failure(&'a Failure),
    Done {
        index: u64,
        verdict: Verdict,
        elapsed: Duration,
    },
}

/// Runs `opts.inputs` inputs of `target` in this process.
pub fn run<T: Target>(target: &mut T, opts: &Options, observe: &mut dyn FnMut(Event<'_>)) -> Report {
    let started = Instant::now();
    let mut report = Report {
        target: T::NAME,
        ..Report::default()
    };
    for index in opts.start..opts.start.saturating_add(opts.inputs) {
        observe(Event::Start(index));
        let mut failures = Vec::new();
        let case = catching(|| target.generate(&mut input_rng(T::NAME, opts.seed, index)));
        let (verdict, elapsed) = match case {
            Err(p) => {
                failures.push((FailureKind::Panic, format!("the generator panicked: {p}")));
                (Verdict::Failed, Duration::ZERO)
            }
            Ok(case) => {
                let t0 = Instant::now();
                let checked = catching(|| target.exercise(&case));
                let mut elapsed = t0.elapsed();
                // a busy machine stretches a run (this one is shared, two cores): an
                // input is slow when it is slow in each of three runs
                for _ in 0..2 {
                    if elapsed <= opts.time_limit + target.allowance() || checked.is_err() {
                        break;
                    }
                    let t1 = Instant::now();
                    if catching(|| target.exercise(&case)).is_ok() {
                        elapsed = elapsed.min(t1.elapsed());
                    }
                }
                let verdict = match checked {
                    Ok(Checked::Accepted) => Verdict::Accepted,
                    Ok(Checked::Rejected) => Verdict::Rejected,
                    Ok(Checked::Violation(v)) => {
                        failures.push((FailureKind::Oracle, one_line(&v)));
                        Verdict::Failed
                    }
                    Err(p) => {
                        target.after_panic();
                        failures.push((FailureKind::Panic, one_line(&p)));
                        Verdict::Failed
                    }
                };
                let limit = opts.time_limit + target.allowance();
                if elapsed > limit {
                    failures.push((
                        FailureKind::Slow,
                        format!(
                            "took {:.3} s (the limit is {:.3} s)",
                            elapsed.as_secs_f64(),
                            limit.as_secs_f64()
                        ),
                    ));
                }
                let verdict = if failures.is_empty() { verdict } else { Verdict::Failed };
                let file = (!failures.is_empty() && report.failures.len() < MAX_KEPT)
                    .then_some(opts.out_failures.as_deref())
                    .flatten()
                    .and_then(|dir| write_failure::<T>(dir, opts.seed, index, &T::dump(&case), &failures));
                for (kind, message) in &failures {
                    let f = Failure {
                        index,
                        kind: *kind,
                        message: message.clone(),
                        file: file.clone(),
                    };
                    observe(Event::Failure(&f));
                    report.keep(f);
                }
                failures.clear();
                (verdict, elapsed)
            }
        };
        for (kind, message) in failures {
            let f = Failure {
                index,
                kind,
                message,
                file: None,
            };
            observe(Event::Failure(&f));
            report.keep(f);
        }
        report.count(index, verdict, elapsed);
        observe(Event::Done {
            index,
            verdict,
            elapsed,
        });
    }
    report.wall = started.elapsed();
    report
}

/// Writes a failing input and what went wrong to `dir`; the input's path,
/// or None when it could not be written (the failure is still counted).
pub fn write_failure<T: Target>(
    dir: &Path,
    seed: u64,
    index: u64,
    input: &[u8],
    failures: &[(crate::driver::FailureKind, String)],
) -> Option<PathBuf> {
    std::fs::create_dir_all(dir).ok()?;
    let stem = format!("{}-seed{seed}-input{index}", T::NAME);
    let path = dir.join(format!("{stem}.{}", T::extension()));
    std::fs::write(&path, input).ok()?;
    // every failure of the input in one file: an input both slow and wrong is both
    let mut why = String::new();
    for (kind, message) in failures {
        why.push_str(&format!(
            "target {}, seed {seed}, input {index}: {}: {message}\n",
            T::NAME,
            kind.as_str()
        ));
    }
    why.push_str(&format!(
        "reproduce: cargo run --release -p schedlab-fuzz -- {} --seed {seed} --start {index} --inputs 1\n",
        T::NAME
    ));
    std::fs::write(dir.join(format!("{stem}.txt")), why).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// A target that panics on every third input and is slow on none.
    #[derive(Debug)]
    struct Flaky;

    impl Target for Flaky {
        type Case = u32;
        const NAME: &'static str = "flaky";
        fn generate(&mut self, rng: &mut rand_chacha::ChaCha8Rng) -> u32 {
            rng.random_range(0..3)
        }
        fn exercise(&mut self, case: &u32) -> Checked {
            match case {
                0 => panic!("zero"),
                1 => Checked::Accepted,
                _ => Checked::Violation("two\nlines".into()),
            }
        }
        fn dump(case: &u32) -> Vec<u8> {
            case.to_string().into_bytes()
        }
    }

    #[test]
    fn failures_are_counted_kept_and_written() {
        let tmp = tempfile::tempdir().unwrap();
        let opts = Options {
            seed: 1,
            start: 10,
            inputs: 30,
            time_limit: Duration::from_secs(1),
            out_failures: Some(tmp.path().to_path_buf()),
        };
        let mut starts = 0;
        let report = run(&mut Flaky, &opts, &mut |e| {
            starts += usize::from(matches!(e, Event::Start(_)))
        });
        assert_eq!(starts, 30);
        assert_eq!(report.tried, 30);
        assert_eq!(report.accepted + report.failed, 30);
        assert!(report.failed > 0 && report.accepted > 0);
        let panic = report.failures.iter().find(|f| f.kind == FailureKind::Panic).unwrap();
        assert!(panic.message.starts_with("zero at "), "{}", panic.message);
        let oracle = report.failures.iter().find(|f| f.kind == FailureKind::Oracle).unwrap();
        assert_eq!(oracle.message, "two\\nlines");
        let file = panic.file.as_ref().unwrap();
        assert_eq!(std::fs::read_to_string(file).unwrap(), "0");
        let why = std::fs::read_to_string(file.with_extension("txt")).unwrap();
        assert!(
            why.contains(&format!("--seed 1 --start {} --inputs 1", panic.index)),
            "{why}"
        );
    }

    /// An input that is both wrong and slow keeps both in its file (the
    /// second used to overwrite the first).
    #[test]
    fn every_failure_of_an_input_is_in_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let failures = [
            (FailureKind::Oracle, "does not round-trip".to_string()),
            (FailureKind::Slow, "took 3 s".to_string()),
        ];
        let input = write_failure::<Flaky>(dir.path(), 1, 7, b"x", &failures).unwrap();
        assert_eq!(std::fs::read(input).unwrap(), b"x");
        let why = std::fs::read_to_string(dir.path().join("flaky-seed1-input7.txt")).unwrap();
        assert!(why.contains("does not round-trip") && why.contains("took 3 s"), "{why}");
        assert_eq!(why.matches("reproduce:").count(), 1, "{why}");
    }
}
