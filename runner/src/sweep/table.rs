//! The sweep table: one row per cell and metric (`cells.csv`), for people
//! who analyse in pandas, polars or R. Built from the cells' records as the
//! report reads them, so it agrees with every table of the report.

use crate::sweep::folder::SweepFolder;
use crate::sweep::plan::{CellWork, Plan};
use results::run_folder::RunFolderData;
use results::summary::{csv_field, csv_number};
use std::collections::HashMap;
use std::path::PathBuf;

/// The sweep table's file name in a report folder.
pub const CELLS_CSV: &str = "cells.csv";

/// Its columns.
pub const HEADER: &str = "cell,index,scenario,point,set,arm,checkpoint,init_seed,training_run,seed,metric,value";

/// The table of every run in `groups` that is a cell of `plan` in `folder`: one row per run and metric, in plan
/// order, then metric order.
pub fn cells_csv(plan: &Plan, folder: &SweepFolder, groups: &[RunFolderData]) -> String {
    let cell_of: HashMap<PathBuf, usize> = plan
        .cells()
        .filter(|c| matches!(c.work, CellWork::Scenario { .. }))
        .map(|c| (normal(folder.cell_dir(&c)), c.index))
        .collect();
    let mut rows: Vec<(usize, String)> = Vec::new();
    for data in groups {
        for run in &data.runs {
            // records at <cell>/runs/<arm>/seed-<n>/records.jsonl
            let Some(root) = run.records.ancestors().nth(4) else {
                continue;
            };
            let Some(&index) = cell_of.get(&normal(root.to_path_buf())) else {
                continue;
            };
            let Some(cell) = plan.cell(index) else {
                continue;
            };
            let CellWork::Scenario { point, arm, seed } = cell.work else {
                continue;
            };
            let p = &plan.points[point];
            let a = &plan.arms[arm];
            let checkpoint = a
                .checkpoint
                .as_ref()
                .or(a.drs_checkpoint.as_ref())
                .map_or(String::new(), |c| c.key.clone());
            let fixed = [
                cell.id.clone(),
                index.to_string(),
                p.scenario.clone(),
                p.label.clone(),
                p.set.join(";"),
                a.name.clone(),
                checkpoint,
                a.init_seed.map_or(String::new(), |s| s.to_string()),
                run.training_run().unwrap_or("").to_string(),
                seed.to_string(),
            ]
            .map(|f| csv_field(&f))
            .join(",");
            let metrics = run.metrics();
            for def in results::definitions::METRICS {
                rows.push((
                    index,
                    format!("{fixed},{},{}", def.key, csv_number(metrics.value(def.key))),
                ));
            }
        }
    }
    // stable: each cell's rows keep metric order
    rows.sort_by_key(|(index, _)| *index);
    let mut out = String::with_capacity(HEADER.len() + 1 + rows.len() * 96);
    out.push_str(HEADER);
    out.push('\n');
    for (_, row) in rows {
        out.push_str(&row);
        out.push('\n');
    }
    out
}

fn normal(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}
