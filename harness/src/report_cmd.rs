//! `schedlab report DIR...`: rebuild every table and plot of one or more run
//! folders from their raw records, and from nothing else; with the folders
//! of the claim scenarios, the paper's claims table.

use crate::exit::InputError;
use crate::out::outln;
use anyhow::{Context, Result, bail};
use results::claims::DEFAULT_ARM;
use results::report::render_report;
use results::run_folder::{LoadOptions, MANIFEST_FILE, REPORT_DIR, RunFolderData, write_report};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run folders (as `schedlab scenario` writes them); those of one scenario are merged. Folders of several
    /// scenarios get one report each under OUT/<scenario>/ and, at OUT, an index with the claims table.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// The arm whose claims are judged against the baselines (an ablation, say); it must be an arm of the folders.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_ARM)]
    pub claims_arm: String,

    /// Where to write the report. Default: DIR/report for one folder; required for several.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Report on an unfinished folder's finished runs; every output then says "INCOMPLETE: n of m runs".
    #[arg(long)]
    pub allow_incomplete: bool,

    /// Print every metric's row (the full table of report.md) instead of the headline and the key table.
    #[arg(long)]
    pub all_metrics: bool,
}

pub fn run(args: ReportArgs) -> Result<()> {
    if let Some(sweep) = args
        .dirs
        .iter()
        .find(|d| schedlab_runner::sweep::folder::is_sweep_folder(d))
    {
        if args.dirs.len() > 1 {
            bail!(InputError(format!(
                "{} is a sweep folder: report on it alone (its cells are merged as run folders are)",
                sweep.display()
            )));
        }
        return sweep_report(&args, sweep);
    }
    let out = match (&args.out, args.dirs.as_slice()) {
        (Some(out), _) => out.clone(),
        (None, [dir]) => dir.join(REPORT_DIR),
        (None, _) => bail!(InputError(
            "--out is required when reporting on several run folders".into()
        )),
    };
    check_out(&out, &args.dirs)?;
    let options = LoadOptions {
        allow_incomplete: args.allow_incomplete,
    };
    let groups = RunFolderData::load_grouped(&args.dirs, options)?;
    if !groups.iter().any(|g| g.arms.contains(&args.claims_arm)) && args.claims_arm != DEFAULT_ARM {
        bail!(InputError(format!(
            "--claims-arm {}: no run folder has that arm",
            args.claims_arm
        )));
    }
    let report = render_report(&groups, &args.claims_arm)?;
    write_report(report.files, &out)?;
    for data in &groups {
        if let Some(banner) = data.incomplete_banner() {
            crate::out::noteln!("warning: {}: {banner}", data.scenario);
            for s in &data.skipped {
                crate::out::noteln!("warning: left out arm {} seed {}: {}", s.arm, s.seed, s.reason);
            }
        }
    }
    // after every file is written: a closed or full standard output cannot leave half a report
    outln!(
        "{}",
        if args.all_metrics {
            &report.terminal
        } else {
            &report.brief
        }
    )?;
    outln!("Report: {}", out.join("report.html").display())?;
    Ok(())
}

/// The report of a sweep folder: its scenario cells merged as run folders are, one report per point label (`base`,
/// a size, a set of overrides) when it has several, and the sweep table (`cells.csv`: one row per cell and metric).
fn sweep_report(args: &ReportArgs, dir: &Path) -> Result<()> {
    use schedlab_runner::sweep::folder::SweepFolder;
    use schedlab_runner::sweep::{CellWork, Program};
    let (folder, plan) = SweepFolder::open(dir, &Program::of(crate::build_info::current()))?;
    let out = args.out.clone().unwrap_or_else(|| dir.join(REPORT_DIR));
    check_out(&out, &[dir.to_path_buf()])?;
    let states = folder.states(&plan);
    let scenario_cells: Vec<_> = states
        .iter()
        .filter(|(c, _)| matches!(c.work, CellWork::Scenario { .. }))
        .collect();
    let done = scenario_cells
        .iter()
        .filter(|(_, s)| *s == schedlab_runner::sweep::CellState::Done)
        .count();
    if done == 0 {
        bail!(InputError(format!(
            "{}: no scenario cell is done yet ({} of them): nothing to report",
            dir.display(),
            scenario_cells.len()
        )));
    }
    if done < scenario_cells.len() && !args.allow_incomplete {
        bail!(InputError(format!(
            "{}: {done} of {} scenario cells are done: `schedlab sweep resume {}` runs the rest, or report on these with \
             --allow-incomplete",
            dir.display(),
            scenario_cells.len(),
            dir.display()
        )));
    }
    // the run folders of each label, in plan order
    let mut labels: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for (cell, state) in &scenario_cells {
        let CellWork::Scenario { point, .. } = cell.work else {
            continue;
        };
        if *state != schedlab_runner::sweep::CellState::Done {
            continue;
        }
        let label = &plan.points[point].label;
        let path = folder.cell_dir(cell);
        match labels.iter_mut().find(|(l, _)| l == label) {
            Some((_, dirs)) => dirs.push(path),
            None => labels.push((label.clone(), vec![path])),
        }
    }
    let options = LoadOptions {
        allow_incomplete: args.allow_incomplete,
    };
    let mut all_groups = Vec::new();
    let mut briefs = Vec::new();
    let one = labels.len() == 1;
    for (label, dirs) in &labels {
        let groups = RunFolderData::load_grouped(dirs, options)?;
        let report = render_report(&groups, &args.claims_arm)?;
        let at = if one {
            out.clone()
        } else {
            out.join(label_folder(label))
        };
        write_report(report.files, &at)?;
        let text = if args.all_metrics {
            report.terminal
        } else {
            report.brief
        };
        briefs.push((label.clone(), at, text));
        all_groups.extend(groups);
    }
    use schedlab_runner::sweep::table;
    let rows = table::rows(&plan, &folder, &all_groups);
    let table_path = out.join(table::CELLS_CSV);
    results::run_folder::write_atomic(&table_path, table::to_csv(&rows).as_bytes())?;
    results::run_folder::write_atomic(&out.join(table::CELLS_PARQUET), &table::to_parquet(&rows)?)?;
    if done < scenario_cells.len() {
        crate::out::noteln!(
            "warning: INCOMPLETE: {done} of {} scenario cells of sweep {} are in this report",
            scenario_cells.len(),
            plan.name
        );
    }
    for (label, at, text) in briefs {
        if !one {
            outln!("== {label} ==")?;
        }
        outln!("{text}")?;
        outln!("Report: {}", at.join("report.html").display())?;
    }
    outln!("Sweep table: {} (and {})", table_path.display(), table::CELLS_PARQUET)?;
    Ok(())
}

/// A point label as a folder name inside the report.
fn label_folder(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '=' | ',') {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}

/// Refuses an `--out` whose files a report would overwrite: an existing non-empty folder (another run
/// folder, a report of other inputs, anything else) or a file. The one exception is the default report
/// folder of a single run folder, `DIR/report`, which this command owns and rebuilds.
fn check_out(out: &Path, dirs: &[PathBuf]) -> Result<()> {
    let refuse = |what: &str| {
        Err(InputError(format!(
            "--out {}: {what}; a report there would overwrite its files: give a new or empty folder",
            out.display()
        ))
        .into())
    };
    if let [dir] = dirs
        && same_file(out, &dir.join(REPORT_DIR))
    {
        return Ok(());
    }
    match std::fs::read_dir(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if out.exists() && !out.is_dir() => refuse("it is a file, not a folder"),
        Err(e) => Err(e).with_context(|| format!("--out {}: cannot read the folder", out.display())),
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) if out.join(MANIFEST_FILE).is_file() => refuse("it is a run folder"),
            Some(_) => refuse("the folder exists and is not empty"),
        },
    }
}

/// Whether `a` and `b` both exist and are the same file or folder.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(out: &Path, dirs: &[PathBuf], why: &str) {
        let err = check_out(out, dirs).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("--out") && msg.contains(&out.display().to_string()) && msg.contains(why),
            "{msg}"
        );
        assert_eq!(
            crate::exit::code_for(&err),
            std::process::ExitCode::from(crate::exit::INPUT_ERROR)
        );
    }

    #[test]
    fn out_must_be_new_empty_or_the_default_report_folder_of_the_one_input() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        for dir in [&a, &b] {
            std::fs::create_dir_all(dir.join(REPORT_DIR)).unwrap();
            std::fs::write(dir.join(MANIFEST_FILE), "{}").unwrap();
            std::fs::write(dir.join(REPORT_DIR).join("report.md"), "old").unwrap();
        }
        let one = [a.clone()];
        // new, or empty: fine
        check_out(&tmp.path().join("new"), &one).unwrap();
        std::fs::create_dir(tmp.path().join("empty")).unwrap();
        check_out(&tmp.path().join("empty"), &one).unwrap();
        // the input's own report folder, however spelled: fine
        check_out(&a.join(REPORT_DIR), &one).unwrap();
        check_out(&tmp.path().join("a/../a/report"), &one).unwrap();
        // another run folder, the input itself, another folder's report, a file
        refused(&b, &one, "it is a run folder");
        refused(&a, &one, "it is a run folder");
        refused(&b.join(REPORT_DIR), &one, "not empty");
        refused(&a.join(REPORT_DIR), &[a.clone(), b.clone()], "not empty");
        refused(&a.join(REPORT_DIR).join("report.md"), &one, "is a file");
    }
}
