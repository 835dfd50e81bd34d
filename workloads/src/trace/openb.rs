//! Alibaba cluster-trace-gpu-v2023 `openb_pod_list_*.csv`: one task (pod) a
//! row, a header naming the columns. Fields are plain (the format has no
//! quoting: `gpu_spec` joins GPU types with `|`); an empty field (or pandas'
//! `nan`) is a missing value.

use super::{Column, TraceError};
use serde::Serialize;

/// The columns of openb_pod_list, in the order the published files have them.
pub const COLUMNS: [&str; 11] = [
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
];

/// One row of the trace, as written (times in the trace's seconds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceRow {
    /// 1-based line of the file
    pub line: u64,
    pub name: String,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub num_gpu: u64,
    pub gpu_milli: u64,
    pub gpu_spec: String,
    pub qos: String,
    pub pod_phase: String,
    pub creation_time: f64,
    pub deletion_time: Option<f64>,
    pub scheduled_time: Option<f64>,
}

impl TraceRow {
    /// Whether the row asks for GPUs (whole or shared).
    pub fn wants_gpu(&self) -> bool {
        self.num_gpu > 0 || self.gpu_milli > 0
    }
}

/// A parsed trace: the header's column names and the rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    pub header: Vec<String>,
    pub rows: Vec<TraceRow>,
}

impl Trace {
    /// The column of `name` (one of [`COLUMNS`]) in this file, for errors.
    pub fn column(&self, name: &'static str) -> Column {
        Column {
            index: self.header.iter().position(|h| h == name).map_or(0, |i| i + 1),
            name,
        }
    }
}

/// Characters of a header a message quotes at most.
pub const MAX_HEADER_SHOWN: usize = 120;

/// The lines of `text`, ended by `\n`, `\r\n` or a lone `\r` (a CSV saved
/// with classic Mac line ends).
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n')
        .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'))
}

/// Whether the names of a first line look like a CSV header: at least two
/// columns, each empty (pandas' unnamed index) or a short name of letters,
/// digits, `_`, `-`, `.` and spaces.
fn plausible_header(names: &[&str]) -> bool {
    names.len() >= 2
        && names.iter().all(|n| {
            n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ' '))
        })
}

/// Parses the text of an openb_pod_list CSV. Rows must be sorted by
/// creation time (the published files are), since replay plays them in file
/// order and an unsorted file most likely is another format.
pub fn parse_openb(text: &str) -> Result<Trace, TraceError> {
    // a spreadsheet's export starts with a byte-order mark, no part of `name`
    let text = schedlab_core::text::strip_bom(text);
    let mut lines = split_lines(text).enumerate().map(|(i, l)| (i as u64 + 1, l));
    let Some((header_line, header)) = lines.find(|(_, l)| !l.trim().is_empty()) else {
        return Err(TraceError::MissingColumn {
            line: 1,
            column: COLUMNS[0],
            found: "nothing: the file is empty".to_string(),
        });
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    // A first line that is no header (a secret in `.env`, a JSON kubeconfig,
    // /etc/passwd named by mistake) is not quoted: only the columns are named.
    if !plausible_header(&names) {
        return Err(TraceError::NotAHeader { line: header_line });
    }
    // where each needed column is in this file's rows (extra columns are ignored)
    let mut at = [0usize; COLUMNS.len()];
    for (k, want) in COLUMNS.iter().enumerate() {
        at[k] = names
            .iter()
            .position(|n| n == want)
            .ok_or_else(|| TraceError::MissingColumn {
                line: header_line,
                column: want,
                found: schedlab_core::text::capped(&names.join(", "), MAX_HEADER_SHOWN),
            })?;
    }
    let mut rows = Vec::new();
    let mut previous: Option<f64> = None;
    for (line, text) in lines {
        if text.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        if fields.len() < names.len() {
            return Err(TraceError::Row {
                line,
                reason: format!("{} fields, the header has {} columns", fields.len(), names.len()),
            });
        }
        let f = Fields {
            line,
            fields: &fields,
            at: &at,
        };
        let creation_time = f.seconds(8)?.ok_or_else(|| f.bad(8, "a creation time is required"))?;
        if let Some(p) = previous
            && creation_time < p
        {
            return Err(f.bad(
                8,
                format!(
                    "earlier than the row before it ({}); rows must be sorted by creation_time",
                    crate::scalar::format_number(p)
                ),
            ));
        }
        previous = Some(creation_time);
        let deletion_time = f.seconds(9)?;
        if let Some(d) = deletion_time
            && d < creation_time
        {
            return Err(f.bad(
                9,
                format!(
                    "before the row's creation_time ({})",
                    crate::scalar::format_number(creation_time)
                ),
            ));
        }
        let qos = f.text(6).to_string();
        if qos.is_empty() {
            return Err(f.bad(6, "a qos class is required"));
        }
        rows.push(TraceRow {
            line,
            name: f.text(0).to_string(),
            cpu_milli: f.whole(1, false)?,
            memory_mib: f.whole(2, false)?,
            num_gpu: f.whole(3, true)?,
            gpu_milli: f.whole(4, true)?,
            gpu_spec: f.optional(5).unwrap_or_default().to_string(),
            qos,
            pod_phase: f.text(7).to_string(),
            creation_time,
            deletion_time,
            scheduled_time: f.seconds(10)?,
        });
    }
    Ok(Trace {
        header: names.iter().map(|n| n.to_string()).collect(),
        rows,
    })
}

/// The fields of one row, read by column.
struct Fields<'a> {
    line: u64,
    fields: &'a [&'a str],
    /// position of each of [`COLUMNS`] in the row
    at: &'a [usize; COLUMNS.len()],
}

impl Fields<'_> {
    fn text(&self, k: usize) -> &str {
        self.fields.get(self.at[k]).copied().unwrap_or("")
    }

    /// None for an empty field or pandas' `nan`.
    fn optional(&self, k: usize) -> Option<&str> {
        let v = self.text(k);
        (!v.is_empty() && !v.eq_ignore_ascii_case("nan")).then_some(v)
    }

    fn bad(&self, k: usize, reason: impl Into<String>) -> TraceError {
        TraceError::Field {
            line: self.line,
            column: Column {
                index: self.at[k] + 1,
                name: COLUMNS[k],
            },
            value: self.text(k).to_string(),
            reason: reason.into(),
        }
    }

    /// A whole non-negative number; with `missing_is_zero`, an empty field is 0
    /// (the GPU columns of CPU-only rows).
    fn whole(&self, k: usize, missing_is_zero: bool) -> Result<u64, TraceError> {
        match self.optional(k) {
            None if missing_is_zero => Ok(0),
            None => Err(self.bad(k, "a whole number is required")),
            Some(v) => v
                .parse::<u64>()
                .map_err(|_| self.bad(k, "expected a whole non-negative number")),
        }
    }

    /// Seconds (a non-negative finite number), or None when missing.
    fn seconds(&self, k: usize) -> Result<Option<f64>, TraceError> {
        let Some(v) = self.optional(k) else {
            return Ok(None);
        };
        match v.parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 => Ok(Some(s)),
            _ => Err(self.bad(k, "expected a non-negative number of seconds")),
        }
    }
}
