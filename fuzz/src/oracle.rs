//! What every input is held to: no panic, and an error message that is one
//! line, names the file or origin it is about, and shows no planted secret.
//! (Time is measured by the driver, crashes by the supervisor.)

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

/// How one input fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// the parser accepted it and every check on the result passed
    Accepted,
    /// the parser refused it with an acceptable error
    Rejected,
    /// an oracle failed: what is wrong
    Violation(String),
}

/// The problem with an error message, if any: line breaks, a raw control
/// character (an ESC or OSC sequence from the input would drive the
/// terminal), no mention of any of `names` (the origin or file the error is
/// about; one is enough), or a planted secret shown.
pub fn check_error(msg: &str, names: &[&str], secrets: &[&str]) -> Option<String> {
    if msg.trim().is_empty() {
        return Some("an empty error message".to_string());
    }
    if msg.contains(['\n', '\r']) {
        return Some(format!("a multi-line error: {}", one_line(msg)));
    }
    if let Some(c) = msg.chars().find(|&c| c != '\t' && c.is_control()) {
        return Some(format!(
            "an error with a raw control character U+{:04X}: {}",
            u32::from(c),
            msg.escape_debug()
        ));
    }
    if !names.is_empty() && !names.iter().any(|n| msg.contains(n)) {
        return Some(format!("an error that does not name {}: {msg}", names.join(" or ")));
    }
    if let Some(s) = secrets.iter().find(|s| !s.is_empty() && msg.contains(*s)) {
        return Some(format!("an error shows the planted secret {s:?}: {msg}"));
    }
    None
}

/// `s` on one line, for failure files: whole, up to a cap that keeps a
/// 100,000-term expression from filling the report.
pub fn one_line(s: &str) -> String {
    cut(&s.replace('\r', "\\r").replace('\n', "\\n"), 20_000)
}

/// `s` on one line and short, for the terminal.
pub fn short(s: &str) -> String {
    cut(&one_line(s), 300)
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() > max {
        format!("{}…", s.chars().take(max).collect::<String>())
    } else {
        s.to_string()
    }
}

thread_local! {
    /// set while [`catching`] runs, so that the hook records instead of printing
    static CAUGHT: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Panics on threads that were not inside [`catching`] (a runtime's
/// blocking pool, a thread a parser spawned), until a [`catching`] claims them.
static STRAY: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Whether [`catching`] blames stray panics on its input: right in a process
/// that runs one input at a time, wrong among parallel tests.
static CLAIM_STRAYS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes [`catching`] report a panic on any other thread as its input's
/// (the fuzzer's processes run one input at a time).
pub fn claim_stray_panics() {
    CLAIM_STRAYS.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn message_of(info: &std::panic::PanicHookInfo<'_>) -> String {
    let msg = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".to_string());
    let at = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
    format!("{msg}{at}")
}

/// Installs (once) a panic hook that records the message of a panic inside
/// [`catching`] and leaves every other panic to the previous hook.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let recorded = CAUGHT.with(|c| {
                let mut c = c.borrow_mut();
                match c.as_mut() {
                    Some(slot) => {
                        // the first panic is the one to report; an unwinding one may follow
                        slot.get_or_insert_with(|| message_of(info));
                        true
                    }
                    None => false,
                }
            });
            if !recorded {
                if CLAIM_STRAYS.load(std::sync::atomic::Ordering::Relaxed)
                    && let Ok(mut stray) = STRAY.lock()
                {
                    stray.push(message_of(info));
                }
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into `Err(message at file:line)` without
/// printing it. A panic that something inside `f` caught on this thread
/// counts too: tokio catches a panic in a task (kube's client runs its
/// requests in one) and turns it into an ordinary error, which would hide it.
pub fn catching<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    CAUGHT.with(|c| *c.borrow_mut() = Some(None));
    let result = catch_unwind(AssertUnwindSafe(f));
    let mut message = CAUGHT.with(|c| c.borrow_mut().take().flatten());
    if message.is_none()
        && let Ok(mut stray) = STRAY.lock()
        && !stray.is_empty()
    {
        message = Some(format!("on another thread: {}", stray.join("; ")));
        stray.clear();
    }
    match (result, message) {
        (Ok(v), None) => Ok(v),
        (Ok(_), Some(m)) => Err(format!("{m} (caught inside, and hidden as an error)")),
        (Err(_), m) => Err(m.unwrap_or_else(|| "a panic".to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_messages_with_their_place() {
        let err = catching(|| -> u32 { panic!("boom {}", 3) }).unwrap_err();
        assert!(err.starts_with("boom 3 at "), "{err}");
        assert!(err.contains("oracle.rs"), "{err}");
        assert_eq!(catching(|| 5), Ok(5));
    }

    #[test]
    fn a_panic_caught_inside_still_counts() {
        let err = catching(|| std::panic::catch_unwind(|| panic!("hidden")).is_err()).unwrap_err();
        assert!(
            err.starts_with("hidden at ") && err.contains("hidden as an error"),
            "{err}"
        );
    }

    #[test]
    fn messages_are_held_to_one_line_a_name_and_no_secret() {
        assert_eq!(check_error("scenario a.yaml: bad", &["a.yaml"], &["tok"]), None);
        assert!(check_error("scenario a.yaml:\nbad", &["a.yaml"], &[]).is_some());
        assert!(check_error("bad", &["a.yaml"], &[]).is_some());
        assert!(check_error("a.yaml: tok-1", &["a.yaml"], &["tok-1"]).is_some());
        assert!(check_error(" ", &[], &[]).is_some());
        // a terminal escape, a bell, a C1 control: shown raw, they act on the terminal
        for raw in ["a.yaml: \u{1b}[31mred", "a.yaml: \u{7}", "a.yaml: \u{9b}2J"] {
            let problem = check_error(raw, &["a.yaml"], &[]).unwrap();
            assert!(problem.contains("raw control character"), "{problem}");
        }
        assert_eq!(check_error("a.yaml: a\tb \\u{1b}", &["a.yaml"], &[]), None);
    }
}
