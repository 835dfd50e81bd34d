//! The crate's one error type: every error its public API returns.

use crate::claims::ClaimsError;
use crate::decision_time::DecisionTimesError;
use crate::decisions::DecisionsError;
use crate::metrics::MetricsError;
use crate::plots::PlotError;
use crate::records::RecordsError;
use crate::report::ReportError;
use crate::run_folder::{FinishError, FolderError};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error(transparent)]
    Finish(#[from] FinishError),
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    #[error(transparent)]
    Decisions(#[from] DecisionsError),
    #[error(transparent)]
    DecisionTimes(#[from] DecisionTimesError),
    #[error(transparent)]
    Claims(#[from] ClaimsError),
    #[error(transparent)]
    Plot(#[from] PlotError),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Whether the user's input caused it: a run folder given to read that
    /// is damaged, partial or mismatched, or an unusable `--out`. Writing a
    /// file and drawing a plot fail through no fault of the user's.
    pub fn is_input_error(&self) -> bool {
        match self {
            Error::Report(e) => e.is_input_error(),
            Error::Folder(e) => e.is_input_error(),
            // the folder was written by this run a moment before
            Error::Finish(e) => match e {
                FinishError::RunMissing { .. } | FinishError::Read { .. } | FinishError::Report { .. } => false,
            },
            Error::Records(e) => records_is_input(e),
            Error::Metrics(e) => match e {
                MetricsError::Records(e) => records_is_input(e),
                // read from the run folder given
                MetricsError::DecisionTimes(_) => true,
                MetricsError::Incomplete { .. } | MetricsError::Inconsistent { .. } => true,
                MetricsError::Histogram(_) => false,
            },
            Error::Decisions(e) => match e {
                DecisionsError::Open { .. } | DecisionsError::Read { .. } | DecisionsError::Parse { .. } => true,
                DecisionsError::Create { .. } | DecisionsError::Write { .. } => false,
            },
            // returned by writing the file; reading it fails inside a metrics error
            Error::DecisionTimes(_) => false,
            Error::Claims(e) => claims_is_input(e),
            Error::Plot(_) => false,
        }
    }
}

impl schedlab_core::error::UserInput for Error {
    fn is_input_error(&self) -> bool {
        Error::is_input_error(self)
    }
}

/// Records are read from a folder the user names, and written by a run.
fn records_is_input(e: &RecordsError) -> bool {
    match e {
        RecordsError::Open { .. } | RecordsError::Read { .. } | RecordsError::Parse { .. } => true,
        RecordsError::Create { .. } | RecordsError::Write { .. } => false,
    }
}

/// The claims' own mapping is schedlab's; the arm and the summaries are the
/// user's. A pre-registration that disagrees with the code is bad input to
/// the build (exit 2, as the pre-registration asks), never a crash.
pub(crate) fn claims_is_input(e: &ClaimsError) -> bool {
    match e {
        ClaimsError::EmptyArm
        | ClaimsError::DuplicateScenario { .. }
        | ClaimsError::SummaryJson { .. }
        | ClaimsError::Preregistration { .. } => true,
        ClaimsError::UnknownMetric { .. } | ClaimsError::DirectionMismatch { .. } => false,
    }
}
