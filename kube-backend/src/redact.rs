//! Credentials out of messages. Text that comes from an API server (an error
//! body, a status message) or from a client library may echo a request, and
//! with it a bearer token or a kubeconfig's key material: every such text is
//! passed through [`redact`] before it is shown or logged.

/// What replaces a credential.
pub const REDACTED: &str = "[REDACTED]";

/// `text` with every credential value replaced by [`REDACTED`]: the word
/// after `Bearer` or `Basic`; the value of an `Authorization` header (to the
/// end of the line or of its quotes); and the value after `key:` or `key=`
/// (quoted or not, as YAML, JSON, a header or a query string write it) of
/// every key that names a credential: `token` and `*-token`, `*-data`
/// (`client-key-data`, `client-certificate-data`, ...), `password`,
/// `secret` and `*-secret`, `client-key`, `api-key`. The rest is kept.
pub fn redact(text: &str) -> String {
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
    // `"token": "x"`, `token: x`, `token=x`, `'token' => 'x'`
    let mut k = j;
    if k < b.len() && (b[k] == b'"' || b[k] == b'\'') {
        k += 1;
    }
    k = skip_blanks(b, k);
    if k >= b.len() || (b[k] != b':' && b[k] != b'=') {
        return None;
    }
    k = skip_blanks(b, k + 1);
    let quote = (k < b.len() && (b[k] == b'"' || b[k] == b'\'')).then(|| b[k]);
    if quote.is_some() {
        k += 1;
    }
    // a header's value runs to the end of the line: `Authorization: Bearer x`
    let spaces_inside = lower == "authorization" || lower == "proxy-authorization";
    let end = value_end(b, k, quote, spaces_inside);
    (end > k).then_some((k, end))
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
fn value_end(b: &[u8], mut k: usize, quote: Option<u8>, spaces_inside: bool) -> usize {
    while k < b.len() {
        let c = b[k];
        let ends = match quote {
            Some(q) => c == q || c == b'\n' || c == b'\r',
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
            "",
        ] {
            assert_eq!(redact(plain), plain);
        }
        // multi-byte text around a credential survives
        assert_eq!(redact("é token: ü é"), "é token: [REDACTED] é");
    }
}
