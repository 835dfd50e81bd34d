//! The objects as `--dry-run` prints them: one YAML stream in creation
//! order, after a commented summary of what they do.

use super::error::SweepJobError;
use super::objects::SweepObjects;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use std::collections::BTreeMap;

impl SweepObjects {
    /// The objects as one multi-document YAML stream (`---` between them,
    /// ServiceAccount, ConfigMap, then the Jobs) after the summary as
    /// comments. The ConfigMap's values (the plan's files, the cell list)
    /// are shown as their sizes in bytes, not their content, which can be
    /// a megabyte: a comment says so, and [`SweepObjects::to_yaml_full`]
    /// has them.
    pub fn to_yaml(&self) -> Result<String, SweepJobError> {
        self.stream(false)
    }

    /// The objects exactly as they are submitted, the ConfigMap's binaryData
    /// base64-encoded as the API takes it.
    pub fn to_yaml_full(&self) -> Result<String, SweepJobError> {
        self.stream(true)
    }

    fn stream(&self, full: bool) -> Result<String, SweepJobError> {
        let mut out = String::new();
        for line in &self.plan {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
        if !full {
            out.push_str("# The ConfigMap's data and binaryData show each key's size in bytes, not its content.\n");
        }
        let config_map = if full {
            document(&self.config_map)?
        } else {
            document(&ConfigMapSizes::of(&self.config_map))?
        };
        let docs = [document(&self.service_account)?, config_map]
            .into_iter()
            .chain(self.jobs.iter().map(document).collect::<Result<Vec<_>, _>>()?);
        for doc in docs {
            out.push_str("---\n");
            out.push_str(&doc);
            if !doc.ends_with('\n') {
                out.push('\n');
            }
        }
        Ok(out)
    }
}

fn document(value: &impl Serialize) -> Result<String, SweepJobError> {
    serde_saphyr::to_string(value).map_err(|e| SweepJobError::Yaml(e.to_string()))
}

/// A ConfigMap with each value's size in place of its content, its fields
/// in the order k8s-openapi writes a ConfigMap's.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigMapSizes<'a> {
    api_version: &'static str,
    kind: &'static str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    binary_data: BTreeMap<&'a str, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    data: BTreeMap<&'a str, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    immutable: Option<bool>,
    metadata: &'a ObjectMeta,
}

impl<'a> ConfigMapSizes<'a> {
    fn of(config_map: &'a k8s_openapi::api::core::v1::ConfigMap) -> ConfigMapSizes<'a> {
        let bytes = |n: usize| format!("{n} bytes");
        ConfigMapSizes {
            api_version: "v1",
            kind: "ConfigMap",
            binary_data: config_map
                .binary_data
                .iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), bytes(v.0.len())))
                .collect(),
            data: config_map
                .data
                .iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), bytes(v.len())))
                .collect(),
            immutable: config_map.immutable,
            metadata: &config_map.metadata,
        }
    }
}
