//! Object names and the API server's syntax rules, checked here so that a
//! bad name is refused before anything is created rather than half-way
//! through a submission.

/// The longest sweep-name part of an object name: the longest suffix
/// (`-plan-<attempt>`, `-<attempt>-c<index>`, and the `-<index>` the Job
/// controller adds to an Indexed pod's hostname) must still fit in 63.
pub const MAX_NAME_BASE: usize = 40;
/// How many characters of the sweep id tell two cut names apart.
const ID_CHARS: usize = 8;
/// A DNS-1123 label's (and a label value's) longest length.
pub(crate) const MAX_LABEL: usize = 63;

/// The part of every object name that names the sweep: `sweep_name` made
/// a DNS-1123 label (lower-case, `[a-z0-9-]`, no leading, trailing or
/// doubled '-'), cut to fit [`MAX_NAME_BASE`] with the first characters of
/// `sweep_id` after it, so two sweeps that share a name (two versions of one
/// sweep file) get distinct objects; a name with nothing usable in it
/// becomes `sweep-<id>`.
pub fn name_base(sweep_name: &str, sweep_id: &str) -> String {
    let id: String = sweep_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .take(ID_CHARS)
        .collect();
    let cleaned = dns_words(sweep_name);
    if cleaned.is_empty() {
        return dns_words(&format!("sweep-{id}"));
    }
    // the id always: two sweeps of one name in one namespace must not share (or collide on) objects
    let keep = MAX_NAME_BASE.saturating_sub(id.len() + 1);
    // `cleaned` is ASCII, so any byte index is a char boundary
    let head = cleaned.get(..keep).unwrap_or(&cleaned).trim_end_matches('-');
    dns_words(&format!("{head}-{id}"))
}

/// `text` lower-cased, every run of characters outside `[a-z0-9]` one '-',
/// without a leading or trailing '-'.
fn dns_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

pub(crate) fn service_account(base: &str) -> String {
    format!("{base}-cell")
}

pub(crate) fn config_map(base: &str, attempt: u32) -> String {
    format!("{base}-plan-{attempt}")
}

/// The Indexed shape's one Job.
pub(crate) fn indexed_job(base: &str, attempt: u32) -> String {
    format!("{base}-{attempt}")
}

/// The per-cell shape's Job of plan index `index`.
pub(crate) fn cell_job(base: &str, attempt: u32, index: usize) -> String {
    format!("{base}-{attempt}-c{index}")
}

/// The ConfigMap key (and file under the plan folder) of an attempt's cells.
pub(crate) fn cells_key(attempt: u32) -> String {
    format!("cells-{attempt}")
}

/// A DNS-1123 label: 1 to 63 of `[a-z0-9-]`, starting and ending
/// alphanumeric (namespaces, Job names, a Kueue queue).
pub(crate) fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_LABEL
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A DNS-1123 subdomain: at most 253 characters of dot-separated labels
/// (a PersistentVolumeClaim's name).
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// A ConfigMap key: 1 to 253 of `[-._a-zA-Z0-9]`, neither `.` nor `..` nor
/// starting with `..` (the volume's files could otherwise escape it).
pub(crate) fn is_config_map_key(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
        && s != "."
        && !s.starts_with("..")
}

/// A label value: empty, or at most 63 of `[-._a-zA-Z0-9]` starting and
/// ending alphanumeric.
pub(crate) fn is_label_value(s: &str) -> bool {
    s.is_empty() || is_qualified_name_part(s)
}

/// A label key: an optional DNS subdomain prefix and '/', then a name part.
pub(crate) fn is_label_key(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_qualified_name_part(name),
        None => is_qualified_name_part(s),
    }
}

fn is_qualified_name_part(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_LABEL
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && s.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric())
}
