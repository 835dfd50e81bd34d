//! Why a run folder cannot be reported on. Every variant names the file or
//! folder at fault; a records error also names the line.

use crate::metrics::MetricsError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("no run folder given")]
    NoFolders,
    // `error`, not `source`: the message already holds the cause, and a
    // source would print it twice in the command line's error chain.
    #[error("{}: cannot read the run folder's manifest: {error}", path.display())]
    ManifestRead { path: PathBuf, error: std::io::Error },
    #[error("{}: not a run folder manifest: {error}", path.display())]
    ManifestParse {
        path: PathBuf,
        error: schedlab_core::json_input::JsonInputError,
    },
    #[error("{}: {reason}", path.display())]
    ManifestInvalid { path: PathBuf, reason: String },
    #[error(
        "{}: the run folder is INCOMPLETE ({reason}), so its tables would come from part of its runs; finish or \
         rerun it, or pass --allow-incomplete to report on the runs it has, marked INCOMPLETE",
        dir.display()
    )]
    Incomplete { dir: PathBuf, reason: String },
    #[error("{}: the records of arm {arm} seed {seed} are missing", path.display())]
    MissingRecords { path: PathBuf, arm: String, seed: u64 },
    #[error("{}: the manifest of arm {arm} seed {seed} is missing (the run did not finish)", path.display())]
    MissingRunManifest { path: PathBuf, arm: String, seed: u64 },
    #[error("{}: {reason}", path.display())]
    RunManifest { path: PathBuf, reason: String },
    #[error(
        "{}: its SHA-256 is {found}, its run's manifest says {expected}: these are not the records that run wrote \
         (changed, or copied from another run)",
        path.display()
    )]
    RecordsDigest {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error(
        "{}: a run the folder's manifest does not list (its arms and seeds); a run folder holds exactly the runs its \
         manifest names",
        path.display()
    )]
    UnlistedRun { path: PathBuf },
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    #[error(transparent)]
    Plot(#[from] crate::plots::PlotError),
    #[error(transparent)]
    Decisions(#[from] crate::decisions::DecisionsError),
    #[error(
        "{} and {} hold different scenarios ({a_name} and {b_name} with their parameters resolved); only runs of \
         the same scenario can be reported or compared together",
        a.display(),
        b.display()
    )]
    DifferentScenarios {
        a: PathBuf,
        b: PathBuf,
        a_name: String,
        b_name: String,
    },
    #[error("{} ran on the {a_backend} backend and {} on {b_backend}; report them separately", a.display(), b.display())]
    DifferentBackends {
        a: PathBuf,
        b: PathBuf,
        a_backend: String,
        b_backend: String,
    },
    #[error("arm {arm} seed {seed} is in both {} and {}; each run may be counted once", a.display(), b.display())]
    DuplicateRun {
        arm: String,
        seed: u64,
        a: PathBuf,
        b: PathBuf,
    },
    #[error("{}: no run could be loaded", dir.display())]
    NoRuns { dir: PathBuf },
    #[error(transparent)]
    Claims(#[from] crate::claims::ClaimsError),
}

impl ReportError {
    /// Whether the fault lies in the run folders given (damaged, partial,
    /// mismatched), as opposed to schedlab itself (drawing a plot).
    pub fn is_input_error(&self) -> bool {
        match self {
            ReportError::NoFolders
            | ReportError::ManifestRead { .. }
            | ReportError::ManifestParse { .. }
            | ReportError::ManifestInvalid { .. }
            | ReportError::Incomplete { .. }
            | ReportError::MissingRecords { .. }
            | ReportError::MissingRunManifest { .. }
            | ReportError::RunManifest { .. }
            | ReportError::RecordsDigest { .. }
            | ReportError::UnlistedRun { .. }
            | ReportError::Metrics(_)
            | ReportError::Decisions(_)
            | ReportError::DifferentScenarios { .. }
            | ReportError::DifferentBackends { .. }
            | ReportError::DuplicateRun { .. }
            | ReportError::NoRuns { .. } => true,
            ReportError::Plot(_) => false,
            ReportError::Claims(e) => crate::error::claims_is_input(e),
        }
    }
}
