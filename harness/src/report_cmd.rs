//! `schedlab report DIR...`: rebuild every table and plot of one or more run
//! folders from their raw records, and from nothing else.

use crate::exit::InputError;
use crate::out::outln;
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

/// The report folder of a run folder, where `schedlab scenario` writes it and `schedlab report DIR` rebuilds it.
pub const REPORT_DIR: &str = "report";

pub fn run(args: ReportArgs) -> Result<()> {
    let out = match (&args.out, args.dirs.as_slice()) {
        (Some(out), _) => out.clone(),
        (None, [dir]) => dir.join(REPORT_DIR),
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
    // after every file is written: a closed or full standard output cannot leave half a report
    outln!("{}", data.summary().to_terminal_table())?;
    outln!("Report: {}", out.join("report.html").display())?;
    Ok(())
}

/// Writes the report of the run folder `dir`, whose runs have all finished, into `out`: what `schedlab
/// scenario` does after its runs, before it marks the folder complete (so the folder is loaded as a partial
/// one, and every run must be there).
pub fn write_report_of_finished_runs(dir: &Path, out: &Path) -> Result<()> {
    let mut data = RunFolderData::load_with(dir, LoadOptions { allow_incomplete: true })?;
    if let Some(s) = data.skipped.first() {
        bail!("arm {} seed {} cannot be reported on: {}", s.arm, s.seed, s.reason);
    }
    // Every run finished; the folder is marked complete right after its report is written, and the
    // report says what `schedlab report DIR` on the complete folder would.
    for folder in &mut data.folders {
        folder.complete = true;
    }
    write_files(&data, out)
}

/// Writes every file of the report into `out`, each whole or not at all (see [`results::atomic`]).
fn write_files(data: &RunFolderData, out: &Path) -> Result<()> {
    for file in render(data)? {
        let path = out.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        crate::run_folder::write_atomic(&path, &file.bytes)?;
    }
    Ok(())
}
