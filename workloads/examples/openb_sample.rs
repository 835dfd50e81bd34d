//! Writes a sample trace in Alibaba's openb_pod_list format to stdout:
//! `cargo run -p workloads --example openb_sample -- --seed 1 --rows 600`.
//! The distributions are documented in `workloads::trace::sample`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut seed = 1u64;
    let mut rows = 600usize;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next();
        let parsed = match (flag.as_str(), value.as_deref()) {
            ("--seed", Some(v)) => v.parse().map(|v| seed = v).is_ok(),
            ("--rows", Some(v)) => v.parse().map(|v| rows = v).is_ok(),
            _ => false,
        };
        if !parsed {
            eprintln!("usage: openb_sample [--seed N] [--rows N]");
            return ExitCode::from(2);
        }
    }
    print!("{}", workloads::trace::sample::openb_sample(seed, rows));
    ExitCode::SUCCESS
}
