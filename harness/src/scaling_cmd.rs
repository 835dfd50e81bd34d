//! `schedlab scaling DIR... --training DIR... --out OUT`: table D of the
//! pre-registration (claim 5), the judged arm against the monolithic foil
//! over run folders of the same scenarios at several cluster sizes
//! ([`results::scaling`]).

use crate::exit::InputError;
use crate::out::outln;
use anyhow::{Context, Result, bail};
use results::report::OutputFile;
use results::run_folder::write_report;
use results::scaling::{JudgedTraining, analyse, read_folder, read_training};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ScalingArgs {
    /// Finished run folders, each one scenario at one cluster size (`--set nodes=N`).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// The foil's training folders (`schedlab train --variant drs --set nodes=N`), for the training cost.
    #[arg(long = "training", value_name = "DIR")]
    pub training: Vec<PathBuf>,

    /// The judged arm.
    #[arg(long, default_value = "agmarl")]
    pub arm: String,

    /// The monolithic foil.
    #[arg(long, default_value = "drs")]
    pub foil: String,

    /// The judged arm's checkpoint, for its one training (D4): the one its runs used. Default: the checkpoint
    /// bundled for the judged arm.
    #[arg(long, value_name = "FILE")]
    pub judged_checkpoint: Option<PathBuf>,

    /// Where to write scaling.md, scaling.json and the figure scaling.svg/png (a new or empty folder).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: ScalingArgs) -> Result<()> {
    if std::fs::read_dir(&args.out).is_ok_and(|mut d| d.next().is_some()) {
        bail!(InputError(format!(
            "--out {}: the folder exists and is not empty: give a new or empty folder",
            args.out.display()
        )));
    }
    let input = |e: results::scaling::ScalingError| -> anyhow::Error {
        if e.is_input_error() {
            InputError(e.to_string()).into()
        } else {
            e.into()
        }
    };
    let runs = args
        .dirs
        .iter()
        .map(|d| read_folder(d).map_err(input))
        .collect::<Result<Vec<_>>>()?;
    let training = args
        .training
        .iter()
        .map(|d| read_training(d).map_err(input))
        .collect::<Result<Vec<_>>>()?;
    let judged = judged_training(&args)?;
    let table = analyse(&runs, training, judged, &args.arm, &args.foil).map_err(input)?;
    let markdown = table.to_markdown();
    let json = serde_json::to_string_pretty(&table).context("writing table D as JSON")?;
    let plot = results::plots::scaling_plot(&table).context("drawing table D")?;
    write_report(
        vec![
            OutputFile {
                path: "scaling.svg".into(),
                bytes: plot.svg.into_bytes(),
            },
            OutputFile {
                path: "scaling.png".into(),
                bytes: plot.png,
            },
            OutputFile {
                path: "scaling.md".into(),
                bytes: markdown.clone().into_bytes(),
            },
            OutputFile {
                path: "scaling.json".into(),
                bytes: (json + "\n").into_bytes(),
            },
        ],
        &args.out,
    )?;
    outln!("{markdown}")?;
    Ok(())
}

/// The judged arm's training from its checkpoint's sidecar: the file given,
/// else the bundled checkpoint of the arm's variant (none for an arm that
/// is not an AGMARL variant).
fn judged_training(args: &ScalingArgs) -> Result<Option<JudgedTraining>> {
    use scheduler::agmarl::{Variant, checkpoint};
    let (net, meta, origin) = match (&args.judged_checkpoint, Variant::from_arm_name(&args.arm)) {
        (Some(file), _) => {
            let (net, meta) = checkpoint::load(file)
                .map_err(|e| InputError(format!("--judged-checkpoint {}: {e}", file.display())))?;
            (net, meta, file.display().to_string())
        }
        (None, Some(variant)) => {
            let (net, meta) = checkpoint::bundled_for(variant)?;
            (net, meta, checkpoint::bundled_origin(variant).to_string())
        }
        (None, None) => return Ok(None),
    };
    let t = &meta.training;
    let count = |key: &str| t[key].as_u64().unwrap_or(0);
    let trained_at = t["scenarios"]
        .as_array()
        .map(|list| {
            let mut n: Vec<usize> = list
                .iter()
                .filter_map(|s| s["params"]["nodes"].as_u64().map(|n| n as usize))
                .collect();
            n.sort_unstable();
            n.dedup();
            n
        })
        .unwrap_or_default();
    Ok(Some(JudgedTraining {
        arm: args.arm.clone(),
        origin,
        trained_at,
        parameters: net.parameter_count() as u64,
        episodes: count("episodes"),
        transitions: count("transitions"),
        wall_seconds: t["wall_seconds"].as_f64(),
    }))
}
