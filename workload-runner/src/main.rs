//! `schedlab-workload`: see the library's documentation and `--help`.

use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    ExitCode::from(workload_runner::cli::main(std::env::args_os().skip(1)))
}
