//! `--arms extender:[NAME=]URL[#OPTIONS]`: a kube-scheduler HTTP extender
//! on top of a built-in profile, called by the simulator and by schedlab's
//! bind loop alike (see `scheduler::extender`). Here: reading the entry,
//! the check that calls the extender once before anything starts (exit 2
//! on a URL that does not answer, answers past the timeout, answers
//! malformed JSON or names nodes it was not sent), the policy of each run,
//! and what a run says about failed calls.

use crate::Result;
use scheduler::extender::{ExtenderArm, ExtenderCounts, SharedCounts};
use std::collections::BTreeMap;

pub use scheduler::extender::is_extender_arm;

/// The extender arms of `--arms`, by arm name.
pub type ExtenderArms = BTreeMap<String, ExtenderArm>;

/// Reads an `--arms` entry `extender:...`.
pub fn parse(arm: &str) -> Result<ExtenderArm> {
    Ok(scheduler::extender::parse_arm(arm).map_err(scheduler::Error::from)?)
}

/// Calls each extender once with the scenario's nodes (those of its first
/// seed), before a run folder is made or a cluster connected.
pub fn check_all(extenders: &ExtenderArms, scenario: &workloads::Scenario, first_seed: u64) -> Result<()> {
    if extenders.is_empty() {
        return Ok(());
    }
    let nodes = scenario.expand(first_seed).nodes;
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    for arm in extenders.values() {
        tracing::info!(arm = %arm.arm, url = %arm.url, "checking the extender");
        scheduler::extender::check(arm, &names).map_err(scheduler::Error::from)?;
    }
    Ok(())
}

/// The policy of one run of `arm`, and the counts of its calls.
pub fn policy(arm: &ExtenderArm, seed: u64) -> (Box<dyn scheduler::Scheduler>, SharedCounts) {
    let (policy, counts) = scheduler::extender::ExtenderScheduler::new(arm, seed);
    (Box::new(policy), counts)
}

/// The counts of a finished run, for its manifest.
pub fn counts_of(counts: &SharedCounts) -> ExtenderCounts {
    match counts.lock() {
        Ok(c) => c.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// The line the terminal gets for a run whose extender failed, None when
/// every call was answered.
pub fn failure_note(arm: &str, seed: u64, counts: &ExtenderCounts) -> Option<String> {
    if counts.failed_filter_calls == 0 && counts.failed_prioritize_calls == 0 {
        return None;
    }
    let first = counts.first_failure.as_deref().unwrap_or("no answer");
    Some(format!(
        "warning: {arm} seed {seed}: {} of {} extender filter calls failed, each leaving its pod unschedulable for \
         that attempt, and {} of {} prioritize calls failed and were ignored; the first: {first}",
        counts.failed_filter_calls, counts.filter_calls, counts.failed_prioritize_calls, counts.prioritize_calls
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_failures_says_nothing_and_one_with_says_how_often() {
        let mut counts = ExtenderCounts {
            filter_calls: 40,
            prioritize_calls: 30,
            ..ExtenderCounts::default()
        };
        assert_eq!(failure_note("extender", 1, &counts), None);
        counts.failed_filter_calls = 3;
        counts.first_failure = Some("extender http://h:1/filter did not answer within 5s".into());
        let note = failure_note("extender", 1, &counts).unwrap();
        assert!(note.contains("3 of 40 extender filter calls failed"), "{note}");
        assert!(note.contains("0 of 30 prioritize calls"), "{note}");
        assert!(note.ends_with("did not answer within 5s"), "{note}");
    }
}
