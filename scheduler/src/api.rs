//! The interface every scheduling policy implements: core's, so that every
//! backend calls policies through it.

pub use schedlab_core::policy::Scheduler;
