//! The in-process discrete-event backend.
