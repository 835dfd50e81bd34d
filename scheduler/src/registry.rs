//! Building a baseline policy from its arm name.

use crate::api::Scheduler;
use crate::binpack::BinPackScheduler;
use crate::default::DefaultScheduler;
use crate::random::RandomScheduler;

/// The arm names [`baseline`] knows.
pub const BASELINE_NAMES: &[&str] = &["default", "binpack", "random"];

/// An arm name that is not a baseline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduler {name:?}: the baselines are {}", BASELINE_NAMES.join(", "))]
pub struct UnknownScheduler {
    pub name: String,
}

/// The baseline called `name`, drawing its random choices from `seed`.
pub fn baseline(name: &str, seed: u64) -> Result<Box<dyn Scheduler>, UnknownScheduler> {
    match name {
        DefaultScheduler::NAME => Ok(Box::new(DefaultScheduler::new(seed))),
        BinPackScheduler::NAME => Ok(Box::new(BinPackScheduler::new(seed))),
        RandomScheduler::NAME => Ok(Box::new(RandomScheduler::new(seed))),
        _ => Err(UnknownScheduler { name: name.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_every_baseline_by_name() {
        for name in BASELINE_NAMES {
            let s = baseline(name, 1).unwrap();
            assert_eq!(s.name(), *name);
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = match baseline("agmarl-typo", 1) {
            Err(e) => e,
            Ok(s) => panic!("built {}", s.name()),
        };
        assert_eq!(err.name, "agmarl-typo");
        assert_eq!(
            err.to_string(),
            "unknown scheduler \"agmarl-typo\": the baselines are default, binpack, random"
        );
    }
}
