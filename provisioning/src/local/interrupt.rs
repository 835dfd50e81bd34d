//! Ctrl-C while `up` runs: the handler only raises a flag; `up` sees it at
//! its next step, and its guard stops every process started so far.

use super::error::ProvisionError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Installs a process-wide SIGINT/SIGTERM handler that sets the returned
/// flag (put it in [`super::LocalOptions::cancel`]). A process can install
/// only one such handler.
pub fn cancel_on_interrupt() -> crate::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&flag);
    ctrlc::set_handler(move || {
        set.store(true, Ordering::SeqCst);
    })
    .map_err(|e| ProvisionError::Interrupt(e.to_string()))?;
    Ok(flag)
}
