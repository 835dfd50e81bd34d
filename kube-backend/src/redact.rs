//! Credentials out of messages. Text that comes from an API server (an error
//! body, a status message) or from a client library may echo a request, and
//! with it a bearer token or a kubeconfig's key material: every such text is
//! passed through [`redact`] before it is shown or logged. Besides the
//! patterns that name a credential, every value the client itself sends
//! (registered with [`remember_sent`] when a client is made) is redacted
//! wherever it appears, whatever surrounds it.

use aho_corasick::{AhoCorasick, MatchKind};
use std::borrow::Cow;
use std::sync::{Mutex, PoisonError};

/// What replaces a credential.
pub const REDACTED: &str = "[REDACTED]";

/// Values the clients of this process send (tokens, passwords, key data),
/// redacted wherever they appear.
static SENT: Mutex<Register> = Mutex::new(Register {
    values: Vec::new(),
    matcher: None,
});

/// The sent values and a matcher over them that finds every occurrence of
/// every value in one pass over a text, whatever the number of values
/// (replacing value by value scanned the text once per value), and finds
/// overlapping occurrences too, so that two values sharing a stretch of a
/// text are both hidden whole.
struct Register {
    values: Vec<String>,
    /// built on the first redaction after the values change
    matcher: Option<AhoCorasick>,
}

/// Values shorter than this are not registered: redacting every `a` or
/// `42` would garble messages, and so short a credential guards nothing.
pub const MIN_SENT_CHARS: usize = 6;

/// Registers `value`, a credential a client of this process sends (a
/// bearer token, a basic-auth password, client key data), so that
/// [`redact`] replaces it wherever a server or a tool quotes it.
pub fn remember_sent(value: &str) {
    let value = value.trim();
    if value.chars().count() < MIN_SENT_CHARS {
        return;
    }
    let mut sent = SENT.lock().unwrap_or_else(PoisonError::into_inner);
    if !sent.values.iter().any(|v| v == value) {
        sent.values.push(value.to_string());
        sent.matcher = None;
    }
}

/// Forgets every value [`remember_sent`] registered. Values are kept for
/// the life of the process, since an error made with a client may be shown
/// after the client is gone; a process that makes many clients, each done
/// with (its errors shown) before the next is made, calls this between them
/// so that the register does not grow with every client (the matcher over
/// it is rebuilt, in time and memory linear in the values, after each
/// change). The fuzzer does, between inputs: a million connections left a
/// million values.
pub fn forget_sent() {
    let mut sent = SENT.lock().unwrap_or_else(PoisonError::into_inner);
    sent.values.clear();
    sent.matcher = None;
}

/// `text` with every credential value replaced by [`REDACTED`]: every value
/// registered with [`remember_sent`], wherever it is; the word
/// after `Bearer` or `Basic`; the value of an `Authorization` header (to the
/// end of the line or of its quotes); the value after `key:` or `key=`
/// (quoted or not, as YAML, JSON, a header or a query string write it, and
/// JSON with its quotes escaped, as a Debug string shows it) of every key
/// that names a credential: `token` and `*-token`, `*-data`
/// (`client-key-data`, `client-certificate-data`, ...), `password`,
/// `secret` and `*-secret`, `client-key`, `api-key`; the password of a
/// URL's `user:password@` (a server's or a proxy's); and the command line
/// and output of a failed credential plugin as kube quotes them (its
/// arguments and environment may hold secrets). The rest is kept.
pub fn redact(text: &str) -> String {
    let text = &redact_sent(text);
    let text = &redact_exec_commands(text);
    let text = &redact_url_passwords(text);
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if !is_key_byte(b[i]) || (i > 0 && is_key_byte(b[i - 1])) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && is_key_byte(b[j]) {
            j += 1;
        }
        // Key bytes are ASCII, so `i..j` lies on character boundaries; so do
        // the value's ends below, which are ASCII delimiters or the end.
        let key = &text[i..j];
        if let Some((start, end)) = credential_after(b, key, j) {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
            i = end;
        } else {
            i = j;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// `text` with every registered sent value replaced: each stretch of the
/// text covered by one or more occurrences (overlapping ones merged) becomes
/// one [`REDACTED`].
fn redact_sent(text: &str) -> Cow<'_, str> {
    let mut sent = SENT.lock().unwrap_or_else(PoisonError::into_inner);
    if sent.values.is_empty() {
        return Cow::Borrowed(text);
    }
    if sent.matcher.is_none() {
        // Standard semantics: the only kind that reports overlapping matches
        sent.matcher = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(&sent.values)
            .ok();
    }
    let Some(matcher) = &sent.matcher else {
        // too large an automaton to build: hide every value the slow way
        // rather than show one
        return Cow::Owned(replace_each(text, &sent.values));
    };
    let mut covered: Vec<(usize, usize)> = matcher
        .find_overlapping_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect();
    if covered.is_empty() {
        return Cow::Borrowed(text);
    }
    covered.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < covered.len() {
        let (start, mut end) = covered[i];
        i += 1;
        while i < covered.len() && covered[i].0 <= end {
            end = end.max(covered[i].1);
            i += 1;
        }
        // values are whole strings, so their ends are character boundaries
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// `text` with each of `values` replaced, longest first so that a value
/// that holds another is replaced whole.
fn replace_each(text: &str, values: &[String]) -> String {
    let mut values: Vec<&String> = values.iter().collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    let mut out = text.to_string();
    for v in values {
        if out.contains(v.as_str()) {
            out = out.replace(v.as_str(), REDACTED);
        }
    }
    out
}

/// What kube writes for a credential plugin that failed:
/// `auth exec command '<the command line, with its environment>' failed
/// with status <status>: <its output>`.
const EXEC_FAILED: &str = "auth exec command '";
const EXEC_STATUS: &str = "' failed with status ";

/// `text` with a failed credential plugin's command line and output (kube
/// quotes them whole: arguments such as `--client-secret X`, environment
/// values, the plugin's stdout) replaced, its exit status kept.
fn redact_exec_commands(text: &str) -> Cow<'_, str> {
    let Some(start) = text.find(EXEC_FAILED) else {
        return Cow::Borrowed(text);
    };
    let mut out = text[..start].to_string();
    out.push_str("auth exec command ");
    out.push_str(REDACTED);
    out.push_str(" failed");
    // the status is the last `' failed with status ` (an argument may hold the words)
    let rest = &text[start..];
    if let Some(at) = rest.rfind(EXEC_STATUS) {
        let status = &rest[at + EXEC_STATUS.len()..];
        // `exit status: 3: Output { status: .., stdout: .., stderr: .. }`
        let status = status.split(": Output").next().unwrap_or("");
        if status.len() <= 40 && !status.contains(['\'', '"', '{']) {
            out.push_str(" with status ");
            out.push_str(status);
        }
    }
    out.push_str(" (its command line and output are not shown)");
    Cow::Owned(out)
}

/// Standard error for log lines, with credentials [`redact`]ed: libraries
/// log what servers answer (kube's client, at debug level, logs whole error
/// bodies), and a server may echo the request's bearer token. Give it to the
/// log formatter, which writes each event in one call:
/// `.with_writer(|| RedactingStderr)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactingStderr;

/// Bytes of one log line written at most: a library may log a whole
/// server answer (kube logs a body it cannot parse), which can be hundreds
/// of megabytes.
pub const MAX_LOG_LINE_BYTES: usize = 2048;

/// A log line that cannot be written (standard error closed or full) is
/// dropped: the formatter would otherwise report the failure with
/// `eprintln!`, which panics on the same closed stream and ends the command.
impl std::io::Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().write_all(log_line(buf).as_bytes());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// One log event as written: [`redact`]ed, and cut at
/// [`MAX_LOG_LINE_BYTES`] with a note of how much was left out. The kept
/// part loses its last word, since a credential cut at the cap would no
/// longer match a pattern or a registered value.
fn log_line(buf: &[u8]) -> String {
    if buf.len() <= MAX_LOG_LINE_BYTES {
        return redact(&String::from_utf8_lossy(buf));
    }
    let kept = String::from_utf8_lossy(&buf[..MAX_LOG_LINE_BYTES]);
    // the last character may be cut in two: lossy decoding marks it, drop it
    let kept = kept.trim_end_matches('\u{fffd}');
    let mut line = redact(kept);
    // a credential cut at the cap would show its start: drop the last word
    if let Some(at) = line.rfind([' ', ',', '"', '\'', '=', ':']) {
        line.truncate(at + 1);
    }
    line.push_str(&format!(
        "… [log line cut: {} more bytes not shown]\n",
        buf.len() - MAX_LOG_LINE_BYTES
    ));
    line
}

/// An error as logs and messages show it: its text, [`redact`]ed, with its
/// control characters escaped ([`schedlab_core::text::escape_controls`]).
pub fn shown(err: &impl std::fmt::Display) -> String {
    schedlab_core::text::escape_controls(&redact(&err.to_string())).into_owned()
}

/// The span of the credential that follows `key` (ending at `j`), if any.
fn credential_after(b: &[u8], key: &str, j: usize) -> Option<(usize, usize)> {
    let lower = key.to_ascii_lowercase();
    if lower == "bearer" || lower == "basic" {
        let start = skip_blanks(b, j);
        let end = value_end(b, start, None, false);
        return (start > j && end > start).then_some((start, end));
    }
    if !is_credential_key(&lower) {
        return None;
    }
    // `"token": "x"`, `token: x`, `token=x`, `'token' => 'x'`, `\"token\":\"x\"`
    let mut k = j;
    if escaped_quote(b, k) {
        k += 2;
    } else if k < b.len() && (b[k] == b'"' || b[k] == b'\'') {
        k += 1;
    }
    k = skip_blanks(b, k);
    if k >= b.len() || (b[k] != b':' && b[k] != b'=') {
        return None;
    }
    k = skip_blanks(b, k + 1);
    let quote = if escaped_quote(b, k) {
        k += 2;
        Some(Quote::Escaped)
    } else if k < b.len() && (b[k] == b'"' || b[k] == b'\'') {
        k += 1;
        Some(Quote::Plain(b[k - 1]))
    } else {
        None
    };
    // a header's value runs to the end of the line: `Authorization: Bearer x`
    let spaces_inside = lower == "authorization" || lower == "proxy-authorization";
    let end = value_end(b, k, quote, spaces_inside);
    (end > k).then_some((k, end))
}

/// How a value is quoted.
#[derive(Clone, Copy)]
enum Quote {
    /// by this quote character
    Plain(u8),
    /// by `\"` or `\'`: JSON inside a quoted string
    Escaped,
}

/// Whether `b[k..]` starts with an escaped quote (`\"` or `\'`).
fn escaped_quote(b: &[u8], k: usize) -> bool {
    k + 1 < b.len() && b[k] == b'\\' && (b[k + 1] == b'"' || b[k + 1] == b'\'')
}

/// `text` with the password of every URL's userinfo (`//user:password@host`)
/// replaced by [`REDACTED`]: kube quotes a proxy's URL in its errors, and a
/// server's URL is shown and recorded as the kubeconfig gives it. The
/// userinfo is found back from its `@` to the `//` before it, so that a
/// mangled URL (`http://pro://user:pw@host`) is covered too.
fn redact_url_passwords(text: &str) -> Cow<'_, str> {
    let mut spans = Vec::new();
    for (at, _) in text.match_indices('@') {
        let before = &text[..at];
        let start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| ends_userinfo(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if !before[..start].ends_with("//") {
            continue;
        }
        if let Some(colon) = before[start..].find(':') {
            let from = start + colon + 1;
            if from < at {
                spans.push((from, at));
            }
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (from, to) in spans {
        out.push_str(&text[copied..from]);
        out.push_str(REDACTED);
        copied = to;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// What a URL's userinfo cannot hold unescaped (it may hold `'`, `,`, `;`
/// and the other sub-delimiters): where it starts, looking back from its `@`.
fn ends_userinfo(c: char) -> bool {
    c.is_whitespace() || "/?#@\\\"<>[]{}`|^".contains(c)
}

fn is_credential_key(lower: &str) -> bool {
    const EXACT: [&str; 6] = [
        "authorization",
        "proxy-authorization",
        "password",
        "passwd",
        "client-key",
        "cookie",
    ];
    EXACT.contains(&lower)
        || lower.ends_with("api-key")
        || lower.ends_with("apikey")
        || lower.ends_with("api_key")
        || lower.ends_with("token")
        || lower.ends_with("-data")
        || lower.ends_with("_data")
        || lower.ends_with("secret")
}

fn is_key_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_'
}

fn skip_blanks(b: &[u8], mut k: usize) -> usize {
    while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
        k += 1;
    }
    k
}

/// Where a value starting at `k` ends: at its closing quote, else at a
/// delimiter (a blank unless `spaces_inside`, a comma, a bracket, `&`, `;`)
/// or the end of the line.
fn value_end(b: &[u8], mut k: usize, quote: Option<Quote>, spaces_inside: bool) -> usize {
    while k < b.len() {
        let c = b[k];
        let ends = match quote {
            Some(Quote::Plain(q)) => c == q || c == b'\n' || c == b'\r',
            Some(Quote::Escaped) => escaped_quote(b, k) || c == b'\n' || c == b'\r',
            None => {
                matches!(
                    c,
                    b'\n' | b'\r' | b'"' | b'\'' | b',' | b'}' | b']' | b'&' | b';' | b'\\'
                ) || (!spaces_inside && (c == b' ' || c == b'\t'))
            }
        };
        if ends {
            break;
        }
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cr3t-VALUE.xyz";

    #[test]
    fn every_way_of_writing_a_credential_is_redacted() {
        for template in [
            "Authorization: Bearer {}",
            "authorization: Basic {}",
            "request had header \"Authorization\": \"Bearer {}\", rejected",
            "{\"authorization\":\"Bearer {}\"}",
            "Bearer {}",
            "token: {}",
            "    token: '{}'",
            "{\"token\":\"{}\",\"kind\":\"x\"}",
            "https://h/api?token={}&watch=1",
            "id-token={}",
            "refresh_token: {}",
            "client-key-data: {}",
            "client-certificate-data: \"{}\"",
            "certificate-authority-data:{}",
            "password = {}",
            "client-secret: {}",
            "x-api-key: {}",
            // JSON inside a Debug string, as kube shows a credential plugin's command and output
            "auth exec command '\"sh\" \"printf '{\\\"status\\\":{\\\"token\\\":\\\"{}\\\"}}'\"' failed",
            "stdout: \"{\\\"token\\\": \\\"{}\\\"}\", stderr: \"\"",
            // a URL's password, as kube quotes a proxy's URL and schedlab shows a server's
            "configured proxy http://proxy:{}@127.0.0.1:3128/ requires the disabled feature",
            "API server https://admin:{}@127.0.0.1:6443/ is unreachable",
            "\"https://u:{}@h\"",
            "configured proxy http://pro://proxy:{}@127.0.0.1:3128",
            "API server https://admin':{}@127.0.0.1:1/ is unreachable",
            "'https://a,b;c:{}@h'",
        ] {
            let text = template.replace("{}", SECRET);
            let shown = redact(&text);
            assert!(
                !shown.contains(SECRET) && !shown.contains("s3cr3t"),
                "{text:?} -> {shown:?}"
            );
            assert!(shown.contains(REDACTED), "{text:?} -> {shown:?}");
        }
    }

    /// Hardening round 2, item 3: a 401 whose message quotes the bearer
    /// token without a `token:` key printed it.
    #[test]
    fn a_value_the_client_sent_is_redacted_wherever_it_appears() {
        let sent = "tok-ab12cd34ef-unique-3";
        let password = "hunter2-unique-3";
        remember_sent(sent);
        remember_sent(password);
        remember_sent("ab");
        for text in [
            format!("Unauthorized: the credential {sent} has expired"),
            format!("invalid bearer ({sent})"),
            format!("{{\"message\":\"user admin with password {password} is locked\"}}"),
            format!("x{sent}x"),
        ] {
            let shown = redact(&text);
            assert!(!shown.contains(sent) && !shown.contains(password), "{text} -> {shown}");
            assert!(shown.contains(REDACTED), "{shown}");
        }
        // too short to register: left alone
        assert_eq!(redact("about a tab"), "about a tab");
    }

    /// Two sent values that share a stretch of a text (the end of one is
    /// the start of the other), or one inside another: every character of
    /// each is hidden, and the text around them kept.
    #[test]
    fn overlapping_and_nested_sent_values_are_hidden_whole() {
        let left = "left-cred-OVERLAP-7";
        let right = "OVERLAP-7-right-cred";
        let outer = "outer-NESTED-inner-cred-x";
        let inner = "NESTED-inner-cred";
        for v in [left, right, outer, inner] {
            remember_sent(v);
        }
        let shown = redact("a left-cred-OVERLAP-7-right-cred b");
        assert_eq!(shown, format!("a {REDACTED} b"));
        let shown = redact("x outer-NESTED-inner-cred-x y NESTED-inner-cred z");
        assert_eq!(shown, format!("x {REDACTED} y {REDACTED} z"));
        // the slow way hides them too, if the matcher cannot be built
        let values: Vec<String> = [left, right].map(String::from).to_vec();
        assert!(!replace_each("left-cred-OVERLAP-7 OVERLAP-7-right-cred", &values).contains("cred"));
    }

    /// A redaction's cost follows the text, not the number of values: with
    /// 20,000 registered, a text holding three of them is redacted exactly.
    #[test]
    fn many_sent_values_are_found_in_one_pass() {
        let values: Vec<String> = (0..20_000).map(|i| format!("many-values-{i:06}-tok")).collect();
        for v in &values {
            remember_sent(v);
        }
        let text = format!("first {} then {}{} end", values[3], values[19_999], values[7]);
        assert_eq!(redact(&text), format!("first {REDACTED} then {REDACTED} end"));
    }

    /// Hardening round 2, item 2: kube's error for a failed credential
    /// plugin quotes its command line (arguments, environment) and output.
    #[test]
    fn a_failed_plugins_command_line_and_output_are_redacted() {
        let text = "auth error: auth exec command 'AWS_SECRET=env-s3cr3t KUBERNETES_EXEC_INFO=\"{}\" \"aws-login\" \"--client-secret\" \"arg-s3cr3t\" \"--password\" \"pw-s3cr3t\"' failed with status exit status: 3: Output { status: ExitStatus(unix_wait_status(768)), stdout: \"out-s3cr3t\", stderr: \"\" }";
        let shown = redact(text);
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("exit status: 3"), "{shown}");
        assert!(
            shown.starts_with("auth error: auth exec command [REDACTED] failed with status exit status: 3 ("),
            "{shown}"
        );
    }

    /// Hardening round 2, item 8: kube logs a body it cannot parse whole
    /// (629 MB in one WARN line for a 600 MB `/version` answer).
    #[test]
    fn a_log_line_is_cut() {
        let line = format!("WARN kube: {}\n", "x".repeat(10 << 20));
        let shown = log_line(line.as_bytes());
        assert!(shown.len() < MAX_LOG_LINE_BYTES + 100, "{}", shown.len());
        assert!(shown.contains("more bytes not shown"), "{}", &shown[shown.len() - 80..]);
        assert!(shown.ends_with('\n'));
        let short = "INFO token: abc\n";
        assert_eq!(log_line(short.as_bytes()), "INFO token: [REDACTED]\n");
    }

    #[test]
    fn the_rest_of_the_message_is_kept() {
        assert_eq!(
            redact("pods is forbidden: User \"system:anonymous\" cannot list pods, token: abc, code 403"),
            "pods is forbidden: User \"system:anonymous\" cannot list pods, token: [REDACTED], code 403"
        );
        assert_eq!(
            redact("GET /api\nAuthorization: Bearer abc.def\nHost: x"),
            "GET /api\nAuthorization: [REDACTED]\nHost: x"
        );
        for plain in [
            "API server https://127.0.0.1:6443 did not answer",
            "the tokens are fine; bearer",
            "tokenizer: 3",
            "keep token",
            "client-key-data",
            "données: été",
            "https://127.0.0.1:6443/api?x=1",
            "ssh://git@github.com/a:b",
            "http://[::1]:8080",
            "a://b:@c",
            "://",
            "",
        ] {
            assert_eq!(redact(plain), plain);
        }
        // multi-byte text around a credential survives
        assert_eq!(redact("é token: ü é"), "é token: [REDACTED] é");
    }
}
