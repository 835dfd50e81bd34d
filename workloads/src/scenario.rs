//! A loaded scenario: checked, with its params resolved, ready to expand.

use crate::error::ScenarioError;
use crate::expand;
use crate::model::Model;
use crate::params::Params;
use crate::trace::Files;
use crate::{resolve, resolved, syntax};
use schedlab_core::Timeline;
use std::collections::BTreeMap;

/// A checked scenario with its params resolved.
#[derive(Debug, Clone)]
pub struct Scenario {
    origin: String,
    params: Params,
    params_json: BTreeMap<String, serde_json::Value>,
    model: Model,
}

impl Scenario {
    pub fn name(&self) -> &str {
        &self.model.name
    }

    pub fn description(&self) -> &str {
        &self.model.description
    }

    /// The claims the scenario declares it tests, each with its role.
    pub fn claims(&self) -> &[schedlab_core::ClaimUse] {
        &self.model.claims
    }

    /// "builtin:churn" or the file path.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Every param with its resolved value (defaults + overrides).
    pub fn params(&self) -> &BTreeMap<String, serde_json::Value> {
        &self.params_json
    }

    /// The scenario with params substituted and defaults filled in, as JSON in
    /// the scenario format, for the run manifest. Loading it again gives the
    /// same timelines.
    pub fn resolved(&self) -> serde_json::Value {
        resolved::to_json(&self.model, &self.params)
    }

    /// The timeline of this scenario for `seed`: the same seed always gives
    /// the same timeline. Validated at load, so this cannot fail.
    pub fn expand(&self, seed: u64) -> Timeline {
        let e = expand::expand(&self.model, seed);
        for issue in &e.issues {
            tracing::warn!(scenario = %self.origin, seed, path = %issue.path, "{}", issue.reason);
        }
        e.timeline
    }
}

/// Parses, resolves and checks a scenario text.
pub(crate) fn build(origin: &str, files: &Files, text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    // an editor's byte-order mark is no part of the first key
    let text = schedlab_core::text::strip_bom(text);
    let raw = syntax::parse_raw(origin, text)?;
    let (params, model) = resolve::resolve(origin, files, &raw, overrides)?;
    // Phase timing, pod counts and size caps do not depend on the seed, so
    // one expansion finds every such problem for all seeds.
    let check = expand::expand(&model, 0);
    if let Some(issue) = check.issues.into_iter().find(|i| i.fatal) {
        return Err(ScenarioError::invalid(
            origin,
            issue.path,
            issue.value,
            issue.reason,
            issue.loc,
        ));
    }
    tracing::debug!(origin, name = %model.name, "scenario loaded");
    Ok(Scenario {
        origin: origin.to_string(),
        params_json: params.to_json(),
        params,
        model,
    })
}
