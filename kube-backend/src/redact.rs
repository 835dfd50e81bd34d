//! Credentials out of messages. Text that comes from an API server (an error
//! body, a status message) or from a client library may echo a request, and
//! with it a bearer token or a kubeconfig's key material: every such text is
//! passed through [`redact`] before it is shown or logged.

/// What replaces a credential.
pub const REDACTED: &str = "[REDACTED]";

/// `text` with every credential value replaced by [`REDACTED`]: the word
/// after `Bearer` or `Basic`; the value of an `Authorization` header (to the
/// end of the line or of its quotes); the value after `key:` or `key=`
/// (quoted or not, as YAML, JSON, a header or a query string write it, and
/// JSON with its quotes escaped, as a Debug string shows it) of every key
/// that names a credential: `token` and `*-token`, `*-data`
/// (`client-key-data`, `client-certificate-data`, ...), `password`,
/// `secret` and `*-secret`, `client-key`, `api-key`; and the password of a
/// URL's `user:password@` (a server's or a proxy's). The rest is kept.
pub fn redact(text: &str) -> String {
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

/// Standard error for log lines, with credentials [`redact`]ed: libraries
/// log what servers answer (kube's client, at debug level, logs whole error
/// bodies), and a server may echo the request's bearer token. Give it to the
/// log formatter, which writes each event in one call:
/// `.with_writer(|| RedactingStderr)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactingStderr;

impl std::io::Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = redact(&String::from_utf8_lossy(buf));
        std::io::stderr().write_all(text.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// An error as logs and messages show it: its text, [`redact`]ed.
pub fn shown(err: &impl std::fmt::Display) -> String {
    redact(&err.to_string())
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
fn redact_url_passwords(text: &str) -> std::borrow::Cow<'_, str> {
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
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (from, to) in spans {
        out.push_str(&text[copied..from]);
        out.push_str(REDACTED);
        copied = to;
    }
    out.push_str(&text[copied..]);
    std::borrow::Cow::Owned(out)
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
