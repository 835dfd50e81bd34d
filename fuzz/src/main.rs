//! `schedlab-fuzz TARGET --inputs N --seed S`: fuzzes one parser (or all)
//! and prints, per target, the inputs tried, accepted, rejected and failed,
//! the wall time and the slowest input. Failing inputs are written under
//! `--out-failures`; the exit code is 1 when any input failed.

use clap::Parser;
use schedlab_fuzz::driver::{self, Options, Report};
use schedlab_fuzz::oracle::short;
use schedlab_fuzz::{FuzzError, Target, Which, expr, kubeconfig, records, scenario, supervise};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Stack of the thread inputs run on: what Rust gives a spawned thread (and
/// every test thread), less than a main thread's 8 MiB, so that recursion
/// that only just fits the main thread is found too.
const STACK_BYTES: usize = 2 << 20;

#[derive(Debug, Parser)]
#[command(
    name = "schedlab-fuzz",
    about = "Fuzzes schedlab's parsers with seeded, structure-aware inputs"
)]
struct Args {
    /// The parser to fuzz.
    #[arg(value_enum)]
    target: Which,
    /// Inputs per target.
    #[arg(long, default_value_t = 10_000)]
    inputs: u64,
    /// The seed every input is drawn from: (target, seed, input index) gives the same input again.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The index of the first input (`--start I --inputs 1` runs input I alone).
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Where failing inputs are written, with what went wrong.
    #[arg(long, default_value = "fuzz-failures")]
    out_failures: PathBuf,
    /// An input that takes longer is a failure.
    #[arg(long, default_value_t = 1000)]
    time_limit_ms: u64,
    /// Run the inputs in this process: faster to debug, but a stack overflow ends the run.
    #[arg(long)]
    in_process: bool,
    /// The address space a worker may use, in MiB: an input that allocates
    /// more fails as a crash (a scenario at the caps takes about 1 to 2 GiB).
    #[arg(long, default_value_t = 8192)]
    max_memory_mib: u64,
    /// Internal: run as the supervisor's worker, reporting on standard output.
    #[arg(long, hide = true)]
    worker: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let run = std::thread::Builder::new()
        .name("fuzz".into())
        .stack_size(STACK_BYTES)
        .spawn(move || run(&args));
    match run.map(|h| h.join()) {
        Ok(Ok(Ok(failed))) if failed => ExitCode::from(1),
        Ok(Ok(Ok(_))) => ExitCode::SUCCESS,
        Ok(Ok(Err(e))) => {
            eprintln!("schedlab-fuzz: {e}");
            ExitCode::from(2)
        }
        Ok(Err(_)) => {
            eprintln!("schedlab-fuzz: the fuzzer itself panicked");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("schedlab-fuzz: cannot start a thread: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs every target asked for; whether any input failed.
fn run(args: &Args) -> Result<bool, FuzzError> {
    // one input at a time: a panic on any thread is the running input's
    schedlab_fuzz::oracle::claim_stray_panics();
    let opts = Options {
        seed: args.seed,
        start: args.start,
        inputs: args.inputs,
        time_limit: Duration::from_millis(args.time_limit_ms),
        out_failures: Some(args.out_failures.clone()),
    };
    if args.worker {
        let bytes = args.max_memory_mib.saturating_mul(1 << 20);
        nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_AS, bytes, bytes)
            .map_err(|e| FuzzError::io("the worker's memory limit", e.into()))?;
        // the supervisor reads the counts from the event lines
        let mut report = supervise::reporter();
        one(args.target, &opts, &mut report)?;
        return Ok(false);
    }
    let mut failed = false;
    for which in args.target.targets() {
        let report = if args.in_process {
            one(which, &opts, &mut |_| {})?
        } else {
            supervised(which, args, &opts)?
        };
        println!("{}", report.line());
        for f in &report.failures {
            let file = f
                .file
                .as_ref()
                .map(|p| format!(" ({})", p.display()))
                .unwrap_or_default();
            println!("  input {} {}: {}{file}", f.index, f.kind.as_str(), short(&f.message));
        }
        if report.failed as usize > report.failures.len() {
            println!("  ... and {} more", report.failed as usize - report.failures.len());
        }
        failed |= report.failed > 0;
    }
    Ok(failed)
}

fn one(which: Which, opts: &Options, observe: &mut dyn FnMut(driver::Event<'_>)) -> Result<Report, FuzzError> {
    Ok(match which {
        Which::Scenario => driver::run(&mut scenario::Scenario::new()?, opts, observe),
        Which::Expr => driver::run(&mut expr::Expr::default(), opts, observe),
        Which::Kubeconfig => driver::run(&mut kubeconfig::Kubeconfig::new()?, opts, observe),
        Which::Records => driver::run(&mut records::Records::new()?, opts, observe),
        Which::All => return Err(FuzzError::Worker("a worker runs one target".into())),
    })
}

fn supervised(which: Which, args: &Args, opts: &Options) -> Result<Report, FuzzError> {
    let worker_args = |from: u64, n: u64| {
        vec![
            which.name().to_string(),
            "--worker".into(),
            "--seed".into(),
            args.seed.to_string(),
            "--start".into(),
            from.to_string(),
            "--inputs".into(),
            n.to_string(),
            "--time-limit-ms".into(),
            args.time_limit_ms.to_string(),
            "--out-failures".into(),
            args.out_failures.display().to_string(),
            "--max-memory-mib".into(),
            args.max_memory_mib.to_string(),
        ]
    };
    fn go<T: Target>(
        make: impl Fn() -> Result<T, FuzzError>,
        opts: &Options,
        worker_args: impl Fn(u64, u64) -> Vec<String>,
    ) -> Result<Report, FuzzError> {
        supervise::run(make, opts, worker_args)
    }
    match which {
        Which::Scenario => go(scenario::Scenario::new, opts, worker_args),
        Which::Expr => go(|| Ok(expr::Expr::default()), opts, worker_args),
        Which::Kubeconfig => go(kubeconfig::Kubeconfig::new, opts, worker_args),
        Which::Records => go(records::Records::new, opts, worker_args),
        Which::All => Err(FuzzError::Worker("one target at a time".into())),
    }
}
