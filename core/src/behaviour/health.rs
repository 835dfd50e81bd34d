//! A node's health as the pods on it feel it: its condition and whether its
//! memory is under pressure.

use super::config::ModelConfig;
use crate::node::NodeCondition;

/// What the pod-behaviour model needs to know about a pod's node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeHealth {
    pub condition: NodeCondition,
    /// the node's containers use more than
    /// [`ModelConfig::memory_pressure_threshold`] of its allocatable memory
    pub memory_pressure: bool,
}

impl NodeHealth {
    /// A Ready node without memory pressure.
    pub const HEALTHY: NodeHealth = NodeHealth {
        condition: NodeCondition::Ready,
        memory_pressure: false,
    };

    pub fn is_ready(self) -> bool {
        self.condition.is_ready()
    }

    /// The multiplier of a container's crash hazard on this node.
    pub fn crash_factor(self, config: &ModelConfig) -> f64 {
        let mut factor = 1.0;
        if self.condition == NodeCondition::Degraded {
            factor *= config.degraded_crash_factor;
        }
        if self.memory_pressure {
            factor *= config.memory_pressure_crash_factor;
        }
        factor
    }
}

/// Whether `used_memory` puts a node with `allocatable_memory` under memory
/// pressure.
pub fn under_memory_pressure(used_memory: u64, allocatable_memory: u64, config: &ModelConfig) -> bool {
    used_memory as f64 > allocatable_memory as f64 * config.memory_pressure_threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_multiply() {
        let c = ModelConfig::default();
        assert_eq!(NodeHealth::HEALTHY.crash_factor(&c), 1.0);
        let degraded = NodeHealth {
            condition: NodeCondition::Degraded,
            memory_pressure: false,
        };
        assert_eq!(degraded.crash_factor(&c), 5.0);
        let both = NodeHealth {
            memory_pressure: true,
            ..degraded
        };
        assert_eq!(both.crash_factor(&c), 15.0);
    }

    #[test]
    fn pressure_above_ninety_percent() {
        let c = ModelConfig::default();
        assert!(!under_memory_pressure(90, 100, &c));
        assert!(under_memory_pressure(91, 100, &c));
    }
}
