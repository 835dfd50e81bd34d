//! Any text either loads as a scenario or is rejected with an error: never a
//! panic, a hang or unbounded memory. What loads must also expand.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match workloads::parse_str("fuzz", text) {
        Ok(scenario) => {
            let timeline = scenario.expand(1);
            assert!(timeline.actions.windows(2).all(|w| w[0].at <= w[1].at));
            let _ = scenario.resolved();
        }
        Err(e) => assert!(!e.to_string().contains('\n')),
    }
});
