//! Ctrl-C while `up` runs: the handler only raises a flag; `up` sees it at
//! its next step, and its guard stops every process started so far.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The process's Ctrl-C ([`crate::interrupt::Interrupt`]) as the flag
/// [`super::LocalOptions::cancel`] takes.
pub fn cancel_on_interrupt() -> crate::Result<Arc<AtomicBool>> {
    Ok(crate::interrupt::Interrupt::install()?.flag())
}
