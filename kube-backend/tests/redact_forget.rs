//! `redact::forget_sent` empties the process-wide register of sent values:
//! in its own test binary, since every test of a binary shares the register.

use kube_backend::redact::{REDACTED, forget_sent, redact, remember_sent};

#[test]
fn forgotten_values_are_shown_again_and_new_ones_are_redacted() {
    let old = "old-token-4f3e2d1c";
    remember_sent(old);
    assert_eq!(redact(&format!("denied: {old}")), format!("denied: {REDACTED}"));
    forget_sent();
    // no longer the client's: shown as any other text
    assert_eq!(redact(&format!("denied: {old}")), format!("denied: {old}"));
    let new = "new-token-9a8b7c6d";
    remember_sent(new);
    assert_eq!(redact(&format!("{old} then {new}")), format!("{old} then {REDACTED}"));
}
