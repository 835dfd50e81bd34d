//! `schedlab report DIR...`: rebuild every table and plot of one or more run
//! folders from their raw records, and from nothing else.

use crate::exit::InputError;
use anyhow::{Context, Result, bail};
use results::report::{LoadOptions, RunFolderData, render};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run folders of one scenario (as `schedlab scenario` writes them); several are merged.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// Where to write the report. Default: DIR/report for one folder; required for several.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Report on an unfinished folder's finished runs; every output then says "INCOMPLETE: n of m runs".
    #[arg(long)]
    pub allow_incomplete: bool,
}

pub fn run(args: ReportArgs) -> Result<()> {
    let out = match (&args.out, args.dirs.as_slice()) {
        (Some(out), _) => out.clone(),
        (None, [dir]) => dir.join("report"),
        (None, _) => bail!(InputError(
            "--out is required when reporting on several run folders".into()
        )),
    };
    let options = LoadOptions {
        allow_incomplete: args.allow_incomplete,
    };
    let data = RunFolderData::load_many(&args.dirs, options)?;
    write_files(&data, &out)?;
    if let Some(banner) = data.incomplete_banner() {
        eprintln!("warning: {banner}");
        for s in &data.skipped {
            eprintln!("warning: left out arm {} seed {}: {}", s.arm, s.seed, s.reason);
        }
    }
    println!("{}", data.summary().to_terminal_table());
    println!("Report: {}", out.join("report.html").display());
    Ok(())
}

/// Writes the report of one complete run folder `dir` into `out` (what
/// `schedlab scenario` does after its runs).
pub fn write_report(dir: &Path, out: &Path) -> Result<()> {
    let data = RunFolderData::load(dir)?;
    write_files(&data, out)
}

fn write_files(data: &RunFolderData, out: &Path) -> Result<()> {
    for file in render(data)? {
        let path = out.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, &file.bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
