//! The sweep table: one row per cell and metric, as CSV (`cells.csv`) and
//! Parquet (`cells.parquet`), for people who analyse in pandas, polars or
//! R. Built from the cells' records as the report reads them, so it agrees
//! with every table of the report.

use crate::Result;
use crate::error::While;
use crate::sweep::folder::SweepFolder;
use crate::sweep::plan::{CellWork, Plan};
use results::run_folder::RunFolderData;
use results::summary::{csv_field, csv_number};
use std::collections::HashMap;
use std::path::PathBuf;

/// The sweep table's files in a report folder.
pub const CELLS_CSV: &str = "cells.csv";
pub const CELLS_PARQUET: &str = "cells.parquet";

/// Its columns.
pub const HEADER: &str = "cell,index,scenario,point,set,arm,checkpoint,init_seed,training_run,seed,metric,value";

/// One cell's value of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cell: String,
    pub index: usize,
    pub scenario: String,
    pub point: String,
    /// the point's overrides, `;`-separated
    pub set: String,
    pub arm: String,
    /// the checkpoint's name in the plan, if the arm has one
    pub checkpoint: String,
    pub init_seed: Option<u64>,
    pub training_run: String,
    pub seed: u64,
    pub metric: &'static str,
    /// None where the metric is undefined for the run
    pub value: Option<f64>,
}

/// The rows of every run in `groups` that is a cell of `plan` in `folder`: in plan order, then metric order.
pub fn rows(plan: &Plan, folder: &SweepFolder, groups: &[RunFolderData]) -> Vec<Row> {
    let cell_of: HashMap<PathBuf, usize> = plan
        .cells()
        .filter(|c| matches!(c.work, CellWork::Scenario { .. }))
        .map(|c| (normal(folder.cell_dir(&c)), c.index))
        .collect();
    let mut rows: Vec<Row> = Vec::new();
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
            let metrics = run.metrics();
            for def in results::definitions::METRICS {
                rows.push(Row {
                    cell: cell.id.clone(),
                    index,
                    scenario: p.scenario.clone(),
                    point: p.label.clone(),
                    set: p.set.join(";"),
                    arm: a.name.clone(),
                    checkpoint: a
                        .checkpoint
                        .as_ref()
                        .or(a.drs_checkpoint.as_ref())
                        .map_or(String::new(), |c| c.key.clone()),
                    init_seed: a.init_seed,
                    training_run: run.training_run().unwrap_or("").to_string(),
                    seed,
                    metric: def.key,
                    value: metrics.value(def.key).filter(|v| v.is_finite()),
                });
            }
        }
    }
    // stable: each cell's rows keep metric order
    rows.sort_by_key(|r| r.index);
    rows
}

/// The rows as CSV, with [`HEADER`].
pub fn to_csv(rows: &[Row]) -> String {
    let mut out = String::with_capacity(HEADER.len() + 1 + rows.len() * 96);
    out.push_str(HEADER);
    out.push('\n');
    for r in rows {
        let fields = [
            csv_field(&r.cell),
            r.index.to_string(),
            csv_field(&r.scenario),
            csv_field(&r.point),
            csv_field(&r.set),
            csv_field(&r.arm),
            csv_field(&r.checkpoint),
            r.init_seed.map_or(String::new(), |s| s.to_string()),
            csv_field(&r.training_run),
            r.seed.to_string(),
            r.metric.to_string(),
            csv_number(r.value),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// The Parquet schema of the table: the CSV's columns, strings as UTF-8, the seeds and index as integers, the
/// value a double (null where undefined).
const SCHEMA: &str = "message cells {
    REQUIRED BYTE_ARRAY cell (UTF8);
    REQUIRED INT64 index;
    REQUIRED BYTE_ARRAY scenario (UTF8);
    REQUIRED BYTE_ARRAY point (UTF8);
    REQUIRED BYTE_ARRAY set (UTF8);
    REQUIRED BYTE_ARRAY arm (UTF8);
    REQUIRED BYTE_ARRAY checkpoint (UTF8);
    OPTIONAL INT64 init_seed;
    REQUIRED BYTE_ARRAY training_run (UTF8);
    REQUIRED INT64 seed;
    REQUIRED BYTE_ARRAY metric (UTF8);
    OPTIONAL DOUBLE value;
}";

/// The rows as a Parquet file (one row group).
pub fn to_parquet(rows: &[Row]) -> Result<Vec<u8>> {
    use parquet::data_type::{ByteArray, DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use std::sync::Arc;
    let doing = || "writing the sweep table as Parquet".to_string();
    let schema = Arc::new(parquet::schema::parser::parse_message_type(SCHEMA).while_doing(doing)?);
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer = SerializedFileWriter::new(Vec::new(), schema, props).while_doing(doing)?;
    let mut group = writer.next_row_group().while_doing(doing)?;
    let text = |f: fn(&Row) -> &str| -> Vec<ByteArray> { rows.iter().map(|r| ByteArray::from(f(r))).collect() };
    let int = |f: fn(&Row) -> i64| -> Vec<i64> { rows.iter().map(f).collect() };
    let mut column = 0;
    while let Some(mut writer) = group.next_column().while_doing(doing)? {
        match column {
            0 => text(|r| &r.cell).as_slice().write(&mut writer)?,
            1 => int(|r| r.index as i64).as_slice().write(&mut writer)?,
            2 => text(|r| &r.scenario).as_slice().write(&mut writer)?,
            3 => text(|r| &r.point).as_slice().write(&mut writer)?,
            4 => text(|r| &r.set).as_slice().write(&mut writer)?,
            5 => text(|r| &r.arm).as_slice().write(&mut writer)?,
            6 => text(|r| &r.checkpoint).as_slice().write(&mut writer)?,
            7 => {
                let values: Vec<i64> = rows.iter().filter_map(|r| r.init_seed.map(|s| s as i64)).collect();
                let levels: Vec<i16> = rows.iter().map(|r| i16::from(r.init_seed.is_some())).collect();
                writer
                    .typed::<Int64Type>()
                    .write_batch(&values, Some(&levels), None)
                    .while_doing(doing)?;
            }
            8 => text(|r| &r.training_run).as_slice().write(&mut writer)?,
            9 => int(|r| r.seed as i64).as_slice().write(&mut writer)?,
            10 => text(|r| r.metric).as_slice().write(&mut writer)?,
            _ => {
                let values: Vec<f64> = rows.iter().filter_map(|r| r.value).collect();
                let levels: Vec<i16> = rows.iter().map(|r| i16::from(r.value.is_some())).collect();
                writer
                    .typed::<DoubleType>()
                    .write_batch(&values, Some(&levels), None)
                    .while_doing(doing)?;
            }
        }
        writer.close().while_doing(doing)?;
        column += 1;
    }
    group.close().while_doing(doing)?;
    writer.into_inner().while_doing(doing)
}

/// A required column's values, written to its column writer.
trait Required {
    fn write(self, writer: &mut parquet::file::writer::SerializedColumnWriter<'_>) -> Result<()>;
}

impl Required for &[parquet::data_type::ByteArray] {
    fn write(self, writer: &mut parquet::file::writer::SerializedColumnWriter<'_>) -> Result<()> {
        writer
            .typed::<parquet::data_type::ByteArrayType>()
            .write_batch(self, None, None)
            .while_doing(|| "writing the sweep table as Parquet".into())?;
        Ok(())
    }
}

impl Required for &[i64] {
    fn write(self, writer: &mut parquet::file::writer::SerializedColumnWriter<'_>) -> Result<()> {
        writer
            .typed::<parquet::data_type::Int64Type>()
            .write_batch(self, None, None)
            .while_doing(|| "writing the sweep table as Parquet".into())?;
        Ok(())
    }
}

fn normal(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn row(index: usize, metric: &'static str, value: Option<f64>, init_seed: Option<u64>) -> Row {
        Row {
            cell: format!("c{index}"),
            index,
            scenario: "churn".into(),
            point: "nodes=8".into(),
            set: "nodes=8".into(),
            arm: "agmarl, \"quoted\"".into(),
            checkpoint: String::new(),
            init_seed,
            training_run: "seed:1000".into(),
            seed: 3,
            metric,
            value,
        }
    }

    #[test]
    fn the_parquet_file_holds_every_row_as_the_csv_does() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let rows = vec![
            row(0, "cost_usd", Some(1.5), None),
            row(0, "failure_rate", None, None),
            row(1, "cost_usd", Some(2.5), Some(1000)),
        ];
        let csv = to_csv(&rows);
        assert_eq!(csv.lines().count(), 4);
        assert!(
            csv.contains("c0,0,churn,nodes=8,nodes=8,\"agmarl, \"\"quoted\"\"\",,,seed:1000,3,failure_rate,\n"),
            "{csv}"
        );
        let bytes = to_parquet(&rows).unwrap();
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 3);
        let read: Vec<String> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().to_string())
            .collect();
        assert!(
            read[0].contains("value: 1.5") && read[0].contains("init_seed: null"),
            "{}",
            read[0]
        );
        assert!(read[1].contains("value: null"), "{}", read[1]);
        assert!(
            read[2].contains("init_seed: 1000") && read[2].contains(r#"arm: "agmarl, "quoted"""#),
            "{}",
            read[2]
        );
    }
}
