//! A submission in words: what it creates and how its cells run, one line
//! each, for the dry run's header and what `sweep run` prints as it submits.

use super::names;
use super::shape::JobShape;
use super::spec::SweepJobSpec;
use super::{CELL_UID, OUT_DIR, PLAN_DIR};

/// How many runs of consecutive plan indexes the summary names.
const SHOWN_RANGES: usize = 8;

/// What a submission creates and how its cells run, one line each (no line
/// breaks: the free-text sweep name is written escaped).
pub(crate) fn plan_lines(spec: &SweepJobSpec, shape: JobShape, base: &str) -> Vec<String> {
    let ns = &spec.namespace;
    let cells = spec.cells.len();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut lines = vec![
        format!(
            "sweep {:?} (id {}), attempt {}, namespace {ns}: {} (plan indexes {}), {} shape",
            spec.sweep_name,
            spec.sweep_id,
            spec.attempt,
            plural(cells, "cell"),
            ranges(&spec.cells),
            shape,
        ),
        format!(
            "ServiceAccount {ns}/{}: no token and no Role (the cells use none of the cluster's API)",
            names::service_account(base)
        ),
        format!(
            "ConfigMap {ns}/{}: {} and the cell list {}, {} bytes in all, read-only at {PLAN_DIR}",
            names::config_map(base, spec.attempt),
            plural(spec.plan_files.len(), "plan file"),
            names::cells_key(spec.attempt),
            spec.plan_bytes(),
        ),
    ];
    let retries = match spec.pods.retries_per_cell {
        1 => "1 retry".to_string(),
        n => format!("{n} retries"),
    };
    match shape {
        JobShape::Indexed => lines.push(format!(
            "Job {ns}/{}: Indexed, {cells} completions (index i runs the i-th cell of the list), {} at once, \
             {retries} per cell (backoffLimitPerIndex; a failed cell does not fail the others, and a pod lost to \
             a disruption spends no retry)",
            names::indexed_job(base, spec.attempt),
            plural(spec.pods.parallelism as usize, "pod"),
        )),
        JobShape::PerCell => {
            let first = spec.cells.first().copied().unwrap_or(0);
            let last = spec.cells.last().copied().unwrap_or(0);
            let jobs = if cells == 1 {
                format!("Job {ns}/{}", names::cell_job(base, spec.attempt, first))
            } else {
                format!(
                    "{cells} Jobs {ns}/{} .. {ns}/{}",
                    names::cell_job(base, spec.attempt, first),
                    names::cell_job(base, spec.attempt, last)
                )
            };
            lines.push(format!(
                "{jobs}: one per cell (--index N; this server has no Indexed Jobs with per-index retries), \
                 {retries} per cell (backoffLimit)"
            ));
            lines.push(format!(
                "parallelism {} is not enforced by Kubernetes in this shape: every cell's pod is created at once and \
                 waits Pending until there is room",
                spec.pods.parallelism
            ));
        }
    }
    if let Some(queue) = &spec.pods.queue_name {
        lines.push(format!("Kueue queue {queue} admits the Job(s)"));
    }
    lines.push(match &spec.pods.volume_claim {
        Some(claim) => format!("results: each cell writes its folder to volume claim {claim} at {OUT_DIR}"),
        None => "results: each cell streams its folder back through its pod's log (--stream); the Jobs keep their \
                 pods until `schedlab sweep fetch` has read them"
            .to_string(),
    });
    lines.push(format!(
        "pods: image {} (pull policy {}), {}m CPU and {} bytes of memory (its limit too), uid {CELL_UID}, no \
         privileges, read-only root",
        spec.pods.image,
        spec.pods
            .image_pull_policy
            .as_deref()
            .unwrap_or("the cluster's default"),
        spec.pods.cpu_millis,
        spec.pods.memory_bytes,
    ));
    lines
}

/// The plan indexes as sorted runs ("0-4, 7, 9-12"), at most
/// [`SHOWN_RANGES`] of them and how many more.
pub(crate) fn ranges(cells: &[usize]) -> String {
    let mut sorted = cells.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for cell in sorted {
        match runs.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(cell) => *end = cell,
            _ => runs.push((cell, cell)),
        }
    }
    let mut shown: Vec<String> = runs
        .iter()
        .take(SHOWN_RANGES)
        .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect();
    if runs.len() > SHOWN_RANGES {
        shown.push(format!("and {} more runs", runs.len() - SHOWN_RANGES));
    }
    shown.join(", ")
}
