//! The run folder, whose format this module alone owns: where everything
//! lives ([`layout`]), writing it ([`writer`], [`manifests`]), reading it
//! back ([`reader`], [`manifest_check`]) and completing it once its runs
//! are written ([`finish`]).
//!
//! ```text
//! DIR/manifest.json                      the invocation (InvocationManifest)
//! DIR/INCOMPLETE                         until every output below is written
//! DIR/runs/<arm>/seed-<n>/records.jsonl  one run's raw records
//! DIR/runs/<arm>/seed-<n>/manifest.json  that run (RunManifest), with its records' SHA-256
//! DIR/summary.csv|summary.json|report.md the comparison of the arms
//! DIR/report/                            the full report, as `schedlab report DIR` builds it
//! ```

pub mod finish;
pub mod layout;
pub mod manifest_check;
pub mod manifests;
pub mod reader;
pub mod writer;

pub use finish::{FinishError, finish, finish_with, write_report};
pub use layout::{INCOMPLETE_MARKER, MANIFEST_FILE, RECORDS_FILE, REPORT_DIR, run_dir};
pub use manifests::{ArmControl, ArmFacts, Build, InvocationManifest, MANIFEST_VERSION, RunExplain, RunManifest};
pub use reader::{FolderFacts, LoadOptions, LoadedRun, RunFolderData, SkippedRun, verify_complete};
pub use writer::{FolderError, RunFolder, write_atomic, write_json};
