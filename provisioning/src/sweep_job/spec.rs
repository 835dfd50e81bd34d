//! What one submission of a sweep is, as the Kubernetes side needs it, and
//! its check: everything the API server would refuse, or the cell pod could
//! not use, is refused here first, naming the field and the value.

use super::error::SweepJobError;
use super::names;
use super::{CONFIG_MAP_MAX_BYTES, MAX_CELLS};
use std::collections::{BTreeMap, BTreeSet};

/// One submission of a sweep: the cells it runs, how, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepJobSpec {
    /// the sweep's id (hex, e.g. 16 chars); labels every object
    /// (`schedlab.io/sweep=<id>`)
    pub sweep_id: String,
    /// a human name from the sweep file, made into the DNS-1123 label that
    /// starts every object's name ([`super::name_base`]), e.g. "claims-study"
    pub sweep_name: String,
    /// which submission of this sweep (1 for `run`, 2.. for each `resume`):
    /// the ConfigMap's and the Jobs' names carry it
    pub attempt: u32,
    pub namespace: String,
    /// the plan's files: ConfigMap key -> content; they go into one
    /// ConfigMap as binaryData, mounted read-only at [`super::PLAN_DIR`]
    pub plan_files: BTreeMap<String, Vec<u8>>,
    /// the plan indexes this submission runs; completion index i runs cells[i]
    pub cells: Vec<usize>,
    /// how each cell pod runs: what every submission of the sweep shares
    pub pods: PodSettings,
}

/// How each cell pod of a sweep runs, the same for every submission of it
/// (kept in the sweep folder, so a resume submits alike).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PodSettings {
    /// the image that holds the schedlab binary at [`super::BINARY`]
    pub image: String,
    /// None: the cluster's default; Some("Never") for images imported into
    /// the nodes' containerd
    pub image_pull_policy: Option<String>,
    /// pods at once (enforced by Kubernetes in the Indexed shape only)
    pub parallelism: u32,
    /// retries of one cell before it counts as failed
    pub retries_per_cell: u32,
    /// each cell pod's requests (and the memory limit = the memory request)
    pub cpu_millis: u32,
    pub memory_bytes: u64,
    /// Kueue's queue: label `kueue.x-k8s.io/queue-name` on the Job(s) when
    /// given; never required
    pub queue_name: Option<String>,
    /// a ReadWriteMany PersistentVolumeClaim mounted at [`super::OUT_DIR`];
    /// None: results stream back through the API (the pods' logs)
    pub volume_claim: Option<String>,
    pub node_selector: BTreeMap<String, String>,
}

/// The image pull policies Kubernetes knows.
const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];

impl SweepJobSpec {
    /// Checks every field; the first one that cannot be used is the error.
    pub fn check(&self) -> Result<(), SweepJobError> {
        use SweepJobError as E;
        let id = &self.sweep_id;
        if id.is_empty() || id.len() > names::MAX_LABEL || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(E::invalid(
                "sweep_id",
                id,
                "a sweep id is 1 to 63 hex digits (it is a label value)",
            ));
        }
        if self.attempt == 0 {
            return Err(E::invalid(
                "attempt",
                self.attempt,
                "attempts count from 1 (`run`), 2.. for each `resume`",
            ));
        }
        if !names::is_dns_label(&self.namespace) {
            return Err(E::invalid(
                "namespace",
                &self.namespace,
                "a namespace is a DNS-1123 label: 1 to 63 of a-z, 0-9 and '-', starting and ending alphanumeric",
            ));
        }
        if self.pods.image.trim().is_empty() || self.pods.image.chars().any(char::is_whitespace) {
            return Err(E::invalid(
                "image",
                &self.pods.image,
                "the image that holds the schedlab binary is needed (no spaces)",
            ));
        }
        if let Some(policy) = &self.pods.image_pull_policy
            && !PULL_POLICIES.contains(&policy.as_str())
        {
            return Err(E::invalid(
                "image_pull_policy",
                policy,
                format!("an image pull policy is one of {}", PULL_POLICIES.join(", ")),
            ));
        }
        self.check_cells()?;
        if self.pods.parallelism == 0 || self.pods.parallelism as usize > MAX_CELLS {
            return Err(E::invalid(
                "parallelism",
                self.pods.parallelism,
                format!("at least one pod at once, at most {MAX_CELLS}"),
            ));
        }
        if i32::try_from(self.pods.retries_per_cell).is_err() {
            return Err(E::invalid(
                "retries_per_cell",
                self.pods.retries_per_cell,
                format!("Kubernetes counts retries in 32 bits: at most {}", i32::MAX),
            ));
        }
        if self.pods.cpu_millis == 0 {
            return Err(E::invalid(
                "cpu_millis",
                self.pods.cpu_millis,
                "a cell requests some CPU (millicores)",
            ));
        }
        if self.pods.memory_bytes == 0 || i64::try_from(self.pods.memory_bytes).is_err() {
            return Err(E::invalid(
                "memory_bytes",
                self.pods.memory_bytes,
                "a cell requests some memory (bytes; it is its limit too)",
            ));
        }
        if let Some(queue) = &self.pods.queue_name
            && !names::is_dns_label(queue)
        {
            return Err(E::invalid(
                "queue_name",
                queue,
                "a Kueue LocalQueue name (a label value here) is a DNS-1123 label",
            ));
        }
        if let Some(claim) = &self.pods.volume_claim
            && !names::is_dns_subdomain(claim)
        {
            return Err(E::invalid(
                "volume_claim",
                claim,
                "a PersistentVolumeClaim name is a DNS-1123 subdomain: a-z, 0-9, '-' and '.'",
            ));
        }
        for (key, value) in &self.pods.node_selector {
            if !names::is_label_key(key) {
                return Err(E::invalid("node_selector", key, "not a label key"));
            }
            if !names::is_label_value(value) {
                return Err(E::invalid(
                    "node_selector",
                    format!("{key}={value}"),
                    "not a label value: at most 63 of a-z, A-Z, 0-9, '-', '.', '_', starting and ending alphanumeric",
                ));
            }
        }
        self.check_plan()?;
        self.check_names()
    }

    fn check_cells(&self) -> Result<(), SweepJobError> {
        use SweepJobError as E;
        if self.cells.is_empty() {
            return Err(E::invalid("cells", &self.cells, "a submission runs at least one cell"));
        }
        if self.cells.len() > MAX_CELLS {
            return Err(E::invalid(
                "cells",
                format_args!("{} cells", self.cells.len()),
                format!(
                    "one submission runs at most {MAX_CELLS} cells (Kubernetes' cap on an Indexed Job's completions \
                     with per-index retries): split the sweep"
                ),
            ));
        }
        let mut seen = BTreeSet::new();
        if let Some(twice) = self.cells.iter().find(|c| !seen.insert(**c)) {
            return Err(E::invalid(
                "cells",
                twice,
                "this plan index is listed twice: it would run twice",
            ));
        }
        Ok(())
    }

    fn check_plan(&self) -> Result<(), SweepJobError> {
        let cells_key = names::cells_key(self.attempt);
        for key in self.plan_files.keys() {
            if !names::is_config_map_key(key) {
                return Err(SweepJobError::invalid(
                    "plan_files",
                    key,
                    "a ConfigMap key is 1 to 253 of a-z, A-Z, 0-9, '-', '.', '_', and neither '.' nor starting with '..'",
                ));
            }
            if *key == cells_key {
                return Err(SweepJobError::invalid(
                    "plan_files",
                    key,
                    "this key holds the attempt's cell list in the plan's ConfigMap",
                ));
            }
        }
        let bytes = self.plan_bytes();
        if bytes > CONFIG_MAP_MAX_BYTES {
            return Err(SweepJobError::PlanTooLarge { bytes });
        }
        Ok(())
    }

    /// Every object name must be a DNS-1123 label; only an extreme attempt
    /// or plan index can make one too long once the base is cut.
    fn check_names(&self) -> Result<(), SweepJobError> {
        let base = self.name_base();
        // An Indexed pod's hostname is `<job>-<completion index>`.
        let hostname = format!(
            "{}-{}",
            names::indexed_job(&base, self.attempt),
            self.cells.len().saturating_sub(1)
        );
        let too_long = |name: &str| format!("the name {name:?} would be longer than 63 characters");
        for name in [names::config_map(&base, self.attempt), hostname] {
            if !names::is_dns_label(&name) {
                return Err(SweepJobError::invalid("attempt", self.attempt, too_long(&name)));
            }
        }
        let longest_cell = self.cells.iter().max().copied().unwrap_or(0);
        let cell_job = names::cell_job(&base, self.attempt, longest_cell);
        if !names::is_dns_label(&cell_job) {
            return Err(SweepJobError::invalid("cells", longest_cell, too_long(&cell_job)));
        }
        Ok(())
    }

    /// The bytes the plan's ConfigMap holds as Kubernetes counts them
    /// against its 1 MiB: the values (the plan's files and the attempt's
    /// cell list), not the keys.
    pub fn plan_bytes(&self) -> usize {
        let files: usize = self.plan_files.values().map(Vec::len).sum();
        files + self.cells_text().len()
    }

    /// The attempt's cell list as the pod reads it: one plan index a line.
    pub fn cells_text(&self) -> String {
        let mut text = String::with_capacity(self.cells.len() * 6);
        for cell in &self.cells {
            text.push_str(&cell.to_string());
            text.push('\n');
        }
        text
    }

    /// The part of every object name that names the sweep.
    pub fn name_base(&self) -> String {
        names::name_base(&self.sweep_name, &self.sweep_id)
    }
}
