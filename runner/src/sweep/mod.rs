//! Sweeps: scenarios × arms × seeds × checkpoints, and training runs,
//! described once in a sweep file and run cell by cell, resumably, into one
//! sweep folder whose cells are the same run folders `schedlab scenario`
//! and `schedlab train` write.
//!
//! - [`file`]: the sweep file, read and checked;
//! - [`plan`]: the plan (the sweep with its inputs copied beside it) and its
//!   cells, each with a stable id derived from what it runs;
//! - [`folder`]: the sweep folder, the cells' states, accepting a cell;
//! - [`local`]: the local executor (child processes, `--jobs N` at once);
//! - [`table`]: one row per cell and metric (`cells.csv`).

pub mod archive;
pub mod file;
pub mod folder;
pub mod kube;
pub mod local;
pub mod plan;
pub mod table;

pub use file::{MAX_CELLS, Sweep};
pub use folder::{CellState, SweepFolder};
pub use plan::{Cell, CellWork, Plan, Program};
