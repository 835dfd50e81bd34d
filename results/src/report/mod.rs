//! Reports rebuilt from run folders as [`crate::run_folder`] reads them
//! back: the tables, plots, claims and the self-contained report.html.

mod decisions;
mod error;
mod html;
mod index;
mod outputs;
mod pareto_note;

pub use decisions::{ArmTally, DecisionsOverview, HOW_TO_GET};
pub use error::ReportError;
pub use html::{HtmlInput, html};
pub use index::folder_names;
pub use outputs::{
    OutputFile, Report, all_metrics_line, pareto_points, render, render_report, render_report_with, render_scenario,
};
pub use pareto_note::pareto_note;
