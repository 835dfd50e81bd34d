//! Shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

pub fn read_data(name: &str) -> String {
    std::fs::read_to_string(data(name)).expect("test data file")
}

/// A small valid scenario for error tests to break one thing at a time.
pub const BASE: &str = r#"name: t
params:
  nodes: 3
  gap: 5m
duration: 30m
cluster:
  pools:
    - name: small
      count: ${nodes}
      machine_type: e2-standard-4
      hourly_price: 0.1
      capacity: {cpu: 4, memory: 16Gi}
templates:
  web:
    requests: {cpu: 100m, memory: 128Mi}
phases:
  - create: {template: web, count: 10}
"#;

/// BASE with `from` replaced by `to` (which must occur exactly once).
pub fn base_with(from: &str, to: &str) -> String {
    assert_eq!(BASE.matches(from).count(), 1, "{from:?} must occur once in BASE");
    BASE.replace(from, to)
}

/// BASE with extra phases appended.
pub fn base_plus(phases: &str) -> String {
    format!("{BASE}{phases}")
}
