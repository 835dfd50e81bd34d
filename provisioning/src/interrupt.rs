//! The one Ctrl-C of a process: the first call installs the handler, and
//! every part that must stop on Ctrl-C (a control plane coming up, a kind
//! or GKE cluster being made, the runs being played) reads the same
//! interrupt, as a flag (synchronous code between steps) or as a
//! cancellation token (async code). A second handler would replace the
//! first, or fail to install, so there is exactly one.

use crate::local::ProvisionError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// Ctrl-C, as a flag and as a token; clones share both.
#[derive(Debug, Clone)]
pub struct Interrupt {
    flag: Arc<AtomicBool>,
    token: CancellationToken,
}

/// Held while installing, so that two threads asking at once get one handler.
static INSTALLED: Mutex<Option<Interrupt>> = Mutex::new(None);

impl Interrupt {
    /// The process's interrupt, its handler installed on the first call.
    /// On Ctrl-C the handler raises the flag, cancels the token and says
    /// that what was started is being taken down.
    pub fn install() -> crate::Result<Interrupt> {
        let mut installed = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(interrupt) = installed.as_ref() {
            return Ok(interrupt.clone());
        }
        let interrupt = Interrupt::unhandled();
        let raised = interrupt.clone();
        ctrlc::set_handler(move || {
            if !raised.flag.swap(true, Ordering::SeqCst) {
                schedlab_core::noteln!(
                    "interrupted: tearing down what was started (a run folder stays marked INCOMPLETE)"
                );
            }
            raised.token.cancel();
        })
        .map_err(|e| ProvisionError::Interrupt(e.to_string()))?;
        *installed = Some(interrupt.clone());
        Ok(interrupt)
    }

    /// An interrupt no signal raises (tests; code driven by its own
    /// cancellation).
    pub fn unhandled() -> Interrupt {
        Interrupt {
            flag: Arc::new(AtomicBool::new(false)),
            token: CancellationToken::new(),
        }
    }

    /// Raises it, as Ctrl-C would.
    pub fn raise(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.token.cancel();
    }

    /// Whether it was raised.
    pub fn is_raised(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// The flag synchronous code polls between steps.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }

    /// The token async code selects on.
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_sets_the_flag_and_cancels_the_token_of_every_clone() {
        let interrupt = Interrupt::unhandled();
        let clone = interrupt.clone();
        let (flag, token) = (clone.flag(), clone.token());
        assert!(!interrupt.is_raised() && !token.is_cancelled());
        interrupt.raise();
        assert!(flag.load(Ordering::SeqCst) && token.is_cancelled() && clone.is_raised());
    }

    #[test]
    fn installing_twice_gives_the_same_interrupt() {
        let a = Interrupt::install().unwrap();
        let b = Interrupt::install().unwrap();
        assert!(Arc::ptr_eq(&a.flag, &b.flag));
    }
}
