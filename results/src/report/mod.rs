//! Reports rebuilt from run folders: loading a folder's manifest and raw
//! records back (refusing damaged or partial folders unless told otherwise),
//! merging folders of the same scenario, and the self-contained report.html.

mod decisions;
mod error;
mod folder;
mod html;
mod index;
mod manifest;
mod outputs;
mod pareto_note;

pub use decisions::{ArmTally, DecisionsOverview, HOW_TO_GET};
pub use error::ReportError;
pub use folder::{FolderFacts, INCOMPLETE_MARKER, LoadOptions, LoadedRun, RECORDS_FILE, RunFolderData, SkippedRun};
pub use html::{HtmlInput, html};
pub use index::folder_names;
pub use manifest::MANIFEST_VERSION;
pub use outputs::{OutputFile, Report, pareto_points, render, render_report, render_scenario};
pub use pareto_note::pareto_note;
